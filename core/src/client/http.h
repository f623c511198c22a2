/*
 * http.h: the Kubernetes API HTTP client (internal), on libcurl.
 *
 * One ls_kclient serves every thread of the process: each request borrows a
 * pooled curl handle (which keeps its connections alive for the next
 * request), waits for a token of the client-wide rate limiter (qps/burst, as
 * client-go's), and retries connection errors, 5xx and 429 with jittered
 * exponential backoff (429/5xx honour Retry-After) up to max_attempts.
 * TLS is verified unless the kubeconfig says insecure-skip-tls-verify; the CA
 * and the client certificate come from memory. Every request has a connect
 * timeout and a total timeout; a streaming request (a watch) has no total
 * timeout and relies on the server's timeoutSeconds plus a low-speed limit.
 *
 * Cancellation: ls_kclient_cancel makes every request in progress on the
 * client (and every later one) fail within about 100 ms; a request can also
 * carry its own cancel flag (an informer's stop), checked as often.
 */
#ifndef LS_CLIENT_HTTP_H
#define LS_CLIENT_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "client/kubeconfig.h"
#include "luasched/base.h"

typedef struct ls_kclient ls_kclient;

typedef struct ls_kclient_options {
    double qps;               /* requests per second; 0: 50 (kube-scheduler's default); < 0: unlimited */
    int burst;                /* bucket size; 0: 100 */
    const char *user_agent;   /* NULL: "luasched/0.1.0" */
    long connect_timeout_ms;  /* 0: 10000 */
    long timeout_ms;          /* total time of one attempt of a non-streaming request; 0: 60000 */
    int max_attempts;         /* 0: 5; 1 disables retries */
    long backoff_initial_ms;  /* first retry delay before jitter; 0: 250 */
    long backoff_max_ms;      /* 0: 10000 (also caps Retry-After) */
    /* NULL: TLS checks the server's host. Else TLS (SNI and the certificate)
     * uses this name while the connection still goes to the server's host and
     * port, and the Host header stays theirs (Go's tls.Config.ServerName). */
    const char *tls_server_name;
    /* A client of the same kubeconfig whose exec credential (and its cache)
     * this one shares, as client-go's clients of one kubeconfig do. */
    const ls_kclient *share_credentials_with;
} ls_kclient_options;

typedef struct ls_kresponse {
    long status;        /* HTTP status of the last attempt; 0 if none was received */
    char *body;         /* NUL-terminated (free with ls_kresponse_free); for a 2xx stream: NULL */
    size_t len;
    int retry_after;    /* Retry-After in seconds, -1 when absent */
    int attempts;       /* attempts made (1 = no retry) */
    bool cancelled;     /* stopped by ls_kclient_cancel or the request's cancel flag */
    bool stopped;       /* a stream callback returned false */
    bool credentials_failed;          /* the exec credential plugin failed: not retried */
    uint64_t credentials_generation;  /* which run of the plugin the request used (0: none) */
} ls_kresponse;

/* A stream callback gets body bytes of a 2xx answer as they arrive; false
 * ends the request (resp->stopped). Other statuses are collected into
 * resp->body instead. */
typedef bool (*ls_kclient_data_fn)(void *ud, const char *data, size_t len);

typedef struct ls_krequest {
    const char *method;         /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *path;           /* "/api/v1/pods?limit=500": appended to the server URL */
    const char *content_type;   /* of body; NULL when there is none */
    const char *body;
    size_t len;
    const atomic_int *cancel;   /* optional: non-zero cancels this request */
    long timeout_ms;            /* 0: the client's; ignored for streams */
    int max_attempts;           /* 0: the client's */
    ls_kclient_data_fn on_data; /* set for a stream (never retried) */
    void *ud;
    long low_speed_time_s;      /* streams: abort after this long below 1 byte/s; 0: none */
} ls_krequest;

/* NULL (err set) on a bad option or a TLS blob libcurl refuses. cfg is copied. */
ls_kclient *ls_kclient_new(const ls_kubeconfig *cfg, const ls_kclient_options *opt, ls_error *err);
/* Only once no request is in progress (cancel and join the users first). */
void ls_kclient_free(ls_kclient *c);

/* True when an HTTP answer came back (any status: look at resp->status);
 * false when none did after the retries, or on cancel (err says why, resp
 * still filled in). resp must be freed with ls_kresponse_free either way. */
bool ls_kclient_do(ls_kclient *c, const ls_krequest *req, ls_kresponse *resp, ls_error *err);
/* Shorthand for a non-streaming request. */
bool ls_kclient_request(ls_kclient *c, const char *method, const char *path, const char *content_type,
                        const char *body, size_t len, ls_kresponse *resp, ls_error *err);
/* Shorthand for a stream (a watch): GET path, 2xx body bytes to fn as they
 * arrive, no retry, no total timeout; low_speed_time_s as in ls_krequest. */
bool ls_kclient_stream(ls_kclient *c, const char *path, const atomic_int *cancel, long low_speed_time_s,
                       ls_kclient_data_fn fn, void *ud, ls_kresponse *resp, ls_error *err);
void ls_kresponse_free(ls_kresponse *resp);

/* Cancels everything in progress and fails later requests at once. */
void ls_kclient_cancel(ls_kclient *c);
bool ls_kclient_cancelled(const ls_kclient *c);

typedef struct ls_kclient_stats {
    unsigned long requests;      /* attempts sent */
    unsigned long retries;
    unsigned long throttled;     /* requests that waited for the rate limiter */
    unsigned long transport_errors;
    unsigned long connects;      /* new connections opened (the rest reused a kept-alive one) */
} ls_kclient_stats;
void ls_kclient_get_stats(ls_kclient *c, ls_kclient_stats *out);
/* The kubeconfig the client was made from (its namespace, server). */
const ls_kubeconfig *ls_kclient_config(const ls_kclient *c);

#endif
