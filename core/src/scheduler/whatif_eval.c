/*
 * whatif_eval.c: one pod's cycle for the what-if API (see whatif_eval.h).
 *
 * It runs the steps of cycle.c's ls_scheduler_schedule_pod that decide the
 * node (PreFilter, Filter over the sampled window, PreScore, Score, the
 * seeded choice among the best) on the evaluator `w`, a scheduler of its own
 * with the live configuration, reading the live scheduler's state: its
 * snapshot (or a changed copy the caller built), object store, nominations
 * and waiting pods. The random state, the round-robin start and the clock are
 * copied from the live scheduler, never written back: the live scheduler's
 * next cycle starts where it would have. Nothing is assumed, reserved,
 * permitted or bound here; PostFilter (preemption) runs on request, with a
 * copy of the nominations and no waiting pods, and its victims are only
 * reported. The evaluator is driven through its environment and attempt
 * (attempt.h), as the stages are.
 */
#include "scheduler/whatif_eval.h"
#include "scheduler/attempt.h"
#include "scheduler/extender_cycle.h"
#include "framework/fit_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PostFilter records victims only where a source could evict them; the
 * evaluator's never does (its preemptions are never issued). */
static bool never_evict(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node, const char *message,
                        ls_error *err)
{
    (void)ud, (void)preemptor, (void)node, (void)message;
    return ls_errorf(err, "a what-if question evicts nothing (pod %s/%s)", ls_str_get(victim->ns),
                     ls_str_get(victim->name));
}

ls_sched_source ls_whatif_source(void)
{
    return (ls_sched_source){.preempt = never_evict};
}

const ls_cycle *ls_whatif_cycle(ls_scheduler *w)
{
    return &ls_scheduler_attempt(w)->cycle;
}

ls_cache *ls_whatif_live_cache(ls_scheduler *live)
{
    return ls_scheduler_env(live)->cache;
}

ls_snapshot *ls_whatif_live_snapshot(ls_scheduler *live)
{
    ls_scheduler_refresh_snapshot(live);
    return ls_scheduler_env(live)->snapshot;
}

int32_t ls_whatif_profile_of(ls_scheduler *w, const ls_pod *pod)
{
    return ls_config_profile_index(ls_scheduler_env(w)->cfg, pod->scheduler_name);
}

void ls_whatif_result_free(ls_whatif_result *r)
{
    free(r->tied);
    free(r->message);
    free(r->victims);
    memset(r, 0, sizeof *r);
}

static void set_message(ls_whatif_result *out, char *msg)
{
    free(out->message);
    out->message = msg;
}

static void plugin_error(const ls_attempt_state *a, ls_whatif_result *out)
{
    const ls_cycle *c = &a->cycle;
    out->verdict = LS_WHATIF_ERROR;
    set_message(out, ls_xstrdup(c->status ? ls_status_get(c->status)->message : "plugin error"));
}

/* The feasible nodes whose total is the best one (the host is among them). */
static void collect_tied(const ls_attempt_state *a, ls_whatif_result *out)
{
    const ls_cycle *c = &a->cycle;
    uint32_t n = ls_cycle_wants_scores(c) ? c->num_feasible : 1;
    int64_t best = a->totals[0];
    for (uint32_t i = 1; i < n; i++)
        best = a->totals[i] > best ? a->totals[i] : best;
    out->tied = ls_xmalloc((size_t)n * sizeof *out->tied);
    out->n_tied = 0;
    for (uint32_t i = 0; i < n; i++)
        if (a->totals[i] == best)
            out->tied[out->n_tied++] = c->feasible[i]->node->name;
}

static void run_cycle(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_whatif_result *out)
{
    ls_cycle *c = &a->cycle;
    if (c->num_all_nodes == 0) {
        out->verdict = LS_WHATIF_UNSCHEDULABLE;
        set_message(out, ls_xstrdup("no nodes available to schedule pods"));
        return;
    }
    int code = ls_attempt_run_point(e, a, LS_EP_PRE_FILTER, qp->profile);
    if (code == LS_ERROR)
        return plugin_error(a, out);
    if (code != LS_SUCCESS) {
        out->verdict = LS_WHATIF_UNSCHEDULABLE;
        set_message(out, ls_fit_error_prefilter(c, ls_status_get(c->status)->message));
        return;
    }
    if (!ls_attempt_run_filters(e, a, qp) || !ls_attempt_filter_extenders(e, a, qp))
        return plugin_error(a, out);
    if (c->num_feasible == 0) {
        out->verdict = LS_WHATIF_UNSCHEDULABLE;
        set_message(out, ls_fit_error_filter(c));
        return;
    }
    const ls_node_info *host = NULL;
    if (!ls_attempt_prioritize(e, a, qp, &host))
        return plugin_error(a, out);
    out->verdict = LS_WHATIF_NODE;
    out->node = host->node->name;
    c->selected_node = out->node;
    collect_tied(a, out);
}

static void fill_attempt(const ls_sched_env *e, const ls_attempt_state *a, ls_qpod *qp, ls_whatif_result *out)
{
    const ls_cycle *c = &a->cycle;
    uint8_t code = out->verdict == LS_WHATIF_NODE ? LS_SUCCESS
                   : out->verdict == LS_WHATIF_ERROR ? LS_ERROR
                   : c->status_code && c->status_code != LS_ERROR ? c->status_code : LS_UNSCHEDULABLE;
    out->attempt = (ls_attempt){.pod = qp->pod, .profile = qp->profile, .node = out->node, .code = code,
                                .message = out->verdict == LS_WHATIF_NODE ? NULL : out->message,
                                .reason = out->verdict == LS_WHATIF_NODE ? NULL
                                          : out->verdict == LS_WHATIF_ERROR ? "SchedulerError" : "Unschedulable",
                                .num_all_nodes = c->num_all_nodes, .num_feasible = c->num_feasible,
                                .total_scores = a->scored ? a->totals : NULL, .time_ms = e->clock_ms,
                                .attempt = 1};
}

void ls_whatif_evaluate(ls_scheduler *w, ls_scheduler *live, ls_snapshot *snap, const ls_pod *pod,
                        ls_whatif_start start, ls_whatif_result *out)
{
    ls_whatif_result_free(out);
    ls_sched_env *e = ls_scheduler_env(w), *le = ls_scheduler_env(live);
    ls_attempt_state *a = ls_scheduler_attempt(w);
    if (!snap) {
        ls_scheduler_refresh_snapshot(live);
        snap = le->snapshot;
    }
    if (start == LS_WHATIF_FROM_LIVE) {
        e->rng = le->rng;
        e->next_start_index = le->next_start_index;
    }
    e->clock_ms = le->clock_ms;
    int32_t profile = ls_whatif_profile_of(w, pod);
    ls_qpod qp = {.pod = pod, .profile = profile < 0 ? 0 : (uint32_t)profile};
    /* read-only for Filter and Score: the live nominations, waiting pods and objects */
    ls_nominator *own_nominator = e->nominator;
    ls_waiting_pods *own_waiting = e->waiting;
    ls_object_store *own_objects = e->objects;
    e->nominator = le->nominator;
    e->waiting = le->waiting;
    e->objects = le->objects;
    a->cycle.objects = le->objects;
    a->victims.len = 0;
    a->scored = false;
    ls_attempt_prepare(e, a, &qp, snap);
    run_cycle(e, a, &qp, out);
    e->nominator = own_nominator;
    e->waiting = own_waiting;
    e->objects = own_objects;
    fill_attempt(e, a, &qp, out);
}

/* The live nominations, copied: PostFilter may clear some. */
static void copy_nominations(ls_nominator *to, const ls_nominator *from, const ls_cycle *c)
{
    for (uint32_t i = 0; i < c->num_all_nodes; i++) {
        ls_str node = c->all_nodes[i]->node->name;
        uint32_t n = ls_nominator_count(from, node);
        for (uint32_t k = 0; k < n; k++)
            ls_nominator_add(to, ls_nominator_at(from, node, k), node);
    }
}

void ls_whatif_preempt(ls_scheduler *w, ls_scheduler *live, ls_whatif_result *out)
{
    ls_sched_env *e = ls_scheduler_env(w);
    ls_attempt_state *a = ls_scheduler_attempt(w);
    ls_cycle *c = &a->cycle;
    uint32_t profile = c->profile;
    if (out->verdict != LS_WHATIF_UNSCHEDULABLE || !e->cfg->profiles[profile].plugins[LS_EP_POST_FILTER].len)
        return;
    ls_nominator_free(e->nominator);
    ls_nominator_init(e->nominator);
    copy_nominations(e->nominator, ls_scheduler_env(live)->nominator, c);
    c->nominated_node = 0;
    a->victims.len = 0;
    int code = ls_attempt_run_point(e, a, LS_EP_POST_FILTER, profile);
    const char *post = c->status ? ls_status_get(c->status)->message : "";
    if (*post) {
        size_t n = strlen(out->message ? out->message : "") + strlen(post) + 2;
        char *joined = ls_xmalloc(n);
        snprintf(joined, n, "%s %s", out->message ? out->message : "", post);
        set_message(out, joined);
        out->attempt.message = out->message;
    }
    if (code != LS_ERROR) {
        out->nominated_node = c->nominated_node;
        out->n_victims = a->victims.len;
        out->victims = ls_xmalloc((size_t)(out->n_victims + 1) * sizeof *out->victims);
        if (out->n_victims)   /* no victims: the vector may hold no array at all */
            memcpy(out->victims, a->victims.data, (size_t)out->n_victims * sizeof *out->victims);
        out->attempt.nominated_node = out->nominated_node;
        out->attempt.n_victims = out->n_victims;
        out->attempt.victims = out->victims;
    }
    a->victims.len = 0;
    a->preemptor = NULL;   /* the next question chooses afresh */
    a->preempt_node = 0;
    ls_map_remove(&e->preempting, c->pod->id + 1);
    ls_nominator_free(e->nominator);
    ls_nominator_init(e->nominator);
}
