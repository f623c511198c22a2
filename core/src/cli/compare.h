/*
 * compare.h: what `luasched compare` measures of one run of a trace under one
 * policy and seed (compare.c), and the reports built from it: text, JSON
 * (compare.c) and a self-contained HTML page with inline SVG charts
 * (compare_html.c).
 */
#ifndef LS_CLI_COMPARE_H
#define LS_CLI_COMPARE_H

#include "luasched/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cJSON;

#define CMP_SAMPLES 60      /* allocation samples over the trace's span */
#define CMP_MAX_POLICIES 16
#define CMP_ARRIVED_MAX 130 /* GPU metrics at each arrived-workload percent 0..130 */
#define CMP_BINS 10         /* histogram bins of the final per-node utilization */
#define CMP_MAX_METRICS 8   /* metrics written in Lua (--metric), the built-in GPU ones included */

/* One distribution summary (fractions 0..1 for allocation, seconds for latency). */
typedef struct cmp_dist {
    uint32_t n;
    double mean, stddev, min, max, p50, p90, p99;
} cmp_dist;

/* Cluster-wide allocation at one moment: per-node requested / allocatable. */
typedef struct cmp_sample {
    double at_s;
    cmp_dist cpu, mem;
} cmp_sample;

typedef struct cmp_zone {
    char *name;             /* topology.kubernetes.io/zone, or "(none)" */
    uint32_t pods;          /* pods on the zone's nodes at the end */
} cmp_zone;

/* Kinds of pods by GPU request (the FGD paper's breakdown of failed tasks). */
enum { CMP_KIND_CPU, CMP_KIND_SHARED, CMP_KIND_WHOLE, CMP_KIND_MULTI, CMP_KINDS };

/* GPU metrics of one run (compare_gpu.c), when the trace has GPU nodes
 * (allocatable alibabacloud.com/gpu-milli). At each percent p of arrived
 * workload (the GPU milli requested by the pods created so far, bound or not,
 * over the cluster's GPU milli), the cluster's allocated GPU milli over its
 * GPU milli; NaN where not reached. (The fragmentation is a Lua metric,
 * compare_lua.c.) */
typedef struct cmp_gpu {
    bool present;
    int64_t capacity_milli;
    double alloc[CMP_ARRIVED_MAX + 1];
    uint32_t pods[CMP_KINDS], unscheduled[CMP_KINDS];
    /* while running */
    uint32_t seen;              /* pods of the cluster looked at */
    int64_t arrived_milli;
    int next_percent;
} cmp_gpu;

typedef struct cmp_run {
    uint64_t seed;
    uint32_t pods, bound, unschedulable, preempted, gated, deleted, running;
    uint64_t attempts;
    double seconds;         /* wall clock of the scheduling run */
    double cpu_seconds;     /* the process's CPU time over the scheduling run */
    double metric_cpu_seconds;   /* the part of it (and of the end) spent on the Lua metrics */
    cmp_dist latency;       /* creation to binding, virtual seconds, bound pods */
    cmp_sample samples[CMP_SAMPLES + 1];
    uint32_t n_samples;
    cmp_dist cpu, mem;      /* at the end */
    uint32_t cpu_hist[CMP_BINS], mem_hist[CMP_BINS];
    /* Fragmentation: pending pods whose cpu/memory requests fit the free
     * capacity of at least one node (then something else holds them), and
     * the share of the free cpu that sits on nodes where the smallest
     * pending request does not fit. */
    uint32_t pending_fit_somewhere, pending_fit_nowhere;
    double stranded_cpu;
    cmp_zone *zones;
    uint32_t n_zones;
    double zone_imbalance;  /* stddev / mean of pods per zone */
    uint32_t agree_same, agree_recorded;   /* against the trace's Bindings (luasched record) */
    char **keys;            /* "namespace/name" per pod, in file order */
    char **nodes;           /* the node each pod ended on, NULL when none */
    cmp_gpu gpu;
    /* The Lua metrics (compare_lua.c) at each arrived percent, in the
     * report's metric order; NaN where not reached or without a value. */
    double metric[CMP_MAX_METRICS][CMP_ARRIVED_MAX + 1];
} cmp_run;

typedef struct cmp_policy {
    const char *name;       /* --config NAME=FILE, else the file's base name */
    bool named;             /* the name was given */
    const char *config;     /* path, or "default" for the built-in profile */
    cmp_run *runs;          /* one per seed */
    uint32_t n_runs;
    uint32_t seed_moves;    /* pods placed differently between its first two seeds */
} cmp_policy;

typedef struct cmp_diff {
    const char *pod, *node_a, *node_b;
} cmp_diff;

typedef struct cmp_report {
    const char *trace;
    cmp_policy *policy;
    uint32_t n_policies;
    uint32_t n_nodes;
    double span_s;          /* the trace's timeline span */
    cmp_diff *diffs;        /* the first seed of the first policy against that of the second */
    uint32_t n_diffs;
    uint64_t first_seed;
    bool has_reference;     /* the trace holds a recording's Bindings */
    char *not_recorded;     /* what the recording names as not recorded, "KIND: reason; ..."; NULL: none */
    const char *metric_name[CMP_MAX_METRICS];   /* the Lua metrics, built-in ones first */
    const char *metric_file[CMP_MAX_METRICS];
    uint32_t n_metrics;
} cmp_report;

/* One line of the report: its JSON key, its label, its unit ("", "s", or "%"
 * for a fraction shown as a percentage) and how it is read from a run. */
typedef struct cmp_metric {
    const char *key, *label, *unit;
    double (*get)(const cmp_run *);
} cmp_metric;

const cmp_metric *cmp_metrics(size_t *n);
/* Agreement with a recording's bindings: reported when the trace has them. */
const cmp_metric *cmp_agreement_metric(void);
void cmp_format_metric(char *buf, size_t len, const cmp_metric *m, double v);

/* The mean of one metric over a policy's seeds. */
double cmp_mean_over_seeds(const cmp_policy *p, double (*metric)(const cmp_run *));

/* A policy's letter in the text and HTML reports: A, B, C, ... */
char cmp_policy_letter(uint32_t p);
/* The GPU metrics (compare_gpu.c): before the run, at each clock advance,
 * at the end. */
struct ls_cluster;
struct ls_scheduler;
void cmp_gpu_start(cmp_gpu *g, const struct ls_cluster *c);
void cmp_gpu_advance(cmp_gpu *g, const struct ls_cluster *c, const struct ls_scheduler *s, uint64_t now_ms);
void cmp_gpu_finish(cmp_gpu *g, const struct ls_cluster *c, const struct ls_scheduler *s);
/* Mean and population stddev over a policy's runs of a GPU series at percent p (NaN-free runs only). */
void cmp_gpu_mean(const cmp_policy *pol, size_t offset, int p, double *mean, double *sd);
struct cJSON *cmp_gpu_json(const cmp_policy *pol);
void cmp_gpu_text(const cmp_report *r, FILE *out);
void cmp_gpu_html(const cmp_report *r, FILE *out);
/* compare_html.c: the colour of policy p on every chart; text escaped for
 * HTML (element text and attribute values). */
const char *cmp_chart_color(uint32_t p);
void cmp_html_escape(FILE *out, const char *s);

/* Metrics written in Lua (compare_lua.c): `--metric NAME=FILE.lua`. A file
 * returns a function of a read-only copy of the cluster (its nodes with their
 * resources and pods) returning a number, called at each arrived percent in a
 * Lua state of its own: the plugin sandbox's environment, an instruction
 * budget per call, a memory limit. The built-in GPU fragmentation metrics
 * (plugins/metrics/) are the report's first metrics; they have values on a
 * GPU trace only. */
#define CMP_BUILTIN_METRICS 2
typedef struct cmp_lua cmp_lua;
/* The report's metric list: the built-in ones, then --metric's (names and
 * files). False with a message on stderr when a name is bad or repeated. */
void cmp_lua_add_builtin(cmp_report *rep);
/* Metric k is a built-in one (its file a base name under plugins/metrics/). */
bool cmp_lua_is_builtin(const cmp_report *rep, uint32_t k);
bool cmp_lua_add(cmp_report *rep, char *arg);
/* Per run: the state with the metrics that apply (the GPU ones on a GPU
 * trace), the policy's plugin args (its first profile's, plugin name -> args;
 * may be NULL) and the plugin path (':'-separated, may be NULL) searched by
 * require, and the wall-clock limit of a call (0: 10 s; compare passes the
 * configuration's pluginTimeoutMilliseconds). */
cmp_lua *cmp_lua_open(const cmp_report *rep, bool gpu_trace, const struct cJSON *plugin_args, const char *plugin_path,
                      uint64_t timeout_ms, ls_error *err);
void cmp_lua_close(cmp_lua *m);
/* Samples the metrics at each arrived percent the pods created before now_ms
 * reach (all pods when `all`); false with err (the metric, its file:line)
 * when a metric failed. */
bool cmp_lua_advance(cmp_lua *m, const struct ls_cluster *c, const struct ls_scheduler *s, uint64_t now_ms, bool all,
                     cmp_run *run, ls_error *err);
/* The reports (compare_lua_report.c). Mean and population stddev of metric k
 * at percent p over a policy's runs. */
void cmp_lua_mean(const cmp_policy *pol, uint32_t k, int p, double *mean, double *sd);
bool cmp_lua_has_values(const cmp_report *r, uint32_t k);
struct cJSON *cmp_lua_json(const cmp_report *r, const cmp_policy *pol);
void cmp_lua_text(const cmp_report *r, FILE *out);
void cmp_lua_html(const cmp_report *r, FILE *out);

/* Frees what a run owns (its zones, pod keys and nodes). */
/* compare_measures.c: a distribution of n values (sorted in place); values
 * in [0, 1] counted into CMP_BINS bins; the cluster at the end of a run. */
cmp_dist cmp_summarize(double *v, uint32_t n);
void cmp_histogram(const double *v, uint32_t n, uint32_t *bins);
void cmp_fragmentation(const struct ls_cluster *c, const struct ls_scheduler *s, cmp_run *r);
void cmp_zone_balance(const struct ls_cluster *c, const struct ls_scheduler *s, cmp_run *r);
void cmp_free_run(cmp_run *r);
/* One run of policy p with its s-th seed (compare.c), for --jobs. */
typedef int (*cmp_run_fn)(void *ud, uint32_t p, uint32_t s, cmp_run *out, cmp_report *rep);
/* --jobs N (compare_jobs.c): the runs shared among N child processes and read
 * back into rep (every policy's runs array allocated, n_runs set). */
int cmp_run_jobs(uint32_t jobs, cmp_report *rep, uint32_t seeds, cmp_run_fn run, void *ud);

/* --shard I/N: writes shard I's runs, with a header, to out. */
int cmp_write_shard(FILE *out, uint32_t shard, uint32_t shards, cmp_report *rep, uint32_t seeds, cmp_run_fn run,
                    void *ud);
/* --merge: builds rep (policies, runs) from shard files; the strings it
 * allocates (trace, names, configs) are listed in *strs for the caller to free. */
int cmp_read_shards(char **paths, int n, cmp_report *rep, char ***strs, uint32_t *n_strs);

struct cJSON *cmp_report_json(const cmp_report *r);
void cmp_report_text(const cmp_report *r, FILE *out);
/* Writes the HTML page; false (errno set) when the file cannot be written. */
bool cmp_report_html(const cmp_report *r, FILE *out);

#endif
