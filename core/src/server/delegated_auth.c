/*
 * delegated_auth.c: authentication and authorization of the health and
 * metrics server's callers. See delegated_auth.h.
 */
#include "server/delegated_auth.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum { DEFAULT_TTL_MS = 10000, CACHE_SLOTS = 256, MAX_GROUPS = 16 };

typedef struct identity {
    char *name;
    char *groups[MAX_GROUPS];
    int n_groups;
} identity;

/* One cached review: key is a SHA-256 of what was reviewed (never the token itself). */
typedef struct cache_entry {
    unsigned char key[SHA256_DIGEST_LENGTH];
    int64_t expires_ms;
    bool used, ok;
    identity who;          /* TokenReview: the user; unused for access reviews */
    char *reason;          /* SubjectAccessReview: status.reason */
} cache_entry;

typedef struct review_cache {
    pthread_mutex_t mu;
    cache_entry slots[CACHE_SLOTS];
} review_cache;

struct ls_delegated_auth {
    ls_kclient *authn, *authz;
    char **allow;          /* always-allowed paths */
    int n_allow;
    int64_t authn_ttl, allow_ttl, deny_ttl;
    bool client_certs;
    review_cache tokens, access;
    atomic_ulong reviews;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void identity_free(identity *id)
{
    free(id->name);
    for (int i = 0; i < id->n_groups; i++)
        free(id->groups[i]);
    memset(id, 0, sizeof *id);
}

static void identity_copy(identity *dst, const identity *src)
{
    dst->name = ls_xstrdup(src->name);
    dst->n_groups = src->n_groups;
    for (int i = 0; i < src->n_groups; i++)
        dst->groups[i] = ls_xstrdup(src->groups[i]);
}

static bool in_group(const identity *id, const char *group)
{
    for (int i = 0; i < id->n_groups; i++)
        if (strcmp(id->groups[i], group) == 0)
            return true;
    return false;
}

/* ---- caches */

static void cache_init(review_cache *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
}

static void entry_clear(cache_entry *e)
{
    identity_free(&e->who);
    free(e->reason);
    memset(e, 0, sizeof *e);
}

static void cache_free(review_cache *c)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        entry_clear(&c->slots[i]);
    pthread_mutex_destroy(&c->mu);
}

/* A live entry's result copied out: true when found. */
static bool cache_get(review_cache *c, const unsigned char *key, bool *ok, identity *who, char **reason)
{
    pthread_mutex_lock(&c->mu);
    cache_entry *e = &c->slots[key[0]];
    bool hit = e->used && memcmp(e->key, key, sizeof e->key) == 0 && e->expires_ms > now_ms();
    if (hit) {
        *ok = e->ok;
        if (who && e->ok)
            identity_copy(who, &e->who);
        if (reason)
            *reason = e->reason ? ls_xstrdup(e->reason) : NULL;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

static void cache_put(review_cache *c, const unsigned char *key, int64_t ttl, bool ok, const identity *who,
                      const char *reason)
{
    pthread_mutex_lock(&c->mu);
    cache_entry *e = &c->slots[key[0]];
    entry_clear(e);
    memcpy(e->key, key, sizeof e->key);
    e->used = true;
    e->ok = ok;
    e->expires_ms = now_ms() + ttl;
    if (who && ok)
        identity_copy(&e->who, who);
    e->reason = reason ? ls_xstrdup(reason) : NULL;
    pthread_mutex_unlock(&c->mu);
}

/* ---- lifecycle */

static void parse_allow(ls_delegated_auth *a, const char *list)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    a->allow = ls_xcalloc(cap, sizeof *a->allow);
    a->n_allow = (int)ls_split(list, ',', a->allow, cap);
}

ls_delegated_auth *ls_delegated_auth_new(const ls_delegated_auth_options *o)
{
    ls_delegated_auth *a = ls_xcalloc(1, sizeof *a);
    a->authn = o->authn;
    a->authz = o->authz;
    a->client_certs = o->client_certs;
    parse_allow(a, o->always_allow ? o->always_allow : LS_DEFAULT_ALWAYS_ALLOW_PATHS);
    a->authn_ttl = o->authn_ttl_ms > 0 ? o->authn_ttl_ms : DEFAULT_TTL_MS;
    a->allow_ttl = o->allow_ttl_ms > 0 ? o->allow_ttl_ms : DEFAULT_TTL_MS;
    a->deny_ttl = o->deny_ttl_ms > 0 ? o->deny_ttl_ms : DEFAULT_TTL_MS;
    cache_init(&a->tokens);
    cache_init(&a->access);
    return a;
}

void ls_delegated_auth_free(ls_delegated_auth *a)
{
    if (!a)
        return;
    ls_strv_free(a->allow, (size_t)a->n_allow);
    cache_free(&a->tokens);
    cache_free(&a->access);
    free(a);
}

uint64_t ls_delegated_auth_reviews(const ls_delegated_auth *a)
{
    return atomic_load(&a->reviews);
}

/* ---- reviews */

/* POSTs body to path; the parsed answer when the server created it (201/200). */
static cJSON *post_review(ls_delegated_auth *a, ls_kclient *c, const char *path, cJSON *body)
{
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    ls_kresponse resp;
    ls_error err;
    atomic_fetch_add(&a->reviews, 1);
    bool sent = ls_kclient_request(c, "POST", path, "application/json", text, strlen(text), &resp, &err);
    free(text);
    cJSON *out = sent && (resp.status == 201 || resp.status == 200) ? cJSON_ParseWithLength(resp.body, resp.len)
                                                                     : NULL;
    ls_kresponse_free(&resp);
    return out;
}

/* {"apiVersion": api_version, "kind": kind, "spec": {}}; *spec gets the spec to fill. */
static cJSON *review_request(const char *api_version, const char *kind, cJSON **spec)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "apiVersion", api_version);
    cJSON_AddStringToObject(body, "kind", kind);
    *spec = cJSON_AddObjectToObject(body, "spec");
    return body;
}

/* TokenReview: true with *who filled when the token is valid. */
static bool review_token(ls_delegated_auth *a, const char *token, identity *who)
{
    unsigned char key[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)token, strlen(token), key);
    bool ok;
    if (cache_get(&a->tokens, key, &ok, who, NULL))
        return ok;
    cJSON *spec, *body = review_request("authentication.k8s.io/v1", "TokenReview", &spec);
    cJSON_AddStringToObject(spec, "token", token);
    cJSON *answer = post_review(a, a->authn, "/apis/authentication.k8s.io/v1/tokenreviews", body);
    if (!answer)   /* an unreachable server is not cached: the next request asks again */
        return false;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(answer, "status");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(status, "user");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(user, "username"));
    ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "authenticated")) && name && *name;
    if (ok) {
        who->name = ls_xstrdup(name);
        const cJSON *g;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(user, "groups"))
            if (cJSON_IsString(g) && who->n_groups < MAX_GROUPS)
                who->groups[who->n_groups++] = ls_xstrdup(g->valuestring);
    }
    cache_put(&a->tokens, key, a->authn_ttl, ok, who, NULL);
    cJSON_Delete(answer);
    return ok;
}

/* Each field with its length, so that no two different requests share a key. */
static void key_field(ls_buf *b, const char *s)
{
    size_t n = strlen(s);
    ls_buf_add(b, &n, sizeof n);
    ls_buf_add(b, s, n);
}

static void access_key(const identity *who, const char *verb, const char *path, unsigned char *key)
{
    ls_buf b = {0};
    key_field(&b, who->name);
    for (int i = 0; i < who->n_groups; i++)
        key_field(&b, who->groups[i]);
    key_field(&b, verb);
    key_field(&b, path);
    SHA256((const unsigned char *)b.data, b.len, key);
    ls_buf_free(&b);
}

/* SubjectAccessReview of a non-resource request; *reason gets status.reason (may be NULL). */
static bool review_access(ls_delegated_auth *a, const identity *who, const char *verb, const char *path,
                          char **reason)
{
    unsigned char key[SHA256_DIGEST_LENGTH];
    access_key(who, verb, path, key);
    bool ok;
    if (cache_get(&a->access, key, &ok, NULL, reason))
        return ok;
    cJSON *spec, *body = review_request("authorization.k8s.io/v1", "SubjectAccessReview", &spec);
    cJSON *nr = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
    cJSON_AddStringToObject(nr, "path", path);
    cJSON_AddStringToObject(nr, "verb", verb);
    cJSON_AddStringToObject(spec, "user", who->name);
    cJSON *groups = cJSON_AddArrayToObject(spec, "groups");
    for (int i = 0; i < who->n_groups; i++)
        cJSON_AddItemToArray(groups, cJSON_CreateString(who->groups[i]));
    cJSON *answer = post_review(a, a->authz, "/apis/authorization.k8s.io/v1/subjectaccessreviews", body);
    if (!answer) {
        *reason = ls_xstrdup("the SubjectAccessReview could not be made");
        return false;
    }
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(answer, "status");
    ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "allowed")) &&
         !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "denied"));
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "reason"));
    *reason = why && *why ? ls_xstrdup(why) : NULL;
    cache_put(&a->access, key, ok ? a->allow_ttl : a->deny_ttl, ok, NULL, *reason);
    cJSON_Delete(answer);
    return ok;
}

/* ---- the decision */

static void respond_status(ls_http_response *rs, int code, const char *reason, const char *message)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "kind", "Status");
    cJSON_AddStringToObject(st, "apiVersion", "v1");
    cJSON_AddObjectToObject(st, "metadata");
    cJSON_AddStringToObject(st, "status", "Failure");
    cJSON_AddStringToObject(st, "message", message);
    cJSON_AddStringToObject(st, "reason", reason);
    if (code == 403)
        cJSON_AddObjectToObject(st, "details");
    cJSON_AddNumberToObject(st, "code", code);
    char *text = cJSON_PrintUnformatted(st);
    cJSON_Delete(st);
    ls_http_respond_take(rs, code, "application/json", text, strlen(text));
}

static bool always_allowed(const ls_delegated_auth *a, const char *path)
{
    for (int i = 0; i < a->n_allow; i++) {
        const char *p = a->allow[i];
        size_t n = strlen(p);
        if (n && p[n - 1] == '*' ? strncmp(p, path, n - 1) == 0 : strcmp(p, path) == 0)
            return true;
    }
    return false;
}

static const char *bearer_token(const ls_http_request *rq)
{
    const char *h = ls_http_header(rq, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    return *h ? h : NULL;
}

/* The verified client certificate as a user (CN, O groups): 1, 0 none, -1 a bad one. */
static int certificate_user(const ls_http_request *rq, identity *who)
{
    char *orgs[MAX_GROUPS - 1];
    int n = 0;
    int rc = ls_http_client_cert(rq, &who->name, orgs, MAX_GROUPS - 1, &n);
    if (rc != 1)
        return rc;
    for (int i = 0; i < n; i++)
        who->groups[who->n_groups++] = orgs[i];
    who->groups[who->n_groups++] = ls_xstrdup("system:authenticated");
    return 1;
}

/* Who is calling, in upstream's order (client certificate, then bearer token,
 * then anonymous): false (401 written) when the credentials do not authenticate. */
static bool authenticate(ls_delegated_auth *a, const ls_http_request *rq, identity *who, ls_http_response *rs)
{
    int cert = a->client_certs ? certificate_user(rq, who) : 0;
    if (cert == 1)
        return true;
    const char *token = a->authn ? bearer_token(rq) : NULL;
    if (token && review_token(a, token, who))
        return true;
    if (token || cert < 0) {
        respond_status(rs, 401, "Unauthorized", "Unauthorized");
        return false;
    }
    who->name = ls_xstrdup("system:anonymous");
    who->groups[who->n_groups++] = ls_xstrdup("system:unauthenticated");
    return true;
}

bool ls_delegated_auth_check(ls_delegated_auth *a, const ls_http_request *rq, ls_http_response *rs)
{
    identity who = {0};
    if (!authenticate(a, rq, &who, rs))
        return false;
    char verb[16];
    size_t i = 0;
    for (; rq->method[i] && i < sizeof verb - 1; i++)
        verb[i] = (char)tolower((unsigned char)rq->method[i]);
    verb[i] = '\0';
    char *reason = NULL;
    bool ok = always_allowed(a, rq->path) || in_group(&who, "system:masters") ||
              (a->authz && review_access(a, &who, verb, rq->path, &reason));
    if (!ok) {
        char msg[1024];
        snprintf(msg, sizeof msg, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s", who.name, verb, rq->path,
                 reason ? ": " : "", reason ? reason : "");
        respond_status(rs, 403, "Forbidden", msg);
    }
    free(reason);
    identity_free(&who);
    return ok;
}
