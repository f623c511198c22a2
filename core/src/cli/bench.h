/*
 * bench.h: `luasched bench`, the scheduler_perf driver (internal to the CLI).
 *
 *  - bench_workload.c reads a workload file (kind: Workload, documented in
 *    bench/README.md) into a bench_workload: node groups, namespaces, init
 *    pods, measured pods and the churn operation, each with its template.
 *  - bench_cluster.c is the cluster the workload runs in: it builds the
 *    objects from the templates, plays the API server's part for the
 *    scheduler (binding, preemption), runs the churn on the scheduler's clock
 *    and takes the per-second throughput samples.
 *  - bench_ops.c runs a staged workload (`ops:`, upstream's workloadTemplate
 *    opcodes: createNodes, createPods, barrier, updateAny, deletePods,
 *    start/stopCollectingMetrics) in that cluster, on the wall clock.
 *  - bench.c is the command: flags, the phases of a run, and the report.
 */
#ifndef LS_CLI_BENCH_H
#define LS_CLI_BENCH_H

#include "luasched/scheduler.h"

#include <cjson/cJSON.h>
#include <signal.h>

/* ---- the workload file */

/* count objects made from one template (nodes or pods). */
typedef struct bench_group {
    uint32_t count;
    char *ns;                  /* pods: the namespace; nodes: NULL */
    cJSON *tmpl;               /* owned copy of the template */
    char *where;               /* "file:line" of the template, for decode errors */
    char *zone_key;            /* nodes: round-robin label (labelNodePrepareStrategy), or NULL */
    uint32_t n_zones;
    char **zones;
    cJSON *csinode;            /* nodes: a CSINode template made per node (upstream's csiNodeAllocatable), or NULL */
    cJSON *pv, *pvc;           /* pods: a PersistentVolume and a claim made per pod (upstream's
                                  persistentVolume(Claim)TemplatePath), or NULL */
    uint32_t gang_size;        /* pods (ours): every gang_size pods share a group object, or 0 */
    char *gang_label;          /* the pod label naming the group, or NULL: spec.schedulingGroup.podGroupName */
    cJSON *gang;               /* the group object's template (a PodGroup custom resource) */
} bench_group;

enum { BENCH_CHURN_CREATE, BENCH_CHURN_RECREATE, BENCH_CHURN_HEARTBEAT };

/* upstream's churn op: every interval, each template is created (create
 * mode), or alternately created and deleted (recreate mode, `number` objects
 * kept per template). Ours, heartbeat mode: every interval, `number` nodes
 * (round-robin) report a heartbeat (an update that changes nothing the
 * scheduler reads). */
typedef struct bench_churn {
    int mode;
    uint32_t number;           /* create: ticks (0 = until the end); recreate: objects per template;
                                * heartbeat: nodes per tick (0 = every node) */
    uint64_t interval_ms;
    char *ns;                  /* namespace of namespaced churn objects */
    uint32_t n_templates;
    cJSON **templates;         /* owned copies */
    char **where;
} bench_churn;

/* A staged workload's step: upstream's workloadTemplate opcodes. */
enum {
    BENCH_OP_CREATE_NODES, BENCH_OP_CREATE_PODS, BENCH_OP_BARRIER, BENCH_OP_UPDATE_ANY, BENCH_OP_DELETE_PODS,
    BENCH_OP_START_COLLECTING, BENCH_OP_STOP_COLLECTING
};

/* Which pods an op looks at: namespaces (none: all) and matchLabels. */
typedef struct bench_selector {
    uint32_t n_namespaces, n_labels;
    char **namespaces;
    char **keys, **values;
} bench_selector;

typedef struct bench_op {
    int code;
    char *where;               /* "file:line: ops[i]" */
    bench_group group;         /* createNodes / createPods: count, namespace, template;
                                  updateAny: count, namespace and the update's template */
    bool skip_wait;            /* createPods, deletePods: skipWaitToCompletion */
    bool attempted;            /* barrier: stageRequirement Attempted (else Scheduled) */
    uint32_t per_second;       /* updateAny: updatePerSecond; deletePods: deletePodsPerSecond (0: all at once) */
    bench_selector sel;        /* barrier, deletePods, startCollectingMetrics */
} bench_op;

typedef struct bench_workload {
    char *name;
    char *source;              /* the file */
    double threshold;          /* upstream's CI floor on the average, pods/s; 0 = none */
    ls_vec nodes;              /* bench_group, created in order */
    uint32_t n_namespaces;
    char **namespaces;
    uint32_t n_objects;        /* objects created after the namespaces (ElasticQuotas, Services, ...) */
    cJSON **objects;           /* owned copies */
    char **objects_where;
    ls_vec init_pods;          /* bench_group, scheduled before the measurement */
    ls_vec measure_pods;       /* bench_group, measured */
    bool has_churn;
    bench_churn churn;
    ls_vec ops;                /* bench_op: a staged workload (then no nodes/initPods/measurePods/churn) */
} bench_workload;

bool bench_workload_load(bench_workload *w, const char *path, ls_error *err);
void bench_workload_free(bench_workload *w);
uint32_t bench_group_total(const ls_vec *groups);

/* ---- the cluster */

enum { BENCH_ROLE_INIT, BENCH_ROLE_MEASURED, BENCH_ROLE_CHURN };
enum { BENCH_POD_PENDING, BENCH_POD_BOUND, BENCH_POD_FAILED, BENCH_POD_DELETED };

/* Per-second throughput samples, taken as upstream's throughputCollector
 * takes them (see bench_sampler_tick). */
typedef struct bench_sampler {
    double start;              /* wall clock when the measured pods were created */
    double last_time;          /* the last window boundary a sample was taken at */
    double next_tick;          /* the next window boundary */
    uint32_t last_count;
    uint32_t skipped;          /* windows without progress since the last sample */
    ls_vec samples;            /* double, pods/s */
} bench_sampler;

typedef struct bench_counts {
    uint32_t init_bound, init_failed;
    uint32_t measured, measured_bound, measured_failed;
    uint32_t churn_ticks, churn_created, churn_deleted, churn_bound, churn_heartbeats;
    uint32_t preempted;
    uint64_t attempts;         /* during the measurement */
    uint32_t nodes;            /* staged workloads: nodes created */
    uint32_t updates, deletes; /* staged workloads: updateAny and deletePods objects */
} bench_counts;

typedef struct bench_cluster bench_cluster;

bench_cluster *bench_cluster_new(const bench_workload *w);
void bench_cluster_free(bench_cluster *c);
ls_sched_source bench_cluster_source(bench_cluster *c);
/* Creates the nodes and the namespaces, and hands them to the scheduler. */
bool bench_cluster_create_nodes(bench_cluster *c, ls_scheduler *s, ls_error *err);
/* Decodes the pods of the groups (not yet handed to the scheduler). */
bool bench_cluster_decode_pods(bench_cluster *c, const ls_vec *groups, int role, ls_error *err);
/* Decodes each churn template once, so that a bad one fails before the run. */
bool bench_cluster_check_churn(bench_cluster *c, ls_error *err);
/* Hands every decoded pod of `role` to the scheduler, in creation order. */
void bench_cluster_add_pods(bench_cluster *c, int role);
/* Starts the measurement: the sampler's clock and the churn's ticks. */
void bench_cluster_start_measuring(bench_cluster *c, double now);
/* Ends it (the sampler's last, partial window) and returns when it ended. */
double bench_cluster_stop_measuring(bench_cluster *c, double now);
volatile sig_atomic_t *bench_cluster_stop_flag(bench_cluster *c);
bench_counts bench_cluster_counts(const bench_cluster *c);
const bench_sampler *bench_cluster_sampler(const bench_cluster *c);

/* A staged workload (w->ops): runs its ops in order on the wall clock,
 * the measurement between start- and stopCollectingMetrics. False (with
 * err) when an op fails; a barrier that can no longer be met ends the run
 * with the pods left counted unschedulable (bench_cluster_stall). */
bool bench_cluster_run_ops(bench_cluster *c, ls_scheduler *s, ls_error *err);
/* Why a staged run ended early, or NULL. */
const char *bench_cluster_stall(const bench_cluster *c);
/* Cluster events between start- and stopCollectingMetrics; wall and CPU time. */
ls_event_stats bench_cluster_collected_events(const bench_cluster *c);
double bench_cluster_collected_seconds(const bench_cluster *c, double *cpu_seconds);
/* The per-label event counts when collecting started (at = 0) and stopped (at = 1). */
uint32_t bench_cluster_collected_labels(const bench_cluster *c, int at, ls_event_label_stats *out, uint32_t cap);
#define BENCH_EVENT_LABELS 24

/* Records the samples due by `now` given `count` pods scheduled so far. */
void bench_sampler_tick(bench_sampler *sm, double now, uint32_t count);
/* Upstream's percentile: the ceil(n*p/100)-th smallest sample; 0 without samples. */
double bench_sampler_percentile(const bench_sampler *sm, int p);

#endif
