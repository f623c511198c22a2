/*
 * extender_cycle.h: where an attempt meets the HTTP extenders (extender_cycle.c).
 */
#ifndef LS_SCHEDULER_EXTENDER_CYCLE_H
#define LS_SCHEDULER_EXTENDER_CYCLE_H

#include "scheduler/attempt.h"

/* The configuration's extenders built (*out NULL when it has none) and
 * NodeResourcesFit told the resources they manage for it. */
bool ls_extenders_build(ls_config *cfg, ls_extenders **out, ls_error *err);
/* How many extenders (0 for NULL). */
uint32_t ls_extenders_count(const ls_extenders *x);
/* findNodesThatPassExtenders on the feasible list; false (status set) on an
 * extender's error. */
bool ls_attempt_filter_extenders(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp);

#endif
