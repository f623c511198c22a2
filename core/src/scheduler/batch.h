/*
 * batch.h: OpportunisticBatching (KEP-5598, beta and on in upstream v1.37),
 * the per-profile cache of the last scheduling result that lets the next pod
 * with the same signature try one hinted node instead of filtering and
 * scoring every node. See batch.c.
 */
#ifndef LS_SCHEDULER_BATCH_H
#define LS_SCHEDULER_BATCH_H

#include "luasched/base.h"
#include "queue/scheduling_queue.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ls_sched_env ls_sched_env;
typedef struct ls_attempt_state ls_attempt_state;
typedef struct ls_batches ls_batches;

/* Upstream's maxBatchAge. */
enum { LS_BATCH_MAX_AGE_MS = 500 };

/* The batch flush reasons and attempt results, upstream's metric labels. */
#define LS_BATCH_FLUSH_POD_FAILED "pod_failed"
#define LS_BATCH_FLUSH_POD_SKIPPED "pod_skipped"
#define LS_BATCH_FLUSH_POD_NOMINATED "pod_nominated"
#define LS_BATCH_FLUSH_NODE_MISSING "node_missing"
#define LS_BATCH_FLUSH_EMPTY_LIST "empty_list"
#define LS_BATCH_FLUSH_EXPIRED "expired"
#define LS_BATCH_FLUSH_POD_INCOMPATIBLE "pod_incompatible"
#define LS_BATCH_FLUSH_POD_NOT_BATCHABLE "pod_not_batchable"
#define LS_BATCH_FLUSH_PRESCORE_ERROR "prescore_error"
#define LS_BATCH_FLUSH_RESCORE_ERROR "rescore_error"

void ls_batches_free(ls_batches *b);

/* OpportunisticBatching is one stage of the scheduling cycle, entered once
 * after PreFilter and left once when the cycle has its host or has failed.
 *
 * Entry (GetNodeHint): signs the running pod (kept for the exit), checks the
 * profile's cached state, re-scores the last chosen node when it still fits,
 * and sets *hint to the hinted node's name (0: no hint). False when the sign
 * hook was cut off (the state rebuilt mid-cycle): the cycle ends with that
 * plugin's Error in the cycle's status. */
bool ls_batch_enter(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str *hint);

/* Exit: `chosen` the host (StoreScheduleResults: `hint` the hint given, the
 * cycle's feasible nodes and totals give the sorted list of the others, the
 * host left out), or 0 when the cycle ended without one (the signature is
 * dropped). */
void ls_batch_exit(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str hint, ls_str chosen);

#endif
