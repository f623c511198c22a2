/*
 * scheduler.c: the scheduler's life and its event handlers. Cluster events
 * update the cache and the object store and become ClusterEvents that move
 * unschedulable pods; the run loop pops pods, runs their cycles (cycle.c),
 * and in a simulation moves the virtual clock to the next backoff expiry,
 * flush, Permit deadline or timeline change when there is nothing to do.
 */
#include "scheduler/scheduler_internal.h"
#include "scheduler/batch.h"
#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- queue callbacks */

static uint64_t virtual_now(void *ud)
{
    return ((ls_scheduler *)ud)->clock_ms;
}

static int queue_pre_enqueue(void *ud, const ls_pod *pod, uint32_t profile, ls_str *plugin, uint32_t *status)
{
    ls_scheduler *s = ud;
    if (!s->cfg.profiles[profile].plugins[LS_EP_PRE_ENQUEUE].len)
        return LS_SUCCESS;
    int code = ls_lua_pre_enqueue(s->lua, profile, pod);
    if (code != LS_SUCCESS) {
        const ls_vec *list = &s->cfg.profiles[profile].plugins[LS_EP_PRE_ENQUEUE];
        int16_t i = s->cycle.status_plugin;
        *plugin = i >= 0 && (uint32_t)i < list->len ? LS_VEC_AT(list, ls_plugin_ref, i).name : 0;
        *status = s->cycle.status;
    }
    return code;
}

static double queue_sort_key(void *ud, const ls_pod *pod, uint32_t profile)
{
    ls_scheduler *s = ud;
    return ls_lua_sort_key(s->lua, profile, pod);
}

static bool queue_less(void *ud, const ls_pod *a, const ls_pod *b, uint32_t profile)
{
    return ls_lua_less(((ls_scheduler *)ud)->lua, profile, a, b);
}

static int queue_hint(void *ud, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    return ls_lua_hint(((ls_scheduler *)ud)->lua, hint, pod, ev);
}

/* ---- construction */

static bool points_of(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    return ls_lua_plugin_points(ud, name, points, err);
}

static bool build_queue(ls_scheduler *s, ls_error *err)
{
    ls_queue_options qo = {
        .initial_backoff_ms = (uint64_t)s->cfg.pod_initial_backoff_seconds * 1000,
        .max_backoff_ms = (uint64_t)s->cfg.pod_max_backoff_seconds * 1000,
        .max_unschedulable_ms = 5 * 60 * 1000,
    };
    ls_queue_callbacks cb = {.ud = s, .now_ms = virtual_now, .pre_enqueue = queue_pre_enqueue,
                             .sort_key = queue_sort_key, .hint = queue_hint,
                             .less = ls_lua_sort_uses_less(s->lua) ? queue_less : NULL};
    s->queue = ls_squeue_new(&qo, &cb);
    ls_event_registration *regs = NULL;
    uint32_t n = 0;
    if (!ls_lua_registrations(s->lua, &regs, &n, err))
        return false;
    ls_extenders_registrations(s->extenders, s->cfg.n_profiles, &regs, &n);
    ls_squeue_set_registrations(s->queue, regs, n);
    free(regs);
    return true;
}

ls_scheduler *ls_scheduler_new(ls_config *cfg, const ls_sched_options *opt, const ls_sched_source *src,
                               ls_error *err)
{
    ls_scheduler *s = ls_xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    s->src = *src;
    if (opt)
        s->opt = *opt;
    s->rng = s->opt.seed;
    s->cycle.owner = s;
    ls_waiting_pods_init(&s->waiting);
    ls_nominator_init(&s->nominator);
    ls_map_init(&s->preempting);
    ls_vec_init(&s->victims, sizeof(const ls_pod *));
    ls_vec_init(&s->deferred, sizeof(deferred_event));
    s->cache = ls_cache_new();
    s->snapshot = ls_snapshot_new();
    s->objects = ls_object_store_new();
    s->cycle.objects = s->objects;
    ls_lua_options lo = {.plugin_path = s->opt.plugin_path, .timeout_ms = s->opt.plugin_timeout_ms};
    ls_lua_options_from_config(&lo, &s->cfg);   /* the file's luasched: section, below the flags */
    s->lua = ls_lua_new(&s->cycle, &lo, err);
    if (!s->lua || !ls_config_expand(&s->cfg, points_of, s->lua, err) ||
        !ls_scheduler_build_extenders(s, &s->cfg, &s->extenders, err) || !ls_lua_build(s->lua, s->cfg.profiles, s->cfg.n_profiles, err) || !build_queue(s, err)) {
        ls_scheduler_free(s);
        return NULL;
    }
    return s;
}

void ls_scheduler_free(ls_scheduler *s)
{
    if (!s)
        return;
    ls_shadow_free(s->shadow);
    ls_batches_free(s->batches);
    ls_lua_free(s->lua);
    ls_extenders_free(s->extenders);
    ls_cache_free(s->cache);
    ls_snapshot_free(s->snapshot);
    ls_object_store_free(s->objects);
    ls_squeue_free(s->queue);
    ls_waiting_pods_free(&s->waiting);
    ls_nominator_free(&s->nominator);
    ls_map_free(&s->preempting);
    ls_file_watch_free(s->watch);
    free(s->config_path);
    ls_vec_free(&s->victims);
    ls_vec_free(&s->deferred);
    ls_config_free(&s->cfg);
    free(s->candidates);
    free(s->feasible);
    free(s->node_status);
    free(s->filter_trace);
    free(s->scores);
    free(s->raw_scores);
    free(s->totals);
    free(s->score_skipped);
    free(s->cycle.prefilter_nodes);
    free(s);
}

/* ---- events */

void ls_scheduler_cluster_event(ls_scheduler *s, const char *resource, uint32_t actions, const char *label,
                                uint8_t type, const void *old_obj, const void *new_obj)
{
    s->last_change_ms = s->clock_ms;
    if (!actions) {
        ls_squeue_note_event(s->queue, label);   /* nothing a plugin can register changed */
        return;
    }
    ls_cluster_event ev = {.resource = ls_intern_cstr(resource), .actions = actions, .label = label,
                           .object_type = type, .old_obj = old_obj, .new_obj = new_obj};
    ls_squeue_move_all(s->queue, &ev);
}

static void apply_node_add(ls_scheduler *s, const ls_node *node)
{
    ls_cache_add_node(s->cache, node);
    ls_scheduler_cluster_event(s, "Node", LS_ACT_ADD, "NodeAdd", LS_OBJ_NODE, NULL, node);
}

static void apply_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node)
{
    ls_cache_update_node(s->cache, old_node, new_node);
    ls_scheduler_cluster_event(s, "Node", ls_node_update_actions(old_node, new_node), "NodeUpdate", LS_OBJ_NODE, old_node,
                  new_node);
}

static void apply_node_delete(ls_scheduler *s, const ls_node *node)
{
    ls_cache_remove_node(s->cache, node);
    ls_scheduler_cluster_event(s, "Node", LS_ACT_DELETE, "NodeDelete", LS_OBJ_NODE, node, NULL);
}

static void log_cache_error(const ls_error *err)
{
    ls_log_error("Scheduler cache", "err", err->msg);
}

static void apply_pod_add(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (pod->node_name) {
        if (!ls_cache_add_pod(s->cache, pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_ADD, "AssignedPodAdd", LS_OBJ_POD, NULL, pod);
        return;
    }
    int32_t profile = ls_config_profile_index(&s->cfg, pod->scheduler_name);
    if (profile < 0) {
        /* Not ours: another scheduler's pod, left alone. */
        if (ls_log_enabled(5)) {
            char who[600];
            ls_log_kobj(who, sizeof who, ls_str_get(pod->ns), ls_str_get(pod->name));
            ls_log_info(5, "Pod is not for this scheduler: no profile for its schedulerName", "pod", who,
                        "schedulerName", ls_str_get(pod->scheduler_name));
        }
        return;
    }
    s->last_change_ms = s->clock_ms;
    /* status.nominatedNodeName counts for Filter from the pod's arrival, gated
     * or not: v1.37 stores a pod's nomination before PreEnqueue runs (#139057),
     * so a gated pod holds its room against lower-priority pods. */
    if (pod->nominated_node_name)
        ls_nominator_add(&s->nominator, pod, pod->nominated_node_name);
    ls_squeue_add(s->queue, pod, (uint32_t)profile);
}

/* An assigned pod appeared or changed: the cache follows (an assumed pod is
 * confirmed), and pods waiting on other pods may now fit. */
static void assigned_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_error err;
    bool known = ls_cache_pod_node(s->cache, new_pod) && !ls_cache_is_assumed(s->cache, new_pod);
    if (known && old_pod != new_pod) {
        if (!ls_cache_update_pod(s->cache, old_pod, new_pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", ls_pod_update_actions(old_pod, new_pod) & ~LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                      "AssignedPodUpdate", LS_OBJ_POD, old_pod, new_pod);
        return;
    }
    if (!known && !ls_cache_add_pod(s->cache, new_pod, &err))
        log_cache_error(&err);
    ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_ADD, "AssignedPodAdd", LS_OBJ_POD, NULL, new_pod);
}

static void apply_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    if (new_pod->node_name) {
        ls_qpod *qp = ls_squeue_find(s->queue, old_pod);
        /* Bound by someone else while queued: no longer ours to schedule. Our own
         * binding's pod is in flight and leaves the queue when its cycle ends. */
        if (qp && qp->where != LS_Q_IN_FLIGHT)
            ls_squeue_delete(s->queue, old_pod);
        ls_nominator_delete(&s->nominator, old_pod);
        assigned_pod_update(s, old_pod, new_pod);
        return;
    }
    s->last_change_ms = s->clock_ms;
    if (ls_squeue_find(s->queue, old_pod))   /* only our pods are nominated */
        ls_nominator_update(&s->nominator, old_pod, new_pod);
    ls_squeue_update(s->queue, old_pod, new_pod);
    /* Its nomination moved or went: the room it held on the old node is free,
     * as if a pod there was deleted (upstream's AssignedPodDelete for oldPod). */
    if (old_pod->nominated_node_name && old_pod->nominated_node_name != new_pod->nominated_node_name)
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, old_pod, NULL);
    /* A pod being bound (assumed, or waiting on Permit) may be updated before
     * its binding shows (a status patch): whoever holds it takes the new object,
     * so the source can free the old one. */
    ls_cache_replace_assumed(s->cache, old_pod, new_pod);
    ls_waiting_pods_replace(&s->waiting, old_pod, new_pod);
}

static void apply_pod_delete(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (ls_cache_pod_node(s->cache, pod) && !ls_cache_is_assumed(s->cache, pod)) {
        if (!ls_cache_remove_pod(s->cache, pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
        return;
    }
    ls_waiting_pods_reject(&s->waiting, pod->id, 0, "pod was deleted while waiting at Permit");
    /* A nominated pod held room on its node for lower-priority pods: its
     * deletion frees it, as upstream's AssignedPodDelete for such a pod. */
    bool held_room = pod->nominated_node_name || ls_nominator_node_of(&s->nominator, pod);
    ls_nominator_delete(&s->nominator, pod);
    ls_qpod *qp = ls_squeue_find(s->queue, pod);
    if (qp && qp->where != LS_Q_IN_FLIGHT)
        ls_squeue_delete(s->queue, pod);
    s->last_change_ms = s->clock_ms;
    if (held_room)
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
}

static void apply_object_add(ls_scheduler *s, const ls_object *obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_put(s->objects, obj);
    ls_scheduler_cluster_event(s, ls_str_get(obj->kind), LS_ACT_ADD, "ObjectAdd", LS_OBJ_OTHER, NULL, obj);
}

static void apply_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_put(s->objects, new_obj);
    ls_scheduler_cluster_event(s, ls_str_get(new_obj->kind), LS_ACT_UPDATE, "ObjectUpdate", LS_OBJ_OTHER, old_obj, new_obj);
}

static void apply_object_delete(ls_scheduler *s, const ls_object *obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_remove(s->objects, obj);
    ls_scheduler_cluster_event(s, ls_str_get(obj->kind), LS_ACT_DELETE, "ObjectDelete", LS_OBJ_OTHER, obj, NULL);
}

/* ---- deferred events
 *
 * A binding or a preemption is asked for by a plugin from Lua (through the
 * FFI); the source answers with events (the pod's update, the victim's
 * delete) that run queueing hints and PreEnqueue, i.e. Lua again. LuaJIT does
 * not allow re-entering the state from a C function called by compiled code,
 * so events that arrive during such a call are kept and applied when it
 * returns. */

static bool defer(ls_scheduler *s, event_kind kind, const void *old_obj, const void *new_obj)
{
    if (!s->defer_events)
        return false;
    deferred_event *e = ls_vec_push(&s->deferred);
    e->kind = kind;
    e->old_obj = old_obj;
    e->new_obj = new_obj;
    return true;
}

/* Activation found again by id: the pod may have left the queue meanwhile. */
static void apply_activate(ls_scheduler *s, uint32_t pod_id)
{
    const ls_pod probe = {.id = pod_id};
    const ls_qpod *qp = ls_squeue_find(s->queue, &probe);
    if (qp)
        ls_squeue_activate(s->queue, qp->pod);
}

static void apply(ls_scheduler *s, const deferred_event *e)
{
    switch (e->kind) {
    case EV_ACTIVATE: apply_activate(s, e->pod_id); break;
    case EV_NODE_ADD: apply_node_add(s, e->new_obj); break;
    case EV_NODE_UPDATE: apply_node_update(s, e->old_obj, e->new_obj); break;
    case EV_NODE_DELETE: apply_node_delete(s, e->old_obj); break;
    case EV_POD_ADD: apply_pod_add(s, e->new_obj); break;
    case EV_POD_UPDATE: apply_pod_update(s, e->old_obj, e->new_obj); break;
    case EV_POD_DELETE: apply_pod_delete(s, e->old_obj); break;
    case EV_OBJECT_ADD: apply_object_add(s, e->new_obj); break;
    case EV_OBJECT_UPDATE: apply_object_update(s, e->old_obj, e->new_obj); break;
    case EV_OBJECT_DELETE: apply_object_delete(s, e->old_obj); break;
    }
}

void ls_scheduler_begin_deferral(ls_scheduler *s)
{
    s->defer_events++;
}

void ls_scheduler_end_deferral(ls_scheduler *s)
{
    s->defer_events--;
}

void ls_scheduler_apply_deferred(ls_scheduler *s)
{
    for (uint32_t i = 0; i < s->deferred.len; i++) {
        deferred_event e = LS_VEC_AT(&s->deferred, deferred_event, i);
        apply(s, &e);
    }
    s->deferred.len = 0;
}

void ls_scheduler_on_node_add(ls_scheduler *s, const ls_node *node)
{
    if (!defer(s, EV_NODE_ADD, NULL, node))
        apply_node_add(s, node);
}

void ls_scheduler_on_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node)
{
    if (!defer(s, EV_NODE_UPDATE, old_node, new_node))
        apply_node_update(s, old_node, new_node);
}

void ls_scheduler_on_node_delete(ls_scheduler *s, const ls_node *node)
{
    if (!defer(s, EV_NODE_DELETE, node, NULL))
        apply_node_delete(s, node);
}

void ls_scheduler_on_pod_add(ls_scheduler *s, const ls_pod *pod)
{
    if (!defer(s, EV_POD_ADD, NULL, pod))
        apply_pod_add(s, pod);
}

void ls_scheduler_on_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    if (!defer(s, EV_POD_UPDATE, old_pod, new_pod))
        apply_pod_update(s, old_pod, new_pod);
}

void ls_scheduler_on_pod_delete(ls_scheduler *s, const ls_pod *pod)
{
    if (!defer(s, EV_POD_DELETE, pod, NULL))
        apply_pod_delete(s, pod);
}

/* A deferred object event still updates the store at once: a plugin that
 * wrote through the API (VolumeBinding's PreBind) reads the answer of the
 * embedded cluster's controllers in the same call; the queue hears of it when
 * the deferred event is applied (putting the same object again is a no-op). */
void ls_scheduler_on_object_add(ls_scheduler *s, const ls_object *obj)
{
    if (defer(s, EV_OBJECT_ADD, NULL, obj))
        ls_object_store_put(s->objects, obj);
    else
        apply_object_add(s, obj);
}

void ls_scheduler_on_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj)
{
    if (defer(s, EV_OBJECT_UPDATE, old_obj, new_obj))
        ls_object_store_put(s->objects, new_obj);
    else
        apply_object_update(s, old_obj, new_obj);
}

void ls_scheduler_on_object_delete(ls_scheduler *s, const ls_object *obj)
{
    if (defer(s, EV_OBJECT_DELETE, obj, NULL))
        ls_object_store_remove(s->objects, obj);
    else
        apply_object_delete(s, obj);
}

/* ---- the loop */

bool ls_scheduler_schedule_one(ls_scheduler *s)
{
    ls_qpod *qp = ls_squeue_pop(s->queue);
    if (!qp)
        return false;
    if (qp->pod->deletion_ns) {
        ls_scheduler_skip_deleting(s, qp);
        return true;
    }
    if (s->metrics.registry)
        s->attempt_start_ns = ls_sched_metrics_clock_ns();
    s->cycles_started++;
    const ls_pod *pod = qp->pod;   /* qp may be gone after its cycle; the pod object is not */
    ls_scheduler_schedule_pod(s, qp);
    if (s->shadow)
        ls_shadow_after_attempt(s, pod);
    ls_scheduler_apply_deferred(s);
    ls_scheduler_issue_preemptions(s);
    return true;
}

/* The earliest time something timed will happen; false when nothing will. */
static bool next_wakeup(ls_scheduler *s, uint64_t *at)
{
    bool any = false;
    uint64_t t;
    *at = UINT64_MAX;
    if (s->src.next_change_ms && s->src.next_change_ms(s->src.ud, &t) && t < *at) {
        *at = t;
        any = true;
    }
    if (ls_waiting_pods_next_deadline(&s->waiting, &t) && t < *at) {
        *at = t;
        any = true;
    }
    /* Retries only matter while the cluster changed since the pods last tried
     * (or a timeline or waiting pod will change it): otherwise the run is done. */
    if ((any || !ls_squeue_settled(s->queue, s->last_change_ms)) && ls_squeue_next_wakeup(s->queue, &t) &&
        t < *at) {
        *at = t;
        any = true;
    }
    return any;
}

uint64_t ls_scheduler_run(ls_scheduler *s)
{
    uint64_t n = 0;
    for (;;) {
        while (ls_scheduler_schedule_one(s)) {
            n++;
            ls_scheduler_resolve_waiting(s);
        }
        uint64_t at;
        if (!next_wakeup(s, &at))
            break;
        if (at > s->clock_ms)
            s->clock_ms = at;
        if (s->src.advance_to)
            s->src.advance_to(s->src.ud, s->clock_ms);
        ls_squeue_flush(s->queue);
        ls_waiting_pods_expire(&s->waiting, s->clock_ms);
        ls_scheduler_resolve_waiting(s);
    }
    return n;
}

/* ---- the real-time loop */

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void advance_clock(ls_scheduler *s, uint64_t now)
{
    if (s->metrics.registry && now >= s->metrics.published_ms + 250) {
        s->metrics.published_ms = now;
        ls_scheduler_publish_metrics(s);
    }
    if (now > s->clock_ms)
        s->clock_ms = now;
    if (s->src.advance_to)
        s->src.advance_to(s->src.ud, s->clock_ms);
    ls_squeue_flush(s->queue);
    ls_waiting_pods_expire(&s->waiting, s->clock_ms);
    ls_scheduler_resolve_waiting(s);
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t ls_scheduler_run_realtime(ls_scheduler *s, const ls_run_control *ctl)
{
    enum { IDLE_POLL_MS = 20 };
    uint64_t n = 0, start = wall_ms() - s->clock_ms;
    while (!(ctl->stop && *ctl->stop)) {
        if (ctl->progress)
            ctl->progress(ctl->progress_ud, monotonic_ms(), ls_squeue_size(s->queue));
        bool forced = ctl->reload && *ctl->reload;
        if (forced)
            *ctl->reload = 0;
        ls_scheduler_reload_if_changed(s, forced);
        ls_shadow_reload_if_changed(s->shadow, forced);
        advance_clock(s, wall_ms() - start);
        if (ls_scheduler_schedule_one(s)) {
            n++;
            ls_scheduler_resolve_waiting(s);
            continue;
        }
        uint64_t at;
        if (!next_wakeup(s, &at) && !ctl->hold)
            break;
        uint64_t now = wall_ms() - start;
        uint64_t wait = at > now ? at - now : 0;
        if (wait > IDLE_POLL_MS || !next_wakeup(s, &at))
            wait = IDLE_POLL_MS;
        if (s->src.wait) {
            s->src.wait(s->src.ud, wait);
            continue;
        }
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return n;
}

/* ---- metrics */

static void queue_incoming(void *ud, ls_qwhere queue, const char *event)
{
    ls_sched_metrics_incoming(&((ls_scheduler *)ud)->metrics, queue, event);
}

void ls_scheduler_set_metrics(ls_scheduler *s, struct ls_metrics *registry)
{
    ls_sched_metrics_attach(&s->metrics, registry);
    if (s->shadow)
        ls_shadow_attach_metrics(s->shadow, registry);
    ls_squeue_set_incoming(s->queue, registry ? queue_incoming : NULL);
    ls_scheduler_publish_metrics(s);
}

void ls_scheduler_publish_metrics(ls_scheduler *s)
{
    if (!s->metrics.registry)
        return;
    ls_queue_gauges q = ls_scheduler_queue_gauges(s);
    ls_fault_counts f = ls_scheduler_faults(s);
    ls_sched_gauges g = {.active = q.active, .backoff = q.backoff, .unschedulable = q.unschedulable,
                         .gated = q.gated, .nodes = ls_cache_node_count(s->cache),
                         .pods = ls_cache_pod_count(s->cache), .assumed_pods = ls_cache_assumed_count(s->cache),
                         .budget_overruns = f.budget_overruns, .lua_restarts = f.lua_restarts,
                         .error_attempts = f.error_attempts, .hint_errors = f.hint_errors};
    ls_sched_metrics_publish(&s->metrics, &g);
    for (uint32_t i = 0; i < s->cfg.n_profiles; i++)   /* at start and after a reload */
        ls_sched_metrics_profile(&s->metrics, ls_str_get(s->cfg.profiles[i].scheduler_name));
    for (uint32_t i = 0; i < s->cfg.n_profiles && i < ls_lua_state_count(s->lua); i++)
        ls_sched_metrics_lua_memory(&s->metrics, ls_str_get(s->cfg.profiles[i].scheduler_name),
                                    ls_lua_profile_memory(s->lua, i));
}

/* ---- introspection */

const ls_config *ls_scheduler_config(const ls_scheduler *s)
{
    return &s->cfg;
}

const ls_profile *ls_scheduler_profile(const ls_scheduler *s, uint32_t i)
{
    return i < s->cfg.n_profiles ? &s->cfg.profiles[i] : NULL;
}

const ls_cache *ls_scheduler_cache(const ls_scheduler *s)
{
    return s->cache;
}

uint32_t ls_scheduler_custom_resources(const ls_scheduler *s, const char **out, uint32_t cap)
{
    uint32_t n_regs, n = 0;
    const ls_event_registration *regs = ls_squeue_registrations(s->queue, &n_regs);
    for (uint32_t i = 0; i < n_regs; i++) {
        const char *name = ls_str_get(regs[i].resource);
        if (!strchr(name, '.'))
            continue;
        bool seen = false;
        for (uint32_t k = 0; k < n && !seen; k++)
            seen = strcmp(out[k], name) == 0;
        if (!seen && n < cap)
            out[n++] = name;
    }
    return n;
}

uint32_t ls_scheduler_custom_uses(const ls_scheduler *s, ls_custom_use *out, uint32_t cap)
{
    uint32_t n_regs, n = 0;
    const ls_event_registration *regs = ls_squeue_registrations(s->queue, &n_regs);
    for (uint32_t i = 0; i < n_regs; i++) {
        const char *resource = ls_str_get(regs[i].resource), *plugin = ls_str_get(regs[i].plugin);
        if (!strchr(resource, '.'))
            continue;
        bool seen = false;
        for (uint32_t k = 0; k < n && !seen; k++)
            seen = out[k].profile == regs[i].profile && out[k].plugin == plugin && out[k].resource == resource;
        if (!seen && n < cap)
            out[n++] = (ls_custom_use){regs[i].profile, plugin, resource};
    }
    return n;
}

uint64_t ls_scheduler_cycles(const ls_scheduler *s)
{
    return s->cycles_started;
}

uint64_t ls_scheduler_snapshot_epoch(const ls_scheduler *s)
{
    return s->snapshot_epoch;
}

void ls_scheduler_refresh_snapshot(ls_scheduler *s)
{
    ls_cache_update_snapshot(s->cache, s->snapshot);
    s->snapshot_epoch++;
}

bool ls_scheduler_holds_event_objects(const ls_scheduler *s)
{
    return ls_squeue_in_flight_events(s->queue) > 0;
}

uint32_t ls_scheduler_pending(const ls_scheduler *s)
{
    return ls_squeue_size(s->queue);
}

uint64_t ls_scheduler_now_ms(const ls_scheduler *s)
{
    return s->clock_ms;
}

size_t ls_scheduler_lua_memory(const ls_scheduler *s)
{
    return ls_lua_memory(s->lua);
}

ls_pod_queue_state ls_scheduler_pod_state(const ls_scheduler *s, const ls_pod *pod)
{
    ls_pod_queue_state st = {0};
    const ls_qpod *qp = ls_squeue_find(s->queue, pod);
    if (!qp)
        return st;
    st.known = true;
    st.gated = qp->gated;
    st.gate_message = qp->gated ? ls_status_get(qp->gate_status)->message : NULL;
    st.pre_enqueue_error = qp->pre_enqueue_errors ? ls_status_get(qp->gate_status)->message : NULL;
    st.attempts = qp->attempts;
    return st;
}

ls_fault_counts ls_scheduler_faults(const ls_scheduler *s)
{
    return (ls_fault_counts){s->error_attempts, s->budget_overruns_before + ls_lua_budget_overruns(s->lua),
                             s->restarts_before + ls_lua_restarts(s->lua),
                             s->hint_errors_before + ls_lua_hint_errors(s->lua)};
}

ls_event_stats ls_scheduler_event_stats(const ls_scheduler *s)
{
    return ls_squeue_event_counts(s->queue);
}

uint32_t ls_scheduler_event_stats_by_label(const ls_scheduler *s, ls_event_label_stats *out, uint32_t cap)
{
    uint32_t n = ls_squeue_event_counts_by_label(s->queue, out, cap);
    return n < cap ? n : cap;
}

ls_queue_gauges ls_scheduler_queue_gauges(const ls_scheduler *s)
{
    ls_queue_counts c = ls_squeue_counts(s->queue);
    return (ls_queue_gauges){c.active, c.backoff, c.unschedulable, c.gated};
}
