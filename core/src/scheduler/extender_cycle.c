/*
 * extender_cycle.c: where the scheduling cycle meets the HTTP extenders:
 * building them with the scheduler (and telling NodeResourcesFit which
 * resources they manage), their Filter after the Filter plugins (rejected
 * nodes and errors as upstream's findNodesThatFitPod), and the functions
 * DefaultPreemption calls through the FFI for preemption's extender step.
 */
#include "scheduler/extender_internal.h"
#include "scheduler/extender_cycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ls_extenders_build(ls_config *cfg, ls_extenders **out, ls_error *err)
{
    err->msg[0] = '\0';
    *out = ls_extenders_new(cfg, err);
    if (!*out && err->msg[0])
        return false;
    ls_extenders_apply_ignored_resources(cfg, cfg->profiles, cfg->n_profiles);
    return true;
}

bool ls_attempt_filter_extenders(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp)
{
    ls_cycle *c = &a->cycle;
    bool rejected = false;
    char *msg = NULL;
    if (!ls_extenders_filter(e->extenders, c, &rejected, &msg)) {
        c->status = ls_status_register(LS_ERROR, msg, strlen(msg));
        c->status_code = LS_ERROR;
        free(msg);
        return false;
    }
    if (rejected && qp->n_rejectors < LS_MAX_REJECTORS) {
        /* upstream puts ExtenderName in UnschedulablePlugins: any event requeues */
        ls_str name = ls_intern_cstr(LS_EXTENDER_NAME);
        bool seen = false;
        for (uint32_t i = 0; i < qp->n_rejectors; i++)
            seen = seen || qp->rejectors[i] == name;
        if (!seen)
            qp->rejectors[qp->n_rejectors++] = name;
    }
    return true;
}

/* ---- preemption, for DefaultPreemption */

static ls_extenders *extenders_of(const ls_cycle *cycle)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e ? e->extenders : NULL;
}

uint32_t ls_cycle_preempt_extenders(const ls_cycle *cycle)
{
    ls_extenders *x = extenders_of(cycle);
    return x ? ls_extenders_preempters(x, cycle->pod) : 0;
}

void ls_cycle_extender_candidates_reset(const ls_cycle *cycle)
{
    ls_extenders *x = extenders_of(cycle);
    if (x)
        ls_extenders_candidates_reset(x);
}

void ls_cycle_extender_candidate_add(const ls_cycle *cycle, ls_str node, int64_t pdb_violations)
{
    ls_extenders *x = extenders_of(cycle);
    if (x)
        ls_extenders_candidate_add(x, node, pdb_violations);
}

void ls_cycle_extender_victim_add(const ls_cycle *cycle, const ls_pod *victim)
{
    ls_extenders *x = extenders_of(cycle);
    if (x)
        ls_extenders_victim_add(x, victim);
}

int ls_cycle_extenders_process_preemption(const ls_cycle *cycle, char *errbuf, size_t errlen)
{
    ls_extenders *x = extenders_of(cycle);
    char *msg = NULL;
    ls_critical_enter();
    int n = ls_extenders_process_preemption(x, cycle, &msg);
    ls_critical_leave();
    if (n < 0) {
        snprintf(errbuf, errlen, "%s", msg);
        free(msg);
    }
    return n;
}

ls_str ls_cycle_extender_candidate(const ls_cycle *cycle, uint32_t i, int64_t *pdb_violations, uint32_t *n_victims)
{
    ls_extenders *x = extenders_of(cycle);
    *pdb_violations = 0;
    *n_victims = 0;
    return x ? ls_extenders_candidate(x, i, pdb_violations, n_victims) : 0;
}

const ls_pod *ls_cycle_extender_victim(const ls_cycle *cycle, uint32_t i, uint32_t k)
{
    ls_extenders *x = extenders_of(cycle);
    return x ? ls_extenders_victim(x, i, k) : NULL;
}

uint32_t ls_extenders_count(const ls_extenders *x)
{
    return x ? x->n : 0;
}
