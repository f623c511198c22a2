/*
 * shadow.c: shadow policies (`run --shadow`, `simulate --shadow`). A policy
 * of its own (policy.h: a candidate configuration in its own Lua state under
 * the same budgets, its environment and attempt; no queue, cache, metrics or
 * source of its own) evaluates every pod the live scheduler attempts, right
 * after the live cycle and on the live snapshot, object store and
 * nominations: PreFilter, Filter, PreScore, Score and the seeded choice
 * among the best nodes. It never assumes, reserves, permits or binds, and
 * its PostFilter (preemption) is not run: an empty feasible set is its
 * "unschedulable" verdict. The two verdicts are compared and counted per
 * shadow profile; a failure of the shadow (a plugin's error, a budget
 * overrun) is counted and never reaches the live decision.
 */
#include "scheduler/shadow.h"
#include "scheduler/policy.h"
#include "luasched/log.h"

#include <stdlib.h>
#include <string.h>

typedef struct shadow_stat {
    ls_str profile;
    ls_shadow_stats counts;
} shadow_stat;

typedef struct ls_shadow ls_shadow;
struct ls_shadow {
    ls_policy policy;   /* the candidate: its configuration, Lua runtime, reload, environment and attempt */
    ls_vec stats;   /* shadow_stat, one per shadow profile seen, in order of first use */
    ls_metric_family *evaluations, *disagreements, *failures;
};

enum { VERDICT_NODE, VERDICT_UNSCHEDULABLE, VERDICT_ERROR };

/* ---- counting */

static shadow_stat *stat_of(ls_shadow *sh, ls_str profile)
{
    for (uint32_t i = 0; i < sh->stats.len; i++)
        if (LS_VEC_AT(&sh->stats, shadow_stat, i).profile == profile)
            return &LS_VEC_AT(&sh->stats, shadow_stat, i);
    shadow_stat *st = ls_vec_push(&sh->stats);
    st->profile = profile;
    st->counts.profile = ls_str_get(profile);
    return st;
}

/* Every series of a profile from zero, as client_golang shows counters. */
static void publish_zero(ls_shadow *sh, const char *profile)
{
    if (!sh->evaluations)
        return;
    const char *one[] = {profile};
    const char *node[] = {profile, "node"}, *sched[] = {profile, "schedulability"};
    ls_metrics_add(sh->evaluations, one, 0);
    ls_metrics_add(sh->failures, one, 0);
    ls_metrics_add(sh->disagreements, node, 0);
    ls_metrics_add(sh->disagreements, sched, 0);
}

void ls_shadow_attach_metrics(ls_shadow *sh, ls_metrics *registry)
{
    sh->evaluations = sh->disagreements = sh->failures = NULL;
    if (!registry)
        return;
    const char *profile[] = {"profile", NULL}, *kind[] = {"profile", "kind", NULL};
    sh->evaluations = ls_metrics_family(registry, "luasched_shadow_evaluations_total",
                                        "Pods the shadow configuration evaluated (one per live scheduling attempt).",
                                        LS_METRIC_COUNTER, profile, NULL, 0);
    sh->disagreements = ls_metrics_family(
        registry, "luasched_shadow_disagreements_total",
        "Attempts where the shadow configuration chose another node (kind node) or another schedulability "
        "(kind schedulability) than the live one.",
        LS_METRIC_COUNTER, kind, NULL, 0);
    sh->failures = ls_metrics_family(registry, "luasched_shadow_failures_total",
                                     "Shadow evaluations that ended in an error (a plugin's error, a budget overrun).",
                                     LS_METRIC_COUNTER, profile, NULL, 0);
    const ls_config *cfg = &sh->policy.cfg;
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        publish_zero(sh, ls_str_get(cfg->profiles[i].scheduler_name));
}

static void count(ls_shadow *sh, ls_str profile, int live, int shadow)
{
    ls_shadow_stats *c = &stat_of(sh, profile)->counts;
    const char *name = ls_str_get(profile);
    const char *one[] = {name};
    c->evaluations++;
    if (sh->evaluations)
        ls_metrics_add(sh->evaluations, one, 1);
    if (shadow == VERDICT_ERROR) {
        c->failures++;
        if (sh->failures)
            ls_metrics_add(sh->failures, one, 1);
        return;
    }
    const char *kind = NULL;
    if (live != shadow) {
        c->schedulability_disagreements++;
        kind = "schedulability";
    } else if (live == VERDICT_NODE) {
        return;   /* the caller counts node disagreements */
    }
    if (kind && sh->disagreements) {
        const char *labels[] = {name, kind};
        ls_metrics_add(sh->disagreements, labels, 1);
    }
}

static void count_node_disagreement(ls_shadow *sh, ls_str profile)
{
    stat_of(sh, profile)->counts.node_disagreements++;
    if (sh->disagreements) {
        const char *labels[] = {ls_str_get(profile), "node"};
        ls_metrics_add(sh->disagreements, labels, 1);
    }
}

/* ---- evaluation */

static int run_cycle(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str *node)
{
    ls_cycle *c = &a->cycle;
    if (c->num_all_nodes == 0)
        return VERDICT_UNSCHEDULABLE;
    int code = ls_attempt_run_point(e, a, LS_EP_PRE_FILTER, qp->profile);
    if (code != LS_SUCCESS)
        return code == LS_ERROR ? VERDICT_ERROR : VERDICT_UNSCHEDULABLE;
    if (!ls_attempt_run_filters(e, a, qp))
        return VERDICT_ERROR;
    if (c->num_feasible == 0)
        return VERDICT_UNSCHEDULABLE;
    const ls_node_info *host = NULL;
    if (!ls_attempt_prioritize(e, a, qp, &host))
        return VERDICT_ERROR;
    *node = host->node->name;
    return VERDICT_NODE;
}

/* The shadow's cycle sees the live snapshot, objects and nominations for as
 * long as it runs (it only reads them: no PostFilter, no Reserve); it has
 * none of its own. */
static int evaluate(ls_shadow *sh, const ls_sched_env *live, ls_qpod *qp, ls_str *node)
{
    ls_sched_env *e = &sh->policy.env;
    ls_attempt_state *a = &sh->policy.attempt;
    e->nominator = live->nominator;
    a->cycle.objects = live->objects;
    ls_attempt_prepare(e, a, qp, live->snapshot);
    int verdict = run_cycle(e, a, qp, node);
    e->nominator = NULL;
    a->cycle.objects = NULL;
    return verdict;
}

static void log_outcome(const ls_pod *pod, const char *profile, const char *what, ls_str live_node, ls_str node,
                        const char *err)
{
    if (!ls_log_enabled(2))
        return;
    char ref[600];
    ls_log_kobj(ref, sizeof ref, ls_str_get(pod->ns), ls_str_get(pod->name));
    if (err) {
        ls_log_info(2, what, "pod", ref, "profile", profile, "err", err);
        return;
    }
    ls_log_info(2, what, "pod", ref, "profile", profile, "node", live_node ? ls_str_get(live_node) : "<none>",
                "shadowNode", node ? ls_str_get(node) : "<none>");
}

void ls_shadow_after_attempt(ls_shadow *sh, const ls_sched_env *live_env, const ls_attempt_state *live_attempt,
                             const ls_pod *pod)
{
    ls_str live_node = live_attempt->cycle.selected_node;
    int live = live_node ? VERDICT_NODE
               : ls_code_is_rejected(live_attempt->verdict_code) ? VERDICT_UNSCHEDULABLE : VERDICT_ERROR;
    if (live == VERDICT_ERROR)
        return;   /* no live verdict to compare with */
    ls_qpod qp = {.pod = pod, .profile = ls_policy_profile_for(&sh->policy, pod)};
    ls_str profile = sh->policy.cfg.profiles[qp.profile].scheduler_name;
    ls_str node = 0;
    int verdict = evaluate(sh, live_env, &qp, &node);
    count(sh, profile, live, verdict);
    const char *name = ls_str_get(profile);
    if (verdict == VERDICT_ERROR) {
        const ls_cycle *c = &sh->policy.attempt.cycle;
        const char *msg = c->status ? ls_status_get(c->status)->message : "plugin error";
        log_outcome(pod, name, "Shadow evaluation failed", 0, 0, msg);
    } else if (verdict != live) {
        log_outcome(pod, name, "Shadow disagrees on schedulability", live_node, node, NULL);
    } else if (verdict == VERDICT_NODE && node != live_node) {
        count_node_disagreement(sh, profile);
        log_outcome(pod, name, "Shadow chose another node", live_node, node, NULL);
    }
}

/* ---- life */

ls_shadow *ls_shadow_new(ls_config *cfg, const ls_sched_options *opt, const char *watch_path,
                         struct ls_metrics *registry, ls_error *err)
{
    ls_shadow *sh = ls_xcalloc(1, sizeof *sh);
    ls_vec_init(&sh->stats, sizeof(shadow_stat));
    ls_policy_init(&sh->policy, cfg, opt);
    ls_event_registration *regs;   /* checked as the live scheduler checks its own; no queue uses them */
    uint32_t n_regs;
    if (!ls_policy_load(&sh->policy, &regs, &n_regs, err)) {
        ls_shadow_free(sh);
        return NULL;
    }
    free(regs);
    if (sh->policy.env.extenders) {
        ls_shadow_free(sh);
        ls_errorf(err, "the shadow configuration has extenders: a shadow evaluates Lua plugins only "
                       "(extenders would be sent every pod twice)");
        return NULL;
    }
    if (watch_path)
        ls_policy_watch(&sh->policy, watch_path);
    const ls_config *c = &sh->policy.cfg;
    for (uint32_t i = 0; i < c->n_profiles; i++)
        stat_of(sh, c->profiles[i].scheduler_name);
    ls_shadow_attach_metrics(sh, registry);
    return sh;
}

void ls_shadow_free(ls_shadow *sh)
{
    if (!sh)
        return;
    ls_policy_free(&sh->policy);
    ls_vec_free(&sh->stats);
    free(sh);
}

void ls_shadow_reload_if_changed(ls_shadow *sh, bool forced)
{
    if (!sh || !ls_policy_watched(&sh->policy) || !ls_policy_reload_due(&sh->policy, forced))
        return;
    ls_config old_cfg;
    ls_event_registration *regs;
    uint32_t n_regs;
    ls_error err;
    bool ok = ls_policy_reload(&sh->policy, &old_cfg, &regs, &n_regs, &err);
    ls_policy_log_reload(&sh->policy, ok, &err);
    if (!ok)
        return;
    free(regs);
    ls_config_free(&old_cfg);
    const ls_config *cfg = &sh->policy.cfg;
    for (uint32_t i = 0; i < cfg->n_profiles; i++) {
        stat_of(sh, cfg->profiles[i].scheduler_name);
        publish_zero(sh, ls_str_get(cfg->profiles[i].scheduler_name));
    }
}

uint32_t ls_shadow_stats_of(const ls_shadow *sh, ls_shadow_stats *out, uint32_t cap)
{
    if (!sh)
        return 0;
    uint32_t n = sh->stats.len;
    for (uint32_t i = 0; i < n && i < cap; i++)
        out[i] = LS_VEC_AT(&sh->stats, shadow_stat, i).counts;
    return n < cap ? n : cap;
}
