/*
 * http.c: the API client on libcurl. See http.h.
 *
 * Each request runs its easy handle through a multi handle of its own pool
 * slot, polled every 100 ms, so that a cancel flag is seen promptly even on
 * an idle watch (a plain curl_easy_perform only calls the progress callback
 * about once a second when nothing arrives). A slot's multi handle owns the
 * connection cache, so keeping slots in a pool keeps connections alive.
 */
#include "client/http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client/exec_cred.h"
#include "client/kutil.h"

#define LS_KCLIENT_POOL_MAX 16
#define LS_KCLIENT_POLL_MS 100
#define LS_KCLIENT_MAX_BODY ((size_t)512 << 20)
#define LS_TOKEN_REREAD_MS 60000

typedef struct kslot {
    CURL *easy;
    CURLM *multi;
    struct kslot *next;
} kslot;

struct ls_kclient {
    ls_kubeconfig cfg;
    ls_arena text;                  /* owns user_agent and host_header */
    const char *user_agent;
    ls_kclient_options opt;
    atomic_int cancelled;

    pthread_mutex_t pool_lock;
    kslot *pool;
    int pooled;

    pthread_mutex_t limiter_lock;   /* token bucket */
    double tokens;
    int64_t last_refill_ms;

    ls_exec_cred *exec;             /* the kubeconfig's credential plugin, or NULL */

    pthread_mutex_t token_lock;     /* bearer token, re-read from token_file */
    char *token;
    int64_t token_read_ms;

    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

    struct curl_slist *connect_to;  /* tls_server_name: the name's connection goes to the server */
    const char *host_header;

    atomic_ulong n_requests, n_retries, n_throttled, n_transport, n_connects;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
    (void)h;
    (void)access;
    ls_kclient *c = ud;
    pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    (void)h;
    ls_kclient *c = ud;
    pthread_mutex_unlock(&c->share_locks[data]);
}

static char *dup_blob(const char *p, size_t n)
{
    if (!p)
        return NULL;
    char *s = ls_xmalloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void copy_config(ls_kubeconfig *dst, const ls_kubeconfig *src)
{
    memset(dst, 0, sizeof *dst);
    dst->server = ls_xstrdup(src->server ? src->server : "");
    dst->ca_pem = dup_blob(src->ca_pem, src->ca_len);
    dst->ca_len = src->ca_len;
    dst->cert_pem = dup_blob(src->cert_pem, src->cert_len);
    dst->cert_len = src->cert_len;
    dst->key_pem = dup_blob(src->key_pem, src->key_len);
    dst->key_len = src->key_len;
    dst->token = src->token ? ls_xstrdup(src->token) : NULL;
    dst->token_file = src->token_file ? ls_xstrdup(src->token_file) : NULL;
    dst->username = src->username ? ls_xstrdup(src->username) : NULL;
    dst->password = src->password ? ls_xstrdup(src->password) : NULL;
    dst->insecure = src->insecure;
    dst->namespace = ls_xstrdup(src->namespace ? src->namespace : "default");
    dst->context = src->context ? ls_xstrdup(src->context) : NULL;
}

static void default_options(ls_kclient_options *o)
{
    if (o->qps == 0)
        o->qps = 50;
    if (o->burst <= 0)
        o->burst = 100;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = 10000;
    if (o->timeout_ms <= 0)
        o->timeout_ms = 60000;
    if (o->max_attempts <= 0)
        o->max_attempts = 5;
    if (o->backoff_initial_ms <= 0)
        o->backoff_initial_ms = 250;
    if (o->backoff_max_ms <= 0)
        o->backoff_max_ms = 10000;
}

/* tls_server_name: the URL names the server by that name, libcurl connects
 * to the real host and port instead (CONNECT_TO), and Host stays the real one. */
static void use_server_name(ls_kclient *c, const char *name)
{
    char *server = c->cfg.server;
    const char *auth = strstr(server, "://");
    auth = auth ? auth + 3 : server;
    size_t auth_len = strcspn(auth, "/");
    const char *colon = NULL;
    for (const char *p = auth; p < auth + auth_len; p++)
        if (*p == ':' && !memchr(p, ']', (size_t)(auth + auth_len - p)))
            colon = p;
    const char *port = colon ? colon + 1 : strncmp(server, "https", 5) == 0 ? "443" : "80";
    int port_len = colon ? (int)(auth + auth_len - colon - 1) : (int)strlen(port);
    int host_len = colon ? (int)(colon - auth) : (int)auth_len;
    ls_buf b = {0};
    ls_buf_addf(&b, "%s:%.*s:%.*s:%.*s", name, port_len, port, host_len, auth, port_len, port);
    c->connect_to = curl_slist_append(NULL, b.data);
    ls_buf_free(&b);
    c->host_header = ls_arena_printf(&c->text, "Host: %.*s", (int)auth_len, auth);
    ls_buf_addf(&b, "%.*s%s:%.*s%s", (int)(auth - server), server, name, port_len, port, auth + auth_len);
    c->cfg.server = b.data;
    free(server);
}

ls_kclient *ls_kclient_new(const ls_kubeconfig *cfg, const ls_kclient_options *opt, ls_error *err)
{
    if (!cfg || !cfg->server || strncmp(cfg->server, "http", 4) != 0) {
        ls_errorf(err, "API client: server \"%s\" is not an http(s) URL", cfg && cfg->server ? cfg->server : "");
        return NULL;
    }
    pthread_once(&curl_once, curl_init_once);
    ls_kclient *c = ls_xcalloc(1, sizeof *c);
    copy_config(&c->cfg, cfg);
    if (opt)
        c->opt = *opt;
    default_options(&c->opt);
    c->user_agent = ls_arena_strdup(&c->text, opt && opt->user_agent ? opt->user_agent : "luasched/0.1.0");
    c->opt.user_agent = c->user_agent;
    if (opt && opt->tls_server_name && opt->tls_server_name[0])
        use_server_name(c, opt->tls_server_name);
    c->opt.tls_server_name = NULL;
    pthread_mutex_init(&c->pool_lock, NULL);
    pthread_mutex_init(&c->limiter_lock, NULL);
    pthread_mutex_init(&c->token_lock, NULL);
    c->tokens = c->opt.burst;
    c->last_refill_ms = ls_kutil_now_ms();
    c->token = c->cfg.token ? ls_xstrdup(c->cfg.token) : NULL;
    c->token_read_ms = ls_kutil_now_ms();
    if (opt && opt->share_credentials_with)
        c->exec = ls_exec_cred_ref(opt->share_credentials_with->exec);
    else
        c->exec = cfg->exec ? ls_exec_cred_new(cfg->exec) : NULL;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    /* DNS answers and TLS sessions are shared; connections are not (libcurl
     * does not support sharing them between concurrent threads). */
    c->share = curl_share_init();
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return c;
}

static void slot_free(kslot *s)
{
    curl_multi_cleanup(s->multi);
    curl_easy_cleanup(s->easy);
    free(s);
}

void ls_kclient_free(ls_kclient *c)
{
    if (!c)
        return;
    while (c->pool) {
        kslot *s = c->pool;
        c->pool = s->next;
        slot_free(s);
    }
    curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_mutex_destroy(&c->limiter_lock);
    pthread_mutex_destroy(&c->token_lock);
    free(c->token);
    ls_exec_cred_free(c->exec);
    curl_slist_free_all(c->connect_to);
    ls_arena_free(&c->text);
    ls_kubeconfig_free(&c->cfg);
    free(c);
}

void ls_kclient_cancel(ls_kclient *c)
{
    atomic_store(&c->cancelled, 1);
}

bool ls_kclient_cancelled(const ls_kclient *c)
{
    return atomic_load(&c->cancelled) != 0;
}

const ls_kubeconfig *ls_kclient_config(const ls_kclient *c)
{
    return &c->cfg;
}

void ls_kclient_get_stats(ls_kclient *c, ls_kclient_stats *out)
{
    out->requests = atomic_load(&c->n_requests);
    out->retries = atomic_load(&c->n_retries);
    out->throttled = atomic_load(&c->n_throttled);
    out->transport_errors = atomic_load(&c->n_transport);
    out->connects = atomic_load(&c->n_connects);
}

void ls_kresponse_free(ls_kresponse *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
}

static bool is_cancelled(ls_kclient *c, const atomic_int *flag)
{
    return atomic_load(&c->cancelled) || (flag && atomic_load(flag));
}

/* Sleeps ms unless cancelled first (false then). */
static bool wait_ms(ls_kclient *c, const atomic_int *flag, int64_t ms)
{
    int64_t end = ls_kutil_now_ms() + ms;
    while (!is_cancelled(c, flag)) {
        int64_t left = end - ls_kutil_now_ms();
        if (left <= 0)
            return true;
        ls_kutil_sleep_ms(left < 20 ? left : 20, NULL);
    }
    return false;
}

/* Token bucket shared by all threads. A caller that finds it empty reserves
 * the next token (the count goes negative) and sleeps outside the lock until
 * it is due, so waiters are served in arrival order without a condition. */
static bool rate_limit(ls_kclient *c, const atomic_int *flag)
{
    if (c->opt.qps < 0)
        return true;
    pthread_mutex_lock(&c->limiter_lock);
    int64_t now = ls_kutil_now_ms();
    c->tokens += (double)(now - c->last_refill_ms) * c->opt.qps / 1000.0;
    if (c->tokens > c->opt.burst)
        c->tokens = c->opt.burst;
    c->last_refill_ms = now;
    c->tokens -= 1;
    double deficit = -c->tokens;
    pthread_mutex_unlock(&c->limiter_lock);
    if (deficit <= 0)
        return true;
    atomic_fetch_add(&c->n_throttled, 1);
    return wait_ms(c, flag, (int64_t)(deficit * 1000.0 / c->opt.qps) + 1);
}

static char *current_token(ls_kclient *c)
{
    pthread_mutex_lock(&c->token_lock);
    int64_t now = ls_kutil_now_ms();
    if (c->cfg.token_file && now - c->token_read_ms >= LS_TOKEN_REREAD_MS) {
        /* Projected service-account tokens rotate: re-read, keep the old
         * token when the file is momentarily unreadable. */
        size_t len;
        ls_error e = {{0}};
        char *t = ls_kutil_read_file(c->cfg.token_file, &len, &e);
        if (t) {
            while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
                t[--len] = '\0';
            free(c->token);
            c->token = t;
        }
        c->token_read_ms = now;
    }
    char *t = c->token ? ls_xstrdup(c->token) : NULL;
    pthread_mutex_unlock(&c->token_lock);
    return t;
}

static kslot *slot_get(ls_kclient *c)
{
    pthread_mutex_lock(&c->pool_lock);
    kslot *s = c->pool;
    if (s) {
        c->pool = s->next;
        c->pooled--;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (!s) {
        s = ls_xcalloc(1, sizeof *s);
        s->easy = curl_easy_init();
        s->multi = curl_multi_init();
        if (!s->easy || !s->multi) {
            fprintf(stderr, "luasched: libcurl could not allocate a handle\n");
            abort();
        }
    }
    s->next = NULL;
    return s;
}

static void slot_put(ls_kclient *c, kslot *s)
{
    pthread_mutex_lock(&c->pool_lock);
    if (c->pooled < LS_KCLIENT_POOL_MAX) {
        s->next = c->pool;
        c->pool = s;
        c->pooled++;
        s = NULL;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (s)
        slot_free(s);
}

/* One attempt's state, seen by the libcurl callbacks. */
typedef struct attempt {
    ls_kclient *c;
    const ls_krequest *req;
    CURL *easy;
    ls_buf body;
    int retry_after;
    bool stopped;
    bool too_big;
    int streaming;   /* -1 undecided, 0 collecting the body, 1 passing it to on_data */
} attempt;

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    if (a->streaming < 0) {
        long code = 0;
        curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
        a->streaming = a->req->on_data && code >= 200 && code < 300;
    }
    if (a->streaming) {
        if (!a->req->on_data(a->req->ud, p, len)) {
            a->stopped = true;
            return 0;
        }
        return len;
    }
    if (a->body.len + len > LS_KCLIENT_MAX_BODY) {
        a->too_big = true;
        return 0;
    }
    ls_buf_add(&a->body, p, len);
    return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
        char v[32];
        size_t vl = len - (sizeof name - 1);
        if (vl >= sizeof v)
            vl = sizeof v - 1;
        memcpy(v, p + sizeof name - 1, vl);
        v[vl] = '\0';
        char *end;
        long s = strtol(v, &end, 10);   /* only the delta-seconds form, as client-go */
        if (end != v && s >= 0)
            a->retry_after = s > 3600 ? 3600 : (int)s;
    }
    return len;
}

static void set_tls(ls_kclient *c, CURL *h, const ls_exec_result *cred)
{
    if (c->cfg.insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (c->cfg.ca_pem) {
        struct curl_blob b = {c->cfg.ca_pem, c->cfg.ca_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    }
    if (cred && cred->cert_pem && cred->key_pem && !c->cfg.cert_pem) {
        /* The plugin's certificate; copied, since the next run may replace it. */
        struct curl_blob cert = {cred->cert_pem, cred->cert_len, CURL_BLOB_COPY};
        struct curl_blob key = {cred->key_pem, cred->key_len, CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->cfg.cert_pem && c->cfg.key_pem) {
        struct curl_blob cert = {c->cfg.cert_pem, c->cfg.cert_len, CURL_BLOB_NOCOPY};
        struct curl_blob key = {c->cfg.key_pem, c->cfg.key_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->cfg.username && c->cfg.password) {
        curl_easy_setopt(h, CURLOPT_USERNAME, c->cfg.username);
        curl_easy_setopt(h, CURLOPT_PASSWORD, c->cfg.password);
    }
    if (c->connect_to)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
}

static struct curl_slist *make_headers(ls_kclient *c, const ls_krequest *req, const ls_exec_result *cred)
{
    struct curl_slist *hs = curl_slist_append(NULL, "Accept: application/json");
    if (c->host_header)
        hs = curl_slist_append(hs, c->host_header);
    hs = curl_slist_append(hs, "Expect:");   /* no 100-continue round trip on large bodies */
    char line[512];
    if (req->content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", req->content_type);
        hs = curl_slist_append(hs, line);
    }
    char *token = current_token(c);
    if (!token && cred && cred->token)   /* a token in the kubeconfig wins, as in client-go */
        token = ls_xstrdup(cred->token);
    if (token) {
        size_t n = strlen(token) + 32;
        char *auth = ls_xmalloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", token);
        hs = curl_slist_append(hs, auth);
        free(auth);
        free(token);
    }
    return hs;
}

static void set_request(ls_kclient *c, attempt *a, struct curl_slist *hs, const char *url,
                        const ls_exec_result *cred)
{
    CURL *h = a->easy;
    const ls_krequest *req = a->req;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");   /* a kubeconfig server URL is nothing else */
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opt.connect_timeout_ms);
    if (req->on_data) {
        if (req->low_speed_time_s > 0) {
            curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
            curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, req->low_speed_time_s);
        }
    } else {
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : c->opt.timeout_ms);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    const char *m = req->method ? req->method : "GET";
    if (req->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
    }
    if (strcmp(m, "GET") == 0 && !req->body)
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
    set_tls(c, h, cred);
}

/* Runs the easy handle on the slot's multi handle until done or cancelled. */
static CURLcode perform(ls_kclient *c, kslot *s, const atomic_int *flag, bool *cancelled)
{
    curl_multi_add_handle(s->multi, s->easy);
    CURLcode rc = CURLE_OK;
    int running = 1;
    for (;;) {
        if (curl_multi_perform(s->multi, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (!running)
            break;
        if (is_cancelled(c, flag)) {
            *cancelled = true;
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        curl_multi_poll(s->multi, NULL, 0, LS_KCLIENT_POLL_MS, NULL);
    }
    if (running == 0) {
        int left;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(s->multi, &left)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == s->easy)
                rc = msg->data.result;
    }
    curl_multi_remove_handle(s->multi, s->easy);
    return rc;
}

/* One attempt: true when an HTTP status came back. */
static bool attempt_once(ls_kclient *c, const ls_krequest *req, ls_kresponse *resp, ls_error *err)
{
    ls_exec_result cred = {0};
    if (c->exec && !ls_exec_cred_get(c->exec, &cred, err)) {
        ls_error why = *err;
        ls_errorf(err, "%s %s%s: getting credentials: %s", req->method ? req->method : "GET", c->cfg.server,
                  req->path, why.msg);
        free(resp->body);
        memset(resp, 0, sizeof *resp);
        resp->retry_after = -1;
        resp->credentials_failed = true;
        atomic_fetch_add(&c->n_transport, 1);
        return false;
    }
    resp->credentials_generation = cred.generation;
    kslot *s = slot_get(c);
    curl_easy_reset(s->easy);
    attempt a = {.c = c, .req = req, .easy = s->easy, .retry_after = -1, .streaming = -1};
    ls_buf url = {0};
    ls_buf_adds(&url, c->cfg.server);
    ls_buf_adds(&url, req->path);
    struct curl_slist *hs = make_headers(c, req, &cred);
    set_request(c, &a, hs, url.data, &cred);
    ls_exec_result_free(&cred);
    atomic_fetch_add(&c->n_requests, 1);
    bool cancelled = false;
    CURLcode rc = perform(c, s, req->cancel, &cancelled);
    long code = 0, connects = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(s->easy, CURLINFO_NUM_CONNECTS, &connects);
    atomic_fetch_add(&c->n_connects, (unsigned long)connects);
    curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hs);
    slot_put(c, s);
    free(resp->body);
    resp->body = a.body.data;
    resp->len = a.body.len;
    resp->retry_after = a.retry_after;
    resp->stopped = a.stopped;
    resp->cancelled = cancelled;
    bool ok = rc == CURLE_OK || (a.stopped && rc == CURLE_WRITE_ERROR);
    resp->status = ok || code ? code : 0;
    if (cancelled)
        ls_errorf(err, "%s %s: cancelled", req->method ? req->method : "GET", url.data);
    else if (a.too_big)
        ls_errorf(err, "%s %s: answer larger than %zu bytes", req->method ? req->method : "GET", url.data,
                  LS_KCLIENT_MAX_BODY);
    else if (!ok)
        ls_errorf(err, "%s %s: %s", req->method ? req->method : "GET", url.data, curl_easy_strerror(rc));
    ls_buf_free(&url);
    if (!ok)
        atomic_fetch_add(&c->n_transport, 1);
    return ok;
}

static bool retryable(const ls_kresponse *r, bool got_answer)
{
    if (r->cancelled || r->stopped || r->credentials_failed)
        return false;
    if (!got_answer)
        return true;
    return r->status == 429 || r->status >= 500;
}

static int64_t retry_delay(ls_kclient *c, const ls_kresponse *r, int attempt_no)
{
    if (r->retry_after >= 0 && (r->status == 429 || r->status >= 500)) {
        int64_t ms = (int64_t)r->retry_after * 1000;
        return ms < c->opt.backoff_max_ms ? ms : c->opt.backoff_max_ms;
    }
    int64_t d = c->opt.backoff_initial_ms;
    for (int i = 1; i < attempt_no && d < c->opt.backoff_max_ms; i++)
        d *= 2;
    if (d > c->opt.backoff_max_ms)
        d = c->opt.backoff_max_ms;
    return ls_kutil_jitter_ms(d, 0.5);
}

bool ls_kclient_do(ls_kclient *c, const ls_krequest *req, ls_kresponse *resp, ls_error *err)
{
    memset(resp, 0, sizeof *resp);
    resp->retry_after = -1;
    int max = req->on_data ? 1 : req->max_attempts > 0 ? req->max_attempts : c->opt.max_attempts;
    bool refreshed = false;
    for (int n = 1;; n++) {
        resp->attempts = n;
        if (!rate_limit(c, req->cancel)) {
            resp->cancelled = true;
            return ls_errorf(err, "%s %s: cancelled", req->method ? req->method : "GET", req->path);
        }
        bool got = attempt_once(c, req, resp, err);
        if (got && resp->status == 401 && c->exec && !refreshed) {
            /* The plugin's credentials were refused: run it again and retry once at once. */
            ls_exec_cred_invalidate(c->exec, resp->credentials_generation);
            refreshed = true;
            n--;
            continue;
        }
        if (n >= max || !retryable(resp, got))
            return got;
        atomic_fetch_add(&c->n_retries, 1);
        if (!wait_ms(c, req->cancel, retry_delay(c, resp, n))) {
            resp->cancelled = true;
            return ls_errorf(err, "%s %s: cancelled", req->method ? req->method : "GET", req->path);
        }
    }
}

bool ls_kclient_request(ls_kclient *c, const char *method, const char *path, const char *content_type,
                        const char *body, size_t len, ls_kresponse *resp, ls_error *err)
{
    ls_krequest req = {.method = method, .path = path, .content_type = content_type, .body = body, .len = len};
    return ls_kclient_do(c, &req, resp, err);
}

bool ls_kclient_stream(ls_kclient *c, const char *path, const atomic_int *cancel, long low_speed_time_s,
                       ls_kclient_data_fn fn, void *ud, ls_kresponse *resp, ls_error *err)
{
    ls_krequest req = {.method = "GET", .path = path, .cancel = cancel, .on_data = fn, .ud = ud,
                       .low_speed_time_s = low_speed_time_s};
    return ls_kclient_do(c, &req, resp, err);
}
