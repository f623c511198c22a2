/*
 * serve.c: `luasched simulate --serve ADDR[:PORT] CLUSTER.yaml...`: serves the
 * cluster files over the Kubernetes API (HTTPS, bearer token, a kubeconfig
 * written for clients) without scheduling, until SIGINT/SIGTERM; then prints
 * the binding record and fails if a scheduler bound a pod twice, bound one to
 * a missing node, or tried to bind a pod that was already bound. POST
 * /whatif answers what-if questions over the served state with a scheduler
 * of --config (serve_whatif.c).
 */
#include "cli/cli.h"
#include "cli/serve_whatif.h"
#include "luasched/config.h"
#include "server/tls.h"
#include "sim/apiserver.h"
#include "sim/cluster.h"

#include <errno.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_PORT 6443

typedef struct serve_opts {
    char host[128];
    uint16_t port;
    const char *kubeconfig;
    const char *token;
    const char *cert_file, *key_file;
    uint64_t seed;
    uint32_t history;
    ls_api_faults faults;
    char **clusters;
    int n_clusters;
    const char *users[16];      /* --serve-user TOKEN=NAME[:GROUPS] */
    int n_users;
    const char *audit_log;      /* --audit-log FILE */
    int serve_as;               /* --serve-as v1.MINOR; 0: the current release */
    const char *config;         /* --config: the what-if evaluator's configuration */
    const char *plugin_path;    /* --plugin-path: its plugins */
    const char *plugin_timeout; /* --plugin-timeout MS: their calls' limit (checked by the evaluator) */
} serve_opts;

void ls_cli_serve_usage_flags(FILE *out)
{
    fprintf(out,
            "  --serve ADDR[:PORT]  serve the cluster files over the Kubernetes API (HTTPS) instead of scheduling\n"
            "                       them, until SIGINT/SIGTERM; then print the binding record (default port %d,\n"
            "                       0 = any free port; several CLUSTER files may be given)\n"
            "  --serve-kubeconfig FILE\n"
            "                       where to write the kubeconfig for clients (default luasched-serve.kubeconfig)\n"
            "  --token TOKEN        the bearer token clients must send (default: a random one)\n"
            "  --tls-cert-file FILE, --tls-private-key-file FILE\n"
            "                       serving certificate and key (default: a generated self-signed pair)\n"
            "  --watch-history N    events kept for watches to resume from (default 10000)\n"
            "  --serve-user TOKEN=NAME[:GROUP,...]\n"
            "                       one more user TokenReview knows (repeatable, at most 16); SubjectAccessReview\n"
            "                       allows system:masters everything and system:monitoring `get` on /metrics and\n"
            "                       the health paths\n"
            "  --audit-log FILE     append \"VERB GROUP RESOURCE SUBRESOURCE NAMESPACE NAME\" per resource request\n"
            "  --serve-as VERSION   pretend to be the API server of an older release (v1.28 to v1.37): its\n"
            "                       discovery leaves out the API groups that release did not serve (v1.28 to\n"
            "                       v1.33: no resource.k8s.io/v1), requests for them get 404 and /version\n"
            "                       reports it\n"
            "  --fault KIND=VALUE   with --serve, for tests (repeatable): watch-drop=N ends every watch after N\n"
            "                       events; gone=RATE answers watches with 410 Expired; error=RATE answers 500;\n"
            "                       throttle=RATE[:SECONDS] answers 429 with Retry-After; latency=MS delays every\n"
            "                       resource request; provision=fail|never makes the served PV controller's\n"
            "                       provisioner fail (the claim's selected node is removed) or never answer.\n"
            "                       RATE is 0..1, drawn from --seed\n"
            "  --config FILE, --plugin-path DIRS, --plugin-timeout MS\n"
            "                       with --serve: the configuration and plugins POST /whatif's questions are\n"
            "                       answered with (default: the built-in default profile), tie-breaking seeded\n"
            "                       with --seed as `luasched run --seed` (docs/operations/what-if.md)\n",
            DEFAULT_PORT);
}

static void serve_usage(FILE *out)
{
    fprintf(out, "usage: luasched simulate --serve ADDR[:PORT] CLUSTER.yaml... [flags]\n\nflags:\n");
    ls_cli_serve_usage_flags(out);
    fprintf(out, "  --seed N             seed of the fault draws and of /whatif's tie-breaking (default 0)\n"
                 "  -h, --help           this help\n");
}

/* "127.0.0.1:8443", "127.0.0.1", "[::1]:0", ":0" (loopback). */
static bool parse_addr(const char *s, serve_opts *o)
{
    const char *port = NULL;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close)
            return false;
        snprintf(o->host, sizeof o->host, "%.*s", (int)(close - s - 1), s + 1);
        port = close[1] == ':' ? close + 2 : close[1] ? "" : NULL;
    } else {
        const char *colon = strrchr(s, ':');
        if (colon && strchr(s, ':') != colon)
            colon = NULL;   /* a bare IPv6 address */
        snprintf(o->host, sizeof o->host, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
        port = colon ? colon + 1 : NULL;
    }
    if (!*o->host)
        snprintf(o->host, sizeof o->host, "127.0.0.1");
    o->port = DEFAULT_PORT;
    if (port) {
        char *end;
        unsigned long p = strtoul(port, &end, 10);
        if (!*port || *end || p > 65535)
            return false;
        o->port = (uint16_t)p;
    }
    return true;
}

static int usage_error(const char *fmt_arg_flag, const char *value, const char *expected)
{
    fprintf(stderr, "luasched simulate: %s: expected %s, got \"%s\"\n", fmt_arg_flag, expected, value);
    return LS_EXIT_USAGE;
}

static int parse_serve_opts(int argc, char **argv, serve_opts *o)
{
    static const struct option longopts[] = {
        {"serve", required_argument, NULL, 'S'},          {"serve-kubeconfig", required_argument, NULL, 'k'},
        {"token", required_argument, NULL, 'T'},          {"tls-cert-file", required_argument, NULL, 'C'},
        {"tls-private-key-file", required_argument, NULL, 'K'}, {"fault", required_argument, NULL, 'F'},
        {"seed", required_argument, NULL, 's'},           {"watch-history", required_argument, NULL, 'W'},
        {"serve-user", required_argument, NULL, 'U'},    {"audit-log", required_argument, NULL, 'A'},
        {"serve-as", required_argument, NULL, 'V'},      {"config", required_argument, NULL, 'c'},
        {"plugin-path", required_argument, NULL, 'p'},   {"plugin-timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},                 {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->kubeconfig = "luasched-serve.kubeconfig";
    optind = 1;
    int ch;
    ls_error err;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'S':
            if (!parse_addr(optarg, o))
                return usage_error("--serve", optarg, "ADDR[:PORT] with a numeric address, e.g. 127.0.0.1:0");
            break;
        case 'k': o->kubeconfig = optarg; break;
        case 'U':
            if (o->n_users == (int)(sizeof o->users / sizeof *o->users))
                return usage_error("--serve-user", optarg, "at most 16 users");
            o->users[o->n_users++] = optarg;
            break;
        case 'A': o->audit_log = optarg; break;
        case 'c': o->config = optarg; break;
        case 'p': o->plugin_path = optarg; break;
        case 't':
            strtoull(optarg, &end, 10);
            if (!*optarg || *end || *optarg == '-')
                return usage_error("--plugin-timeout", optarg, "a number of milliseconds");
            o->plugin_timeout = optarg;
            break;
        case 'V':
            if (!ls_api_parse_release(optarg, &o->serve_as))
                return usage_error("--serve-as", optarg, "a release from v1.28 to v1.37, e.g. v1.28");
            break;
        case 'T': o->token = optarg; break;
        case 'C': o->cert_file = optarg; break;
        case 'K': o->key_file = optarg; break;
        case 'F':
            if (!ls_api_parse_fault(&o->faults, optarg, &err)) {
                fprintf(stderr, "luasched simulate: %s\n", err.msg);
                return LS_EXIT_USAGE;
            }
            break;
        case 's':
            o->seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end)
                return usage_error("--seed", optarg, "a non-negative integer");
            break;
        case 'W':
            o->history = (uint32_t)strtoul(optarg, &end, 10);
            if (!*optarg || *end || o->history == 0)
                return usage_error("--watch-history", optarg, "a number of events > 0");
            break;
        case 'h': serve_usage(stdout); return -1;
        default: serve_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (!o->cert_file != !o->key_file) {
        fprintf(stderr, "luasched simulate: --tls-cert-file and --tls-private-key-file go together\n");
        return LS_EXIT_USAGE;
    }
    o->clusters = argv + optind;
    o->n_clusters = argc - optind;
    if (o->n_clusters < 1) {
        fprintf(stderr, "luasched simulate: --serve: expected at least one CLUSTER file\n");
        serve_usage(stderr);
        return LS_EXIT_USAGE;
    }
    return 0;
}

/* The same checks (and file:line errors) as a scheduling run, then the store. */
static bool load_clusters(const serve_opts *o, ls_api *api)
{
    ls_error err;
    ls_cluster *c = ls_cluster_new();
    bool ok = true;
    for (int i = 0; i < o->n_clusters && ok; i++)
        ok = ls_cluster_load_file(c, o->clusters[i], &err);
    ok = ok && ls_cluster_admit(c, &err);
    ls_cluster_free(c);
    for (int i = 0; i < o->n_clusters && ok; i++)
        ok = ls_api_load_file(api, o->clusters[i], &err);
    if (!ok)
        fprintf(stderr, "luasched simulate: %s\n", err.msg);
    return ok;
}

/* The what-if evaluator's configuration read once here, so that a bad one is
 * an error at start (its plugins are built, and run, by each evaluator). */
static bool config_loads(const serve_opts *o)
{
    if (!o->config)
        return true;
    ls_config cfg;
    ls_error err;
    memset(&cfg, 0, sizeof cfg);
    bool ok = ls_config_load(&cfg, o->config, &err);
    if (!ok)
        fprintf(stderr, "luasched simulate: --config: %s\n", err.msg);
    ls_config_free(&cfg);
    return ok;
}

static bool is_wildcard(const char *host)
{
    return strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
}

/* The address clients use: a wildcard bind is reached on loopback. */
static void client_url(const serve_opts *o, uint16_t port, char *buf, size_t len)
{
    const char *h = strcmp(o->host, "0.0.0.0") == 0 ? "127.0.0.1" : strcmp(o->host, "::") == 0 ? "::1" : o->host;
    bool v6 = strchr(h, ':') != NULL;
    snprintf(buf, len, "https://%s%s%s:%u", v6 ? "[" : "", h, v6 ? "]" : "", (unsigned)port);
}

static bool tls_material(const serve_opts *o, char **cert, char **key, ls_error *err)
{
    if (o->cert_file) {
        *cert = ls_tls_read_pem(o->cert_file, err);
        *key = *cert ? ls_tls_read_pem(o->key_file, err) : NULL;
        return *key != NULL;
    }
    const char *hosts[4] = {"127.0.0.1", "::1", "localhost", o->host};
    size_t n = is_wildcard(o->host) || strcmp(o->host, "127.0.0.1") == 0 || strcmp(o->host, "::1") == 0 ? 3 : 4;
    return ls_tls_self_signed(hosts, n, cert, key, err);
}

static char *random_token(void)
{
    unsigned char raw[24];
    if (RAND_bytes(raw, sizeof raw) != 1)
        for (size_t i = 0; i < sizeof raw; i++)
            raw[i] = (unsigned char)(rand() ^ (int)time(NULL));
    char *tok = ls_xmalloc(sizeof raw * 2 + 1);
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(tok + 2 * i, 3, "%02x", raw[i]);
    return tok;
}

static bool write_kubeconfig(const char *path, const char *url, const char *cert, const char *token, ls_error *err)
{
    size_t clen = strlen(cert);
    char *ca = ls_xmalloc(4 * ((clen + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)ca, (const unsigned char *)cert, (int)clen);
    size_t len = strlen(ca) + strlen(url) + strlen(token) + 512;
    char *text = ls_xmalloc(len);
    snprintf(text, len,
             "apiVersion: v1\n"
             "kind: Config\n"
             "clusters:\n"
             "- name: luasched\n"
             "  cluster:\n"
             "    server: %s\n"
             "    certificate-authority-data: %s\n"
             "users:\n"
             "- name: luasched\n"
             "  user:\n"
             "    token: %s\n"
             "contexts:\n"
             "- name: luasched\n"
             "  context:\n"
             "    cluster: luasched\n"
             "    user: luasched\n"
             "current-context: luasched\n",
             url, ca, token);
    bool ok = ls_tls_write_pem(path, text, 0600, err);
    free(text);
    free(ca);
    return ok;
}

static void wait_for_signal(void)
{
    static volatile sig_atomic_t stop, reload;
    ls_cli_trap_signals(&stop, &reload);
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000000L};
    while (!stop)
        nanosleep(&ts, NULL);
}

static int serve(const serve_opts *o, ls_api *api, const char *cert, const char *key, const char *token)
{
    ls_error err;
    FILE *audit = NULL;
    if (o->audit_log && !(audit = fopen(o->audit_log, "a"))) {
        fprintf(stderr, "luasched simulate: --audit-log: cannot open %s: %s\n", o->audit_log, strerror(errno));
        return LS_EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);   /* a client gone mid-response, an evaluator ended mid-question: their errors */
    ls_serve_whatif *whatif = ls_serve_whatif_new(
        api, &(ls_serve_whatif_opts){.config = o->config, .plugin_path = o->plugin_path,
                                     .plugin_timeout = o->plugin_timeout, .seed = o->seed});
    ls_api_serve_opts so = {.host = o->host, .port = o->port, .cert_pem = cert, .key_pem = key, .token = token,
                            .users = o->users, .n_users = o->n_users, .audit = audit,
                            .whatif = ls_serve_whatif_ask, .whatif_ud = whatif};
    ls_api_server *srv = ls_api_serve(api, &so, &err);
    if (!srv) {
        fprintf(stderr, "luasched simulate: %s\n", err.msg);
        ls_serve_whatif_free(whatif);
        if (audit)
            fclose(audit);
        return LS_EXIT_FAILURE;
    }
    char url[256];
    client_url(o, ls_api_server_port(srv), url, sizeof url);
    if (!write_kubeconfig(o->kubeconfig, url, cert, token, &err)) {
        fprintf(stderr, "luasched simulate: --serve-kubeconfig: %s\n", err.msg);
        ls_api_server_stop(srv);
        ls_serve_whatif_free(whatif);
        if (audit)
            fclose(audit);
        return LS_EXIT_FAILURE;
    }
    fprintf(stderr, "serving the cluster at %s (kubeconfig: %s)\n", url, o->kubeconfig);
    wait_for_signal();
    if (ls_serve_whatif_stop(whatif))   /* the questions being answered end at once */
        nanosleep(&(struct timespec){.tv_nsec = 200 * 1000000L}, NULL);   /* their 503s leave first */
    ls_api_server_stop(srv);        /* joins its handlers: no question is being answered after it */
    ls_serve_whatif_free(whatif);
    if (audit)
        fclose(audit);
    bool ok = ls_api_print_record(api, stdout);
    fflush(stdout);
    if (!ok)
        fprintf(stderr, "luasched simulate: invariant violated: a pod was bound twice, to a missing node, or a "
                        "binding was attempted on a pod that was already bound (see the record)\n");
    return ok ? LS_EXIT_OK : LS_EXIT_FAILURE;
}

int ls_cli_serve(int argc, char **argv)
{
    serve_opts o;
    int rc = parse_serve_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_api *api = ls_api_new(o.history, o.seed);
    ls_api_set_faults(api, &o.faults);
    ls_api_set_serve_as(api, o.serve_as);
    char *cert = NULL, *key = NULL, *token = o.token ? ls_xstrdup(o.token) : random_token();
    ls_error err;
    if (!load_clusters(&o, api) || !config_loads(&o)) {
        rc = LS_EXIT_USAGE;
    } else if (!tls_material(&o, &cert, &key, &err)) {
        fprintf(stderr, "luasched simulate: %s\n", err.msg);
        rc = LS_EXIT_USAGE;
    } else {
        rc = serve(&o, api, cert, key, token);
    }
    free(cert);
    free(key);
    free(token);
    ls_api_free(api);
    ls_intern_reset();
    return rc;
}
