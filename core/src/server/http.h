/*
 * http.h: a small HTTP(S) server over libmicrohttpd, shared by everything
 * luasched serves: the simulated cluster's Kubernetes API (sim/apiserver.c)
 * and the health/metrics endpoints of `luasched run`.
 *
 * Model: one thread per connection (MHD_USE_THREAD_PER_CONNECTION with an
 * internal polling thread), so a handler and a streaming producer may block
 * (a watch waits on a condition variable) without holding up other clients.
 *
 * A handler is called once per request, after the whole body has arrived
 * (bodies over max_body bytes are answered 413 without calling it). It fills
 * an ls_http_response: either a complete body, or a producer that is pulled
 * for chunks (chunked transfer encoding) until it says it is done.
 *
 * The process should ignore SIGPIPE while serving (a client that goes away
 * mid-response must not kill it); the library leaves signal dispositions to
 * the program.
 *
 * Example:
 *     static void handle(void *ud, const ls_http_request *rq, ls_http_response *rs) {
 *         if (strcmp(rq->path, "/healthz") == 0)
 *             ls_http_respond(rs, 200, "text/plain", "ok", 2);
 *         else
 *             ls_http_respond(rs, 404, "text/plain", "not found\n", 10);
 *     }
 *     ls_http_server_opts o = {.host = "127.0.0.1", .port = 0, .handler = handle};
 *     ls_http_server *s = ls_http_server_start(&o, &err);
 *     ... ls_http_server_port(s) ...
 *     ls_http_server_stop(s);
 */
#ifndef LS_SERVER_HTTP_H
#define LS_SERVER_HTTP_H

#include "luasched/base.h"

#include <stddef.h>
#include <stdint.h>


/* One request. Strings are NUL-terminated and valid during the handler call
 * only.
 *
 * A request can also be built without a connection (tests, fuzzing: call a
 * handler directly): leave conn_ NULL, set query to the raw query string and
 * headers to the request's headers; ls_http_query and ls_http_header then
 * read those instead of asking libmicrohttpd. */
typedef struct ls_http_request {
    const char *method;        /* "GET", "POST", ... */
    const char *path;          /* decoded path without the query, e.g. "/api/v1/pods" */
    const char *query;         /* raw query string after '?', "" when none */
    const char *body;          /* NUL-terminated copy of the body ("" when none) */
    size_t body_len;
    const char *peer;          /* client address, "127.0.0.1:54321" */
    void *conn_;               /* internal: the MHD connection; NULL for a request built by hand */
    /* Only when conn_ is NULL: name, value, name, value, ..., NULL (NULL itself
     * for no headers). Ignored for served requests. */
    const char *const *headers;
} ls_http_request;

/* A query parameter's decoded value (the first one of that name), NULL when
 * absent, and NULL for a key without "=value" (as libmicrohttpd does).
 * Without a connection, r->query is parsed here ('&'-separated, "%XX" and
 * '+' decoded); the value then lives in a per-thread buffer that stays valid
 * until this thread looks up a query of a request with a different query
 * string (so: during the handler call). */
const char *ls_http_query(const ls_http_request *r, const char *key);
/* A request header's value (name matched case-insensitively), NULL when
 * absent. Without a connection, r->headers is searched. */
const char *ls_http_header(const ls_http_request *r, const char *name);

/* Pulled repeatedly from the connection's thread: append the next chunk(s) to
 * out (may block while waiting for data) and return true, or return false when
 * the stream is over (what was appended is still sent). `stopping` becomes
 * true when the server is being stopped: the producer must then return false
 * promptly (blocking waits should be short, or woken by on_stop). */
typedef bool (*ls_http_producer)(void *ud, ls_buf *out, const volatile bool *stopping);

#define LS_HTTP_MAX_HEADERS 8

typedef struct ls_http_response {
    int status;                    /* HTTP status; 0 means the handler did not answer (500) */
    char *content_type;            /* owned copies, set by the helpers below */
    char *body;
    size_t body_len;
    char *headers[LS_HTTP_MAX_HEADERS][2];
    int n_headers;
    ls_http_producer producer;     /* set: a streaming response */
    void *producer_ud;
    void (*producer_free)(void *ud); /* called once the stream is over or the client went away */
} ls_http_response;

/* A complete response; the body is copied. */
void ls_http_respond(ls_http_response *r, int status, const char *content_type, const void *body, size_t len);
/* The same, taking ownership of a malloc'd body. */
void ls_http_respond_take(ls_http_response *r, int status, const char *content_type, char *body, size_t len);
/* A streaming response (chunked). free_ud may be NULL. */
void ls_http_respond_stream(ls_http_response *r, int status, const char *content_type, ls_http_producer producer,
                            void *ud, void (*free_ud)(void *ud));
/* An extra header (copied); silently ignored past LS_HTTP_MAX_HEADERS. */
void ls_http_add_header(ls_http_response *r, const char *name, const char *value);
/* Frees what a handler put in r (content type, body, headers) and, for a
 * streaming response, calls its producer_free without pulling it; r is then
 * zeroed. For callers of a handler outside the server (the server releases
 * its responses itself). NULL is fine. */
void ls_http_response_release(ls_http_response *r);

typedef void (*ls_http_handler)(void *ud, const ls_http_request *req, ls_http_response *resp);

typedef struct ls_http_server_opts {
    const char *host;              /* numeric address to bind: "127.0.0.1", "0.0.0.0", "::1"; NULL = 127.0.0.1 */
    uint16_t port;                 /* 0 = an ephemeral port, see ls_http_server_port */
    const char *tls_cert_pem;      /* both set: HTTPS with this certificate (chain) and key */
    const char *tls_key_pem;
    const char *client_ca_pem;     /* with TLS: ask clients for a certificate, checked against these CAs
                                    * by ls_http_client_cert (client_cert.c); NULL: none asked */
    size_t max_body;               /* request bodies over this get 413; 0 = 3 MiB */
    ls_http_handler handler;
    void *handler_ud;
    /* Called with handler_ud at the start of ls_http_server_stop, before the
     * connections are joined: wake producers blocked on the application's own
     * conditions. May be NULL. */
    void (*on_stop)(void *ud);
} ls_http_server_opts;

typedef struct ls_http_server ls_http_server;

/* The client certificate of a served TLS request (client_cert.c): 1 when one
 * was presented and verifies against the server's client_ca_pem (*cn gets its
 * common name and orgs[0..*n_orgs) its organizations, malloc'd copies), 0 when
 * none was presented (or the request has no connection), -1 when one was
 * presented but does not verify (expired, another CA, ...). */
int ls_http_client_cert(const ls_http_request *r, char **cn, char **orgs, int max_orgs, int *n_orgs);

/* Binds and starts serving; NULL with err set (the address, and why) on
 * failure. The opts strings are copied. */
ls_http_server *ls_http_server_start(const ls_http_server_opts *o, ls_error *err);
/* The bound port (the ephemeral one when opts.port was 0). */
uint16_t ls_http_server_port(const ls_http_server *s);
/* Stops accepting, ends open streams (producers see *stopping), joins every
 * connection thread and frees the server. NULL is fine. */
void ls_http_server_stop(ls_http_server *s);

#endif
