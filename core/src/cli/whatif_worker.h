/*
 * whatif_worker.h: what-if questions answered in `luasched run`'s worker
 * (see whatif_worker.c): forked evaluators, kept warm while the live state
 * they read is unchanged.
 */
#ifndef LS_CLI_WHATIF_WORKER_H
#define LS_CLI_WHATIF_WORKER_H

#include "luasched/scheduler.h"

typedef struct ls_kcluster ls_kcluster;
typedef struct ls_whatif_worker ls_whatif_worker;

/* Takes the evaluator (a scheduler of the live configuration, tracing, with
 * a source that writes nothing) and serves the channel's questions: in
 * forked evaluators, or (fork false) on the scheduling thread. */
ls_whatif_worker *ls_whatif_worker_new(ls_kcluster *kc, ls_scheduler *evaluator, bool fork);
/* Hands the questions filed so far to the warm evaluator (when nothing it
 * reads has changed and they fit in its pipe) or to a forked one, which
 * answers them beside the loop (the scheduling thread, between cycles: the
 * hand-over is all it pays); nothing while an evaluator still answers, nor,
 * while pods are ready to be scheduled or in their cycles (the live queue's
 * active and in-flight pods), a fork before the fork budget allows it.
 * Retires the warm evaluator as soon as the live state moved. */
void ls_whatif_worker_serve(ls_whatif_worker *ww, ls_scheduler *live);
void ls_whatif_worker_free(ls_whatif_worker *ww);

#endif
