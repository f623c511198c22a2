/*
 * cycle.h: the stages of one pod's attempt (cycle.c), each taking the attempt
 * and its environment (attempt.h). scheduler.c drives them; shadow.c reuses
 * the scheduling cycle's stages with an attempt of its own.
 */
#ifndef LS_SCHEDULER_CYCLE_H
#define LS_SCHEDULER_CYCLE_H

#include "scheduler/attempt.h"

/* ls_lua_run of one extension point or hook (LS_EP_*), timed into the metrics. */
int ls_attempt_run_point(ls_sched_env *e, ls_attempt_state *a, int ep, uint32_t profile);
/* One pod's scheduling cycle, then its binding cycle (or its wait in Permit). */
void ls_attempt_schedule_pod(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
/* The cycle's setup for qp on `snapshot` (no snapshot update, no metrics
 * sampling): the main cycle after its snapshot update, a shadow's on the live one. */
void ls_attempt_prepare(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_snapshot *snapshot);
/* Filter over the sampled window; PreScore, Score and the totals, then the
 * seeded choice among the best; false (status set) on a plugin's error. */
bool ls_attempt_run_filters(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
bool ls_attempt_prioritize(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, const ls_node_info **host);
/* The weighted totals of the cycle's scores and the extenders' priorities;
 * false (status set) on a score out of range. */
bool ls_attempt_total_scores(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
const ls_node_info *ls_attempt_select_host(ls_sched_env *e, ls_attempt_state *a);
/* A pod being deleted: reported and dropped from the queue. */
void ls_attempt_skip_deleting(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);
/* Binding cycles of waiting pods that were allowed, failures of rejected ones. */
void ls_attempt_resolve_waiting(ls_sched_env *e, ls_attempt_state *a);
/* A binding the API server refused (bind_failed) or a bound pod's
 * assumption to drop (forget_assumed), for a real cluster. */
void ls_attempt_bind_failed(ls_sched_env *e, ls_attempt_state *a, const ls_pod *pod, const char *message);
void ls_attempt_forget_assumed(ls_sched_env *e, const ls_pod *pod);

#endif
