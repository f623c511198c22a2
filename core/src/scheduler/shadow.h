/*
 * shadow.h: shadow policies (shadow.c). The shadow evaluates each live
 * attempt's pod with an attempt of its own, in its own environment (its
 * configuration and Lua runtime, held by a second scheduler that only keeps
 * their lifetime), on the live snapshot, objects and nominations.
 */
#ifndef LS_SCHEDULER_SHADOW_H
#define LS_SCHEDULER_SHADOW_H

#include "scheduler/attempt.h"

struct ls_metrics;
typedef struct ls_shadow ls_shadow;

/* Takes ownership of `shadow` (the lifetime of env and attempt). */
ls_shadow *ls_shadow_new(ls_scheduler *shadow, ls_sched_env *env, ls_attempt_state *attempt,
                         struct ls_metrics *registry);
void ls_shadow_free(ls_shadow *sh);
/* After one live attempt, the shadow's verdict on the same pod and snapshot,
 * compared and counted. */
void ls_shadow_after_attempt(ls_shadow *sh, const ls_sched_env *live_env, const ls_attempt_state *live_attempt,
                             const ls_pod *pod);
/* The shadow's configuration reloaded (its watch saw a change, or forced). */
void ls_shadow_reload_if_changed(ls_shadow *sh, bool forced);
void ls_shadow_attach_metrics(ls_shadow *sh, struct ls_metrics *registry);
ls_scheduler *ls_shadow_scheduler(const ls_shadow *sh);
uint32_t ls_shadow_stats_of(const ls_shadow *sh, ls_shadow_stats *out, uint32_t cap);

#endif
