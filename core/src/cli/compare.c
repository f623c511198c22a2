/*
 * compare.c: `luasched compare TRACE --config A --config B ... [--seeds N]`:
 * runs one trace (a cluster file, usually with a Timeline) under each policy
 * and N seeds on the virtual clock, and reports per policy what a platform
 * team weighs: pods bound, pending, preempted; time from creation to binding;
 * per-node cpu and memory allocation over time and at the end; fragmentation;
 * zone balance; which pods the first two policies placed differently; and,
 * on a GPU trace, the GPU metrics of compare_gpu.c. A TRACE naming {seed}
 * is one trace per seed (`luasched import openb --seed`). The reports (text,
 * JSON, HTML) are in compare_report.c, compare_html.c and compare_gpu.c;
 * the measures of one run in compare_measures.c.
 */
#include "cli/cli.h"
#include "cli/compare.h"
#include "cli/import_openb.h"
#include "luasched/cache.h"
#include "luasched/config.h"
#include "luasched/scheduler.h"
#include "sim/cluster.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cmp_opts {
    const char *trace;
    const char *config[CMP_MAX_POLICIES];
    const char *name[CMP_MAX_POLICIES];
    bool named[CMP_MAX_POLICIES];
    int n_configs;
    uint32_t seeds;
    uint32_t jobs;
    uint32_t shard, shards;    /* --shard I/N (shards 0: not a shard) */
    bool merge;                /* --merge: the positional arguments are shard files */
    char **merge_files;
    int n_merge;
    uint64_t first_seed;
    const char *output;        /* text, json, html */
    const char *out_file;      /* -o: where the report goes (default standard output) */
    const char *plugin_path;
    const char *metric[CMP_MAX_METRICS];   /* --metric NAME=FILE.lua */
    int n_metrics;
    bool no_builtin_metrics;               /* --no-builtin-metrics */
} cmp_opts;

/* ---- allocation */

typedef struct alloc_view {
    double *cpu, *mem;         /* per live node, requested / allocatable */
    uint32_t n, cap;
} alloc_view;

static double fraction(int64_t used, int64_t capacity)
{
    return capacity > 0 ? (double)used / (double)capacity : 0;
}

static void read_allocation(const ls_cluster *c, const ls_scheduler *s, alloc_view *v)
{
    const ls_cache *cache = ls_scheduler_cache(s);
    uint32_t slots = ls_cluster_node_slots(c);
    if (slots > v->cap) {   /* a timeline added nodes */
        v->cap = slots;
        v->cpu = ls_xrealloc(v->cpu, slots * sizeof *v->cpu);
        v->mem = ls_xrealloc(v->mem, slots * sizeof *v->mem);
    }
    v->n = 0;
    for (uint32_t i = 0; i < slots; i++) {
        const ls_node *node = ls_cluster_node(c, i);
        const ls_node_info *ni = node ? ls_cache_node_info(cache, node->name) : NULL;
        if (!ni)
            continue;
        v->cpu[v->n] = fraction(ni->requested.milli_cpu, ni->allocatable.milli_cpu);
        v->mem[v->n] = fraction(ni->requested.memory, ni->allocatable.memory);
        v->n++;
    }
}

/* ---- one run */

typedef struct run_ctx {
    ls_cluster *cluster;
    const ls_scheduler *sched;
    cmp_run *out;
    cmp_lua *metrics;          /* the Lua metrics (compare_lua.c) */
    bool metric_failed;
    ls_error metric_err;
    alloc_view view;
    double sample_every_s;
    double next_sample_s;
} run_ctx;

static void take_sample(run_ctx *x, double at_s)
{
    if (x->out->n_samples > CMP_SAMPLES)
        return;
    read_allocation(x->cluster, x->sched, &x->view);
    cmp_sample *smp = &x->out->samples[x->out->n_samples++];
    smp->at_s = at_s;
    smp->cpu = cmp_summarize(x->view.cpu, x->view.n);
    smp->mem = cmp_summarize(x->view.mem, x->view.n);
}

/* Before the virtual clock moves to now, the allocation is what it has been
 * since the clock last moved: every sample time up to now gets it. */
static void sample_until(void *ud, uint64_t now_ms)
{
    run_ctx *x = ud;
    cmp_gpu_advance(&x->out->gpu, x->cluster, x->sched, now_ms);
    if (!x->metric_failed)
        x->metric_failed = !cmp_lua_advance(x->metrics, x->cluster, x->sched, now_ms, false, x->out, &x->metric_err);
    double now = (double)now_ms / 1000.0;
    while (x->sample_every_s > 0 && now > x->next_sample_s && x->out->n_samples < CMP_SAMPLES) {
        take_sample(x, x->next_sample_s);
        x->next_sample_s += x->sample_every_s;
    }
}

static void count_outcome(cmp_run *r, const ls_sim_pod *sp)
{
    switch (sp->outcome) {
    case LS_POD_BOUND: r->bound++; break;
    case LS_POD_UNSCHEDULABLE: r->unschedulable++; break;
    case LS_POD_PREEMPTED: r->preempted++; break;
    case LS_POD_GATED: r->gated++; break;
    case LS_POD_DELETED: r->deleted++; break;
    case LS_POD_RUNNING: r->running++; break;
    default: break;
    }
}

static char *pod_key(const ls_pod *pod)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%s/%s", ls_str_get(pod->ns), ls_str_get(pod->name));
    return ls_xstrdup(buf);
}

static void record_pods(const ls_cluster *c, cmp_run *r)
{
    uint32_t n = ls_cluster_num_pods(c);
    double *lat = ls_xcalloc(n + 1, sizeof *lat);
    uint32_t n_lat = 0;
    r->pods = n;
    r->keys = ls_xcalloc(n + 1, sizeof *r->keys);
    r->nodes = ls_xcalloc(n + 1, sizeof *r->nodes);
    for (uint32_t i = 0; i < n; i++) {
        const ls_sim_pod *sp = ls_cluster_pod(c, i);
        count_outcome(r, sp);
        r->keys[i] = pod_key(&sp->obj->pod);
        if (sp->outcome == LS_POD_BOUND || sp->outcome == LS_POD_RUNNING)
            r->nodes[i] = ls_xstrdup(ls_str_get(sp->outcome == LS_POD_BOUND ? sp->node : sp->obj->pod.node_name));
        if (sp->outcome == LS_POD_BOUND)
            lat[n_lat++] = (double)(sp->bound_at_ms - sp->created_at_ms) / 1000.0;
    }
    r->latency = cmp_summarize(lat, n_lat);
    free(lat);
}

static void final_state(run_ctx *x, const ls_scheduler *s)
{
    cmp_run *r = x->out;
    read_allocation(x->cluster, s, &x->view);
    cmp_histogram(x->view.cpu, x->view.n, r->cpu_hist);
    cmp_histogram(x->view.mem, x->view.n, r->mem_hist);
    r->cpu = cmp_summarize(x->view.cpu, x->view.n);
    r->mem = cmp_summarize(x->view.mem, x->view.n);
    take_sample(x, (double)ls_scheduler_now_ms(s) / 1000.0);
    record_pods(x->cluster, r);
    cmp_gpu_finish(&r->gpu, x->cluster, s);
    if (!x->metric_failed)
        x->metric_failed = !cmp_lua_advance(x->metrics, x->cluster, s, 0, true, r, &x->metric_err);
    cmp_fragmentation(x->cluster, s, r);
    cmp_zone_balance(x->cluster, s, r);
}

static int fail_run(const ls_error *err)
{
    fprintf(stderr, "luasched compare: %s\n", err->msg);
    return LS_EXIT_USAGE;
}

/* The trace of a seed: "{seed}" in the name is replaced by the seed. */
static void trace_of(const char *trace, uint64_t seed, char *buf, size_t len)
{
    const char *at = strstr(trace, "{seed}");
    if (!at)
        snprintf(buf, len, "%s", trace);
    else
        snprintf(buf, len, "%.*s%llu%s", (int)(at - trace), trace, (unsigned long long)seed, at + 6);
}

/* "openb:DIR" (DIR/openb_node_list_gpu_node.csv, the GPU nodes the paper's
 * data/prepare_input.sh gives every workload, and DIR/openb_pod_list_default.csv)
 * or "openb:NODES.csv,PODS.csv": the openb trace imported for the seed, as
 * `luasched import openb --inflate 1.3 --seed SEED` writes it (shuffled). */
static bool load_openb(ls_cluster *c, const char *spec, uint64_t seed, char **kept, ls_error *err)
{
    char nodes[2048], pods[2048];
    const char *comma = strchr(spec, ',');
    if (comma) {
        snprintf(nodes, sizeof nodes, "%.*s", (int)(comma - spec), spec);
        snprintf(pods, sizeof pods, "%s", comma + 1);
    } else {
        snprintf(nodes, sizeof nodes, "%s/openb_node_list_gpu_node.csv", spec);
        snprintf(pods, sizeof pods, "%s/openb_pod_list_default.csv", spec);
    }
    openb_trace t;
    if (!openb_read(&t, nodes, pods, err))
        return false;
    openb_sample(&t, 1.3, (int64_t)seed, OPENB_ORDER_SHUFFLE);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    bool ok = mem && openb_write(&t, mem);
    if (mem)
        fclose(mem);
    openb_free(&t);
    if (!ok) {
        free(text);
        return ls_errorf(err, "openb:%s: cannot write the trace in memory", spec);
    }
    char source[64];
    snprintf(source, sizeof source, "openb (seed %llu)", (unsigned long long)seed);
    *kept = text;   /* the cluster reads its documents from the text until it is freed */
    return ls_cluster_load_text(c, text, len, source, err);
}

static bool load_trace(ls_cluster *c, const char *trace, ls_error *err)
{
    return ls_cluster_load_file(c, trace, err);
}

/* Loads the trace afresh, schedules it under one policy and seed. */
static int run_once(const cmp_opts *o, const char *config, uint64_t seed, cmp_run *out, cmp_report *rep)
{
    ls_error err;
    ls_cluster *c = ls_cluster_new();
    ls_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int rc = LS_EXIT_OK;
    char trace[4096];
    trace_of(o->trace, seed, trace, sizeof trace);
    char *text = NULL;
    bool loaded = strncmp(o->trace, "openb:", 6) == 0 ? load_openb(c, o->trace + 6, seed, &text, &err)
                                                       : load_trace(c, trace, &err);
    if (!loaded || !ls_cluster_admit(c, &err))
        rc = fail_run(&err);
    else if (!ls_config_load(&cfg, strcmp(config, "default") == 0 ? NULL : config, &err))
        rc = fail_run(&err);
    if (rc) {
        ls_config_free(&cfg);
        ls_cluster_free(c);
        free(text);
        return rc;
    }
    uint64_t end_ms = 0;
    ls_cluster_timeline_end(c, &end_ms);
    rep->span_s = (double)end_ms / 1000.0;
    run_ctx x = {.cluster = c, .out = out, .sample_every_s = end_ms ? (double)end_ms / 1000.0 / CMP_SAMPLES : 0};
    char *dirs = !o->plugin_path && cfg.luasched.plugin_dirs ? ls_xstrdup(cfg.luasched.plugin_dirs) : NULL;
    ls_sched_options so = {.seed = seed, .plugin_path = o->plugin_path ? o->plugin_path : dirs,
                           .plugin_timeout_ms = cfg.luasched.plugin_timeout_ms};
    ls_sched_source src = ls_cluster_source(c, NULL, NULL);
    ls_cluster_on_advance(c, sample_until, &x);
    cmp_gpu_start(&out->gpu, c);
    /* The policy's plugin args for the metrics, as written (the scheduler takes the configuration's). */
    cJSON *plugin_args = cfg.n_profiles && cfg.profiles[0].plugin_args ? cJSON_Duplicate(cfg.profiles[0].plugin_args, 1)
                                                                       : NULL;
    ls_scheduler *s = ls_scheduler_new(&cfg, &so, &src, &err);
    x.sched = s;
    if (s && rep->n_metrics) {
        x.metrics = cmp_lua_open(rep, out->gpu.present, plugin_args, so.plugin_path, so.plugin_timeout_ms,
                                 &x.metric_err);
        x.metric_failed = x.metrics == NULL;
    }
    if (!s) {
        rc = fail_run(&err);
    } else if (x.metric_failed) {
        fprintf(stderr, "luasched compare: %s\n", x.metric_err.msg);
        rc = LS_EXIT_PLUGIN_ERROR;
    } else {
        ls_cluster_start(c, s);
        double t0 = ls_cli_now(), cpu0 = ls_cli_cpu_now();
        out->seed = seed;
        out->attempts = ls_scheduler_run(s);
        out->seconds = ls_cli_now() - t0;
        out->cpu_seconds = ls_cli_cpu_now() - cpu0;
        ls_cluster_finish(c, s);
        if (!ls_cluster_check(c, &err)) {
            fprintf(stderr, "luasched compare: invariant violated: %s\n", err.msg);
            rc = LS_EXIT_FAILURE;
        }
        rep->n_nodes = ls_cluster_num_nodes(c);
        rep->has_reference = ls_cluster_agreement(c, &out->agree_same, &out->agree_recorded);
        if (!rep->not_recorded && ls_cluster_not_recorded(c))
            rep->not_recorded = ls_xstrdup(ls_cluster_not_recorded(c));
        final_state(&x, s);
        if (x.metric_failed) {
            fprintf(stderr, "luasched compare: %s\n", x.metric_err.msg);
            rc = LS_EXIT_PLUGIN_ERROR;
        }
    }
    cmp_lua_close(x.metrics);
    cJSON_Delete(plugin_args);
    if (s)
        ls_scheduler_free(s);
    free(dirs);
    free(x.view.cpu);
    free(x.view.mem);
    ls_config_free(&cfg);
    ls_cluster_free(c);
    free(text);
    /* The interned strings stay: ls_intern_reset is for the process's end
     * (ids cached in statics, the configuration's "*" among them, would
     * name other strings in the next run). */
    ls_status_reset();
    return rc;
}

/* ---- comparing placements */

static void diff_runs(const cmp_run *a, const cmp_run *b, cmp_report *rep)
{
    uint32_t n = a->pods < b->pods ? a->pods : b->pods;
    rep->diffs = ls_xcalloc(n + 1, sizeof *rep->diffs);
    for (uint32_t i = 0; i < n; i++) {
        const char *na = a->nodes[i], *nb = b->nodes[i];
        if ((na == NULL) != (nb == NULL) || (na && strcmp(na, nb) != 0))
            rep->diffs[rep->n_diffs++] = (cmp_diff){a->keys[i], na, nb};
    }
}

static uint32_t count_moves(const cmp_run *a, const cmp_run *b)
{
    uint32_t moves = 0, n = a->pods < b->pods ? a->pods : b->pods;
    for (uint32_t i = 0; i < n; i++) {
        const char *na = a->nodes[i], *nb = b->nodes[i];
        moves += (na == NULL) != (nb == NULL) || (na && strcmp(na, nb) != 0);
    }
    return moves;
}

void cmp_free_run(cmp_run *r)
{
    for (uint32_t i = 0; i < r->pods; i++) {
        free(r->keys[i]);
        free(r->nodes[i]);
    }
    free(r->keys);
    free(r->nodes);
    for (uint32_t i = 0; i < r->n_zones; i++)
        free(r->zones[i].name);
    free(r->zones);
}

/* ---- command line */

static void compare_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched compare TRACE.yaml --config A --config B ... [flags]\n"
            "\n"
            "Runs the trace (a cluster file, with a Timeline of arrivals and departures) under each policy on\n"
            "the virtual clock and compares them: pods bound, pending and preempted; time from creation to\n"
            "binding (p50/p90/p99); per-node cpu and memory allocation over time and at the end (imbalance =\n"
            "stddev / mean); fragmentation; pods per zone; the pods the first two policies placed differently;\n"
            "on a GPU trace (luasched import openb), the GPU allocation at each percent of arrived workload\n"
            "(0..130) and the unscheduled pods by kind. A TRACE containing {seed} names one trace per seed;\n"
            "openb:DIR (or openb:NODES.csv,PODS.csv) imports the openb trace for each seed, inflated to 130%%\n"
            "of the cluster's GPUs (as luasched import openb --seed SEED; DIR: its GPU nodes and default pods).\n"
            "\n"
            "flags:\n"
            "  --config [NAME=]FILE a KubeSchedulerConfiguration, once per policy (1 to 16; the word 'default'\n"
            "                       is the built-in default profile); NAME names it in the reports (default:\n"
            "                       the file's base name)\n"
            "  --seeds N            runs per policy with seeds S..S+N-1 for tie-breaking (default 1); figures\n"
            "                       are means over the seeds\n"
            "  --first-seed S       the first seed (default 0)\n"
            "  --jobs N             share the runs among N processes (default 1)\n"
            "  --shard I/N -o FILE  run only the runs of shard I of N (run k is shard k mod N) and write them\n"
            "                       to FILE, for a sweep over many machines (an Indexed Job's pods)\n"
            "  --merge SHARD...     read the shard files instead of running, and report them as one run\n"
            "  --output text|json|html\n"
            "                       the report's form (default text); html is one self-contained page\n"
            "  -o, --out FILE       write the report to FILE instead of standard output\n"
            "  --feature-gates A=true,B=false\n"
            "                       upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS   ':'-separated plugin directories searched before the built-in ones\n"
            "  --metric NAME=FILE.lua\n"
            "                       a metric written in Lua (up to 6): FILE returns a function of the cluster\n"
            "                       returning a number, called at each percent of arrived workload; reported\n"
            "                       as mean and spread over seeds (docs/policy-lab/metrics.md). On a GPU trace\n"
            "                       the built-in gpuFragmentedMilli and gpuFragmentationRatio are measured too\n"
            "  --no-builtin-metrics leave out the built-in metrics (the GPU fragmentation)\n"
            "  -h, --help           this help\n");
}

/* --config NAME=FILE or FILE (its base name, without .yaml/.yml, names it). */
static void policy_arg(cmp_opts *o, char *arg)
{
    char *eq = strchr(arg, '=');
    char *slash = strchr(arg, '/');
    int i = o->n_configs++;
    if (eq && eq != arg && (!slash || eq < slash)) {
        *eq = '\0';
        o->name[i] = arg;
        o->named[i] = true;
        o->config[i] = eq + 1;
        return;
    }
    o->config[i] = arg;
    const char *base = strrchr(arg, '/');
    static char names[CMP_MAX_POLICIES][128];
    snprintf(names[i], sizeof names[i], "%s", base ? base + 1 : arg);
    char *dot = strrchr(names[i], '.');
    if (dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 || strcmp(dot, ".json") == 0))
        *dot = '\0';
    o->name[i] = names[i];
}

static int parse_opts(int argc, char **argv, cmp_opts *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},      {"seeds", required_argument, NULL, 's'},
        {"first-seed", required_argument, NULL, 'F'}, {"jobs", required_argument, NULL, 'j'},
        {"shard", required_argument, NULL, 'S'},      {"merge", no_argument, NULL, 'M'},
        {"output", required_argument, NULL, 'f'},      {"out", required_argument, NULL, 'o'},
        {"plugin-path", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {"metric", required_argument, NULL, 'm'},      {"no-builtin-metrics", no_argument, NULL, 'B'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->seeds = 1;
    o->jobs = 1;
    o->output = "text";
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'c':
            if (o->n_configs == CMP_MAX_POLICIES) {
                fprintf(stderr, "luasched compare: --config: at most %d policies, got another (\"%s\")\n",
                        CMP_MAX_POLICIES, optarg);
                return LS_EXIT_USAGE;
            }
            policy_arg(o, optarg);
            break;
        case 'j': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (!*optarg || *end || v == 0 || v > 64) {
                fprintf(stderr, "luasched compare: --jobs: expected a number from 1 to 64, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->jobs = (uint32_t)v;
            break;
        }
        case 'S': {
            unsigned long i, n;
            int used = 0;
            if (sscanf(optarg, "%lu/%lu%n", &i, &n, &used) != 2 || optarg[used] || n == 0 || n > 100000 || i >= n) {
                fprintf(stderr, "luasched compare: --shard: expected I/N with 0 <= I < N (an Indexed Job's "
                                "$(JOB_COMPLETION_INDEX)/N), got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->shard = (uint32_t)i;
            o->shards = (uint32_t)n;
            break;
        }
        case 'M': o->merge = true; break;
        case 'F': {
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || *optarg == '-') {
                fprintf(stderr, "luasched compare: --first-seed: expected a non-negative integer, got \"%s\"\n",
                        optarg);
                return LS_EXIT_USAGE;
            }
            o->first_seed = v;
            break;
        }
        case 's': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (!*optarg || *end || v == 0 || v > 1000) {
                fprintf(stderr, "luasched compare: --seeds: expected a number from 1 to 1000, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->seeds = (uint32_t)v;
            break;
        }
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "html")) {
                fprintf(stderr, "luasched compare: --output: expected text, json or html, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->output = optarg;
            break;
        case 'o': o->out_file = optarg; break;
        case 'p': o->plugin_path = optarg; break;
        case 'B': o->no_builtin_metrics = true; break;
        case 'm':
            if (o->n_metrics == CMP_MAX_METRICS - CMP_BUILTIN_METRICS) {
                fprintf(stderr, "luasched compare: --metric: at most %d metrics of your own, got another (\"%s\")\n",
                        CMP_MAX_METRICS - CMP_BUILTIN_METRICS, optarg);
                return LS_EXIT_USAGE;
            }
            o->metric[o->n_metrics++] = optarg;
            break;
        case 'h': compare_usage(stdout); return -1;
        default: compare_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (o->merge) {
        if (argc - optind < 1 || o->n_configs > 0) {
            fprintf(stderr, "luasched compare: --merge: expected shard files and no --config, got %d file%s and %d "
                            "--config\n", argc - optind, argc - optind == 1 ? "" : "s", o->n_configs);
            return LS_EXIT_USAGE;
        }
        o->merge_files = argv + optind;
        o->n_merge = argc - optind;
        return 0;
    }
    if (o->shards && !o->out_file) {
        fprintf(stderr, "luasched compare: --shard: expected -o FILE for the shard's runs\n");
        return LS_EXIT_USAGE;
    }
    if (argc - optind != 1 || o->n_configs < 1) {
        fprintf(stderr, "luasched compare: expected one trace file and --config flags (one per policy), got %d "
                        "file%s and %d --config\n", argc - optind, argc - optind == 1 ? "" : "s", o->n_configs);
        compare_usage(stderr);
        return LS_EXIT_USAGE;
    }
    o->trace = argv[optind];
    return 0;
}

/* The report's file (standard output without -o), opened before any run:
 * the runs' plugin code confines the process (cli/output_file.c). */
static FILE *open_report(const cmp_opts *o)
{
    FILE *out = o->out_file ? fopen(o->out_file, "w") : stdout;
    if (!out)
        fprintf(stderr, "luasched compare: -o %s: %s\n", o->out_file, strerror(errno));
    return out;
}

/* Writes the report to out (open_report's) and closes it. */
static int write_report(const cmp_opts *o, const cmp_report *rep, FILE *out)
{
    bool ok = true;
    if (strcmp(o->output, "json") == 0) {
        cJSON *j = cmp_report_json(rep);
        char *text = cJSON_PrintUnformatted(j);
        ok = fputs(text, out) >= 0 && fputc('\n', out) != EOF;
        free(text);
        cJSON_Delete(j);
    } else if (strcmp(o->output, "html") == 0) {
        ok = cmp_report_html(rep, out);
    } else {
        cmp_report_text(rep, out);
    }
    if (o->out_file && fclose(out) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "luasched compare: writing the report: %s\n", strerror(errno));
        return LS_EXIT_FAILURE;
    }
    return LS_EXIT_OK;
}

static void free_report(cmp_report *rep)
{
    for (uint32_t p = 0; p < rep->n_policies; p++) {
        for (uint32_t s = 0; s < rep->policy[p].n_runs; s++)
            cmp_free_run(&rep->policy[p].runs[s]);
        free(rep->policy[p].runs);
    }
    free(rep->policy);
    free(rep->diffs);
    free(rep->not_recorded);
}

static int finish_report(const cmp_opts *o, cmp_report *rep, FILE *out)
{
    if (rep->n_policies > 1)
        diff_runs(&rep->policy[0].runs[0], &rep->policy[1].runs[0], rep);
    for (uint32_t p = 0; p < rep->n_policies; p++) {
        cmp_policy *pol = &rep->policy[p];
        pol->seed_moves = pol->n_runs > 1 ? count_moves(&pol->runs[0], &pol->runs[1]) : 0;
    }
    return write_report(o, rep, out);
}

static int merge_shards(const cmp_opts *o)
{
    cmp_report rep = {0};
    char **strs = NULL;
    uint32_t n_strs = 0;
    int rc = cmp_read_shards(o->merge_files, o->n_merge, &rep, &strs, &n_strs);
    FILE *out = rc == 0 ? open_report(o) : NULL;
    if (rc == 0)
        rc = out ? finish_report(o, &rep, out) : LS_EXIT_USAGE;
    free_report(&rep);
    for (uint32_t i = 0; i < n_strs; i++)
        free(strs[i]);
    free(strs);
    return rc;
}

static int run_indexed(void *ud, uint32_t p, uint32_t s, cmp_run *out, cmp_report *rep)
{
    const cmp_opts *o = ud;
    return run_once(o, o->config[p], o->first_seed + s, out, rep);
}

int ls_cli_compare(int argc, char **argv)
{
    cmp_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    if (o.merge) {
        rc = merge_shards(&o);
        ls_intern_reset();
        return rc;
    }
    cmp_report rep = {.trace = o.trace, .first_seed = o.first_seed};
    if (!o.no_builtin_metrics)
        cmp_lua_add_builtin(&rep);
    for (int i = 0; i < o.n_metrics; i++)
        if (!cmp_lua_add(&rep, (char *)o.metric[i])) {
            ls_intern_reset();
            return LS_EXIT_USAGE;
        }
    rep.n_policies = (uint32_t)o.n_configs;
    rep.policy = ls_xcalloc(rep.n_policies, sizeof *rep.policy);
    for (uint32_t p = 0; p < rep.n_policies; p++) {
        rep.policy[p].config = o.config[p];
        rep.policy[p].name = o.name[p];
        rep.policy[p].named = o.named[p];
        rep.policy[p].runs = ls_xcalloc(o.seeds, sizeof(cmp_run));
    }
    if (o.shards) {
        FILE *out = fopen(o.out_file, "wb");
        if (!out) {
            fprintf(stderr, "luasched compare: -o %s: %s\n", o.out_file, strerror(errno));
            rc = LS_EXIT_USAGE;
        } else {
            rc = cmp_write_shard(out, o.shard, o.shards, &rep, o.seeds, run_indexed, &o);
            if (fclose(out) != 0 && rc == 0)
                rc = LS_EXIT_FAILURE;
        }
        free_report(&rep);
        ls_intern_reset();
        return rc;
    }
    FILE *out = open_report(&o);
    if (!out) {
        free_report(&rep);
        ls_intern_reset();
        return LS_EXIT_USAGE;
    }
    if (o.jobs > 1) {
        for (uint32_t p = 0; p < rep.n_policies; p++)
            rep.policy[p].n_runs = o.seeds;
        rc = cmp_run_jobs(o.jobs, &rep, o.seeds, run_indexed, &o);
    } else {
        for (uint32_t p = 0; p < rep.n_policies && rc == 0; p++)
            for (uint32_t s = 0; s < o.seeds && rc == 0; s++) {
                rc = run_once(&o, o.config[p], o.first_seed + s, &rep.policy[p].runs[s], &rep);
                rep.policy[p].n_runs = s + 1;
            }
    }
    if (rc == 0)
        rc = finish_report(&o, &rep, out);
    else if (out != stdout)
        fclose(out);
    free_report(&rep);
    ls_intern_reset();
    return rc;
}

double cmp_mean_over_seeds(const cmp_policy *p, double (*metric)(const cmp_run *))
{
    double sum = 0;
    for (uint32_t i = 0; i < p->n_runs; i++)
        sum += metric(&p->runs[i]);
    return p->n_runs ? sum / p->n_runs : 0;
}
