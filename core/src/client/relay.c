/*
 * relay.c: the supervisor's informers, checks and writes (see relay.h).
 *
 * Threads: informer threads forward events (under send_mu, the one lock of
 * the socket); the supervisor's main thread handles the worker's messages;
 * writer threads send write outcomes back. Lock order: send_mu, then an
 * informer's store, then mu; mu is never held while taking send_mu.
 *
 * Over 800 lines: the forwarding, the checks of each message and the writes
 * all work on the relay's private state under that lock order; kept in one
 * file, the state and the order stay private to it.
 */
#include "client/relay.h"

#include "client/claim_check.h"
#include "client/informer.h"
#include "client/kutil.h"
#include "client/writer.h"
#include "luasched/log.h"
#include "worker/jsonbin.h"
#include "worker/page.h"

#include <ctype.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_FEEDS = 32, FEED_POD = 0, FEED_NODE = 1 };
/* How often the informers that have not synced are reported while waiting. */
enum { SYNC_REPORT_MS = 30000 };
/* The longest a marked pod is withheld. */
enum { MAX_BACKOFF_MS = 10 * 60 * 1000 };

typedef struct relay_feed {
    ls_relay *r;
    const char *label;            /* "pod", "node", "object" */
    char *kind;                   /* "Pod", "Service", ..., "plural.version.group" */
    ls_informer *inf;
    bool optional, started;
} relay_feed;

typedef struct relay_mark {
    int kills;
    bool withheld;
    uint64_t until_ms;
    long backoff_ms;
} relay_mark;

struct ls_relay {
    ls_relay_options o;
    ls_writer *writer;
    relay_feed feeds[MAX_FEEDS];
    uint32_t n_feeds;
    bool running;
    pthread_mutex_t send_mu;      /* the socket and fd */
    int fd;                       /* the worker's channel; -1: none */
    ls_buf tree;                  /* under send_mu: the object being sent, in binary form */
    ls_buf out;                   /* under send_mu: frames waiting for the next write (bindings that
                                     succeeded: answer_bind), then the one being written */
    atomic_bool send_failed;      /* a message could not be sent whole: the worker's state is behind */
    pthread_mutex_t mu;           /* what follows */
    pthread_cond_t answered;
    ls_kmap guarded;              /* pod uid -> non-NULL: bound or being bound through us */
    ls_kmap marks;                /* "ns/name" -> relay_mark */
    uint32_t metrics_id, metrics_done;
    char *metrics_text;
    atomic_size_t patch_bytes;    /* plugins' object patches queued or in flight (handle_object_patch) */
    /* the special claims created for the worker ("ns/name"), the latest
     * CREATED_KEPT: its status patch may come before the informer has them */
    char created[8][320];
    uint32_t n_created;
};

/* ---- forwarding */

static bool pod_withheld(ls_relay *r, const char *ns, const char *name)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name ? name : "");
    pthread_mutex_lock(&r->mu);
    relay_mark *m = ls_kmap_get(&r->marks, key);
    bool withheld = m && m->withheld;
    pthread_mutex_unlock(&r->mu);
    return withheld;
}

/* Under send_mu: writes the frames waiting in r->out, and `type`'s when
 * given, in one write. */
static void write_out_locked(ls_relay *r, uint8_t type, const char *const *f, uint32_t n, const void *blob,
                             size_t blob_len)
{
    if (type && !ls_chan_frame(&r->out, type, f, n, blob, blob_len))
        atomic_store(&r->send_failed, true);
    if (r->fd >= 0 && r->out.len && !ls_fd_write_all(r->fd, r->out.data, r->out.len))
        atomic_store(&r->send_failed, true);
    r->out.len = 0;
}

/* Objects of a list (an informer's first, or a new worker's whole state)
 * are written this many bytes at a time; the rest when the list ends. */
enum { LIST_WRITE_BYTES = 64 * 1024 };

/* Under send_mu. The informer's tree goes in binary form (jsonbin.h):
 * printing it as JSON for the worker to parse again was most of the cost.
 * With `listing`, the frame waits in r->out until LIST_WRITE_BYTES do (or
 * the list's end: on_synced, the end of ls_relay_attach, ls_relay_tick):
 * one write and one wake-up of the worker for many objects. */
static void send_object_locked(ls_relay *r, const relay_feed *f, const char *verb, const cJSON *obj, bool listing)
{
    if (r->fd < 0)
        return;
    r->tree.len = 0;
    ls_jsonbin_encode(obj, &r->tree);
    const char *fields[] = {verb, f->label, f->kind};
    if (!listing)
        write_out_locked(r, LS_CH_OBJECT, fields, 3, r->tree.data, r->tree.len);
    else if (!ls_chan_frame(&r->out, LS_CH_OBJECT, fields, 3, r->tree.data, r->tree.len))
        atomic_store(&r->send_failed, true);
    else if (r->out.len >= LIST_WRITE_BYTES)
        write_out_locked(r, 0, NULL, 0, NULL, 0);
}

/* Writes what waits in r->out. */
static void flush(ls_relay *r)
{
    pthread_mutex_lock(&r->send_mu);
    if (r->out.len)
        write_out_locked(r, 0, NULL, 0, NULL, 0);
    pthread_mutex_unlock(&r->send_mu);
}

static void forward(relay_feed *f, const char *verb, const cJSON *obj)
{
    ls_relay *r = f->r;
    if (f == &r->feeds[FEED_POD]) {
        const char *ns = ls_kutil_meta_str(obj, "namespace"), *name = ls_kutil_meta_str(obj, "name");
        if (verb[0] == 'd') {
            const char *uid = ls_kutil_meta_str(obj, "uid");
            pthread_mutex_lock(&r->mu);
            if (uid)
                ls_kmap_remove(&r->guarded, uid);
            pthread_mutex_unlock(&r->mu);
        } else if (pod_withheld(r, ns, name)) {
            return;
        }
    }
    pthread_mutex_lock(&r->send_mu);
    send_object_locked(r, f, verb, obj, !ls_informer_has_synced(f->inf));
    pthread_mutex_unlock(&r->send_mu);
}

static void on_add(void *ud, const cJSON *obj)
{
    forward(ud, "add", obj);
}

static void on_update(void *ud, const cJSON *old_obj, const cJSON *new_obj)
{
    (void)old_obj;
    forward(ud, "update", new_obj);
}

static void on_delete(void *ud, const cJSON *obj)
{
    forward(ud, "delete", obj);
}

static void on_synced(void *ud)
{
    flush(((relay_feed *)ud)->r);   /* the first list's last objects */
}

/* A kind the server does not serve is not watched: noted for the warning. */
static bool served(ls_relay *r, const ls_informer_options *io)
{
    ls_discovery *d = r->o.discovery;
    if (!d || ls_discovery_serves(d, io->group ? io->group : "", io->version, io->resource))
        return true;
    char what[400];
    snprintf(what, sizeof what, "%s of %s", io->poll_ms ? "polling" : "watch", io->name ? io->name : io->resource);
    ls_discovery_note_off(d, what, io->group, io->version, io->resource);
    return false;
}

static relay_feed *add_feed(ls_relay *r, const char *label, const char *kind, const ls_informer_options *io,
                            ls_error *err)
{
    if (r->n_feeds == MAX_FEEDS)
        return ls_errorf(err, "too many kinds to watch (at most %d)", MAX_FEEDS), NULL;
    relay_feed *f = &r->feeds[r->n_feeds];
    *f = (relay_feed){.r = r, .label = label, .kind = ls_xstrdup(kind)};
    ls_informer_handlers h = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete,
                             .on_synced = on_synced, .ud = f};
    f->inf = ls_informer_new(r->o.client, io, &h, err);
    if (!f->inf) {
        free(f->kind);
        return NULL;
    }
    r->n_feeds++;
    return f;
}

/* The kinds watched besides pods and nodes, as kube-scheduler's informers. */
typedef struct kind_spec {
    const char *group, *version, *resource, *kind;
} kind_spec;

static const kind_spec OBJECT_KINDS[] = {
    {"", "v1", "namespaces", "Namespace"},
    {"", "v1", "services", "Service"},
    {"", "v1", "replicationcontrollers", "ReplicationController"},
    {"apps", "v1", "replicasets", "ReplicaSet"},
    {"apps", "v1", "statefulsets", "StatefulSet"},
    {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"},
    /* the volume plugins' kinds */
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode"},
    {"storage.k8s.io", "v1", "csidrivers", "CSIDriver"},
    {"storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"},
    {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment"},
};

ls_relay *ls_relay_new(const ls_relay_options *o, ls_error *err)
{
    ls_relay *r = ls_xcalloc(1, sizeof *r);
    r->o = *o;
    r->fd = -1;
    pthread_mutex_init(&r->send_mu, NULL);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->answered, NULL);
    ls_kmap_init(&r->guarded);
    ls_kmap_init(&r->marks);
    ls_writer_options wo = {.workers = 8, .events_client = o->events_client};
    r->writer = ls_writer_new(o->client, &wo, err);
    ls_informer_options pods = {.version = "v1", .resource = "pods",
                                .field_selector = "status.phase!=Succeeded,status.phase!=Failed"};
    ls_informer_options nodes = {.version = "v1", .resource = "nodes"};
    bool ok = r->writer && add_feed(r, "pod", "Pod", &pods, err) && add_feed(r, "node", "Node", &nodes, err);
    for (size_t i = 0; ok && i < sizeof OBJECT_KINDS / sizeof *OBJECT_KINDS; i++) {
        const kind_spec *k = &OBJECT_KINDS[i];
        ls_informer_options io = {.group = k->group, .version = k->version, .resource = k->resource};
        ok = !served(r, &io) || add_feed(r, "object", k->kind, &io, err) != NULL;
    }
    if (!ok) {
        ls_relay_free(r);
        return NULL;
    }
    return r;
}

static relay_feed *feed_of_kind(ls_relay *r, const char *kind)
{
    for (uint32_t i = 0; i < r->n_feeds; i++)
        if (strcmp(r->feeds[i].kind, kind) == 0)
            return &r->feeds[i];
    return NULL;
}

static bool start_feed(ls_relay *r, relay_feed *f, ls_error *err)
{
    if (!r->running || f->started)
        return true;
    f->started = true;
    return ls_informer_start(f->inf, err);
}

static bool want_metrics(ls_relay *r, const char *name, const char *resource, ls_error *err)
{
    if (feed_of_kind(r, name))
        return true;
    ls_informer_options io = {.group = "metrics.k8s.io", .version = "v1beta1", .resource = resource, .name = name,
                              .poll_ms = r->o.metrics_poll_ms > 0 ? r->o.metrics_poll_ms : 15000};
    if (!served(r, &io))
        return true;
    relay_feed *f = add_feed(r, "object", name, &io, err);
    if (!f)
        return false;
    f->optional = true;
    return start_feed(r, f, err);
}

/* "plural.version.group" into an informer. */
static bool want_custom(ls_relay *r, const char *name, ls_error *err)
{
    if (feed_of_kind(r, name))
        return true;
    const char *v = strchr(name, '.');
    const char *g = v ? strchr(v + 1, '.') : NULL;
    if (!g || v == name || g == v + 1 || !g[1])
        return ls_errorf(err, "custom resource \"%s\": expected plural.version.group", name);
    char plural[256], version[64];
    snprintf(plural, sizeof plural, "%.*s", (int)(v - name), name);
    snprintf(version, sizeof version, "%.*s", (int)(g - v - 1), v + 1);
    ls_informer_options io = {.group = g + 1, .version = version, .resource = plural, .name = name};
    if (!served(r, &io))
        return true;
    relay_feed *f = add_feed(r, "object", name, &io, err);
    return f && start_feed(r, f, err);
}

bool ls_relay_want(ls_relay *r, const char *metrics, const char *const *custom, uint32_t n, ls_error *err)
{
    if (strstr(metrics, "nodes") && !want_metrics(r, "NodeMetrics", "nodes", err))
        return false;
    if (strstr(metrics, "pods") && !want_metrics(r, "PodMetrics", "pods", err))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!want_custom(r, custom[i], err))
            return false;
    return true;
}

bool ls_relay_start(ls_relay *r, ls_error *err)
{
    r->running = true;
    for (uint32_t i = 0; i < r->n_feeds; i++)
        if (!start_feed(r, &r->feeds[i], err))
            return false;
    return true;
}

/* Every informer still without its first list, by name with its last error:
 * a cache that cannot sync is said, never waited on silently. */
static void report_unsynced(ls_relay *r, long waited_s)
{
    char waited[32];
    snprintf(waited, sizeof waited, "%lds", waited_s);
    for (uint32_t i = 0; i < r->n_feeds; i++) {
        if (r->feeds[i].optional || ls_informer_has_synced(r->feeds[i].inf))
            continue;
        ls_informer_stats st;
        ls_informer_get_stats(r->feeds[i].inf, &st);
        ls_log_error("Cache has not synced", "resource", r->feeds[i].kind, "waited", waited, "err",
                     st.last_error[0] ? st.last_error : "no answer yet");
    }
}

bool ls_relay_wait_synced(ls_relay *r, volatile sig_atomic_t *stop)
{
    long waited_ms = 0;
    for (uint32_t i = 0; i < r->n_feeds; i++)
        while (!r->feeds[i].optional && !ls_informer_wait_synced(r->feeds[i].inf, 100)) {
            if (stop && *stop)
                return false;
            waited_ms += 100;
            if (waited_ms % SYNC_REPORT_MS == 0)
                report_unsynced(r, waited_ms / 1000);
        }
    return true;
}

/* ---- a worker's state */

static void send_to_worker(ls_relay *r, uint8_t type, const char *const *f, uint32_t n);

typedef struct dump_ctx {
    ls_relay *r;
    relay_feed *f;
} dump_ctx;

static void dump_one(void *ud, const cJSON *obj)
{
    dump_ctx *d = ud;
    if (d->f == &d->r->feeds[FEED_POD] &&
        pod_withheld(d->r, ls_kutil_meta_str(obj, "namespace"), ls_kutil_meta_str(obj, "name")))
        return;
    send_object_locked(d->r, d->f, "add", obj, true);
}

void ls_relay_attach(ls_relay *r, int fd, bool synced)
{
    pthread_mutex_lock(&r->send_mu);
    r->fd = fd;
    r->out.len = 0;   /* the last worker's answers */
    atomic_store(&r->send_failed, false);
    /* objects, then nodes, then pods: as kcluster drains, a pod after its node */
    for (uint32_t i = FEED_NODE + 1; i < r->n_feeds; i++)
        ls_informer_each(r->feeds[i].inf, dump_one, &(dump_ctx){r, &r->feeds[i]});
    ls_informer_each(r->feeds[FEED_NODE].inf, dump_one, &(dump_ctx){r, &r->feeds[FEED_NODE]});
    ls_informer_each(r->feeds[FEED_POD].inf, dump_one, &(dump_ctx){r, &r->feeds[FEED_POD]});
    write_out_locked(r, synced ? LS_CH_SYNCED : 0, NULL, 0, NULL, 0);
    pthread_mutex_unlock(&r->send_mu);
}

void ls_relay_send_synced(ls_relay *r)
{
    send_to_worker(r, LS_CH_SYNCED, NULL, 0);
}

void ls_relay_detach(ls_relay *r)
{
    pthread_mutex_lock(&r->send_mu);
    r->fd = -1;
    pthread_mutex_unlock(&r->send_mu);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->answered);
    pthread_mutex_unlock(&r->mu);
}

static void send_to_worker(ls_relay *r, uint8_t type, const char *const *f, uint32_t n)
{
    pthread_mutex_lock(&r->send_mu);
    if (r->fd >= 0)
        write_out_locked(r, type, f, n, NULL, 0);
    pthread_mutex_unlock(&r->send_mu);
}

/* ---- checks */

static bool refuse(char *why, size_t cap, const char *fmt, const char *a, const char *b)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(why, cap, fmt, a ? a : "", b ? b : "");
#pragma GCC diagnostic pop
    return false;
}

/* s is 1..max characters, each one accepted by ok. */
static bool text_of(const char *s, size_t max, bool (*ok)(unsigned char))
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (!ok(*p))
            return false;
    return true;
}

static bool name_char(unsigned char c) { return islower(c) || isdigit(c) || c == '-' || c == '.'; }
static bool word_char(unsigned char c) { return isalnum(c) != 0; }

/* A DNS-subdomain-like name: what namespaces, pods and nodes are called. */
static bool good_name(const char *s, size_t max) { return text_of(s, max, name_char); }

/* An event's reason or type, a condition's reason: letters and digits. */
static bool good_word(const char *s, size_t max) { return text_of(s, max, word_char); }

/* What the checks read of a stored pod (without copying it). */
typedef struct pod_facts {
    bool known;                   /* stored, and of the uid asked for when one was given */
    bool on_node;                 /* spec.nodeName set */
    char node[254];
    char uid[128], scheduler_name[254];
} pod_facts;

static void read_pod(void *ud, const cJSON *pod)
{
    pod_facts *p = ud;
    const char *uid = ls_kutil_meta_str(pod, "uid");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const char *node = ls_kutil_json_str(spec, "nodeName");
    const char *sched = ls_kutil_json_str(spec, "schedulerName");
    p->known = !p->uid[0] || (uid && strcmp(uid, p->uid) == 0);
    p->on_node = node && *node;
    snprintf(p->node, sizeof p->node, "%s", node ? node : "");
    snprintf(p->uid, sizeof p->uid, "%s", uid ? uid : "");
    snprintf(p->scheduler_name, sizeof p->scheduler_name, "%s", sched ? sched : "");
}

/* The stored pod ns/name, checked against uid when given. */
static pod_facts known_pod(ls_relay *r, const char *ns, const char *name, const char *uid)
{
    pod_facts p = {0};
    if (!good_name(ns, 63) || !good_name(name, 253))
        return p;
    snprintf(p.uid, sizeof p.uid, "%s", uid ? uid : "");
    if (!ls_informer_peek(r->feeds[FEED_POD].inf, ns, name, read_pod, &p))
        p.known = false;
    return p;
}

static bool known_node(ls_relay *r, const char *name)
{
    return good_name(name, 253) && ls_informer_peek(r->feeds[FEED_NODE].inf, NULL, name, NULL, NULL);
}

/* ---- bindings */

typedef struct bind_job {
    ls_relay *r;
    char uid[128], node[254], scheduler_name[254];
} bind_job;

/* A failed binding is answered at once: the worker retries the pod. A
 * binding that succeeded matters to the worker only for a pod deleted while
 * it was bound (the informer's update tells the rest): its answer waits for
 * the next message to the worker, or the supervisor's next look at the worker
 * (ls_relay_tick), and shares its write, which spares a write and a wake-up
 * of the worker per pod. */
static void answer_bind(ls_relay *r, const char *uid, bool ok, const char *message)
{
    const char *f[] = {uid, ok ? "ok" : "failed", message};
    pthread_mutex_lock(&r->send_mu);
    if (r->fd >= 0 && (!ok || !ls_chan_frame(&r->out, LS_CH_BIND_RESULT, f, 3, NULL, 0)))
        write_out_locked(r, LS_CH_BIND_RESULT, f, 3, NULL, 0);
    pthread_mutex_unlock(&r->send_mu);
}

static void bind_done(void *ud, const ls_write_result *res)
{
    bind_job *job = ud;
    ls_relay *r = job->r;
    bool ok = res->outcome == LS_WRITE_OK;
    char ref[600];
    ls_log_kobj(ref, sizeof ref, res->ns, res->name);
    if (ok) {
        char note[1024];
        ls_writer_scheduled_note(res->ns, res->name, job->node, note, sizeof note);
        ls_event_spec ev = {.ns = res->ns, .name = res->name, .uid = job->uid, .type = "Normal",
                            .reason = "Scheduled", .action = "Binding", .note = note,
                            .reporting_controller = job->scheduler_name};
        ls_writer_record_event(r->writer, &ev, NULL, NULL);
        ls_log_info(2, "Successfully bound pod to node", "pod", ref, "node", job->node);
    } else {
        char status_text[32];
        snprintf(status_text, sizeof status_text, "%ld", res->status);
        ls_log_error("Failed to bind pod", "pod", ref, "node", job->node, "status", status_text, "err", res->message);
        pthread_mutex_lock(&r->mu);
        ls_kmap_remove(&r->guarded, job->uid);
        pthread_mutex_unlock(&r->mu);
    }
    answer_bind(r, job->uid, ok, ok ? "" : res->message);
    free(job);
}

static bool handle_bind(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *ns = m->f[0], *name = m->f[1], *uid = m->f[2], *node = m->f[3], *sched = m->f[4];
    if (!*uid || strlen(uid) > 127 || strlen(sched) > 253)
        return refuse(why, cap, "a binding of %s/%s without a valid uid or scheduler name", ns, name);
    char reason[1000] = "";
    pod_facts pod = known_pod(r, ns, name, uid);
    if (!pod.known)
        snprintf(reason, sizeof reason, "pod %.253s/%.253s of uid %.127s is not known", ns, name, uid);
    else if (pod.on_node)
        snprintf(reason, sizeof reason, "pod %.253s/%.253s is already assigned to node \"%.253s\"", ns, name,
                 pod.node);
    else if (!known_node(r, node))
        snprintf(reason, sizeof reason, "node \"%.253s\" is not known", node);
    if (!reason[0]) {
        pthread_mutex_lock(&r->mu);
        if (ls_kmap_get(&r->guarded, uid))
            snprintf(reason, sizeof reason, "pod %.253s/%.253s is already being bound or bound", ns, name);
        else
            ls_kmap_put(&r->guarded, uid, (void *)1);
        pthread_mutex_unlock(&r->mu);
    }
    if (reason[0]) {
        char msg[1100];
        snprintf(msg, sizeof msg, "binding refused by the supervisor: %s", reason);
        ls_log_error("Refused a binding", "err", msg);
        answer_bind(r, uid, false, msg);
        return true;
    }
    bind_job *job = ls_xcalloc(1, sizeof *job);
    job->r = r;
    snprintf(job->uid, sizeof job->uid, "%s", uid);
    snprintf(job->node, sizeof job->node, "%s", node);
    snprintf(job->scheduler_name, sizeof job->scheduler_name, "%s", sched);
    if (!ls_writer_bind(r->writer, ns, name, uid, node, bind_done, job)) {
        pthread_mutex_lock(&r->mu);
        ls_kmap_remove(&r->guarded, uid);
        pthread_mutex_unlock(&r->mu);
        answer_bind(r, uid, false, "the writer is stopping");
        free(job);
    }
    return true;
}

/* ---- other writes */

enum { MAX_NOTE = 4096, MAX_CONDITION_MESSAGE = 32768, MAX_PATCH = 1024 * 1024,
       MAX_QUEUED_PATCHES = 64 * 1024 * 1024 };

static bool handle_event(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *const *f = m->f;
    if (strcmp(f[3], "Normal") != 0 && strcmp(f[3], "Warning") != 0)
        return refuse(why, cap, "an event of type \"%.64s\"%s", f[3], "");
    if (!good_word(f[4], 128) || !good_word(f[5], 128) || strlen(f[6]) > MAX_NOTE || strlen(f[7]) > 253 ||
        strlen(f[8]) > 64)
        return refuse(why, cap, "an event with a bad reason, action or size (%.64s)%s", f[4], "");
    if (!known_pod(r, f[0], f[1], f[2]).known)
        return true;   /* the pod is gone: its event is not worth sending */
    ls_event_spec ev = {.ns = f[0], .name = f[1], .uid = f[2], .type = f[3], .reason = f[4], .action = f[5],
                        .note = f[6], .reporting_controller = *f[7] ? f[7] : NULL,
                        .resource_version = *f[8] ? f[8] : NULL, .related_ns = *f[9] ? f[9] : NULL,
                        .related_name = *f[10] ? f[10] : NULL, .related_uid = *f[11] ? f[11] : NULL};
    ls_writer_record_event(r->writer, &ev, NULL, NULL);
    return true;
}

static bool handle_pod_status(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *const *f = m->f;
    ls_pod_status_patch p = {.condition_reason = *f[2] ? f[2] : NULL, .condition_message = f[3]};
    if (strcmp(f[4], "keep") == 0)
        p.nominate = LS_NOMINATE_KEEP;
    else if (strcmp(f[4], "set") == 0)
        p.nominate = LS_NOMINATE_SET, p.node = f[5];
    else if (strcmp(f[4], "clear") == 0)
        p.nominate = LS_NOMINATE_CLEAR;
    else
        return refuse(why, cap, "a pod status with nomination \"%.16s\"%s", f[4], "");
    if ((*f[2] && !good_word(f[2], 128)) || strlen(f[3]) > MAX_CONDITION_MESSAGE ||
        (p.nominate == LS_NOMINATE_SET && !known_node(r, f[5])))
        return refuse(why, cap, "a pod status with a bad reason, message or node (%.64s)%s", f[2], "");
    if (!known_pod(r, f[0], f[1], NULL).known)
        return true;
    ls_writer_patch_pod_status(r->writer, f[0], f[1], &p, NULL, NULL);
    return true;
}

typedef struct preempt_job {
    ls_relay *r;
    char preemptor[128];
} preempt_job;

static void preempt_done(void *ud, const ls_write_result *res)
{
    preempt_job *job = ud;
    if (res->outcome != LS_WRITE_OK && res->status != 404) {
        const char *f[] = {job->preemptor, res->message};
        send_to_worker(job->r, LS_CH_PREEMPT_FAILED, f, 2);
    }
    free(job);
}

static bool handle_preempt(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *const *f = m->f;
    if (!*f[2] || strlen(f[3]) > MAX_NOTE || !*f[4] || strlen(f[4]) > 127)
        return refuse(why, cap, "a preemption of %.253s/%.253s without uids or with a long message", f[0], f[1]);
    pod_facts victim = known_pod(r, f[0], f[1], f[2]);
    bool running = victim.known && victim.on_node;
    if (!running) {
        const char *g[] = {f[4], "the victim is not a known pod on a node"};
        send_to_worker(r, LS_CH_PREEMPT_FAILED, g, 2);
        return true;
    }
    preempt_job *job = ls_xcalloc(1, sizeof *job);
    job->r = r;
    snprintf(job->preemptor, sizeof job->preemptor, "%s", f[4]);
    if (!ls_writer_preempt_victim(r->writer, f[0], f[1], f[2], *f[3] ? f[3] : NULL, preempt_done, job))
        free(job);
    return true;
}

static bool json_object_text(const char *s, size_t max)
{
    if (strlen(s) > max)
        return false;
    cJSON *j = cJSON_Parse(s);
    bool ok = cJSON_IsObject(j);
    cJSON_Delete(j);
    return ok;
}

/* A plugin's patch the API server refused is logged with its message: it
 * was dropped without a word (a PreBind's annotations past 256 KiB: attacker
 * round 3). The plugin's PreBind waits on the informer, as before. */
/* A plugin's object patch on the writer: its size, given back when done. */
typedef struct queued_patch {
    ls_relay *r;
    size_t bytes;
} queued_patch;

static void object_patch_done(void *ud, const ls_write_result *res)
{
    queued_patch *q = ud;
    atomic_fetch_sub(&q->r->patch_bytes, q->bytes);
    free(q);
    if (res->outcome == LS_WRITE_OK)
        return;
    char ref[600];
    ls_log_kobj(ref, sizeof ref, res->ns, res->name);
    ls_log_error("A plugin's API write failed", "object", ref, "err", res->message);
}

static bool handle_object_patch(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *kind = m->f[0], *ns = m->f[1], *name = m->f[2], *patch = m->f[3];
    bool pv = strcmp(kind, "PersistentVolume") == 0, pvc = strcmp(kind, "PersistentVolumeClaim") == 0;
    if ((!pv && !pvc) || !good_name(name, 253) || (pvc && !good_name(ns, 63)) || !json_object_text(patch, MAX_PATCH))
        return refuse(why, cap, "a patch of %.64s %.253s: only PersistentVolumes and claims, by name, with a JSON "
                      "object", kind, name);
    relay_feed *feed = feed_of_kind(r, kind);
    if (!feed || !ls_informer_peek(feed->inf, pv ? NULL : ns, name, NULL, NULL))
        return true;   /* gone: PreBind waits on the informer and times out as upstream's would */
    char path[700];
    if (pv)
        snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", name);
    else
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ns, name);
    /* The worker may ask for 10000 writes of 1 MiB per plugin call, and the
     * writer queues them all: a PreBind in a loop grew this process by GBs
     * (attacker round 4). Past MAX_QUEUED_PATCHES bytes a patch is dropped,
     * logged as a write that failed; PreBind then waits as for a slow
     * server. */
    size_t bytes = strlen(patch) + strlen(path);
    if (atomic_fetch_add(&r->patch_bytes, bytes) + bytes > MAX_QUEUED_PATCHES) {
        atomic_fetch_sub(&r->patch_bytes, bytes);
        char ref[600];
        ls_log_kobj(ref, sizeof ref, pv ? NULL : ns, name);
        ls_log_error("A plugin's API write failed", "object", ref, "err",
                     "more than 64 MiB of plugins' patches wait for the API server");
        return true;
    }
    queued_patch *q = ls_xmalloc(sizeof *q);
    *q = (queued_patch){r, bytes};
    if (!ls_writer_patch_object(r->writer, path, pv ? NULL : ns, name, patch, object_patch_done, q)) {
        atomic_fetch_sub(&r->patch_bytes, bytes);   /* the writer stopped: not queued, no callback */
        free(q);
    }
    return true;
}

void ls_relay_reply(ls_relay *r, const char *id, bool ok, const char *message)
{
    const char *f[] = {id, ok ? "ok" : "failed", message};
    send_to_worker(r, LS_CH_REPLY, f, 3);
}

enum { CREATED_KEPT = sizeof ((ls_relay *)0)->created / sizeof ((ls_relay *)0)->created[0] };

static void remember_created(ls_relay *r, const char *ns, const char *name)
{
    pthread_mutex_lock(&r->mu);
    snprintf(r->created[r->n_created++ % CREATED_KEPT], sizeof r->created[0], "%s/%s", ns, name);
    pthread_mutex_unlock(&r->mu);
}

static bool created_here(ls_relay *r, const char *ns, const char *name)
{
    char key[sizeof r->created[0]];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&r->mu);
    bool found = false;
    for (uint32_t i = 0; i < CREATED_KEPT && !found; i++)
        found = strcmp(r->created[i], key) == 0;
    pthread_mutex_unlock(&r->mu);
    return found;
}

/* A request the worker waits on: the API's answer, as the reply (its body
 * on success when `answer_body`, else the error). */
static void request_and_reply(ls_relay *r, const char *id, const char *verb, const char *path, const char *type,
                              const char *body, bool answer_body, bool *created_ok, cJSON **created)
{
    ls_kresponse resp;
    ls_error err;
    bool sent = ls_kclient_request(r->o.client, verb, path, type, body, strlen(body), &resp, &err);
    char msg[1200] = "";
    bool ok = sent && resp.status >= 200 && resp.status < 300;
    if (!sent)
        snprintf(msg, sizeof msg, "%s", err.msg);
    else if (!ok)
        snprintf(msg, sizeof msg, "%s %.200s: %ld: %.300s", verb, path, resp.status, resp.body ? resp.body : "");
    if (ok && created)
        *created = cJSON_Parse(resp.body ? resp.body : "");
    if (created_ok)
        *created_ok = ok;
    ls_relay_reply(r, id, ok, ok && answer_body && resp.body ? resp.body : msg);
    ls_kresponse_free(&resp);
}

/* DynamicResources' special claim for a pod's extended resources (upstream's
 * PreBind creates it): only that claim, of a pod the supervisor knows. */
static bool handle_create_claim(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *id = m->f[0], *ns = m->f[1], *text = m->f[2];
    if (!good_name(ns, 63) || strlen(text) > MAX_PATCH)
        return refuse(why, cap, "a claim to create in namespace %.63s%s: not a namespace, or over 1 MiB", ns, "");
    cJSON *claim = cJSON_Parse(text);
    ls_claim_owner owner;
    char what[400];
    if (!ls_claim_check_extended(claim, ns, &owner, what, sizeof what)) {
        cJSON_Delete(claim);
        return refuse(why, cap, "a claim to create that is not a pod's claim for extended resources: %.300s%s",
                      what, "");
    }
    pod_facts pod = known_pod(r, ns, owner.name, owner.uid);
    if (!pod.known) {
        char msg[600];
        snprintf(msg, sizeof msg, "pod %s/%s (uid %s) is not known", ns, owner.name, owner.uid);
        ls_relay_reply(r, id, false, msg);
        cJSON_Delete(claim);
        return true;
    }
    cJSON_Delete(claim);
    char path[300];
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", ns);
    bool ok = false;
    cJSON *created = NULL;
    request_and_reply(r, id, "POST", path, "application/json", text, true, &ok, &created);
    const char *name = ls_kutil_meta_str(created, "name");
    if (ok && name && good_name(name, 253))
        remember_created(r, ns, name);
    cJSON_Delete(created);
    return true;
}

/* DynamicResources' patch of a pod's status.extendedResourceClaimStatus. */
static bool handle_pod_status_patch(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *id = m->f[0], *ns = m->f[2], *name = m->f[3], *text = m->f[4];
    cJSON *patch = strlen(text) <= MAX_PATCH ? cJSON_Parse(text) : NULL;
    char what[400] = "over 1 MiB or not JSON";
    bool shaped = patch && ls_claim_check_pod_status_patch(patch, what, sizeof what);
    cJSON_Delete(patch);
    if (!shaped || !good_name(ns, 63) || !good_name(name, 253))
        return refuse(why, cap, "a status patch of pod %.253s: %.300s", name, what);
    if (!known_pod(r, ns, name, NULL).known) {
        ls_relay_reply(r, id, false, "the pod is not known");
        return true;
    }
    char path[400];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
    request_and_reply(r, id, "PATCH", path, "application/merge-patch+json", text, false, NULL, NULL);
    return true;
}

static bool handle_status_patch(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    const char *id = m->f[0], *kind = m->f[1], *ns = m->f[2], *name = m->f[3], *patch = m->f[4];
    if (strcmp(kind, "Pod") == 0)
        return handle_pod_status_patch(r, m, why, cap);
    relay_feed *feed = feed_of_kind(r, kind);
    const char *v = strchr(kind, '.');
    const char *g = v ? strchr(v + 1, '.') : NULL;
    if (!feed || !g || !good_name(name, 253) || (*ns && !good_name(ns, 63)) || !json_object_text(patch, MAX_PATCH))
        return refuse(why, cap, "a status patch of %.200s %.253s: not a watched custom resource, or not a JSON object",
                      kind, name);
    if (!ls_informer_peek(feed->inf, *ns ? ns : NULL, name, NULL, NULL) && !created_here(r, ns, name)) {
        ls_relay_reply(r, id, false, "the object is not known");
        return true;
    }
    char path[1024];
    if (*ns)
        snprintf(path, sizeof path, "/apis/%s/%.*s/namespaces/%s/%.*s/%s/status", g + 1, (int)(g - v - 1), v + 1, ns,
                 (int)(v - kind), kind, name);
    else
        snprintf(path, sizeof path, "/apis/%s/%.*s/%.*s/%s/status", g + 1, (int)(g - v - 1), v + 1, (int)(v - kind),
                 kind, name);
    request_and_reply(r, id, "PATCH", path, "application/merge-patch+json", patch, false, NULL, NULL);
    return true;
}

static bool handle_metrics(ls_relay *r, const ls_chan_msg *m)
{
    pthread_mutex_lock(&r->mu);
    uint32_t id = (uint32_t)strtoul(m->f[0], NULL, 10);
    if (id == r->metrics_id) {
        free(r->metrics_text);
        r->metrics_text = ls_xstrdup(m->f[1]);
        r->metrics_done = id;
        pthread_cond_broadcast(&r->answered);
    }
    pthread_mutex_unlock(&r->mu);
    return true;
}

bool ls_relay_handle(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap)
{
    static const struct { uint8_t type; uint32_t fields; } SHAPES[] = {
        {LS_CH_BIND, 5}, {LS_CH_EVENT, 12}, {LS_CH_POD_STATUS, 6}, {LS_CH_PREEMPT, 5},
        {LS_CH_OBJECT_PATCH, 4}, {LS_CH_STATUS_PATCH, 5}, {LS_CH_METRICS, 2}, {LS_CH_CREATE_CLAIM, 3},
    };
    bool known = false;
    for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++)
        if (SHAPES[i].type == m->type) {
            known = true;
            if (SHAPES[i].fields != m->n) {
                snprintf(why, cap, "a %s message of %u fields (expected %u)", ls_chan_type_name(m->type), m->n,
                         SHAPES[i].fields);
                return false;
            }
        }
    if (!known) {
        snprintf(why, cap, "a message of type %u (%s), which a worker does not send", m->type,
                 ls_chan_type_name(m->type));
        return false;
    }
    switch (m->type) {
    case LS_CH_BIND: return handle_bind(r, m, why, cap);
    case LS_CH_EVENT: return handle_event(r, m, why, cap);
    case LS_CH_POD_STATUS: return handle_pod_status(r, m, why, cap);
    case LS_CH_PREEMPT: return handle_preempt(r, m, why, cap);
    case LS_CH_OBJECT_PATCH: return handle_object_patch(r, m, why, cap);
    case LS_CH_STATUS_PATCH: return handle_status_patch(r, m, why, cap);
    case LS_CH_CREATE_CLAIM: return handle_create_claim(r, m, why, cap);
    default: return handle_metrics(r, m);
    }
}

bool ls_relay_send_failed(ls_relay *r)
{
    return atomic_load(&r->send_failed);
}

char *ls_relay_metrics(ls_relay *r, long timeout_ms)
{
    pthread_mutex_lock(&r->send_mu);
    bool attached = r->fd >= 0;
    pthread_mutex_unlock(&r->send_mu);
    if (!attached)   /* between two workers: nothing to ask */
        return ls_xstrdup("");
    pthread_mutex_lock(&r->mu);
    uint32_t id = ++r->metrics_id;
    pthread_mutex_unlock(&r->mu);
    char id_text[16];
    snprintf(id_text, sizeof id_text, "%u", id);
    const char *f[] = {id_text};
    send_to_worker(r, LS_CH_METRICS_ASK, f, 1);
    struct timespec until = ls_realtime_after_ms(timeout_ms);
    pthread_mutex_lock(&r->mu);
    int rc = 0;
    while (r->metrics_done != id && rc == 0)
        rc = pthread_cond_timedwait(&r->answered, &r->mu, &until);
    char *text = ls_xstrdup(r->metrics_done == id && r->metrics_text ? r->metrics_text : "");
    pthread_mutex_unlock(&r->mu);
    return text;
}

/* ---- pods that end workers */

static void mark_pod(ls_relay *r, const char *pod, const char *plugin, const char *point, const char *how,
                     int kills, long backoff_ms)
{
    char ns[256], name[256];
    const char *slash = strchr(pod, '/');
    if (!slash)
        return;
    snprintf(ns, sizeof ns, "%.*s", (int)(slash - pod), pod);
    snprintf(name, sizeof name, "%s", slash + 1);
    pod_facts pod_known = known_pod(r, ns, name, NULL);
    if (!pod_known.known)
        return;
    char msg[1400];
    snprintf(msg, sizeof msg, "running %s plugin \"%s\": the worker process ended %d times while this plugin ran "
             "for this pod (last: %.600s); the pod is retried in %ld s",
             point && *point ? point : "?", plugin && *plugin ? plugin : "?", kills, how, backoff_ms / 1000);
    ls_event_spec ev = {.ns = ns, .name = name, .uid = pod_known.uid, .type = "Warning",
                        .reason = "FailedScheduling", .action = "Scheduling", .note = msg,
                        .reporting_controller = pod_known.scheduler_name[0] ? pod_known.scheduler_name : NULL};
    ls_writer_record_event(r->writer, &ev, NULL, NULL);
    ls_pod_status_patch p = {.condition_reason = "SchedulerError", .condition_message = msg};
    ls_writer_patch_pod_status(r->writer, ns, name, &p, NULL, NULL);
    ls_log_error("Backing off a pod whose plugin calls ended the worker", "pod", pod, "err", msg);
}

void ls_relay_worker_ended(ls_relay *r, const char *pod, const char *plugin, const char *point, const char *how)
{
    if (!pod || !*pod)
        return;
    int limit = r->o.kill_limit > 0 ? r->o.kill_limit : 3;
    pthread_mutex_lock(&r->mu);
    relay_mark *m = ls_kmap_get(&r->marks, pod);
    if (!m) {
        m = ls_xcalloc(1, sizeof *m);
        m->backoff_ms = r->o.backoff_ms > 0 ? r->o.backoff_ms : 60000;
        ls_kmap_put(&r->marks, pod, m);
    }
    int kills = ++m->kills;
    long backoff = m->backoff_ms;
    bool mark = kills >= limit;
    if (mark) {
        m->withheld = true;
        m->until_ms = ls_worker_now_ms() + (uint64_t)backoff;
        m->backoff_ms = backoff * 2 > MAX_BACKOFF_MS ? MAX_BACKOFF_MS : backoff * 2;
    }
    pthread_mutex_unlock(&r->mu);
    if (mark)
        mark_pod(r, pod, plugin, point, how, kills, backoff);
}

void ls_relay_tick(ls_relay *r)
{
    flush(r);   /* the bindings' answers waiting */
    uint64_t now = ls_worker_now_ms();
    char released[8][320];
    int n = 0;
    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->marks.cap && n < 8; i++)
        for (ls_kmap_entry *e = r->marks.buckets[i]; e && n < 8; e = e->next) {
            relay_mark *m = e->value;
            if (m->withheld && m->until_ms <= now) {
                m->withheld = false;
                snprintf(released[n++], sizeof released[0], "%s", e->key);
            }
        }
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < n; i++) {
        char *slash = strchr(released[i], '/');
        if (!slash)
            continue;
        *slash = 0;
        cJSON *obj = ls_informer_get(r->feeds[FEED_POD].inf, released[i], slash + 1);
        if (!obj)
            continue;
        pthread_mutex_lock(&r->send_mu);
        send_object_locked(r, &r->feeds[FEED_POD], "add", obj, false);
        pthread_mutex_unlock(&r->send_mu);
        cJSON_Delete(obj);
    }
}

/* ---- stop */

bool ls_relay_stop(ls_relay *r, long timeout_ms)
{
    for (uint32_t i = 0; i < r->n_feeds; i++)
        ls_informer_stop(r->feeds[i].inf);
    if (!r->writer)
        return true;
    bool clean = ls_writer_drain(r->writer, timeout_ms);
    if (!clean) {
        ls_writer_stats after;
        ls_writer_get_stats(r->writer, &after);
        char dropped[32], timeout[32];
        snprintf(dropped, sizeof dropped, "%lu", after.cut_at_stop);
        snprintf(timeout, sizeof timeout, "%ldms", timeout_ms);
        ls_log_error("Stopped before every write was sent: the rest is dropped", "dropped", dropped, "timeout",
                     timeout);
    }
    return clean;
}

void ls_relay_free(ls_relay *r)
{
    if (!r)
        return;
    ls_relay_stop(r, 0);
    for (uint32_t i = 0; i < r->n_feeds; i++) {
        ls_informer_free(r->feeds[i].inf);
        free(r->feeds[i].kind);
    }
    ls_writer_free(r->writer);
    ls_buf_free(&r->tree);
    ls_buf_free(&r->out);
    ls_kmap_free(&r->guarded, NULL);
    ls_kmap_free(&r->marks, free);
    free(r->metrics_text);
    pthread_cond_destroy(&r->answered);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->send_mu);
    free(r);
}

/* ---- what-if questions (cli/whatif_relay.c): sent as they come */

bool ls_relay_send_to_worker(ls_relay *r, uint8_t type, const char *const *f, uint32_t n)
{
    pthread_mutex_lock(&r->send_mu);
    bool sent = r->fd >= 0 && ls_chan_send(r->fd, NULL, type, f, n);
    pthread_mutex_unlock(&r->send_mu);
    return sent;
}
