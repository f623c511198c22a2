/*
 * cycle.h: one pod's attempt from end to end (cycle.c): the scheduling cycle,
 * the binding cycle, the waiting pods let go, the bindings a real cluster
 * refused. Each takes the attempt and its environment (attempt.h);
 * scheduler.c drives them.
 */
#ifndef LS_SCHEDULER_CYCLE_H
#define LS_SCHEDULER_CYCLE_H

#include "scheduler/attempt.h"

/* One pod's scheduling cycle, then its binding cycle (or its wait in Permit). */
void ls_attempt_schedule_pod(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
/* A pod being deleted: reported and dropped from the queue. */
void ls_attempt_skip_deleting(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
/* Binding cycles of waiting pods that were allowed, failures of rejected ones. */
void ls_attempt_resolve_waiting(ls_sched_env *e, ls_attempt_state *a);
/* A binding the API server refused (bind_failed) or a bound pod's
 * assumption to drop (forget_assumed), for a real cluster. */
void ls_attempt_bind_failed(ls_sched_env *e, ls_attempt_state *a, const ls_pod *pod, const char *message);
void ls_attempt_forget_assumed(ls_sched_env *e, const ls_pod *pod);

#endif
