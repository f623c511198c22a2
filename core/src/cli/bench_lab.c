/*
 * bench_lab.c: `luasched bench policy-lab`: how long the policy lab's GPU
 * experiments take (issue: one experiment, one policy and one seed of the
 * openb trace inflated to 130%, under 10 s on 2 cores; the 60-run grid, six
 * policies x 10 seeds, under 10 minutes with --jobs 2).
 *
 * Each measurement is the `luasched compare` command a user runs, started as
 * a child process of this binary and timed from outside: wall clock, and the
 * CPU time of the command and every process it waited for (its supervised
 * worker, its --jobs children), from wait4. First one experiment per policy
 * (seed S, --jobs 1), then the grid (every policy x --seeds N, --jobs J).
 * The trace is openb:$OPENB_DIR unless one is given; with neither, the bench
 * says so and exits 0 (a clone has no trace). The policies are
 * profiles/policy-lab/gpu-*.yaml unless --config names others.
 */
#include "cli/bench.h"
#include "cli/cli.h"
#include "framework/paths.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAB_MAX_POLICIES 16

typedef struct lab_opts {
    const char *trace;
    const char *config[LAB_MAX_POLICIES];   /* NAME=FILE, as compare's --config */
    int n_configs;
    unsigned seeds, jobs;
    unsigned long long first_seed;
    bool json, skip_grid;
    double experiment_target, grid_target;  /* seconds */
} lab_opts;

typedef struct lab_time {
    double wall, cpu;
    int exit_code;
} lab_time;

/* The paper's six policies, as the reproduction names them. */
static const char *const DEFAULT_POLICIES[][2] = {
    {"Random", "gpu-random.yaml"},         {"DotProd", "gpu-dot-product.yaml"},
    {"GpuClustering", "gpu-gpu-clustering.yaml"}, {"GpuPacking", "gpu-gpu-packing.yaml"},
    {"BestFit", "gpu-best-fit.yaml"},      {"FGD", "gpu-fgd.yaml"},
};
enum { N_DEFAULT = sizeof DEFAULT_POLICIES / sizeof DEFAULT_POLICIES[0] };

static void lab_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched bench policy-lab [TRACE] [flags]\n"
            "\n"
            "Times the policy lab's GPU experiments as `luasched compare` runs them, each command started as a\n"
            "child process: one experiment per policy (one seed, --jobs 1), then the grid (every policy x --seeds,\n"
            "--jobs J). Reports wall and CPU seconds (the command and the processes it waited for) against the\n"
            "targets. TRACE defaults to openb:$OPENB_DIR (the openb CSV folder, imported and inflated to 130%% per\n"
            "seed); without either the bench is skipped. Policies default to profiles/policy-lab/gpu-*.yaml.\n"
            "\n"
            "flags:\n"
            "  --config NAME=FILE   a policy (repeat; default the FGD paper's six)\n"
            "  --seeds N            the grid's seeds (default 10)\n"
            "  --first-seed S       the first seed, also the experiments' (default 42)\n"
            "  --jobs N             the grid's processes (default 2)\n"
            "  --skip-grid          time the experiments only\n"
            "  --experiment-target SECONDS  (default 10)\n"
            "  --grid-target SECONDS        (default 600)\n"
            "  --output text|json   a table (text), or one JSON object\n"
            "  -h, --help           this help\n");
}

static bool positive(const char *flag, const char *arg, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (!*arg || *end || !(v > 0)) {
        fprintf(stderr, "luasched bench policy-lab: %s: expected a positive number, got \"%s\"\n", flag, arg);
        return false;
    }
    *out = v;
    return true;
}

static bool count(const char *flag, const char *arg, unsigned max, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (!*arg || *end || v == 0 || v > max) {
        fprintf(stderr, "luasched bench policy-lab: %s: expected a number from 1 to %u, got \"%s\"\n", flag, max, arg);
        return false;
    }
    *out = (unsigned)v;
    return true;
}

static int parse_lab(int argc, char **argv, lab_opts *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},      {"seeds", required_argument, NULL, 's'},
        {"first-seed", required_argument, NULL, 'F'}, {"jobs", required_argument, NULL, 'j'},
        {"skip-grid", no_argument, NULL, 'G'},         {"experiment-target", required_argument, NULL, 'e'},
        {"grid-target", required_argument, NULL, 'g'}, {"output", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
    };
    *o = (lab_opts){.seeds = 10, .jobs = 2, .first_seed = 42, .experiment_target = 10, .grid_target = 600};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            if (o->n_configs == LAB_MAX_POLICIES || !strchr(optarg, '=')) {
                fprintf(stderr, "luasched bench policy-lab: --config: expected NAME=FILE (at most %d), got \"%s\"\n",
                        LAB_MAX_POLICIES, optarg);
                return LS_EXIT_USAGE;
            }
            o->config[o->n_configs++] = optarg;
            break;
        case 's': if (!count("--seeds", optarg, 1000, &o->seeds)) return LS_EXIT_USAGE; break;
        case 'j': if (!count("--jobs", optarg, 64, &o->jobs)) return LS_EXIT_USAGE; break;
        case 'F': {
            char *end;
            errno = 0;
            o->first_seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || *optarg == '-') {
                fprintf(stderr, "luasched bench policy-lab: --first-seed: expected a non-negative integer, got \"%s\"\n",
                        optarg);
                return LS_EXIT_USAGE;
            }
            break;
        }
        case 'G': o->skip_grid = true; break;
        case 'e': if (!positive("--experiment-target", optarg, &o->experiment_target)) return LS_EXIT_USAGE; break;
        case 'g': if (!positive("--grid-target", optarg, &o->grid_target)) return LS_EXIT_USAGE; break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fprintf(stderr, "luasched bench policy-lab: --output: expected text or json, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->json = strcmp(optarg, "json") == 0;
            break;
        case 'h': lab_usage(stdout); return -1;
        default: lab_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "luasched bench policy-lab: expected at most one trace, got %d\n", argc - optind);
        return LS_EXIT_USAGE;
    }
    o->trace = argc - optind == 1 ? argv[optind] : NULL;
    return 0;
}

/* The directory of the built-in profiles: next to the built-in plugins
 * (the source tree's, or PREFIX/share/luasched's). */
static void profile_dir(char *out, size_t size)
{
    const char *plugins = ls_paths_plugins();
    const char *colon = strchr(plugins, ':');
    int len = colon ? (int)(colon - plugins) : (int)strlen(plugins);
    snprintf(out, size, "%.*s/../profiles/policy-lab", len, plugins);
}

/* Runs `luasched compare ...` (argv without the program) and times it. */
static lab_time run_compare(char **args)
{
    lab_time t = {.exit_code = -1};
    double t0 = ls_cli_now();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "luasched bench policy-lab: fork: %s\n", strerror(errno));
        return t;
    }
    if (pid == 0) {
        execv("/proc/self/exe", args);
        fprintf(stderr, "luasched bench policy-lab: exec /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return t;
    t.wall = ls_cli_now() - t0;
    t.cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
            (double)ru.ru_stime.tv_usec * 1e-6;
    t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return t;
}

/* compare's argument vector for the policies [from, to) and n seeds. */
static lab_time time_compare(const lab_opts *o, const char *out_file, int from, int to, unsigned seeds, unsigned jobs)
{
    char seeds_s[16], first_s[32], jobs_s[16];
    snprintf(seeds_s, sizeof seeds_s, "%u", seeds);
    snprintf(first_s, sizeof first_s, "%llu", o->first_seed);
    snprintf(jobs_s, sizeof jobs_s, "%u", jobs);
    char *args[16 + 2 * LAB_MAX_POLICIES];
    int n = 0;
    args[n++] = "luasched";
    args[n++] = "compare";
    args[n++] = (char *)o->trace;
    for (int p = from; p < to; p++) {
        args[n++] = "--config";
        args[n++] = (char *)o->config[p];
    }
    char *rest[] = {"--seeds", seeds_s, "--first-seed", first_s, "--jobs", jobs_s, "--output", "json", "-o",
                    (char *)out_file, NULL};
    for (char **r = rest; *r; r++)
        args[n++] = *r;
    args[n] = NULL;
    return run_compare(args);
}

/* The name before '=' of a --config. */
static void name_of(const char *config, char *out, size_t size)
{
    const char *eq = strchr(config, '=');
    snprintf(out, size, "%.*s", (int)(eq - config), config);
}

static double round2(double v)
{
    return round(v * 100) / 100;
}

static cJSON *time_json(const lab_time *t, double target)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "wallSeconds", round2(t->wall));
    cJSON_AddNumberToObject(j, "cpuSeconds", round2(t->cpu));
    cJSON_AddNumberToObject(j, "targetSeconds", target);
    cJSON_AddBoolToObject(j, "met", t->exit_code == 0 && t->wall < target);
    if (t->exit_code)
        cJSON_AddNumberToObject(j, "exitCode", t->exit_code);
    return j;
}

static const char *verdict(const lab_time *t, double target)
{
    return t->exit_code ? "failed" : t->wall < target ? "met" : "NOT met";
}

static int run_lab(const lab_opts *o)
{
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/luasched-bench-lab-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "luasched bench policy-lab: a temporary directory: %s\n", strerror(errno));
        return LS_EXIT_FAILURE;
    }
    char out_file[PATH_MAX + 32];
    snprintf(out_file, sizeof out_file, "%s/report.json", dir);
    cJSON *root = cJSON_CreateObject(), *exps = cJSON_AddArrayToObject(root, "experiments");
    cJSON_AddStringToObject(root, "trace", o->trace);
    cJSON_AddNumberToObject(root, "seed", (double)o->first_seed);
    if (!o->json)
        printf("luasched bench policy-lab: %s, one experiment per policy (seed %llu, target %.0f s wall)\n", o->trace,
               o->first_seed, o->experiment_target);
    int rc = LS_EXIT_OK;
    for (int p = 0; p < o->n_configs; p++) {
        char name[128];
        name_of(o->config[p], name, sizeof name);
        lab_time t = time_compare(o, out_file, p, p + 1, 1, 1);
        cJSON *e = time_json(&t, o->experiment_target);
        cJSON_AddStringToObject(e, "policy", name);
        cJSON_AddItemToArray(exps, e);
        if (!o->json)
            printf("  %-16s %8.2f s wall %8.2f s CPU   %s\n", name, t.wall, t.cpu, verdict(&t, o->experiment_target));
        if (t.exit_code)
            rc = LS_EXIT_FAILURE;
    }
    if (!o->skip_grid && rc == LS_EXIT_OK) {
        lab_time t = time_compare(o, out_file, 0, o->n_configs, o->seeds, o->jobs);
        cJSON *g = time_json(&t, o->grid_target);
        cJSON_AddNumberToObject(g, "runs", (double)o->n_configs * o->seeds);
        cJSON_AddNumberToObject(g, "jobs", o->jobs);
        cJSON_AddItemToObject(root, "grid", g);
        if (!o->json)
            printf("grid: %d policies x %u seeds = %u runs, --jobs %u: %.2f s wall %.2f s CPU (target %.0f s): %s\n",
                   o->n_configs, o->seeds, o->n_configs * o->seeds, o->jobs, t.wall, t.cpu, o->grid_target,
                   verdict(&t, o->grid_target));
        if (t.exit_code)
            rc = LS_EXIT_FAILURE;
    }
    if (o->json) {
        char *text = cJSON_PrintUnformatted(root);
        puts(text);
        free(text);
    }
    cJSON_Delete(root);
    unlink(out_file);
    rmdir(dir);
    return rc;
}

int ls_cli_bench_lab(int argc, char **argv)
{
    lab_opts o;
    int rc = parse_lab(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    char trace[PATH_MAX + 8];
    if (!o.trace) {
        const char *dir = getenv("OPENB_DIR");
        if (!dir || !*dir) {
            fprintf(stderr, "luasched bench policy-lab: skipped: OPENB_DIR is not set and no trace was given (point "
                            "OPENB_DIR at the openb CSV folder of alibaba/clusterdata's cluster-trace-gpu-v2023, or "
                            "pass openb:DIR or a trace file)\n");
            return LS_EXIT_OK;
        }
        snprintf(trace, sizeof trace, "openb:%s", dir);
        o.trace = trace;
    }
    static char defaults[N_DEFAULT][PATH_MAX + 160];
    if (o.n_configs == 0) {
        char dir[PATH_MAX];
        profile_dir(dir, sizeof dir);
        for (int p = 0; p < N_DEFAULT; p++) {
            snprintf(defaults[p], sizeof defaults[p], "%s=%s/%s", DEFAULT_POLICIES[p][0], dir, DEFAULT_POLICIES[p][1]);
            o.config[o.n_configs++] = defaults[p];
        }
    }
    return run_lab(&o);
}
