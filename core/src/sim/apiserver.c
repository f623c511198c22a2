/*
 * apiserver.c: the HTTP front end of the served cluster: bearer-token auth,
 * discovery, routing of Kubernetes REST paths to the store's verbs, kubectl
 * tables, watch streams and fault injection. Health, version and discovery
 * are never faulted, so kubectl and probes keep working while a test makes
 * resource requests fail.
 */
#include "sim/api_internal.h"
#include "sim/api_auth.h"
#include "sim/api_version.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct ls_api_server {
    ls_api *api;
    ls_http_server *http;
    api_auth *auth;            /* users, reviews, audit log (api_auth.c) */
    char *(*whatif)(void *ud, const char *question, size_t len, int *status);   /* POST /whatif */
    void *whatif_ud;
};

typedef struct route {
    const ls_api_resource *res;
    const char *ns, *name, *sub;
    bool legacy_bindings;      /* POST /api/v1/namespaces/NS/bindings */
} route;

/* ---- responses */

static void respond_json(ls_http_response *rs, int code, cJSON *body)
{
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    ls_http_respond_take(rs, code, "application/json", text, strlen(text));
}

static void respond_status(ls_http_response *rs, int code, const char *reason, const char *message)
{
    respond_json(rs, code, ls_api_status(code, reason, message));
}

static void respond_text(ls_http_response *rs, int code, const char *text)
{
    ls_http_respond(rs, code, "text/plain; charset=utf-8", text, strlen(text));
}

static void respond_version(ls_http_response *rs, int serve_as)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "major", LS_API_SERVER_MAJOR);
    cJSON_AddStringToObject(v, "minor", LS_API_SERVER_MINOR);
    cJSON_AddStringToObject(v, "gitVersion", LS_API_SERVER_GIT_VERSION);
    cJSON_AddStringToObject(v, "gitCommit", "");
    cJSON_AddStringToObject(v, "gitTreeState", "clean");
    cJSON_AddStringToObject(v, "buildDate", "");
    cJSON_AddStringToObject(v, "goVersion", "");
    cJSON_AddStringToObject(v, "compiler", "luasched");
    cJSON_AddStringToObject(v, "platform", "linux/amd64");
    api_version_serve_as(v, serve_as);   /* --serve-as reports the release it pretends to be */
    respond_json(rs, 200, v);
}

/* ---- routing */

#define MAX_SEGS 10

static int split_path(char *path, char **segs)
{
    int n = 0;
    char *save = NULL;   /* strtok_r: requests are handled on several threads at once */
    for (char *tok = strtok_r(path, "/", &save); tok && n < MAX_SEGS; tok = strtok_r(NULL, "/", &save))
        segs[n++] = tok;
    return n;
}

/* rest: the segments after /api/v1 or /apis/G/V. */
static bool route_rest(const char *group, const char *version, char **rest, int n, route *rt)
{
    memset(rt, 0, sizeof *rt);
    if (n >= 3 && strcmp(rest[0], "namespaces") == 0) {
        const ls_api_resource *r = ls_api_resource_find(group, version, rest[2]);
        if ((r && r->namespaced) || (!*group && strcmp(rest[2], "bindings") == 0)) {
            rt->ns = rest[1];
            rt->legacy_bindings = !r;
            rt->res = r ? r : ls_api_resource_find("", "v1", "pods");
            rest += 2;
            n -= 2;
            if (n > 3)
                return false;
            rt->name = n > 1 ? rest[1] : NULL;
            rt->sub = n > 2 ? rest[2] : NULL;
            return !rt->legacy_bindings || n == 1;
        }
    }
    if (n < 1 || n > 3)
        return false;
    rt->res = ls_api_resource_find(group, version, rest[0]);
    rt->name = n > 1 ? rest[1] : NULL;
    rt->sub = n > 2 ? rest[2] : NULL;
    return rt->res && (!rt->sub || api_resource_has_sub(rt->res, rt->sub));
}

/* ---- discovery */

static bool discovery(const char **segs, int n, int serve_as, ls_http_response *rs)
{
    cJSON *doc = NULL;
    if (n >= 2 && strcmp(segs[0], "openapi") == 0 && strcmp(segs[1], "v3") == 0) {
        char path[256] = "";
        for (int i = 2; i < n; i++)
            snprintf(path + strlen(path), sizeof path - strlen(path), "%s%s", i > 2 ? "/" : "", segs[i]);
        doc = n == 2 ? api_openapi_root(serve_as) : api_openapi_group(path, serve_as);
    } else if (n == 1 && strcmp(segs[0], "api") == 0)
        doc = api_discovery_core();
    else if (n == 1 && strcmp(segs[0], "apis") == 0)
        doc = api_discovery_groups(serve_as);
    else if (n == 2 && strcmp(segs[0], "api") == 0)
        doc = api_discovery_resources("", segs[1], serve_as);
    else if (n == 3 && strcmp(segs[0], "apis") == 0)
        doc = api_discovery_resources(segs[1], segs[2], serve_as);
    else
        return false;
    if (doc)
        respond_json(rs, 200, doc);
    else
        respond_status(rs, 404, "NotFound", "the server could not find the requested resource");
    return true;
}

/* ---- faults */

static bool inject_fault(ls_api *a, ls_http_response *rs)
{
    pthread_mutex_lock(&a->mu);
    ls_api_faults f = a->faults;
    bool error = f.error > 0 && api_rand(a) < f.error;
    bool throttle = !error && f.throttle > 0 && api_rand(a) < f.throttle;
    a->injected[API_FAULT_ERROR] += error;
    a->injected[API_FAULT_THROTTLE] += throttle;
    pthread_mutex_unlock(&a->mu);
    if (f.latency_ms) {
        struct timespec ts = {.tv_sec = f.latency_ms / 1000, .tv_nsec = (long)(f.latency_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (error) {
        respond_status(rs, 500, "InternalError", "Internal error occurred: injected fault (--fault error)");
        return true;
    }
    if (throttle) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", f.throttle_seconds);
        cJSON *st = ls_api_status(429, "TooManyRequests", "Too many requests, please try again later.");
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(st, "details"), "retryAfterSeconds", f.throttle_seconds);
        respond_json(rs, 429, st);
        ls_http_add_header(rs, "Retry-After", secs);
        return true;
    }
    return false;
}

/* ---- verbs */

static bool wants_table(const ls_http_request *rq)
{
    const char *accept = ls_http_header(rq, "Accept");
    return accept && strstr(accept, "as=Table");
}

static void list_opts(const ls_http_request *rq, ls_api_list_opts *o)
{
    memset(o, 0, sizeof *o);
    o->label_selector = ls_http_query(rq, "labelSelector");
    o->field_selector = ls_http_query(rq, "fieldSelector");
    o->resource_version = ls_http_query(rq, "resourceVersion");
    o->continue_token = ls_http_query(rq, "continue");
    const char *limit = ls_http_query(rq, "limit"), *timeout = ls_http_query(rq, "timeoutSeconds");
    const char *bm = ls_http_query(rq, "allowWatchBookmarks");
    o->limit = limit ? (uint32_t)strtoul(limit, NULL, 10) : 0;
    o->timeout_seconds = timeout ? (uint32_t)strtoul(timeout, NULL, 10) : 0;
    o->bookmarks = bm && (strcmp(bm, "true") == 0 || strcmp(bm, "1") == 0);
    const char *sie = ls_http_query(rq, "sendInitialEvents");
    o->send_initial_events = sie && strcmp(sie, "true") == 0;
    o->table = wants_table(rq);
    o->include_object = ls_http_query(rq, "includeObject");
}

static bool watch_pull(void *ud, ls_buf *out, const volatile bool *stopping)
{
    return ls_api_watch_next(ud, out, stopping);
}

static void watch_release(void *ud)
{
    ls_api_watch_free(ud);
}

static void do_get(ls_api *a, const route *rt, const ls_http_request *rq, ls_http_response *rs)
{
    ls_api_list_opts o;
    list_opts(rq, &o);
    const char *watch = ls_http_query(rq, "watch");
    cJSON *out = NULL;
    int code;
    if (!rt->name && watch && (strcmp(watch, "true") == 0 || strcmp(watch, "1") == 0)) {
        ls_api_watch *w = ls_api_watch_start(a, rt->res, rt->ns, &o, &code, &out);
        if (!w) {
            respond_json(rs, code, out);
            return;
        }
        ls_http_respond_stream(rs, 200, "application/json", watch_pull, w, watch_release);
        return;
    }
    code = rt->name ? ls_api_get(a, rt->res, rt->ns, rt->name, &out) : ls_api_list(a, rt->res, rt->ns, &o, &out);
    if (code == 200 && wants_table(rq)) {
        cJSON *t = api_table(rt->res, out, ls_http_query(rq, "includeObject"));
        cJSON_Delete(out);
        out = t;
    }
    respond_json(rs, code, out);
}

static cJSON *parse_body(const ls_http_request *rq, ls_http_response *rs)
{
    const char *ct = ls_http_header(rq, "Content-Type");
    if (ct && strstr(ct, "protobuf")) {
        respond_status(rs, 415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types include: "
                       "application/json (luasched serves JSON only: set clientConnection.contentType to "
                       "application/json)");
        return NULL;
    }
    cJSON *body = cJSON_ParseWithLength(rq->body, rq->body_len);
    if (!cJSON_IsObject(body)) {
        cJSON_Delete(body);
        respond_status(rs, 400, "BadRequest", "the request body is not a JSON object");
        return NULL;
    }
    return body;
}

static void do_post(ls_api *a, const route *rt, const ls_http_request *rq, ls_http_response *rs)
{
    cJSON *body = parse_body(rq, rs), *out = NULL;
    if (!body)
        return;
    int code;
    if (rt->legacy_bindings) {
        const char *name = ls_json_text(body, "metadata", "name");
        code = ls_api_bind(a, rt->ns, name ? name : "", body, &out);
        cJSON_Delete(body);
    } else if (rt->name && rt->sub && strcmp(rt->sub, "binding") == 0) {
        code = ls_api_bind(a, rt->ns, rt->name, body, &out);
        cJSON_Delete(body);
    } else if (!rt->name) {
        code = ls_api_create(a, rt->res, rt->ns, body, &out);
        if (code == 201)
            api_volumes_after_write(a, rt->res, out);
    } else {
        cJSON_Delete(body);
        code = api_fail(&out, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource");
    }
    respond_json(rs, code, out);
}

static void do_write(ls_api *a, const route *rt, const ls_http_request *rq, ls_http_response *rs)
{
    cJSON *out = NULL;
    bool status = rt->sub && strcmp(rt->sub, "status") == 0;
    if (!rt->name || (rt->sub && !status)) {
        respond_status(rs, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    cJSON *body = parse_body(rq, rs);
    if (!body)
        return;
    int code;
    if (strcmp(rq->method, "PUT") == 0) {
        code = ls_api_update(a, rt->res, rt->ns, rt->name, body, status, &out);
    } else {
        code = ls_api_patch(a, rt->res, rt->ns, rt->name, ls_http_header(rq, "Content-Type"), body, status, &out);
        cJSON_Delete(body);
    }
    if (code == 200)
        api_volumes_after_write(a, rt->res, out);
    respond_json(rs, code, out);
}

static void do_delete(ls_api *a, const route *rt, const ls_http_request *rq, ls_http_response *rs)
{
    if (!rt->name || rt->sub) {
        respond_status(rs, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    cJSON *opts = rq->body_len ? cJSON_ParseWithLength(rq->body, rq->body_len) : NULL;
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(opts, "dryRun")) > 0) {   /* DeleteOptions.dryRun */
        cJSON_Delete(opts);
        respond_status(rs, 400, "BadRequest", "dryRun is not supported by the luasched API server");
        return;
    }
    const char *uid = ls_json_text(opts, "preconditions", "uid");
    cJSON *out = NULL;
    int code = ls_api_delete(a, rt->res, rt->ns, rt->name, uid, &out);
    cJSON_Delete(opts);
    if (code == 200)
        api_volumes_after_write(a, rt->res, NULL);
    respond_json(rs, code, out);
}

/* The RBAC verb of a request (what the audit log records). */
static const char *rbac_verb(const route *rt, const ls_http_request *rq)
{
    const char *m = rq->method, *watch = ls_http_query(rq, "watch");
    if (strcmp(m, "GET") == 0)
        return rt->name ? "get" : watch && (strcmp(watch, "true") == 0 || strcmp(watch, "1") == 0) ? "watch" : "list";
    if (strcmp(m, "POST") == 0)
        return "create";
    if (strcmp(m, "PUT") == 0)
        return "update";
    if (strcmp(m, "PATCH") == 0)
        return "patch";
    if (strcmp(m, "DELETE") == 0)
        return rt->name ? "delete" : "deletecollection";
    return m;
}

static void resource_request(ls_api *a, api_auth *auth, char **segs, int n, const ls_http_request *rq,
                             ls_http_response *rs)
{
    route rt;
    bool ok = false;
    if (strcmp(segs[0], "api") == 0 && n >= 3)
        ok = route_rest("", segs[1], segs + 2, n - 2, &rt);
    else if (strcmp(segs[0], "apis") == 0 && n >= 4)
        ok = route_rest(segs[1], segs[2], segs + 3, n - 3, &rt);
    if (!ok || !api_served_in(rt.res->group, rt.res->version, a->serve_as)) {
        respond_status(rs, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    api_auth_audit(auth, rbac_verb(&rt, rq), rt.res->group, rt.legacy_bindings ? "bindings" : rt.res->plural,
                   rt.sub, rt.ns, rt.name);
    if (inject_fault(a, rs))
        return;
    if (strcmp(rq->method, "GET") != 0 && ls_http_query(rq, "dryRun")) {
        /* Refused rather than ignored: a dry run must never change the cluster. */
        respond_status(rs, 400, "BadRequest", "dryRun is not supported by the luasched API server");
        return;
    }
    const char *verb = rbac_verb(&rt, rq);
    if (api_resource_read_only(rt.res) && strcmp(verb, "get") != 0 && strcmp(verb, "list") != 0)
        respond_status(rs, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    else if (strcmp(rq->method, "GET") == 0)
        do_get(a, &rt, rq, rs);
    else if (strcmp(rq->method, "POST") == 0)
        do_post(a, &rt, rq, rs);
    else if (strcmp(rq->method, "PUT") == 0 || strcmp(rq->method, "PATCH") == 0)
        do_write(a, &rt, rq, rs);
    else if (strcmp(rq->method, "DELETE") == 0)
        do_delete(a, &rt, rq, rs);
    else
        respond_status(rs, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

static bool is_record_path(char **segs, int n)
{
    return n == 3 && strcmp(segs[0], "luasched") == 0 && strcmp(segs[1], "v1") == 0 && strcmp(segs[2], "record") == 0;
}

static void route_path(ls_api_server *s, char **segs, int n, const ls_http_request *rq, ls_http_response *rs)
{
    if (is_record_path(segs, n))
        respond_json(rs, 200, ls_api_record_json(s->api));
    else if (n > 0 && discovery((const char **)segs, n, s->api->serve_as, rs))
        return;
    else if (n > 0 && (strcmp(segs[0], "api") == 0 || strcmp(segs[0], "apis") == 0))
        resource_request(s->api, s->auth, segs, n, rq, rs);
    else
        respond_status(rs, 404, "NotFound", "the server could not find the requested resource");
}

/* POST /whatif: answered by the server's what-if evaluator (cli/serve_whatif.c). */
static void whatif(ls_api_server *s, const ls_http_request *rq, ls_http_response *rs)
{
    if (!s->whatif) {
        respond_status(rs, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    if (strcmp(rq->method, "POST") != 0) {
        respond_status(rs, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    int code = 500;
    char *answer = s->whatif(s->whatif_ud, rq->body, rq->body_len, &code);
    ls_http_respond_take(rs, code, "application/json", answer, strlen(answer));
}

void ls_api_server_handle(ls_api_server *s, const ls_http_request *rq, ls_http_response *rs)
{
    const char *p = rq->path;
    if (strcmp(p, "/healthz") == 0 || strcmp(p, "/livez") == 0 || strcmp(p, "/readyz") == 0) {
        respond_text(rs, 200, "ok");
        return;
    }
    if (strcmp(p, "/version") == 0) {
        respond_version(rs, s->api->serve_as);
        return;
    }
    if (!api_auth_is_admin(s->auth, rq)) {
        respond_status(rs, 401, "Unauthorized", "Unauthorized");
        return;
    }
    if (api_auth_review(s->auth, p, rq, rs))
        return;
    if (strcmp(p, "/whatif") == 0) {
        whatif(s, rq, rs);
        return;
    }
    char *path = ls_xstrdup(p);
    char *segs[MAX_SEGS];
    int n = split_path(path, segs);
    route_path(s, segs, n, rq, rs);
    free(path);
}

/* ---- lifecycle */

static void on_stop(void *ud)
{
    ls_api_stop_watches(((ls_api_server *)ud)->api);
}

static void handle(void *ud, const ls_http_request *rq, ls_http_response *rs)
{
    ls_api_server_handle(ud, rq, rs);
}

ls_api_server *ls_api_server_new(ls_api *a, const char *token)
{
    ls_api_server *s = ls_xcalloc(1, sizeof *s);
    s->api = a;
    s->auth = api_auth_new(token);
    return s;
}

ls_api_server *ls_api_serve(ls_api *a, const ls_api_serve_opts *o, ls_error *err)
{
    ls_api_server *s = ls_api_server_new(a, o->token);
    for (int i = 0; i < o->n_users; i++)
        if (!api_auth_add_user(s->auth, o->users[i], err)) {
            ls_api_server_stop(s);
            return NULL;
        }
    api_auth_set_audit(s->auth, o->audit);
    s->whatif = o->whatif;
    s->whatif_ud = o->whatif_ud;
    ls_http_server_opts ho = {.host = o->host, .port = o->port, .tls_cert_pem = o->cert_pem,
                              .tls_key_pem = o->key_pem, .handler = handle, .handler_ud = s, .on_stop = on_stop};
    s->http = ls_http_server_start(&ho, err);
    if (!s->http) {
        ls_api_server_stop(s);
        return NULL;
    }
    return s;
}

uint16_t ls_api_server_port(const ls_api_server *s)
{
    return s->http ? ls_http_server_port(s->http) : 0;
}

void ls_api_server_stop(ls_api_server *s)
{
    if (!s)
        return;
    if (s->http)
        ls_http_server_stop(s->http);
    api_auth_free(s->auth);
    free(s);
}
