/*
 * scheduler_internal.h: the scheduler's lifetime (scheduler.c, reload.c):
 * its configuration, cache, source, reload watch and metrics, the
 * environment its attempts run in (attempt.h) and the running attempt. The
 * stages (cycle.c, batch.c, preemption.c, extender_cycle.c, shadow.c) never
 * include this header: they take the attempt and the environment.
 */
#ifndef LS_SCHEDULER_INTERNAL_H
#define LS_SCHEDULER_INTERNAL_H

#include "scheduler/attempt.h"
#include "scheduler/shadow.h"
#include "framework/file_watch.h"

struct ls_scheduler {
    ls_sched_env env;           /* what a stage sees; its objects are owned here (freed by ls_scheduler_free) */
    ls_attempt_state attempt;   /* the running attempt (the Lua runtime is bound to attempt.cycle) */
    ls_config cfg;
    ls_sched_source src;
    ls_sched_options opt;
    ls_waiting_pods waiting;
    ls_nominator nominator;
    ls_sched_metrics metrics;
    int defer_events;           /* > 0 while a plugin's FFI call (bind, preempt) runs */
    uint64_t last_change_ms;    /* when the cluster last changed (for the end of a simulation) */
    /* hot reload */
    char *config_path;
    ls_file_watch *watch;
    uint64_t reloads_ok, reloads_failed;
    uint64_t budget_overruns_before, restarts_before, hint_errors_before;   /* of Lua states replaced by reloads */
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
