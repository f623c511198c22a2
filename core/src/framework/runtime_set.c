/*
 * runtime_set.c: the public Lua runtime (ls_lua): one Lua state per profile.
 *
 * Each profile's plugins run in a state of their own (runtime.c's ls_rt,
 * built with that one profile, whose index inside it is 0): a plugin of one
 * profile cannot reach another profile's plugins or tables, each state has
 * its own memory limit (the profile's `luasched: {memoryLimitBytes}`, else
 * its share of the configuration's: the profiles without a limit of their
 * own split it evenly, so that plugins of N profiles do not hold N times
 * the limit: two profiles of a hoarding plugin reached 2.5 GB, attacker
 * round 4), and a state cut off (time budget, memory limit) is
 * rebuilt alone while the other profiles keep scheduling. Before the
 * profiles are built (plugin hooks while the configuration is expanded,
 * `luasched check`) calls go to a loader state, freed once they are built
 * (with a single profile it becomes that profile's state).
 * The states share one watchdog: one call into Lua runs at a time.
 *
 * Queueing hint ids are global: state i's local id h (1-based) is
 * (h - 1) * n + i + 1, 0 stays "no hint".
 */
#include "framework/runtime_internal.h"
#include "worker/confine.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

struct ls_lua {
    ls_cycle *cycle;
    ls_lua_options opt;              /* the given options; paths owned below */
    char *lua_path, *plugin_path;
    ls_watchdog *watchdog;
    ls_rt *loader;                   /* NULL once the profiles are built (made again when needed) */
    ls_rt **states;                  /* profile i's state */
    uint32_t n;
    uint32_t sharing;                /* profiles being built that share the configuration's limit (0: none yet) */
    const ls_profile *profiles;
    /* faults counted by states a later build replaced */
    uint64_t overruns_before, restarts_before, hint_errors_before;
    ls_fault_tally tally;            /* every state's cut-offs and rebuilds by plugin, until drained */
};

static char *dup_or_null(const char *s)
{
    return s ? ls_xstrdup(s) : NULL;
}

/* A new state counts its cut-offs in the set's tally. */
static ls_rt *with_tally(ls_lua *set, ls_rt *rt)
{
    if (rt)
        rt->tally = &set->tally;
    return rt;
}

ls_lua *ls_lua_new(ls_cycle *cycle, const ls_lua_options *opt, ls_error *err)
{
    /* a forked command's worker gives up writing files, sockets and exec
     * before any plugin code runs (worker/confine.h) */
    if (!ls_worker_confine_due(err))
        return NULL;
    ls_lua *set = ls_xcalloc(1, sizeof *set);
    set->cycle = cycle;
    if (opt)
        set->opt = *opt;
    set->lua_path = dup_or_null(set->opt.lua_path);
    set->plugin_path = dup_or_null(set->opt.plugin_path);
    set->opt.lua_path = set->lua_path;
    set->opt.plugin_path = set->plugin_path;
    set->watchdog = ls_watchdog_new();
    if (!set->watchdog) {
        ls_errorf(err, "cannot start the Lua watchdog thread");
        ls_lua_free(set);
        return NULL;
    }
    set->loader = with_tally(set, ls_rt_new(cycle, &set->opt, set->watchdog, err));
    if (!set->loader) {
        ls_lua_free(set);
        return NULL;
    }
    return set;
}

static void free_states(ls_lua *set)
{
    for (uint32_t i = 0; i < set->n; i++) {
        if (!set->states[i])
            continue;
        set->overruns_before += ls_rt_budget_overruns(set->states[i]);
        set->restarts_before += ls_rt_restarts(set->states[i]);
        set->hint_errors_before += ls_rt_hint_errors(set->states[i]);
        ls_rt_free(set->states[i]);
    }
    free(set->states);
    set->states = NULL;
    set->n = 0;
}

void ls_lua_free(ls_lua *set)
{
    if (!set)
        return;
    free_states(set);
    ls_rt_free(set->loader);
    ls_watchdog_free(set->watchdog);   /* after the states: none is in a call */
    ls_fault_tally_free(&set->tally);
    free(set->lua_path);
    free(set->plugin_path);
    free(set);
}

/* The loader state, opened again if the profiles' build freed it. */
static ls_rt *loader(ls_lua *set, ls_error *err)
{
    if (!set->loader)
        set->loader = with_tally(set, ls_rt_new(set->cycle, &set->opt, set->watchdog, err));
    return set->loader;
}

/* Profile p's memory limit: its own when set, else its share of the
 * configuration's (split evenly among the profiles without one). */
static ls_lua_options profile_options(const ls_lua *set, const ls_profile *p)
{
    ls_lua_options o = set->opt;
    if (p->memory_limit_set)
        o.memory_limit = (size_t)p->memory_limit_bytes;
    else if (set->sharing > 1)
        o.memory_limit /= set->sharing;
    return o;
}

/* A new state with profile p built in it; NULL with err set. */
static ls_rt *profile_state(ls_lua *set, const ls_profile *p, ls_error *err)
{
    ls_lua_options o = profile_options(set, p);
    ls_rt *rt = with_tally(set, ls_rt_new(set->cycle, &o, set->watchdog, err));
    if (rt && !ls_rt_build(rt, p, 1, err)) {
        ls_rt_free(rt);
        return NULL;
    }
    return rt;
}

/* Whether the loader can become the state of profile p, the only one: it
 * is open, this is the first build, and it holds no more than p's limit. */
static bool loader_fits(const ls_lua *set, const ls_profile *p)
{
    size_t limit = profile_options(set, p).memory_limit;
    return set->n == 0 && set->loader && set->loader->L && (limit == 0 || ls_rt_memory(set->loader) <= limit);
}

/* With one profile the loader state holds exactly that profile's plugins:
 * it becomes the profile's state (its limit the profile's), which spares
 * loading the runtime and the plugins a second time. */
static ls_rt *reuse_loader(ls_lua *set, const ls_profile *p, ls_error *err)
{
    ls_rt *rt = set->loader;
    set->loader = NULL;
    ls_lua_options o = profile_options(set, p);
    ls_rt_set_memory_limit(rt, o.memory_limit);
    if (ls_rt_build(rt, p, 1, err))
        return rt;
    ls_rt_free(rt);   /* half built: a later call opens a fresh loader */
    return NULL;
}

bool ls_lua_build(ls_lua *set, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    ls_rt **states = ls_xcalloc(n ? n : 1, sizeof *states);
    set->sharing = 0;
    for (uint32_t i = 0; i < n; i++)
        set->sharing += !profiles[i].memory_limit_set;
    for (uint32_t i = 0; i < n; i++) {
        states[i] = n == 1 && loader_fits(set, &profiles[0]) ? reuse_loader(set, &profiles[i], err)
                                                              : profile_state(set, &profiles[i], err);
        if (!states[i]) {
            for (uint32_t j = 0; j < i; j++)
                ls_rt_free(states[j]);
            free(states);
            return false;
        }
    }
    free_states(set);
    set->states = states;
    set->n = n;
    set->profiles = profiles;
    ls_rt_free(set->loader);   /* its plugins were loaded for the hooks only */
    set->loader = NULL;
    return true;
}

bool ls_lua_plugin_points(ls_lua *set, const char *name, uint32_t *points, ls_error *err)
{
    ls_rt *rt = loader(set, err);
    return rt && ls_rt_plugin_points(rt, name, points, err);
}

/* ---- the calls of a cycle and of the queue, routed to the profile's state */

/* Profile p's state; NULL (cycle->status an Error naming it) when there is none. */
static ls_rt *state_of(ls_lua *set, uint32_t p)
{
    if (p < set->n)
        return set->states[p];
    char msg[120];
    int len = snprintf(msg, sizeof msg, "no Lua state for profile %u (the profiles are not built)", (unsigned)p);
    set->cycle->status = ls_status_register(LS_ERROR, msg, (size_t)len);
    set->cycle->status_code = LS_ERROR;
    return NULL;
}

int ls_lua_run(ls_lua *set, int ep, uint32_t profile)
{
    ls_rt *rt = state_of(set, profile);
    return rt ? ls_rt_run(rt, ep) : LS_ERROR;
}

int ls_lua_filter_one(ls_lua *set, uint32_t profile, const ls_node_info *ni)
{
    ls_rt *rt = state_of(set, profile);
    return rt ? ls_rt_filter_one(rt, ni) : LS_ERROR;
}

char *ls_lua_sign(ls_lua *set, uint32_t profile, size_t *len, bool *every_pod)
{
    ls_rt *rt = state_of(set, profile);
    if (!rt) {
        *len = 0;
        *every_pod = false;
        return NULL;
    }
    return ls_rt_sign(rt, len, every_pod);
}

int ls_lua_rescore_last(ls_lua *set, uint32_t profile)
{
    ls_rt *rt = state_of(set, profile);
    return rt ? ls_rt_rescore_last(rt) : LS_ERROR;
}

int ls_lua_pre_enqueue(ls_lua *set, uint32_t profile, const ls_pod *pod)
{
    ls_rt *rt = state_of(set, profile);
    return rt ? ls_rt_pre_enqueue(rt, pod) : LS_ERROR;
}

double ls_lua_sort_key(ls_lua *set, uint32_t profile, const ls_pod *pod)
{
    return profile < set->n ? ls_rt_sort_key(set->states[profile], pod) : 0;
}

/* Upstream requires every profile to share the queue sort: the first decides. */
bool ls_lua_sort_uses_less(ls_lua *set)
{
    return set->n > 0 && ls_rt_sort_uses_less(set->states[0]);
}

bool ls_lua_less(ls_lua *set, uint32_t profile, const ls_pod *a, const ls_pod *b)
{
    return profile < set->n && ls_rt_less(set->states[profile], a, b);
}

void ls_lua_park(ls_lua *set, uint32_t profile, uint32_t pod_id)
{
    if (profile < set->n)
        ls_rt_park(set->states[profile], pod_id);
}

void ls_lua_resume(ls_lua *set, uint32_t profile, uint32_t pod_id)
{
    if (profile < set->n)
        ls_rt_resume(set->states[profile], pod_id);
}

/* ---- registrations and hints: one numbering over the states */

bool ls_lua_registrations(ls_lua *set, ls_event_registration **out, uint32_t *count, ls_error *err)
{
    ls_vec all = {0};
    ls_vec_init(&all, sizeof(ls_event_registration));
    for (uint32_t i = 0; i < set->n; i++) {
        ls_event_registration *regs;
        uint32_t k;
        if (!ls_rt_registrations(set->states[i], &regs, &k, err)) {
            ls_vec_free(&all);
            return false;
        }
        for (uint32_t j = 0; j < k; j++) {
            regs[j].profile = i;
            if (regs[j].hint > 0)
                regs[j].hint = (regs[j].hint - 1) * (int)set->n + (int)i + 1;
            *(ls_event_registration *)ls_vec_push(&all) = regs[j];
        }
        free(regs);
    }
    ls_event_registration *regs = ls_xcalloc(all.len + 1, sizeof *regs);
    if (all.len)
        memcpy(regs, all.data, all.len * sizeof *regs);
    *out = regs;
    *count = all.len;
    ls_vec_free(&all);
    return true;
}

int ls_lua_hint(ls_lua *set, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    if (hint <= 0 || set->n == 0)
        return LS_HINT_QUEUE;
    uint32_t i = (uint32_t)(hint - 1) % set->n;
    int local = (hint - 1) / (int)set->n + 1;
    return ls_rt_hint(set->states[i], local, pod, ev);
}

/* ---- files, configuration tools */

static bool listed(char **files, uint32_t n, const char *f)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(files[i], f) == 0)
            return true;
    return false;
}

char **ls_lua_plugin_files(ls_lua *set, uint32_t *n)
{
    *n = 0;
    ls_vec all = {0};
    ls_vec_init(&all, sizeof(char *));
    for (uint32_t i = 0; i < set->n; i++) {
        uint32_t k;
        char **files = ls_rt_plugin_files(set->states[i], &k);
        for (uint32_t j = 0; j < k; j++) {
            if (listed(all.data, all.len, files[j]))
                free(files[j]);
            else
                *(char **)ls_vec_push(&all) = files[j];
        }
        free(files);
    }
    char **out = ls_xcalloc(all.len + 1, sizeof *out);
    if (all.len)
        memcpy(out, all.data, all.len * sizeof *out);
    *n = all.len;
    ls_vec_free(&all);
    return out;
}

/* Each profile is checked in a state of its own, under its own memory limit. */
bool ls_lua_check(ls_lua *set, const ls_profile *profiles, uint32_t n, ls_vec *problems, ls_vec *resolved,
                  ls_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        ls_lua_options o = profile_options(set, &profiles[i]);
        ls_rt *rt = with_tally(set, ls_rt_new(set->cycle, &o, set->watchdog, err));
        bool ok = rt && ls_rt_check(rt, &profiles[i], 1, problems, resolved, err);
        ls_rt_free(rt);
        if (!ok)
            return false;
    }
    return true;
}

cJSON *ls_lua_completed_args(ls_lua *set, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    cJSON *out = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *one = i < set->n ? ls_rt_completed_args(set->states[i], &profiles[i], 1, err) : NULL;
        if (!one) {
            cJSON_Delete(out);
            return NULL;
        }
        cJSON_AddItemToArray(out, cJSON_DetachItemFromArray(one, 0));
        cJSON_Delete(one);
    }
    return out;
}

/* ---- what /metrics and the fault counters read */

uint32_t ls_lua_state_count(const ls_lua *set)
{
    return set->n;
}

size_t ls_lua_profile_memory(const ls_lua *set, uint32_t profile)
{
    return profile < set->n ? ls_rt_memory(set->states[profile]) : 0;
}

size_t ls_lua_profile_memory_limit(const ls_lua *set, uint32_t profile)
{
    return profile < set->n ? ls_rt_memory_limit(set->states[profile]) : 0;
}

size_t ls_lua_memory(const ls_lua *set)
{
    size_t total = set->loader ? ls_rt_memory(set->loader) : 0;
    for (uint32_t i = 0; i < set->n; i++)
        total += ls_rt_memory(set->states[i]);
    return total;
}

void ls_lua_drain_faults(ls_lua *set, ls_fault_tally_fn fn, void *ud)
{
    if (set)
        ls_fault_tally_drain(&set->tally, fn, ud);
}

uint64_t ls_lua_budget_overruns(const ls_lua *set)
{
    uint64_t total = set->overruns_before + (set->loader ? ls_rt_budget_overruns(set->loader) : 0);
    for (uint32_t i = 0; i < set->n; i++)
        total += ls_rt_budget_overruns(set->states[i]);
    return total;
}

uint64_t ls_lua_restarts(const ls_lua *set)
{
    uint64_t total = set->restarts_before + (set->loader ? ls_rt_restarts(set->loader) : 0);
    for (uint32_t i = 0; i < set->n; i++)
        total += ls_rt_restarts(set->states[i]);
    return total;
}

uint64_t ls_lua_hint_errors(const ls_lua *set)
{
    uint64_t total = set->hint_errors_before;
    for (uint32_t i = 0; i < set->n; i++)
        total += ls_rt_hint_errors(set->states[i]);
    return total;
}
