/*
 * http.c: the libmicrohttpd wrapper (see http.h). Each request gets a state
 * from the URI log callback (so the raw query string is kept: MHD only hands
 * the access handler the path), collects its body under a cap, then calls the
 * application handler once and converts its answer to an MHD response.
 */
#include "server/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define DEFAULT_MAX_BODY (3u << 20)

struct ls_http_server {
    struct MHD_Daemon *daemon;
    ls_http_server_opts opts;
    ls_arena text;             /* owns host and the TLS PEM texts */
    const char *host, *cert, *key, *trust;
    uint16_t port;
    volatile bool stopping;
};

/* ---- responses */

static void set_common(ls_http_response *r, int status, const char *content_type)
{
    r->status = status;
    free(r->content_type);
    r->content_type = ls_xstrdup(content_type ? content_type : "application/octet-stream");
}

void ls_http_respond_take(ls_http_response *r, int status, const char *content_type, char *body, size_t len)
{
    set_common(r, status, content_type);
    free(r->body);
    r->body = body;
    r->body_len = len;
}

void ls_http_respond(ls_http_response *r, int status, const char *content_type, const void *body, size_t len)
{
    char *copy = ls_xmalloc(len + 1);
    if (len)
        memcpy(copy, body, len);
    copy[len] = '\0';
    ls_http_respond_take(r, status, content_type, copy, len);
}

void ls_http_respond_stream(ls_http_response *r, int status, const char *content_type, ls_http_producer producer,
                            void *ud, void (*free_ud)(void *ud))
{
    set_common(r, status, content_type);
    r->producer = producer;
    r->producer_ud = ud;
    r->producer_free = free_ud;
}

void ls_http_add_header(ls_http_response *r, const char *name, const char *value)
{
    if (r->n_headers >= LS_HTTP_MAX_HEADERS)
        return;
    r->headers[r->n_headers][0] = ls_xstrdup(name);
    r->headers[r->n_headers][1] = ls_xstrdup(value);
    r->n_headers++;
}

void ls_http_response_release(ls_http_response *r)
{
    if (!r)
        return;
    free(r->content_type);
    free(r->body);
    for (int i = 0; i < r->n_headers; i++) {
        free(r->headers[i][0]);
        free(r->headers[i][1]);
    }
    if (r->producer && r->producer_free)
        r->producer_free(r->producer_ud);
    memset(r, 0, sizeof *r);
}

/* ---- requests */

typedef struct req_state {
    char *uri;          /* as received: path and query */
    ls_buf body;
    bool started, too_big;
} req_state;

/* ---- requests without a connection */

/* The decoded query of the last request this thread looked at: raw is the
 * query string it came from, pairs holds key, value (NULL when no '='), ...
 * pointing into text. */
typedef struct query_cache {
    char *raw;
    char *text;
    const char **pairs;
    size_t n_pairs;
} query_cache;

static _Thread_local query_cache qcache;

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* In place: '+' is a space, "%XX" a byte; a '%' not followed by two hex
 * digits stays as it is. */
static void url_decode(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        int hi, lo;
        if (*p == '+') {
            *o++ = ' ';
        } else if (*p == '%' && (hi = hex_value(p[1])) >= 0 && (lo = hex_value(p[2])) >= 0) {
            *o++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

static void query_parse(const char *raw)
{
    query_cache *c = &qcache;
    if (c->raw && strcmp(c->raw, raw) == 0)
        return;
    free(c->raw);
    free(c->text);
    free(c->pairs);
    c->raw = ls_xstrdup(raw);
    c->text = ls_xstrdup(raw);
    size_t cap = 2;
    for (const char *p = raw; *p; p++)
        cap += *p == '&' ? 2 : 0;
    c->pairs = ls_xcalloc(cap, sizeof *c->pairs);
    c->n_pairs = 0;
    char *save = NULL;
    for (char *tok = strtok_r(c->text, "&", &save); tok; tok = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq++ = '\0';
        url_decode(tok);
        if (eq)
            url_decode(eq);
        c->pairs[2 * c->n_pairs] = tok;
        c->pairs[2 * c->n_pairs + 1] = eq;
        c->n_pairs++;
    }
}

const char *ls_http_query(const ls_http_request *r, const char *key)
{
    if (r->conn_)
        return MHD_lookup_connection_value(r->conn_, MHD_GET_ARGUMENT_KIND, key);
    query_parse(r->query ? r->query : "");
    for (size_t i = 0; i < qcache.n_pairs; i++)
        if (strcmp(qcache.pairs[2 * i], key) == 0)
            return qcache.pairs[2 * i + 1];
    return NULL;
}

const char *ls_http_header(const ls_http_request *r, const char *name)
{
    if (r->conn_)
        return MHD_lookup_connection_value(r->conn_, MHD_HEADER_KIND, name);
    for (const char *const *h = r->headers; h && h[0] && h[1]; h += 2)
        if (strcasecmp(h[0], name) == 0)
            return h[1];
    return NULL;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    req_state *st = ls_xcalloc(1, sizeof *st);
    st->uri = ls_xstrdup(uri ? uri : "");
    return st;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    req_state *st = *con_cls;
    if (!st)
        return;
    free(st->uri);
    ls_buf_free(&st->body);
    free(st);
    *con_cls = NULL;
}

static void peer_of(struct MHD_Connection *conn, char *out, size_t len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
    if (ci && ci->client_addr) {
        socklen_t sl = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                               : sizeof(struct sockaddr_in);
        getnameinfo(ci->client_addr, sl, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    }
    snprintf(out, len, "%s:%s", host, serv);
}

/* ---- streaming */

typedef struct stream_state {
    ls_http_server *srv;
    ls_http_producer producer;
    void *ud;
    void (*free_ud)(void *);
    ls_buf buf;
    size_t off;
    bool done;
} stream_state;

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    stream_state *s = cls;
    while (s->off >= s->buf.len) {
        if (s->done || s->srv->stopping)
            return MHD_CONTENT_READER_END_OF_STREAM;
        s->buf.len = 0;
        s->off = 0;
        if (!s->producer(s->ud, &s->buf, &s->srv->stopping))
            s->done = true;
    }
    size_t n = s->buf.len - s->off;
    if (n > max)
        n = max;
    memcpy(out, s->buf.data + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream_state *s = cls;
    if (s->free_ud)
        s->free_ud(s->ud);
    ls_buf_free(&s->buf);
    free(s);
}

/* ---- the access handler */

static enum MHD_Result queue(struct MHD_Connection *conn, ls_http_server *srv, ls_http_response *r)
{
    struct MHD_Response *resp;
    if (r->producer) {
        stream_state *s = ls_xcalloc(1, sizeof *s);
        *s = (stream_state){.srv = srv, .producer = r->producer, .ud = r->producer_ud, .free_ud = r->producer_free};
        r->producer = NULL;   /* the stream state owns it now */
        r->producer_free = NULL;
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, s, stream_free);
        if (!resp)
            stream_free(s);   /* MHD did not take it */
    } else {
        resp = MHD_create_response_from_buffer(r->body_len, r->body ? r->body : (char *)"", r->body
                                                                                              ? MHD_RESPMEM_MUST_FREE
                                                                                              : MHD_RESPMEM_PERSISTENT);
        if (resp)
            r->body = NULL;   /* MHD frees it (and does not when it fails: then the release below does) */
    }
    if (!resp)
        return MHD_NO;
    if (r->content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    for (int i = 0; i < r->n_headers; i++)
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    ls_http_server *srv = cls;
    req_state *st = *con_cls;
    if (!st)
        return MHD_NO;
    if (!st->started) {
        st->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t cap = srv->opts.max_body ? srv->opts.max_body : DEFAULT_MAX_BODY;
        if (!st->too_big && st->body.len + *upload_size <= cap)
            ls_buf_add(&st->body, upload, *upload_size);
        else
            st->too_big = true;
        *upload_size = 0;
        return MHD_YES;
    }
    ls_http_response r;
    memset(&r, 0, sizeof r);
    if (st->too_big) {
        static const char msg[] = "request body too large\n";
        ls_http_respond(&r, 413, "text/plain", msg, sizeof msg - 1);
    } else {
        char peer[NI_MAXHOST + NI_MAXSERV + 2];
        peer_of(conn, peer, sizeof peer);
        const char *q = strchr(st->uri, '?');
        ls_http_request rq = {.method = method, .path = url, .query = q ? q + 1 : "",
                              .body = st->body.data ? st->body.data : "", .body_len = st->body.len,
                              .peer = peer, .conn_ = conn};
        srv->opts.handler(srv->opts.handler_ud, &rq, &r);
        if (!r.status) {
            static const char msg[] = "no response\n";
            ls_http_respond(&r, 500, "text/plain", msg, sizeof msg - 1);
        }
    }
    enum MHD_Result ret = queue(conn, srv, &r);
    ls_http_response_release(&r);
    return ret;
}

/* ---- lifecycle */

static bool parse_addr(const char *host, uint16_t port, struct sockaddr_storage *ss, bool *v6)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        *v6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        *v6 = true;
        return true;
    }
    return false;
}

static void free_server(ls_http_server *s)
{
    ls_arena_free(&s->text);
    free(s);
}

ls_http_server *ls_http_server_start(const ls_http_server_opts *o, ls_error *err)
{
    if (!o->handler) {
        ls_errorf(err, "serve: no request handler given");
        return NULL;
    }
    ls_http_server *s = ls_xcalloc(1, sizeof *s);
    s->opts = *o;
    s->host = ls_arena_strdup(&s->text, o->host ? o->host : "127.0.0.1");
    struct sockaddr_storage ss;
    bool v6;
    if (!parse_addr(s->host, o->port, &ss, &v6)) {
        ls_errorf(err, "serve address \"%s\": expected a numeric IPv4 or IPv6 address", s->host);
        free_server(s);
        return NULL;
    }
    bool tls = o->tls_cert_pem && o->tls_key_pem;
    if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        ls_errorf(err, "serve: this libmicrohttpd was built without TLS support");
        free_server(s);
        return NULL;
    }
    /* ITC: the listening thread is woken at stop instead of noticing within a second. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     (v6 ? MHD_USE_IPv6 : 0) |
                     (tls ? MHD_USE_TLS : 0);
    /* poll, not select: connection sockets past FD_SETSIZE still work. */
    if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        flags |= MHD_USE_POLL;
    if (tls) {
        s->cert = ls_arena_strdup(&s->text, o->tls_cert_pem);
        s->key = ls_arena_strdup(&s->text, o->tls_key_pem);
        /* With client CAs, MHD asks every client for a certificate (optional for the client). */
        s->trust = ls_arena_strdup_opt(&s->text, o->client_ca_pem);
        s->daemon = MHD_start_daemon(flags, o->port, NULL, NULL, on_access, s, MHD_OPTION_SOCK_ADDR, &ss,
                                     MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                                     s, MHD_OPTION_HTTPS_MEM_CERT, s->cert, MHD_OPTION_HTTPS_MEM_KEY, s->key,
                                     s->trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, s->trust,
                                     MHD_OPTION_END);
    } else {
        s->daemon = MHD_start_daemon(flags, o->port, NULL, NULL, on_access, s, MHD_OPTION_SOCK_ADDR, &ss,
                                     MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                                     s, MHD_OPTION_END);
    }
    if (!s->daemon) {
        ls_errorf(err, "serve: cannot listen on %s:%u%s (address in use, or not an address of this host?)", s->host,
                  (unsigned)o->port, tls ? " with TLS (is the certificate/key pair valid?)" : "");
        free_server(s);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : o->port;
    return s;
}

uint16_t ls_http_server_port(const ls_http_server *s)
{
    return s->port;
}

void ls_http_server_stop(ls_http_server *s)
{
    if (!s)
        return;
    s->stopping = true;
    if (s->opts.on_stop)
        s->opts.on_stop(s->opts.handler_ud);
    MHD_stop_daemon(s->daemon);
    free_server(s);
}
