/*
 * scheduler_internal.h: the scheduler's lifetime (scheduler.c,
 * scheduler_events.c, reload.c): its policy (policy.h: configuration, Lua
 * runtime, reload state, the environment its attempts run in and the
 * running attempt), and the cluster side of that environment it owns:
 * cache, queue, source, waiting pods, nominator and metrics. The
 * stages (cycle.c, batch.c, preemption.c, extender_cycle.c, shadow.c) never
 * include this header: they take the attempt and the environment.
 */
#ifndef LS_SCHEDULER_INTERNAL_H
#define LS_SCHEDULER_INTERNAL_H

#include "scheduler/policy.h"
#include "scheduler/shadow.h"

struct ls_scheduler {
    ls_policy policy;           /* its configuration, Lua runtime, reload state, the environment its attempts
                                 * run in and the running attempt (policy.h); the environment's cluster side
                                 * below is owned here (freed by ls_scheduler_free) */
    ls_sched_source src;
    ls_waiting_pods waiting;
    ls_nominator nominator;
    ls_sched_metrics metrics;
    int defer_events;           /* > 0 while a plugin's FFI call (bind, preempt) runs */
    uint64_t last_change_ms;    /* when the cluster last changed (for the end of a simulation) */
    ls_shadow *shadow;          /* --shadow: the candidate configuration evaluated beside (shadow.c) */
    uint64_t snapshot_epoch;    /* snapshot updates so far (ls_scheduler_snapshot_epoch) */
};

/* scheduler.c: events from the source during a plugin's FFI call wait */
void ls_scheduler_apply_deferred(ls_scheduler *s);
/* scheduler.c: a cluster event for the queue (moves pods whose plugins registered for it). */
void ls_scheduler_cluster_event(ls_scheduler *s, const char *resource, uint32_t actions, const char *label,
                                uint8_t type, const void *old_obj, const void *new_obj);
void ls_scheduler_publish_metrics(ls_scheduler *s);
/* The cut-offs and rebuilt states `lua` counted by plugin since the last
 * call, added to the labeled counters (before a reload frees the old set,
 * so the counts outlive it). */
void ls_scheduler_publish_faults(ls_scheduler *s, ls_lua *lua);

#endif
