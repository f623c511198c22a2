/*
 * policy.h: what an evaluator of pods needs (policy.c): a configuration,
 * its options, the Lua runtime running its profiles, the HTTP extenders,
 * the environment its attempts run in and its attempt, and its reload state
 * (the watched files, the reload counts, the faults of Lua states replaced).
 *
 * The scheduler's lifetime (scheduler_internal.h) holds one for its own
 * policy and fills the environment's cluster side (source, cache, queue,
 * snapshot, objects, waiting pods, nominator, metrics, effects); a shadow
 * (shadow.c) holds one of its own and leaves that side empty: it borrows the
 * live snapshot, objects and nominations while it evaluates, and has no
 * queue, cache, metrics or source of its own (plugin_services.c answers a
 * plugin's call for them as a cluster-less run does).
 */
#ifndef LS_SCHEDULER_POLICY_H
#define LS_SCHEDULER_POLICY_H

#include "scheduler/attempt.h"
#include "framework/file_watch.h"

typedef struct ls_policy {
    ls_config cfg;
    ls_sched_options opt;
    ls_sched_env env;           /* env.cfg and env.opt point here; env.lua, env.extenders, env.batches owned here */
    ls_attempt_state attempt;   /* the Lua runtime is bound to attempt.cycle */
    /* reload */
    char *config_path;
    ls_file_watch *watch;
    uint64_t reloads_ok, reloads_failed;
    uint64_t budget_overruns_before, restarts_before, hint_errors_before;   /* of Lua states replaced by reloads */
} ls_policy;

/* Takes cfg; binds the environment and the attempt (p must not move from
 * here on). No Lua yet: the owner fills the environment's cluster side, then
 * calls ls_policy_load. */
void ls_policy_init(ls_policy *p, ls_config *cfg, const ls_sched_options *opt);
/* The Lua runtime (the file's luasched: section below the flags), the
 * configuration expanded, the extenders, the profiles' plugins loaded, and
 * the event registrations of plugins and extenders (*regs, the caller's). */
bool ls_policy_load(ls_policy *p, ls_event_registration **regs, uint32_t *n_regs, ls_error *err);
/* Everything the policy owns (safe on a policy that failed to load). */
void ls_policy_free(ls_policy *p);

/* Hot reload: a complete new set (configuration, Lua runtime, plugins,
 * extenders, registrations) built from config_path beside the running one;
 * only when all of it is built is it swapped in. On success *old_cfg is the
 * configuration replaced (the caller carries its pods over, then frees it)
 * and *regs the new set's registrations (the caller's); on failure the
 * running set stays and the failure is counted. */
bool ls_policy_reload(ls_policy *p, ls_config *old_cfg, ls_event_registration **regs, uint32_t *n_regs,
                      ls_error *err);
/* Watch config_path (NULL: the defaults) and the plugins' files. */
void ls_policy_watch(ls_policy *p, const char *config_path);
bool ls_policy_watched(const ls_policy *p);
/* True when a reload is due: forced, or a watched file changed. */
bool ls_policy_reload_due(ls_policy *p, bool forced);
/* The log line of a reload's outcome. */
void ls_policy_log_reload(const ls_policy *p, bool ok, const ls_error *err);

/* Faults of its Lua runtimes, the replaced ones included. */
uint64_t ls_policy_budget_overruns(const ls_policy *p);
uint64_t ls_policy_restarts(const ls_policy *p);
uint64_t ls_policy_hint_errors(const ls_policy *p);

/* The profile for a pod: the one with its schedulerName, else the first. */
uint32_t ls_policy_profile_for(const ls_policy *p, const ls_pod *pod);

#endif
