/*
 * bench.c: `luasched bench WORKLOAD.yaml`: runs one of upstream's
 * scheduler_perf workloads (the files of bench/) in an embedded cluster and reports
 * what upstream reports: the average pods/s over the measured pods, the
 * percentiles of the per-second throughput samples, and peak memory.
 *
 * Phases, as upstream's workload ops: create the nodes (and namespaces);
 * create the init pods and schedule them on the virtual clock (not measured);
 * then create the measured pods and schedule them on the wall clock (the
 * scheduler's clock follows it, so churn ticks interleave with the measured
 * pods as upstream's wall-clock churn does, and backoffs take real time as
 * upstream's do) until every measured pod is bound, or no pod is active or
 * backing off and no churn is coming, or no measured pod was bound for 30 s.
 */
#include "cli/bench.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    const char *workload;
    const char *config;
    const char *plugin_path;
    bool json;
    uint64_t seed;
    int32_t percentage;        /* -1: as configured (adaptive unless the config says otherwise) */
} bench_opts;

typedef struct bench_result {
    double init_seconds;
    double seconds;            /* the measurement: measured pods created .. last one bound */
    double average;            /* measured pods bound / seconds */
    double cpu_seconds;        /* the process's CPU time during the measurement */
    int32_t percentage;        /* percentageOfNodesToScore in effect (0 = adaptive) */
    uint32_t nodes;
    size_t lua_bytes;          /* the Lua state's memory when the measurement ends */
    ls_event_stats events;     /* cluster events during the measurement */
    ls_event_label_stats labels[BENCH_EVENT_LABELS];   /* the same per event label */
    uint32_t n_labels;
    bench_counts counts;
} bench_result;

static void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched bench WORKLOAD.yaml [flags]\n"
            "       luasched bench policy-lab [TRACE] [flags]   (the policy lab's GPU experiments: bench policy-lab -h)\n"
            "       luasched bench boundary [MESSAGES]   (what one message across run's worker channel costs)\n"
            "\n"
            "Runs a scheduler_perf workload (bench/*.yaml; the format is in bench/README.md) in an embedded\n"
            "cluster with the built-in default profile: creates the nodes, schedules the init pods (not\n"
            "measured), then creates the measured pods and measures until all are scheduled. Reports the\n"
            "average pods/s over the measured pods (compared with upstream's threshold), p50/p90/p95/p99 of\n"
            "the per-second throughput samples, the wall and CPU time, the cluster events (registered or\n"
            "not, waiting pods visited and requeued) and the peak RSS.\n"
            "\n"
            "flags:\n"
            "  --nodes-percentage adaptive|N  percentageOfNodesToScore: upstream's adaptive rule (the default)\n"
            "                       or N%% of the nodes (100: score every feasible node)\n"
            "  --output text|json   a table (text), or one JSON line\n"
            "  --seed N             seed for tie-breaking among equally scored nodes (default 0)\n"
            "  --config FILE        KubeSchedulerConfiguration (default: the built-in default profile)\n"
            "  --feature-gates A=true,B=false\n"
            "                       upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS   ':'-separated plugin directories searched before the built-in ones\n"
            "  -h, --help           this help\n");
}

/* ---- flags */

static int parse_percentage(const char *arg, int32_t *out)
{
    if (strcmp(arg, "adaptive") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < 1 || v > 100) {
        fprintf(stderr, "luasched bench: --nodes-percentage: expected adaptive or 1..100, got \"%s\"\n", arg);
        return LS_EXIT_USAGE;
    }
    *out = (int32_t)v;
    return 0;
}

static int parse_flag(int ch, bench_opts *o)
{
    char *end;
    switch (ch) {
    case 'c': o->config = optarg; return 0;
    case 'p': o->plugin_path = optarg; return 0;
    case 'n': return parse_percentage(optarg, &o->percentage);
    case 'o':
        if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
            fprintf(stderr, "luasched bench: --output: expected text or json, got \"%s\"\n", optarg);
            return LS_EXIT_USAGE;
        }
        o->json = strcmp(optarg, "json") == 0;
        return 0;
    case 's':
        o->seed = strtoull(optarg, &end, 10);
        if (!*optarg || *end) {
            fprintf(stderr, "luasched bench: --seed: expected a non-negative integer, got \"%s\"\n", optarg);
            return LS_EXIT_USAGE;
        }
        return 0;
    case 'h': bench_usage(stdout); return -1;
    default: bench_usage(stderr); return LS_EXIT_USAGE;
    }
}

static int parse_opts(int argc, char **argv, bench_opts *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},           {"output", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 's'},             {"plugin-path", required_argument, NULL, 'p'},
        {"nodes-percentage", required_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->percentage = -1;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int rc = parse_flag(ch, o);
        if (rc == LS_EXIT_USAGE && ch == '?')
            ls_cli_suggest_flag(argc, argv, longopts);
        if (rc)
            return rc;
    }
    if (argc - optind != 1) {
        fprintf(stderr, "luasched bench: expected 1 argument (the workload file), got %d\n", argc - optind);
        bench_usage(stderr);
        return LS_EXIT_USAGE;
    }
    o->workload = argv[optind];
    return 0;
}

/* ---- the report */

static ls_event_stats stats_minus(ls_event_stats a, ls_event_stats b)
{
    return (ls_event_stats){a.events - b.events, a.registered - b.registered, a.visited - b.visited,
                            a.requeued - b.requeued};
}

/* Per label: the counts at the end minus those at the start; labels without events left out. */
static void label_delta(bench_result *r, const ls_event_label_stats *before, uint32_t nb,
                        const ls_event_label_stats *after, uint32_t na)
{
    r->n_labels = 0;
    for (uint32_t i = 0; i < na; i++) {
        ls_event_stats d = after[i].stats;
        for (uint32_t j = 0; j < nb; j++)
            if (strcmp(before[j].label, after[i].label) == 0)
                d = stats_minus(d, before[j].stats);
        if (d.events)
            r->labels[r->n_labels++] = (ls_event_label_stats){after[i].label, d};
    }
}

static void text_labels(const bench_result *r)
{
    for (uint32_t i = 0; i < r->n_labels; i++) {
        const ls_event_stats *e = &r->labels[i].stats;
        printf("%-18s %-20s %llu: %llu registered (%llu pods visited, %llu requeued: %.2f per event), %llu by none\n",
               i ? "" : "  by event", r->labels[i].label, (unsigned long long)e->events,
               (unsigned long long)e->registered, (unsigned long long)e->visited, (unsigned long long)e->requeued,
               e->events ? (double)e->requeued / (double)e->events : 0.0,
               (unsigned long long)(e->events - e->registered));
    }
}

static void json_labels(cJSON *root, const bench_result *r)
{
    cJSON *by = cJSON_AddObjectToObject(root, "eventsByLabel");
    for (uint32_t i = 0; i < r->n_labels; i++) {
        const ls_event_stats *e = &r->labels[i].stats;
        cJSON *o = cJSON_AddObjectToObject(by, r->labels[i].label);
        cJSON_AddNumberToObject(o, "events", (double)e->events);
        cJSON_AddNumberToObject(o, "registered", (double)e->registered);
        cJSON_AddNumberToObject(o, "podsVisited", (double)e->visited);
        cJSON_AddNumberToObject(o, "requeues", (double)e->requeued);
    }
}

static void text_report(const bench_workload *w, const bench_cluster *c, const bench_result *r)
{
    const bench_sampler *sm = bench_cluster_sampler(c);
    const bench_counts *k = &r->counts;
    char pct[32];
    snprintf(pct, sizeof pct, r->percentage ? "%d%%" : "adaptive", r->percentage);
    printf("%-18s %s\n", "workload", w->name);
    printf("%-18s %u (percentageOfNodesToScore: %s)\n", "nodes", r->nodes, pct);
    if (w->ops.len)
        printf("%-18s %u scheduled, %u unschedulable (not measured); %u updated, %u deleted\n", "other pods",
               k->init_bound, k->init_failed, k->updates, k->deletes);
    else
        printf("%-18s %u scheduled, %u unschedulable, in %.3f s (not measured)\n", "init pods", k->init_bound,
               k->init_failed, r->init_seconds);
    printf("%-18s %u: %u scheduled, %u unschedulable\n", "measured pods", k->measured, k->measured_bound,
           k->measured_failed);
    if (w->has_churn && w->churn.mode == BENCH_CHURN_HEARTBEAT)
        printf("%-18s %u ticks every %llu ms: %u node heartbeats\n", "churn", k->churn_ticks,
               (unsigned long long)w->churn.interval_ms, k->churn_heartbeats);
    else if (w->has_churn)
        printf("%-18s %u ticks every %llu ms: %u created, %u deleted, %u churn pods bound\n", "churn",
               k->churn_ticks, (unsigned long long)w->churn.interval_ms, k->churn_created, k->churn_deleted,
               k->churn_bound);
    if (k->preempted)
        printf("%-18s %u pods\n", "preempted", k->preempted);
    printf("%-18s %.1f pods/s", "average", r->average);
    if (w->threshold > 0)
        printf(" (upstream threshold %.0f pods/s: %.2fx)", w->threshold, r->average / w->threshold);
    printf("\n%-18s p50 %.1f, p90 %.1f, p95 %.1f, p99 %.1f pods/s (%u sample%s)\n", "per-second samples",
           bench_sampler_percentile(sm, 50), bench_sampler_percentile(sm, 90), bench_sampler_percentile(sm, 95),
           bench_sampler_percentile(sm, 99), sm->samples.len, sm->samples.len == 1 ? "" : "s");
    printf("%-18s %.3f s, %llu attempts; CPU %.3f s (%.1f us per measured pod)\n", "wall time", r->seconds,
           (unsigned long long)k->attempts, r->cpu_seconds,
           k->measured ? r->cpu_seconds * 1e6 / k->measured : 0.0);
    const ls_event_stats *e = &r->events;
    printf("%-18s %llu: %llu registered by a plugin (%llu pods visited, %llu requeued: %.2f per event), "
           "%llu by none (0 visited)\n",
           "cluster events", (unsigned long long)e->events, (unsigned long long)e->registered,
           (unsigned long long)e->visited, (unsigned long long)e->requeued,
           e->registered ? (double)e->requeued / (double)e->registered : 0.0,
           (unsigned long long)(e->events - e->registered));
    text_labels(r);
    if (bench_cluster_stall(c))
        printf("%-18s %s\n", "stalled", bench_cluster_stall(c));
    printf("%-18s %.1f MiB (Lua state %.1f MiB)\n", "peak RSS", (double)ls_cli_peak_rss() / (1024.0 * 1024.0),
           (double)r->lua_bytes / (1024.0 * 1024.0));
}

static void json_counts(cJSON *root, const bench_workload *w, const bench_counts *k)
{
    cJSON_AddNumberToObject(root, "initPods", bench_group_total(&w->init_pods));
    cJSON_AddNumberToObject(root, "initScheduled", k->init_bound);
    cJSON_AddNumberToObject(root, "measuredPods", k->measured);
    cJSON_AddNumberToObject(root, "scheduled", k->measured_bound);
    cJSON_AddNumberToObject(root, "unschedulable", k->measured_failed);
    cJSON_AddNumberToObject(root, "attempts", (double)k->attempts);
    cJSON_AddNumberToObject(root, "preempted", k->preempted);
    if (w->ops.len) {
        cJSON_AddNumberToObject(root, "updated", k->updates);
        cJSON_AddNumberToObject(root, "deleted", k->deletes);
    }
    if (!w->has_churn)
        return;
    cJSON *ch = cJSON_AddObjectToObject(root, "churn");
    cJSON_AddNumberToObject(ch, "intervalMs", (double)w->churn.interval_ms);
    cJSON_AddNumberToObject(ch, "ticks", k->churn_ticks);
    cJSON_AddNumberToObject(ch, "created", k->churn_created);
    cJSON_AddNumberToObject(ch, "deleted", k->churn_deleted);
    cJSON_AddNumberToObject(ch, "heartbeats", k->churn_heartbeats);
    cJSON_AddNumberToObject(ch, "podsBound", k->churn_bound);
}

static void json_report(const bench_workload *w, const bench_cluster *c, const bench_result *r)
{
    const bench_sampler *sm = bench_cluster_sampler(c);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "workload", w->name);
    cJSON_AddNumberToObject(root, "nodes", r->nodes);
    if (r->percentage)
        cJSON_AddNumberToObject(root, "percentageOfNodesToScore", r->percentage);
    else
        cJSON_AddStringToObject(root, "percentageOfNodesToScore", "adaptive");
    json_counts(root, w, &r->counts);
    cJSON_AddNumberToObject(root, "average", r->average);
    static const int perc[] = {50, 90, 95, 99};
    for (int i = 0; i < 4; i++) {
        char key[16];
        snprintf(key, sizeof key, "perc%d", perc[i]);
        cJSON_AddNumberToObject(root, key, bench_sampler_percentile(sm, perc[i]));
    }
    cJSON_AddNumberToObject(root, "samples", sm->samples.len);
    if (w->threshold > 0) {
        cJSON_AddNumberToObject(root, "threshold", w->threshold);
        cJSON_AddNumberToObject(root, "ratio", r->average / w->threshold);
    }
    cJSON_AddNumberToObject(root, "seconds", r->seconds);
    cJSON_AddNumberToObject(root, "initSeconds", r->init_seconds);
    cJSON_AddNumberToObject(root, "peakRSSBytes", (double)ls_cli_peak_rss());
    cJSON_AddNumberToObject(root, "luaBytes", (double)r->lua_bytes);
    cJSON_AddNumberToObject(root, "cpuSeconds", r->cpu_seconds);
    cJSON_AddNumberToObject(root, "events", (double)r->events.events);
    cJSON_AddNumberToObject(root, "registeredEvents", (double)r->events.registered);
    cJSON_AddNumberToObject(root, "podsVisited", (double)r->events.visited);
    cJSON_AddNumberToObject(root, "requeues", (double)r->events.requeued);
    json_labels(root, r);
    if (bench_cluster_stall(c))
        cJSON_AddStringToObject(root, "stalled", bench_cluster_stall(c));
    char *text = cJSON_PrintUnformatted(root);
    puts(text);
    free(text);
    cJSON_Delete(root);
}

/* ---- the run */

static void apply_percentage(ls_config *cfg, int32_t percentage)
{
    if (percentage < 0)
        return;
    cfg->percentage_of_nodes_to_score = percentage;
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        if (cfg->profiles[i].percentage_of_nodes_to_score >= 0)
            cfg->profiles[i].percentage_of_nodes_to_score = percentage;
}

/* The init pods, scheduled on the virtual clock (backoffs take no time). */
static bool run_init(const bench_workload *w, bench_cluster *c, ls_scheduler *s, bench_result *r, ls_error *err)
{
    if (!bench_cluster_create_nodes(c, s, err) ||
        !bench_cluster_decode_pods(c, &w->init_pods, BENCH_ROLE_INIT, err))
        return false;
    double t0 = ls_cli_now();
    bench_cluster_add_pods(c, BENCH_ROLE_INIT);
    ls_scheduler_run(s);
    r->init_seconds = ls_cli_now() - t0;
    return true;
}

/* The measured pods, decoded first (the API server's side), then created
 * and scheduled on the wall clock. */
static bool run_measured(const bench_workload *w, bench_cluster *c, ls_scheduler *s, bench_result *r, ls_error *err)
{
    if (!bench_cluster_decode_pods(c, &w->measure_pods, BENCH_ROLE_MEASURED, err))
        return false;
    ls_event_stats e0 = ls_scheduler_event_stats(s);
    ls_event_label_stats l0[BENCH_EVENT_LABELS], l1[BENCH_EVENT_LABELS];
    uint32_t n0 = ls_scheduler_event_stats_by_label(s, l0, BENCH_EVENT_LABELS);
    double c0 = ls_cli_cpu_now();
    double t0 = ls_cli_now();
    bench_cluster_start_measuring(c, t0);
    bench_cluster_add_pods(c, BENCH_ROLE_MEASURED);
    ls_run_control ctl = {.stop = bench_cluster_stop_flag(c), .reload = NULL, .hold = true};
    ls_scheduler_run_realtime(s, &ctl);
    r->seconds = bench_cluster_stop_measuring(c, ls_cli_now()) - t0;
    r->cpu_seconds = ls_cli_cpu_now() - c0;
    r->counts = bench_cluster_counts(c);
    r->average = r->seconds > 0 ? r->counts.measured_bound / r->seconds : 0;
    r->nodes = bench_group_total(&w->nodes);
    r->lua_bytes = ls_scheduler_lua_memory(s);
    ls_event_stats e1 = ls_scheduler_event_stats(s);
    r->events = stats_minus(e1, e0);
    uint32_t n1 = ls_scheduler_event_stats_by_label(s, l1, BENCH_EVENT_LABELS);
    label_delta(r, l0, n0, l1, n1);
    return true;
}

/* A staged workload: its ops, the measurement between start- and stopCollectingMetrics. */
static bool run_staged(const bench_workload *w, bench_cluster *c, ls_scheduler *s, bench_result *r, ls_error *err)
{
    if (!bench_cluster_run_ops(c, s, err))
        return false;
    r->seconds = bench_cluster_collected_seconds(c, &r->cpu_seconds);
    r->counts = bench_cluster_counts(c);
    r->average = r->seconds > 0 ? r->counts.measured_bound / r->seconds : 0;
    r->nodes = r->counts.nodes;
    r->lua_bytes = ls_scheduler_lua_memory(s);
    r->events = bench_cluster_collected_events(c);
    ls_event_label_stats l0[BENCH_EVENT_LABELS], l1[BENCH_EVENT_LABELS];
    uint32_t n0 = bench_cluster_collected_labels(c, 0, l0, BENCH_EVENT_LABELS);
    uint32_t n1 = bench_cluster_collected_labels(c, 1, l1, BENCH_EVENT_LABELS);
    label_delta(r, l0, n0, l1, n1);
    (void)w;
    return true;
}

static int run_workload(const bench_opts *o, const bench_workload *w, ls_config *cfg)
{
    ls_error err;
    bench_result r = {.percentage = cfg->percentage_of_nodes_to_score};
    bench_cluster *c = bench_cluster_new(w);
    ls_sched_source src = bench_cluster_source(c);
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path};
    ls_scheduler *s = bench_cluster_check_churn(c, &err) ? ls_scheduler_new(cfg, &so, &src, &err) : NULL;
    int rc = s ? LS_EXIT_OK : LS_EXIT_USAGE;
    if (s && w->ops.len && !run_staged(w, c, s, &r, &err))
        rc = LS_EXIT_USAGE;
    else if (s && !w->ops.len && (!run_init(w, c, s, &r, &err) || !run_measured(w, c, s, &r, &err)))
        rc = LS_EXIT_USAGE;
    if (rc != LS_EXIT_OK)
        fprintf(stderr, "luasched bench: %s\n", err.msg);
    else if (o->json)
        json_report(w, c, &r);
    else
        text_report(w, c, &r);
    ls_scheduler_free(s);
    bench_cluster_free(c);
    return rc;
}

int ls_cli_bench(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "policy-lab") == 0)
        return ls_cli_bench_lab(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "boundary") == 0)
        return ls_cli_bench_boundary(argc - 1, argv + 1);
    bench_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    bench_workload w;
    ls_config cfg;
    memset(&cfg, 0, sizeof cfg);
    ls_error err;
    if (!bench_workload_load(&w, o.workload, &err) || !ls_config_load(&cfg, o.config, &err)) {
        fprintf(stderr, "luasched bench: %s\n", err.msg);
        rc = LS_EXIT_USAGE;
    } else {
        apply_percentage(&cfg, o.percentage);
        rc = run_workload(&o, &w, &cfg);
    }
    ls_config_free(&cfg);
    bench_workload_free(&w);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}
