/*
 * test_client.c: the API client modules (client/http.c, informer.c,
 * writer.c, leader.c) against a small fake API server written here with
 * libmicrohttpd: plain HTTP on 127.0.0.1, an ephemeral port, one thread per
 * connection so a handler may block (a held watch, a slow answer).
 *
 * This is test code: the server knows only the requests these tests make.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "client/http.h"
#include "client/informer.h"
#include "client/kutil.h"
#include "client/leader.h"
#include "client/writer.h"
#include "test.h"

/* ------------------------------------------------------------------ */
/* the fake API server                                                 */

typedef struct lease_rec {
    char name[64];
    cJSON *obj;        /* NULL: none */
    int rv;
} lease_rec;

static struct {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock;
    atomic_int stopping;
    /* counters */
    int list_calls, watch_calls, flaky_calls, throttle_calls, always_calls, widget_lists, widget_watches;
    int lease_puts, lease_posts;
    bool fail_lease_writes;
    /* what was seen */
    char last_auth[256], last_agent[128];
    char list_queries[4][512];
    char watch_rvs[8][64];
    char widget_paths[2][256];
    char bind_body[1024], event_body[4096], status_body[2048], status_ctype[128], delete_body[512];
    int delete_calls, status_calls, event_posts, event_patches;
    char event_patch_body[512];
    lease_rec lease;
} srv;

typedef struct conn_ctx {
    ls_buf body;
} conn_ctx;

typedef struct stream_ctx {
    char *text;        /* sent first */
    size_t len;
    bool hold;         /* then blank keep-alive lines until the server stops */
} stream_ctx;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_ctx *s = cls;
    if (pos < s->len) {
        size_t n = s->len - (size_t)pos < max ? s->len - (size_t)pos : max;
        memcpy(buf, s->text + pos, n);
        return (ssize_t)n;
    }
    if (!s->hold || atomic_load(&srv.stopping))
        return MHD_CONTENT_READER_END_OF_STREAM;
    /* An idle watch: a blank line now and then lets MHD notice a client
     * that went away (the write fails) without busy-looping. */
    struct timespec ts = {0, 30 * 1000000L};
    nanosleep(&ts, NULL);
    buf[0] = '\n';
    return 1;
}

static void stream_free(void *cls)
{
    stream_ctx *s = cls;
    free(s->text);
    free(s);
}

static enum MHD_Result respond_stream(struct MHD_Connection *c, const char *text, bool hold)
{
    stream_ctx *s = calloc(1, sizeof *s);
    s->text = strdup(text);
    s->len = strlen(text);
    s->hold = hold;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *body, const char *retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond_status(struct MHD_Connection *c, unsigned code, const char *reason, const char *msg)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\","
             "\"code\":%u}",
             msg, reason, code);
    return respond(c, code, body, NULL);
}

static const char *arg(struct MHD_Connection *c, const char *key)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

#define POD(name, rv) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"resourceVersion\":\"" rv "\"}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

static enum MHD_Result serve_pods(struct MHD_Connection *c)
{
    const char *watch = arg(c, "watch");
    pthread_mutex_lock(&srv.lock);
    if (watch && strcmp(watch, "true") == 0) {
        int n = srv.watch_calls++;
        const char *rv = arg(c, "resourceVersion");
        if (n < 8)
            snprintf(srv.watch_rvs[n], sizeof srv.watch_rvs[n], "%s|%s|%s", rv ? rv : "",
                     arg(c, "allowWatchBookmarks") ? arg(c, "allowWatchBookmarks") : "",
                     arg(c, "timeoutSeconds") ? arg(c, "timeoutSeconds") : "");
        pthread_mutex_unlock(&srv.lock);
        if (n == 0) {
            /* events, a bookmark, then the stream ends (a server timeout) */
            return respond_stream(c,
                                  EV("ADDED", "{\"metadata\":{\"name\":\"e\",\"namespace\":\"default\","
                                              "\"resourceVersion\":\"11\",\"managedFields\":[{\"manager\":\"x\"}]}}")
                                  EV("MODIFIED", POD("a", "12"))
                                  "\r\n" EV("DELETED", POD("b", "13"))
                                  "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"15\"}}}\n",
                                  false);
        }
        if (n == 1)
            return respond_stream(c,
                                  "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                  "\"Failure\",\"message\":\"too old resource version: 15 (25)\",\"reason\":\"Expired\","
                                  "\"code\":410}}\n",
                                  false);
        return respond_stream(c, "", true);
    }
    int n = srv.list_calls++;
    const char *cont = arg(c, "continue");
    if (n < 4)
        snprintf(srv.list_queries[n], sizeof srv.list_queries[n], "limit=%s fieldSelector=%s continue=%s rv=%s",
                 arg(c, "limit") ? arg(c, "limit") : "", arg(c, "fieldSelector") ? arg(c, "fieldSelector") : "",
                 cont ? cont : "", arg(c, "resourceVersion") ? arg(c, "resourceVersion") : "");
    int watches = srv.watch_calls;
    pthread_mutex_unlock(&srv.lock);
    if (watches == 0 && !cont)
        return respond(c, 200,
                       "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\","
                       "\"continue\":\"tok1\"},\"items\":[" POD("a", "1") "," POD("b", "2") "]}",
                       NULL);
    if (watches == 0)
        return respond(c, 200,
                       "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"10\"},"
                       "\"items\":[" POD("c", "3") "]}",
                       NULL);
    return respond(c, 200,
                   "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"30\"},"
                   "\"items\":[" POD("a", "21") "," POD("d", "22") "," POD("e", "11") "]}",
                   NULL);
}

static enum MHD_Result serve_widgets(struct MHD_Connection *c, const char *url)
{
    const char *watch = arg(c, "watch");
    pthread_mutex_lock(&srv.lock);
    int n = watch ? srv.widget_watches++ : srv.widget_lists++;
    if (!watch && n < 2)
        snprintf(srv.widget_paths[n], sizeof srv.widget_paths[n], "%s", url);
    pthread_mutex_unlock(&srv.lock);
    if (!watch)
        return respond(c, 200,
                       n == 0 ? "{\"kind\":\"WidgetList\",\"apiVersion\":\"example.com/v1\",\"metadata\":{"
                                "\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":\"w1\","
                                "\"resourceVersion\":\"5\"}}]}"
                              : "{\"kind\":\"WidgetList\",\"apiVersion\":\"example.com/v1\",\"metadata\":{"
                                "\"resourceVersion\":\"8\"},\"items\":[{\"metadata\":{\"name\":\"w2\","
                                "\"resourceVersion\":\"8\"}}]}",
                       NULL);
    if (n == 0)   /* the watch itself answers 410: relist */
        return respond_status(c, 410, "Expired", "too old resource version");
    return respond_stream(c, "", true);
}

static void copy_body(char *dst, size_t cap, const conn_ctx *cc)
{
    snprintf(dst, cap, "%s", cc->body.data ? cc->body.data : "");
}

static enum MHD_Result serve_lease(struct MHD_Connection *c, const char *method, const char *url, conn_ctx *cc)
{
    pthread_mutex_lock(&srv.lock);
    lease_rec *l = &srv.lease;
    enum MHD_Result ret;
    cJSON *in = cc->body.data ? cJSON_Parse(cc->body.data) : NULL;
    bool named = strstr(url, "/leases/") != NULL;
    if (strcmp(method, "GET") == 0) {
        if (!l->obj) {
            ret = respond_status(c, 404, "NotFound", "leases.coordination.k8s.io not found");
        } else {
            char *t = cJSON_PrintUnformatted(l->obj);
            ret = respond(c, 200, t, NULL);
            free(t);
        }
    } else if (srv.fail_lease_writes) {
        ret = respond_status(c, 500, "InternalError", "etcd is sulking");
    } else if (strcmp(method, "POST") == 0 && !named) {
        srv.lease_posts++;
        if (l->obj) {
            ret = respond_status(c, 409, "AlreadyExists", "leases already exists");
        } else {
            l->obj = in;
            in = NULL;
            char rv[16];
            snprintf(rv, sizeof rv, "%d", ++l->rv);
            cJSON *meta = cJSON_GetObjectItemCaseSensitive(l->obj, "metadata");
            cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
            cJSON_AddStringToObject(meta, "resourceVersion", rv);
            char *t = cJSON_PrintUnformatted(l->obj);
            ret = respond(c, 201, t, NULL);
            free(t);
        }
    } else if (strcmp(method, "PUT") == 0 && named && l->obj && in) {
        srv.lease_puts++;
        const char *want = ls_kutil_meta_str(l->obj, "resourceVersion");
        const char *got = ls_kutil_meta_str(in, "resourceVersion");
        if (!got || strcmp(want, got) != 0) {
            ret = respond_status(c, 409, "Conflict", "the object has been modified");
        } else {
            cJSON_Delete(l->obj);
            l->obj = in;
            in = NULL;
            char rv[16];
            snprintf(rv, sizeof rv, "%d", ++l->rv);
            cJSON *meta = cJSON_GetObjectItemCaseSensitive(l->obj, "metadata");
            cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
            cJSON_AddStringToObject(meta, "resourceVersion", rv);
            char *t = cJSON_PrintUnformatted(l->obj);
            ret = respond(c, 200, t, NULL);
            free(t);
        }
    } else {
        ret = respond_status(c, 400, "BadRequest", "unexpected lease request");
    }
    cJSON_Delete(in);
    pthread_mutex_unlock(&srv.lock);
    return ret;
}

static enum MHD_Result serve_writes(struct MHD_Connection *c, const char *method, const char *url, conn_ctx *cc)
{
    if (strstr(url, "/binding")) {
        if (strstr(url, "/pods/slow/")) {
            for (int i = 0; i < 300 && !atomic_load(&srv.stopping); i++)
                ls_kutil_sleep_ms(10, NULL);
            return respond(c, 201, "{\"kind\":\"Status\",\"status\":\"Success\",\"code\":201}", NULL);
        }
        pthread_mutex_lock(&srv.lock);
        if (strstr(url, "/pods/p1/"))
            copy_body(srv.bind_body, sizeof srv.bind_body, cc);
        pthread_mutex_unlock(&srv.lock);
        if (strstr(url, "/pods/p2/"))
            return respond_status(c, 409, "Conflict",
                                  "Operation cannot be fulfilled on pods/binding \\\"p2\\\": pod p2 is already assigned "
                                  "to node \\\"n9\\\"");
        if (strstr(url, "/pods/p3/"))
            return respond_status(c, 404, "NotFound", "pods \\\"p3\\\" not found");
        return respond(c, 201, "{\"kind\":\"Status\",\"status\":\"Success\",\"code\":201}", NULL);
    }
    pthread_mutex_lock(&srv.lock);
    enum MHD_Result ret;
    if (strstr(url, "/events")) {
        if (strcmp(method, "PATCH") == 0) {
            srv.event_patches++;
            copy_body(srv.event_patch_body, sizeof srv.event_patch_body, cc);
            ret = strstr(url, "/events/s404.") ? respond_status(c, 404, "NotFound", "events not found")
                                                : respond(c, 200, "{}", NULL);
        } else {
            srv.event_posts++;
            copy_body(srv.event_body, sizeof srv.event_body, cc);
            ret = respond(c, 201, srv.event_body, NULL);
        }
    } else if (strstr(url, "/status")) {
        srv.status_calls++;
        if (strstr(url, "/pods/gone/")) {
            ret = respond_status(c, 404, "NotFound", "pods \\\"gone\\\" not found");
        } else {
            copy_body(srv.status_body, sizeof srv.status_body, cc);
            const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
            snprintf(srv.status_ctype, sizeof srv.status_ctype, "%s", ct ? ct : "");
            ret = respond(c, 200, "{}", NULL);
        }
    } else if (strcmp(method, "DELETE") == 0) {
        srv.delete_calls++;
        copy_body(srv.delete_body, sizeof srv.delete_body, cc);
        ret = respond(c, 200, "{}", NULL);
    } else {
        ret = respond_status(c, 404, "NotFound", "no such route");
    }
    pthread_mutex_unlock(&srv.lock);
    return ret;
}

static enum MHD_Result serve_misc(struct MHD_Connection *c, const char *url)
{
    pthread_mutex_lock(&srv.lock);
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *agent = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "User-Agent");
    snprintf(srv.last_auth, sizeof srv.last_auth, "%s", auth ? auth : "");
    snprintf(srv.last_agent, sizeof srv.last_agent, "%s", agent ? agent : "");
    int flaky = strcmp(url, "/flaky") == 0 ? srv.flaky_calls++ : -1;
    int throttle = strcmp(url, "/throttle") == 0 ? srv.throttle_calls++ : -1;
    if (strcmp(url, "/always500") == 0)
        srv.always_calls++;
    pthread_mutex_unlock(&srv.lock);
    if (flaky == 0)
        return respond_status(c, 500, "InternalError", "try again");
    if (throttle == 0)
        return respond(c, 429, "{\"kind\":\"Status\",\"code\":429,\"message\":\"slow down\"}", "1");
    if (strcmp(url, "/always500") == 0)
        return respond_status(c, 503, "ServiceUnavailable", "down");
    if (strcmp(url, "/slow") == 0) {
        for (int i = 0; i < 500 && !atomic_load(&srv.stopping); i++)
            ls_kutil_sleep_ms(10, NULL);
    }
    return respond(c, 200, "{\"ok\":true}", NULL);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    conn_ctx *cc = *con_cls;
    if (!cc) {
        *con_cls = calloc(1, sizeof(conn_ctx));
        return MHD_YES;
    }
    if (*upload_size) {
        ls_buf_add(&cc->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/api/v1/pods") == 0)
        return serve_pods(c);
    if (strncmp(url, "/apis/example.com/v1/widgets", 28) == 0)
        return serve_widgets(c, url);
    if (strncmp(url, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", 58) == 0)
        return serve_lease(c, method, url, cc);
    if (strncmp(url, "/api/v1/namespaces/", 19) == 0 || strncmp(url, "/apis/events.k8s.io/", 20) == 0)
        return serve_writes(c, method, url, cc);
    return serve_misc(c, url);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_ctx *cc = *con_cls;
    if (cc) {
        ls_buf_free(&cc->body);
        free(cc);
    }
    *con_cls = NULL;
}

static bool server_start(void)
{
    pthread_mutex_init(&srv.lock, NULL);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                             handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                             MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!srv.d)
        return false;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv.d, MHD_DAEMON_INFO_BIND_PORT);
    srv.port = info ? info->port : 0;
    return srv.port > 0;
}

static void server_stop(void)
{
    atomic_store(&srv.stopping, 1);
    MHD_stop_daemon(srv.d);
    cJSON_Delete(srv.lease.obj);
    pthread_mutex_destroy(&srv.lock);
}

static ls_kclient *new_client(double qps, int burst, int max_attempts, const char *token)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
    ls_kubeconfig cfg = {.server = url, .token = (char *)token, .namespace = "default"};
    ls_kclient_options o = {.qps = qps, .burst = burst, .max_attempts = max_attempts, .backoff_initial_ms = 20,
                            .backoff_max_ms = 2000, .timeout_ms = 10000};
    ls_error err = {{0}};
    ls_kclient *c = ls_kclient_new(&cfg, &o, &err);
    if (!c)
        fprintf(stderr, "ls_kclient_new: %s\n", err.msg);
    return c;
}

/* Polls cond (an expression) for up to ms milliseconds. */
#define WAIT_FOR(cond, ms)                                                           \
    do {                                                                             \
        int64_t end_ = ls_kutil_now_ms() + (ms);                                     \
        while (!(cond) && ls_kutil_now_ms() < end_)                                  \
            ls_kutil_sleep_ms(5, NULL);                                              \
    } while (0)

static int locked_int(const int *p)
{
    pthread_mutex_lock(&srv.lock);
    int v = *p;
    pthread_mutex_unlock(&srv.lock);
    return v;
}

/* ------------------------------------------------------------------ */
/* kclient                                                             */

static bool collect_bytes(void *ud, const char *data, size_t len)
{
    ls_buf_add(ud, data, len);
    return true;
}

typedef struct canceller {
    ls_kclient *c;
    atomic_int *flag;
    int delay_ms;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *k = arg;
    ls_kutil_sleep_ms(k->delay_ms, NULL);
    if (k->flag)
        atomic_store(k->flag, 1);
    else
        ls_kclient_cancel(k->c);
    return NULL;
}

static void test_kclient(void)
{
    ls_kclient *c = new_client(-1, 0, 4, "s3cret");
    ls_kresponse r;
    ls_error err = {{0}};

    CHECK(ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 200);
    CHECK_STR(r.body, "{\"ok\":true}");
    CHECK_INT(r.attempts, 1);
    CHECK_STR(srv.last_auth, "Bearer s3cret");
    CHECK_STR(srv.last_agent, "luasched/0.1.0");
    ls_kresponse_free(&r);

    /* 500 then success */
    CHECK(ls_kclient_request(c, "GET", "/flaky", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 200);
    CHECK_INT(r.attempts, 2);
    CHECK_INT(locked_int(&srv.flaky_calls), 2);
    ls_kresponse_free(&r);

    /* 429 with Retry-After: 1 is honoured */
    int64_t t0 = ls_kutil_now_ms();
    CHECK(ls_kclient_request(c, "GET", "/throttle", NULL, NULL, 0, &r, &err));
    int64_t waited = ls_kutil_now_ms() - t0;
    CHECK_INT(r.status, 200);
    CHECK_INT(r.attempts, 2);
    CHECK(waited >= 950 && waited < 3000);
    ls_kresponse_free(&r);

    /* always failing: bounded attempts, the last status comes back */
    CHECK(ls_kclient_request(c, "GET", "/always500", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 503);
    CHECK_INT(r.attempts, 4);
    CHECK_INT(locked_int(&srv.always_calls), 4);
    char msg[256];
    ls_kutil_status_message(r.status, r.body, r.len, msg, sizeof msg);
    CHECK_STR(msg, "down");
    ls_kresponse_free(&r);

    /* streaming: 2xx bytes go to the callback, anything else into the body */
    ls_buf got = {0};
    CHECK(ls_kclient_stream(c, "/hello", NULL, 5, collect_bytes, &got, &r, &err));
    CHECK_INT(r.status, 200);
    CHECK_STR(got.data, "{\"ok\":true}");
    CHECK(r.body == NULL);
    ls_kresponse_free(&r);
    ls_buf_free(&got);
    CHECK(ls_kclient_stream(c, "/always500", NULL, 5, collect_bytes, &got, &r, &err));
    CHECK_INT(r.status, 503);
    CHECK_INT(r.attempts, 1);   /* streams are never retried */
    CHECK(got.data == NULL);
    CHECK_CONTAINS(r.body, "\"down\"");
    ls_kresponse_free(&r);

    /* a request's own cancel flag */
    atomic_int flag = 0;
    canceller k = {.c = c, .flag = &flag, .delay_ms = 150};
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &k);
    t0 = ls_kutil_now_ms();
    ls_krequest req = {.method = "GET", .path = "/slow", .cancel = &flag};
    CHECK(!ls_kclient_do(c, &req, &r, &err));
    CHECK(r.cancelled);
    CHECK(ls_kutil_now_ms() - t0 < 1000);
    CHECK_CONTAINS(err.msg, "cancelled");
    ls_kresponse_free(&r);
    pthread_join(th, NULL);

    ls_kclient_stats st;
    ls_kclient_get_stats(c, &st);
    CHECK(st.retries >= 5);
    ls_kclient_free(c);

    /* the rate limiter: burst 1 at 20 qps, six requests take >= 250 ms */
    c = new_client(20, 1, 1, NULL);
    t0 = ls_kutil_now_ms();
    for (int i = 0; i < 6; i++) {
        CHECK(ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
        ls_kresponse_free(&r);
    }
    CHECK(ls_kutil_now_ms() - t0 >= 240);
    CHECK_STR(srv.last_auth, "");
    ls_kclient_get_stats(c, &st);
    CHECK_INT(st.throttled, 5);
    CHECK_INT(st.connects, 1);   /* one kept-alive connection served all six */
    /* client-wide cancel stops a slow request and fails later ones at once */
    k = (canceller){.c = c, .delay_ms = 150};
    pthread_create(&th, NULL, cancel_later, &k);
    t0 = ls_kutil_now_ms();
    CHECK(!ls_kclient_request(c, "GET", "/slow", NULL, NULL, 0, &r, &err));
    CHECK(r.cancelled);
    CHECK(ls_kutil_now_ms() - t0 < 1000);
    ls_kresponse_free(&r);
    pthread_join(th, NULL);
    CHECK(ls_kclient_cancelled(c));
    CHECK(!ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    /* nobody listening: connection errors are retried, then reported */
    ls_kubeconfig cfg = {.server = "http://127.0.0.1:1"};
    ls_kclient_options o = {.max_attempts = 3, .backoff_initial_ms = 10};
    c = ls_kclient_new(&cfg, &o, &err);
    CHECK(!ls_kclient_request(c, "GET", "/", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 0);
    CHECK_INT(r.attempts, 3);
    CHECK_CONTAINS(err.msg, "http://127.0.0.1:1/");
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    cfg.server = "ftp://x";
    CHECK(ls_kclient_new(&cfg, NULL, &err) == NULL);
    CHECK_CONTAINS(err.msg, "not an http(s) URL");
}

/* ------------------------------------------------------------------ */
/* informer                                                            */

typedef struct hlog {
    pthread_mutex_t lock;
    char text[4096];
    int adds, updates, deletes, synced;
} hlog;

static void hlog_add(hlog *h, const char *what, const cJSON *a, const cJSON *b)
{
    pthread_mutex_lock(&h->lock);
    size_t n = strlen(h->text);
    const char *name = ls_kutil_meta_str(b ? b : a, "name");
    snprintf(h->text + n, sizeof h->text - n, "%s:%s@%s%s%s;", what, name ? name : "?",
             b ? ls_kutil_meta_str(a, "resourceVersion") : "", b ? ">" : "",
             ls_kutil_meta_str(b ? b : a, "resourceVersion"));
    pthread_mutex_unlock(&h->lock);
}

static void on_add(void *ud, const cJSON *o)
{
    hlog *h = ud;
    h->adds++;
    hlog_add(h, "add", o, NULL);
}

static void on_update(void *ud, const cJSON *o, const cJSON *n)
{
    hlog *h = ud;
    h->updates++;
    hlog_add(h, "update", o, n);
}

static void on_delete(void *ud, const cJSON *o)
{
    hlog *h = ud;
    h->deletes++;
    hlog_add(h, "delete", o, NULL);
}

static void on_synced(void *ud)
{
    hlog *h = ud;
    h->synced++;
}

static void test_informer(void)
{
    ls_kclient *c = new_client(-1, 0, 2, NULL);
    hlog h = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ls_informer_handlers hs = {on_add, on_update, on_delete, on_synced, &h};
    ls_informer_options o = {.version = "v1", .resource = "pods",
                             .field_selector = "status.phase!=Succeeded,status.phase!=Failed", .page_size = 2,
                             .backoff_initial_ms = 20, .backoff_max_ms = 200};
    ls_error err = {{0}};
    ls_informer *inf = ls_informer_new(c, &o, &hs, &err);
    CHECK(!ls_informer_has_synced(inf));
    CHECK(ls_informer_start(inf, &err));
    CHECK(ls_informer_wait_synced(inf, 5000));
    WAIT_FOR(locked_int(&srv.watch_calls) >= 3 && ls_informer_size(inf) == 3, 5000);
    CHECK_INT(locked_int(&srv.watch_calls), 3);

    pthread_mutex_lock(&h.lock);
    /* the first list: three adds in some order; the watch in order; the
     * relist after the 410: c gone, a changed, d new, e unchanged */
    CHECK_INT(h.adds, 5);
    CHECK_INT(h.updates, 2);
    CHECK_INT(h.deletes, 2);
    CHECK_INT(h.synced, 2);
    CHECK_CONTAINS(h.text, "add:e@11;update:a@1>12;delete:b@13;");
    CHECK_CONTAINS(h.text, "delete:c@3;");
    CHECK_CONTAINS(h.text, "update:a@12>21;");
    CHECK_CONTAINS(h.text, "add:d@22;");
    pthread_mutex_unlock(&h.lock);

    CHECK_STR(srv.list_queries[0], "limit=2 fieldSelector=status.phase!=Succeeded,status.phase!=Failed continue= rv=0");
    CHECK_STR(srv.list_queries[1], "limit=2 fieldSelector=status.phase!=Succeeded,status.phase!=Failed continue=tok1 rv=");
    CHECK_STR(srv.list_queries[2], "limit=2 fieldSelector=status.phase!=Succeeded,status.phase!=Failed continue= rv=");
    CHECK_CONTAINS(srv.watch_rvs[0], "10|true|");
    CHECK_CONTAINS(srv.watch_rvs[1], "15|true|");   /* after the bookmark, without relisting */
    CHECK_CONTAINS(srv.watch_rvs[2], "30|true|");
    int timeout = atoi(strrchr(srv.watch_rvs[0], '|') + 1);
    CHECK(timeout >= 300 && timeout < 600);

    cJSON *a = ls_informer_get(inf, "default", "a");
    CHECK_STR(ls_kutil_meta_str(a, "resourceVersion"), "21");
    CHECK_STR(ls_kutil_json_str(a, "kind"), "Pod");   /* filled in from the list's kind */
    cJSON_Delete(a);
    CHECK(ls_informer_get(inf, "default", "c") == NULL);
    cJSON *e = ls_informer_get(inf, "default", "e");
    CHECK(e && !cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "metadata"), "managedFields"));
    cJSON_Delete(e);

    ls_informer_stats st;
    ls_informer_get_stats(inf, &st);
    CHECK_INT(st.lists, 2);
    CHECK_INT(st.relists, 1);
    CHECK_INT(st.watches, 3);
    CHECK_STR(st.resource_version, "30");

    /* stop cancels the held watch promptly */
    int64_t t0 = ls_kutil_now_ms();
    ls_informer_stop(inf);
    CHECK(ls_kutil_now_ms() - t0 < 1000);
    ls_informer_free(inf);

    /* a custom resource, cluster-scoped; its watch answers HTTP 410 */
    hlog w = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ls_informer_handlers ws = {on_add, on_update, on_delete, NULL, &w};
    ls_informer_options wo = {.group = "example.com", .version = "v1", .resource = "widgets",
                              .backoff_initial_ms = 20};
    inf = ls_informer_new(c, &wo, &ws, &err);
    CHECK(ls_informer_start(inf, &err));
    WAIT_FOR(locked_int(&srv.widget_watches) >= 2, 5000);
    CHECK_STR(srv.widget_paths[0], "/apis/example.com/v1/widgets");
    pthread_mutex_lock(&w.lock);
    CHECK_STR(w.text, "add:w1@5;delete:w1@5;add:w2@8;");
    pthread_mutex_unlock(&w.lock);
    ls_informer_get_stats(inf, &st);
    CHECK_INT(st.relists, 1);
    cJSON *w2 = ls_informer_get(inf, NULL, "w2");
    CHECK_STR(ls_kutil_json_str(w2, "kind"), "Widget");
    cJSON_Delete(w2);
    ls_informer_free(inf);

    /* unreachable server: errors are counted and reported, stop still prompt */
    ls_kubeconfig cfg = {.server = "http://127.0.0.1:1"};
    ls_kclient_options co = {.max_attempts = 1};
    ls_kclient *dead = ls_kclient_new(&cfg, &co, &err);
    inf = ls_informer_new(dead, &o, &hs, &err);
    CHECK(ls_informer_start(inf, &err));
    CHECK(!ls_informer_wait_synced(inf, 300));
    ls_informer_get_stats(inf, &st);
    CHECK(st.errors >= 1);
    CHECK_CONTAINS(st.last_error, "pods: GET http://127.0.0.1:1/api/v1/pods?limit=2");
    ls_informer_free(inf);
    ls_kclient_free(dead);
    ls_kclient_free(c);
}

/* ------------------------------------------------------------------ */
/* writer                                                              */

typedef struct results {
    pthread_mutex_t lock;
    int n;
    ls_write_outcome outcome[16];
    long status[16];
    char message[16][300];
    char name[16][32];
} results;

static void on_done(void *ud, const ls_write_result *r)
{
    results *rs = ud;
    pthread_mutex_lock(&rs->lock);
    int i = rs->n++;
    if (i < 16) {
        rs->outcome[i] = r->outcome;
        rs->status[i] = r->status;
        snprintf(rs->message[i], sizeof rs->message[i], "%s", r->message);
        snprintf(rs->name[i], sizeof rs->name[i], "%s", r->name);
    }
    pthread_mutex_unlock(&rs->lock);
}

static int find_result(results *rs, const char *name)
{
    for (int i = 0; i < rs->n && i < 16; i++)
        if (strcmp(rs->name[i], name) == 0)
            return i;
    return 0;
}

static int result_count(results *rs)
{
    pthread_mutex_lock(&rs->lock);
    int n = rs->n;
    pthread_mutex_unlock(&rs->lock);
    return n;
}

static void test_writer(void)
{
    ls_kclient *c = new_client(-1, 0, 2, NULL);
    ls_error err = {{0}};
    ls_writer_options wo = {.workers = 3, .reporting_instance = "default-scheduler-host1"};
    ls_writer *w = ls_writer_new(c, &wo, &err);
    results rs = {.lock = PTHREAD_MUTEX_INITIALIZER};

    CHECK(ls_writer_bind(w, "ns", "p1", "uid-1", "n1", on_done, &rs));
    CHECK(ls_writer_bind(w, "ns", "p2", "uid-2", "n1", on_done, &rs));
    CHECK(ls_writer_bind(w, "ns", "p3", "uid-3", "n1", on_done, &rs));
    WAIT_FOR(result_count(&rs) == 3, 5000);
    CHECK_INT(result_count(&rs), 3);
    int i = find_result(&rs, "p1");
    CHECK_INT(rs.outcome[i], LS_WRITE_OK);
    CHECK_INT(rs.status[i], 201);
    i = find_result(&rs, "p2");
    CHECK_INT(rs.outcome[i], LS_WRITE_CONFLICT);
    CHECK_INT(rs.status[i], 409);
    CHECK_STR(rs.message[i], "Operation cannot be fulfilled on pods/binding \"p2\": pod p2 is already assigned to node \"n9\"");
    i = find_result(&rs, "p3");
    CHECK_INT(rs.outcome[i], LS_WRITE_NOT_FOUND);
    CHECK_STR(rs.message[i], "pods \"p3\" not found");
    CHECK_STR(srv.bind_body, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\","
                             "\"uid\":\"uid-1\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}");

    /* events */
    char note[128];
    ls_writer_scheduled_note("ns", "p1", "n1", note, sizeof note);
    CHECK_STR(note, "Successfully assigned ns/p1 to n1");
    char pnote[128];
    ls_writer_preempted_note("uid-9", "n3", pnote, sizeof pnote);
    CHECK_STR(pnote, "Preempted by pod uid-9 on node n3");
    ls_event_spec ev = {.ns = "ns", .name = "p1", .uid = "uid-1", .type = "Normal", .reason = "Scheduled",
                        .action = "Binding", .note = note};
    rs.n = 0;
    CHECK(ls_writer_record_event(w, &ev, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 5000);
    CHECK_INT(rs.outcome[0], LS_WRITE_OK);
    cJSON *e = cJSON_Parse(srv.event_body);
    CHECK_STR(ls_kutil_json_str(e, "apiVersion"), "events.k8s.io/v1");
    CHECK_STR(ls_kutil_json_str(e, "reason"), "Scheduled");
    CHECK_STR(ls_kutil_json_str(e, "action"), "Binding");
    CHECK_STR(ls_kutil_json_str(e, "type"), "Normal");
    CHECK_STR(ls_kutil_json_str(e, "note"), "Successfully assigned ns/p1 to n1");
    CHECK_STR(ls_kutil_json_str(e, "reportingController"), "default-scheduler");
    CHECK_STR(ls_kutil_json_str(e, "reportingInstance"), "default-scheduler-host1");
    const char *et = ls_kutil_json_str(e, "eventTime");
    CHECK(et && strlen(et) == 27 && et[19] == '.' && et[26] == 'Z');
    CHECK_CONTAINS(ls_kutil_meta_str(e, "name"), "p1.");
    const cJSON *reg = cJSON_GetObjectItemCaseSensitive(e, "regarding");
    CHECK_STR(ls_kutil_json_str(reg, "kind"), "Pod");
    CHECK_STR(ls_kutil_json_str(reg, "uid"), "uid-1");
    cJSON_Delete(e);

    /* a long note is cut to 1024 bytes ending " ..." */
    char long_note[3000];
    memset(long_note, 'x', sizeof long_note - 1);
    long_note[sizeof long_note - 1] = '\0';
    ev.note = long_note;
    ev.type = "Warning";
    ev.reason = "FailedScheduling";
    ev.action = "Scheduling";
    rs.n = 0;
    CHECK(ls_writer_record_event(w, &ev, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 5000);
    e = cJSON_Parse(srv.event_body);
    const char *n = ls_kutil_json_str(e, "note");
    CHECK(n && strlen(n) == 1024 && strcmp(n + 1020, " ...") == 0);
    cJSON_Delete(e);

    /* repeats fold into a series: POST, PATCH count 2, then counting only;
     * the note is not part of the key */
    int posts0 = locked_int(&srv.event_posts);
    ls_event_spec fs = {.ns = "ns", .name = "s1", .uid = "uid-s1", .type = "Warning", .reason = "FailedScheduling",
                        .action = "Scheduling", .note = "0/3 nodes are available: 3 Insufficient cpu."};
    rs.n = 0;
    for (int k = 0; k < 3; k++) {
        CHECK(ls_writer_record_event(w, &fs, on_done, &rs));
        WAIT_FOR(result_count(&rs) == k + 1, 5000);   /* in order, so the PATCH follows the POST */
    }
    fs.note = "0/3 nodes are available: 3 Insufficient memory.";
    CHECK(ls_writer_record_event(w, &fs, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 4, 5000);
    CHECK_INT(locked_int(&srv.event_posts) - posts0, 1);
    CHECK_INT(locked_int(&srv.event_patches), 1);
    CHECK_CONTAINS(srv.event_patch_body, "{\"series\":{\"count\":2,\"lastObservedTime\":\"");
    CHECK_INT(rs.outcome[2], LS_WRITE_OK);
    CHECK_INT(rs.status[2], 0);
    CHECK_STR(rs.message[2], "counted in the event series");
    /* a series whose Event vanished is created again, with its series */
    fs.name = "s404";
    rs.n = 0;
    CHECK(ls_writer_record_event(w, &fs, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 5000);
    CHECK(ls_writer_record_event(w, &fs, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 2, 5000);
    CHECK_INT(rs.outcome[1], LS_WRITE_OK);
    CHECK_INT(rs.status[1], 201);
    CHECK_INT(locked_int(&srv.event_posts) - posts0, 3);
    CHECK_INT(locked_int(&srv.event_patches), 2);
    e = cJSON_Parse(srv.event_body);
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(e, "series");
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(series, "count")->valueint, 2);
    CHECK_CONTAINS(ls_kutil_meta_str(e, "name"), "s404.");
    cJSON_Delete(e);

    /* pod status: condition + nominated node in one patch, then a clear */
    ls_pod_status_patch p = {.condition_reason = "Unschedulable",
                             .condition_message = "0/3 nodes are available: 3 Insufficient cpu.",
                             .nominate = LS_NOMINATE_SET, .node = "n2"};
    rs.n = 0;
    CHECK(ls_writer_patch_pod_status(w, "ns", "p4", &p, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 5000);
    CHECK_INT(rs.outcome[0], LS_WRITE_OK);
    CHECK_STR(srv.status_ctype, "application/strategic-merge-patch+json");
    cJSON *s = cJSON_Parse(srv.status_body);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
    const cJSON *cond = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "conditions"), 0);
    CHECK_STR(ls_kutil_json_str(cond, "type"), "PodScheduled");
    CHECK_STR(ls_kutil_json_str(cond, "status"), "False");
    CHECK_STR(ls_kutil_json_str(cond, "reason"), "Unschedulable");
    CHECK_STR(ls_kutil_json_str(cond, "message"), "0/3 nodes are available: 3 Insufficient cpu.");
    CHECK_STR(ls_kutil_json_str(st, "nominatedNodeName"), "n2");
    cJSON_Delete(s);
    rs.n = 0;
    CHECK(ls_writer_set_nominated_node(w, "ns", "p4", NULL, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 5000);
    CHECK_STR(srv.status_body, "{\"status\":{\"nominatedNodeName\":null}}");
    CHECK(!ls_writer_set_pod_condition(w, "ns", "p4", NULL, "x", on_done, &rs));   /* nothing to patch */

    /* preemption: status patch, then DELETE with the uid precondition */
    rs.n = 0;
    CHECK(ls_writer_preempt_victim(w, "ns", "victim", "uid-v", NULL, on_done, &rs));
    CHECK(ls_writer_preempt_victim(w, "ns", "gone", "uid-g", NULL, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 2, 5000);
    i = find_result(&rs, "victim");
    CHECK_INT(rs.outcome[i], LS_WRITE_OK);
    i = find_result(&rs, "gone");
    CHECK_INT(rs.outcome[i], LS_WRITE_OK);
    CHECK_STR(rs.message[i], "already gone");
    CHECK_INT(locked_int(&srv.delete_calls), 1);
    CHECK_STR(srv.delete_body, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{\"uid\":\"uid-v\"}}");
    s = cJSON_Parse(srv.status_body);
    cond = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "status"),
                                                               "conditions"), 0);
    CHECK_STR(ls_kutil_json_str(cond, "type"), "DisruptionTarget");
    CHECK_STR(ls_kutil_json_str(cond, "status"), "True");
    CHECK_STR(ls_kutil_json_str(cond, "reason"), "PreemptionByScheduler");
    CHECK_STR(ls_kutil_json_str(cond, "message"), "default-scheduler: preempting to accommodate a higher priority pod");
    cJSON_Delete(s);
    ls_writer_free(w);

    /* drain: one slow job in flight, three queued behind it (one worker) */
    wo.workers = 1;
    w = ls_writer_new(c, &wo, &err);
    rs.n = 0;
    CHECK(ls_writer_bind(w, "ns", "slow", "u", "n1", on_done, &rs));
    ls_kutil_sleep_ms(100, NULL);   /* let the worker pick the slow job up */
    for (int k = 0; k < 3; k++)
        CHECK(ls_writer_bind(w, "ns", "p1", "u", "n1", on_done, &rs));
    int64_t t0 = ls_kutil_now_ms();
    CHECK(!ls_writer_drain(w, 200));
    CHECK(ls_kutil_now_ms() - t0 < 1000);
    CHECK_INT(result_count(&rs), 4);
    int cancelled = 0;
    for (int k = 0; k < 4; k++)
        cancelled += rs.outcome[k] == LS_WRITE_CANCELLED;
    CHECK_INT(cancelled, 4);
    CHECK(!ls_writer_bind(w, "ns", "p1", "u", "n1", on_done, &rs));   /* refused after the drain */
    ls_writer_stats ws;
    ls_writer_get_stats(w, &ws);
    CHECK_INT((int)ws.cut_at_stop, 3);   /* the three queued ones; the slow one was cancelled in flight */
    ls_writer_free(w);

    /* a graceful drain sends what is queued when the time allows */
    w = ls_writer_new(c, &wo, &err);
    rs.n = 0;
    for (int k = 0; k < 3; k++)
        CHECK(ls_writer_bind(w, "ns", "p1", "u", "n1", on_done, &rs));
    ls_event_spec qe = {.ns = "ns", .name = "p1", .uid = "u", .reason = "Scheduled", .action = "Binding", .note = "x"};
    CHECK(ls_writer_record_event(w, &qe, on_done, &rs));
    CHECK(ls_writer_drain(w, 5000));
    CHECK_INT(result_count(&rs), 4);
    for (int k = 0; k < 4; k++)
        CHECK_INT(rs.outcome[k], LS_WRITE_OK);
    ls_writer_get_stats(w, &ws);
    CHECK_INT((int)ws.cut_at_stop, 0);
    ls_writer_free(w);

    /* events do not wait behind bindings: with the one binding worker busy
     * on a slow binding, an event is sent at once by an event worker */
    w = ls_writer_new(c, &wo, &err);
    rs.n = 0;
    CHECK(ls_writer_bind(w, "ns", "slow", "u", "n1", on_done, &rs));
    CHECK(ls_writer_bind(w, "ns", "p1", "u", "n1", on_done, &rs));
    ls_kutil_sleep_ms(100, NULL);
    qe.name = "p5";
    CHECK(ls_writer_record_event(w, &qe, on_done, &rs));
    WAIT_FOR(result_count(&rs) == 1, 1000);
    CHECK_INT(result_count(&rs), 1);
    CHECK_STR(rs.name[0], "p5");
    CHECK_INT(rs.outcome[0], LS_WRITE_OK);
    CHECK(!ls_writer_drain(w, 100));
    ls_writer_free(w);
    ls_kclient_free(c);
}

/* ------------------------------------------------------------------ */
/* leader election                                                     */

typedef struct lstate {
    atomic_int started, stopped;
    char new_leader[64];
    pthread_mutex_t lock;
} lstate;

static void started_leading(void *ud)
{
    atomic_fetch_add(&((lstate *)ud)->started, 1);
}

static void stopped_leading(void *ud)
{
    atomic_fetch_add(&((lstate *)ud)->stopped, 1);
}

static void new_leader(void *ud, const char *id)
{
    lstate *s = ud;
    pthread_mutex_lock(&s->lock);
    snprintf(s->new_leader, sizeof s->new_leader, "%s", id);
    pthread_mutex_unlock(&s->lock);
}

static int lease_transitions(void)
{
    pthread_mutex_lock(&srv.lock);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(srv.lease.obj, "spec");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
    int v = cJSON_IsNumber(t) ? t->valueint : -1;
    pthread_mutex_unlock(&srv.lock);
    return v;
}

static void lease_holder(char *out, size_t cap)
{
    pthread_mutex_lock(&srv.lock);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(srv.lease.obj, "spec");
    const char *h = ls_kutil_json_str(spec, "holderIdentity");
    snprintf(out, cap, "%s", h ? h : "(none)");
    pthread_mutex_unlock(&srv.lock);
}

/* The released record as client-go's release writes it: no holder, a
 * one-second lease, acquireTime = renewTime (now), transitions kept. */
static void check_released_record(int transitions)
{
    pthread_mutex_lock(&srv.lock);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(srv.lease.obj, "spec");
    const char *acq = ls_kutil_json_str(spec, "acquireTime"), *renew = ls_kutil_json_str(spec, "renewTime");
    CHECK(acq && renew && strcmp(acq, renew) == 0);
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
    CHECK(cJSON_IsNumber(dur) && dur->valueint == 1);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
    CHECK(cJSON_IsNumber(t) && t->valueint == transitions);
    pthread_mutex_unlock(&srv.lock);
}

static void test_leader(void)
{
    ls_kclient *c = new_client(-1, 0, 1, NULL);
    ls_error err = {{0}};
    lstate sa = {.lock = PTHREAD_MUTEX_INITIALIZER}, sb = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ls_leader_callbacks ca = {started_leading, stopped_leading, new_leader, &sa};
    ls_leader_callbacks cb = {started_leading, stopped_leading, new_leader, &sb};
    ls_leader_options oa = {.identity = "a", .lease_duration_ms = 1000, .renew_deadline_ms = 600,
                            .retry_period_ms = 100};
    ls_leader_options ob = oa;
    ob.identity = "b";

    CHECK(ls_leader_new(c, &(ls_leader_options){.lease_duration_ms = 1000, .renew_deadline_ms = 2000}, NULL, &err) ==
          NULL);
    CHECK_CONTAINS(err.msg, "leaseDuration (1000 ms) > renewDeadline (2000 ms)");
    ls_leader *def = ls_leader_new(c, NULL, NULL, &err);
    CHECK(strchr(ls_leader_identity(def), '_') != NULL);   /* hostname_uuid */
    CHECK_INT(strlen(strchr(ls_leader_identity(def), '_') + 1), 36);
    ls_leader_free(def);

    ls_leader *a = ls_leader_new(c, &oa, &ca, &err);
    CHECK(ls_leader_start(a, &err));
    WAIT_FOR(ls_leader_is_leader(a), 3000);
    CHECK(ls_leader_is_leader(a));
    CHECK_INT(atomic_load(&sa.started), 1);
    CHECK_INT(locked_int(&srv.lease_posts), 1);   /* created, since it was missing */
    CHECK_INT(lease_transitions(), 0);
    CHECK_STR(sa.new_leader, "a");

    ls_leader *b = ls_leader_new(c, &ob, &cb, &err);
    CHECK(ls_leader_start(b, &err));
    ls_kutil_sleep_ms(1500, NULL);   /* longer than the lease: a keeps renewing, b must wait */
    CHECK(!ls_leader_is_leader(b));
    CHECK(ls_leader_leader_known(b));
    char cur[64];
    ls_leader_current(b, cur, sizeof cur);
    CHECK_STR(cur, "a");
    CHECK(locked_int(&srv.lease_puts) >= 5);   /* a's renewals */

    /* a stops without releasing (kube-scheduler's default): b takes over
     * once the lease has not changed for leaseDurationSeconds */
    int64_t t0 = ls_kutil_now_ms();
    ls_leader_stop(a);
    CHECK_INT(atomic_load(&sa.stopped), 1);
    WAIT_FOR(ls_leader_is_leader(b), 4000);
    int64_t took = ls_kutil_now_ms() - t0;
    CHECK(ls_leader_is_leader(b));
    CHECK(took >= 700 && took < 3500);
    CHECK_INT(lease_transitions(), 1);
    lease_holder(cur, sizeof cur);
    CHECK_STR(cur, "b");
    pthread_mutex_lock(&sb.lock);
    CHECK_STR(sb.new_leader, "b");
    pthread_mutex_unlock(&sb.lock);
    ls_leader_free(a);

    /* b releases on stop: a new candidate gets it without waiting */
    ls_leader_free(b);   /* b was made without release_on_stop: the lease stays "b" */
    lease_holder(cur, sizeof cur);
    CHECK_STR(cur, "b");
    ob.release_on_stop = true;
    ob.identity = "b2";
    lstate sb2 = {.lock = PTHREAD_MUTEX_INITIALIZER};
    cb.ud = &sb2;
    b = ls_leader_new(c, &ob, &cb, &err);
    CHECK(ls_leader_start(b, &err));
    WAIT_FOR(ls_leader_is_leader(b), 4000);
    CHECK(ls_leader_is_leader(b));
    int before_release = lease_transitions();
    ls_leader_free(b);
    lease_holder(cur, sizeof cur);
    CHECK_STR(cur, "");
    check_released_record(before_release);
    oa.identity = "a2";
    lstate sa2 = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ca.ud = &sa2;
    a = ls_leader_new(c, &oa, &ca, &err);
    t0 = ls_kutil_now_ms();
    CHECK(ls_leader_start(a, &err));
    WAIT_FOR(ls_leader_is_leader(a), 3000);
    CHECK(ls_leader_is_leader(a));
    CHECK(ls_kutil_now_ms() - t0 < 500);   /* released: no lease duration to wait out */
    CHECK_INT(lease_transitions(), 3);

    /* renewals fail: leadership is given up after renewDeadline */
    pthread_mutex_lock(&srv.lock);
    srv.fail_lease_writes = true;
    pthread_mutex_unlock(&srv.lock);
    t0 = ls_kutil_now_ms();
    WAIT_FOR(!ls_leader_is_leader(a), 3000);
    took = ls_kutil_now_ms() - t0;
    CHECK(!ls_leader_is_leader(a));
    CHECK(ls_leader_lost(a));
    CHECK(took >= 400 && took < 1500);
    CHECK_INT(atomic_load(&sa2.started), 1);
    CHECK_INT(atomic_load(&sa2.stopped), 1);
    ls_leader_free(a);
    ls_kclient_free(c);
}

/* ------------------------------------------------------------------ */
/* TLS: a self-signed certificate for 127.0.0.1, made with libcrypto    */

static char *bio_text(BIO *b)
{
    char *p;
    long n = BIO_get_mem_data(b, &p);
    char *s = malloc((size_t)n + 1);
    memcpy(s, p, (size_t)n);
    s[n] = '\0';
    return s;
}

static bool make_cert(char **cert_pem, char **key_pem)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    if (!key || !x) {
        EVP_PKEY_free(key);
        X509_free(x);
        return false;
    }
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
    X509_EXTENSION *bc = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    X509_add_ext(x, san, -1);
    X509_add_ext(x, bc, -1);
    X509_EXTENSION_free(san);
    X509_EXTENSION_free(bc);
    bool ok = X509_sign(x, key, EVP_sha256()) > 0;
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    ok = ok && PEM_write_bio_X509(cb, x) && PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL);
    *cert_pem = bio_text(cb);
    *key_pem = bio_text(kb);
    BIO_free(cb);
    BIO_free(kb);
    X509_free(x);
    EVP_PKEY_free(key);
    return ok;
}

static void test_tls(void)
{
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        printf("test_tls: libmicrohttpd without TLS, skipped\n");
        return;
    }
    char *cert = NULL, *key = NULL;
    if (!make_cert(&cert, &key)) {
        CHECK(!"make_cert");
        free(cert);
        free(key);
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL, NULL, handler, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_END);
    CHECK(d != NULL);
    if (!d) {
        free(cert);
        free(key);
        return;
    }
    int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", port);
    ls_kclient_options o = {.qps = -1, .max_attempts = 1};
    ls_error err = {{0}};
    ls_kresponse r;

    /* the CA from memory: verified */
    ls_kubeconfig cfg = {.server = url, .ca_pem = cert, .ca_len = strlen(cert), .token = "tls-token"};
    ls_kclient *c = ls_kclient_new(&cfg, &o, &err);
    CHECK(ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 200);
    CHECK_STR(srv.last_auth, "Bearer tls-token");
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    /* no CA: the system's do not know this certificate */
    cfg.ca_pem = NULL;
    cfg.ca_len = 0;
    c = ls_kclient_new(&cfg, &o, &err);
    CHECK(!ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 0);
    CHECK_CONTAINS(err.msg, "https://127.0.0.1:");
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    /* insecure-skip-tls-verify */
    cfg.insecure = true;
    c = ls_kclient_new(&cfg, &o, &err);
    CHECK(ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 200);
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    /* a client certificate and key from memory are accepted by libcurl */
    cfg.insecure = false;
    cfg.ca_pem = cert;
    cfg.ca_len = strlen(cert);
    cfg.cert_pem = cert;
    cfg.cert_len = strlen(cert);
    cfg.key_pem = key;
    cfg.key_len = strlen(key);
    c = ls_kclient_new(&cfg, &o, &err);
    CHECK(ls_kclient_request(c, "GET", "/hello", NULL, NULL, 0, &r, &err));
    CHECK_INT(r.status, 200);
    ls_kresponse_free(&r);
    ls_kclient_free(c);

    MHD_stop_daemon(d);
    free(cert);
    free(key);
}

int main(void)
{
    if (!server_start()) {
        fprintf(stderr, "cannot start the test API server\n");
        return 1;
    }
    test_kclient();
    test_informer();
    test_writer();
    test_leader();
    test_tls();
    server_stop();
    TEST_MAIN_END();
}
