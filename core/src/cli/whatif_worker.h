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

/* Builds the evaluator (a scheduler of the live configuration, tracing, with
 * a source that writes nothing); NULL with err set. */
typedef ls_scheduler *(*ls_whatif_build_fn)(void *ud, ls_error *err);
/* Serves the channel's questions: in forked evaluators, or (fork false) on
 * the scheduling thread. The evaluator is built by `build` when the first
 * question is handed over (its Lua states cost the worker's start about a
 * third of its CPU otherwise, and most runs are asked nothing); a build that
 * fails answers the questions taken with its error and is tried again with
 * the next question. */
ls_whatif_worker *ls_whatif_worker_new(ls_kcluster *kc, ls_whatif_build_fn build, void *build_ud, bool fork,
                                       uint64_t max_wait_ms);
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
