/*
 * shadow.h: shadow policies (shadow.c). The shadow evaluates each live
 * attempt's pod with a policy of its own (policy.h: its configuration, Lua
 * runtime, reload state, environment and attempt; no queue, cache, metrics
 * or source), on the live snapshot, objects and nominations.
 */
#ifndef LS_SCHEDULER_SHADOW_H
#define LS_SCHEDULER_SHADOW_H

#include "scheduler/attempt.h"

struct ls_metrics;
typedef struct ls_shadow ls_shadow;

/* Takes cfg (freed on failure); its plugins loaded with opt's path, budget
 * and seed; watched from watch_path when given (NULL: never reloaded).
 * NULL (err set) when it does not load or has HTTP extenders. */
ls_shadow *ls_shadow_new(ls_config *cfg, const ls_sched_options *opt, const char *watch_path,
                         struct ls_metrics *registry, ls_error *err);
void ls_shadow_free(ls_shadow *sh);
/* After one live attempt, the shadow's verdict on the same pod and snapshot,
 * compared and counted. */
void ls_shadow_after_attempt(ls_shadow *sh, const ls_sched_env *live_env, const ls_attempt_state *live_attempt,
                             const ls_pod *pod);
/* The shadow's configuration reloaded (its watch saw a change, or forced);
 * a shadow without a watched file is never reloaded. */
void ls_shadow_reload_if_changed(ls_shadow *sh, bool forced);
void ls_shadow_attach_metrics(ls_shadow *sh, struct ls_metrics *registry);
uint32_t ls_shadow_stats_of(const ls_shadow *sh, ls_shadow_stats *out, uint32_t cap);

#endif
