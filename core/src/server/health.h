/*
 * health.h: what `luasched run` serves on --bind-address:--secure-port, as
 * kube-scheduler does: /healthz, /livez, /readyz, /metrics (Prometheus text),
 * /metrics/slis (the health checks' SLIs: kubernetes_healthcheck and
 * kubernetes_healthchecks_total, per check and endpoint) and /configz (the completed configuration as JSON). HTTPS with the given
 * certificate, or a self-signed one made at start. Every request is first
 * authenticated and authorized (delegated_auth.h) when an authorizer is given.
 */
#ifndef LS_SERVER_HEALTH_H
#define LS_SERVER_HEALTH_H

#include "luasched/base.h"
#include "server/delegated_auth.h"
#include "server/metrics.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ls_health_server ls_health_server;

typedef struct ls_health_state {
    atomic_bool synced;         /* every informer delivered its first list */
    atomic_bool leader_known;   /* leader election off, or the leader's identity observed */
    atomic_bool healthy;        /* false once leadership was lost or the loop stopped */
    /* Liveness of the scheduling loop: the loop stores the time (monotonic
     * ms) of its last pass and the pods waiting then; /livez and /healthz fail
     * when pods wait and the loop made no pass for stall_ms (0: no check). */
    atomic_uint_fast64_t progress_ms;
    atomic_uint_fast64_t waiting;
    uint64_t stall_ms;
} ls_health_state;

/* Whether the loop is stalled: pods wait and no pass for stall_ms. */
bool ls_health_stalled(ls_health_state *st, uint64_t now_ms);

typedef struct ls_health_options {
    const char *host;           /* bind address; "0.0.0.0" as upstream's default */
    uint16_t port;              /* 0: ephemeral */
    const char *cert_pem, *key_pem;   /* NULL: self-signed for localhost and the host */
    const char *client_ca_pem;        /* --client-ca-file: client certificates are asked for and checked */
    ls_metrics *metrics;
    /* Instead of metrics: the text of /metrics made by a call (malloc'd; the
     * supervisor asks its worker), on the server's thread. */
    char *(*metrics_text)(void *ud);
    void *metrics_ud;
    /* POST /whatif (docs/operations/what-if.md): the answer (JSON, malloc'd)
     * to the question in the body, and its HTTP status; NULL: not served. */
    char *(*whatif)(void *ud, const char *question, int *status);
    void *whatif_ud;
    const char *configz_json;   /* {"componentconfig": {...}} body; copied */
    ls_health_state *state;
    ls_delegated_auth *auth;    /* who may call what (not owned); NULL: every path is open */
} ls_health_options;

ls_health_server *ls_health_server_start(const ls_health_options *o, ls_error *err);
uint16_t ls_health_server_port(const ls_health_server *h);
void ls_health_server_stop(ls_health_server *h);
/* Replaces the /configz body (copied), e.g. after a successful hot reload;
 * safe while requests are served. */
void ls_health_server_set_configz(ls_health_server *h, const char *configz_json);

#endif
