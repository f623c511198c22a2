/*
 * scheduler.h: the scheduling pipeline both modes share. A source (the
 * embedded cluster, or informers on a real API server) feeds events in; the
 * scheduler keeps the cache and the queue, runs one cycle per pod through the
 * framework, and hands bindings back to the source.
 */
#ifndef LUASCHED_SCHEDULER_H
#define LUASCHED_SCHEDULER_H

#include "luasched/config.h"
#include "luasched/events.h"

typedef struct ls_scheduler ls_scheduler;

/* One scheduling attempt's outcome, as reported to the source and to output. */
typedef struct ls_attempt {
    const ls_pod *pod;
    uint32_t profile;
    ls_str node;                  /* 0 when the pod was not bound */
    uint8_t code;                 /* LS_SUCCESS, or the failure's code */
    const char *message;          /* upstream's message for a failure, NULL on success */
    const char *reason;           /* "Unschedulable" or "SchedulerError"; NULL on success */
    uint32_t num_all_nodes;
    uint32_t num_feasible;
    const int64_t *total_scores;  /* per feasible node when tracing, else NULL */
    uint64_t time_ms;             /* on the scheduler's clock (virtual in a simulation) */
    uint32_t attempt;             /* 1 for the pod's first attempt */
    ls_str nominated_node;        /* set by PostFilter (preemption), 0 otherwise */
    uint32_t n_victims;           /* pods this attempt preempted */
    const ls_pod *const *victims;
    /* Permit: LS_PERMIT_NOT_RUN when the attempt ended before it; WAITING in
     * the on_permit_wait report (the outcome follows in on_attempt); then
     * ALLOWED, REJECTED or TIMED_OUT, with `permit_waited` and the wait's
     * length when a plugin had returned Wait, and the rejecting plugin. */
    uint8_t permit;
    bool permit_waited;
    uint64_t permit_wait_ms;
    ls_str permit_plugin;
    bool via_nominated_node;      /* the pod's nominated node alone was tried (and passed) */
    bool via_batch_hint;          /* that node was OpportunisticBatching's hint (placed from the batch) */
    /* NominatedNodeNameForExpectation: the node status.nominatedNodeName was
     * set to for the binding (a Permit made the pod wait, or the profile has
     * PreBind work), 0 otherwise; on a failed attempt it was cleared again. */
    ls_str expected_node;
} ls_attempt;

enum { LS_PERMIT_NOT_RUN, LS_PERMIT_WAITING, LS_PERMIT_ALLOWED, LS_PERMIT_REJECTED, LS_PERMIT_TIMED_OUT };

typedef struct ls_sched_source {
    void *ud;
    /* Makes the binding happen (the embedded cluster applies it; real mode POSTs
     * pods/binding). May call back into ls_scheduler_on_pod_* synchronously. */
    bool (*bind)(void *ud, const ls_pod *pod, ls_str node, ls_error *err);
    /* Called after every attempt; `cycle` is valid during the call only. */
    void (*on_attempt)(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s);
    /* Optional: a Permit plugin made the attempt wait (a->permit is
     * LS_PERMIT_WAITING; `cycle` still holds its Filter and Score). The same
     * attempt's outcome comes later through on_attempt. */
    void (*on_permit_wait)(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s);
    /* Timed changes the source will make (a simulation's timeline): the time of
     * the next one, and playing every change due by `now_ms`. Both optional. */
    bool (*next_change_ms)(void *ud, uint64_t *at_ms);
    void (*advance_to)(void *ud, uint64_t now_ms);
    /* Preemption: give the victim the DisruptionTarget condition (reason
     * PreemptionByScheduler, the message given) and delete it. May call back into
     * ls_scheduler_on_pod_delete synchronously. */
    bool (*preempt)(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node, const char *message,
                    ls_error *err);
    /* Optional: a pod's nomination was cleared (DefaultPreemption clearing
     * lower-priority pods nominated to the node it chose): status.nominatedNodeName
     * goes too. */
    void (*clear_nomination)(void *ud, const ls_pod *pod);
    /* Optional: an HTTP extender bound the pod (its bindVerb). An embedded
     * cluster applies the binding the extender made; NULL for a real API
     * server, whose informers report it. */
    void (*extender_bound)(void *ud, const ls_pod *pod, ls_str node);
    /* Optional: status.nominatedNodeName = node for a pod about to be bound
     * there (NominatedNodeNameForExpectation), so that other pods and
     * components see where it is going while Permit or PreBind takes time. */
    void (*nominate)(void *ud, const ls_pod *pod, ls_str node);
    /* Optional, for the real-time loop: block until the source has events or
     * `ms` milliseconds have passed (without it, the loop sleeps). */
    void (*wait)(void *ud, uint64_t ms);
    /* Optional: a JSON merge patch on an object's status subresource (a
     * plugin's PreBind writing a ResourceClaim's allocation). Synchronous;
     * the change comes back as the object's update event. */
    bool (*patch_status)(void *ud, const ls_object *obj, const char *merge_patch, ls_error *err);
    /* Optional: a plugin's API write (VolumeBinding's PreBind): a JSON merge
     * patch on one object of `kind` (ns 0 when cluster-scoped). The change
     * comes back as the object's update event, possibly synchronously. */
    bool (*patch_object)(void *ud, ls_str kind, ls_str ns, ls_str name, const char *merge_patch, ls_error *err);
    /* Optional: a plugin's API create (DynamicResources' PreBind creating the
     * claim of a pod's extended resources): the object's JSON, whose
     * metadata may give generateName instead of a name; the created name in
     * name_out. The object comes back as an add event, possibly synchronously. */
    bool (*create_object)(void *ud, const char *json, char *name_out, size_t name_cap, ls_error *err);
} ls_sched_source;

typedef struct ls_sched_options {
    uint64_t seed;
    bool trace;                   /* record per-node, per-plugin verdicts and scores (explain) */
    const char *plugin_path;      /* searched before $LUASCHED_PLUGIN_PATH or the built-in plugins/ */
    uint64_t plugin_timeout_ms;   /* wall-clock limit of one call into Lua; 0 = 10 s */
} ls_sched_options;

/* Takes ownership of cfg (expanded here, with the plugins loaded). */
ls_scheduler *ls_scheduler_new(ls_config *cfg, const ls_sched_options *opt, const ls_sched_source *src,
                               ls_error *err);
void ls_scheduler_free(ls_scheduler *s);

/* Cluster events. Objects stay owned by the source and must outlive their
 * presence here (until the matching remove/update returns). */
void ls_scheduler_on_node_add(ls_scheduler *s, const ls_node *node);
void ls_scheduler_on_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node);
void ls_scheduler_on_node_delete(ls_scheduler *s, const ls_node *node);
void ls_scheduler_on_pod_add(ls_scheduler *s, const ls_pod *pod);
void ls_scheduler_on_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod);
void ls_scheduler_on_pod_delete(ls_scheduler *s, const ls_pod *pod);
/* Namespaces, Services, ReplicaSets, ..., PodDisruptionBudgets, custom resources. */
void ls_scheduler_on_object_add(ls_scheduler *s, const ls_object *obj);
void ls_scheduler_on_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj);
void ls_scheduler_on_object_delete(ls_scheduler *s, const ls_object *obj);
/* The API server refused the deletion of a victim of `preemptor` (async
 * preemption): its nomination goes and it moves to activeQ. */
void ls_scheduler_preemption_failed(ls_scheduler *s, const ls_pod *preemptor, const char *message);

/* A binding that the source accepted (its bind returned true) and that the
 * API server later refused: the assumed pod is forgotten and retried after
 * backoff; the failure is reported through on_attempt with `message`. */
void ls_scheduler_bind_failed(ls_scheduler *s, const ls_pod *pod, const char *message);
/* A pod deleted while its binding was in flight: once the binding's outcome
 * is known, the room it held on the assumed node is given back. */
void ls_scheduler_forget_assumed(ls_scheduler *s, const ls_pod *pod);

/* Pops one pod and runs its scheduling and binding cycles; false when the
 * active queue is empty. */
bool ls_scheduler_schedule_one(ls_scheduler *s);
/* Schedules until the active queue is empty; returns the attempts made. */
uint64_t ls_scheduler_run(ls_scheduler *s);

/* Hot reload. ls_scheduler_watch starts watching the configuration file (NULL:
 * the built-in default) and the loaded plugin files; ls_scheduler_reload builds
 * a new framework beside the running one and swaps it in, or keeps the running
 * one (and counts the failure); ls_scheduler_reload_if_changed reloads when a
 * watched file changed, or when `forced` (SIGHUP). Call between cycles. */
void ls_scheduler_watch(ls_scheduler *s, const char *config_path);
bool ls_scheduler_reload(ls_scheduler *s, ls_error *err);
bool ls_scheduler_reload_if_changed(ls_scheduler *s, bool forced);
uint64_t ls_scheduler_reloads(const ls_scheduler *s, bool succeeded);

/* Runs on the wall clock: the source's timed changes play in real time, hot
 * reload is checked between cycles, and the loop ends when nothing is left to
 * do (or, with `hold`, when *stop is set, e.g. by SIGINT/SIGTERM). *reload set
 * (SIGHUP) forces a reload. */
#include <signal.h>
typedef struct ls_run_control {
    volatile sig_atomic_t *stop;
    volatile sig_atomic_t *reload;
    bool hold;
    /* Optional: the loop's progress for a liveness check. Each pass stores
     * the monotonic time in ms and the number of pods queued. */
    void (*progress)(void *ud, uint64_t now_ms, uint64_t queued);
    void *progress_ud;
} ls_run_control;
uint64_t ls_scheduler_run_realtime(ls_scheduler *s, const ls_run_control *ctl);

/* Plugin faults so far: attempts that ended in Error, plugin calls stopped by
 * the instruction or time budget, and Lua states rebuilt after a call had to
 * be cut off. */
typedef struct ls_fault_counts {
    uint64_t error_attempts, budget_overruns, lua_restarts, hint_errors;
} ls_fault_counts;
ls_fault_counts ls_scheduler_faults(const ls_scheduler *s);

/* Introspection for output and tests. */
const ls_config *ls_scheduler_config(const ls_scheduler *s);
const ls_profile *ls_scheduler_profile(const ls_scheduler *s, uint32_t i);
const ls_cache *ls_scheduler_cache(const ls_scheduler *s);
uint32_t ls_scheduler_pending(const ls_scheduler *s);
/* Scheduling cycles started so far. Each begins with a snapshot update, after
 * which the scheduler holds no pointer to an object replaced before it: a
 * source may free replaced objects once this has moved on by one and no pod
 * waits on Permit. */
uint64_t ls_scheduler_cycles(const ls_scheduler *s);
/* The snapshot's updates so far. Objects a source replaced or deleted before
 * the current epoch began are no longer referenced by the snapshot (the cache
 * and the queue let go of them at once); refresh moves to a new epoch now,
 * between cycles, so that a source can free them without waiting for one. */
uint64_t ls_scheduler_snapshot_epoch(const ls_scheduler *s);
void ls_scheduler_refresh_snapshot(ls_scheduler *s);
/* True while the queue keeps events received during an attempt still in
 * progress (a pod waiting at Permit): their old and new objects are replayed
 * if that attempt fails, so a source must not free replaced objects yet. */
bool ls_scheduler_holds_event_objects(const ls_scheduler *s);
/* The custom resources ("plural.version.group") plugins registered events
 * for, at most cap of them; the names stay valid for the process. */
uint32_t ls_scheduler_custom_resources(const ls_scheduler *s, const char **out, uint32_t cap);
/* The same per plugin: the (profile, plugin, custom resource) triples of the
 * events tables, each once, at most cap; the names stay valid for the process. */
typedef struct ls_custom_use {
    uint32_t profile;
    const char *plugin, *resource;
} ls_custom_use;
uint32_t ls_scheduler_custom_uses(const ls_scheduler *s, ls_custom_use *out, uint32_t cap);
uint64_t ls_scheduler_now_ms(const ls_scheduler *s);

/* The HTTP extenders' part of the last cycle, when tracing (explain, JSON
 * output): how many there are and their names (urlPrefix, in call order:
 * ignorable ones last); their Filter verdict on the snapshot's node `index`
 * (NULL when none was asked about it, "passed", or why it was filtered out);
 * extender e's raw and final (x weight x 10) score of the cycle's feasible
 * node i (false when it gave none). */
uint32_t ls_scheduler_num_extenders(const ls_scheduler *s);
const char *ls_scheduler_extender_name(const ls_scheduler *s, uint32_t e);
const char *ls_scheduler_extender_verdict(const ls_scheduler *s, uint32_t node_index);
bool ls_scheduler_extender_score(const ls_scheduler *s, uint32_t e, uint32_t i, int64_t *raw, int64_t *final);

/* Shadow policies (--shadow): a candidate configuration `cfg` (taken; freed
 * on failure), loaded into a policy of its own (its plugins with opt's
 * plugin path, budget and seed, its own Lua state; no queue, cache or source
 * of its own), evaluates every pod this scheduler attempts, right after the
 * attempt's cycle, on this scheduler's snapshot, objects and nominations:
 * PreFilter, Filter, PreScore, Score and the seeded choice, never assuming,
 * reserving or binding (no PostFilter: an empty feasible set is its
 * "unschedulable"). The shadow profile is the one with the pod's
 * schedulerName, else the shadow's first. Attempts that end in an error here
 * are not compared. Refused (false, err set) when the configuration does not
 * load or has HTTP extenders, which a shadow does not call. With watch_path
 * (the file cfg came from), the run-time loop reloads it like this
 * scheduler; NULL: never reloaded. */
bool ls_scheduler_set_shadow(ls_scheduler *s, ls_config *cfg, const ls_sched_options *opt, const char *watch_path,
                             ls_error *err);
typedef struct ls_shadow_stats {
    const char *profile;          /* the shadow profile's schedulerName */
    uint64_t evaluations;         /* live attempts with a verdict that the shadow evaluated */
    uint64_t node_disagreements;  /* both scheduled the pod, on different nodes */
    uint64_t schedulability_disagreements;   /* one scheduled it, the other found no node */
    uint64_t failures;            /* the shadow's evaluation ended in an error */
} ls_shadow_stats;
uint32_t ls_scheduler_shadow_stats(const ls_scheduler *s, ls_shadow_stats *out, uint32_t cap);

/* Where a pending pod is when the run ends. */
typedef struct ls_pod_queue_state {
    bool known;                   /* the queue holds the pod */
    bool gated;
    const char *gate_message;     /* the PreEnqueue status holding it */
    const char *pre_enqueue_error;/* PreEnqueue could not run (the runtime's error): it backs off */
    uint32_t attempts;
} ls_pod_queue_state;
ls_pod_queue_state ls_scheduler_pod_state(const ls_scheduler *s, const ls_pod *pod);

/* Pending pods per queue, for the summary and the metrics. */
typedef struct ls_queue_gauges {
    uint32_t active, backoff, unschedulable, gated;
} ls_queue_gauges;
ls_queue_gauges ls_scheduler_queue_gauges(const ls_scheduler *s);
/* Cluster events so far (luasched/events.h's ls_event_stats). */
ls_event_stats ls_scheduler_event_stats(const ls_scheduler *s);
/* The same per event label ("NodeAdd", "NodeUpdate", "AssignedPodAdd", ...;
 * at most 24, the last one "other"), in the order the labels first came. */
uint32_t ls_scheduler_event_stats_by_label(const ls_scheduler *s, ls_event_label_stats *out, uint32_t cap);
size_t ls_scheduler_lua_memory(const ls_scheduler *s);

/* Metrics (upstream's scheduler_* families and luasched_*) go to this registry
 * from now on; NULL turns them off (the default). The registry must outlive
 * the scheduler or be detached first. */
struct ls_metrics;
void ls_scheduler_set_metrics(ls_scheduler *s, struct ls_metrics *registry);

#endif
