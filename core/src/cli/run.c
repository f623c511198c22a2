/*
 * run.c: `luasched run`: schedules a real cluster, with kube-scheduler's flags
 * and its start-up order: defaults, the configuration file, the flags that
 * still apply, validation, completion (kept for --write-config-to and
 * /configz), the profiles and plugins built, the servers started, the
 * informers started and synced, leader election, then the scheduling loop
 * until SIGINT/SIGTERM (or lost leadership), and a clean stop: informers
 * stopped, in-flight writes finished or failed, every Lua state closed.
 */
#include "cli/cli.h"
#include "cli/run_internal.h"
#include "cli/whatif_relay.h"
#include "client/relay.h"
#include "scheduler/extender.h"
#include "client/api_needs.h"
#include "client/kubeconfig.h"
#include "client/leader.h"
#include "config/config_internal.h"
#include "luasched/log.h"
#include "luasched/scheduler.h"
#include "server/health.h"
#include "server/tls.h"
#include "worker/page.h"
#include "worker/supervise.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched run [flags]\n"
            "\n"
            "Schedules the pods of a real cluster, as kube-scheduler does: informers over the API server,\n"
            "bindings, events and status through it, optional Lease leader election, and /healthz, /livez,\n"
            "/readyz, /metrics, /metrics/slis, /configz and POST /whatif (where pods would go:\n"
            "docs/operations/what-if.md) served over HTTPS. SIGHUP (or an edit of the\n"
            "configuration or a plugin file) reloads the profiles and plugins without a restart.\n"
            "\n"
            "flags:\n"
            "  --config FILE                  KubeSchedulerConfiguration; its values win over the deprecated\n"
            "                                 flags below (--kube-api-*), as upstream; --kubeconfig is used\n"
            "                                 when the file has no clientConnection.kubeconfig (upstream\n"
            "                                 would ignore it), with a warning\n"
            "  --kubeconfig FILE              kubeconfig (default: clientConnection.kubeconfig; none: in-cluster)\n"
            "  --master URL                   the API server's address (overrides the kubeconfig's)\n"
            "  --context NAME                 the kubeconfig context (default: its current-context)\n"
            "  --kube-api-qps N               requests per second to the API server (default 50)\n"
            "  --kube-api-burst N             burst of requests (default 100)\n"
            "  --kube-api-content-type TYPE   content type of requests (JSON is what luasched sends)\n"
            "  --leader-elect[=BOOL]          run leader election before scheduling (default true)\n"
            "  --leader-elect-lease-duration D, --leader-elect-renew-deadline D, --leader-elect-retry-period D\n"
            "                                 Go durations (defaults 15s, 10s, 2s)\n"
            "  --leader-elect-resource-lock leases\n"
            "  --leader-elect-resource-name NAME       (default kube-scheduler)\n"
            "  --leader-elect-resource-namespace NS    (default kube-system)\n"
            "  --bind-address IP              address of the health and metrics server (default 0.0.0.0)\n"
            "  --secure-port N                its HTTPS port (default 10259; 0 turns it off)\n"
            "  --tls-cert-file FILE, --tls-private-key-file FILE\n"
            "                                 its certificate (default: a self-signed one made at start)\n"
            "  --authentication-kubeconfig FILE, --authorization-kubeconfig FILE\n"
            "                                 where TokenReviews and SubjectAccessReviews for callers of the secure\n"
            "                                 port are sent (default: the scheduler's own connection)\n"
            "  --authorization-always-allow-paths PATHS\n"
            "                                 paths served without authorization (default /healthz,/readyz,/livez);\n"
            "                                 every other path needs a caller the API server allows\n"
            "  --client-ca-file FILE          CAs whose client certificates authenticate callers of the secure port\n"
            "                                 (user: the CN, groups: the O entries)\n"
            "  -v, --v N                      log verbosity (default 0)\n"
            "  --logging-format text|json     log format (default text)\n"
            "  --write-config-to FILE         write the completed configuration and exit\n"
            "  --feature-gates A=true,B=false upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS             ':'-separated plugin directories searched before the built-in ones\n"
            "  --plugin-timeout MS            wall-clock limit of one plugin extension point for one pod\n"
            "  --liveness-stall-seconds N     /livez and /healthz fail when pods wait and the scheduling loop\n"
            "                                 made no progress for N seconds (default 60; 0: never)\n"
            "  --seed N                       seed for tie-breaking among equally scored nodes (default 0)\n"
            "  --shadow FILE                  evaluate a candidate KubeSchedulerConfiguration on every attempt (Filter\n"
            "                                 and Score on the live snapshot, never binding); disagreements are counted\n"
            "                                 on /metrics (luasched_shadow_*) and logged at -v 2; reloaded as --config\n"
            "  --whatif-evaluator fork|loop   where POST /whatif's questions are answered: a forked copy of the worker\n"
            "                                 beside the scheduling loop (default), or the loop itself between two cycles\n"
            "                                 (no fork: faster answers, the loop pays each question in full)\n"
            "  --whatif-max-wait D            while pods wait to be scheduled, how long a what-if question may wait\n"
            "                                 for the fork that answers it; forks cost at most 2%% of the time, and the\n"
            "                                 questions that come meanwhile share one (default 2s)\n"
            "  --metrics-poll-interval D      how often NodeMetrics / PodMetrics are listed from metrics.k8s.io\n"
            "                                 when a loaded plugin reads them (object_data or events; default 15s,\n"
            "                                 metrics-server's resolution; the metrics API has no watch)\n"
            "  --stop-timeout D               on SIGINT/SIGTERM or a hand-over, how long the queued bindings, events\n"
            "                                 and status patches may take to be sent (default 5s; the rest is dropped\n"
            "                                 and logged)\n"
            "  --worker-memory-limit SIZE     address space of the worker process that runs the scheduler and the\n"
            "                                 plugins (default 8Gi; 0: none); past it the worker is restarted\n"
            "  --worker-hang-grace D          a plugin call running this long past its time budget ends the worker,\n"
            "                                 which is restarted (default 2s)\n"
            "  --worker-kill-backoff D        a pod whose plugin calls ended the worker 3 times is marked and withheld\n"
            "                                 this long, doubled at each mark up to 10m (default 1m)\n"
            "  -h, --help                     this help\n");
}

/* ---- flags */

/* /livez fails after this long without a pass of the scheduling loop while
 * pods wait: longer than the default plugin time budget (10 s) so that one
 * slow call that the watchdog cuts off is not a failure. */
enum { DEFAULT_STALL_SECONDS = 60 };
/* The worker's address space: LuaJIT, the cache and the Lua states' own
 * limits fit well within it on clusters of thousands of nodes. */
#define DEFAULT_WORKER_MEMORY (8ull << 30)

enum {
    OPT_CONFIG = 256, OPT_KUBECONFIG, OPT_MASTER, OPT_CONTEXT, OPT_QPS, OPT_BURST, OPT_CONTENT_TYPE,
    OPT_LEADER_ELECT, OPT_LEASE, OPT_RENEW, OPT_RETRY, OPT_LOCK, OPT_LOCK_NAME, OPT_LOCK_NS, OPT_BIND, OPT_PORT,
    OPT_CERT, OPT_KEY, OPT_V, OPT_LOG_FORMAT, OPT_WRITE_CONFIG, OPT_PLUGIN_PATH, OPT_PLUGIN_TIMEOUT, OPT_SEED,
    OPT_STOP_TIMEOUT, OPT_AUTHN_KUBECONFIG, OPT_AUTHZ_KUBECONFIG, OPT_ALWAYS_ALLOW, OPT_CLIENT_CA, OPT_STALL, OPT_SHADOW, OPT_WHATIF_EVALUATOR, OPT_WHATIF_MAX_WAIT,
    OPT_METRICS_POLL, OPT_WORKER, OPT_SERVED_APIS, OPT_WORKER_MEMORY, OPT_WORKER_GRACE, OPT_WORKER_BACKOFF,
};

static const struct option RUN_OPTIONS[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"master", required_argument, NULL, OPT_MASTER},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"kube-api-qps", required_argument, NULL, OPT_QPS},
    {"kube-api-burst", required_argument, NULL, OPT_BURST},
    {"kube-api-content-type", required_argument, NULL, OPT_CONTENT_TYPE},
    {"leader-elect", optional_argument, NULL, OPT_LEADER_ELECT},
    {"leader-elect-lease-duration", required_argument, NULL, OPT_LEASE},
    {"leader-elect-renew-deadline", required_argument, NULL, OPT_RENEW},
    {"leader-elect-retry-period", required_argument, NULL, OPT_RETRY},
    {"leader-elect-resource-lock", required_argument, NULL, OPT_LOCK},
    {"leader-elect-resource-name", required_argument, NULL, OPT_LOCK_NAME},
    {"leader-elect-resource-namespace", required_argument, NULL, OPT_LOCK_NS},
    {"bind-address", required_argument, NULL, OPT_BIND},
    {"secure-port", required_argument, NULL, OPT_PORT},
    {"tls-cert-file", required_argument, NULL, OPT_CERT},
    {"tls-private-key-file", required_argument, NULL, OPT_KEY},
    {"authentication-kubeconfig", required_argument, NULL, OPT_AUTHN_KUBECONFIG},
    {"authorization-kubeconfig", required_argument, NULL, OPT_AUTHZ_KUBECONFIG},
    {"authorization-always-allow-paths", required_argument, NULL, OPT_ALWAYS_ALLOW},
    {"client-ca-file", required_argument, NULL, OPT_CLIENT_CA},
    {"v", required_argument, NULL, OPT_V},
    {"logging-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"write-config-to", required_argument, NULL, OPT_WRITE_CONFIG},
    {"plugin-path", required_argument, NULL, OPT_PLUGIN_PATH},
    {"plugin-timeout", required_argument, NULL, OPT_PLUGIN_TIMEOUT},
    {"liveness-stall-seconds", required_argument, NULL, OPT_STALL},
    {"metrics-poll-interval", required_argument, NULL, OPT_METRICS_POLL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT},
    {"shadow", required_argument, NULL, OPT_SHADOW},
    {"whatif-evaluator", required_argument, NULL, OPT_WHATIF_EVALUATOR},
    {"whatif-max-wait", required_argument, NULL, OPT_WHATIF_MAX_WAIT},
    {"worker", no_argument, NULL, OPT_WORKER},
    {"served-apis", required_argument, NULL, OPT_SERVED_APIS},
    {"worker-memory-limit", required_argument, NULL, OPT_WORKER_MEMORY},
    {"worker-hang-grace", required_argument, NULL, OPT_WORKER_GRACE},
    {"worker-kill-backoff", required_argument, NULL, OPT_WORKER_BACKOFF},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int flag_error(const char *flag, const char *expected, const char *got)
{
    fprintf(stderr, "luasched run: invalid argument \"%s\" for \"--%s\" flag: expected %s\n", got, flag, expected);
    return LS_EXIT_USAGE;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Go's strconv.ParseBool spellings, as pflag accepts them. */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0)
            return *out = true;
        if (strcmp(s, no[i]) == 0)
            return !(*out = false);
    }
    return false;
}

static int parse_duration_flag(const char *flag, const char *s, int64_t *out)
{
    if (!ls_go_duration_parse(s, out) || *out <= 0)
        return flag_error(flag, "a positive Go duration such as 15s", s);
    return 0;
}

/* "4Gi", "512Mi", "1000000": bytes (cli.h). */
bool ls_cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    static const struct { const char *suffix; unsigned shift; } UNITS[] = {{"", 0}, {"Ki", 10}, {"Mi", 20}, {"Gi", 30}};
    for (size_t i = 0; *s >= '0' && *s <= '9' && i < sizeof UNITS / sizeof *UNITS; i++)
        if (strcmp(end, UNITS[i].suffix) == 0 && v <= (UINT64_MAX >> UNITS[i].shift)) {
            *out = (uint64_t)v << UNITS[i].shift;
            return true;
        }
    return false;
}

static int parse_option(run_opts *o, int ch, const char *arg)
{
    long n;
    bool b;
    char *end;
    switch (ch) {
    case OPT_CONFIG: o->config = arg; return 0;
    case OPT_KUBECONFIG: o->kubeconfig = arg; o->deprecated_given = true; return 0;
    case OPT_MASTER: o->master = arg; return 0;
    case OPT_CONTEXT: o->context = arg; return 0;
    case OPT_QPS:
        o->qps = strtod(arg, &end);
        o->deprecated_given = true;
        return *arg && !*end && o->qps >= 0 ? 0 : flag_error("kube-api-qps", "a number >= 0", arg);
    case OPT_BURST:
        o->deprecated_given = true;
        return parse_long(arg, 0, 1000000, &o->burst) ? 0 : flag_error("kube-api-burst", "an integer >= 0", arg);
    case OPT_CONTENT_TYPE: o->content_type = arg; o->deprecated_given = true; return 0;
    case OPT_LEADER_ELECT:
        if (!arg)
            b = true;
        else if (!parse_bool(arg, &b))
            return flag_error("leader-elect", "true or false", arg);
        o->leader_elect = b;
        return 0;
    case OPT_LEASE: return parse_duration_flag("leader-elect-lease-duration", arg, &o->lease_duration_ns);
    case OPT_RENEW: return parse_duration_flag("leader-elect-renew-deadline", arg, &o->renew_deadline_ns);
    case OPT_RETRY: return parse_duration_flag("leader-elect-retry-period", arg, &o->retry_period_ns);
    case OPT_LOCK: o->resource_lock = arg; return 0;
    case OPT_LOCK_NAME: o->resource_name = arg; return 0;
    case OPT_LOCK_NS: o->resource_namespace = arg; return 0;
    case OPT_BIND: o->bind_address = arg; return 0;
    case OPT_PORT:
        return parse_long(arg, 0, 65535, &o->secure_port) ? 0 : flag_error("secure-port", "a port 0-65535", arg);
    case OPT_CERT: o->tls_cert_file = arg; return 0;
    case OPT_KEY: o->tls_key_file = arg; return 0;
    case OPT_AUTHN_KUBECONFIG: o->authn_kubeconfig = arg; return 0;
    case OPT_AUTHZ_KUBECONFIG: o->authz_kubeconfig = arg; return 0;
    case OPT_ALWAYS_ALLOW: o->always_allow_paths = arg; return 0;
    case OPT_CLIENT_CA: o->client_ca_file = arg; return 0;
    case 'v':
    case OPT_V:
        if (!parse_long(arg, 0, 100, &n))
            return flag_error("v", "a verbosity level 0-100", arg);
        o->verbosity = (int)n;
        return 0;
    case OPT_LOG_FORMAT:
        return ls_log_parse_format(arg, &o->log_format) ? 0 : flag_error("logging-format", "text or json", arg);
    case OPT_WRITE_CONFIG: o->write_config = arg; return 0;
    case OPT_PLUGIN_PATH: o->plugin_path = arg; return 0;
    case OPT_PLUGIN_TIMEOUT:
        o->plugin_timeout_ms = strtoull(arg, &end, 10);
        return *arg && !*end && o->plugin_timeout_ms ? 0 : flag_error("plugin-timeout", "milliseconds > 0", arg);
    case OPT_STALL:
        o->stall_seconds = strtoull(arg, &end, 10);
        return *arg && !*end ? 0 : flag_error("liveness-stall-seconds", "seconds >= 0", arg);
    case OPT_SEED:
        o->seed = strtoull(arg, &end, 10);
        return *arg && !*end ? 0 : flag_error("seed", "a non-negative integer", arg);
    case OPT_STOP_TIMEOUT: return parse_duration_flag("stop-timeout", arg, &o->stop_timeout_ns);
    case OPT_SHADOW: o->shadow = arg; return 0;
    case OPT_WHATIF_EVALUATOR:
        o->whatif_in_loop = strcmp(arg, "loop") == 0;
        return o->whatif_in_loop || strcmp(arg, "fork") == 0 ? 0 : flag_error("whatif-evaluator", "fork or loop", arg);
    case OPT_WHATIF_MAX_WAIT: return parse_duration_flag("whatif-max-wait", arg, &o->whatif_max_wait_ns);
    case OPT_WORKER: o->worker = true; return 0;
    case OPT_SERVED_APIS: o->served_apis = arg; return 0;   /* checked by the worker (ls_discovery_from_list) */
    case OPT_WORKER_MEMORY:
        return ls_cli_parse_size(arg, &o->worker_memory) ? 0
               : flag_error("worker-memory-limit", "bytes, with an optional Ki, Mi or Gi suffix (0: none)", arg);
    case OPT_WORKER_GRACE: return parse_duration_flag("worker-hang-grace", arg, &o->worker_grace_ns);
    case OPT_WORKER_BACKOFF: return parse_duration_flag("worker-kill-backoff", arg, &o->worker_backoff_ns);
    case OPT_METRICS_POLL:
        if (parse_duration_flag("metrics-poll-interval", arg, &o->metrics_poll_ns) != 0)
            return LS_EXIT_USAGE;
        return o->metrics_poll_ns >= 1000000 ? 0 : flag_error("metrics-poll-interval", "a duration >= 1ms", arg);
    default: run_usage(stderr); return LS_EXIT_USAGE;
    }
}

/* Upstream's wording for positional arguments: "%q does not take any arguments, got %q". */
static int reject_positional(int argc, char **argv, int first)
{
    fprintf(stderr, "luasched run: \"luasched run\" does not take any arguments, got [");
    for (int i = first; i < argc; i++)
        fprintf(stderr, "%s\"%s\"", i > first ? " " : "", argv[i]);
    fprintf(stderr, "]\n");
    return LS_EXIT_USAGE;
}

static int parse_run_opts(int argc, char **argv, run_opts *o)
{
    *o = (run_opts){.bind_address = "0.0.0.0", .secure_port = 10259, .leader_elect = -1, .burst = -1, .qps = -1,
                    .stop_timeout_ns = 5000000000LL, .stall_seconds = DEFAULT_STALL_SECONDS,
                    .metrics_poll_ns = 15000000000LL, .worker_memory = DEFAULT_WORKER_MEMORY,
                    .worker_grace_ns = 2000000000LL, .whatif_max_wait_ns = 2000000000LL, .worker_backoff_ns = 60000000000LL};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "hv:", RUN_OPTIONS, NULL)) != -1) {
        if (ch == 'h') {
            run_usage(stdout);
            return -1;
        }
        int rc = parse_option(o, ch, optarg);
        if (rc == LS_EXIT_USAGE && ch == '?')
            ls_cli_suggest_flag(argc, argv, RUN_OPTIONS);
        if (rc)
            return rc;
    }
    return optind < argc ? reject_positional(argc, argv, optind) : 0;
}

/* ---- configuration: defaults, file, flags, validation */

static void apply_flags(const run_opts *o, ls_config *cfg)
{
    ls_leader_election_config *le = &cfg->leader_election;
    if (o->leader_elect >= 0)
        le->leader_elect = o->leader_elect;
    if (o->lease_duration_ns)
        le->lease_duration_ns = o->lease_duration_ns;
    if (o->renew_deadline_ns)
        le->renew_deadline_ns = o->renew_deadline_ns;
    if (o->retry_period_ns)
        le->retry_period_ns = o->retry_period_ns;
    char **strings[] = {&le->resource_lock, &le->resource_name, &le->resource_namespace};
    const char *given[] = {o->resource_lock, o->resource_name, o->resource_namespace};
    for (int i = 0; i < 3; i++)
        if (given[i])
            *strings[i] = ls_arena_strdup(&cfg->text, given[i]);
    if (o->config) {
        /* The configuration is read twice (completion, then the scheduler): say it once. */
        static bool warned;
        const char *in_file = cfg->client_connection.kubeconfig;
        bool use_flag = o->kubeconfig && !(in_file && *in_file);
        /* upstream ignores --kubeconfig beside --config; with no
         * clientConnection.kubeconfig that leaves nothing to connect with,
         * so the flag is used, and said so */
        if (use_flag)
            cfg->client_connection.kubeconfig = ls_arena_strdup(&cfg->text, o->kubeconfig);
        if (use_flag && !warned)
            ls_log_warning("Using --kubeconfig: the configuration has no clientConnection.kubeconfig "
                           "(kube-scheduler ignores --kubeconfig when --config is given)",
                           "kubeconfig", o->kubeconfig, "config", o->config);
        if (o->deprecated_given && !warned)
            ls_log_warning(use_flag ? "Deprecated flags (--kube-api-*) are ignored because --config is given"
                                    : "Deprecated flags (--kubeconfig, --kube-api-*) are ignored because --config "
                                      "is given");
        warned = true;
        return;
    }
    ls_client_connection_config *cc = &cfg->client_connection;
    if (o->kubeconfig)
        cc->kubeconfig = ls_arena_strdup(&cfg->text, o->kubeconfig);
    if (o->qps >= 0)
        cc->qps = o->qps;
    if (o->burst >= 0)
        cc->burst = (int32_t)o->burst;
    if (o->content_type)
        cc->content_type = ls_arena_strdup(&cfg->text, o->content_type);
}

/* component-base's and client-go's checks, again after the flags. */
static bool validate_leader_election(const ls_leader_election_config *le)
{
    if (!le->leader_elect)
        return true;
    const char *problem = NULL;
    if (le->lease_duration_ns <= le->renew_deadline_ns)
        problem = "leaderElection.leaseDuration: must be greater than renewDeadline";
    else if ((double)le->renew_deadline_ns <= 1.2 * (double)le->retry_period_ns)
        problem = "leaderElection.renewDeadline: must be greater than retryPeriod*1.2";
    else if (strcmp(le->resource_lock, "leases") != 0)
        problem = "leaderElection.resourceLock: Unsupported value: only \"leases\" is supported";
    if (problem)
        fprintf(stderr, "luasched run: %s\n", problem);
    return problem == NULL;
}

bool ls_run_load_config(const run_opts *o, ls_config *cfg)
{
    ls_error err;
    if (!ls_config_load(cfg, o->config, &err)) {
        for (uint32_t i = 0; i < cfg->problems.len; i++)
            fprintf(stderr, "luasched run: %s\n", LS_VEC_AT(&cfg->problems, char *, i));
        if (!cfg->problems.len)
            fprintf(stderr, "luasched run: %s\n", err.msg);
        ls_config_free(cfg);
        return false;
    }
    apply_flags(o, cfg);
    if (!validate_leader_election(&cfg->leader_election)) {
        ls_config_free(cfg);
        return false;
    }
    return true;
}

/* The completed configuration as text; with json, wrapped as /configz serves it. */
char *ls_run_completed_config(const run_opts *o, bool json, ls_error *err)
{
    ls_config cfg;
    if (!ls_run_load_config(o, &cfg))
        return ls_errorf(err, "the configuration could not be loaded"), NULL;
    char *text = ls_cli_completed_config(&cfg, o->plugin_path, json, err);
    ls_config_free(&cfg);
    if (!text || !json)
        return text;
    size_t n = strlen(text) + 32;
    char *wrapped = ls_xmalloc(n);
    snprintf(wrapped, n, "{\"componentconfig\":%s}", text);
    free(text);
    return wrapped;
}

/* ---- the run: the supervisor (run_supervise.c watches the worker) */


static void on_started_leading(void *ud)
{
    (void)ud;
    ls_log_info(0, "Successfully acquired lease");
}

/* As kube-scheduler's OnStoppedLeading: asked to stop, it says so and exits
 * 0; a lease lost while running is an error and exit 1. */
static void on_stopped_leading(void *ud)
{
    run_state *r = ud;
    if (r->stop) {
        ls_log_info(0, "Requested to terminate, exiting");
        return;
    }
    ls_log_error("Leaderelection lost");
    r->lost_lease = 1;
    r->stop = 1;
    atomic_store(&r->health.healthy, false);
}

static void on_new_leader(void *ud, const char *identity)
{
    run_state *r = ud;
    atomic_store(&r->health.leader_known, true);
    ls_log_info(0, "New leader elected", "identity", identity);
}

/* A client of its own for the delegated auth's reviews, or NULL with no error
 * when path is not given (the scheduler's connection is used). */
static bool auth_client(const char *flag, const char *path, ls_kclient **out, ls_error *err)
{
    *out = NULL;
    if (!path)
        return true;
    ls_kubeconfig kc;
    if (!ls_kubeconfig_load(path, NULL, NULL, &kc, err)) {
        ls_error why = *err;
        return ls_errorf(err, "--%s: %s", flag, why.msg);
    }
    ls_kclient_options co = {0};
    *out = ls_kclient_new(&kc, &co, err);
    ls_kubeconfig_free(&kc);
    return *out != NULL;
}

/* kube-scheduler's delegated authentication and authorization of the secure port. */
static bool start_auth(const run_opts *o, run_state *r, ls_error *err)
{
    if (!auth_client("authentication-kubeconfig", o->authn_kubeconfig, &r->authn_client, err) ||
        !auth_client("authorization-kubeconfig", o->authz_kubeconfig, &r->authz_client, err))
        return false;
    ls_delegated_auth_options ao = {.authn = r->authn_client ? r->authn_client : r->client,
                                    .authz = r->authz_client ? r->authz_client : r->client,
                                    .always_allow = o->always_allow_paths, .client_certs = o->client_ca_file != NULL};
    r->auth = ls_delegated_auth_new(&ao);
    return true;
}

/* The worker's metrics, then the supervisor's own (the workers it replaced). */
static char *worker_metrics(void *ud)
{
    run_state *r = ud;
    char *worker = ls_relay_metrics(r->relay, 2000);
    ls_buf b = {0};
    ls_buf_adds(&b, worker);
    free(worker);
    ls_run_worker_ends_text(&b);
    return b.data;
}

static char *worker_whatif(void *ud, const char *question, int *status)
{
    run_state *r = ud;
    if (!r->whatif) {
        *status = 503;
        return ls_xstrdup("{\"kind\":\"WhatIfAnswer\",\"error\":\"the scheduler is starting\"}");
    }
    return ls_whatif_relay_ask(r->whatif, question, 30000, status);
}

static bool start_server(const run_opts *o, run_state *r, ls_error *err)
{
    if (o->secure_port == 0)
        return true;
    if (!start_auth(o, r, err))
        return false;
    char *cert = NULL, *key = NULL, *client_ca = NULL;
    if (o->client_ca_file && !(client_ca = ls_tls_read_pem(o->client_ca_file, err))) {
        ls_error why = *err;
        return ls_errorf(err, "--client-ca-file: %s", why.msg);
    }
    if (o->tls_cert_file || o->tls_key_file) {
        if (!o->tls_cert_file || !o->tls_key_file) {
            free(client_ca);
            return ls_errorf(err, "--tls-cert-file and --tls-private-key-file go together");
        }
        cert = ls_tls_read_pem(o->tls_cert_file, err);
        key = cert ? ls_tls_read_pem(o->tls_key_file, err) : NULL;
        if (!key) {
            free(cert);
            free(client_ca);
            return false;
        }
    }
    ls_health_options ho = {.host = o->bind_address, .port = (uint16_t)o->secure_port, .cert_pem = cert,
                            .key_pem = key, .metrics_text = worker_metrics, .metrics_ud = r,
                            .whatif = worker_whatif, .whatif_ud = r,
                            .configz_json = r->configz, .state = &r->health, .auth = r->auth,
                            .client_ca_pem = client_ca};
    r->server = ls_health_server_start(&ho, err);
    free(cert);
    free(key);
    free(client_ca);
    if (!r->server)
        return false;
    char port[16];
    snprintf(port, sizeof port, "%u", ls_health_server_port(r->server));
    ls_log_info(0, "Serving securely", "address", o->bind_address, "port", port);
    return true;
}

static bool connect_client(const run_opts *o, const ls_config *cfg, run_state *r, ls_error *err)
{
    const char *path = cfg->client_connection.kubeconfig;
    if (!ls_kubeconfig_resolve(path && *path ? path : NULL, o->context, o->master, &r->kubeconfig, err))
        return false;
    ls_kclient_options co = {.qps = cfg->client_connection.qps, .burst = cfg->client_connection.burst};
    r->client = ls_kclient_new(&r->kubeconfig, &co, err);
    co.share_credentials_with = r->client;
    r->events_client = r->client ? ls_kclient_new(&r->kubeconfig, &co, err) : NULL;
    return r->events_client != NULL;
}

static bool elect(const ls_config *cfg, run_state *r, ls_error *err)
{
    const ls_leader_election_config *le = &cfg->leader_election;
    if (!le->leader_elect) {
        atomic_store(&r->health.leader_known, true);
        return true;
    }
    ls_leader_options lo = {.ns = le->resource_namespace, .name = le->resource_name,
                            .lease_duration_ms = (long)(le->lease_duration_ns / 1000000),
                            .renew_deadline_ms = (long)(le->renew_deadline_ns / 1000000),
                            .retry_period_ms = (long)(le->retry_period_ns / 1000000),
                            /* kube-scheduler releases the lock when asked to stop
                             * (ReleaseOnCancel), so a standby takes over at its next try. */
                            .release_on_stop = true};
    ls_leader_callbacks cb = {.on_started_leading = on_started_leading, .on_stopped_leading = on_stopped_leading,
                              .on_new_leader = on_new_leader, .ud = r};
    r->leader = ls_leader_new(r->client, &lo, &cb, err);
    if (!r->leader || !ls_leader_start(r->leader, err))
        return false;
    char lock[300];
    snprintf(lock, sizeof lock, "%s/%s", le->resource_namespace, le->resource_name);
    ls_log_info(0, "Attempting to acquire leader lease", "lock", lock);
    while (!r->stop && !ls_leader_is_leader(r->leader)) {
        if (ls_leader_leader_known(r->leader))
            atomic_store(&r->health.leader_known, true);
        usleep(50 * 1000);
    }
    return true;
}

static void stop_all(run_state *r)
{
    ls_log_info(0, "Stopping the scheduler");
    ls_child_free(&r->worker);   /* kills a worker that did not stop in time */
    ls_chan_reader_free(&r->worker_rd);
    ls_whatif_relay_close(r->whatif);   /* the HTTP server's stop waits for its handlers */
    if (r->relay)
        ls_relay_stop(r->relay, r->stop_timeout_ms);   /* informers first, then the queued writes */
    if (r->leader)
        ls_leader_stop(r->leader);
    ls_health_server_stop(r->server);
    ls_relay_free(r->relay);
    ls_whatif_relay_free(r->whatif);
    ls_extenders_free(r->extenders);
    ls_discovery_free(r->discovery);
    ls_leader_free(r->leader);
    ls_delegated_auth_free(r->auth);
    ls_kclient_free(r->authn_client);
    ls_kclient_free(r->authz_client);
    ls_kclient_free(r->client);
    ls_kclient_free(r->events_client);
    ls_kubeconfig_free(&r->kubeconfig);
    free(r->configz);
    ls_run_worker_argv_free(r->worker_argv);
}

/* What the server serves (the supervisor has the network): what needs an
 * API it does not serve is turned off here for the warning, and in the
 * worker, which is told the served group versions on its command line. */
static bool discover(const run_opts *o, run_state *r, ls_error *err)
{
    r->discovery = ls_discovery_fetch(r->client, err);
    if (!r->discovery)
        return false;
    ls_api_needs_apply(r->discovery);
    char *served = ls_discovery_served_list(r->discovery);
    r->worker_argv = ls_run_worker_argv(o, served);
    free(served);
    return true;
}

/* The informers, the writer and the first worker (which builds the
 * scheduler: a configuration or plugin error ends the run here). */
static bool start_relay(const run_opts *o, const ls_config *cfg, run_state *r, int *rc)
{
    ls_error err;
    *rc = LS_EXIT_USAGE;
    bool connected = connect_client(o, cfg, r, &err) && discover(o, r, &err);
    ls_relay_options ro = {.client = r->client, .events_client = r->events_client,
                           .backoff_ms = (long)(o->worker_backoff_ns / 1000000),
                           .metrics_poll_ms = (long)(o->metrics_poll_ns / 1000000), .discovery = r->discovery};
    if (connected && cfg->n_extenders && !(r->extenders = ls_extenders_new(cfg, &err)))
        connected = false;
    if (connected && (r->relay = ls_relay_new(&ro, &err)))
        r->whatif = ls_whatif_relay_new(r->relay);
    if (!connected || !r->relay ||
        !ls_child_init(&r->worker, &err) || !ls_run_spawn_worker(r, &err)) {
        ls_log_error("Error creating the scheduler", "err", err.msg);
        fprintf(stderr, "luasched run: %s\n", err.msg);
        return false;
    }
    if (!ls_run_await_hello(r, rc))
        return false;
    /* the one warning: what the relay did not watch, the plugins the worker
     * left out, and the metrics and custom resources of its hello not served */
    ls_discovery_warn(r->discovery);
    return true;
}

static int schedule(const run_opts *o, run_state *r)
{
    ls_error err;
    ls_config cfg;
    if (!ls_run_load_config(o, &cfg))
        return LS_EXIT_USAGE;
    ls_log_info(0, "Starting Kubernetes Scheduler", "version", "v" LS_VERSION "-luasched");
    int rc;
    if (!start_relay(o, &cfg, r, &rc)) {
        ls_config_free(&cfg);
        stop_all(r);
        return rc;
    }
    if (ls_log_enabled(2)) {
        cJSON *parsed = cJSON_Parse(r->configz);
        char *compact = parsed ? cJSON_PrintUnformatted(parsed) : NULL;
        ls_log_info(2, "Using component config", "config", compact ? compact : r->configz);
        free(compact);
        cJSON_Delete(parsed);
    }
    atomic_store(&r->health.healthy, true);
    bool leader_elect = cfg.leader_election.leader_elect;
    /* delayCacheUntilActive: a standby does not fill its cache until it leads. */
    bool delay_cache = leader_elect && cfg.delay_cache_until_active;
    if (!start_server(o, r, &err) || (delay_cache && !elect(&cfg, r, &err)) ||
        (!r->stop && (ls_relay_attach(r->relay, r->worker.chan, false), !ls_relay_start(r->relay, &err)))) {
        ls_log_error("Error starting the scheduler", "err", err.msg);
        ls_config_free(&cfg);
        stop_all(r);
        return LS_EXIT_FAILURE;
    }
    ls_log_info(0, "Waiting for caches to sync");
    if (!r->stop && ls_relay_wait_synced(r->relay, &r->stop)) {
        atomic_store(&r->health.synced, true);
        ls_log_info(0, "Caches are synced");
    }
    if (!r->stop && leader_elect && !delay_cache && !elect(&cfg, r, &err)) {
        ls_log_error("Error starting leader election", "err", err.msg);
        ls_config_free(&cfg);
        stop_all(r);
        return LS_EXIT_FAILURE;
    }
    if (!leader_elect)
        atomic_store(&r->health.leader_known, true);
    if (!r->stop) {
        ls_relay_send_synced(r->relay);   /* the worker has the informers' lists: it may schedule */
        ls_run_supervise(o, r);
    }
    bool lost = r->lost_lease;
    ls_config_free(&cfg);
    stop_all(r);
    return lost ? LS_EXIT_FAILURE : LS_EXIT_OK;
}

/* --write-config-to: the completed configuration, written by the worker. */
static int write_config(int argc, char **argv)
{
    run_opts o;
    ls_error err;
    if (parse_run_opts(argc, argv, &o) != 0)
        return LS_EXIT_USAGE;
    size_t len = strlen(o.write_config);
    bool json = len > 5 && strcmp(o.write_config + len - 5, ".json") == 0;
    FILE *f = ls_cli_output_open(o.write_config, "w", &err);   /* before any plugin code runs */
    char *text = f ? ls_run_completed_config(&o, json, &err) : NULL;
    if (!text) {
        if (f)
            ls_cli_output_finish(f, o.write_config, NULL, &(ls_error){0});
        fprintf(stderr, "luasched run: %s\n", err.msg);
        return f ? LS_EXIT_USAGE : LS_EXIT_FAILURE;
    }
    bool ok = ls_cli_output_finish(f, o.write_config, text, &err);
    free(text);
    if (!ok) {
        fprintf(stderr, "luasched run: --write-config-to %s: cannot write the file\n", o.write_config);
        return LS_EXIT_FAILURE;
    }
    ls_log_info(0, "Wrote configuration", "file", o.write_config);
    return LS_EXIT_OK;
}

int ls_cli_run(int argc, char **argv)
{
    run_opts o;
    int rc = parse_run_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_log_setup(o.verbosity, o.log_format, stderr);
    if (o.worker)
        return ls_run_worker(&o);
    if (o.write_config)   /* completing the configuration loads the plugins: in a worker process */
        return ls_cli_supervised("run", write_config, argc, argv);
    static run_state r;
    memset(&r, 0, sizeof r);
    r.worker.page_fd = -1;
    r.worker.chan = -1;
    r.stop_timeout_ms = (long)(o.stop_timeout_ns / 1000000);
    r.health.stall_ms = o.stall_seconds * 1000;
    signal(SIGPIPE, SIG_IGN);   /* a worker gone is its channel's error */
    ls_cli_trap_signals(&r.stop, &r.reload);
    rc = schedule(&o, &r);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}
