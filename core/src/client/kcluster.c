/*
 * kcluster.c: a real cluster as the scheduler's source, in `run`'s worker
 * process (see kcluster.h, docs/plugins/worker.md).
 *
 * Threads: the channel's reader thread decodes the supervisor's objects and
 * pushes them, and the write outcomes it answers, onto per-kind queues under
 * one lock; the scheduling thread drains (objects, then nodes, then pods, so
 * a pod never arrives before the node it is bound to within one drain) and is
 * the only one that touches the scheduler and the stores. Writes leave as
 * messages (kcluster_link.c) that the supervisor checks and performs.
 */
#include "client/kcluster.h"
#include "base/log_limit.h"

#include "client/claim_check.h"
#include "client/kcluster_link.h"
#include "client/kutil.h"
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

/* What one message of objects is for. */
typedef struct kc_feed {
    ls_kcluster *kc;
    kc_kind kind;
    const char *object_kind;   /* "Service", ..., or "plural.version.group" for KC_OBJECT */
} kc_feed;

/* An erroring plugin's "Error scheduling pod; retrying" lines: one per window. */
#define ERROR_LOG_WINDOW_SECONDS 10.0

struct ls_kcluster {
    /* producer side */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    uint32_t wake_requests;     /* ls_kcluster_wake since the last wait: the next wait returns at once */
    ls_vec incoming[KC_KINDS];     /* kc_event */
    /* scheduling thread side */
    ls_scheduler *sched;
    ls_map stores[KC_KINDS];       /* key -> ls_pod_obj / ls_node_obj / ls_object_obj */
    ls_vec retired;                /* kc_retired */
    ls_map last_failure;           /* pod uid -> hash of the last condition patched (uintptr_t) */
    ls_log_limiter *error_lines;   /* "Error scheduling pod; retrying": one per plugin per window */
    ls_map deleted_binding;        /* pod uid -> ls_pod_obj deleted while assumed, until its binding's outcome */
    kc_link *link;                 /* the supervisor's channel */
    uint32_t next_pod_id, next_node_id;
    uint64_t applied;              /* events applied to the scheduler (ls_kcluster_applied) */
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

/* ---- producer side (the channel's reader thread) */

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

static void on_delete(void *ud, const cJSON *obj)
{
    kc_feed *f = ud;
    ls_str key = json_key(f->kind, obj);
    if (key)
        push(f->kc, f->kind, (kc_event){.type = KC_DELETE, .key = key});
}

/* ---- the supervisor's messages */

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
    ls_map_init(&kc->last_failure);
    kc->error_lines = ls_log_limiter_new(ERROR_LOG_WINDOW_SECONDS);
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

bool ls_kcluster_send_configz(ls_kcluster *kc, const char *configz)
{
    return kc_link_configz(kc->link, configz);
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

void ls_kcluster_serve_whatif(ls_kcluster *kc, void (*fn)(void *ud, const char *id, const char *question), void *ud)
{
    kc_link_set_whatif(kc->link, fn, ud);
}

bool ls_kcluster_whatif_answer(ls_kcluster *kc, const char *id, int status, const char *answer)
{
    return kc_link_whatif_answer(kc->link, id, status, answer);
}

void ls_kcluster_wake(ls_kcluster *kc)
{
    pthread_mutex_lock(&kc->lock);
    kc->wake_requests++;
    pthread_cond_signal(&kc->wake);
    pthread_mutex_unlock(&kc->lock);
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
        kc->applied += batch.len;
        ls_vec_free(&batch);
    }
    free_retired(kc);
}

/* ---- writes */

static void out_event(ls_kcluster *kc, const ls_event_spec *ev)
{
    kc_link_event(kc->link, ev);
}

static void out_pod_status(ls_kcluster *kc, const char *ns, const char *name, const ls_pod_status_patch *p)
{
    kc_link_pod_status(kc->link, ns, name, p);
}

/* The supervisor binds, records Scheduled and answers (link_bind_result). */
static bool source_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    ls_kcluster *kc = ud;
    if (!kc_link_bind(kc->link, ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->uid), ls_str_get(node),
                      ls_str_get(pod->scheduler_name)))
        return ls_errorf(err, "binding pod %s/%s: the supervisor is gone", ls_str_get(pod->ns), ls_str_get(pod->name));
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
    if (!v || !strchr(v + 1, '.'))
        return ls_errorf(err, "cannot write the status of %s %s: not a plural.version.group resource", kind,
                         ls_str_get(obj->name));
    return kc_link_patch_status(kc->link, kind, obj->ns ? ls_str_get(obj->ns) : "", ls_str_get(obj->name), merge_patch,
                                err);
}

/* A pod's status.extendedResourceClaimStatus, the one pod field a plugin may
 * write against an API server: checked here as the supervisor checks it, so
 * that another patch is the plugin's error, not a message that ends the worker. */
static bool patch_pod_status(ls_kcluster *kc, ls_str ns, ls_str name, const char *patch, ls_error *err)
{
    cJSON *body = cJSON_Parse(patch);
    char why[400] = "the patch is not JSON";
    bool shaped = body && ls_claim_check_pod_status_patch(body, why, sizeof why);
    cJSON_Delete(body);
    if (!shaped)
        return ls_errorf(err, "updating Pod %s against an API server: %s", ls_str_get(name), why);
    return kc_link_patch_status(kc->link, "Pod", ns ? ls_str_get(ns) : "", ls_str_get(name), patch, err);
}

/* VolumeBinding's API writes: a merge patch on a PersistentVolume or a claim
 * (the supervisor builds the path and allows only these kinds). The result
 * comes back through the informers, which PreBind waits on. And
 * DynamicResources' patch of a pod's status.extendedResourceClaimStatus,
 * answered (upstream's PreBind fails when it fails). */
static bool source_patch_object(void *ud, ls_str kind, ls_str ns, ls_str name, const char *patch, ls_error *err)
{
    ls_kcluster *kc = ud;
    const char *k = ls_str_get(kind);
    if (strcmp(k, "Pod") == 0)   /* DynamicResources' status.extendedResourceClaimStatus: synchronous */
        return patch_pod_status(kc, ns, name, patch, err);
    if (strcmp(k, "PersistentVolume") != 0 && strcmp(k, "PersistentVolumeClaim") != 0)
        return ls_errorf(err, "updating %s %s: only PersistentVolumes and claims are written", k, ls_str_get(name));
    if (!kc_link_patch_object(kc->link, k, ns ? ls_str_get(ns) : "", ls_str_get(name), patch))
        return ls_errorf(err, "updating %s %s: the supervisor is gone", k, ls_str_get(name));
    return true;
}

/* A plugin's create: DynamicResources' claim for a pod's extended resources
 * (DRAExtendedResource), the one object a plugin may create against an API
 * server. Checked here (client/claim_check.h), created by the supervisor
 * (which checks it again), then put in the store at once, as upstream puts
 * the created claim in its assume cache: the plugin's next write (the
 * claim's status) needs it before the informer brings it. */
static const char *const CLAIMS_KIND = "resourceclaims.v1.resource.k8s.io";

static bool store_created(ls_kcluster *kc, const char *created, char *name_out, size_t name_cap, ls_error *err)
{
    cJSON *json = cJSON_Parse(created);
    const char *name = ls_kutil_meta_str(json, "name");
    if (!name) {
        cJSON_Delete(json);
        return ls_errorf(err, "the API server's answer to the claim's creation has no metadata.name");
    }
    snprintf(name_out, name_cap, "%s", name);
    kc_feed f = {.kc = kc, .kind = KC_OBJECT, .object_kind = CLAIMS_KIND};
    void *obj = decode(&f, json, err);
    cJSON_Delete(json);
    if (!obj)
        return false;
    kc_event ev = {.type = KC_ADD, .obj = obj, .key = obj_key(KC_OBJECT, obj)};
    apply_object(kc, &ev);
    return true;
}

static bool source_create_object(void *ud, const char *json, char *name_out, size_t name_cap, ls_error *err)
{
    ls_kcluster *kc = ud;
    cJSON *obj = cJSON_Parse(json);
    const char *ns = ls_kutil_meta_str(obj, "namespace");
    ls_claim_owner owner;
    char why[400];
    bool ok = ns && ls_claim_check_extended(obj, ns, &owner, why, sizeof why);
    if (!ok) {
        ls_errorf(err, "creating objects from a plugin against an API server: only DynamicResources' claim for a "
                       "pod's extended resources is created: %s",
                  ns ? why : "metadata.namespace: expected the pod's namespace");
        cJSON_Delete(obj);
        return false;
    }
    char *created = NULL;
    ok = kc_link_create_claim(kc->link, ns, json, &created, err) &&
         store_created(kc, created, name_out, name_cap, err);
    free(created);
    cJSON_Delete(obj);
    return ok;
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

/* The plugin an Error names: the first quoted name of the framework's
 * message ('running PreFilter plugin "X": ...', 'running "X" filter plugin:
 * ...'), "" when it names none. */
static const char *plugin_named(const char *message, char *buf, size_t cap)
{
    const char *open = strchr(message, '"');
    const char *close = open ? strchr(open + 1, '"') : NULL;
    size_t n = close ? (size_t)(close - open - 1) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, open ? open + 1 : "", n);
    buf[n] = '\0';
    return buf;
}

/* An attempt that ended in an Error (a plugin raised, ran over budget,
 * returned a bad value or was cut off): an error line at every verbosity, in
 * upstream's form ("Error scheduling pod; retrying" err=... pod=...), with the
 * plugin; at most one per plugin per ERROR_LOG_WINDOW_SECONDS, the next one
 * saying how many were suppressed. */
static void log_error_attempt(ls_kcluster *kc, const char *pod_ref, const char *message)
{
    char plugin[256], held[32];
    plugin_named(message, plugin, sizeof plugin);
    uint64_t suppressed = 0;
    if (!ls_log_limiter_allow(kc->error_lines, plugin, ls_monotonic_seconds(), &suppressed))
        return;
    snprintf(held, sizeof held, "%llu", (unsigned long long)suppressed);
    if (suppressed)
        ls_log_error("Error scheduling pod; retrying", "err", message, "pod", pod_ref, "plugin", plugin,
                     "suppressed", held);
    else
        ls_log_error("Error scheduling pod; retrying", "err", message, "pod", pod_ref, "plugin", plugin);
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
    if (a->code == LS_ERROR) {
        log_error_attempt(kc, ls_log_kobj(ref, sizeof ref, ns, name), message);
        return;
    }
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

/* A victim's deletion the API server refuses comes back as link_preempt_failed. */
static bool source_preempt(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node,
                           const char *message, ls_error *err)
{
    ls_kcluster *kc = ud;
    const char *ns = ls_str_get(victim->ns), *name = ls_str_get(victim->name);
    if (!kc_link_preempt(kc->link, ns, name, ls_str_get(victim->uid), message ? message : "",
                         ls_str_get(preemptor->uid)))
        return ls_errorf(err, "preempting pod %s/%s: the supervisor is gone", ns, name);
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
    if (kc->wake_requests)
        kc->wake_requests = 0;
    else if (empty)
        pthread_cond_timedwait(&kc->wake, &kc->lock, &until);
    pthread_mutex_unlock(&kc->lock);
}

ls_sched_source ls_kcluster_source(ls_kcluster *kc)
{
    return (ls_sched_source){.ud = kc, .bind = source_bind, .on_attempt = source_on_attempt,
                             .patch_status = source_patch_status, .patch_object = source_patch_object,
                             .create_object = source_create_object,
                             .advance_to = source_advance_to, .preempt = source_preempt, .wait = source_wait,
                             .clear_nomination = source_clear_nomination, .nominate = source_nominate};
}

uint64_t ls_kcluster_applied(const ls_kcluster *kc)
{
    return kc->applied;
}

void ls_kcluster_attach(ls_kcluster *kc, ls_scheduler *s)
{
    kc->sched = s;
    drain(kc);
}

/* ---- free */

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
    kc_link_free(kc->link);   /* the reader thread ends first: nothing is pushed after */
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
    ls_log_limiter_free(kc->error_lines);
    free_store(&kc->deleted_binding, KC_POD);
    pthread_cond_destroy(&kc->wake);
    pthread_mutex_destroy(&kc->lock);
    free(kc);
}
