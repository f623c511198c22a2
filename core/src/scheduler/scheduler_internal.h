/*
 * scheduler_internal.h: the scheduler's state, shared by scheduler.c (events,
 * queue, the run loop) and cycle.c (one pod's cycles).
 */
#ifndef LS_SCHEDULER_INTERNAL_H
#define LS_SCHEDULER_INTERNAL_H

#include "scheduler/extender.h"
#include "scheduler/sched_metrics.h"
#include "framework/waiting_pods.h"
#include "framework/file_watch.h"
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

struct ls_scheduler {
    ls_cycle cycle;
    ls_config cfg;
    ls_sched_source src;
    ls_sched_options opt;
    ls_lua *lua;
    ls_extenders *extenders;    /* HTTP extenders of the configuration; NULL when none */
    ls_cache *cache;
    ls_snapshot *snapshot;
    ls_object_store *objects;
    ls_squeue *queue;
    ls_waiting_pods waiting;
    ls_nominator nominator;
    ls_vec victims;             /* const ls_pod *: preempted during the running cycle */
    struct {                    /* what Permit did in the running attempt (reported with it) */
        uint8_t result;
        bool waited, via_nominated, via_batch_hint;
        uint64_t wait_ms;
        ls_str plugin;
    } permit;
    ls_str expected_node;       /* nominatedNodeName set for the running binding (expectation), or 0 */
    bool bound_in_bind;         /* ls_cycle_bind bound the pod during the running Bind point */
    const ls_pod *preemptor;    /* whose victims (s->victims) are to be deleted after the cycle */
    ls_str preempt_node;
    ls_str preempt_plugin;      /* the PostFilter plugin that chose them (names an in-memory preemption) */
    ls_map preempting;          /* pod id + 1 -> 1: preemptors whose deletions are being issued */
    int defer_events;           /* > 0 while a plugin's FFI call (bind, preempt) runs */
    uint32_t writes_generation; /* the plugin call (ls_view_generation) writes_in_call counts for */
    uint32_t writes_in_call;    /* API writes and evictions that call asked for (capped: cycle.c) */
    ls_vec deferred;            /* events that arrived meanwhile */
    uint64_t clock_ms;          /* virtual time in a simulation */
    uint64_t last_change_ms;    /* when the cluster last changed (for the end of a simulation) */
    uint64_t rng;
    uint32_t next_start_index;
    /* hot reload */
    char *config_path;
    ls_file_watch *watch;
    uint64_t reloads_ok, reloads_failed;
    uint64_t error_attempts;    /* attempts that ended in an Error status (plugin faults among them) */
    uint64_t budget_overruns_before, restarts_before, hint_errors_before;   /* of Lua states replaced by reloads */
    ls_sched_metrics metrics;
    uint8_t verdict_code;       /* the running attempt's failure code (LS_SUCCESS until it fails) */
    struct ls_batches *batches; /* OpportunisticBatching's per-profile state (batch.c) */
    struct ls_shadow *shadow;   /* --shadow: the candidate configuration evaluated beside (shadow.c) */
    uint64_t attempt_start_ns;
    uint64_t cycles_started;  /* when the running attempt began (metrics) */
    uint64_t snapshot_epoch;  /* snapshot updates so far (ls_scheduler_snapshot_epoch) */
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
};

/* scheduler.c: events from the source during a plugin's FFI call wait */
void ls_scheduler_begin_deferral(ls_scheduler *s);
void ls_scheduler_end_deferral(ls_scheduler *s);
void ls_scheduler_apply_deferred(ls_scheduler *s);
/* Whether the running plugin call may ask for one more API write or eviction
 * (at most LS_MAX_PLUGIN_WRITES per call: each is queued in C); false with
 * errbuf filled when it may not. */
enum { LS_MAX_PLUGIN_WRITES = 10000 };
bool ls_scheduler_plugin_write(ls_scheduler *s, char *errbuf, size_t errlen);

/* scheduler.c: a cluster event for the queue (moves pods whose plugins registered for it). */
void ls_scheduler_cluster_event(ls_scheduler *s, const char *resource, uint32_t actions, const char *label,
                                uint8_t type, const void *old_obj, const void *new_obj);
/* extender_cycle.c: the configuration's extenders built (*out NULL when it
 * has none) and NodeResourcesFit told the resources they manage for it. */
bool ls_scheduler_build_extenders(ls_scheduler *s, ls_config *cfg, ls_extenders **out, ls_error *err);
/* extender_cycle.c: findNodesThatPassExtenders on the feasible list; false
 * (status set) on an extender's error. */
bool ls_scheduler_filter_extenders(ls_scheduler *s, ls_qpod *qp);
/* cycle.c */
/* ls_lua_run of one extension point or hook (LS_EP_*), timed into the metrics. */
int ls_scheduler_run_point(ls_scheduler *s, int ep, uint32_t profile);
void ls_scheduler_publish_metrics(ls_scheduler *s);
void ls_scheduler_schedule_pod(ls_scheduler *s, ls_qpod *qp);
/* The cycle's setup for qp on `snapshot` (no snapshot update, no metrics
 * sampling): the main cycle after its snapshot update, a shadow's on the live one. */
void ls_scheduler_prepare_cycle(ls_scheduler *s, ls_qpod *qp, ls_snapshot *snapshot);
/* Filter over the sampled window; PreScore, Score and the totals, then the
 * seeded choice among the best; false (status set) on a plugin's error. */
bool ls_scheduler_run_filters(ls_scheduler *s, ls_qpod *qp);
bool ls_scheduler_prioritize(ls_scheduler *s, ls_qpod *qp, const ls_node_info **host);
/* The weighted totals of the cycle's scores and the extenders' priorities;
 * false (status set) on a score out of range. */
bool ls_scheduler_total_scores(ls_scheduler *s, ls_qpod *qp);
const ls_node_info *ls_scheduler_select_host(ls_scheduler *s);
/* shadow.c: after one of this scheduler's attempts, the shadow's verdict on
 * the same pod and snapshot, compared and counted; freed with the scheduler. */
void ls_shadow_after_attempt(ls_scheduler *s, const ls_pod *pod);
void ls_shadow_free(struct ls_shadow *sh);
void ls_shadow_reload_if_changed(struct ls_shadow *sh, bool forced);
void ls_shadow_attach_metrics(struct ls_shadow *sh, struct ls_metrics *registry);
void ls_scheduler_skip_deleting(ls_scheduler *s, ls_qpod *qp);
void ls_scheduler_resolve_waiting(ls_scheduler *s);
/* preemption.c: the deletions PostFilter chose, issued after the cycle. */
void ls_scheduler_issue_preemptions(ls_scheduler *s);

#endif
