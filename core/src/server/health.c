/*
 * health.c: /healthz, /livez, /readyz, /metrics, /metrics/slis and /configz
 * of `luasched run` (see health.h).
 */
#include "server/health.h"

#include "server/http.h"
#include "server/tls.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

struct ls_health_server {
    ls_http_server *http;
    ls_metrics *metrics;
    pthread_mutex_t configz_lock;   /* a reload replaces configz while requests read it */
    /* /metrics/slis: component-base's health-check SLIs, one series per
     * check and endpoint, updated each time an endpoint runs its checks. */
    ls_metrics *slis;
    ls_metric_family *sli_result, *sli_total;
    char *(*metrics_text)(void *ud);
    void *metrics_ud;
    char *(*whatif)(void *ud, const char *question, int *status);
    void *whatif_ud;
    char *configz;
    ls_health_state *state;
    ls_delegated_auth *auth;
};

static void respond_text(ls_http_response *rs, int status, const char *text)
{
    ls_http_respond(rs, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* Upstream's verbose form lists each check: "[+]ping ok ... healthz check passed". */
static void respond_checks(ls_http_response *rs, const ls_http_request *rq, const char *what, bool ready,
                           const char *check)
{
    bool verbose = ls_http_query(rq, "verbose") != NULL || strstr(rq->query, "verbose") != NULL;
    if (!verbose) {
        respond_text(rs, ready ? 200 : 500, ready ? "ok" : "[-]not ready\n");
        return;
    }
    ls_buf b = {0};
    ls_buf_addf(&b, "[+]ping ok\n[%c]%s %s\n", ready ? '+' : '-', check, ready ? "ok" : "failed");
    ls_buf_addf(&b, "%s check %s\n", what, ready ? "passed" : "failed");
    ls_http_respond_take(rs, ready ? 200 : 500, "text/plain; charset=utf-8", b.data, b.len);
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool ls_health_stalled(ls_health_state *st, uint64_t now_ms)
{
    uint64_t last = atomic_load(&st->progress_ms);
    return st->stall_ms && last && atomic_load(&st->waiting) > 0 && now_ms > last + st->stall_ms;
}

/* The /configz body, copied under the lock; NULL when there is none. */
static char *configz_copy(ls_health_server *h)
{
    pthread_mutex_lock(&h->configz_lock);
    char *body = h->configz ? ls_xstrdup(h->configz) : NULL;
    pthread_mutex_unlock(&h->configz_lock);
    return body;
}

void ls_health_server_set_configz(ls_health_server *h, const char *configz_json)
{
    char *fresh = configz_json ? ls_xstrdup(configz_json) : NULL;
    pthread_mutex_lock(&h->configz_lock);
    char *old = h->configz;
    h->configz = fresh;
    pthread_mutex_unlock(&h->configz_lock);
    free(old);
}

/* ---- SLIs (component-base/metrics/prometheus/slis) */

static void slis_register(ls_health_server *h)
{
    static const char *const name_type[] = {"name", "type", NULL};
    static const char *const name_type_status[] = {"name", "type", "status", NULL};
    h->slis = ls_metrics_new();
    h->sli_result = ls_metrics_family(h->slis, "kubernetes_healthcheck",
                                      "[STABLE] This metric records the result of a single healthcheck.",
                                      LS_METRIC_GAUGE, name_type, NULL, 0);
    h->sli_total = ls_metrics_family(h->slis, "kubernetes_healthchecks_total",
                                     "[STABLE] This metric records the results of all healthcheck.",
                                     LS_METRIC_COUNTER, name_type_status, NULL, 0);
}

/* ObserveHealthcheck: the check's last result (1 success, 0 error) and its count. */
static void sli_observe(ls_health_server *h, const char *check, const char *endpoint, bool ok)
{
    const char *gauge[] = {check, endpoint};
    const char *counter[] = {check, endpoint, ok ? "success" : "error"};
    ls_metrics_set(h->sli_result, gauge, ok ? 1 : 0);
    ls_metrics_add(h->sli_total, counter, 1);
}

/* The checks each endpoint runs: ping always passes; leaderElection fails
 * once leadership was lost (and, for readyz, until the leader is known);
 * sched-handler-sync (readyz) until every informer synced; luasched's
 * scheduling-progress (healthz, livez) while the loop is stalled. */
static void sli_record(ls_health_server *h, const char *endpoint, bool stalled)
{
    ls_health_state *st = h->state;
    bool healthy = atomic_load(&st->healthy);
    sli_observe(h, "ping", endpoint, true);
    if (strcmp(endpoint, "readyz") == 0) {
        sli_observe(h, "leaderElection", endpoint, healthy && atomic_load(&st->leader_known));
        sli_observe(h, "sched-handler-sync", endpoint, atomic_load(&st->synced));
    } else {
        sli_observe(h, "leaderElection", endpoint, healthy);
        sli_observe(h, "scheduling-progress", endpoint, !stalled);
    }
}

static void handle(void *ud, const ls_http_request *rq, ls_http_response *rs)
{
    ls_health_server *h = ud;
    ls_health_state *st = h->state;
    char *body;
    bool whatif = strcmp(rq->path, "/whatif") == 0 && h->whatif;
    if (whatif && strcmp(rq->method, "POST") != 0) {
        ls_http_add_header(rs, "Allow", "POST");
        respond_text(rs, 405, "method not allowed: /whatif takes a POST with the question (JSON)\n");
        return;
    }
    if (!whatif && strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
        respond_text(rs, 405, "method not allowed\n");
        return;
    }
    if (h->auth && !ls_delegated_auth_check(h->auth, rq, rs))
        return;
    if (whatif) {
        int status = 500;
        char *answer = h->whatif(h->whatif_ud, rq->body, &status);
        ls_http_respond_take(rs, status, "application/json", answer, strlen(answer));
    } else if (strcmp(rq->path, "/healthz") == 0 || strcmp(rq->path, "/livez") == 0) {
        bool stalled = ls_health_stalled(st, monotonic_ms());
        bool ok = atomic_load(&st->healthy) && !stalled;
        sli_record(h, rq->path + 1, stalled);
        respond_checks(rs, rq, rq->path + 1, ok, stalled ? "scheduling-progress" : "leaderElection");
    } else if (strcmp(rq->path, "/readyz") == 0) {
        bool synced = atomic_load(&st->synced), leader = atomic_load(&st->leader_known);
        sli_record(h, "readyz", false);
        respond_checks(rs, rq, "readyz", synced && leader && atomic_load(&st->healthy),
                       synced ? "leaderElection" : "sched-handler-sync");
    } else if (strcmp(rq->path, "/metrics") == 0 && (h->metrics || h->metrics_text)) {
        char *text = h->metrics_text ? h->metrics_text(h->metrics_ud) : ls_metrics_render(h->metrics);
        ls_http_respond_take(rs, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
    } else if (strcmp(rq->path, "/metrics/slis") == 0) {
        char *text = ls_metrics_render(h->slis);
        ls_http_respond_take(rs, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
    } else if (strcmp(rq->path, "/configz") == 0 && (body = configz_copy(h))) {
        ls_http_respond_take(rs, 200, "application/json", body, strlen(body));
    } else {
        respond_text(rs, 404, "404 page not found\n");
    }
}

ls_health_server *ls_health_server_start(const ls_health_options *o, ls_error *err)
{
    ls_health_server *h = ls_xcalloc(1, sizeof *h);
    h->metrics = o->metrics;
    h->metrics_text = o->metrics_text;
    h->metrics_ud = o->metrics_ud;
    h->whatif = o->whatif;
    h->whatif_ud = o->whatif_ud;
    h->state = o->state;
    h->auth = o->auth;
    pthread_mutex_init(&h->configz_lock, NULL);
    h->configz = o->configz_json ? ls_xstrdup(o->configz_json) : NULL;
    slis_register(h);
    char *cert = NULL, *key = NULL;
    if (!o->cert_pem) {
        const char *hosts[] = {"localhost", "127.0.0.1", o->host ? o->host : "0.0.0.0"};
        if (!ls_tls_self_signed(hosts, 3, &cert, &key, err)) {
            ls_health_server_stop(h);
            return NULL;
        }
    }
    ls_http_server_opts ho = {.host = o->host, .port = o->port, .tls_cert_pem = o->cert_pem ? o->cert_pem : cert,
                              .tls_key_pem = o->key_pem ? o->key_pem : key, .client_ca_pem = o->client_ca_pem,
                              .handler = handle, .handler_ud = h};
    h->http = ls_http_server_start(&ho, err);
    free(cert);
    free(key);
    if (!h->http) {
        ls_health_server_stop(h);
        return NULL;
    }
    return h;
}

uint16_t ls_health_server_port(const ls_health_server *h)
{
    return ls_http_server_port(h->http);
}

void ls_health_server_stop(ls_health_server *h)
{
    if (!h)
        return;
    ls_http_server_stop(h->http);
    ls_metrics_free(h->slis);
    free(h->configz);
    pthread_mutex_destroy(&h->configz_lock);
    free(h);
}
