/*
 * policy.c: what an evaluator of pods needs (policy.h): its configuration
 * and Lua runtime built and loaded, freed, and reloaded beside the running
 * set. The scheduler (scheduler.c, reload.c) and the shadow (shadow.c) each
 * hold one.
 */
#include "scheduler/policy.h"
#include "scheduler/batch.h"
#include "scheduler/extender_cycle.h"
#include "luasched/log.h"

#include <stdlib.h>
#include <string.h>

void ls_policy_init(ls_policy *p, ls_config *cfg, const ls_sched_options *opt)
{
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    if (opt)
        p->opt = *opt;
    ls_sched_env *e = &p->env;
    e->cfg = &p->cfg;
    e->opt = &p->opt;
    e->rng = p->opt.seed;
    ls_map_init(&e->preempting);
    ls_vec_init(&e->deferred, sizeof(deferred_event));
    ls_attempt_init(&p->attempt, e);
}

static bool points_of(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    return ls_lua_plugin_points(ud, name, points, err);
}

/* A configuration's Lua runtime (bound to the attempt), its expansion, its
 * extenders, its plugins and its registrations: all or nothing. */
static bool build_set(ls_policy *p, ls_config *cfg, ls_lua **lua, ls_extenders **extenders,
                      ls_event_registration **regs, uint32_t *n_regs, ls_error *err)
{
    ls_lua_options lo = {.plugin_path = p->opt.plugin_path, .timeout_ms = p->opt.plugin_timeout_ms};
    ls_lua_options_from_config(&lo, cfg);   /* the file's luasched: section, below the flags */
    *lua = ls_lua_new(&p->attempt.cycle, &lo, err);
    bool ok = *lua && ls_config_expand(cfg, points_of, *lua, err) && ls_extenders_build(cfg, extenders, err) &&
              ls_lua_build(*lua, cfg->profiles, cfg->n_profiles, err) && ls_lua_registrations(*lua, regs, n_regs, err);
    if (ok)
        ls_extenders_registrations(*extenders, cfg->n_profiles, regs, n_regs);
    return ok;
}

bool ls_policy_load(ls_policy *p, ls_event_registration **regs, uint32_t *n_regs, ls_error *err)
{
    *regs = NULL;
    *n_regs = 0;
    if (build_set(p, &p->cfg, &p->env.lua, &p->env.extenders, regs, n_regs, err))
        return true;
    free(*regs);
    *regs = NULL;
    return false;
}

void ls_policy_free(ls_policy *p)
{
    ls_batches_free(p->env.batches);
    ls_lua_free(p->env.lua);
    ls_extenders_free(p->env.extenders);
    ls_map_free(&p->env.preempting);
    ls_file_watch_free(p->watch);
    free(p->config_path);
    ls_vec_free(&p->env.deferred);
    ls_config_free(&p->cfg);
    ls_attempt_free(&p->attempt);
}

/* ---- reload */

static void watch_files(ls_policy *p)
{
    if (!p->watch)
        return;
    uint32_t n = 0;
    char **files = ls_lua_plugin_files(p->env.lua, &n);
    const char **all = ls_xcalloc(n + 2, sizeof *all);
    uint32_t k = 0;
    if (p->config_path)
        all[k++] = p->config_path;
    for (uint32_t i = 0; i < n; i++)
        all[k++] = files[i];
    ls_file_watch_set(p->watch, all, k);
    for (uint32_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(all);
}

bool ls_policy_reload(ls_policy *p, ls_config *old_cfg, ls_event_registration **regs, uint32_t *n_regs,
                      ls_error *err)
{
    ls_config cfg;
    ls_lua *lua = NULL;
    ls_extenders *extenders = NULL;
    *regs = NULL;
    *n_regs = 0;
    bool ok = ls_config_load(&cfg, p->config_path, err) && build_set(p, &cfg, &lua, &extenders, regs, n_regs, err);
    if (!ok) {
        ls_extenders_free(extenders);
        ls_lua_free(lua);
        ls_config_free(&cfg);
        free(*regs);
        *regs = NULL;
        p->reloads_failed++;
        return false;
    }
    *old_cfg = p->cfg;
    p->budget_overruns_before += ls_lua_budget_overruns(p->env.lua);
    p->restarts_before += ls_lua_restarts(p->env.lua);
    p->hint_errors_before += ls_lua_hint_errors(p->env.lua);
    ls_lua_free(p->env.lua);
    p->env.lua = lua;
    ls_extenders_free(p->env.extenders);
    p->env.extenders = extenders;
    p->cfg = cfg;
    ls_batches_free(p->env.batches);   /* the batch states belong to the old profiles */
    p->env.batches = NULL;
    p->reloads_ok++;
    watch_files(p);
    return true;
}

void ls_policy_watch(ls_policy *p, const char *config_path)
{
    free(p->config_path);
    p->config_path = config_path ? ls_xstrdup(config_path) : NULL;
    if (!p->watch)
        p->watch = ls_file_watch_new();
    watch_files(p);
}

bool ls_policy_watched(const ls_policy *p)
{
    return p->watch != NULL;
}

bool ls_policy_reload_due(ls_policy *p, bool forced)
{
    return forced || (p->watch && ls_file_watch_changed(p->watch));
}

void ls_policy_log_reload(const ls_policy *p, bool ok, const ls_error *err)
{
    if (ok)
        ls_log_info(0, "Reloaded profiles and plugins", "config", p->config_path ? p->config_path : "<defaults>");
    else
        ls_log_error("Reload failed, the running profiles stay", "err", err->msg);
}

/* ---- faults and profiles */

uint64_t ls_policy_budget_overruns(const ls_policy *p)
{
    return p->budget_overruns_before + ls_lua_budget_overruns(p->env.lua);
}

uint64_t ls_policy_restarts(const ls_policy *p)
{
    return p->restarts_before + ls_lua_restarts(p->env.lua);
}

uint64_t ls_policy_hint_errors(const ls_policy *p)
{
    return p->hint_errors_before + ls_lua_hint_errors(p->env.lua);
}

uint32_t ls_policy_profile_for(const ls_policy *p, const ls_pod *pod)
{
    int32_t i = ls_config_profile_index(&p->cfg, pod->scheduler_name);
    return i < 0 ? 0 : (uint32_t)i;
}
