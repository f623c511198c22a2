/*
 * run_internal.h: `luasched run`'s two processes (docs/plugins/worker.md):
 * run.c parses the flags and is the supervisor (informers, writes, leader
 * election, HTTP server, credentials); run_worker.c is the worker (the
 * scheduler and every plugin), started by the supervisor with --worker.
 */
#ifndef LS_CLI_RUN_INTERNAL_H
#define LS_CLI_RUN_INTERNAL_H

#include "client/discovery.h"
#include "client/kubeconfig.h"
#include "client/leader.h"
#include "client/relay.h"
#include "config/config_internal.h"
#include "luasched/log.h"
#include "scheduler/extender.h"
#include "server/health.h"
#include "worker/channel.h"
#include "worker/supervise.h"

#include <signal.h>

#include <stdbool.h>
#include <stdint.h>

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
    bool whatif_in_loop;              /* --whatif-evaluator=loop: questions answered on the scheduling thread */
    int64_t whatif_max_wait_ns;       /* --whatif-max-wait: a question's longest wait for its fork while busy */
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
    /* the worker process (docs/plugins/worker.md) */
    bool worker;                      /* --worker (internal): this process is the worker */
    const char *served_apis;          /* --served-apis (internal): the supervisor's discovery, for the worker */
    uint64_t worker_memory;           /* --worker-memory-limit: bytes of address space */
    int64_t worker_grace_ns;          /* --worker-hang-grace */
    int64_t worker_backoff_ns;        /* --worker-kill-backoff */
} run_opts;

/* The supervisor's state. */
typedef struct run_state {
    volatile sig_atomic_t stop, reload;
    volatile sig_atomic_t lost_lease;
    ls_health_state health;
    ls_kclient *client, *events_client;   /* events have their own client, as kube-scheduler's */
    ls_relay *relay;
    struct ls_whatif_relay *whatif;       /* /whatif's questions on their way to the worker */
    ls_discovery *discovery;              /* what the server serves (client/api_needs.h) */
    ls_extenders *extenders;              /* the configuration's, called for the worker */
    ls_child worker;
    ls_chan_reader worker_rd;             /* the worker's channel, read ahead (reset per worker) */
    uint64_t watched_ms;                  /* the worker was last watched (run_supervise.c) */
    long stop_timeout_ms;
    ls_leader *leader;
    ls_health_server *server;
    ls_kclient *authn_client, *authz_client;   /* from --authentication/--authorization-kubeconfig */
    ls_delegated_auth *auth;
    ls_kubeconfig kubeconfig;
    char *configz;
    char **worker_argv;
    unsigned restarts;
} run_state;

/* run_worker_ends.c: counts a worker the supervisor replaced (the plugin in
 * whose call it ended, "" when none; how: supervise.c's words), and adds
 * luasched_worker_restarts_total to a /metrics text. */
void ls_run_count_worker_end(const char *plugin, const char *how);
void ls_run_worker_ends_text(ls_buf *b);

/* Starts a worker (luasched run --worker) on r->worker. */
bool ls_run_spawn_worker(run_state *r, ls_error *err);
/* Waits for the first worker's hello; false (with the exit status in *rc)
 * when it ended first, having said why. */
bool ls_run_await_hello(run_state *r, int *rc);
/* Until r->stop: the worker's messages, its page, its replacement; then
 * the worker's stop. */
void ls_run_supervise(const run_opts *o, run_state *r);

/* Defaults, the configuration file, the flags that still apply, validation. */
bool ls_run_load_config(const run_opts *o, ls_config *cfg);
/* The completed configuration as text (plugins loaded: only in the worker);
 * with json, wrapped as /configz serves it. */
char *ls_run_completed_config(const run_opts *o, bool json, ls_error *err);
/* The worker's life: confined, then the scheduler fed by the channel on fd 3. */
int ls_run_worker(const run_opts *o);
/* The worker's command line: what it needs of o (never the kubeconfig) and
 * what the server serves (ls_discovery_served_list). NULL-terminated, malloc'd. */
char **ls_run_worker_argv(const run_opts *o, const char *served_apis);
void ls_run_worker_argv_free(char **argv);

#endif
