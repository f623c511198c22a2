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
#include "client/api_needs.h"
#include "client/kcluster.h"
#include "client/kubeconfig.h"
#include "client/leader.h"
#include "config/config_internal.h"
#include "luasched/log.h"
#include "luasched/scheduler.h"
#include "server/health.h"
#include "server/tls.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct run_opts {
    const char *config, *kubeconfig, *master, *context;
    const char *bind_address;
    long secure_port;
    const char *tls_cert_file, *tls_key_file;
    const char *authn_kubeconfig, *authz_kubeconfig;   /* delegated auth of the secure port */
    const char *always_allow_paths;
    const char *client_ca_file;
    int verbosity;
    ls_log_format log_format;
    const char *write_config;
    const char *plugin_path;
    const char *shadow;               /* --shadow: a candidate configuration evaluated, never binding */
    uint64_t plugin_timeout_ms;
    uint64_t stall_seconds;           /* --liveness-stall-seconds */
    uint64_t seed;
    int64_t stop_timeout_ns;          /* how long a graceful stop waits for queued writes */
    int64_t metrics_poll_ns;          /* --metrics-poll-interval: metrics.k8s.io list period */
    /* leader election flags, applied only when given */
    int leader_elect;                 /* -1 unset */
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;   /* 0 unset */
    const char *resource_lock, *resource_name, *resource_namespace;
    /* deprecated flags, ignored with --config as upstream */
    double qps;
    long burst;
    const char *content_type;
    bool deprecated_given;
} run_opts;

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched run [flags]\n"
            "\n"
            "Schedules the pods of a real cluster, as kube-scheduler does: informers over the API server,\n"
            "bindings, events and status through it, optional Lease leader election, and /healthz, /livez,\n"
            "/readyz, /metrics, /metrics/slis and /configz served over HTTPS. SIGHUP (or an edit of the\n"
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
            "  --metrics-poll-interval D      how often NodeMetrics / PodMetrics are listed from metrics.k8s.io\n"
            "                                 when a loaded plugin reads them (object_data or events; default 15s,\n"
            "                                 metrics-server's resolution; the metrics API has no watch)\n"
            "  --stop-timeout D               on SIGINT/SIGTERM or a hand-over, how long the queued bindings, events\n"
            "                                 and status patches may take to be sent (default 5s; the rest is dropped\n"
            "                                 and logged)\n"
            "  -h, --help                     this help\n");
}

/* ---- flags */

/* /livez fails after this long without a pass of the scheduling loop while
 * pods wait: longer than the default plugin time budget (10 s) so that one
 * slow call that the watchdog cuts off is not a failure. */
enum { DEFAULT_STALL_SECONDS = 60 };

enum {
    OPT_CONFIG = 256, OPT_KUBECONFIG, OPT_MASTER, OPT_CONTEXT, OPT_QPS, OPT_BURST, OPT_CONTENT_TYPE,
    OPT_LEADER_ELECT, OPT_LEASE, OPT_RENEW, OPT_RETRY, OPT_LOCK, OPT_LOCK_NAME, OPT_LOCK_NS, OPT_BIND, OPT_PORT,
    OPT_CERT, OPT_KEY, OPT_V, OPT_LOG_FORMAT, OPT_WRITE_CONFIG, OPT_PLUGIN_PATH, OPT_PLUGIN_TIMEOUT, OPT_SEED,
    OPT_STOP_TIMEOUT, OPT_AUTHN_KUBECONFIG, OPT_AUTHZ_KUBECONFIG, OPT_ALWAYS_ALLOW, OPT_CLIENT_CA, OPT_STALL, OPT_SHADOW,
    OPT_METRICS_POLL,
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
                    .metrics_poll_ns = 15000000000LL};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "hv:", RUN_OPTIONS, NULL)) != -1) {
        if (ch == 'h') {
            run_usage(stdout);
            return -1;
        }
        int rc = parse_option(o, ch, optarg);
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

static bool load_config(const run_opts *o, ls_config *cfg)
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
static char *completed_config(const run_opts *o, bool json, ls_error *err)
{
    ls_config cfg;
    if (!load_config(o, &cfg))
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

/* ---- the run */

typedef struct run_state {
    volatile sig_atomic_t stop, reload;
    volatile sig_atomic_t lost_lease;
    ls_health_state health;
    ls_kclient *client, *events_client;   /* events have their own client, as kube-scheduler's */
    ls_kcluster *kc;
    ls_discovery *discovery;                /* what the server serves (client/api_needs.h) */
    long stop_timeout_ms;
    ls_leader *leader;
    ls_health_server *server;
    ls_kclient *authn_client, *authz_client;   /* from --authentication/--authorization-kubeconfig */
    ls_delegated_auth *auth;
    ls_metrics *metrics;
    ls_scheduler *sched;
    ls_kubeconfig kubeconfig;
    char *configz;
    uint64_t configz_reloads;   /* the successful reloads configz reflects */
    const run_opts *opts;
    char *plugin_dirs;
} run_state;

static void on_started_leading(void *ud)
{
    (void)ud;
    ls_log_info(0, "Successfully acquired lease");
}

/* After a successful hot reload, /configz shows the configuration now in
 * force (before: the one of the start, for the process's life). */
static void refresh_configz(run_state *r)
{
    uint64_t reloads = ls_scheduler_reloads(r->sched, true);
    if (reloads == r->configz_reloads)
        return;
    r->configz_reloads = reloads;
    ls_error err;
    char *text = completed_config(r->opts, true, &err);
    if (!text) {
        ls_log_error("Could not refresh /configz after the reload", "err", err.msg);
        return;
    }
    free(r->configz);
    r->configz = text;
    if (r->server)
        ls_health_server_set_configz(r->server, r->configz);
}

static void note_progress(void *ud, uint64_t now_ms, uint64_t queued)
{
    run_state *r = ud;
    atomic_store(&r->health.progress_ms, now_ms);
    atomic_store(&r->health.waiting, queued);
    refresh_configz(r);
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
                            .key_pem = key, .metrics = r->metrics, .configz_json = r->configz,
                            .state = &r->health, .auth = r->auth, .client_ca_pem = client_ca};
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

static bool build_scheduler(const run_opts *o, ls_config *cfg, run_state *r, ls_error *err)
{
    r->discovery = ls_discovery_fetch(r->client, err);
    if (r->discovery)
        ls_api_needs_apply(r->discovery);
    ls_kcluster_options ko = {.events_client = r->events_client, .discovery = r->discovery};
    r->kc = r->discovery ? ls_kcluster_new(r->client, &ko, err) : NULL;
    if (!r->kc) {
        ls_config_free(cfg);
        return false;
    }
    /* The scheduler keeps its options across reloads, which free the
     * configuration: the path lives as long as the run. */
    char *dirs = !o->plugin_path && cfg->luasched.plugin_dirs ? ls_xstrdup(cfg->luasched.plugin_dirs) : NULL;
    r->plugin_dirs = dirs;
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path ? o->plugin_path : dirs,
                           .plugin_timeout_ms = o->plugin_timeout_ms ? o->plugin_timeout_ms
                                                                     : cfg->luasched.plugin_timeout_ms};
    ls_sched_source src = ls_kcluster_source(r->kc);
    r->sched = ls_scheduler_new(cfg, &so, &src, err);   /* takes cfg */
    if (!r->sched)
        return false;
    r->metrics = ls_metrics_new();
    ls_scheduler_set_metrics(r->sched, r->metrics);
    if (!ls_api_needs_check(r->discovery, r->sched, err))
        return false;
    const char *custom[16];
    uint32_t n = ls_scheduler_custom_resources(r->sched, custom, 16);
    for (uint32_t i = 0; i < n; i++)
        if (!ls_kcluster_watch_custom(r->kc, custom[i], err))
            return false;
    uint32_t wanted = ls_model_wanted();
    if (!ls_kcluster_poll_metrics(r->kc, (wanted & LS_WANT_NODE_METRICS) != 0, (wanted & LS_WANT_POD_METRICS) != 0,
                                  o->metrics_poll_ns / 1000000, err))
        return false;
    ls_discovery_warn(r->discovery);
    return true;
}

/* --shadow: the candidate's own scheduler (its plugins and luasched section,
 * the same flags), watched and reloaded like the configuration. */
static bool attach_shadow(const run_opts *o, run_state *r, ls_error *err)
{
    if (!o->shadow)
        return true;
    ls_config cfg;
    if (!ls_config_load(&cfg, o->shadow, err)) {
        ls_error why = *err;
        ls_config_free(&cfg);
        return ls_errorf(err, "--shadow %s: %s", o->shadow, why.msg);
    }
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path, .plugin_timeout_ms = o->plugin_timeout_ms};
    ls_sched_source none = {0};
    ls_scheduler *shadow = ls_scheduler_new(&cfg, &so, &none, err);
    if (shadow)
        ls_scheduler_watch(shadow, o->shadow);
    if (!shadow || !ls_scheduler_set_shadow(r->sched, shadow, err)) {
        ls_error why = *err;
        return ls_errorf(err, "--shadow %s: %s", o->shadow, why.msg);
    }
    ls_log_info(0, "Evaluating a shadow configuration", "config", o->shadow);
    return true;
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
    if (r->kc)
        ls_kcluster_stop(r->kc, r->stop_timeout_ms);   /* informers first, then the queued writes */
    if (r->leader)
        ls_leader_stop(r->leader);
    ls_health_server_stop(r->server);
    ls_scheduler_free(r->sched);          /* closes every Lua state */
    ls_kcluster_free(r->kc);
    ls_discovery_free(r->discovery);
    ls_leader_free(r->leader);
    ls_delegated_auth_free(r->auth);
    ls_kclient_free(r->authn_client);
    ls_kclient_free(r->authz_client);
    ls_kclient_free(r->client);
    ls_kclient_free(r->events_client);
    ls_kubeconfig_free(&r->kubeconfig);
    ls_metrics_free(r->metrics);
    free(r->configz);
    free(r->plugin_dirs);
}

static int schedule(const run_opts *o, run_state *r)
{
    ls_error err;
    ls_config cfg;
    if (!load_config(o, &cfg))
        return LS_EXIT_USAGE;
    ls_leader_election_config le = cfg.leader_election;   /* the scheduler takes cfg; strings stay in it */
    bool leader_elect = le.leader_elect;
    ls_log_info(0, "Starting Kubernetes Scheduler", "version", "v" LS_VERSION "-luasched");
    if (ls_log_enabled(2)) {
        cJSON *parsed = cJSON_Parse(r->configz);
        char *compact = parsed ? cJSON_PrintUnformatted(parsed) : NULL;
        ls_log_info(2, "Using component config", "config", compact ? compact : r->configz);
        free(compact);
        cJSON_Delete(parsed);
    }
    if (!connect_client(o, &cfg, r, &err) || !build_scheduler(o, &cfg, r, &err) || !attach_shadow(o, r, &err)) {
        ls_log_error("Error creating the scheduler", "err", err.msg);
        fprintf(stderr, "luasched run: %s\n", err.msg);
        stop_all(r);
        return LS_EXIT_USAGE;
    }
    if (ls_discovery_off_count(r->discovery)) {   /* /configz shows the plugins that run, as upstream with a gate off */
        char *configz = completed_config(o, true, &err);
        if (configz) {
            free(r->configz);
            r->configz = configz;
        }
    }
    atomic_store(&r->health.healthy, true);
    ls_scheduler_watch(r->sched, o->config);
    const ls_config *running = ls_scheduler_config(r->sched);
    /* delayCacheUntilActive: a standby does not fill its cache until it leads. */
    bool delay_cache = leader_elect && running->delay_cache_until_active;
    if (!start_server(o, r, &err) || (delay_cache && !elect(running, r, &err)) ||
        (!r->stop && !ls_kcluster_start(r->kc, &err))) {
        ls_log_error("Error starting the scheduler", "err", err.msg);
        stop_all(r);
        return LS_EXIT_FAILURE;
    }
    ls_log_info(0, "Waiting for caches to sync");
    if (!r->stop && ls_kcluster_wait_synced(r->kc, &r->stop)) {
        atomic_store(&r->health.synced, true);
        ls_log_info(0, "Caches are synced");
    }
    if (!r->stop && leader_elect && !delay_cache && !elect(running, r, &err)) {
        ls_log_error("Error starting leader election", "err", err.msg);
        stop_all(r);
        return LS_EXIT_FAILURE;
    }
    if (!leader_elect)
        atomic_store(&r->health.leader_known, true);
    if (!r->stop) {
        ls_kcluster_attach(r->kc, r->sched);
        ls_run_control ctl = {.stop = &r->stop, .reload = &r->reload, .hold = true, .progress = note_progress,
                              .progress_ud = r};
        ls_scheduler_run_realtime(r->sched, &ctl);
    }
    bool lost = r->lost_lease;
    stop_all(r);
    return lost ? LS_EXIT_FAILURE : LS_EXIT_OK;
}

int ls_cli_run(int argc, char **argv)
{
    run_opts o;
    int rc = parse_run_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_log_setup(o.verbosity, o.log_format, stderr);
    ls_error err;
    if (o.write_config) {
        size_t len = strlen(o.write_config);
        bool json = len > 5 && strcmp(o.write_config + len - 5, ".json") == 0;
        char *text = completed_config(&o, json, &err);
        if (!text) {
            fprintf(stderr, "luasched run: %s\n", err.msg);
            return LS_EXIT_USAGE;
        }
        FILE *f = strcmp(o.write_config, "-") == 0 ? stdout : fopen(o.write_config, "w");
        bool ok = f && fputs(text, f) >= 0;
        if (f && f != stdout)
            ok = fclose(f) == 0 && ok;
        free(text);
        if (!ok) {
            fprintf(stderr, "luasched run: --write-config-to %s: cannot write the file\n", o.write_config);
            return LS_EXIT_FAILURE;
        }
        ls_log_info(0, "Wrote configuration", "file", o.write_config);
        return LS_EXIT_OK;
    }
    static run_state r;
    memset(&r, 0, sizeof r);
    r.stop_timeout_ms = (long)(o.stop_timeout_ns / 1000000);
    r.health.stall_ms = o.stall_seconds * 1000;
    r.opts = &o;
    r.configz = completed_config(&o, true, &err);
    if (!r.configz) {
        fprintf(stderr, "luasched run: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    ls_cli_trap_signals(&r.stop, &r.reload);
    rc = schedule(&o, &r);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}
