/*
 * health.c: /healthz, /livez, /readyz, /metrics and /configz of
 * `luasched run` (see health.h).
 */
#include "server/health.h"

#include "server/http.h"
#include "server/tls.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>

struct ls_health_server {
    ls_http_server *http;
    ls_metrics *metrics;
    char *(*metrics_text)(void *ud);
    void *metrics_ud;
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

static void handle(void *ud, const ls_http_request *rq, ls_http_response *rs)
{
    ls_health_server *h = ud;
    ls_health_state *st = h->state;
    if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
        respond_text(rs, 405, "method not allowed\n");
        return;
    }
    if (h->auth && !ls_delegated_auth_check(h->auth, rq, rs))
        return;
    if (strcmp(rq->path, "/healthz") == 0 || strcmp(rq->path, "/livez") == 0) {
        bool stalled = ls_health_stalled(st, monotonic_ms());
        bool ok = atomic_load(&st->healthy) && !stalled;
        respond_checks(rs, rq, rq->path + 1, ok, stalled ? "scheduling-progress" : "leaderElection");
    } else if (strcmp(rq->path, "/readyz") == 0) {
        bool synced = atomic_load(&st->synced), leader = atomic_load(&st->leader_known);
        respond_checks(rs, rq, "readyz", synced && leader && atomic_load(&st->healthy),
                       synced ? "leaderElection" : "sched-handler-sync");
    } else if (strcmp(rq->path, "/metrics") == 0 && (h->metrics || h->metrics_text)) {
        char *text = h->metrics_text ? h->metrics_text(h->metrics_ud) : ls_metrics_render(h->metrics);
        ls_http_respond_take(rs, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
    } else if (strcmp(rq->path, "/configz") == 0 && h->configz) {
        ls_http_respond(rs, 200, "application/json", h->configz, strlen(h->configz));
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
    h->state = o->state;
    h->auth = o->auth;
    h->configz = o->configz_json ? ls_xstrdup(o->configz_json) : NULL;
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
    free(h->configz);
    free(h);
}
