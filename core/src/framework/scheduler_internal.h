/*
 * scheduler_internal.h: the scheduler's state, shared by scheduler.c (events,
 * queue, the run loop) and cycle.c (one pod's cycles).
 */
#ifndef LS_SCHEDULER_INTERNAL_H
#define LS_SCHEDULER_INTERNAL_H

#include "framework/waiting_pods.h"
#include "lua/file_watch.h"
#include "lua/runtime.h"
#include "luasched/scheduler.h"
#include "queue/nominator.h"
#include "queue/scheduling_queue.h"

struct ls_scheduler {
    ls_cycle cycle;
    ls_config cfg;
    ls_sched_source src;
    ls_sched_options opt;
    ls_lua *lua;
    ls_cache *cache;
    ls_snapshot *snapshot;
    ls_object_store *objects;
    ls_squeue *queue;
    ls_waiting_pods waiting;
    ls_nominator nominator;
    ls_vec victims;             /* const ls_pod *: preempted during the running cycle */
    uint64_t clock_ms;          /* virtual time in a simulation */
    uint64_t last_change_ms;    /* when the cluster last changed (for the end of a simulation) */
    uint64_t rng;
    uint32_t next_start_index;
    /* hot reload */
    char *config_path;
    ls_file_watch *watch;
    uint64_t reloads_ok, reloads_failed;
    /* per-cycle buffers, grown to the node count */
    uint32_t buf_nodes;
    const ls_node_info **candidates;
    const ls_node_info **feasible;
    ls_node_status *node_status;
    uint32_t *filter_trace;
    int64_t *scores, *raw_scores, *totals;
    uint8_t *score_skipped;
    uint32_t scores_cap, trace_cap;
};

/* cycle.c */
void ls_scheduler_schedule_pod(ls_scheduler *s, ls_qpod *qp);
void ls_scheduler_resolve_waiting(ls_scheduler *s);

#endif
