/*
 * preemption.h: asynchronous preemption (preemption.c): the deletions
 * PostFilter chose in an attempt, issued after its cycle.
 */
#ifndef LS_SCHEDULER_PREEMPTION_H
#define LS_SCHEDULER_PREEMPTION_H

#include "scheduler/attempt.h"

void ls_attempt_issue_preemptions(ls_sched_env *e, ls_attempt_state *a);
/* A deletion failed: the preemptor stops preempting, loses its nomination
 * and goes back to activeQ. */
void ls_attempt_preemption_failed(ls_sched_env *e, const ls_pod *preemptor, const char *message);

#endif
