/*
 * simulate.c: `luasched simulate CLUSTER.yaml`: loads the manifests into the
 * embedded cluster, schedules every pending pod through the shared pipeline,
 * checks that no pod was lost, and prints one line per pod and a summary (or
 * the JSON explain record of every pod).
 */
#include "cli/attempt_record.h"
#include "worker/confine.h"
#include "cli/cli.h"
#include "framework/waiting_pods.h"
#include "framework/runtime.h"
#include "sim/cluster.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef ls_sim_opts sim_opts;

typedef struct sim_run {
    const sim_opts *opts;
    ls_cluster *cluster;
    ls_attempt_record *record; /* --output json: every pod's attempts */
    const char *command;       /* "simulate" or "explain", for messages */
    bool json;
    cJSON **json_out;          /* when set, the JSON document goes here instead of stdout */
    uint32_t wanted_at_load;   /* ls_model_wanted() when the cluster was decoded */
} sim_run;

/* run_scheduler's answer when a loaded plugin declared object_data for pods
 * or nodes after the cluster was decoded without their JSON: the caller
 * decodes the cluster again (now keeping it) and runs once more. */
enum { SIM_DECODE_AGAIN = -1 };

static volatile sig_atomic_t *trap_stop, *trap_reload;

static void on_stop_signal(int sig)
{
    (void)sig;
    *trap_stop = 1;
    ls_lua_request_stop();   /* a plugin call running now is cut off */
}

static void on_reload_signal(int sig)
{
    (void)sig;
    *trap_reload = 1;
}

void ls_cli_trap_signals(volatile sig_atomic_t *stop, volatile sig_atomic_t *reload)
{
    trap_stop = stop;
    trap_reload = reload;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_reload_signal;
    sigaction(SIGHUP, &sa, NULL);
}

uint64_t ls_cli_peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_maxrss * 1024;
}

double ls_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ls_cli_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ls_cli_simulate_usage_flags(FILE *out)
{
    fprintf(out,
            "  --config FILE        KubeSchedulerConfiguration (default: the built-in default profile)\n"
            "  --seed N             seed for tie-breaking among equally scored nodes (default 0)\n"
            "  --feature-gates A=true,B=false\n"
            "                       upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS   ':'-separated plugin directories searched before the built-in ones\n"
            "                       (instead of the configuration's luasched.pluginPath)\n"
            "  --strict             the cluster file's warnings (an unknown field, a pod without containers,\n"
            "                       a node whose allocatable lacks pods, cpu or memory) are errors\n"
            "  --plugin-timeout MS  wall-clock limit of one plugin extension point for one pod (default: the\n"
            "                       configuration's luasched.pluginTimeoutMilliseconds, 10000)\n"
            "  --write-config-to FILE\n"
            "                       write the completed configuration (every default filled in, multiPoint\n"
            "                       merged with the default plugins, every plugin's args with its defaults)\n"
            "                       as YAML, or JSON for a .json name, '-' for standard output; then exit\n");
}

static void simulate_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched simulate CLUSTER.yaml [flags]\n"
            "\n"
            "Schedules the pending pods of a cluster file (Nodes, Pods, PriorityClasses; other kinds are\n"
            "skipped) in an embedded, in-memory cluster. Pods with spec.nodeName are running; the others\n"
            "are scheduled in queue order (priority, then creationTimestamp, then file order).\n"
            "\n"
            "flags:\n"
            "  --config FILE        KubeSchedulerConfiguration (default: the built-in default profile)\n"
            "  --output text|json   one line per pod and a summary (text), or explain records (json)\n"
            "  --seed N             seed for tie-breaking among equally scored nodes (default 0)\n"
            "  --feature-gates A=true,B=false\n"
            "                       upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS   ':'-separated plugin directories searched before the built-in ones\n"
            "                       (instead of the configuration's luasched.pluginPath)\n"
            "  --strict             the cluster file's warnings (an unknown field, a pod without containers,\n"
            "                       a node whose allocatable lacks pods, cpu or memory) are errors\n"
            "  --allow-plugin-errors\n"
            "                       exit 0 even when an attempt ended in a plugin's error (by default such a\n"
            "                       run exits 3: a plugin raised, ran over budget, returned a bad value or was\n"
            "                       cut off)\n"
            "  --plugin-timeout MS  wall-clock limit of one plugin extension point for one pod (default: the\n"
            "                       configuration's luasched.pluginTimeoutMilliseconds, 10000)\n"
            "  --realtime           play the cluster's timeline on the wall clock, print each attempt's line as\n"
            "                       it is decided, and reload the configuration and plugins when their files\n"
            "                       change (or on SIGHUP)\n"
            "  --hold               with --realtime: keep running after the timeline until SIGINT or SIGTERM\n"
            "  --fault provision=fail|never\n"
            "                       the embedded provisioner fails (the claim's selected node is removed) or\n"
            "                       never answers, so VolumeBinding's PreBind times out\n"
            "  --shadow FILE        evaluate a candidate KubeSchedulerConfiguration beside the real one on every\n"
            "                       attempt (Filter and Score only, never binding) and count where it disagrees\n"
            "  --write-config-to FILE\n"
            "                       write the completed configuration (every default filled in, multiPoint\n"
            "                       merged with the default plugins, every plugin's args with its defaults)\n"
            "                       as YAML, or JSON for a .json name, '-' for standard output; then exit\n"
            "                       (CLUSTER.yaml may be left out)\n"
            "  -h, --help           this help\n"
            "\n"
            "serving instead of scheduling: luasched simulate --serve ADDR[:PORT] CLUSTER.yaml... [flags]\n");
    ls_cli_serve_usage_flags(out);
}

/* --serve anywhere in the arguments switches to serving (serve.c), which has
 * its own flags and takes several cluster files. */
static bool wants_serve(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--serve") == 0 || strncmp(argv[i], "--serve=", 8) == 0)
            return true;
    }
    return false;
}

int ls_cli_parse_sim_opts(int argc, char **argv, ls_sim_opts *o, int positional, const char **extra,
                          void (*usage)(FILE *))
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"output", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 's'},   {"plugin-path", required_argument, NULL, 'p'},
        {"plugin-timeout", required_argument, NULL, 't'},
        {"realtime", no_argument, NULL, 'R'},     {"hold", no_argument, NULL, 'H'},
        {"shadow", required_argument, NULL, 'S'},
        {"write-config-to", required_argument, NULL, 'w'},
        {"fault", required_argument, NULL, 'F'},
        {"allow-plugin-errors", no_argument, NULL, 'A'},
        {"strict", no_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'c': o->config = optarg; break;
        case 'p': o->plugin_path = optarg; break;
        case 'o':
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
                fprintf(stderr, "luasched %s: --output: expected text or json, got \"%s\"\n", argv[0], optarg);
                return LS_EXIT_USAGE;
            }
            o->json = strcmp(optarg, "json") == 0;
            break;
        case 's':
            o->seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end) {
                fprintf(stderr, "luasched %s: --seed: expected a non-negative integer, got \"%s\"\n", argv[0],
                        optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 't':
            o->plugin_timeout_ms = strtoull(optarg, &end, 10);
            if (!*optarg || *end || o->plugin_timeout_ms == 0) {
                fprintf(stderr, "luasched %s: --plugin-timeout: expected milliseconds > 0, got \"%s\"\n",
                        argv[0], optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 'R': o->realtime = true; break;
        case 'A': o->allow_plugin_errors = true; break;
        case 'X': o->strict = true; break;
        case 'H': o->hold = true; break;
        case 'S': o->shadow = optarg; break;
        case 'w': o->write_config = optarg; break;
        case 'F':
            if (strncmp(optarg, "provision=", 10) != 0 || !ls_provision_fault_parse(optarg + 10, &o->provision_fault)) {
                fprintf(stderr, "luasched %s: --fault: expected provision=fail or provision=never, got \"%s\"\n",
                        argv[0], optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (o->write_config && argc - optind <= positional)
        positional = argc - optind;
    if (argc - optind != positional) {
        fprintf(stderr, "luasched %s: expected %d argument%s, got %d\n", argv[0], positional,
                positional == 1 ? "" : "s", argc - optind);
        usage(stderr);
        return LS_EXIT_USAGE;
    }
    if (extra && positional > 1)
        *extra = argv[optind + 1];
    o->cluster = positional > 0 ? argv[optind] : NULL;
    return 0;
}

/* ---- output */

typedef struct tally {
    uint32_t running, bound, unschedulable, gated, not_ours, deleted, preempted;
} tally;

static tally count_outcomes(const ls_cluster *c)
{
    tally t = {0};
    for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++) {
        switch (ls_cluster_pod(c, i)->outcome) {
        case LS_POD_RUNNING: t.running++; break;
        case LS_POD_BOUND: t.bound++; break;
        case LS_POD_UNSCHEDULABLE: t.unschedulable++; break;
        case LS_POD_GATED: t.gated++; break;
        case LS_POD_NOT_OURS: t.not_ours++; break;
        case LS_POD_DELETED: t.deleted++; break;
        case LS_POD_PREEMPTED: t.preempted++; break;
        case LS_POD_PENDING: break;
        }
    }
    return t;
}

/* "60s", "1m30s" for the virtual times of a timeline run. */
/* A pod's message on its report line: its line breaks shown as \n and \r, so
 * that a plugin's text (ls.reject's message keeps them) cannot add lines to
 * the report ("default/b: bound to node-9": attacker round 3). */
static const char *one_line(const char *msg, char *buf, size_t len)
{
    if (!msg || !strpbrk(msg, "\r\n"))
        return msg ? msg : "";
    size_t n = 0;
    for (const char *c = msg; *c && n + 3 < len; c++) {
        if (*c == '\n' || *c == '\r') {
            buf[n++] = '\\';
            buf[n++] = *c == '\n' ? 'n' : 'r';
        } else {
            buf[n++] = *c;
        }
    }
    buf[n] = '\0';
    return buf;
}

static const char *virtual_time(uint64_t ms, char *buf, size_t len)
{
    ls_format_duration(ms, buf, len);
    return buf;
}

/* One line per PersistentVolumeClaim: its phase, volume and selected node. */
static void print_claims(const ls_cluster *c)
{
    cJSON *claims = ls_cluster_claims_json(c);
    const cJSON *rec;
    cJSON_ArrayForEach(rec, claims) {
        const cJSON *volume = cJSON_GetObjectItemCaseSensitive(rec, "volumeName");
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(rec, "selectedNode");
        printf("claim %s/%s: %s%s%s%s%s\n", cJSON_GetObjectItemCaseSensitive(rec, "namespace")->valuestring,
               cJSON_GetObjectItemCaseSensitive(rec, "name")->valuestring,
               cJSON_GetObjectItemCaseSensitive(rec, "phase")->valuestring, volume ? ", volume " : "",
               volume ? volume->valuestring : "", node ? ", selected node " : "", node ? node->valuestring : "");
    }
    cJSON_Delete(claims);
}

/* --shadow: per shadow profile, its evaluations and disagreements. */
static void print_shadow(const ls_scheduler *s)
{
    ls_shadow_stats st[16];
    uint32_t n = ls_scheduler_shadow_stats(s, st, 16);
    for (uint32_t i = 0; i < n; i++)
        printf("shadow %s: %llu evaluated, %llu disagreed on the node, %llu on schedulability, %llu failed\n",
               st[i].profile, (unsigned long long)st[i].evaluations, (unsigned long long)st[i].node_disagreements,
               (unsigned long long)st[i].schedulability_disagreements, (unsigned long long)st[i].failures);
}

static void add_shadow_json(cJSON *sum, const ls_scheduler *s)
{
    ls_shadow_stats st[16];
    uint32_t n = ls_scheduler_shadow_stats(s, st, 16);
    if (!n)
        return;
    cJSON *arr = cJSON_AddArrayToObject(sum, "shadow");
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "profile", st[i].profile);
        cJSON_AddNumberToObject(o, "evaluations", (double)st[i].evaluations);
        cJSON_AddNumberToObject(o, "nodeDisagreements", (double)st[i].node_disagreements);
        cJSON_AddNumberToObject(o, "schedulabilityDisagreements", (double)st[i].schedulability_disagreements);
        cJSON_AddNumberToObject(o, "failures", (double)st[i].failures);
        cJSON_AddItemToArray(arr, o);
    }
}

/* With --realtime, bound and pending pods had their lines as they were
 * decided (print_live): the end lists only the other outcomes. */
static void print_text(const ls_cluster *c, const ls_scheduler *s, uint64_t attempts, double seconds, bool live)
{
    bool timed = ls_cluster_has_timeline(c);
    char t[64], line[20000];   /* a status text (8 KiB) with every byte a line break */
    for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++) {
        const ls_sim_pod *sp = ls_cluster_pod(c, i);
        const ls_pod *pod = &sp->obj->pod;
        if (live && (sp->outcome == LS_POD_BOUND || sp->outcome == LS_POD_UNSCHEDULABLE))
            continue;
        if (sp->outcome == LS_POD_BOUND && timed)
            printf("%s/%s: bound to %s at %s\n", ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(sp->node),
                   virtual_time(sp->bound_at_ms, t, sizeof t));
        else if (sp->outcome == LS_POD_BOUND)
            printf("%s/%s: bound to %s\n", ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(sp->node));
        else if (sp->outcome == LS_POD_GATED)
            printf("%s/%s: gated: %s\n", ls_str_get(pod->ns), ls_str_get(pod->name),
                   one_line(sp->message, line, sizeof line));
        else if (sp->outcome == LS_POD_DELETED)
            printf("%s/%s: deleted\n", ls_str_get(pod->ns), ls_str_get(pod->name));
        else if (sp->outcome == LS_POD_PREEMPTED)
            printf("%s/%s: preempted: %s\n", ls_str_get(pod->ns), ls_str_get(pod->name),
                   one_line(sp->message, line, sizeof line));
        else if (sp->outcome == LS_POD_UNSCHEDULABLE)
            printf("%s/%s: pending: %s\n", ls_str_get(pod->ns), ls_str_get(pod->name),
                   one_line(sp->message, line, sizeof line));
        else if (sp->outcome == LS_POD_NOT_OURS)
            printf("%s/%s: left alone: no profile for schedulerName \"%s\"\n", ls_str_get(pod->ns),
                   ls_str_get(pod->name), ls_str_get(pod->scheduler_name));
    }
    tally tl = count_outcomes(c);
    print_shadow(s);
    if (ls_scheduler_reloads(s, true) || ls_scheduler_reloads(s, false))
        printf("reloads: %llu succeeded, %llu failed\n", (unsigned long long)ls_scheduler_reloads(s, true),
               (unsigned long long)ls_scheduler_reloads(s, false));
    ls_fault_counts f = ls_scheduler_faults(s);
    if (f.error_attempts || f.budget_overruns || f.lua_restarts || f.hint_errors)
        printf("plugin faults: %llu attempts ended in Error, %llu calls over budget, %llu Lua state restarts, "
               "%llu queueing hint errors\n",
               (unsigned long long)f.error_attempts, (unsigned long long)f.budget_overruns,
               (unsigned long long)f.lua_restarts, (unsigned long long)f.hint_errors);
    print_claims(c);
    if (tl.deleted)
        printf("deleted by the timeline: %u pods\n", tl.deleted);
    if (tl.preempted)
        printf("preempted: %u pods\n", tl.preempted);
    uint32_t same, total;
    if (ls_cluster_agreement(c, &same, &total))
        printf("agreement: the live scheduler put %.1f%% of pods on the same node (%u of %u recorded bindings)\n",
               total ? 100.0 * same / total : 100.0, same, total);
    if (ls_cluster_not_recorded(c))
        printf("not recorded (the live scheduler read them, this replay did not): %s\n", ls_cluster_not_recorded(c));
    printf("summary: %u nodes, %u pods: %u bound, %u unschedulable, %u already running, %u gated, %u not ours",
           ls_cluster_num_nodes(c), ls_cluster_num_pods(c), tl.bound, tl.unschedulable, tl.running, tl.gated,
           tl.not_ours);
    /* apart from the unschedulable ones: a plugin failed, the pod was not judged */
    if (f.error_attempts)
        printf("; %llu attempt%s ended in a plugin error", (unsigned long long)f.error_attempts,
               f.error_attempts == 1 ? "" : "s");
    printf("\n");
    ls_queue_gauges g = ls_scheduler_queue_gauges(s);
    printf("queues: %u active, %u backoff, %u unschedulable, %u gated", g.active, g.backoff, g.unschedulable,
           g.gated);
    if (timed)
        printf("; timeline ended at %s", virtual_time(ls_scheduler_now_ms(s), t, sizeof t));
    printf("\n");
    printf("throughput: %llu attempts in %.3f s, %.0f pods/s; peak RSS %.1f MiB\n", (unsigned long long)attempts,
           seconds, seconds > 0 ? (double)attempts / seconds : 0.0, (double)ls_cli_peak_rss() / (1024.0 * 1024.0));
}

static void emit_json(const sim_run *run, const ls_scheduler *s, uint64_t attempts, double seconds)
{
    const ls_cluster *c = run->cluster;
    cJSON *root = cJSON_CreateObject();
    cJSON *pods = cJSON_AddArrayToObject(root, "pods");
    for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++) {
        const ls_sim_pod *sp = ls_cluster_pod(c, i);
        cJSON *rec = ls_attempt_record_take(run->record, sp->obj->pod.id);
        if (sp->outcome == LS_POD_GATED && !rec)
            rec = ls_attempt_record_unattempted(&sp->obj->pod, sp->message);
        else if (sp->outcome == LS_POD_GATED)
            cJSON_AddStringToObject(rec, "gated", sp->message);
        if (rec)
            cJSON_AddItemToArray(pods, rec);
    }
    cJSON_AddItemToObject(root, "claims", ls_cluster_claims_json(c));
    cJSON_AddItemToObject(root, "resourceClaims", ls_cluster_resource_claims_json(c));
    tally t = count_outcomes(c);
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "nodes", ls_cluster_num_nodes(c));
    cJSON_AddNumberToObject(sum, "pods", ls_cluster_num_pods(c));
    cJSON_AddNumberToObject(sum, "bound", t.bound);
    cJSON_AddNumberToObject(sum, "unschedulable", t.unschedulable);
    cJSON_AddNumberToObject(sum, "running", t.running);
    cJSON_AddNumberToObject(sum, "gated", t.gated);
    cJSON_AddNumberToObject(sum, "notOurs", t.not_ours);
    cJSON_AddNumberToObject(sum, "deleted", t.deleted);
    cJSON_AddNumberToObject(sum, "preempted", t.preempted);
    uint32_t same, total;
    if (ls_cluster_agreement(c, &same, &total)) {
        cJSON *agree = cJSON_AddObjectToObject(sum, "agreement");
        cJSON_AddNumberToObject(agree, "sameNode", same);
        cJSON_AddNumberToObject(agree, "recorded", total);
    }
    if (ls_cluster_not_recorded(c))
        cJSON_AddStringToObject(sum, "notRecorded", ls_cluster_not_recorded(c));
    ls_fault_counts f = ls_scheduler_faults(s);
    cJSON_AddNumberToObject(sum, "pluginErrorAttempts", (double)f.error_attempts);
    cJSON *faults = cJSON_AddObjectToObject(sum, "pluginFaults");
    cJSON_AddNumberToObject(faults, "errorAttempts", (double)f.error_attempts);
    cJSON_AddNumberToObject(faults, "budgetOverruns", (double)f.budget_overruns);
    cJSON_AddNumberToObject(faults, "luaRestarts", (double)f.lua_restarts);
    ls_queue_gauges g = ls_scheduler_queue_gauges(s);
    cJSON *queues = cJSON_AddObjectToObject(sum, "queues");
    cJSON_AddNumberToObject(queues, "active", g.active);
    cJSON_AddNumberToObject(queues, "backoff", g.backoff);
    cJSON_AddNumberToObject(queues, "unschedulable", g.unschedulable);
    cJSON_AddNumberToObject(queues, "gated", g.gated);
    add_shadow_json(sum, s);
    cJSON_AddNumberToObject(sum, "virtualSeconds", (double)ls_scheduler_now_ms(s) / 1000.0);
    cJSON_AddNumberToObject(sum, "attempts", (double)attempts);
    cJSON_AddNumberToObject(sum, "seconds", seconds);
    cJSON_AddNumberToObject(sum, "podsPerSecond", seconds > 0 ? (double)attempts / seconds : 0);
    cJSON_AddNumberToObject(sum, "peakRSSBytes", (double)ls_cli_peak_rss());
    if (run->json_out) {
        *run->json_out = root;
        return;
    }
    char *text = cJSON_PrintUnformatted(root);
    puts(text);
    free(text);
    cJSON_Delete(root);
}

/* ---- the run */

static int load(const sim_opts *o, const char *command, ls_cluster *c, ls_config *cfg)
{
    ls_error err;
    /* the configuration first: one with extenders makes the decoder keep each
     * object's JSON for the extenders' wire format */
    if (!ls_config_load(cfg, o->config, &err)) {
        fprintf(stderr, "luasched %s: %s\n", command, err.msg);
        return LS_EXIT_USAGE;
    }
    if (cfg->n_extenders)   /* their HTTP calls are made by this process: its worker keeps the network */
        ls_worker_confine_allow_network();
    ls_cluster_set_strict(c, o->strict);
    bool loaded = o->cluster_text ? ls_cluster_load_text(c, o->cluster_text, o->cluster_len, o->cluster, &err)
                                  : ls_cluster_load_file(c, o->cluster, &err);
    if (!loaded && ls_cluster_num_load_errors(c) > 1) {
        /* every error of the file at once */
        ls_cluster_print_notices(c, stderr);
        for (uint32_t i = 0; i < ls_cluster_num_load_errors(c); i++)
            fprintf(stderr, "luasched %s: %s\n", command, ls_cluster_load_error(c, i));
        fprintf(stderr, "luasched %s: %u errors in %s\n", command, ls_cluster_num_load_errors(c),
                o->cluster ? o->cluster : "the cluster");
        return LS_EXIT_USAGE;
    }
    if (!loaded || !ls_cluster_admit(c, &err)) {
        if (!loaded)
            ls_cluster_print_notices(c, stderr);
        fprintf(stderr, "luasched %s: %s\n", command, err.msg);
        return LS_EXIT_USAGE;
    }
    return 0;
}

/* --realtime in text: each attempt's line as it is decided, flushed at once
 * (a pod tried again gets a line per attempt). */
static void print_live(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    (void)ud;
    (void)cycle;
    (void)s;
    char t[64], line[20000];   /* a status text (8 KiB) with every byte a line break */
    const char *ns = ls_str_get(a->pod->ns), *name = ls_str_get(a->pod->name);
    if (a->permit == LS_PERMIT_WAITING)
        printf("%s/%s: waiting at Permit at %s\n", ns, name, virtual_time(a->time_ms, t, sizeof t));
    else if (a->node)
        printf("%s/%s: bound to %s at %s\n", ns, name, ls_str_get(a->node), virtual_time(a->time_ms, t, sizeof t));
    else
        printf("%s/%s: pending: %s (attempt %u at %s)\n", ns, name, one_line(a->message, line, sizeof line),
               a->attempt, virtual_time(a->time_ms, t, sizeof t));
    fflush(stdout);
}

/* --shadow: the candidate configuration's own policy (its plugins, its
 * luasched section, the same flags), evaluated beside the real one. */
static bool attach_shadow(const sim_opts *o, ls_scheduler *s, ls_error *err)
{
    if (!o->shadow)
        return true;
    ls_config cfg;
    if (!ls_config_load(&cfg, o->shadow, err)) {
        ls_config_free(&cfg);
        return false;
    }
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path, .plugin_timeout_ms = o->plugin_timeout_ms};
    return ls_scheduler_set_shadow(s, &cfg, &so, o->realtime ? o->shadow : NULL, err);
}

/* The JSON record's observer and the caller's (live explain) both see each attempt. */
static void observe_both(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    sim_run *run = ud;
    if (run->record)
        ls_attempt_record_observe(run->record, a, cycle, s);
    run->opts->observe(run->opts->observe_ud, a, cycle, s);
}

static int run_scheduler(const sim_opts *o, sim_run *run, ls_config *cfg, const ls_sched_options *so)
{
    ls_error err;
    ls_attempt_observer observer = o->observe ? observe_both
                                   : run->record ? ls_attempt_record_observe
                                   : o->realtime && !run->json ? print_live : NULL;
    ls_sched_source src = ls_cluster_source(run->cluster, observer, o->observe ? (void *)run : run->record);
    ls_scheduler *s = ls_scheduler_new(cfg, so, &src, &err);
    if (!s) {
        fprintf(stderr, "luasched %s: %s\n", run->command, err.msg);
        return LS_EXIT_USAGE;
    }
    ls_cluster_set_provision_fault(run->cluster, o->provision_fault);
    if (!attach_shadow(o, s, &err)) {
        fprintf(stderr, "luasched %s: --shadow %s: %s\n", run->command, o->shadow, err.msg);
        ls_scheduler_free(s);
        return LS_EXIT_USAGE;
    }
    if (ls_model_wanted() & ~run->wanted_at_load & (LS_WANT_POD_JSON | LS_WANT_NODE_JSON)) {
        ls_scheduler_free(s);
        return SIM_DECODE_AGAIN;
    }
    ls_cluster_start(run->cluster, s);
    if (o->instead_of_run) {
        int rc = o->instead_of_run(o->instead_ud, s);
        ls_scheduler_free(s);
        return rc;
    }
    double t0 = ls_cli_now();
    uint64_t attempts;
    if (o->realtime) {
        static volatile sig_atomic_t stop, reload;
        ls_cli_trap_signals(&stop, &reload);
        ls_scheduler_watch(s, o->config);
        ls_run_control ctl = {.stop = &stop, .reload = &reload, .hold = o->hold};
        attempts = ls_scheduler_run_realtime(s, &ctl);
    } else {
        attempts = ls_scheduler_run(s);
    }
    double seconds = ls_cli_now() - t0;
    ls_cluster_finish(run->cluster, s);
    int rc = LS_EXIT_OK;
    if (!ls_cluster_check(run->cluster, &err)) {
        fprintf(stderr, "luasched %s: invariant violated: %s\n", run->command, err.msg);
        rc = LS_EXIT_FAILURE;
    } else if (run->json) {
        emit_json(run, s, attempts, seconds);
    } else {
        print_text(run->cluster, s, attempts, seconds, o->realtime);
    }
    if (rc == LS_EXIT_OK && !o->allow_plugin_errors && strcmp(run->command, "simulate") == 0 &&
        ls_scheduler_faults(s).error_attempts) {
        fprintf(stderr, "luasched simulate: %llu attempt%s ended in a plugin error (exit status %d; "
                        "--allow-plugin-errors exits 0)\n",
                (unsigned long long)ls_scheduler_faults(s).error_attempts,
                ls_scheduler_faults(s).error_attempts == 1 ? "" : "s", LS_EXIT_PLUGIN_ERROR);
        rc = LS_EXIT_PLUGIN_ERROR;
    }
    ls_scheduler_free(s);
    return rc;
}

/* The plugin path and timeout come from the flags, else from the
 * configuration's luasched section. The path is copied: the scheduler keeps
 * its options across reloads, which free the configuration they came from. */
static int run_simulation(const sim_opts *o, sim_run *run, ls_config *cfg)
{
    char *dirs = !o->plugin_path && cfg->luasched.plugin_dirs ? ls_xstrdup(cfg->luasched.plugin_dirs) : NULL;
    ls_sched_options so = {.seed = o->seed, .trace = o->json, .plugin_path = o->plugin_path ? o->plugin_path : dirs,
                           .plugin_timeout_ms = o->plugin_timeout_ms ? o->plugin_timeout_ms
                                                                     : cfg->luasched.plugin_timeout_ms};
    int rc = run_scheduler(o, run, cfg, &so);
    free(dirs);
    return rc;
}

int ls_cli_simulate(int argc, char **argv)
{
    if (wants_serve(argc, argv))
        return ls_cli_serve(argc, argv);
    if (ls_cli_wants_whatif_stdin(argc, argv))
        return ls_cli_serve_whatif_eval(argc, argv);
    sim_opts o;
    int rc = ls_cli_parse_sim_opts(argc, argv, &o, 1, NULL, simulate_usage);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    if (o.write_config)
        return ls_cli_write_config("simulate", &o);
    return ls_cli_run_simulation(&o, "simulate", NULL);
}

int ls_cli_run_simulation(const ls_sim_opts *opts, const char *command, cJSON **json_out)
{
    ls_sim_opts o = *opts;
    int rc;
    if (json_out)
        o.json = true;
    /* A second pass only when a plugin declared object_data = { "Pod" } (or
     * "Node") after the first decoded the cluster: the view's JSON is kept
     * for no one otherwise. */
    for (int pass = 0; pass < 2; pass++) {
        sim_run run = {.opts = &o, .cluster = ls_cluster_new(), .command = command, .json = o.json,
                       .json_out = json_out, .wanted_at_load = ls_model_wanted()};
        ls_config cfg;
        memset(&cfg, 0, sizeof cfg);
        rc = load(&o, command, run.cluster, &cfg);
        if (rc == 0) {
            if (pass == 0)
                ls_cluster_print_notices(run.cluster, stderr);
            if (run.json)
                run.record = ls_attempt_record_new(ls_cluster_num_pods(run.cluster));
            rc = run_simulation(&o, &run, &cfg);
            ls_attempt_record_free(run.record);
        }
        ls_config_free(&cfg);
        ls_cluster_free(run.cluster);
        if (rc != SIM_DECODE_AGAIN)
            break;
    }
    if (rc == SIM_DECODE_AGAIN)
        rc = LS_EXIT_FAILURE;   /* not reached: the second pass keeps the JSON the first asked for */
    ls_status_reset();
    ls_intern_reset();
    return rc;
}
