/*
 * attempt.h: the two things a stage of one pod's cycle works on.
 *
 * - ls_attempt_state: ONE attempt (one pod's scheduling and binding cycle):
 *   the framework's cycle state handed to Lua, what Permit did, the
 *   expectation (nominatedNodeName), the victims PostFilter chose, the
 *   verdict and the per-cycle buffers. Reset at the start of every attempt.
 *   (The public ls_attempt of luasched/scheduler.h is its report.)
 * - ls_sched_env: the narrow environment the stages run in: the Lua runtime,
 *   cache, queue, nominator, waiting pods, extenders, the cluster source, and
 *   the effects a stage queues (deferred events, preemptions being issued).
 *   It lives in a policy (policy.h), which owns its Lua runtime, extenders
 *   and batch state; the scheduler (scheduler.c) fills and owns its cluster
 *   side (a shadow's policy has none); both outlive every attempt. The
 *   effects it cannot queue (cluster events that move pods now, the
 *   deferral of source events during a plugin's call) go through `fx`,
 *   which scheduler.c fills, so no stage calls back up into it.
 *
 * The stages (cycle.c, batch.c, extender_cycle.c, preemption.c, shadow.c)
 * include this header and their own; none includes scheduler_internal.h.
 */
#ifndef LS_SCHEDULER_ATTEMPT_H
#define LS_SCHEDULER_ATTEMPT_H

#include "scheduler/extender.h"
#include "scheduler/sched_metrics.h"
#include "framework/waiting_pods.h"
#include "framework/runtime.h"
#include "luasched/scheduler.h"
#include "queue/nominator.h"
#include "queue/scheduling_queue.h"

typedef enum event_kind {
    EV_NODE_ADD, EV_NODE_UPDATE, EV_NODE_DELETE, EV_POD_ADD, EV_POD_UPDATE, EV_POD_DELETE,
    EV_OBJECT_ADD, EV_OBJECT_UPDATE, EV_OBJECT_DELETE,
    EV_ACTIVATE     /* a plugin's ls.activate: applied after the hook, never from inside Lua */
} event_kind;

typedef struct deferred_event {
    event_kind kind;
    const void *old_obj, *new_obj;
    uint32_t pod_id;            /* EV_ACTIVATE: the pod, found again by id when applied */
} deferred_event;

/* What the owner of the environment does for a stage (scheduler.c). */
typedef struct ls_sched_effects {
    void *ud;
    /* events from the source during a plugin's FFI call wait; applied after */
    void (*begin_deferral)(void *ud);
    void (*end_deferral)(void *ud);
    void (*apply_deferred)(void *ud);
    /* a cluster event for the queue (moves pods whose plugins registered for it) */
    void (*cluster_event)(void *ud, const char *resource, uint32_t actions, const char *label, uint8_t type,
                          const void *old_obj, const void *new_obj);
    void (*refresh_snapshot)(void *ud);
} ls_sched_effects;

typedef struct ls_sched_env {
    const ls_config *cfg;
    const ls_sched_source *src;
    const ls_sched_options *opt;
    ls_scheduler *owner;        /* handed to the source's callbacks only (opaque here) */
    ls_lua *lua;
    ls_extenders *extenders;    /* HTTP extenders of the configuration; NULL when none */
    ls_cache *cache;
    ls_snapshot *snapshot;
    ls_object_store *objects;
    ls_squeue *queue;
    ls_waiting_pods *waiting;
    ls_nominator *nominator;
    ls_sched_metrics *metrics;
    struct ls_batches *batches; /* OpportunisticBatching's per-profile state (batch.c) */
    ls_map preempting;          /* pod id + 1 -> 1: preemptors whose deletions are being issued */
    ls_vec deferred;            /* deferred_event: source events and activations waiting for the hook's end */
    ls_vec own_writes;          /* ls_own_write: objects plugins wrote during a pod's attempt (own_writes.h) */
    uint64_t clock_ms;          /* virtual time in a simulation */
    uint64_t rng;
    uint64_t cycles_started;    /* attempts begun (plugin durations are sampled in one in ten) */
    uint64_t error_attempts;    /* attempts that ended in an Error status (plugin faults among them) */
    uint32_t next_start_index;
    uint32_t writes_generation; /* the plugin call (ls_view_generation) writes_in_call counts for */
    uint32_t writes_in_call;    /* API writes and evictions that call asked for (capped: plugin_services.c) */
    ls_sched_effects fx;
} ls_sched_env;

typedef struct ls_attempt_state {
    ls_cycle cycle;             /* cycle.owner is this attempt (plugin_services.c finds env through it) */
    ls_sched_env *env;
    ls_vec victims;             /* const ls_pod *: preempted during the running cycle */
    struct {                    /* what Permit did in the running attempt (reported with it) */
        uint8_t result;
        bool waited, via_nominated, via_batch_hint;
        uint64_t wait_ms;
        ls_str plugin;
    } permit;
    ls_str expected_node;       /* nominatedNodeName set for the running binding (expectation), or 0 */
    bool bound_in_bind;         /* ls_cycle_bind bound the pod during the running Bind point */
    const ls_pod *preemptor;    /* whose victims (victims) are to be deleted after the cycle */
    ls_str preempt_node;
    ls_str preempt_plugin;      /* the PostFilter plugin that chose them (names an in-memory preemption) */
    uint8_t verdict_code;       /* the attempt's failure code (LS_SUCCESS until it fails) */
    uint64_t attempt_start_ns;  /* when the attempt began (metrics) */
    /* per-cycle buffers, grown to the node count */
    uint32_t buf_nodes;
    const ls_node_info **candidates;
    const ls_node_info **feasible;
    ls_node_status *node_status;
    uint32_t *filter_trace;
    int64_t *scores, *raw_scores, *totals;
    bool scored;   /* totals hold this cycle's scores (a failed PreScore or Score leaves them stale) */
    uint8_t *score_skipped;
    uint32_t scores_cap, trace_cap;
} ls_attempt_state;

/* scheduler.c: a scheduler's environment and running attempt, for a second
 * scheduler driven as the stages drive theirs (the what-if evaluator,
 * whatif_eval.c). */
ls_sched_env *ls_scheduler_env(ls_scheduler *s);
ls_attempt_state *ls_scheduler_attempt(ls_scheduler *s);

/* attempt.c: an attempt bound to its environment, and its buffers freed. */
void ls_attempt_init(ls_attempt_state *a, ls_sched_env *env);
void ls_attempt_free(ls_attempt_state *a);

/* attempt.c: the stages the cycle, the batch and the shadow share. */
/* ls_lua_run of one extension point or hook (LS_EP_*), timed into the metrics. */
int ls_attempt_run_point(ls_sched_env *e, ls_attempt_state *a, int ep, uint32_t profile);
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

static inline const ls_profile *ls_env_profile(const ls_sched_env *e, uint32_t profile)
{
    return &e->cfg->profiles[profile];
}

static inline void ls_env_begin_deferral(ls_sched_env *e)
{
    if (e->fx.begin_deferral)
        e->fx.begin_deferral(e->fx.ud);
}

static inline void ls_env_end_deferral(ls_sched_env *e)
{
    if (e->fx.end_deferral)
        e->fx.end_deferral(e->fx.ud);
}

static inline void ls_env_apply_deferred(ls_sched_env *e)
{
    if (e->fx.apply_deferred)
        e->fx.apply_deferred(e->fx.ud);
}

static inline void ls_env_cluster_event(ls_sched_env *e, const char *resource, uint32_t actions, const char *label,
                                        uint8_t type, const void *old_obj, const void *new_obj)
{
    if (e->fx.cluster_event)
        e->fx.cluster_event(e->fx.ud, resource, actions, label, type, old_obj, new_obj);
}

static inline void ls_env_refresh_snapshot(ls_sched_env *e)
{
    if (e->fx.refresh_snapshot)
        e->fx.refresh_snapshot(e->fx.ud);
}

#endif
