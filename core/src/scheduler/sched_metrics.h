/*
 * sched_metrics.h: the scheduler's metrics with upstream's names, labels and
 * buckets (kube-scheduler.md 6.3), plus luasched_* for the Lua runtime. All
 * recording functions do nothing when no registry is attached (simulations
 * and benchmarks), so the hot path pays one branch.
 */
#ifndef LS_FRAMEWORK_SCHED_METRICS_H
#define LS_FRAMEWORK_SCHED_METRICS_H

#include "queue/scheduling_queue.h"
#include "server/metrics.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ls_sched_metrics {
    ls_metrics *registry;      /* NULL: metrics off */
    ls_metric_family *attempts, *attempt_duration, *pending, *incoming, *extension_point, *plugin_execution,
        *preemption_attempts, *preemption_victims, *pod_attempts, *cache_size, *reloads, *budget_overruns,
        *lua_restarts, *lua_memory, *plugin_errors, *hint_errors, *batch_attempts, *batch_flushed, *batch_rescores;
    uint64_t published_ms;     /* when the gauges were last published */
} ls_sched_metrics;

void ls_sched_metrics_attach(ls_sched_metrics *sm, ls_metrics *registry);

uint64_t ls_sched_metrics_clock_ns(void);
/* result: "scheduled", "unschedulable" or "error". */
/* A profile's attempt series (each result) at zero, shown before its first pod. */
void ls_sched_metrics_profile(ls_sched_metrics *sm, const char *profile);
void ls_sched_metrics_attempt(ls_sched_metrics *sm, const char *result, const char *profile, double seconds,
                              uint32_t pod_attempts);
void ls_sched_metrics_extension_point(ls_sched_metrics *sm, const char *point, uint8_t code, const char *profile,
                                      double seconds);
void ls_sched_metrics_plugin(ls_sched_metrics *sm, const char *plugin, const char *point, uint8_t code,
                             double seconds);
void ls_sched_metrics_preemption(ls_sched_metrics *sm, uint32_t victims);
void ls_sched_metrics_incoming(ls_sched_metrics *sm, ls_qwhere queue, const char *event);
void ls_sched_metrics_reload(ls_sched_metrics *sm, bool succeeded);
/* OpportunisticBatching: scheduler_batch_attempts_total{profile,result},
 * scheduler_batch_cache_flushed_total{profile,reason},
 * scheduler_batch_rescore_attempts_total{profile} (label unused). */
enum { LS_BATCH_METRIC_ATTEMPT, LS_BATCH_METRIC_FLUSH, LS_BATCH_METRIC_RESCORE };
void ls_sched_metrics_batch(ls_sched_metrics *sm, int which, const char *profile, const char *label);

typedef struct ls_sched_gauges {
    uint32_t active, backoff, unschedulable, gated;
    uint32_t nodes, pods, assumed_pods;
    uint64_t error_attempts, hint_errors;
} ls_sched_gauges;
void ls_sched_metrics_publish(ls_sched_metrics *sm, const ls_sched_gauges *g);
/* Budget overruns and rebuilt Lua states of one plugin at one extension
 * point of one profile since the last call: added to
 * luasched_plugin_budget_overruns_total and luasched_lua_restarts_total
 * {plugin,extension_point,profile}. */
void ls_sched_metrics_faults(ls_sched_metrics *sm, const char *profile, const char *plugin, const char *point,
                             uint64_t overruns, uint64_t restarts);
/* luasched_lua_memory_bytes{profile}: the bytes held by that profile's Lua state. */
void ls_sched_metrics_lua_memory(ls_sched_metrics *sm, const char *profile, size_t bytes);
/* After a reload: the old profiles' series go (the new states publish theirs). */
void ls_sched_metrics_forget_lua_memory(ls_sched_metrics *sm);

#endif
