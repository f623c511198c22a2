/*
 * reload.c: hot reload of profiles and plugins. The policy (policy.c)
 * builds a complete new framework (configuration, one Lua state per profile,
 * plugins, event registrations) beside the running one and checks it; only
 * then is it swapped in, between two cycles, and the queue takes the new
 * registrations. The queue, the cache, assumed and waiting pods are kept. If
 * anything fails the running set stays and the failure is counted.
 */
#include "scheduler/scheduler_internal.h"
#include <stdlib.h>

static bool profile_has_plugin(const ls_profile *p, ls_str plugin)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        for (uint32_t i = 0; i < p->plugins[ep].len; i++)
            if (LS_VEC_AT(&p->plugins[ep], ls_plugin_ref, i).name == plugin)
                return true;
    return false;
}

/* Queued pods follow their profile by scheduler name into the new set; a pod
 * whose profile is gone is no longer ours; a pod rejected by a plugin that is
 * gone gets another try at once. */
static void carry_queue_over(ls_scheduler *s, const ls_config *old_cfg)
{
    for (uint32_t i = 0; i < ls_squeue_size(s->policy.env.queue);) {
        ls_qpod *qp = ls_squeue_at(s->policy.env.queue, i);
        int32_t np = ls_config_profile_index(&s->policy.cfg, old_cfg->profiles[qp->profile].scheduler_name);
        if (np < 0 && qp->where != LS_Q_IN_FLIGHT) {
            ls_squeue_delete(s->policy.env.queue, qp->pod);   /* swaps the last pod into slot i */
            continue;
        }
        qp->profile = np < 0 ? qp->profile : (uint32_t)np;
        bool vanished = false;
        for (uint32_t k = 0; k < qp->n_rejectors; k++)
            vanished = vanished || !profile_has_plugin(&s->policy.cfg.profiles[qp->profile], qp->rejectors[k]);
        if (vanished && !qp->gated)
            ls_squeue_activate(s->policy.env.queue, qp->pod);
        i++;
    }
    for (uint32_t i = 0; i < ls_waiting_pods_count(&s->waiting); i++) {
        ls_waiting_pod *wp = ls_waiting_pods_at(&s->waiting, i);
        int32_t np = ls_config_profile_index(&s->policy.cfg, old_cfg->profiles[wp->profile].scheduler_name);
        if (np >= 0)
            wp->profile = (uint32_t)np;
    }
    ls_squeue_rekey(s->policy.env.queue);
}

bool ls_scheduler_reload(ls_scheduler *s, ls_error *err)
{
    ls_config old_cfg;
    ls_event_registration *regs;
    uint32_t n_regs;
    /* the faults the outgoing Lua states counted reach the metrics before
     * ls_policy_reload frees those states */
    ls_scheduler_publish_faults(s, s->policy.env.lua);
    if (!ls_policy_reload(&s->policy, &old_cfg, &regs, &n_regs, err)) {
        ls_sched_metrics_reload(&s->metrics, false);
        return false;
    }
    ls_squeue_set_registrations(s->policy.env.queue, regs, n_regs);
    free(regs);
    carry_queue_over(s, &old_cfg);
    ls_config_free(&old_cfg);
    ls_sched_metrics_reload(&s->metrics, true);
    ls_sched_metrics_forget_lua_memory(&s->metrics);   /* one series per state: the new ones */
    ls_scheduler_publish_metrics(s);
    s->last_change_ms = s->policy.env.clock_ms;
    return true;
}

void ls_scheduler_watch(ls_scheduler *s, const char *config_path)
{
    ls_policy_watch(&s->policy, config_path);
}

bool ls_scheduler_reload_if_changed(ls_scheduler *s, bool forced)
{
    if (!ls_policy_reload_due(&s->policy, forced))
        return false;
    ls_error err;
    bool ok = ls_scheduler_reload(s, &err);
    ls_policy_log_reload(&s->policy, ok, &err);
    return ok;
}

uint64_t ls_scheduler_reloads(const ls_scheduler *s, bool succeeded)
{
    return succeeded ? s->policy.reloads_ok : s->policy.reloads_failed;
}
