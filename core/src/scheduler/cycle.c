/*
 * cycle.c: one pod's attempt from end to end, on the attempt and its
 * environment (attempt.h): snapshot, PreFilter, OpportunisticBatching's entry,
 * the nominated node or Filter / PreScore / Score and the host (attempt.c's
 * stages), the batch's exit, PostFilter on failure, assume, Reserve, Permit,
 * and the binding cycle with the expectation (nominatedNodeName). Failures
 * get upstream's FitError message and go back to the queue with the plugins
 * that rejected the pod. The plugin services are plugin_services.c's; the
 * extenders, preemption and the FitError message are apart.
 */
#include "scheduler/cycle.h"
#include "scheduler/extender_cycle.h"
#include "scheduler/plugin_services.h"
#include "luasched/feature_gates.h"
#include "worker/marks.h"
#include "luasched/log.h"
#include "framework/fit_error.h"
#include "scheduler/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- metrics */

static void record_attempt(ls_sched_env *e, ls_attempt_state *a, const ls_qpod *qp, ls_str node, uint8_t code)
{
    if (!e->metrics->registry)
        return;
    const char *result = node ? "scheduled" : ls_code_is_rejected(code) ? "unschedulable" : "error";
    double seconds = (double)(ls_sched_metrics_clock_ns() - a->attempt_start_ns) * 1e-9;
    ls_sched_metrics_attempt(e->metrics, result, ls_str_get(e->cfg->profiles[qp->profile].scheduler_name), seconds,
                             node ? qp->attempts : 0);
}

/* ---- the scheduling cycle */

static ls_attempt attempt_of(const ls_sched_env *e, const ls_attempt_state *a, const ls_qpod *qp, ls_str node, uint8_t code,
                             const char *message)
{
    return (ls_attempt){
        .pod = qp->pod,
        .profile = qp->profile,
        .node = node,
        .code = code,
        .message = message,
        .reason = node ? NULL : (ls_code_is_rejected(code) ? "Unschedulable" : "SchedulerError"),
        .num_all_nodes = a->cycle.num_all_nodes,
        .num_feasible = a->cycle.num_feasible,
        .total_scores = e->opt->trace && a->scored ? a->totals : NULL,
        .time_ms = e->clock_ms,
        .attempt = qp->attempts,
        .nominated_node = node ? 0 : a->cycle.nominated_node,
        .n_victims = a->victims.len,
        .victims = a->victims.data,
        .permit = a->permit.result,
        .permit_waited = a->permit.waited,
        .permit_wait_ms = a->permit.wait_ms,
        .permit_plugin = a->permit.plugin,
        .via_nominated_node = a->permit.via_nominated,
        .via_batch_hint = a->permit.via_batch_hint,
        .expected_node = a->expected_node,
    };
}

static void report(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str node, uint8_t code, const char *message)
{
    ls_attempt rec = attempt_of(e, a, qp, node, code, message);
    record_attempt(e, a, qp, node, code);
    if (e->src->on_attempt)
        e->src->on_attempt(e->src->ud, &rec, &a->cycle, e->owner);
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
static ls_str plugin_at(const ls_sched_env *e, const ls_qpod *qp, int ep, int index)
{
    const ls_vec *list = &e->cfg->profiles[qp->profile].plugins[ep];
    return index >= 0 && (uint32_t)index < list->len ? LS_VEC_AT(list, ls_plugin_ref, index).name : 0;
}

/* The cycle's single status came from plugin status_plugin of `ep`. */
static void reject_by_status(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, int ep)
{
    ls_cycle *c = &a->cycle;
    ls_str plugin = plugin_at(e, qp, ep, c->status_plugin);
    if (plugin && ls_code_is_rejected(c->status_code))
        add_rejector(qp, plugin, c->status_code);
}

/* The PreFilter plugins that gave node names are rejectors of a pod no node
 * fits (upstream's Diagnosis.UnschedulablePlugins starts as them). */
static void reject_by_restriction(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    uint32_t bits = a->cycle.prefilter_restricting;
    for (int k = 0; k < 32 && bits; k++, bits >>= 1)
        if ((bits & 1u) && plugin_at(e, qp, LS_EP_PRE_FILTER, k))
            add_rejector(qp, plugin_at(e, qp, LS_EP_PRE_FILTER, k), LS_UNRESOLVABLE);
}

/* Diagnosis.UnschedulablePlugins of a Filter failure: the restricting
 * PreFilter plugins and every plugin that rejected a node. */
static void reject_by_filters(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_cycle *c = &a->cycle;
    reject_by_restriction(e, a, qp);
    for (uint32_t i = 0; i < c->num_processed; i++) {
        const ls_node_info *ni = c->candidates[(c->start + i) % c->num_candidates];
        const ls_node_status *st = &c->node_status[ni->index];
        if (st->code != LS_SUCCESS)
            add_rejector(qp, plugin_at(e, qp, LS_EP_FILTER, st->plugin), st->code);
    }
}

/* The attempt failed: reported, then back to the queue (AddUnschedulableIfNotPresent). */
static void fail(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, uint8_t code, const char *message)
{
    a->verdict_code = code;
    if (code == LS_ERROR) {
        /* An error carries no rejector plugins (upstream attaches the
         * diagnosis only to a rejection): the pod backs off in the error heap,
         * which Pop does not take early. */
        e->error_attempts++;
        qp->n_rejectors = qp->n_pending = 0;
    }
    report(e, a, qp, 0, code, message);
    ls_squeue_add_unschedulable(e->queue, qp);
}

static void fail_with_status(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    const ls_status_info *st = ls_status_get(a->cycle.status);
    fail(e, a, qp, a->cycle.status_code, st->message);
}






static void unreserve_and_forget(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_error err;
    ls_attempt_run_point(e, a, LS_EP_UNRESERVE, qp->profile);
    if (!ls_cache_forget_pod(e->cache, qp->pod, &err))
        ls_log_error("Scheduler cache ForgetPod failed", "err", err.msg);
}

/* A rejection by Reserve or Permit is a FitError on the one chosen node
 * ("0/1 nodes are available: 1 <reason>."); later failures keep their message. */
static void fail_after_assume(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, bool scheduling_cycle)
{
    ls_cycle *c = &a->cycle;
    uint8_t code = c->status_code ? c->status_code : LS_ERROR;
    if (!scheduling_cycle || !ls_code_is_rejected(code)) {
        fail(e, a, qp, code, ls_status_get(c->status)->message);
        return;
    }
    char *msg = ls_fit_error_single(c->status);
    fail(e, a, qp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

/* extendersBinding: the interested binder extender binds before the Bind
 * plugins; -1 when there is none. */
static int extenders_bind(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str node)
{
    char *msg = NULL;
    int bound = ls_extenders_bind(e->extenders, qp->pod, node, &msg);
    if (bound == 0)
        return -1;
    ls_cycle *c = &a->cycle;
    if (bound < 0) {
        c->status = ls_status_register(LS_ERROR, msg, strlen(msg));
        c->status_code = LS_ERROR;
        c->status_plugin = -1;
        free(msg);
        return LS_ERROR;
    }
    if (e->src->extender_bound) {
        ls_env_begin_deferral(e);
        e->src->extender_bound(e->src->ud, qp->pod, node);
        ls_env_end_deferral(e);
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

static void expect_placement(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str node)
{
    if (!ls_feature_enabled(LS_FG_NominatedNodeNameForExpectation))   /* v1.34: none */
        return;
    if (a->expected_node == node)
        return;
    a->expected_node = node;
    if (e->src->nominate)
        e->src->nominate(e->src->ud, qp->pod, node);
}

static void drop_expectation(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    if (a->expected_node && e->src->clear_nomination)
        e->src->clear_nomination(e->src->ud, qp->pod);
}

/* A PreBind that returned Wait for this long fails the binding (upstream's
 * longest wait, Permit's 15 minutes): a plugin waiting for ever left the pod
 * neither bound nor pending, and a simulation polling it for ever. */
enum { PRE_BIND_MAX_WAIT_MS = 15 * 60 * 1000 };

static int pre_bind_waited_too_long(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_cycle *c = &a->cycle;
    char msg[300];
    snprintf(msg, sizeof msg, "running PreBind plugin \"%s\": still waiting after 15m0s, the longest a PreBind may wait",
             ls_str_get(plugin_at(e, qp, LS_EP_PRE_BIND, c->status_plugin)));
    c->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    c->status_code = LS_ERROR;
    return LS_ERROR;
}

/* PreBind, Bind and PostBind. In this single-threaded loop the binding
 * cycle runs right after the scheduling cycle (or when a waiting pod is let go).
 * pre_bind_since: when PreBind first made the pod wait (NOT_WAITED: it has not). */
#define NOT_WAITED UINT64_MAX
static void binding_cycle(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str node, uint64_t pre_bind_since)
{
    enum { PRE_BIND_POLL_MS = 1000 };
    if (ls_env_profile(e, qp->profile)->plugins[LS_EP_PRE_BIND].len &&
        ls_attempt_run_point(e, a, LS_EP_PRE_BIND_PRE_FLIGHT, qp->profile) == LS_SUCCESS)
        expect_placement(e, a, qp, node);
    int ep = LS_EP_PRE_BIND;
    int code = ls_attempt_run_point(e, a, LS_EP_PRE_BIND, qp->profile);
    uint64_t since = pre_bind_since != NOT_WAITED ? pre_bind_since : e->clock_ms;
    if (code == LS_WAIT && e->clock_ms - since >= PRE_BIND_MAX_WAIT_MS)
        code = pre_bind_waited_too_long(e, a, qp);
    if (code == LS_WAIT) {
        /* A PreBind plugin waits on the cluster (VolumeBinding on its claims):
         * the binding cycle goes on from PreBind at the next object change or
         * poll, while other pods are scheduled (upstream's binding goroutine). */
        ls_waiting_pods_add_pre_bind(e->waiting, qp->pod, qp->profile, node, e->clock_ms, PRE_BIND_POLL_MS,
                                     since);
        ls_lua_park(e->lua, qp->profile, qp->pod->id);
        return;
    }
    if (code == LS_SUCCESS) {
        ep = LS_EP_BIND;
        code = extenders_bind(e, a, qp, node);
        if (code < 0) {
            a->bound_in_bind = false;
            code = ls_attempt_run_point(e, a, LS_EP_BIND, qp->profile);
            /* The cluster holds the binding: the pod is bound whatever became of
             * the plugin's call after it (an error, a cut-off right after the
             * request); failing it would requeue a bound pod. */
            if (a->bound_in_bind)
                code = LS_SUCCESS;
        }
        ls_cache_finish_binding(e->cache, qp->pod);
        ls_env_apply_deferred(e);
    }
    if (code != LS_SUCCESS) {
        reject_by_status(e, a, qp, ep);
        unreserve_and_forget(e, a, qp);
        drop_expectation(e, a, qp);
        fail_after_assume(e, a, qp, false);
        return;
    }
    ls_attempt_run_point(e, a, LS_EP_POST_BIND, qp->profile);
    report(e, a, qp, node, LS_SUCCESS, NULL);
    ls_squeue_done(e->queue, qp);
}

/* Reserve, Permit and the binding cycle. In this single-threaded loop the
 * binding cycle runs right after the scheduling cycle. */
static void assume_and_bind(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, const ls_node_info *host)
{
    ls_cycle *c = &a->cycle;
    ls_error err;
    ls_str node = host->node->name;
    c->selected_node = node;
    ls_nominator_delete(e->nominator, qp->pod);
    if (!ls_cache_assume_pod(e->cache, qp->pod, node, &err)) {
        c->status = ls_status_register(LS_ERROR, err.msg, strlen(err.msg));
        fail(e, a, qp, LS_ERROR, err.msg);
        return;
    }
    int ep = LS_EP_RESERVE;
    int code = ls_attempt_run_point(e, a, LS_EP_RESERVE, qp->profile);
    if (code == LS_SUCCESS) {
        ep = LS_EP_PERMIT;
        code = ls_attempt_run_point(e, a, LS_EP_PERMIT, qp->profile);
    }
    if (ep == LS_EP_PERMIT)
        a->permit.result = code == LS_WAIT ? LS_PERMIT_WAITING
                           : code == LS_SUCCESS ? LS_PERMIT_ALLOWED : LS_PERMIT_REJECTED;
    if (code != LS_SUCCESS && code != LS_WAIT && ep == LS_EP_PERMIT)
        a->permit.plugin = plugin_at(e, qp, ep, c->status_plugin);
    if (code == LS_WAIT) {
        /* The binding cycle goes on once every waiting plugin allowed the pod. */
        if (e->src->on_permit_wait) {
            ls_attempt rec = attempt_of(e, a, qp, 0, LS_WAIT, NULL);
            e->src->on_permit_wait(e->src->ud, &rec, c, e->owner);
        }
        ls_waiting_pods_add(e->waiting, qp->pod, qp->profile, c, e->clock_ms);
        ls_lua_park(e->lua, qp->profile, qp->pod->id);
        expect_placement(e, a, qp, node);
        return;
    }
    if (code != LS_SUCCESS) {
        reject_by_status(e, a, qp, ep);
        unreserve_and_forget(e, a, qp);
        fail_after_assume(e, a, qp, true);
        return;
    }
    binding_cycle(e, a, qp, node, NOT_WAITED);
}



static void begin_cycle(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    a->victims.len = 0;
    memset(&a->permit, 0, sizeof a->permit);
    a->expected_node = 0;
    a->scored = false;
    ls_env_refresh_snapshot(e);
    /* As upstream, plugin durations are measured in about one cycle in ten. */
    a->cycle.sample_plugins = e->metrics->registry && e->cycles_started % 10 == 1;
    a->cycle.state_lost = 0;   /* a cut-off of an earlier cycle does not end this one */
    ls_attempt_prepare(e, a, qp, e->snapshot);
}

/* A FitError: PostFilter runs if the profile has any PostFilter plugin, and
 * its message (every plugin's reasons joined, or the Error or Unresolvable
 * that ended it) follows the nodes' one after a space, as upstream's
 * FitError.Error() appends PostFilterMsg. The cycle ends Unschedulable
 * either way; an Error is logged as upstream logs it. */
static void fit_failure(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, char *msg)
{
    ls_cycle *c = &a->cycle;
    c->nominated_node = 0;
    if (ls_env_profile(e, qp->profile)->plugins[LS_EP_POST_FILTER].len) {
        /* Even an Error from PostFilter ends the cycle Unschedulable, with its
         * message after the nodes' one, as upstream logs and reports it. */
        int code = ls_attempt_run_point(e, a, LS_EP_POST_FILTER, qp->profile);
        ls_env_apply_deferred(e);
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
            ls_nominator_add(e->nominator, qp->pod, c->nominated_node);
    }
    fail(e, a, qp, LS_UNSCHEDULABLE, msg);
    free(msg);
}

/* A pod nominated to a node (preemption made room there) tries that node first,
 * alone; if it passes, it is the one feasible node (upstream's
 * evaluateNominatedNode). The round-robin start index does not move. */
static const ls_node_info *evaluate_nominated_node(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str hint)
{
    ls_cycle *c = &a->cycle;
    ls_str nom = ls_nominator_node_of(e->nominator, qp->pod);
    if (!nom)
        nom = hint;
    const ls_node_info *ni = nom ? ls_snapshot_find(e->snapshot, nom) : NULL;
    if (!ni)
        return NULL;
    if (c->prefilter_restricts) {
        bool allowed = false;
        for (uint32_t k = 0; k < c->num_prefilter_nodes; k++)
            allowed = allowed || c->prefilter_nodes[k] == nom;
        if (!allowed)
            return NULL;
    }
    if (ls_lua_filter_one(e->lua, qp->profile, ni) != LS_SUCCESS)
        return NULL;
    c->feasible[0] = ni;
    c->num_feasible = 1;
    a->totals[0] = 0;
    bool rejected = false;
    char *msg = NULL;
    if (!ls_extenders_filter(e->extenders, c, &rejected, &msg)) {
        char ref[600];
        ls_log_error("Evaluation failed on nominated node", "pod",
                     ls_log_kobj(ref, sizeof ref, ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name)), "node",
                     ls_str_get(nom), "err", msg);
        free(msg);
        c->num_feasible = 0;
    }
    if (c->num_feasible == 0)
        return NULL;
    a->permit.via_nominated = true;
    a->permit.via_batch_hint = nom == hint;
    return ni;
}

/* A pod being deleted is not scheduled; upstream records a FailedScheduling
 * event "skip schedule deleting pod: <ns>/<name>" and drops it from the queue. */
void ls_attempt_skip_deleting(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    char msg[600];
    snprintf(msg, sizeof msg, "skip schedule deleting pod: %s/%s", ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name));
    a->cycle.num_all_nodes = 0;
    a->cycle.num_feasible = 0;
    a->victims.len = 0;
    a->expected_node = 0;
    a->cycle.nominated_node = 0;
    report(e, a, qp, 0, LS_UNSCHEDULABLE, msg);
    ls_squeue_done(e->queue, qp);
}

/* The scheduling cycle between OpportunisticBatching's entry and exit: the
 * nominated node when it still fits, else Filter (plugins, then extenders),
 * PreScore, Score and the choice. NULL when it failed: *no_fit when no node
 * fits (a FitError), else the cycle's status holds the error. */
static const ls_node_info *find_host(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str hint, bool *no_fit)
{
    const ls_node_info *nominated = evaluate_nominated_node(e, a, qp, hint);
    if (nominated)
        return nominated;
    if (!ls_attempt_run_filters(e, a, qp) || !ls_attempt_filter_extenders(e, a, qp))
        return NULL;
    if (a->cycle.num_feasible == 0) {
        *no_fit = true;
        return NULL;
    }
    const ls_node_info *host = NULL;
    return ls_attempt_prioritize(e, a, qp, &host) ? host : NULL;
}

void ls_attempt_schedule_pod(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_cycle *c = &a->cycle;
    begin_cycle(e, a, qp);
    const char *ended = ls_worker_marked(ls_str_get(qp->pod->ns), ls_str_get(qp->pod->name));
    if (ended) {   /* an earlier worker of this command died on it (worker/marks.h) */
        fail(e, a, qp, LS_ERROR, ended);
        return;
    }
    if (c->num_all_nodes == 0) {
        fail(e, a, qp, LS_UNRESOLVABLE, "no nodes available to schedule pods");
        return;
    }
    int code = ls_attempt_run_point(e, a, LS_EP_PRE_FILTER, qp->profile);
    if (code != LS_SUCCESS) {
        if (code == LS_ERROR) {
            fail_with_status(e, a, qp);
            return;
        }
        reject_by_status(e, a, qp, LS_EP_PRE_FILTER);
        reject_by_restriction(e, a, qp);
        fit_failure(e, a, qp, ls_fit_error_prefilter(c, ls_status_get(c->status)->message));
        return;
    }
    ls_str hint = 0;
    if (!ls_batch_enter(e, a, qp, &hint)) {
        fail_with_status(e, a, qp);
        return;
    }
    bool no_fit = false;
    const ls_node_info *host = find_host(e, a, qp, hint, &no_fit);
    ls_batch_exit(e, a, qp, hint, host ? host->node->name : 0);
    if (no_fit) {
        reject_by_filters(e, a, qp);
        fit_failure(e, a, qp, ls_fit_error_filter(c));
        return;
    }
    if (!host) {
        fail_with_status(e, a, qp);
        return;
    }
    assume_and_bind(e, a, qp, host);
}

/* Binding cycles of waiting pods that were allowed, failures of rejected ones. */
void ls_attempt_resolve_waiting(ls_sched_env *e, ls_attempt_state *a)
{
    ls_waiting_pod *wp;
    while ((wp = ls_waiting_pods_take_resolved(e->waiting))) {
        ls_qpod *qp = ls_squeue_find(e->queue, wp->pod);
        if (!qp) {
            free(wp);   /* deleted while waiting */
            continue;
        }
        ls_cycle *c = &a->cycle;
        begin_cycle(e, a, qp);
        c->selected_node = wp->node;
        a->permit.waited = true;
        a->permit.wait_ms = e->clock_ms - wp->since_ms;
        a->permit.result = !wp->rejected ? LS_PERMIT_ALLOWED : wp->timed_out ? LS_PERMIT_TIMED_OUT : LS_PERMIT_REJECTED;
        a->permit.plugin = wp->rejected_by;
        if (ls_feature_enabled(LS_FG_NominatedNodeNameForExpectation))
            a->expected_node = wp->node;   /* set when it began to wait */
        ls_lua_resume(e->lua, wp->profile, wp->pod->id);
        if (wp->rejected && wp->preempted) {
            /* A preemption's victim: an Error, so it backs off (upstream v1.36+). */
            unreserve_and_forget(e, a, qp);
            drop_expectation(e, a, qp);
            fail(e, a, qp, LS_ERROR, wp->message);
            qp->retry_error = true;
            ls_env_cluster_event(e, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, wp->pod,
                                       NULL);
        } else if (wp->rejected) {
            unreserve_and_forget(e, a, qp);
            drop_expectation(e, a, qp);
            qp->n_rejectors = 0;
            if (wp->rejected_by)
                qp->rejectors[qp->n_rejectors++] = wp->rejected_by;
            fail(e, a, qp, LS_UNSCHEDULABLE, wp->message);
        } else {
            binding_cycle(e, a, qp, wp->node, wp->at_pre_bind ? wp->since_ms : NOT_WAITED);
        }
        free(wp);
    }
    ls_env_apply_deferred(e);   /* activations an Unreserve asked for */
}

/* ---- asynchronous binding (a real cluster) */

/* Forgets the pod's assumption in the cache (a failure is logged: the pod
 * stays accounted until its events say otherwise). False when the pod was
 * not assumed (bound or deleted meanwhile): nothing to undo. */
static bool forget_if_assumed(ls_sched_env *e, const ls_pod *pod)
{
    ls_error err;
    char ref[600];
    if (!ls_cache_is_assumed(e->cache, pod))
        return false;
    if (!ls_cache_forget_pod(e->cache, pod, &err))
        ls_log_error("Forgetting an assumed pod failed", "pod",
                     ls_log_kobj(ref, sizeof ref, ls_str_get(pod->ns), ls_str_get(pod->name)), "err", err.msg);
    return true;
}

/* The API server refused a binding the binding cycle had handed over: the
 * assumed pod is forgotten and, as after any error, backs off before its next
 * attempt (upstream's handleBindingCycleError). A pod bound or deleted
 * meanwhile is left to the events that say so. */
void ls_attempt_forget_assumed(ls_sched_env *e, const ls_pod *pod)
{
    if (!forget_if_assumed(e, pod))
        return;
    /* The room it held is free again: as upstream's AssignedPodDelete. */
    ls_env_cluster_event(e, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
}

void ls_attempt_bind_failed(ls_sched_env *e, ls_attempt_state *a, const ls_pod *pod, const char *message)
{
    if (!forget_if_assumed(e, pod))
        return;
    int32_t profile = ls_config_profile_index(e->cfg, pod->scheduler_name);
    if (profile < 0)
        return;
    ls_squeue_add(e->queue, pod, (uint32_t)profile);
    ls_qpod *qp = ls_squeue_find(e->queue, pod);
    if (!qp || qp->where != LS_Q_ACTIVE)
        return;
    qp->attempts = 1;
    a->cycle.num_all_nodes = a->cycle.num_feasible = 0;
    a->cycle.nominated_node = 0;
    a->victims.len = 0;
    a->expected_node = 0;
    /* A nomination it carries (set for the binding, or by preemption) goes with
     * the failed binding, as upstream v1.35+ clears it on a binding failure. */
    if (pod->nominated_node_name && e->src->clear_nomination)
        e->src->clear_nomination(e->src->ud, pod);
    if (e->metrics->registry)
        a->attempt_start_ns = ls_sched_metrics_clock_ns();
    fail(e, a, qp, LS_ERROR, message);
}
