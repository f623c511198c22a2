/*
 * kcluster.c: a real cluster as the scheduler's source (see kcluster.h).
 *
 * Threads: informer threads decode and push onto per-kind queues under one
 * lock; writer threads push refused bindings the same way; the scheduling
 * thread drains (objects, then nodes, then pods, so a pod never arrives
 * before the node it is bound to within one drain) and is the only one that
 * touches the scheduler and the stores.
 *
 * Over 800 lines: the producer side, the application of events and the
 * writes' completions all work on one private struct and its lock (the
 * queues, the stores, the bindings in flight); kept in one file, that state
 * stays private to it.
 */
#include "client/kcluster.h"

#include "client/informer.h"
#include "client/kcluster_link.h"
#include "client/kutil.h"
#include "client/writer.h"
#include "luasched/cache.h"
#include "luasched/log.h"
#include "luasched/map.h"
#include "luasched/objects.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum kc_kind { KC_OBJECT, KC_NODE, KC_POD, KC_KINDS } kc_kind;
typedef enum kc_type { KC_ADD, KC_UPDATE, KC_DELETE, KC_BIND_OK, KC_BIND_FAILED, KC_PREEMPT_FAILED } kc_type;

typedef struct kc_event {
    uint8_t type;
    void *obj;        /* decoded object (add, update); NULL for deletes and bind failures */
    ls_str key;       /* pods and objects: uid; nodes: name */
    char *message;    /* bind failures */
} kc_event;

typedef struct kc_retired {
    uint8_t kind;
    void *obj;
    uint64_t epoch;   /* ls_scheduler_snapshot_epoch when it was replaced */
} kc_retired;

/* What one informer feeds. */
typedef struct kc_feed {
    ls_kcluster *kc;
    kc_kind kind;
    const char *object_kind;   /* "Service", ..., or "plural.version.group" for KC_OBJECT */
    ls_informer *informer;
    bool optional;             /* metrics: a cluster without metrics-server must not hold up the sync */
} kc_feed;

enum { MAX_FEEDS = 32 };

struct ls_kcluster {
    ls_kclient *client;
    ls_writer *writer;
    ls_kcluster_options opt;
    kc_feed feeds[MAX_FEEDS];
    uint32_t n_feeds;
    ls_vec custom;                 /* char *: owned copies of the custom resource names */
    /* producer side */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    ls_vec incoming[KC_KINDS];     /* kc_event */
    /* scheduling thread side */
    ls_scheduler *sched;
    ls_map stores[KC_KINDS];       /* key -> ls_pod_obj / ls_node_obj / ls_object_obj */
    ls_vec retired;                /* kc_retired */
    ls_map last_failure;           /* pod uid -> hash of the last condition patched (uintptr_t) */
    ls_map deleted_binding;        /* pod uid -> ls_pod_obj deleted while assumed, until its binding's outcome */
    kc_link *link;                 /* in a worker: the supervisor's channel, instead of informers and writer */
    uint32_t next_pod_id, next_node_id;
};

/* ---- objects by kind */

static void obj_free(kc_kind kind, void *obj)
{
    if (kind == KC_POD)
        ls_pod_obj_free(obj);
    else if (kind == KC_NODE)
        ls_node_obj_free(obj);
    else
        ls_object_obj_free(obj);
}

static ls_str obj_key(kc_kind kind, const void *obj)
{
    if (kind == KC_POD)
        return ((const ls_pod_obj *)obj)->pod.uid;
    if (kind == KC_NODE)
        return ((const ls_node_obj *)obj)->node.name;
    const ls_object *o = &((const ls_object_obj *)obj)->obj;
    if (o->uid)
        return o->uid;
    /* no uid (metrics.k8s.io objects): namespace/name, so that PodMetrics of
     * two namespaces do not collide */
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ls_str_get(o->ns), ls_str_get(o->name));
    return o->ns ? ls_intern_cstr(key) : o->name;
}

/* The store key of a JSON object: uid (pods, objects) or name (nodes). */
static ls_str json_key(kc_kind kind, const cJSON *json)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(json, "metadata");
    const char *field = kind == KC_NODE ? "name" : "uid";
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, field);
    if (!cJSON_IsString(v) && kind == KC_OBJECT) {
        v = cJSON_GetObjectItemCaseSensitive(meta, "name");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
        if (cJSON_IsString(v) && cJSON_IsString(ns)) {   /* as obj_key: namespace/name without a uid */
            char key[600];
            snprintf(key, sizeof key, "%s/%s", ns->valuestring, v->valuestring);
            return ls_intern_cstr(key);
        }
    }
    return cJSON_IsString(v) ? ls_intern_cstr(v->valuestring) : 0;
}

static void *decode(const kc_feed *f, const cJSON *json, ls_error *err)
{
    ls_decode_ctx ctx = {f->object_kind, NULL, NULL};
    if (f->kind == KC_POD)
        return ls_pod_decode(json, &ctx, err);
    if (f->kind == KC_NODE)
        return ls_node_decode(json, &ctx, err);
    /* List items carry no kind: the feed knows it. */
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(json, "kind")) && !strchr(f->object_kind, '.'))
        return ls_object_decode(json, &ctx, err);
    cJSON *copy = cJSON_Duplicate(json, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "kind");
    cJSON_AddStringToObject(copy, "kind", f->object_kind);
    void *obj = ls_object_decode(copy, &ctx, err);
    cJSON_Delete(copy);
    return obj;
}

/* ---- producer side (informer and writer threads) */

static void push(ls_kcluster *kc, kc_kind kind, kc_event ev)
{
    pthread_mutex_lock(&kc->lock);
    *(kc_event *)ls_vec_push(&kc->incoming[kind]) = ev;
    pthread_cond_signal(&kc->wake);
    pthread_mutex_unlock(&kc->lock);
}

static void push_decoded(kc_feed *f, kc_type type, const cJSON *json)
{
    ls_error err;
    void *obj = decode(f, json, &err);
    if (!obj) {
        /* One bad object must not stop the others: it is logged and skipped,
         * as an informer skips what it cannot convert. */
        ls_log_error("Skipping an object that could not be decoded", "kind", f->object_kind, "err", err.msg);
        return;
    }
    push(f->kc, f->kind, (kc_event){.type = (uint8_t)type, .obj = obj, .key = obj_key(f->kind, obj)});
}

static void on_add(void *ud, const cJSON *obj)
{
    push_decoded(ud, KC_ADD, obj);
}

static void on_update(void *ud, const cJSON *old_obj, const cJSON *new_obj)
{
    (void)old_obj;   /* the scheduling thread holds the old object it knows */
    push_decoded(ud, KC_UPDATE, new_obj);
}

static void on_delete(void *ud, const cJSON *obj)
{
    kc_feed *f = ud;
    ls_str key = json_key(f->kind, obj);
    if (key)
        push(f->kc, f->kind, (kc_event){.type = KC_DELETE, .key = key});
}

/* ---- informers */

typedef ls_kind_spec kind_spec;

static const kind_spec OBJECT_KINDS[] = {
    {"", "v1", "namespaces", "Namespace"},
    {"", "v1", "services", "Service"},
    {"", "v1", "replicationcontrollers", "ReplicationController"},
    {"apps", "v1", "replicasets", "ReplicaSet"},
    {"apps", "v1", "statefulsets", "StatefulSet"},
    {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"},
    /* the volume plugins' kinds, as kube-scheduler's informers watch them */
    {"", "v1", "persistentvolumes", "PersistentVolume"},
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode"},
    {"storage.k8s.io", "v1", "csidrivers", "CSIDriver"},
    {"storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"},
    {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment"},
};

const ls_kind_spec *ls_kcluster_object_kinds(size_t *n)
{
    *n = sizeof OBJECT_KINDS / sizeof *OBJECT_KINDS;
    return OBJECT_KINDS;
}

static bool add_feed(ls_kcluster *kc, kc_kind kind, const char *object_kind, const ls_informer_options *io,
                     ls_error *err)
{
    if (kc->n_feeds == MAX_FEEDS)
        return ls_errorf(err, "too many kinds to watch (at most %d)", MAX_FEEDS);
    kc_feed *f = &kc->feeds[kc->n_feeds];
    *f = (kc_feed){.kc = kc, .kind = kind, .object_kind = object_kind};
    ls_informer_handlers h = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete, .ud = f};
    f->informer = ls_informer_new(kc->client, io, &h, err);
    if (!f->informer)
        return false;
    kc->n_feeds++;
    return true;
}

/* "plural.version.group" (the form plugins' events tables use) into its parts. */
static bool add_custom_feed(ls_kcluster *kc, char *name, ls_error *err)
{
    char *version = strchr(name, '.');
    char *group = version ? strchr(version + 1, '.') : NULL;
    if (!group)
        return ls_errorf(err, "custom resource \"%s\": expected plural.version.group", name);
    size_t plural_len = (size_t)(version - name), version_len = (size_t)(group - version - 1);
    char *parts = ls_xmalloc(strlen(name) + 3);
    memcpy(parts, name, plural_len);
    parts[plural_len] = '\0';
    char *ver = parts + plural_len + 1;
    memcpy(ver, version + 1, version_len);
    ver[version_len] = '\0';
    char *grp = ver + version_len + 1;
    strcpy(grp, group + 1);
    ls_informer_options io = {.group = grp, .version = ver, .resource = parts, .name = name};
    bool ok = add_feed(kc, KC_OBJECT, name, &io, err);
    free(parts);
    return ok;
}

ls_kcluster *ls_kcluster_new(ls_kclient *client, const ls_kcluster_options *opt, ls_error *err)
{
    ls_kcluster *kc = ls_xcalloc(1, sizeof *kc);
    kc->client = client;
    kc->opt = *opt;
    pthread_mutex_init(&kc->lock, NULL);
    pthread_cond_init(&kc->wake, NULL);
    for (int k = 0; k < KC_KINDS; k++) {
        ls_vec_init(&kc->incoming[k], sizeof(kc_event));
        ls_map_init(&kc->stores[k]);
    }
    ls_vec_init(&kc->retired, sizeof(kc_retired));
    ls_vec_init(&kc->custom, sizeof(char *));
    ls_map_init(&kc->last_failure);
    ls_map_init(&kc->deleted_binding);
    ls_writer_options wo = {.workers = opt->writer_threads ? opt->writer_threads : 8,
                            .reporting_controller = opt->reporting_controller,
                            .reporting_instance = opt->reporting_instance,
                            .events_client = opt->events_client};
    kc->writer = ls_writer_new(client, &wo, err);
    bool ok = kc->writer != NULL;
    ls_informer_options pods = {.version = "v1", .resource = "pods",
                                .field_selector = "status.phase!=Succeeded,status.phase!=Failed"};
    ls_informer_options nodes = {.version = "v1", .resource = "nodes"};
    ok = ok && add_feed(kc, KC_POD, "Pod", &pods, err) && add_feed(kc, KC_NODE, "Node", &nodes, err);
    for (size_t i = 0; ok && i < sizeof OBJECT_KINDS / sizeof *OBJECT_KINDS; i++) {
        const kind_spec *k = &OBJECT_KINDS[i];
        ls_informer_options io = {.group = k->group, .version = k->version, .resource = k->resource};
        ok = add_feed(kc, KC_OBJECT, k->kind, &io, err);
    }
    if (!ok) {
        ls_kcluster_free(kc);
        return NULL;
    }
    return kc;
}

/* ---- in a worker: the supervisor's messages instead of informers */

static kc_kind feed_kind(const char *feed)
{
    return strcmp(feed, "pod") == 0 ? KC_POD : strcmp(feed, "node") == 0 ? KC_NODE : KC_OBJECT;
}

static void link_object(void *ud, char verb, const char *feed, const char *kind, const cJSON *json)
{
    kc_feed f = {.kc = ud, .kind = feed_kind(feed), .object_kind = kind};
    if (verb == 'd')
        on_delete(&f, json);
    else
        push_decoded(&f, verb == 'a' ? KC_ADD : KC_UPDATE, json);
}

static void link_bind_result(void *ud, const char *uid, bool ok, const char *message)
{
    push(ud, KC_POD, (kc_event){.type = ok ? KC_BIND_OK : KC_BIND_FAILED, .key = ls_intern_cstr(uid),
                                .message = ok ? NULL : ls_xstrdup(message)});
}

static void link_preempt_failed(void *ud, const char *uid, const char *message)
{
    push(ud, KC_POD, (kc_event){.type = KC_PREEMPT_FAILED, .key = ls_intern_cstr(uid),
                                .message = ls_xstrdup(message)});
}

ls_kcluster *ls_kcluster_new_linked(int fd, ls_error *err)
{
    ls_kcluster *kc = ls_xcalloc(1, sizeof *kc);
    pthread_mutex_init(&kc->lock, NULL);
    pthread_cond_init(&kc->wake, NULL);
    for (int k = 0; k < KC_KINDS; k++) {
        ls_vec_init(&kc->incoming[k], sizeof(kc_event));
        ls_map_init(&kc->stores[k]);
    }
    ls_vec_init(&kc->retired, sizeof(kc_retired));
    ls_vec_init(&kc->custom, sizeof(char *));
    ls_map_init(&kc->last_failure);
    ls_map_init(&kc->deleted_binding);
    kc_link_sink sink = {.ud = kc, .object = link_object, .bind_result = link_bind_result,
                         .preempt_failed = link_preempt_failed};
    kc->link = kc_link_new(fd, &sink);
    if (!kc->link) {
        ls_errorf(err, "cannot start the channel's reader");
        ls_kcluster_free(kc);
        return NULL;
    }
    return kc;
}

bool ls_kcluster_hello(ls_kcluster *kc, const char *configz, bool node_metrics, bool pod_metrics,
                       const char *const *custom, uint32_t n)
{
    const char *wants = node_metrics && pod_metrics ? "nodes,pods" : node_metrics ? "nodes" : pod_metrics ? "pods" : "";
    return kc_link_hello(kc->link, configz, wants, custom, n);
}

bool ls_kcluster_wait_fed(ls_kcluster *kc, volatile sig_atomic_t *stop)
{
    kc_link_on_gone(kc->link, stop);
    return kc_link_wait_synced(kc->link, stop);
}

cJSON *ls_kcluster_extender_call(void *kc, const char *url, const char *verb, const char *body, char **msg)
{
    return kc_link_extender(((ls_kcluster *)kc)->link, url, verb, body, msg);
}

void ls_kcluster_serve_metrics(ls_kcluster *kc, ls_metrics *m)
{
    kc_link_set_metrics(kc->link, m);
}

bool ls_kcluster_watch_custom(ls_kcluster *kc, const char *resource, ls_error *err)
{
    char *name = ls_xstrdup(resource);
    *(char **)ls_vec_push(&kc->custom) = name;
    return add_custom_feed(kc, name, err);
}

bool ls_kcluster_poll_metrics(ls_kcluster *kc, bool nodes, bool pods, long interval_ms, ls_error *err)
{
    ls_informer_options n = {.group = "metrics.k8s.io", .version = "v1beta1", .resource = "nodes",
                             .name = "NodeMetrics", .poll_ms = interval_ms};
    ls_informer_options p = n;
    p.resource = "pods";
    p.name = "PodMetrics";
    if (nodes && !add_feed(kc, KC_OBJECT, "NodeMetrics", &n, err))
        return false;
    if (nodes)
        kc->feeds[kc->n_feeds - 1].optional = true;
    if (pods && !add_feed(kc, KC_OBJECT, "PodMetrics", &p, err))
        return false;
    if (pods)
        kc->feeds[kc->n_feeds - 1].optional = true;
    return true;
}

bool ls_kcluster_start(ls_kcluster *kc, ls_error *err)
{
    for (uint32_t i = 0; i < kc->n_feeds; i++)
        if (!ls_informer_start(kc->feeds[i].informer, err))
            return false;
    return true;
}

bool ls_kcluster_synced(ls_kcluster *kc)
{
    for (uint32_t i = 0; i < kc->n_feeds; i++)
        if (!kc->feeds[i].optional && !ls_informer_has_synced(kc->feeds[i].informer))
            return false;
    return true;
}

bool ls_kcluster_wait_synced(ls_kcluster *kc, volatile sig_atomic_t *stop)
{
    for (uint32_t i = 0; i < kc->n_feeds; i++)
        while (!kc->feeds[i].optional && !ls_informer_wait_synced(kc->feeds[i].informer, 100))
            if (stop && *stop)
                return false;
    return true;
}

/* ---- the scheduling thread: applying events */

static void retire(ls_kcluster *kc, kc_kind kind, void *obj)
{
    *(kc_retired *)ls_vec_push(&kc->retired) =
        (kc_retired){.kind = (uint8_t)kind, .obj = obj, .epoch = ls_scheduler_snapshot_epoch(kc->sched)};
}

/* Replaced objects go once the snapshot was updated after their replacement
 * (it held the last pointers), and not while the queue keeps in-flight events
 * that may point at them. They are kept in the order they were replaced, so
 * the ones to free are at the front. With no cycle running (a quiet cluster
 * whose nodes only report heartbeats), the snapshot is refreshed once enough
 * wait, so that neither the memory nor this work grows with the events. */
enum { RETIRED_REFRESH = 256 };

static void free_retired(ls_kcluster *kc)
{
    if (!kc->retired.len || ls_scheduler_holds_event_objects(kc->sched))
        return;
    uint64_t now = ls_scheduler_snapshot_epoch(kc->sched);
    if (kc->retired.len >= RETIRED_REFRESH && LS_VEC_AT(&kc->retired, kc_retired, 0).epoch >= now) {
        ls_scheduler_refresh_snapshot(kc->sched);
        now = ls_scheduler_snapshot_epoch(kc->sched);
    }
    uint32_t freed = 0;
    while (freed < kc->retired.len && LS_VEC_AT(&kc->retired, kc_retired, freed).epoch < now) {
        kc_retired r = LS_VEC_AT(&kc->retired, kc_retired, freed++);
        obj_free(r.kind, r.obj);
    }
    if (freed) {
        memmove(kc->retired.data, &LS_VEC_AT(&kc->retired, kc_retired, freed),
                (size_t)(kc->retired.len - freed) * sizeof(kc_retired));
        kc->retired.len -= freed;
    }
}

/* A binding's outcome for a pod deleted meanwhile: the assumed pod goes. */
static bool settle_deleted_binding(ls_kcluster *kc, kc_event *ev)
{
    ls_pod_obj *gone = ls_map_remove(&kc->deleted_binding, ev->key);
    if (!gone)
        return false;
    ls_scheduler_forget_assumed(kc->sched, &gone->pod);
    retire(kc, KC_POD, gone);
    return true;
}

static void apply_pod(ls_kcluster *kc, kc_event *ev)
{
    ls_map *store = &kc->stores[KC_POD];
    ls_pod_obj *old = ls_map_get(store, ev->key);
    if (ev->type == KC_PREEMPT_FAILED) {
        if (old)
            ls_scheduler_preemption_failed(kc->sched, &old->pod, ev->message);
        free(ev->message);
        return;
    }
    if (ev->type == KC_BIND_OK || ev->type == KC_BIND_FAILED) {
        if (!settle_deleted_binding(kc, ev) && old && ev->type == KC_BIND_FAILED)
            ls_scheduler_bind_failed(kc->sched, &old->pod, ev->message);
        free(ev->message);
        return;
    }
    if (ev->type == KC_DELETE) {
        ls_map_remove(&kc->last_failure, ev->key);
        if (old) {
            ls_map_remove(store, ev->key);
            ls_scheduler_on_pod_delete(kc->sched, &old->pod);
            /* The cache keeps an assumed pod until its binding's outcome: so does the store. */
            if (ls_cache_is_assumed(ls_scheduler_cache(kc->sched), &old->pod))
                ls_map_put(&kc->deleted_binding, ev->key, old);
            else
                retire(kc, KC_POD, old);
        }
        return;
    }
    ls_pod_obj *p = ev->obj;
    ls_map_put(store, ev->key, p);
    if (!old) {
        p->pod.id = kc->next_pod_id++;
        ls_scheduler_on_pod_add(kc->sched, &p->pod);
        return;
    }
    p->pod.id = old->pod.id;
    ls_scheduler_on_pod_update(kc->sched, &old->pod, &p->pod);
    retire(kc, KC_POD, old);
}

static void apply_node(ls_kcluster *kc, kc_event *ev)
{
    ls_map *store = &kc->stores[KC_NODE];
    ls_node_obj *old = ls_map_get(store, ev->key);
    if (ev->type == KC_DELETE) {
        if (old) {
            ls_map_remove(store, ev->key);
            ls_scheduler_on_node_delete(kc->sched, &old->node);
            retire(kc, KC_NODE, old);
        }
        return;
    }
    ls_node_obj *n = ev->obj;
    ls_map_put(store, ev->key, n);
    if (!old) {
        n->node.id = kc->next_node_id++;
        ls_scheduler_on_node_add(kc->sched, &n->node);
        return;
    }
    n->node.id = old->node.id;
    ls_scheduler_on_node_update(kc->sched, &old->node, &n->node);
    retire(kc, KC_NODE, old);
}

static void apply_object(ls_kcluster *kc, kc_event *ev)
{
    ls_map *store = &kc->stores[KC_OBJECT];
    ls_object_obj *old = ls_map_get(store, ev->key);
    if (ev->type == KC_DELETE) {
        if (old) {
            ls_map_remove(store, ev->key);
            ls_scheduler_on_object_delete(kc->sched, &old->obj);
            retire(kc, KC_OBJECT, old);
        }
        return;
    }
    ls_object_obj *o = ev->obj;
    ls_map_put(store, ev->key, o);
    if (!old) {
        ls_scheduler_on_object_add(kc->sched, &o->obj);
        return;
    }
    ls_scheduler_on_object_update(kc->sched, &old->obj, &o->obj);
    retire(kc, KC_OBJECT, old);
}

static void (*const APPLY[KC_KINDS])(ls_kcluster *, kc_event *) = {apply_object, apply_node, apply_pod};

static void drain(ls_kcluster *kc)
{
    if (!kc->sched)
        return;
    for (int k = 0; k < KC_KINDS; k++) {
        pthread_mutex_lock(&kc->lock);
        ls_vec batch = kc->incoming[k];
        ls_vec_init(&kc->incoming[k], sizeof(kc_event));
        pthread_mutex_unlock(&kc->lock);
        for (uint32_t i = 0; i < batch.len; i++)
            APPLY[k](kc, &LS_VEC_AT(&batch, kc_event, i));
        ls_vec_free(&batch);
    }
    free_retired(kc);
}

/* ---- writes */

typedef struct bind_job {
    ls_kcluster *kc;
    ls_str uid, scheduler_name;
    char node[254];
} bind_job;

/* An event, a pod status patch: through the writer, or the supervisor's channel in a worker. */
static void out_event(ls_kcluster *kc, const ls_event_spec *ev)
{
    if (kc->link)
        kc_link_event(kc->link, ev);
    else
        ls_writer_record_event(kc->writer, ev, NULL, NULL);
}

static void out_pod_status(ls_kcluster *kc, const char *ns, const char *name, const ls_pod_status_patch *p)
{
    if (kc->link)
        kc_link_pod_status(kc->link, ns, name, p);
    else
        ls_writer_patch_pod_status(kc->writer, ns, name, p, NULL, NULL);
}

static void bind_done(void *ud, const ls_write_result *r)
{
    bind_job *job = ud;
    ls_kcluster *kc = job->kc;
    bool ok = r->outcome == LS_WRITE_OK;
    if (ok) {
        char note[1024];
        ls_writer_scheduled_note(r->ns, r->name, job->node, note, sizeof note);
        ls_event_spec ev = {.ns = r->ns, .name = r->name, .uid = ls_str_get(job->uid), .type = "Normal",
                            .reason = "Scheduled", .action = "Binding", .note = note,
                            .reporting_controller = ls_str_get(job->scheduler_name)};
        ls_writer_record_event(kc->writer, &ev, NULL, NULL);
        char ref[600];
        ls_log_info(2, "Successfully bound pod to node", "pod", ls_log_kobj(ref, sizeof ref, r->ns, r->name), "node",
                    job->node);
        push(kc, KC_POD, (kc_event){.type = KC_BIND_OK, .key = job->uid});
    } else {
        char status_text[32];
        snprintf(status_text, sizeof status_text, "%ld", r->status);
        char ref[600];
        ls_log_error("Failed to bind pod", "pod", ls_log_kobj(ref, sizeof ref, r->ns, r->name), "node", job->node,
                     "status", status_text, "err",
                     r->message);
        push(kc, KC_POD, (kc_event){.type = KC_BIND_FAILED, .key = job->uid, .message = ls_xstrdup(r->message)});
    }
    free(job);
}

static bool source_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    ls_kcluster *kc = ud;
    if (kc->link) {   /* the supervisor binds, records Scheduled and answers */
        if (!kc_link_bind(kc->link, ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->uid),
                          ls_str_get(node), ls_str_get(pod->scheduler_name)))
            return ls_errorf(err, "binding pod %s/%s: the supervisor is gone", ls_str_get(pod->ns),
                             ls_str_get(pod->name));
        return true;
    }
    bind_job *job = ls_xcalloc(1, sizeof *job);
    job->kc = kc;
    job->uid = pod->uid;
    job->scheduler_name = pod->scheduler_name;
    snprintf(job->node, sizeof job->node, "%s", ls_str_get(node));
    if (!ls_writer_bind(kc->writer, ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->uid), job->node,
                        bind_done, job)) {
        free(job);
        return ls_errorf(err, "binding pod %s/%s: the writer is stopping", ls_str_get(pod->ns),
                         ls_str_get(pod->name));
    }
    return true;
}

/* A status merge patch (a plugin's PreBind: a ResourceClaim's allocation),
 * synchronous as upstream's PreBind; the informer brings the new version.
 * The kind is "plural.version.group" (resources outside the core group). */
static bool source_patch_status(void *ud, const ls_object *obj, const char *merge_patch, ls_error *err)
{
    ls_kcluster *kc = ud;
    const char *kind = ls_str_get(obj->kind);
    const char *v = strchr(kind, '.');
    const char *g = v ? strchr(v + 1, '.') : NULL;
    if (!g)
        return ls_errorf(err, "cannot write the status of %s %s: not a plural.version.group resource", kind,
                         ls_str_get(obj->name));
    if (kc->link)
        return kc_link_patch_status(kc->link, kind, obj->ns ? ls_str_get(obj->ns) : "", ls_str_get(obj->name),
                                    merge_patch, err);
    char path[1024];
    if (obj->ns)
        snprintf(path, sizeof path, "/apis/%s/%.*s/namespaces/%s/%.*s/%s/status", g + 1, (int)(g - v - 1), v + 1,
                 ls_str_get(obj->ns), (int)(v - kind), kind, ls_str_get(obj->name));
    else
        snprintf(path, sizeof path, "/apis/%s/%.*s/%.*s/%s/status", g + 1, (int)(g - v - 1), v + 1, (int)(v - kind),
                 kind, ls_str_get(obj->name));
    ls_kresponse resp;
    bool sent = ls_kclient_request(kc->client, "PATCH", path, "application/merge-patch+json", merge_patch,
                                   strlen(merge_patch), &resp, err);
    bool ok = sent && resp.status >= 200 && resp.status < 300;
    if (sent && !ok)
        ls_errorf(err, "PATCH %s: %ld: %.300s", path, resp.status, resp.body ? resp.body : "");
    ls_kresponse_free(&resp);
    return ok;
}

static void patch_done(void *ud, const ls_write_result *r)
{
    (void)ud;
    if (r->outcome == LS_WRITE_OK)
        return;
    char status_text[32];
    snprintf(status_text, sizeof status_text, "%ld", r->status);
    ls_log_error("Failed to update a volume object for binding", "namespace", r->ns ? r->ns : "", "name", r->name,
                 "status", status_text, "err", r->message);
}

/* VolumeBinding's API writes: a merge patch on a PersistentVolume or a claim.
 * The result comes back through the informers, which PreBind waits on. */
static bool source_patch_object(void *ud, ls_str kind, ls_str ns, ls_str name, const char *patch, ls_error *err)
{
    ls_kcluster *kc = ud;
    const char *k = ls_str_get(kind);
    if (kc->link) {
        if (!kc_link_patch_object(kc->link, k, ns ? ls_str_get(ns) : "", ls_str_get(name), patch))
            return ls_errorf(err, "updating %s %s: the supervisor is gone", k, ls_str_get(name));
        return true;
    }
    char path[1200];
    if (strcmp(k, "PersistentVolume") == 0)
        snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", ls_str_get(name));
    else if (strcmp(k, "PersistentVolumeClaim") == 0)
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ls_str_get(ns),
                 ls_str_get(name));
    else
        return ls_errorf(err, "updating %s %s: only PersistentVolumes and claims are written", k, ls_str_get(name));
    if (!ls_writer_patch_object(kc->writer, path, ns ? ls_str_get(ns) : NULL, ls_str_get(name), patch, patch_done,
                                NULL))
        return ls_errorf(err, "updating %s %s: the writer is stopping", k, ls_str_get(name));
    return true;
}

static uint64_t failure_hash(const char *reason, const char *message, ls_str nominated)
{
    uint64_t h = 1469598103934665603ull ^ nominated;
    for (const char *p = reason ? reason : ""; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (const char *p = message; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h | 1;   /* never 0, the map's "absent" */
}

/* FailedScheduling and the PodScheduled condition (with nominatedNodeName
 * when preemption nominated a node). */
static void record_failure(ls_kcluster *kc, const ls_attempt *a)
{
    const ls_pod *pod = a->pod;
    const char *ns = ls_str_get(pod->ns), *name = ls_str_get(pod->name);
    const char *message = a->message ? a->message : "";
    ls_event_spec ev = {.ns = ns, .name = name, .uid = ls_str_get(pod->uid), .type = "Warning",
                        .reason = "FailedScheduling", .action = "Scheduling", .note = message,
                        .reporting_controller = ls_str_get(pod->scheduler_name)};
    out_event(kc, &ev);
    /* As upstream, the status is patched only when the condition or the
     * nomination changes, so lastTransitionTime keeps its meaning. */
    uintptr_t h = (uintptr_t)failure_hash(a->reason, message, a->nominated_node);
    if (pod->uid && (uintptr_t)ls_map_get(&kc->last_failure, pod->uid) == h)
        return;
    if (pod->uid)
        ls_map_put(&kc->last_failure, pod->uid, (void *)h);
    ls_pod_status_patch patch = {.condition_reason = a->reason ? a->reason : "SchedulerError",
                                 .condition_message = message,
                                 .nominate = a->nominated_node ? LS_NOMINATE_SET : LS_NOMINATE_KEEP,
                                 .node = a->nominated_node ? ls_str_get(a->nominated_node) : NULL};
    out_pod_status(kc, ns, name, &patch);
    char ref[600];
    ls_log_info(2, "Unable to schedule pod; no fit; waiting", "pod", ls_log_kobj(ref, sizeof ref, ns, name), "err",
                message);
}

static void source_on_attempt(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    (void)cycle;
    (void)s;
    if (!a->node) {
        record_failure(ud, a);
        return;
    }
    if (ls_log_enabled(3)) {
        char who[600], evaluated[16], feasible[16];
        ls_log_kobj(who, sizeof who, ls_str_get(a->pod->ns), ls_str_get(a->pod->name));
        snprintf(evaluated, sizeof evaluated, "%u", a->num_all_nodes);
        snprintf(feasible, sizeof feasible, "%u", a->num_feasible);
        ls_log_info(3, "Scheduled pod, binding", "pod", who, "node", ls_str_get(a->node), "evaluatedNodes",
                    evaluated, "feasibleNodes", feasible);
    }
}

typedef struct preempt_job {
    ls_kcluster *kc;
    ls_str preemptor_uid;
} preempt_job;

/* A victim's deletion the API server refused (async preemption): the
 * preemptor's nomination goes, on the scheduling thread. A victim already
 * gone (404) is what the deletion wanted. */
static void preempt_done(void *ud, const ls_write_result *r)
{
    preempt_job *job = ud;
    if (r->outcome != LS_WRITE_OK && r->status != 404)
        push(job->kc, KC_POD, (kc_event){.type = KC_PREEMPT_FAILED, .key = job->preemptor_uid,
                                         .message = ls_xstrdup(r->message)});
    free(job);
}

static bool source_preempt(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node,
                           const char *message, ls_error *err)
{
    ls_kcluster *kc = ud;
    const char *ns = ls_str_get(victim->ns), *name = ls_str_get(victim->name);
    if (kc->link) {
        if (!kc_link_preempt(kc->link, ns, name, ls_str_get(victim->uid), message ? message : "",
                             ls_str_get(preemptor->uid)))
            return ls_errorf(err, "preempting pod %s/%s: the supervisor is gone", ns, name);
    } else {
        preempt_job *job = ls_xcalloc(1, sizeof *job);
        job->kc = kc;
        job->preemptor_uid = preemptor->uid;
        if (!ls_writer_preempt_victim(kc->writer, ns, name, ls_str_get(victim->uid), message, preempt_done, job)) {
            free(job);
            return ls_errorf(err, "preempting pod %s/%s: the writer is stopping", ns, name);
        }
    }
    char note[600];
    snprintf(note, sizeof note, "Preempted by pod %s on node %s", ls_str_get(preemptor->uid), ls_str_get(node));
    /* As upstream, the event regards the victim and relates to the preemptor. */
    ls_event_spec ev = {.ns = ns, .name = name, .uid = ls_str_get(victim->uid), .type = "Normal",
                        .reason = "Preempted", .action = "Preempting", .note = note,
                        .reporting_controller = ls_str_get(preemptor->scheduler_name),
                        .related_ns = ls_str_get(preemptor->ns), .related_name = ls_str_get(preemptor->name),
                        .related_uid = ls_str_get(preemptor->uid)};
    out_event(kc, &ev);
    return true;
}

static void source_clear_nomination(void *ud, const ls_pod *pod)
{
    ls_pod_status_patch p = {.nominate = LS_NOMINATE_CLEAR};
    out_pod_status(ud, ls_str_get(pod->ns), ls_str_get(pod->name), &p);
}

/* NominatedNodeNameForExpectation: where the pod is going while Permit or PreBind runs. */
static void source_nominate(void *ud, const ls_pod *pod, ls_str node)
{
    ls_pod_status_patch p = {.nominate = LS_NOMINATE_SET, .node = ls_str_get(node)};
    out_pod_status(ud, ls_str_get(pod->ns), ls_str_get(pod->name), &p);
}

static void source_advance_to(void *ud, uint64_t now_ms)
{
    (void)now_ms;
    drain(ud);
}

static void source_wait(void *ud, uint64_t ms)
{
    ls_kcluster *kc = ud;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&kc->lock);
    bool empty = true;
    for (int k = 0; k < KC_KINDS; k++)
        empty = empty && kc->incoming[k].len == 0;
    if (empty)
        pthread_cond_timedwait(&kc->wake, &kc->lock, &until);
    pthread_mutex_unlock(&kc->lock);
}

ls_sched_source ls_kcluster_source(ls_kcluster *kc)
{
    return (ls_sched_source){.ud = kc, .bind = source_bind, .on_attempt = source_on_attempt,
                             .patch_status = source_patch_status, .patch_object = source_patch_object,
                             .advance_to = source_advance_to, .preempt = source_preempt, .wait = source_wait,
                             .clear_nomination = source_clear_nomination, .nominate = source_nominate};
}

void ls_kcluster_attach(ls_kcluster *kc, ls_scheduler *s)
{
    kc->sched = s;
    drain(kc);
}

/* ---- stop */

bool ls_kcluster_stop(ls_kcluster *kc, long timeout_ms)
{
    for (uint32_t i = 0; i < kc->n_feeds; i++)
        ls_informer_stop(kc->feeds[i].informer);
    if (!kc->writer)
        return true;
    ls_writer_stats before;
    ls_writer_get_stats(kc->writer, &before);
    int64_t t0 = ls_kutil_now_ms();
    bool clean = ls_writer_drain(kc->writer, timeout_ms);
    ls_writer_stats after;
    ls_writer_get_stats(kc->writer, &after);
    if (!clean) {
        char dropped[32], timeout[32];
        snprintf(dropped, sizeof dropped, "%lu", after.cut_at_stop);
        snprintf(timeout, sizeof timeout, "%ldms", timeout_ms);
        ls_log_error("Stopped before every write was sent: the rest is dropped", "dropped", dropped,
                     "timeout", timeout);
    } else if (after.done > before.done) {
        char sent[32], took[32];
        snprintf(sent, sizeof sent, "%lu", after.done - before.done);
        snprintf(took, sizeof took, "%lldms", (long long)(ls_kutil_now_ms() - t0));
        ls_log_info(2, "Sent the queued writes before stopping", "writes", sent, "duration", took);
    }
    return clean;
}

static void free_store(ls_map *m, kc_kind kind)
{
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            obj_free(kind, m->slots[i].value);
    ls_map_free(m);
}

void ls_kcluster_free(ls_kcluster *kc)
{
    if (!kc)
        return;
    ls_kcluster_stop(kc, 0);
    kc_link_free(kc->link);
    for (uint32_t i = 0; i < kc->n_feeds; i++)
        ls_informer_free(kc->feeds[i].informer);
    ls_writer_free(kc->writer);
    for (int k = 0; k < KC_KINDS; k++) {
        for (uint32_t i = 0; i < kc->incoming[k].len; i++) {
            kc_event *ev = &LS_VEC_AT(&kc->incoming[k], kc_event, i);
            if (ev->obj)
                obj_free((kc_kind)k, ev->obj);
            free(ev->message);
        }
        ls_vec_free(&kc->incoming[k]);
        free_store(&kc->stores[k], (kc_kind)k);
    }
    for (uint32_t i = 0; i < kc->retired.len; i++) {
        kc_retired r = LS_VEC_AT(&kc->retired, kc_retired, i);
        obj_free(r.kind, r.obj);
    }
    ls_vec_free(&kc->retired);
    ls_map_free(&kc->last_failure);
    free_store(&kc->deleted_binding, KC_POD);
    for (uint32_t i = 0; i < kc->custom.len; i++)
        free(LS_VEC_AT(&kc->custom, char *, i));
    ls_vec_free(&kc->custom);
    pthread_cond_destroy(&kc->wake);
    pthread_mutex_destroy(&kc->lock);
    free(kc);
}
