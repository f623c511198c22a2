/*
 * sched_metrics.c: registers the scheduler's metric families and records into
 * them (see sched_metrics.h).
 */
#include "scheduler/sched_metrics.h"

#include "luasched/framework.h"

#include <time.h>

uint64_t ls_sched_metrics_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static ls_metric_family *histogram(ls_metrics *m, const char *name, const char *help, const char *const *labels,
                                   double start, double factor, size_t count)
{
    double buckets[32];
    ls_metrics_exp_buckets(start, factor, count, buckets);
    return ls_metrics_family(m, name, help, LS_METRIC_HISTOGRAM, labels, buckets, count);
}

static void attach_upstream(ls_sched_metrics *sm, ls_metrics *m)
{
    static const char *const result_profile[] = {"result", "profile", NULL};
    static const char *const queue[] = {"queue", NULL};
    static const char *const queue_event[] = {"queue", "event", NULL};
    static const char *const point_status_profile[] = {"extension_point", "status", "profile", NULL};
    static const char *const plugin_point_status[] = {"plugin", "extension_point", "status", NULL};
    static const char *const type[] = {"type", NULL};
    sm->attempts = ls_metrics_family(m, "scheduler_schedule_attempts_total",
                                     "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
                                     "could not be scheduled, while 'error' means an internal scheduler problem.",
                                     LS_METRIC_COUNTER, result_profile, NULL, 0);
    sm->attempt_duration = histogram(m, "scheduler_scheduling_attempt_duration_seconds",
                                     "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                                     result_profile, 0.001, 2, 15);
    sm->pending = ls_metrics_family(m, "scheduler_pending_pods",
                                    "Number of pending pods, by the queue type. 'active' means number of pods in "
                                    "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
                                    "number of pods in unschedulablePods that the scheduler attempted to schedule and "
                                    "failed; 'gated' is the number of unschedulable pods that the scheduler never "
                                    "attempted to schedule because they are gated.",
                                    LS_METRIC_GAUGE, queue, NULL, 0);
    sm->incoming = ls_metrics_family(m, "scheduler_queue_incoming_pods_total",
                                     "Number of pods added to scheduling queues by event and queue type.",
                                     LS_METRIC_COUNTER, queue_event, NULL, 0);
    sm->extension_point = histogram(m, "scheduler_framework_extension_point_duration_seconds",
                                    "Latency for running all plugins of a specific extension point.",
                                    point_status_profile, 0.0001, 2, 12);
    sm->plugin_execution = histogram(m, "scheduler_plugin_execution_duration_seconds",
                                     "Duration for running a plugin at a specific extension point.",
                                     plugin_point_status, 0.00001, 1.5, 20);
    sm->preemption_attempts = ls_metrics_family(m, "scheduler_preemption_attempts_total",
                                                "Total preemption attempts in the cluster till now",
                                                LS_METRIC_COUNTER, NULL, NULL, 0);
    sm->preemption_victims = histogram(m, "scheduler_preemption_victims", "Number of selected preemption victims",
                                       NULL, 1, 2, 7);
    sm->pod_attempts = histogram(m, "scheduler_pod_scheduling_attempts",
                                 "Number of attempts to successfully schedule a pod.", NULL, 1, 2, 5);
    sm->cache_size = ls_metrics_family(m, "scheduler_scheduler_cache_size",
                                       "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                                       LS_METRIC_GAUGE, type, NULL, 0);
}

/* OpportunisticBatching's counters, upstream's names, labels and help. */
static void attach_batch(ls_sched_metrics *sm, ls_metrics *m)
{
    static const char *const profile_result[] = {"profile", "result", NULL};
    static const char *const profile_reason[] = {"profile", "reason", NULL};
    static const char *const profile[] = {"profile", NULL};
    sm->batch_attempts = ls_metrics_family(m, "scheduler_batch_attempts_total",
                                           "Counts of results when we attempt to use batching.", LS_METRIC_COUNTER,
                                           profile_result, NULL, 0);
    sm->batch_flushed = ls_metrics_family(m, "scheduler_batch_cache_flushed_total",
                                          "Counts of cache flushes by reason.", LS_METRIC_COUNTER, profile_reason,
                                          NULL, 0);
    sm->batch_rescores = ls_metrics_family(m, "scheduler_batch_rescore_attempts_total",
                                           "Counts of rescore attempts during opportunistic batching.",
                                           LS_METRIC_COUNTER, profile, NULL, 0);
}

void ls_sched_metrics_batch(ls_sched_metrics *sm, int which, const char *profile, const char *label)
{
    if (!sm->registry)
        return;
    const char *labels[] = {profile, label};
    ls_metric_family *f = which == LS_BATCH_METRIC_ATTEMPT ? sm->batch_attempts
                          : which == LS_BATCH_METRIC_FLUSH ? sm->batch_flushed
                                                            : sm->batch_rescores;
    ls_metrics_add(f, labels, 1);
}

static void attach_luasched(ls_sched_metrics *sm, ls_metrics *m)
{
    static const char *const result[] = {"result", NULL};
    sm->reloads = ls_metrics_family(m, "luasched_reloads_total",
                                    "Hot reloads of the configuration and plugins, by result (success or failure).",
                                    LS_METRIC_COUNTER, result, NULL, 0);
    static const char *const who[] = {"plugin", "extension_point", "profile", NULL};
    sm->budget_overruns = ls_metrics_family(m, "luasched_plugin_budget_overruns_total",
                                            "Plugin calls stopped by the instruction or time budget, by the plugin "
                                            "whose code ran, its extension point and profile.",
                                            LS_METRIC_COUNTER, who, NULL, 0);
    sm->lua_restarts = ls_metrics_family(m, "luasched_lua_restarts_total",
                                         "Lua states rebuilt after a plugin exhausted its budget or memory or "
                                         "faulted, by that plugin, its extension point and profile.",
                                         LS_METRIC_COUNTER, who, NULL, 0);
    ls_metrics_declare(sm->budget_overruns);   /* from the first scrape; samples from a first cut-off */
    ls_metrics_declare(sm->lua_restarts);
    sm->plugin_errors = ls_metrics_family(m, "luasched_error_attempts_total",
                                          "Scheduling attempts that ended in an Error status (plugin faults among "
                                          "them).",
                                          LS_METRIC_COUNTER, NULL, NULL, 0);
    sm->hint_errors = ls_metrics_family(m, "luasched_queueing_hint_errors_total",
                                        "Queueing hints that raised or returned neither Queue nor Skip (the pod "
                                        "was queued).",
                                        LS_METRIC_COUNTER, NULL, NULL, 0);
    static const char *const profile[] = {"profile", NULL};
    sm->lua_memory = ls_metrics_family(m, "luasched_lua_memory_bytes",
                                       "Memory held by the Lua state of each profile (one state per profile).",
                                       LS_METRIC_GAUGE, profile, NULL, 0);
}

void ls_sched_metrics_attach(ls_sched_metrics *sm, ls_metrics *registry)
{
    *sm = (ls_sched_metrics){.registry = registry};
    if (!registry)
        return;
    attach_upstream(sm, registry);
    attach_batch(sm, registry);
    attach_luasched(sm, registry);
    /* Every metric is registered at start: those without labels have their
     * one series from registration (scheduler_preemption_victims, ...); the
     * reload results are known in advance. */
    const char *ok[] = {"success"}, *bad[] = {"failure"};
    ls_metrics_touch(sm->reloads, ok);
    ls_metrics_touch(sm->reloads, bad);
}

void ls_sched_metrics_profile(ls_sched_metrics *sm, const char *profile)
{
    if (!sm->registry)
        return;
    static const char *const results[] = {"scheduled", "unschedulable", "error"};
    for (int i = 0; i < 3; i++) {
        const char *labels[] = {results[i], profile};
        ls_metrics_touch(sm->attempts, labels);
        ls_metrics_touch(sm->attempt_duration, labels);
    }
}

void ls_sched_metrics_attempt(ls_sched_metrics *sm, const char *result, const char *profile, double seconds,
                              uint32_t pod_attempts)
{
    if (!sm->registry)
        return;
    const char *labels[] = {result, profile};
    ls_metrics_add(sm->attempts, labels, 1);
    ls_metrics_observe(sm->attempt_duration, labels, seconds);
    if (pod_attempts)
        ls_metrics_observe(sm->pod_attempts, NULL, pod_attempts);
}

void ls_sched_metrics_extension_point(ls_sched_metrics *sm, const char *point, uint8_t code, const char *profile,
                                      double seconds)
{
    if (!sm->registry)
        return;
    const char *labels[] = {point, ls_code_name(code), profile};
    ls_metrics_observe(sm->extension_point, labels, seconds);
}

void ls_sched_metrics_plugin(ls_sched_metrics *sm, const char *plugin, const char *point, uint8_t code,
                             double seconds)
{
    if (!sm->registry)
        return;
    const char *labels[] = {plugin, point, ls_code_name(code)};
    ls_metrics_observe(sm->plugin_execution, labels, seconds);
}

void ls_sched_metrics_preemption(ls_sched_metrics *sm, uint32_t victims)
{
    if (!sm->registry)
        return;
    ls_metrics_add(sm->preemption_attempts, NULL, 1);
    if (victims)
        ls_metrics_observe(sm->preemption_victims, NULL, victims);
}

void ls_sched_metrics_incoming(ls_sched_metrics *sm, ls_qwhere queue, const char *event)
{
    if (!sm->registry)
        return;
    static const char *const names[] = {"", "active", "backoff", "unschedulable", ""};
    const char *labels[] = {names[queue], event};
    ls_metrics_add(sm->incoming, labels, 1);
}

void ls_sched_metrics_reload(ls_sched_metrics *sm, bool succeeded)
{
    if (!sm->registry)
        return;
    const char *labels[] = {succeeded ? "success" : "failure"};
    ls_metrics_add(sm->reloads, labels, 1);
}

void ls_sched_metrics_publish(ls_sched_metrics *sm, const ls_sched_gauges *g)
{
    if (!sm->registry)
        return;
    const char *q[][1] = {{"active"}, {"backoff"}, {"unschedulable"}, {"gated"}};
    ls_metrics_set(sm->pending, q[0], g->active);
    ls_metrics_set(sm->pending, q[1], g->backoff);
    ls_metrics_set(sm->pending, q[2], g->unschedulable);
    ls_metrics_set(sm->pending, q[3], g->gated);
    const char *t[][1] = {{"nodes"}, {"pods"}, {"assumed_pods"}};
    ls_metrics_set(sm->cache_size, t[0], g->nodes);
    ls_metrics_set(sm->cache_size, t[1], g->pods);
    ls_metrics_set(sm->cache_size, t[2], g->assumed_pods);
    ls_metrics_set(sm->plugin_errors, NULL, (double)g->error_attempts);
    ls_metrics_set(sm->hint_errors, NULL, (double)g->hint_errors);
}

void ls_sched_metrics_faults(ls_sched_metrics *sm, const char *profile, const char *plugin, const char *point,
                             uint64_t overruns, uint64_t restarts)
{
    if (!sm->registry)
        return;
    const char *labels[] = {plugin, point, profile};
    if (overruns)
        ls_metrics_add(sm->budget_overruns, labels, (double)overruns);
    if (restarts)
        ls_metrics_add(sm->lua_restarts, labels, (double)restarts);
}

void ls_sched_metrics_lua_memory(ls_sched_metrics *sm, const char *profile, size_t bytes)
{
    if (!sm->registry)
        return;
    const char *labels[] = {profile};
    ls_metrics_set(sm->lua_memory, labels, (double)bytes);
}

void ls_sched_metrics_forget_lua_memory(ls_sched_metrics *sm)
{
    if (sm->registry)
        ls_metrics_clear(sm->lua_memory);
}
