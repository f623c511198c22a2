/*
 * api_auth.c: the served cluster's users, TokenReview, SubjectAccessReview
 * and audit log. See api_auth.h for the policy.
 */
#include "sim/api_auth.h"
#include "sim/apiserver.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ADMIN_USER "luasched-serve-admin"
#define MAX_GROUPS 8

typedef struct api_user {
    char *token, *name;
    char *groups[MAX_GROUPS];
    int n_groups;
} api_user;

struct api_auth {
    bool enabled;
    ls_vec users;              /* api_user; [0] is the admin */
    FILE *audit;
    pthread_mutex_t audit_mu;
};

/* upstream's system:monitoring ClusterRole: `get` on these non-resource URLs. */
static const char *const MONITORING_PATHS[] = {"/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz",
                                               "/readyz/*", "/metrics", "/metrics/slis"};

static void add_user(api_auth *a, const char *token, const char *name, size_t name_len, const char *groups)
{
    api_user *u = ls_vec_push(&a->users);
    memset(u, 0, sizeof *u);
    u->token = ls_xstrdup(token);
    u->name = ls_xstrndup(name, name_len);
    u->n_groups = (int)ls_split(groups ? groups : "", ',', u->groups, MAX_GROUPS);
}

api_auth *api_auth_new(const char *admin_token)
{
    api_auth *a = ls_xcalloc(1, sizeof *a);
    ls_vec_init(&a->users, sizeof(api_user));
    pthread_mutex_init(&a->audit_mu, NULL);
    a->enabled = admin_token != NULL;
    if (admin_token)
        add_user(a, admin_token, ADMIN_USER, strlen(ADMIN_USER), "system:masters,system:authenticated");
    return a;
}

void api_auth_free(api_auth *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->users.len; i++) {
        api_user *u = &LS_VEC_AT(&a->users, api_user, i);
        free(u->token);
        free(u->name);
        for (int g = 0; g < u->n_groups; g++)
            free(u->groups[g]);
    }
    ls_vec_free(&a->users);
    pthread_mutex_destroy(&a->audit_mu);
    free(a);
}

bool api_auth_add_user(api_auth *a, const char *spec, ls_error *err)
{
    const char *eq = strchr(spec, '=');
    const char *name = eq ? eq + 1 : NULL;
    const char *colon = name ? strchr(name, ':') : NULL;
    size_t name_len = name ? (colon ? (size_t)(colon - name) : strlen(name)) : 0;
    if (!eq || eq == spec || name_len == 0)
        return ls_errorf(err, "--serve-user: expected TOKEN=NAME[:GROUP,GROUP...], got \"%s\"", spec);
    char *token = ls_xmalloc((size_t)(eq - spec) + 1);
    memcpy(token, spec, (size_t)(eq - spec));
    token[eq - spec] = '\0';
    /* Every authenticated user is in system:authenticated, as upstream adds it. */
    char groups[512];
    snprintf(groups, sizeof groups, "%s%ssystem:authenticated", colon ? colon + 1 : "", colon ? "," : "");
    add_user(a, token, name, name_len, groups);
    free(token);
    return true;
}

void api_auth_set_audit(api_auth *a, FILE *out)
{
    a->audit = out;
}

static const char *bearer(const ls_http_request *rq)
{
    const char *h = ls_http_header(rq, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    return h + 7;
}

static bool same_token(const char *a, const char *b)
{
    size_t n = strlen(a);
    return strlen(b) == n && CRYPTO_memcmp(a, b, n) == 0;
}

static const api_user *find_user(const api_auth *a, const char *token)
{
    for (uint32_t i = 0; token && i < a->users.len; i++) {
        const api_user *u = &LS_VEC_AT(&a->users, api_user, i);
        if (same_token(u->token, token))
            return u;
    }
    return NULL;
}

bool api_auth_is_admin(const api_auth *a, const ls_http_request *rq)
{
    if (!a->enabled)
        return true;
    const api_user *u = find_user(a, bearer(rq));
    return u && u == &LS_VEC_AT(&a->users, api_user, 0);
}

void api_auth_audit(api_auth *a, const char *verb, const char *group, const char *resource, const char *sub,
                    const char *ns, const char *name)
{
    if (!a->audit)
        return;
#define OR_DASH(s) ((s) && *(s) ? (s) : "-")
    pthread_mutex_lock(&a->audit_mu);
    fprintf(a->audit, "%s %s %s %s %s %s\n", verb, OR_DASH(group), resource, OR_DASH(sub), OR_DASH(ns),
            OR_DASH(name));
    fflush(a->audit);
    pthread_mutex_unlock(&a->audit_mu);
#undef OR_DASH
}

static void respond(ls_http_response *rs, int code, cJSON *body)
{
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    ls_http_respond_take(rs, code, "application/json", text, strlen(text));
}

static cJSON *parse_review(const ls_http_request *rq, const char *kind, ls_http_response *rs)
{
    cJSON *body = cJSON_ParseWithLength(rq->body, rq->body_len);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(body, "kind");
    if (!cJSON_IsObject(body) || !cJSON_IsString(k) || strcmp(k->valuestring, kind) != 0 ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "spec"))) {
        cJSON_Delete(body);
        char msg[128];
        snprintf(msg, sizeof msg, "expected a %s object with a spec", kind);
        respond(rs, 400, ls_api_status(400, "BadRequest", msg));
        return NULL;
    }
    return body;
}

static void token_review(api_auth *a, const ls_http_request *rq, ls_http_response *rs)
{
    cJSON *review = parse_review(rq, "TokenReview", rs);
    if (!review)
        return;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(review, "spec");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(spec, "token");
    const api_user *u = find_user(a, cJSON_IsString(token) ? token->valuestring : NULL);
    cJSON *status = cJSON_AddObjectToObject(review, "status");
    cJSON_AddBoolToObject(status, "authenticated", u != NULL);
    if (u) {
        cJSON *user = cJSON_AddObjectToObject(status, "user");
        cJSON_AddStringToObject(user, "username", u->name);
        cJSON *groups = cJSON_AddArrayToObject(user, "groups");
        for (int g = 0; g < u->n_groups; g++)
            cJSON_AddItemToArray(groups, cJSON_CreateString(u->groups[g]));
        const cJSON *aud = cJSON_GetObjectItemCaseSensitive(spec, "audiences");
        if (cJSON_IsArray(aud))
            cJSON_AddItemToObject(status, "audiences", cJSON_Duplicate(aud, 1));
    }
    respond(rs, 201, review);
}

static bool in_group(const cJSON *groups, const char *name)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, groups) if (cJSON_IsString(g) && strcmp(g->valuestring, name) == 0) return true;
    return false;
}

/* upstream's non-resource URL match: exact, or a trailing "*" as a prefix. */
static bool path_matches(const char *rule, const char *path)
{
    size_t n = strlen(rule);
    if (n && rule[n - 1] == '*')
        return strncmp(rule, path, n - 1) == 0;
    return strcmp(rule, path) == 0;
}

static bool monitoring_allows(const cJSON *spec)
{
    const cJSON *nr = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nr, "path"));
    const char *verb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nr, "verb"));
    if (!path || !verb || strcmp(verb, "get") != 0)
        return false;
    for (size_t i = 0; i < sizeof MONITORING_PATHS / sizeof *MONITORING_PATHS; i++)
        if (path_matches(MONITORING_PATHS[i], path))
            return true;
    return false;
}

static void access_review(const ls_http_request *rq, ls_http_response *rs)
{
    cJSON *review = parse_review(rq, "SubjectAccessReview", rs);
    if (!review)
        return;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(review, "spec");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(spec, "groups");
    const char *reason = NULL;
    if (in_group(groups, "system:masters"))
        reason = "RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole \"cluster-admin\" to Group "
                 "\"system:masters\"";
    else if (in_group(groups, "system:monitoring") && monitoring_allows(spec))
        reason = "RBAC: allowed by ClusterRoleBinding \"system:monitoring\" of ClusterRole \"system:monitoring\" to "
                 "Group \"system:monitoring\"";
    cJSON *status = cJSON_AddObjectToObject(review, "status");
    cJSON_AddBoolToObject(status, "allowed", reason != NULL);
    if (reason)
        cJSON_AddStringToObject(status, "reason", reason);
    respond(rs, 201, review);
}

bool api_auth_review(api_auth *a, const char *path, const ls_http_request *rq, ls_http_response *rs)
{
    bool tr = strcmp(path, "/apis/authentication.k8s.io/v1/tokenreviews") == 0;
    bool sar = strcmp(path, "/apis/authorization.k8s.io/v1/subjectaccessreviews") == 0;
    if (!tr && !sar)
        return false;
    api_auth_audit(a, strcmp(rq->method, "POST") == 0 ? "create" : rq->method,
                   tr ? "authentication.k8s.io" : "authorization.k8s.io", tr ? "tokenreviews" : "subjectaccessreviews",
                   NULL, NULL, NULL);
    if (strcmp(rq->method, "POST") != 0)
        respond(rs, 405, ls_api_status(405, "MethodNotAllowed",
                                       "the server does not allow this method on the requested resource"));
    else if (tr)
        token_review(a, rq, rs);
    else
        access_review(rq, rs);
    return true;
}
