/*
 * reload.c: hot reload of profiles and plugins. A complete new framework
 * (configuration, one Lua state per profile, plugins, event registrations) is built beside
 * the running one and checked; only then is it swapped in, between two
 * cycles. The queue, the cache, assumed and waiting pods are kept. If
 * anything fails the running set stays and the failure is counted.
 */
#include "scheduler/scheduler_internal.h"
#include "scheduler/extender_cycle.h"
#include "scheduler/batch.h"
#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool points_of(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    return ls_lua_plugin_points(ud, name, points, err);
}

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
    for (uint32_t i = 0; i < ls_squeue_size(s->env.queue);) {
        ls_qpod *qp = ls_squeue_at(s->env.queue, i);
        int32_t np = ls_config_profile_index(&s->cfg, old_cfg->profiles[qp->profile].scheduler_name);
        if (np < 0 && qp->where != LS_Q_IN_FLIGHT) {
            ls_squeue_delete(s->env.queue, qp->pod);   /* swaps the last pod into slot i */
            continue;
        }
        qp->profile = np < 0 ? qp->profile : (uint32_t)np;
        bool vanished = false;
        for (uint32_t k = 0; k < qp->n_rejectors; k++)
            vanished = vanished || !profile_has_plugin(&s->cfg.profiles[qp->profile], qp->rejectors[k]);
        if (vanished && !qp->gated)
            ls_squeue_activate(s->env.queue, qp->pod);
        i++;
    }
    for (uint32_t i = 0; i < ls_waiting_pods_count(&s->waiting); i++) {
        ls_waiting_pod *wp = ls_waiting_pods_at(&s->waiting, i);
        int32_t np = ls_config_profile_index(&s->cfg, old_cfg->profiles[wp->profile].scheduler_name);
        if (np >= 0)
            wp->profile = (uint32_t)np;
    }
    ls_squeue_rekey(s->env.queue);
}

static void watch_files(ls_scheduler *s)
{
    if (!s->watch)
        return;
    uint32_t n = 0;
    char **files = ls_lua_plugin_files(s->env.lua, &n);
    const char **all = ls_xcalloc(n + 2, sizeof *all);
    uint32_t k = 0;
    if (s->config_path)
        all[k++] = s->config_path;
    for (uint32_t i = 0; i < n; i++)
        all[k++] = files[i];
    ls_file_watch_set(s->watch, all, k);
    for (uint32_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(all);
}

bool ls_scheduler_reload(ls_scheduler *s, ls_error *err)
{
    ls_config cfg;
    ls_lua *lua = NULL;
    ls_event_registration *regs = NULL;
    uint32_t n_regs = 0;
    ls_extenders *extenders = NULL;
    ls_lua_options lo = {.plugin_path = s->opt.plugin_path, .timeout_ms = s->opt.plugin_timeout_ms};
    bool ok = ls_config_load(&cfg, s->config_path, err);
    if (ok) {
        ls_lua_options_from_config(&lo, &cfg);
        lua = ls_lua_new(&s->attempt.cycle, &lo, err);
        ok = lua && ls_config_expand(&cfg, points_of, lua, err) &&
             ls_extenders_build(&cfg, &extenders, err) &&
             ls_lua_build(lua, cfg.profiles, cfg.n_profiles, err) && ls_lua_registrations(lua, &regs, &n_regs, err);
        if (ok)
            ls_extenders_registrations(extenders, cfg.n_profiles, &regs, &n_regs);
    }
    if (!ok) {
        ls_extenders_free(extenders);
        ls_lua_free(lua);
        ls_config_free(&cfg);
        free(regs);
        s->reloads_failed++;
        ls_sched_metrics_reload(&s->metrics, false);
        return false;
    }
    ls_config old_cfg = s->cfg;
    ls_scheduler_publish_faults(s, s->env.lua);
    s->budget_overruns_before += ls_lua_budget_overruns(s->env.lua);
    s->restarts_before += ls_lua_restarts(s->env.lua);
    s->hint_errors_before += ls_lua_hint_errors(s->env.lua);
    ls_lua_free(s->env.lua);
    s->env.lua = lua;
    ls_extenders_free(s->env.extenders);
    s->env.extenders = extenders;
    s->cfg = cfg;
    ls_batches_free(s->env.batches);   /* the batch states belong to the old profiles */
    s->env.batches = NULL;
    ls_squeue_set_registrations(s->env.queue, regs, n_regs);
    free(regs);
    carry_queue_over(s, &old_cfg);
    ls_config_free(&old_cfg);
    s->reloads_ok++;
    ls_sched_metrics_reload(&s->metrics, true);
    ls_sched_metrics_forget_lua_memory(&s->metrics);   /* one series per state: the new ones */
    ls_scheduler_publish_metrics(s);
    s->last_change_ms = s->env.clock_ms;
    watch_files(s);
    return true;
}

void ls_scheduler_watch(ls_scheduler *s, const char *config_path)
{
    free(s->config_path);
    s->config_path = config_path ? ls_xstrdup(config_path) : NULL;
    if (!s->watch)
        s->watch = ls_file_watch_new();
    watch_files(s);
}

bool ls_scheduler_reload_if_changed(ls_scheduler *s, bool forced)
{
    if (!forced && !(s->watch && ls_file_watch_changed(s->watch)))
        return false;
    ls_error err;
    if (ls_scheduler_reload(s, &err)) {
        ls_log_info(0, "Reloaded profiles and plugins", "config", s->config_path ? s->config_path : "<defaults>");
        return true;
    }
    ls_log_error("Reload failed, the running profiles stay", "err", err.msg);
    return false;
}

uint64_t ls_scheduler_reloads(const ls_scheduler *s, bool succeeded)
{
    return succeeded ? s->reloads_ok : s->reloads_failed;
}
