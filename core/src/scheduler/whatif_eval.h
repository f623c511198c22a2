/*
 * whatif_eval.h: one pod's scheduling cycle as the live scheduler would run
 * it next, without assuming, reserving, permitting or binding anything (the
 * what-if API, docs/operations/what-if.md). The evaluator is a second
 * scheduler built from the live configuration: its own Lua states, under the
 * same budgets and confinement; it reads the live scheduler's snapshot (or a
 * changed copy), object store and nominations, and starts from the live
 * random state and round-robin start, so that its node is the node the live
 * scheduler's next cycle would choose for the same pod.
 */
#ifndef LS_WHATIF_EVAL_H
#define LS_WHATIF_EVAL_H

#include "luasched/cache.h"
#include "luasched/scheduler.h"

enum { LS_WHATIF_NODE, LS_WHATIF_UNSCHEDULABLE, LS_WHATIF_ERROR };

typedef struct ls_whatif_result {
    int verdict;               /* LS_WHATIF_* */
    ls_str node;               /* the chosen node (LS_WHATIF_NODE) */
    uint32_t n_tied;           /* the nodes with the best total score, the chosen one among them */
    ls_str *tied;              /* malloc'd */
    char *message;             /* the FitError (with PostFilter's message) or the plugin's error; malloc'd */
    ls_str nominated_node;     /* preemption would make room there (ls_whatif_preempt) */
    uint32_t n_victims;
    const ls_pod **victims;    /* malloc'd; the pods belong to the live scheduler's source */
    ls_attempt attempt;        /* the attempt as the explain record reads it (valid until the next call) */
} ls_whatif_result;

/* Where a question starts: the live scheduler's random state and round-robin
 * start (a transaction's first pod), or where the evaluator's previous pod
 * left them (the next pods of the same transaction). */
typedef enum { LS_WHATIF_FROM_LIVE, LS_WHATIF_CONTINUE } ls_whatif_start;

/* The evaluator's source: it binds, patches and evicts nothing (PostFilter
 * may still choose victims, which are only reported). */
ls_sched_source ls_whatif_source(void);

/* PreFilter, Filter, PreScore, Score and the seeded choice for `pod` on
 * `snap` (NULL: the live snapshot, brought up to date first). The cycle stays
 * in the evaluator for the explain record and hints until the next call. */
void ls_whatif_evaluate(ls_scheduler *w, ls_scheduler *live, ls_snapshot *snap, const ls_pod *pod,
                        ls_whatif_start start, ls_whatif_result *out);
/* After an unschedulable verdict: the profile's PostFilter (preemption) on
 * the same cycle, with copies of the nominations and no waiting pods (it
 * never reaches the live ones); its nominated node, victims and message. */
void ls_whatif_preempt(ls_scheduler *w, ls_scheduler *live, ls_whatif_result *out);
void ls_whatif_result_free(ls_whatif_result *r);

const ls_cycle *ls_whatif_cycle(ls_scheduler *w);
/* The live scheduler's cache and snapshot: a transaction assumes its pods in
 * the cache between two live cycles and forgets them before the next. */
ls_cache *ls_whatif_live_cache(ls_scheduler *live);
/* The live snapshot, brought up to date with the live cache. */
ls_snapshot *ls_whatif_live_snapshot(ls_scheduler *live);
/* The profile a pod names, -1 when the configuration has none. */
int32_t ls_whatif_profile_of(ls_scheduler *w, const ls_pod *pod);

#endif
