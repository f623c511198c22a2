/*
 * attempt.c: one attempt's life (its buffers grown to the node count), its
 * setup for a pod on a snapshot, the timed run of one extension point, and
 * the stages of the scheduling cycle that the cycle (cycle.c), the batch
 * (batch.c) and the shadow (shadow.c) share: Filter over the sampled window,
 * PreScore / Score / the weighted totals, and the seeded choice of the host.
 */
#include "scheduler/attempt.h"

#include <stdlib.h>
#include <string.h>

void ls_attempt_init(ls_attempt_state *a, ls_sched_env *env)
{
    memset(a, 0, sizeof *a);
    a->env = env;
    a->cycle.owner = a;
    ls_vec_init(&a->victims, sizeof(const ls_pod *));
}

void ls_attempt_free(ls_attempt_state *a)
{
    ls_vec_free(&a->victims);
    free(a->candidates);
    free(a->feasible);
    free(a->node_status);
    free(a->filter_trace);
    free(a->scores);
    free(a->raw_scores);
    free(a->totals);
    free(a->score_skipped);
    free(a->cycle.prefilter_nodes);
}

static void ensure_buffers(ls_sched_env *e, ls_attempt_state *a, uint32_t num_nodes, uint32_t num_filter, uint32_t num_score)
{
    if (num_nodes > a->buf_nodes) {
        a->buf_nodes = num_nodes;
        a->candidates = ls_xrealloc(a->candidates, num_nodes * sizeof *a->candidates);
        a->feasible = ls_xrealloc(a->feasible, num_nodes * sizeof *a->feasible);
        a->node_status = ls_xrealloc(a->node_status, num_nodes * sizeof *a->node_status);
        a->totals = ls_xrealloc(a->totals, num_nodes * sizeof *a->totals);
    }
    uint32_t need = num_nodes * (num_score ? num_score : 1);
    if (need > a->scores_cap) {
        a->scores_cap = need;
        a->scores = ls_xrealloc(a->scores, need * sizeof *a->scores);
        a->raw_scores = ls_xrealloc(a->raw_scores, need * sizeof *a->raw_scores);
    }
    a->score_skipped = ls_xrealloc(a->score_skipped, num_score + 1);
    if (e->opt->trace && num_nodes * num_filter > a->trace_cap) {
        a->trace_cap = num_nodes * num_filter;
        a->filter_trace = ls_xrealloc(a->filter_trace, a->trace_cap * sizeof *a->filter_trace);
    }
}

int ls_attempt_run_point(ls_sched_env *e, ls_attempt_state *a, int ep, uint32_t profile)
{
    if (!e->metrics || !e->metrics->registry)   /* a shadow has no metrics of its own */
        return ls_lua_run(e->lua, ep, profile);
    uint64_t start = ls_sched_metrics_clock_ns();
    int code = ls_lua_run(e->lua, ep, profile);
    double seconds = (double)(ls_sched_metrics_clock_ns() - start) * 1e-9;
    const char *name = ls_str_get(e->cfg->profiles[profile].scheduler_name);
    ls_sched_metrics_extension_point(e->metrics, ls_ext_point_info_of(ep)->name, (uint8_t)code, name, seconds);
    if (ep == LS_EP_POST_FILTER)
        ls_sched_metrics_preemption(e->metrics, a->victims.len);
    return code;
}

bool ls_attempt_run_filters(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_cycle *c = &a->cycle;
    const ls_profile *prof = ls_env_profile(e, qp->profile);
    int32_t pct = prof->percentage_of_nodes_to_score >= 0 ? prof->percentage_of_nodes_to_score
                                                          : e->cfg->percentage_of_nodes_to_score;
    bool scoring = prof->plugins[LS_EP_SCORE].len > 0 || ls_extenders_have_prioritizer(e->extenders);
    ls_cycle_prepare_filter(c, a->candidates, pct, scoring || ls_extenders_have_filter(e->extenders),
                            e->next_start_index);
    if (c->num_candidates && ls_attempt_run_point(e, a, LS_EP_FILTER, qp->profile) != LS_SUCCESS)
        return false;
    e->next_start_index = ls_cycle_advance_start(c, e->next_start_index);
    return true;
}

const ls_node_info *ls_attempt_select_host(ls_sched_env *e, ls_attempt_state *a)
{
    return ls_cycle_select_host(&a->cycle, a->totals, &e->rng);
}

bool ls_attempt_total_scores(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    const ls_vec *plugins = &ls_env_profile(e, qp->profile)->plugins[LS_EP_SCORE];
    if (!ls_cycle_total_scores(&a->cycle, (const ls_plugin_ref *)plugins->data, (uint32_t)plugins->len,
                               e->extenders != NULL, a->totals))
        return false;
    ls_extenders_prioritize(e->extenders, &a->cycle, a->totals);
    a->scored = true;
    return true;
}

bool ls_attempt_prioritize(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, const ls_node_info **host)
{
    ls_cycle *c = &a->cycle;
    if (!ls_cycle_wants_scores(c)) {
        a->totals[0] = 0;
        a->scored = true;
        *host = c->feasible[0];
        return true;
    }
    if (ls_attempt_run_point(e, a, LS_EP_PRE_SCORE, qp->profile) != LS_SUCCESS ||
        ls_attempt_run_point(e, a, LS_EP_SCORE, qp->profile) != LS_SUCCESS || !ls_attempt_total_scores(e, a, qp))
        return false;
    *host = ls_attempt_select_host(e, a);
    return true;
}

/* Explain's trace starts empty (a PreFilter rejection leaves it so; the
 * nominated node's Filter writes that node's row; a full pass its own). */
static void clear_trace(ls_cycle *c)
{
    if (c->trace && c->filter_trace && c->num_filter_plugins)
        memset(c->filter_trace, 0, (size_t)c->num_all_nodes * c->num_filter_plugins * sizeof *c->filter_trace);
}

void ls_attempt_prepare(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_snapshot *snapshot)
{
    ls_cycle *c = &a->cycle;
    a->verdict_code = LS_SUCCESS;
    c->nominated_node = 0;
    const ls_profile *prof = ls_env_profile(e, qp->profile);
    c->pod = qp->pod;
    c->profile = qp->profile;
    c->snapshot = snapshot;
    c->num_all_nodes = ls_snapshot_num_nodes(snapshot);
    c->all_nodes = ls_snapshot_list(snapshot);
    c->num_filter_plugins = prof->plugins[LS_EP_FILTER].len;
    c->num_score_plugins = prof->plugins[LS_EP_SCORE].len;
    ensure_buffers(e, a, c->num_all_nodes, c->num_filter_plugins, c->num_score_plugins);
    c->feasible = a->feasible;
    c->node_status = a->node_status;
    c->scores = a->scores;
    c->raw_scores = a->raw_scores;
    c->score_skipped = a->score_skipped;
    c->trace = e->opt->trace;
    c->filter_trace = a->filter_trace;
    clear_trace(c);
    c->num_feasible = c->num_processed = 0;
    c->keep_raw_scores = 0;
    c->prefilter_restricts = 0;
    c->prefilter_absent_status = 0;
    c->selected_node = 0;
    ls_extenders_begin_cycle(e->extenders, c->num_all_nodes, c->trace);
}
