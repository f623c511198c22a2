/*
 * cycle.c: one pod's scheduling and binding cycles. Snapshot, PreFilter,
 * Filter (over a rotating window of the node list, as many nodes as
 * upstream's sampling rule asks), PostFilter on failure, PreScore / Score /
 * NormalizeScore, host selection, assume, Reserve, Permit, and the binding
 * cycle. Failures get upstream's FitError message and go back to the queue
 * with the plugins that rejected the pod.
 * Over 800 lines: the scheduling and binding cycles share the cycle state,
 * the waiting pods and the expectation (nominatedNodeName) bookkeeping in one
 * sequence; the extenders, preemption and the FitError message are apart.
 */
#include "scheduler/scheduler_internal.h"
#include "luasched/feature_gates.h"
#include "worker/marks.h"
#include "luasched/log.h"
#include "framework/fit_error.h"
#include "scheduler/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers: the seed makes tie-breaks reproducible */

static uint64_t next_random(ls_scheduler *s)
{
    return ls_random_next(&s->rng);
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
    ls_scheduler_begin_deferral(s);
    bool bound = s->src.bind(s->src.ud, cycle->pod, node_name, &err);
    ls_scheduler_end_deferral(s);
    if (!bound) {
        snprintf(errbuf, errlen, "%s", err.msg);
        return -1;
    }
    s->bound_in_bind = true;
    return 0;
}

bool ls_scheduler_plugin_write(ls_scheduler *s, char *errbuf, size_t errlen)
{
    uint32_t call = *ls_view_generation();
    if (call != s->writes_generation) {
        s->writes_generation = call;
        s->writes_in_call = 0;
    }
    if (s->writes_in_call >= LS_MAX_PLUGIN_WRITES) {
        snprintf(errbuf, errlen, "more than %d API writes and evictions in one plugin call", LS_MAX_PLUGIN_WRITES);
        return false;
    }
    s->writes_in_call++;
    return true;
}

int ls_cycle_patch_status(const ls_cycle *cycle, const ls_object *obj, const char *merge_patch, char *errbuf,
                          size_t errlen)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    if (!s || !s->src.patch_status) {
        snprintf(errbuf, errlen, "no cluster is attached to write the status of %s %s", ls_str_get(obj->kind),
                 ls_str_get(obj->name));
        return -1;
    }
    if (!ls_scheduler_plugin_write(s, errbuf, errlen))
        return -1;
    ls_critical_enter();
    ls_error err;
    ls_scheduler_begin_deferral(s);
    bool ok = s->src.patch_status(s->src.ud, obj, merge_patch, &err);
    ls_scheduler_end_deferral(s);
    ls_critical_leave();
    if (!ok) {
        snprintf(errbuf, errlen, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- metrics */

int ls_scheduler_run_point(ls_scheduler *s, int ep, uint32_t profile)
{
    if (!s->metrics.registry)
        return ls_lua_run(s->lua, ep, profile);
    uint64_t start = ls_sched_metrics_clock_ns();
    int code = ls_lua_run(s->lua, ep, profile);
    double seconds = (double)(ls_sched_metrics_clock_ns() - start) * 1e-9;
    const char *name = ls_str_get(s->cfg.profiles[profile].scheduler_name);
    ls_sched_metrics_extension_point(&s->metrics, ls_ext_point_info_of(ep)->name, (uint8_t)code, name, seconds);
    if (ep == LS_EP_POST_FILTER)
        ls_sched_metrics_preemption(&s->metrics, s->victims.len);
    return code;
}

void ls_cycle_plugin_durations(const ls_cycle *cycle, int ep, uint32_t index, uint8_t code, uint64_t count,
                               double seconds, const uint64_t *buckets)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    const ls_ext_point_info *row = ls_ext_point_info_of(ep);
    if (!s || !s->metrics.registry || !row || !count)
        return;
    const ls_vec *list = &s->cfg.profiles[cycle->profile].plugins[row->point];
    if (index >= list->len)
        return;
    const char *labels[] = {ls_str_get(LS_VEC_AT(list, ls_plugin_ref, index).name), row->name, ls_code_name(code)};
    ls_metrics_observe_bucketed(s->metrics.plugin_execution, labels, buckets, count, seconds);
}

static void record_attempt(ls_scheduler *s, const ls_qpod *qp, ls_str node, uint8_t code)
{
    if (!s->metrics.registry)
        return;
    const char *result = node ? "scheduled" : ls_code_is_rejected(code) ? "unschedulable" : "error";
    double seconds = (double)(ls_sched_metrics_clock_ns() - s->attempt_start_ns) * 1e-9;
    ls_sched_metrics_attempt(&s->metrics, result, ls_str_get(s->cfg.profiles[qp->profile].scheduler_name), seconds,
                             node ? qp->attempts : 0);
}

/* ---- the scheduling cycle */

static ls_attempt attempt_of(const ls_scheduler *s, const ls_qpod *qp, ls_str node, uint8_t code,
                             const char *message)
{
    return (ls_attempt){
        .pod = qp->pod,
        .profile = qp->profile,
        .node = node,
        .code = code,
        .message = message,
        .reason = node ? NULL : (ls_code_is_rejected(code) ? "Unschedulable" : "SchedulerError"),
        .num_all_nodes = s->cycle.num_all_nodes,
        .num_feasible = s->cycle.num_feasible,
        .total_scores = s->opt.trace && s->scored ? s->totals : NULL,
        .time_ms = s->clock_ms,
        .attempt = qp->attempts,
        .nominated_node = node ? 0 : s->cycle.nominated_node,
        .n_victims = s->victims.len,
        .victims = s->victims.data,
        .permit = s->permit.result,
        .permit_waited = s->permit.waited,
        .permit_wait_ms = s->permit.wait_ms,
        .permit_plugin = s->permit.plugin,
        .via_nominated_node = s->permit.via_nominated,
        .via_batch_hint = s->permit.via_batch_hint,
        .expected_node = s->expected_node,
    };
}

static void report(ls_scheduler *s, ls_qpod *qp, ls_str node, uint8_t code, const char *message)
{
    ls_attempt a = attempt_of(s, qp, node, code, message);
    record_attempt(s, qp, node, code);
    if (s->src.on_attempt)
        s->src.on_attempt(s->src.ud, &a, &s->cycle, s);
}

static void add_rejector(ls_qpod *qp, ls_str plugin, uint8_t code)
{
    ls_str *list = code == LS_PENDING ? qp->pending : qp->rejectors;
    uint32_t *n = code == LS_PENDING ? &qp->n_pending : &qp->n_rejectors;
    for (uint32_t i = 0; i < *n; i++)
        if (list[i] == plugin)
            return;
    if (*n < LS_MAX_REJECTORS)
        list[(*n)++] = plugin;
}

/* The plugin at `index` of an extension point's list in the pod's profile. */
static ls_str plugin_at(const ls_scheduler *s, const ls_qpod *qp, int ep, int index)
{
    const ls_vec *list = &s->cfg.profiles[qp->profile].plugins[ep];
    return index >= 0 && (uint32_t)index < list->len ? LS_VEC_AT(list, ls_plugin_ref, index).name : 0;
}

/* The cycle's single status came from plugin status_plugin of `ep`. */
static void reject_by_status(ls_scheduler *s, ls_qpod *qp, int ep)
{
    ls_cycle *c = &s->cycle;
    ls_str plugin = plugin_at(s, qp, ep, c->status_plugin);
    if (plugin && ls_code_is_rejected(c->status_code))
        add_rejector(qp, plugin, c->status_code);
}

/* The PreFilter plugins that gave node names are rejectors of a pod no node
 * fits (upstream's Diagnosis.UnschedulablePlugins starts as them). */
static void reject_by_restriction(ls_scheduler *s, ls_qpod *qp)
{
    uint32_t bits = s->cycle.prefilter_restricting;
    for (int k = 0; k < 32 && bits; k++, bits >>= 1)
        if ((bits & 1u) && plugin_at(s, qp, LS_EP_PRE_FILTER, k))
            add_rejector(qp, plugin_at(s, qp, LS_EP_PRE_FILTER, k), LS_UNRESOLVABLE);
}

/* Diagnosis.UnschedulablePlugins of a Filter failure: the restricting
 * PreFilter plugins and every plugin that rejected a node. */
static void reject_by_filters(ls_scheduler *s, ls_qpod *qp)
{
    ls_cycle *c = &s->cycle;
    reject_by_restriction(s, qp);
    for (uint32_t i = 0; i < c->num_processed; i++) {
        const ls_node_info *ni = c->candidates[(c->start + i) % c->num_candidates];
        const ls_node_status *st = &c->node_status[ni->index];
        if (st->code != LS_SUCCESS)
            add_rejector(qp, plugin_at(s, qp, LS_EP_FILTER, st->plugin), st->code);
    }
}

/* The attempt failed: reported, then back to the queue (AddUnschedulableIfNotPresent). */
static void fail(ls_scheduler *s, ls_qpod *qp, uint8_t code, const char *message)
{
    s->verdict_code = code;
    if (code == LS_ERROR) {
        /* An error carries no rejector plugins (upstream attaches the
         * diagnosis only to a rejection): the pod backs off in the error heap,
         * which Pop does not take early. */
        s->error_attempts++;
        qp->n_rejectors = qp->n_pending = 0;
    }
    report(s, qp, 0, code, message);
    ls_squeue_add_unschedulable(s->queue, qp);
}

static void fail_with_status(ls_scheduler *s, ls_qpod *qp)
{
    const ls_status_info *st = ls_status_get(s->cycle.status);
    fail(s, qp, s->cycle.status_code, st->message);
}

static const ls_profile *profile_of(const ls_scheduler *s, const ls_qpod *qp)
{
    return &s->cfg.profiles[qp->profile];
}

bool ls_scheduler_run_filters(ls_scheduler *s, ls_qpod *qp)
{
    ls_cycle *c = &s->cycle;
    const ls_profile *prof = profile_of(s, qp);
    int32_t pct = prof->percentage_of_nodes_to_score >= 0 ? prof->percentage_of_nodes_to_score
                                                          : s->cfg.percentage_of_nodes_to_score;
    bool scoring = prof->plugins[LS_EP_SCORE].len > 0 || ls_extenders_have_prioritizer(s->extenders);
    ls_cycle_prepare_filter(c, s->candidates, pct, scoring || ls_extenders_have_filter(s->extenders),
                            s->next_start_index);
    if (c->num_candidates && ls_scheduler_run_point(s, LS_EP_FILTER, qp->profile) != LS_SUCCESS)
        return false;
    s->next_start_index = ls_cycle_advance_start(c, s->next_start_index);
    return true;
}

const ls_node_info *ls_scheduler_select_host(ls_scheduler *s)
{
    return ls_cycle_select_host(&s->cycle, s->totals, &s->rng);
}

bool ls_scheduler_total_scores(ls_scheduler *s, ls_qpod *qp)
{
    const ls_vec *plugins = &profile_of(s, qp)->plugins[LS_EP_SCORE];
    if (!ls_cycle_total_scores(&s->cycle, (const ls_plugin_ref *)plugins->data, (uint32_t)plugins->len,
                               s->extenders != NULL, s->totals))
        return false;
    ls_extenders_prioritize(s->extenders, &s->cycle, s->totals);
    s->scored = true;
    return true;
}

bool ls_scheduler_prioritize(ls_scheduler *s, ls_qpod *qp, const ls_node_info **host)
{
    ls_cycle *c = &s->cycle;
    if (!ls_cycle_wants_scores(c)) {
        s->totals[0] = 0;
        s->scored = true;
        *host = c->feasible[0];
        return true;
    }
    if (ls_scheduler_run_point(s, LS_EP_PRE_SCORE, qp->profile) != LS_SUCCESS ||
        ls_scheduler_run_point(s, LS_EP_SCORE, qp->profile) != LS_SUCCESS || !ls_scheduler_total_scores(s, qp))
        return false;
    *host = ls_scheduler_select_host(s);
    return true;
}

static void unreserve_and_forget(ls_scheduler *s, ls_qpod *qp)
{
    ls_error err;
    ls_scheduler_run_point(s, LS_EP_UNRESERVE, qp->profile);
    if (!ls_cache_forget_pod(s->cache, qp->pod, &err))
        ls_log_error("Scheduler cache ForgetPod failed", "err", err.msg);
}

/* A rejection by Reserve or Permit is a FitError on the one chosen node
 * ("0/1 nodes are available: 1 <reason>."); later failures keep their message. */
static void fail_after_assume(ls_scheduler *s, ls_qpod *qp, bool scheduling_cycle)
{
    ls_cycle *c = &s->cycle;
    uint8_t code = c->status_code ? c->status_code : LS_ERROR;
    if (!scheduling_cycle || !ls_code_is_rejected(code)) {
        fail(s, qp, code, ls_status_get(c->status)->message);
        return;
    }
    char *msg = ls_fit_error_single(c->status);
    fail(s, qp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

/* extendersBinding: the interested binder extender binds before the Bind
 * plugins; -1 when there is none. */
static int extenders_bind(ls_scheduler *s, ls_qpod *qp, ls_str node)
{
    char *msg = NULL;
    int bound = ls_extenders_bind(s->extenders, qp->pod, node, &msg);
    if (bound == 0)
        return -1;
    ls_cycle *c = &s->cycle;
    if (bound < 0) {
        c->status = ls_status_register(LS_ERROR, msg, strlen(msg));
        c->status_code = LS_ERROR;
        c->status_plugin = -1;
        free(msg);
        return LS_ERROR;
    }
    if (s->src.extender_bound) {
        ls_scheduler_begin_deferral(s);
        s->src.extender_bound(s->src.ud, qp->pod, node);
        ls_scheduler_end_deferral(s);
    }
    return LS_SUCCESS;
}

/* ---- NominatedNodeNameForExpectation (upstream v1.35+, on by default)
 *
 * A pod that will take time to bind (a Permit made it wait, or PreBind has
 * work to do) gets status.nominatedNodeName = its node at the start of the
 * binding cycle, so that other pods and components see where it is going; a
 * failure clears it again (the API server clears it when the binding lands).
 * Whether PreBind has work is PreBindPreFlight's answer: a plugin's
 * `pre_bind_pre_flight` returning ls.skip has none; a PreBind plugin
 * without the hook counts as having work. */

static void expect_placement(ls_scheduler *s, ls_qpod *qp, ls_str node)
{
    if (!ls_feature_enabled(LS_FG_NominatedNodeNameForExpectation))   /* v1.34: none */
        return;
    if (s->expected_node == node)
        return;
    s->expected_node = node;
    if (s->src.nominate)
        s->src.nominate(s->src.ud, qp->pod, node);
}

static void drop_expectation(ls_scheduler *s, ls_qpod *qp)
{
    if (s->expected_node && s->src.clear_nomination)
        s->src.clear_nomination(s->src.ud, qp->pod);
}

/* A PreBind that returned Wait for this long fails the binding (upstream's
 * longest wait, Permit's 15 minutes): a plugin waiting for ever left the pod
 * neither bound nor pending, and a simulation polling it for ever. */
enum { PRE_BIND_MAX_WAIT_MS = 15 * 60 * 1000 };

static int pre_bind_waited_too_long(ls_scheduler *s, ls_qpod *qp)
{
    ls_cycle *c = &s->cycle;
    char msg[300];
    snprintf(msg, sizeof msg, "running PreBind plugin \"%s\": still waiting after 15m0s, the longest a PreBind may wait",
             ls_str_get(plugin_at(s, qp, LS_EP_PRE_BIND, c->status_plugin)));
    c->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    c->status_code = LS_ERROR;
    return LS_ERROR;
}

/* PreBind, Bind and PostBind. In this single-threaded loop the binding
 * cycle runs right after the scheduling cycle (or when a waiting pod is let go).
 * pre_bind_since: when PreBind first made the pod wait (NOT_WAITED: it has not). */
#define NOT_WAITED UINT64_MAX
static void binding_cycle(ls_scheduler *s, ls_qpod *qp, ls_str node, uint64_t pre_bind_since)
{
    enum { PRE_BIND_POLL_MS = 1000 };
    if (profile_of(s, qp)->plugins[LS_EP_PRE_BIND].len &&
        ls_scheduler_run_point(s, LS_EP_PRE_BIND_PRE_FLIGHT, qp->profile) == LS_SUCCESS)
        expect_placement(s, qp, node);
    int ep = LS_EP_PRE_BIND;
    int code = ls_scheduler_run_point(s, LS_EP_PRE_BIND, qp->profile);
    uint64_t since = pre_bind_since != NOT_WAITED ? pre_bind_since : s->clock_ms;
    if (code == LS_WAIT && s->clock_ms - since >= PRE_BIND_MAX_WAIT_MS)
        code = pre_bind_waited_too_long(s, qp);
    if (code == LS_WAIT) {
        /* A PreBind plugin waits on the cluster (VolumeBinding on its claims):
         * the binding cycle goes on from PreBind at the next object change or
         * poll, while other pods are scheduled (upstream's binding goroutine). */
        ls_waiting_pods_add_pre_bind(&s->waiting, qp->pod, qp->profile, node, s->clock_ms, PRE_BIND_POLL_MS,
                                     since);
        ls_lua_park(s->lua, qp->profile, qp->pod->id);
        return;
    }
    if (code == LS_SUCCESS) {
        ep = LS_EP_BIND;
        code = extenders_bind(s, qp, node);
        if (code < 0) {
            s->bound_in_bind = false;
            code = ls_scheduler_run_point(s, LS_EP_BIND, qp->profile);
            /* The cluster holds the binding: the pod is bound whatever became of
             * the plugin's call after it (an error, a cut-off right after the
             * request); failing it would requeue a bound pod. */
            if (s->bound_in_bind)
                code = LS_SUCCESS;
        }
        ls_cache_finish_binding(s->cache, qp->pod);
        ls_scheduler_apply_deferred(s);
    }
    if (code != LS_SUCCESS) {
        reject_by_status(s, qp, ep);
        unreserve_and_forget(s, qp);
        drop_expectation(s, qp);
        fail_after_assume(s, qp, false);
        return;
    }
    ls_scheduler_run_point(s, LS_EP_POST_BIND, qp->profile);
    report(s, qp, node, LS_SUCCESS, NULL);
    ls_squeue_done(s->queue, qp);
}

/* Reserve, Permit and the binding cycle. In this single-threaded loop the
 * binding cycle runs right after the scheduling cycle. */
static void assume_and_bind(ls_scheduler *s, ls_qpod *qp, const ls_node_info *host)
{
    ls_cycle *c = &s->cycle;
    ls_error err;
    ls_str node = host->node->name;
    c->selected_node = node;
    ls_nominator_delete(&s->nominator, qp->pod);
    if (!ls_cache_assume_pod(s->cache, qp->pod, node, &err)) {
        c->status = ls_status_register(LS_ERROR, err.msg, strlen(err.msg));
        fail(s, qp, LS_ERROR, err.msg);
        return;
    }
    int ep = LS_EP_RESERVE;
    int code = ls_scheduler_run_point(s, LS_EP_RESERVE, qp->profile);
    if (code == LS_SUCCESS) {
        ep = LS_EP_PERMIT;
        code = ls_scheduler_run_point(s, LS_EP_PERMIT, qp->profile);
    }
    if (ep == LS_EP_PERMIT)
        s->permit.result = code == LS_WAIT ? LS_PERMIT_WAITING
                           : code == LS_SUCCESS ? LS_PERMIT_ALLOWED : LS_PERMIT_REJECTED;
    if (code != LS_SUCCESS && code != LS_WAIT && ep == LS_EP_PERMIT)
        s->permit.plugin = plugin_at(s, qp, ep, c->status_plugin);
    if (code == LS_WAIT) {
        /* The binding cycle goes on once every waiting plugin allowed the pod. */
        if (s->src.on_permit_wait) {
            ls_attempt a = attempt_of(s, qp, 0, LS_WAIT, NULL);
            s->src.on_permit_wait(s->src.ud, &a, c, s);
        }
        ls_waiting_pods_add(&s->waiting, qp->pod, qp->profile, c, s->clock_ms);
        ls_lua_park(s->lua, qp->profile, qp->pod->id);
        expect_placement(s, qp, node);
        return;
    }
    if (code != LS_SUCCESS) {
        reject_by_status(s, qp, ep);
        unreserve_and_forget(s, qp);
        fail_after_assume(s, qp, true);
        return;
    }
    binding_cycle(s, qp, node, NOT_WAITED);
}

/* Explain's trace starts empty (a PreFilter rejection leaves it so; the
 * nominated node's Filter writes that node's row; a full pass its own). */
static void clear_trace(ls_cycle *c)
{
    if (c->trace && c->filter_trace && c->num_filter_plugins)
        memset(c->filter_trace, 0, (size_t)c->num_all_nodes * c->num_filter_plugins * sizeof *c->filter_trace);
}

void ls_scheduler_prepare_cycle(ls_scheduler *s, ls_qpod *qp, ls_snapshot *snapshot)
{
    ls_cycle *c = &s->cycle;
    s->verdict_code = LS_SUCCESS;
    c->nominated_node = 0;
    const ls_profile *prof = profile_of(s, qp);
    c->pod = qp->pod;
    c->profile = qp->profile;
    c->snapshot = snapshot;
    c->num_all_nodes = ls_snapshot_num_nodes(snapshot);
    c->all_nodes = ls_snapshot_list(snapshot);
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
    clear_trace(c);
    c->num_feasible = c->num_processed = 0;
    c->keep_raw_scores = 0;
    c->prefilter_restricts = 0;
    c->prefilter_absent_status = 0;
    c->selected_node = 0;
    ls_extenders_begin_cycle(s->extenders, c->num_all_nodes, c->trace);
}

static void begin_cycle(ls_scheduler *s, ls_qpod *qp)
{
    s->victims.len = 0;
    memset(&s->permit, 0, sizeof s->permit);
    s->expected_node = 0;
    s->scored = false;
    ls_scheduler_refresh_snapshot(s);
    /* As upstream, plugin durations are measured in about one cycle in ten. */
    s->cycle.sample_plugins = s->metrics.registry && s->cycles_started % 10 == 1;
    ls_scheduler_prepare_cycle(s, qp, s->snapshot);
}

/* A FitError: PostFilter runs if the profile has any PostFilter plugin, and
 * its message (every plugin's reasons joined, or the Error or Unresolvable
 * that ended it) follows the nodes' one after a space, as upstream's
 * FitError.Error() appends PostFilterMsg. The cycle ends Unschedulable
 * either way; an Error is logged as upstream logs it. */
static void fit_failure(ls_scheduler *s, ls_qpod *qp, char *msg)
{
    ls_cycle *c = &s->cycle;
    c->nominated_node = 0;
    if (profile_of(s, qp)->plugins[LS_EP_POST_FILTER].len) {
        /* Even an Error from PostFilter ends the cycle Unschedulable, with its
         * message after the nodes' one, as upstream logs and reports it. */
        int code = ls_scheduler_run_point(s, LS_EP_POST_FILTER, qp->profile);
        ls_scheduler_apply_deferred(s);
        const char *post = c->status ? ls_status_get(c->status)->message : "";
        if (code == LS_ERROR) {
            char ref[600];
            ls_log_error("Status after running PostFilter plugins for pod", "pod",
                         ls_log_kobj(ref, sizeof ref, ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name)), "status",
                         post);
        }
        if (*post) {
            size_t n = strlen(msg) + strlen(post) + 2;
            char *joined = ls_xmalloc(n);
            snprintf(joined, n, "%s %s", msg, post);
            free(msg);
            msg = joined;
        }
        /* Preemption made room: the pod is nominated to that node (Override). */
        if (c->nominated_node)
            ls_nominator_add(&s->nominator, qp->pod, c->nominated_node);
    }
    fail(s, qp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

/* A pod nominated to a node (preemption made room there) tries that node first,
 * alone; if it passes, it is the one feasible node (upstream's
 * evaluateNominatedNode). The round-robin start index does not move. */
static const ls_node_info *evaluate_nominated_node(ls_scheduler *s, ls_qpod *qp, ls_str hint)
{
    ls_cycle *c = &s->cycle;
    ls_str nom = ls_nominator_node_of(&s->nominator, qp->pod);
    if (!nom)
        nom = hint;
    const ls_node_info *ni = nom ? ls_snapshot_find(s->snapshot, nom) : NULL;
    if (!ni)
        return NULL;
    if (c->prefilter_restricts) {
        bool allowed = false;
        for (uint32_t k = 0; k < c->num_prefilter_nodes; k++)
            allowed = allowed || c->prefilter_nodes[k] == nom;
        if (!allowed)
            return NULL;
    }
    if (ls_lua_filter_one(s->lua, qp->profile, ni) != LS_SUCCESS)
        return NULL;
    c->feasible[0] = ni;
    c->num_feasible = 1;
    s->totals[0] = 0;
    bool rejected = false;
    char *msg = NULL;
    if (!ls_extenders_filter(s->extenders, c, &rejected, &msg)) {
        char ref[600];
        ls_log_error("Evaluation failed on nominated node", "pod",
                     ls_log_kobj(ref, sizeof ref, ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name)), "node",
                     ls_str_get(nom), "err", msg);
        free(msg);
        c->num_feasible = 0;
    }
    if (c->num_feasible == 0)
        return NULL;
    s->permit.via_nominated = true;
    s->permit.via_batch_hint = nom == hint;
    return ni;
}

/* A pod being deleted is not scheduled; upstream records a FailedScheduling
 * event "skip schedule deleting pod: <ns>/<name>" and drops it from the queue. */
void ls_scheduler_skip_deleting(ls_scheduler *s, ls_qpod *qp)
{
    char msg[600];
    snprintf(msg, sizeof msg, "skip schedule deleting pod: %s/%s", ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name));
    s->cycle.num_all_nodes = 0;
    s->cycle.num_feasible = 0;
    s->victims.len = 0;
    s->expected_node = 0;
    s->cycle.nominated_node = 0;
    report(s, qp, 0, LS_UNSCHEDULABLE, msg);
    ls_squeue_done(s->queue, qp);
}

void ls_scheduler_schedule_pod(ls_scheduler *s, ls_qpod *qp)
{
    ls_cycle *c = &s->cycle;
    begin_cycle(s, qp);
    const char *ended = ls_worker_marked(ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name));
    if (ended) {   /* an earlier worker of this command died on it (worker/marks.h) */
        fail(s, qp, LS_ERROR, ended);
        return;
    }
    if (c->num_all_nodes == 0) {
        fail(s, qp, LS_UNRESOLVABLE, "no nodes available to schedule pods");
        return;
    }
    int code = ls_scheduler_run_point(s, LS_EP_PRE_FILTER, qp->profile);
    if (code != LS_SUCCESS) {
        if (code == LS_ERROR) {
            fail_with_status(s, qp);
            return;
        }
        reject_by_status(s, qp, LS_EP_PRE_FILTER);
        reject_by_restriction(s, qp);
        fit_failure(s, qp, ls_fit_error_prefilter(c, ls_status_get(c->status)->message));
        return;
    }
    ls_str hint = ls_batch_node_hint(s, qp);
    if (ls_batch_sign_cut_off(s)) {
        ls_batch_forget_signature(s);
        fail_with_status(s, qp);
        return;
    }
    const ls_node_info *nominated = evaluate_nominated_node(s, qp, hint);
    if (nominated) {
        ls_batch_store(s, qp, hint, nominated->node->name);
        assume_and_bind(s, qp, nominated);
        return;
    }
    if (!ls_scheduler_run_filters(s, qp) || !ls_scheduler_filter_extenders(s, qp)) {
        ls_batch_forget_signature(s);
        fail_with_status(s, qp);
        return;
    }
    if (c->num_feasible == 0) {
        ls_batch_forget_signature(s);
        reject_by_filters(s, qp);
        fit_failure(s, qp, ls_fit_error_filter(c));
        return;
    }
    const ls_node_info *host = NULL;
    if (!ls_scheduler_prioritize(s, qp, &host)) {
        ls_batch_forget_signature(s);
        fail_with_status(s, qp);
        return;
    }
    ls_batch_store(s, qp, hint, host->node->name);
    assume_and_bind(s, qp, host);
}

/* Binding cycles of waiting pods that were allowed, failures of rejected ones. */
void ls_scheduler_resolve_waiting(ls_scheduler *s)
{
    ls_waiting_pod *wp;
    while ((wp = ls_waiting_pods_take_resolved(&s->waiting))) {
        ls_qpod *qp = ls_squeue_find(s->queue, wp->pod);
        if (!qp) {
            free(wp);   /* deleted while waiting */
            continue;
        }
        ls_cycle *c = &s->cycle;
        begin_cycle(s, qp);
        c->selected_node = wp->node;
        s->permit.waited = true;
        s->permit.wait_ms = s->clock_ms - wp->since_ms;
        s->permit.result = !wp->rejected ? LS_PERMIT_ALLOWED : wp->timed_out ? LS_PERMIT_TIMED_OUT : LS_PERMIT_REJECTED;
        s->permit.plugin = wp->rejected_by;
        if (ls_feature_enabled(LS_FG_NominatedNodeNameForExpectation))
            s->expected_node = wp->node;   /* set when it began to wait */
        ls_lua_resume(s->lua, wp->profile, wp->pod->id);
        if (wp->rejected && wp->preempted) {
            /* A preemption's victim: an Error, so it backs off (upstream v1.36+). */
            unreserve_and_forget(s, qp);
            drop_expectation(s, qp);
            fail(s, qp, LS_ERROR, wp->message);
            qp->retry_error = true;
            ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, wp->pod,
                                       NULL);
        } else if (wp->rejected) {
            unreserve_and_forget(s, qp);
            drop_expectation(s, qp);
            qp->n_rejectors = 0;
            if (wp->rejected_by)
                qp->rejectors[qp->n_rejectors++] = wp->rejected_by;
            fail(s, qp, LS_UNSCHEDULABLE, wp->message);
        } else {
            binding_cycle(s, qp, wp->node, wp->at_pre_bind ? wp->since_ms : NOT_WAITED);
        }
        free(wp);
    }
    ls_scheduler_apply_deferred(s);   /* activations an Unreserve asked for */
}

uint64_t ls_cycle_now_ms(const ls_cycle *cycle)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? s->clock_ms : 0;
}

int ls_cycle_patch_object(const ls_cycle *cycle, ls_str kind, ls_str ns, ls_str name, const char *patch,
                          char *errbuf, size_t errlen)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    if (!s || !s->src.patch_object) {
        snprintf(errbuf, errlen, "no cluster is attached to update %s %s", ls_str_get(kind), ls_str_get(name));
        return -1;
    }
    if (!ls_scheduler_plugin_write(s, errbuf, errlen))
        return -1;
    ls_error err;
    ls_critical_enter();
    ls_scheduler_begin_deferral(s);
    bool ok = s->src.patch_object(s->src.ud, kind, ns, name, patch, &err);
    ls_scheduler_end_deferral(s);
    ls_critical_leave();
    if (!ok)
        snprintf(errbuf, errlen, "%s", err.msg);
    return ok ? 0 : -1;
}

int ls_cycle_create_object(const ls_cycle *cycle, const char *json, char *name_out, size_t name_cap, char *errbuf,
                           size_t errlen)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    if (!s || !s->src.create_object) {
        snprintf(errbuf, errlen, "no cluster is attached to create objects in");
        return -1;
    }
    if (!ls_scheduler_plugin_write(s, errbuf, errlen))
        return -1;
    ls_error err;
    ls_critical_enter();
    ls_scheduler_begin_deferral(s);
    bool ok = s->src.create_object(s->src.ud, json, name_out, name_cap, &err);
    ls_scheduler_end_deferral(s);
    ls_critical_leave();
    if (!ok)
        snprintf(errbuf, errlen, "%s", err.msg);
    return ok ? 0 : -1;
}

/* The waiting pods a plugin sees are its own profile's (profile: its
 * schedulerName): a plugin of one profile neither lists, allows nor rejects
 * the pods waiting in another profile's Permit. */
static bool waits_in_profile(const ls_scheduler *s, const ls_waiting_pod *wp, ls_str profile)
{
    return wp && wp->profile < s->cfg.n_profiles && s->cfg.profiles[wp->profile].scheduler_name == profile;
}

static ls_waiting_pod *own_waiting_pod(const ls_cycle *cycle, ls_str profile, uint32_t pod_id)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    ls_waiting_pod *wp = s ? ls_waiting_pods_find(&s->waiting, pod_id) : NULL;
    return waits_in_profile(s, wp, profile) ? wp : NULL;
}

uint32_t ls_cycle_num_waiting(const ls_cycle *cycle, ls_str profile)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    uint32_t n = 0, total = s ? ls_waiting_pods_count(&s->waiting) : 0;
    for (uint32_t i = 0; i < total; i++)
        n += waits_in_profile(s, ls_waiting_pods_at(&s->waiting, i), profile);
    return n;
}

const ls_pod *ls_cycle_waiting_pod(const ls_cycle *cycle, ls_str profile, uint32_t i)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    uint32_t total = s ? ls_waiting_pods_count(&s->waiting) : 0;
    for (uint32_t k = 0; k < total; k++) {
        const ls_waiting_pod *wp = ls_waiting_pods_at(&s->waiting, k);
        if (waits_in_profile(s, wp, profile) && i-- == 0)
            return wp->pod;
    }
    return NULL;
}

bool ls_cycle_allow_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    return own_waiting_pod(cycle, profile, pod_id) && ls_waiting_pods_allow(&s->waiting, pod_id, plugin);
}

bool ls_cycle_reject_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin, const char *msg)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    return own_waiting_pod(cycle, profile, pod_id) && ls_waiting_pods_reject(&s->waiting, pod_id, plugin, msg);
}


/* ---- nominated pods and preemption, for plugins */

uint32_t ls_cycle_nominated_total(const ls_cycle *cycle)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? ls_nominator_total(&s->nominator) : 0;
}

uint32_t ls_cycle_nominated_count(const ls_cycle *cycle, ls_str node)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? ls_nominator_count(&s->nominator, node) : 0;
}

uint32_t ls_cycle_nominated_nodes(const ls_cycle *cycle, ls_str *out, uint32_t cap)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    if (!s)
        return 0;
    const ls_map *by_pod = &s->nominator.by_pod;
    uint32_t n = 0;
    for (uint32_t i = 0; i < by_pod->cap; i++) {
        if (!by_pod->slots[i].key)
            continue;
        if (n < cap)
            out[n] = (ls_str)(uintptr_t)by_pod->slots[i].value;
        n++;
    }
    return n;
}

const ls_pod *ls_cycle_nominated_pod(const ls_cycle *cycle, ls_str node, uint32_t i)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? ls_nominator_at(&s->nominator, node, i) : NULL;
}

ls_str ls_cycle_nomination_of(const ls_cycle *cycle, const ls_pod *pod)
{
    const ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? ls_nominator_node_of(&s->nominator, pod) : 0;
}

void ls_cycle_clear_nomination(const ls_cycle *cycle, const ls_pod *pod)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    if (!s)
        return;
    bool had = ls_nominator_node_of(&s->nominator, pod) || pod->nominated_node_name;
    ls_nominator_delete(&s->nominator, pod);
    if (had && s->src.clear_nomination)
        s->src.clear_nomination(s->src.ud, pod);
}

uint64_t ls_cycle_random(const ls_cycle *cycle)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    return s ? next_random(s) : 0;
}

/* Deferred to the end of the running hook's cycle (upstream applies its
 * pods-to-activate after the scheduling cycle): activating runs PreEnqueue,
 * Lua, which must not be entered from inside a plugin's FFI call. */
bool ls_cycle_activate(const ls_cycle *cycle, const ls_pod *pod)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    const ls_qpod *qp = s ? ls_squeue_find(s->queue, pod) : NULL;
    if (!qp || (qp->where != LS_Q_UNSCHEDULABLE && qp->where != LS_Q_BACKOFF))
        return false;
    /* once per pod until applied: a plugin activating in a loop grew this
     * queue without bound (2 GB with a 64 MiB Lua limit) */
    for (uint32_t i = 0; i < s->deferred.len; i++) {
        const deferred_event *d = &LS_VEC_AT(&s->deferred, deferred_event, i);
        if (d->kind == EV_ACTIVATE && d->pod_id == pod->id)
            return true;
    }
    deferred_event *e = ls_vec_push(&s->deferred);
    *e = (deferred_event){.kind = EV_ACTIVATE, .pod_id = pod->id};
    return true;
}

const ls_pod *ls_cycle_queued_pod(const ls_cycle *cycle, uint32_t pod_id)
{
    ls_scheduler *s = cycle ? cycle->owner : NULL;
    const ls_pod probe = {.id = pod_id};   /* the queue finds a pod by its id */
    const ls_qpod *qp = s ? ls_squeue_find(s->queue, &probe) : NULL;
    return qp ? qp->pod : NULL;
}

/* ---- asynchronous binding (a real cluster) */

/* Forgets the pod's assumption in the cache (a failure is logged: the pod
 * stays accounted until its events say otherwise). False when the pod was
 * not assumed (bound or deleted meanwhile): nothing to undo. */
static bool forget_if_assumed(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    char ref[600];
    if (!ls_cache_is_assumed(s->cache, pod))
        return false;
    if (!ls_cache_forget_pod(s->cache, pod, &err))
        ls_log_error("Forgetting an assumed pod failed", "pod",
                     ls_log_kobj(ref, sizeof ref, ls_str_get(pod->ns), ls_str_get(pod->name)), "err", err.msg);
    return true;
}

/* The API server refused a binding the binding cycle had handed over: the
 * assumed pod is forgotten and, as after any error, backs off before its next
 * attempt (upstream's handleBindingCycleError). A pod bound or deleted
 * meanwhile is left to the events that say so. */
void ls_scheduler_forget_assumed(ls_scheduler *s, const ls_pod *pod)
{
    if (!forget_if_assumed(s, pod))
        return;
    /* The room it held is free again: as upstream's AssignedPodDelete. */
    ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
}

void ls_scheduler_bind_failed(ls_scheduler *s, const ls_pod *pod, const char *message)
{
    if (!forget_if_assumed(s, pod))
        return;
    int32_t profile = ls_config_profile_index(&s->cfg, pod->scheduler_name);
    if (profile < 0)
        return;
    ls_squeue_add(s->queue, pod, (uint32_t)profile);
    ls_qpod *qp = ls_squeue_find(s->queue, pod);
    if (!qp || qp->where != LS_Q_ACTIVE)
        return;
    qp->attempts = 1;
    s->cycle.num_all_nodes = s->cycle.num_feasible = 0;
    s->cycle.nominated_node = 0;
    s->victims.len = 0;
    s->expected_node = 0;
    /* A nomination it carries (set for the binding, or by preemption) goes with
     * the failed binding, as upstream v1.35+ clears it on a binding failure. */
    if (pod->nominated_node_name && s->src.clear_nomination)
        s->src.clear_nomination(s->src.ud, pod);
    if (s->metrics.registry)
        s->attempt_start_ns = ls_sched_metrics_clock_ns();
    fail(s, qp, LS_ERROR, message);
}
