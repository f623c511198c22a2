/*
 * scheduler.c: schedule_one and the event handlers. One cycle per pod:
 * snapshot, PreFilter, Filter (over a rotating window of the node list, as
 * many nodes as upstream's sampling rule asks), PostFilter on failure,
 * PreScore/Score/NormalizeScore, host selection, assume, Reserve, Permit, and
 * the binding cycle. Failures get upstream's FitError message.
 */
#include "luasched/scheduler.h"
#include "framework/fit_error.h"
#include "framework/waiting_pods.h"
#include "lua/runtime.h"
#include "luasched/map.h"
#include "queue/queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending_pod {
    const ls_pod *pod;
    uint32_t profile;
    bool queued;
} pending_pod;

struct ls_scheduler {
    ls_cycle cycle;
    ls_config cfg;
    ls_sched_source src;
    ls_sched_options opt;
    ls_lua *lua;
    ls_cache *cache;
    ls_snapshot *snapshot;
    ls_object_store *objects;
    ls_queue active;
    ls_map pending;            /* pod id + 1 -> pending_pod */
    ls_waiting_pods waiting;
    uint64_t clock_ms;         /* virtual time: advances only to expire waiting pods when idle */
    uint64_t rng;
    uint32_t next_start_index;
    uint64_t seq;
    /* per-cycle buffers, grown to the node count */
    uint32_t buf_nodes;
    const ls_node_info **candidates;
    const ls_node_info **feasible;
    ls_node_status *node_status;
    uint32_t *filter_trace;
    int64_t *scores, *raw_scores, *totals;
    uint8_t *score_skipped;
    uint32_t scores_cap, trace_cap;
};

/* ---- random numbers (splitmix64): the seed makes tie-breaks reproducible */

static uint64_t next_random(ls_scheduler *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- construction */

static bool points_of(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    return ls_lua_plugin_points(ud, name, points, err);
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
    ls_queue_init(&s->active);
    ls_map_init(&s->pending);
    ls_waiting_pods_init(&s->waiting);
    s->cache = ls_cache_new();
    s->snapshot = ls_snapshot_new();
    s->objects = ls_object_store_new();
    s->cycle.objects = s->objects;
    ls_lua_options lo = {.plugin_path = s->opt.plugin_path, .timeout_ms = s->opt.plugin_timeout_ms};
    s->lua = ls_lua_new(&s->cycle, &lo, err);
    if (!s->lua || !ls_config_expand(&s->cfg, points_of, s->lua, err) ||
        !ls_lua_build(s->lua, s->cfg.profiles, s->cfg.n_profiles, err)) {
        ls_scheduler_free(s);
        return NULL;
    }
    return s;
}

void ls_scheduler_free(ls_scheduler *s)
{
    if (!s)
        return;
    ls_lua_free(s->lua);
    ls_cache_free(s->cache);
    ls_snapshot_free(s->snapshot);
    ls_object_store_free(s->objects);
    ls_queue_free(&s->active);
    ls_waiting_pods_free(&s->waiting);
    for (uint32_t i = 0; i < s->pending.cap; i++)
        if (s->pending.slots[i].key)
            free(s->pending.slots[i].value);
    ls_map_free(&s->pending);
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

void ls_scheduler_on_node_add(ls_scheduler *s, const ls_node *node)
{
    ls_cache_add_node(s->cache, node);
}

void ls_scheduler_on_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node)
{
    ls_cache_update_node(s->cache, old_node, new_node);
}

void ls_scheduler_on_node_delete(ls_scheduler *s, const ls_node *node)
{
    ls_cache_remove_node(s->cache, node);
}

static void enqueue(ls_scheduler *s, pending_pod *pp)
{
    ls_queue_item item = {
        .pod_id = pp->pod->id,
        .key = ls_lua_sort_key(s->lua, pp->profile, pp->pod),
        .timestamp_ns = pp->pod->creation_ns,
        .seq = pp->pod->seq ? pp->pod->seq : ++s->seq,
    };
    ls_queue_push(&s->active, item);
    pp->queued = true;
}

void ls_scheduler_on_pod_add(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (pod->node_name) {
        if (!ls_cache_add_pod(s->cache, pod, &err))
            fprintf(stderr, "luasched: cache: %s\n", err.msg);
        return;
    }
    int32_t profile = ls_config_profile_index(&s->cfg, pod->scheduler_name);
    if (profile < 0)
        return;   /* not ours: another scheduler's pod */
    pending_pod *pp = ls_xcalloc(1, sizeof *pp);
    pp->pod = pod;
    pp->profile = (uint32_t)profile;
    ls_map_put(&s->pending, pod->id + 1, pp);
    enqueue(s, pp);
}

static void drop_pending(ls_scheduler *s, const ls_pod *pod)
{
    pending_pod *pp = ls_map_remove(&s->pending, pod->id + 1);
    if (!pp)
        return;
    if (pp->queued)
        ls_queue_remove(&s->active, pod->id);
    free(pp);
}

void ls_scheduler_on_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_error err;
    if (new_pod->node_name) {
        drop_pending(s, old_pod);
        bool ok = ls_cache_pod_node(s->cache, new_pod) && !ls_cache_is_assumed(s->cache, new_pod)
                      ? ls_cache_update_pod(s->cache, old_pod, new_pod, &err)
                      : ls_cache_add_pod(s->cache, new_pod, &err);
        if (!ok)
            fprintf(stderr, "luasched: cache: %s\n", err.msg);
        return;
    }
    pending_pod *pp = ls_map_get(&s->pending, old_pod->id + 1);
    if (pp)
        pp->pod = new_pod;
}

void ls_scheduler_on_pod_delete(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (ls_cache_pod_node(s->cache, pod)) {
        if (!ls_cache_remove_pod(s->cache, pod, &err))
            fprintf(stderr, "luasched: cache: %s\n", err.msg);
        return;
    }
    drop_pending(s, pod);
}

void ls_scheduler_on_object_add(ls_scheduler *s, const ls_object *obj)
{
    ls_object_store_put(s->objects, obj);
}

void ls_scheduler_on_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj)
{
    (void)old_obj;
    ls_object_store_put(s->objects, new_obj);
}

void ls_scheduler_on_object_delete(ls_scheduler *s, const ls_object *obj)
{
    ls_object_store_remove(s->objects, obj);
}

/* ---- per-cycle buffers */

static void ensure_buffers(ls_scheduler *s, uint32_t num_nodes, uint32_t num_filter, uint32_t num_score)
{
    if (num_nodes > s->buf_nodes) {
        s->buf_nodes = num_nodes;
        s->candidates = ls_xrealloc(s->candidates, num_nodes * sizeof *s->candidates);
        s->feasible = ls_xrealloc(s->feasible, num_nodes * sizeof *s->feasible);
        s->node_status = ls_xrealloc(s->node_status, num_nodes * sizeof *s->node_status);
        s->totals = ls_xrealloc(s->totals, num_nodes * sizeof *s->totals);
    }
    uint32_t need = num_nodes * (num_score ? num_score : 1);
    if (need > s->scores_cap) {
        s->scores_cap = need;
        s->scores = ls_xrealloc(s->scores, need * sizeof *s->scores);
        s->raw_scores = ls_xrealloc(s->raw_scores, need * sizeof *s->raw_scores);
    }
    s->score_skipped = ls_xrealloc(s->score_skipped, num_score + 1);
    if (s->opt.trace && num_nodes * num_filter > s->trace_cap) {
        s->trace_cap = num_nodes * num_filter;
        s->filter_trace = ls_xrealloc(s->filter_trace, s->trace_cap * sizeof *s->filter_trace);
    }
}

void ls_cycle_prefilter_reserve(ls_cycle *cycle, uint32_t n)
{
    ls_critical_enter();
    if (n > cycle->prefilter_cap) {
        cycle->prefilter_cap = n;
        cycle->prefilter_nodes = ls_xrealloc(cycle->prefilter_nodes, n * sizeof *cycle->prefilter_nodes);
    }
    ls_critical_leave();
}

static int bind_locked(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen);

int ls_cycle_bind(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen)
{
    if (!cycle) {
        snprintf(errbuf, errlen, "no scheduling cycle is running");
        return -1;
    }
    ls_critical_enter();
    int rc = bind_locked(cycle, node_name, errbuf, errlen);
    ls_critical_leave();
    return rc;
}

static int bind_locked(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen)
{
    ls_scheduler *s = cycle->owner;
    if (!s || !s->src.bind) {
        snprintf(errbuf, errlen, "no cluster is attached to bind pod %s/%s", ls_str_get(cycle->pod->ns),
                 ls_str_get(cycle->pod->name));
        return -1;
    }
    ls_error err;
    if (!s->src.bind(s->src.ud, cycle->pod, node_name, &err)) {
        snprintf(errbuf, errlen, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- the scheduling cycle */

static void report(ls_scheduler *s, pending_pod *pp, ls_str node, uint8_t code, const char *message)
{
    ls_attempt a = {
        .pod = pp->pod,
        .profile = pp->profile,
        .node = node,
        .code = code,
        .message = message,
        .reason = node ? NULL : (ls_code_is_rejected(code) ? "Unschedulable" : "SchedulerError"),
        .num_all_nodes = s->cycle.num_all_nodes,
        .num_feasible = s->cycle.num_feasible,
        .total_scores = s->opt.trace ? s->totals : NULL,
    };
    if (s->src.on_attempt)
        s->src.on_attempt(s->src.ud, &a, &s->cycle, s);
}

static void fail(ls_scheduler *s, pending_pod *pp, uint8_t code, const char *message)
{
    report(s, pp, 0, code, message);
}

static void fail_with_status(ls_scheduler *s, pending_pod *pp)
{
    const ls_status_info *st = ls_status_get(s->cycle.status);
    fail(s, pp, s->cycle.status_code, st->message);
}

static const ls_profile *profile_of(const ls_scheduler *s, const pending_pod *pp)
{
    return &s->cfg.profiles[pp->profile];
}

static uint32_t select_candidates(ls_scheduler *s)
{
    ls_cycle *c = &s->cycle;
    if (!c->prefilter_restricts) {
        c->candidates = c->all_nodes;
        return c->num_all_nodes;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->num_all_nodes; i++) {
        const ls_node_info *ni = c->all_nodes[i];
        for (uint32_t k = 0; k < c->num_prefilter_nodes; k++) {
            if (c->prefilter_nodes[k] == ni->node->name) {
                s->candidates[n++] = ni;
                break;
            }
        }
    }
    c->candidates = s->candidates;
    return n;
}

static bool run_filters(ls_scheduler *s, pending_pod *pp)
{
    ls_cycle *c = &s->cycle;
    const ls_profile *prof = profile_of(s, pp);
    c->num_candidates = select_candidates(s);
    int32_t pct = prof->percentage_of_nodes_to_score >= 0 ? prof->percentage_of_nodes_to_score
                                                          : s->cfg.percentage_of_nodes_to_score;
    c->num_to_find = ls_num_feasible_nodes_to_find(pct, c->num_candidates, prof->plugins[LS_EP_SCORE].len > 0);
    c->start = c->num_candidates ? s->next_start_index % c->num_candidates : 0;
    c->num_feasible = c->num_processed = 0;
    if (c->trace)
        memset(c->filter_trace, 0, (size_t)c->num_all_nodes * c->num_filter_plugins * sizeof *c->filter_trace);
    if (c->num_candidates && ls_lua_run(s->lua, LS_CALL_FILTER, pp->profile) != LS_SUCCESS)
        return false;
    if (c->num_all_nodes)
        s->next_start_index = (s->next_start_index + c->num_processed) % c->num_all_nodes;
    return true;
}

static bool check_and_total_scores(ls_scheduler *s, pending_pod *pp)
{
    ls_cycle *c = &s->cycle;
    const ls_vec *plugins = &profile_of(s, pp)->plugins[LS_EP_SCORE];
    uint32_t n = c->num_feasible;
    for (uint32_t i = 0; i < n; i++)
        s->totals[i] = plugins->len ? 0 : 1;
    for (uint32_t p = 0; p < plugins->len; p++) {
        const ls_plugin_ref *ref = &LS_VEC_AT(plugins, ls_plugin_ref, p);
        for (uint32_t i = 0; i < n; i++) {
            int64_t v = c->scores[p * n + i];
            if (v < LS_MIN_NODE_SCORE || v > LS_MAX_NODE_SCORE) {
                char msg[400];
                int len = snprintf(msg, sizeof msg,
                                   "applying score defaultWeights on Score plugins: "
                                   "plugin \"%s\" returns an invalid score %lld, it should in the range of "
                                   "[%d, %d] after normalizing",
                                   ls_str_get(ref->name), (long long)v, LS_MIN_NODE_SCORE, LS_MAX_NODE_SCORE);
                if (len >= (int)sizeof msg)
                    len = (int)sizeof msg - 1;   /* a very long plugin name: truncated, not over-read */
                c->status = ls_status_register(LS_ERROR, msg, (size_t)len);
                c->status_code = LS_ERROR;
                return false;
            }
            s->totals[i] += v * ref->weight;
        }
    }
    return true;
}

static const ls_node_info *select_host(ls_scheduler *s)
{
    ls_cycle *c = &s->cycle;
    const ls_node_info *best = c->feasible[0];
    int64_t best_score = s->totals[0];
    uint64_t ties = 1;
    for (uint32_t i = 1; i < c->num_feasible; i++) {
        if (s->totals[i] > best_score) {
            best = c->feasible[i];
            best_score = s->totals[i];
            ties = 1;
        } else if (s->totals[i] == best_score && next_random(s) % ++ties == 0) {
            best = c->feasible[i];
        }
    }
    return best;
}

static bool prioritize(ls_scheduler *s, pending_pod *pp, const ls_node_info **host)
{
    ls_cycle *c = &s->cycle;
    if (c->num_feasible == 1) {
        s->totals[0] = 0;
        *host = c->feasible[0];
        return true;
    }
    if (ls_lua_run(s->lua, LS_CALL_PRE_SCORE, pp->profile) != LS_SUCCESS ||
        ls_lua_run(s->lua, LS_CALL_SCORE, pp->profile) != LS_SUCCESS || !check_and_total_scores(s, pp))
        return false;
    *host = select_host(s);
    return true;
}

static void unreserve_and_forget(ls_scheduler *s, pending_pod *pp)
{
    ls_error err;
    ls_lua_run(s->lua, LS_CALL_UNRESERVE, pp->profile);
    if (!ls_cache_forget_pod(s->cache, pp->pod, &err))
        fprintf(stderr, "luasched: cache: %s\n", err.msg);
}

/* A rejection by Reserve or Permit is a FitError on the one chosen node
 * ("0/1 nodes are available: 1 <reason>."); later failures keep their message. */
static void fail_after_assume(ls_scheduler *s, pending_pod *pp, bool scheduling_cycle)
{
    ls_cycle *c = &s->cycle;
    uint8_t code = c->status_code ? c->status_code : LS_ERROR;
    if (!scheduling_cycle || !ls_code_is_rejected(code)) {
        fail(s, pp, code, ls_status_get(c->status)->message);
        return;
    }
    char *msg = ls_fit_error_single(c->status);
    fail(s, pp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

/* PreBind, Bind and PostBind. In this single-threaded loop the binding
 * cycle runs right after the scheduling cycle (or when a waiting pod is let go). */
static void binding_cycle(ls_scheduler *s, pending_pod *pp, ls_str node)
{
    int code = ls_lua_run(s->lua, LS_CALL_PRE_BIND, pp->profile);
    if (code == LS_SUCCESS) {
        code = ls_lua_run(s->lua, LS_CALL_BIND, pp->profile);
        ls_cache_finish_binding(s->cache, pp->pod);
    }
    if (code != LS_SUCCESS) {
        unreserve_and_forget(s, pp);
        fail_after_assume(s, pp, false);
        return;
    }
    ls_lua_run(s->lua, LS_CALL_POST_BIND, pp->profile);
    report(s, pp, node, LS_SUCCESS, NULL);
}

/* Reserve, Permit and the binding cycle. In this single-threaded loop the
 * binding cycle runs right after the scheduling cycle. */
static void assume_and_bind(ls_scheduler *s, pending_pod *pp, const ls_node_info *host)
{
    ls_cycle *c = &s->cycle;
    ls_error err;
    ls_str node = host->node->name;
    c->selected_node = node;
    if (!ls_cache_assume_pod(s->cache, pp->pod, node, &err)) {
        c->status = ls_status_register(LS_ERROR, err.msg, strlen(err.msg));
        fail(s, pp, LS_ERROR, err.msg);
        return;
    }
    int code = ls_lua_run(s->lua, LS_CALL_RESERVE, pp->profile);
    if (code == LS_SUCCESS)
        code = ls_lua_run(s->lua, LS_CALL_PERMIT, pp->profile);
    if (code == LS_WAIT) {
        /* The binding cycle goes on once every waiting plugin allowed the pod. */
        ls_waiting_pods_add(&s->waiting, pp->pod, pp->profile, c, s->clock_ms);
        ls_lua_park(s->lua, pp->pod->id);
        return;
    }
    if (code != LS_SUCCESS) {
        unreserve_and_forget(s, pp);
        fail_after_assume(s, pp, true);
        return;
    }
    binding_cycle(s, pp, node);
}

static void begin_cycle(ls_scheduler *s, pending_pod *pp)
{
    ls_cycle *c = &s->cycle;
    const ls_profile *prof = profile_of(s, pp);
    ls_cache_update_snapshot(s->cache, s->snapshot);
    c->pod = pp->pod;
    c->profile = pp->profile;
    c->snapshot = s->snapshot;
    c->num_all_nodes = ls_snapshot_num_nodes(s->snapshot);
    c->all_nodes = ls_snapshot_list(s->snapshot);
    c->num_filter_plugins = prof->plugins[LS_EP_FILTER].len;
    c->num_score_plugins = prof->plugins[LS_EP_SCORE].len;
    ensure_buffers(s, c->num_all_nodes, c->num_filter_plugins, c->num_score_plugins);
    c->feasible = s->feasible;
    c->node_status = s->node_status;
    c->scores = s->scores;
    c->raw_scores = s->raw_scores;
    c->score_skipped = s->score_skipped;
    c->trace = s->opt.trace;
    c->filter_trace = s->filter_trace;
    c->num_feasible = c->num_processed = 0;
    c->prefilter_restricts = 0;
    c->prefilter_absent_status = 0;
    c->selected_node = 0;
}

/* A FitError: PostFilter (preemption) runs if the profile has any, and its
 * message follows the nodes' one. The cycle ends Unschedulable either way. */
static void fit_failure(ls_scheduler *s, pending_pod *pp, char *msg)
{
    ls_cycle *c = &s->cycle;
    c->nominated_node = 0;
    if (profile_of(s, pp)->plugins[LS_EP_POST_FILTER].len) {
        int code = ls_lua_run(s->lua, LS_CALL_POST_FILTER, pp->profile);
        if (code == LS_ERROR) {
            free(msg);
            fail_with_status(s, pp);
            return;
        }
        const char *post = c->status ? ls_status_get(c->status)->message : "";
        if (*post) {
            size_t n = strlen(msg) + strlen(post) + 2;
            char *joined = ls_xmalloc(n);
            snprintf(joined, n, "%s %s", msg, post);
            free(msg);
            msg = joined;
        }
    }
    fail(s, pp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

static void schedule_pod(ls_scheduler *s, pending_pod *pp)
{
    ls_cycle *c = &s->cycle;
    begin_cycle(s, pp);
    if (c->num_all_nodes == 0) {
        fail(s, pp, LS_UNRESOLVABLE, "no nodes available to schedule pods");
        return;
    }
    int code = ls_lua_run(s->lua, LS_CALL_PRE_FILTER, pp->profile);
    if (code != LS_SUCCESS) {
        if (code == LS_ERROR) {
            fail_with_status(s, pp);
            return;
        }
        fit_failure(s, pp, ls_fit_error_prefilter(c, ls_status_get(c->status)->message));
        return;
    }
    if (!run_filters(s, pp)) {
        fail_with_status(s, pp);
        return;
    }
    if (c->num_feasible == 0) {
        fit_failure(s, pp, ls_fit_error_filter(c));
        return;
    }
    const ls_node_info *host = NULL;
    if (!prioritize(s, pp, &host)) {
        fail_with_status(s, pp);
        return;
    }
    assume_and_bind(s, pp, host);
}

bool ls_scheduler_schedule_one(ls_scheduler *s)
{
    ls_queue_item item;
    if (!ls_queue_pop(&s->active, &item))
        return false;
    pending_pod *pp = ls_map_get(&s->pending, item.pod_id + 1);
    if (!pp)
        return true;
    pp->queued = false;
    if (pp->pod->deletion_ns) {
        drop_pending(s, pp->pod);
        return true;   /* skip schedule deleting pod */
    }
    /* The binding's update event removes the pod from the pending set during
     * the cycle, so the cycle works on a copy. An unschedulable pod stays
     * pending with its recorded reason. */
    pending_pod current = *pp;
    schedule_pod(s, &current);
    return true;
}

/* Binding cycles of waiting pods that were allowed, failures of rejected ones. */
static void resolve_waiting(ls_scheduler *s)
{
    ls_waiting_pod *wp;
    while ((wp = ls_waiting_pods_take_resolved(&s->waiting))) {
        pending_pod pp = {.pod = wp->pod, .profile = wp->profile};
        ls_cycle *c = &s->cycle;
        begin_cycle(s, &pp);
        c->selected_node = wp->node;
        ls_lua_resume(s->lua, wp->pod->id);
        if (wp->rejected) {
            unreserve_and_forget(s, &pp);
            fail(s, &pp, LS_UNSCHEDULABLE, wp->message);
        } else {
            binding_cycle(s, &pp, wp->node);
        }
        free(wp);
    }
}

uint64_t ls_scheduler_run(ls_scheduler *s)
{
    uint64_t n = 0;
    for (;;) {
        while (ls_scheduler_schedule_one(s)) {
            n++;
            resolve_waiting(s);
        }
        /* Idle with pods waiting on Permit: time moves on to the next deadline. */
        uint64_t deadline;
        if (!ls_waiting_pods_next_deadline(&s->waiting, &deadline))
            break;
        if (deadline > s->clock_ms)
            s->clock_ms = deadline;
        ls_waiting_pods_expire(&s->waiting, s->clock_ms);
        resolve_waiting(s);
    }
    return n;
}

uint32_t ls_cycle_num_waiting(const ls_cycle *cycle)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? ls_waiting_pods_count(&s->waiting) : 0;
}

const ls_pod *ls_cycle_waiting_pod(const ls_cycle *cycle, uint32_t i)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    const ls_waiting_pod *wp = s ? ls_waiting_pods_at(&s->waiting, i) : NULL;
    return wp ? wp->pod : NULL;
}

bool ls_cycle_allow_waiting(const ls_cycle *cycle, uint32_t pod_id, ls_str plugin)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s && ls_waiting_pods_allow(&s->waiting, pod_id, plugin);
}

bool ls_cycle_reject_waiting(const ls_cycle *cycle, uint32_t pod_id, ls_str plugin, const char *msg)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s && ls_waiting_pods_reject(&s->waiting, pod_id, plugin, msg);
}

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

uint32_t ls_scheduler_pending(const ls_scheduler *s)
{
    return s->pending.len;
}

size_t ls_scheduler_lua_memory(const ls_scheduler *s)
{
    return ls_lua_memory(s->lua);
}
