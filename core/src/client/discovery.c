/*
 * discovery.c: what the API server serves (see discovery.h). The plain
 * discovery documents every release of the supported range (v1.28 to v1.37)
 * serves: APIVersions at /api, APIGroupList at /apis, APIResourceList per
 * group version.
 */
#include "client/discovery.h"

#include "luasched/log.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gv_resources {
    char *group_version;   /* "v1", "storage.k8s.io/v1" */
    cJSON *list;           /* its APIResourceList; NULL when it could not be read */
    char *error;           /* why it could not be read; NULL otherwise */
} gv_resources;

struct ls_discovery {
    ls_kclient *client;
    char version[128];
    cJSON *core;           /* APIVersions */
    cJSON *groups;         /* APIGroupList */
    ls_vec fetched;        /* gv_resources */
    ls_vec off;            /* char *: what was turned off, "WHAT (API not served)" */
};

/* GET path as JSON: NULL with err naming the path and what came back. */
static cJSON *get_json(ls_kclient *c, const char *path, ls_error *err)
{
    ls_kresponse resp;
    ls_error why;
    if (!ls_kclient_request(c, "GET", path, NULL, NULL, 0, &resp, &why)) {
        ls_kresponse_free(&resp);
        ls_errorf(err, "discovery: GET %s: %s", path, why.msg);
        return NULL;
    }
    cJSON *doc = resp.status / 100 == 2 ? cJSON_Parse(resp.body) : NULL;
    if (resp.status / 100 != 2)
        ls_errorf(err, "discovery: GET %s: HTTP %ld", path, resp.status);
    else if (!doc)
        ls_errorf(err, "discovery: GET %s: the answer is not JSON", path);
    ls_kresponse_free(&resp);
    return doc;
}

ls_discovery *ls_discovery_fetch(ls_kclient *c, ls_error *err)
{
    ls_discovery *d = ls_xcalloc(1, sizeof *d);
    d->client = c;
    ls_vec_init(&d->fetched, sizeof(gv_resources));
    ls_vec_init(&d->off, sizeof(char *));
    ls_error ignored;
    cJSON *version = get_json(c, "/version", &ignored);
    const cJSON *git = cJSON_GetObjectItemCaseSensitive(version, "gitVersion");
    if (cJSON_IsString(git))
        snprintf(d->version, sizeof d->version, "%s", git->valuestring);
    cJSON_Delete(version);
    d->core = get_json(c, "/api", err);
    d->groups = d->core ? get_json(c, "/apis", err) : NULL;
    if (!d->groups) {
        ls_discovery_free(d);
        return NULL;
    }
    return d;
}

void ls_discovery_free(ls_discovery *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->fetched.len; i++) {
        gv_resources *g = &LS_VEC_AT(&d->fetched, gv_resources, i);
        free(g->group_version);
        free(g->error);
        cJSON_Delete(g->list);
    }
    ls_vec_free(&d->fetched);
    for (uint32_t i = 0; i < d->off.len; i++)
        free(LS_VEC_AT(&d->off, char *, i));
    ls_vec_free(&d->off);
    cJSON_Delete(d->core);
    cJSON_Delete(d->groups);
    free(d);
}

const char *ls_discovery_server_version(const ls_discovery *d)
{
    return d->version;
}

static bool has_string(const cJSON *list, const char *s)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, list) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, s) == 0)
            return true;
    }
    return false;
}

bool ls_discovery_serves_group_version(const ls_discovery *d, const char *group, const char *version)
{
    if (!group || !*group)
        return has_string(cJSON_GetObjectItemCaseSensitive(d->core, "versions"), version);
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d->groups, "groups")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, group) != 0)
            continue;
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(g, "versions")) {
            const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v, "version");
            if (cJSON_IsString(ver) && strcmp(ver->valuestring, version) == 0)
                return true;
        }
    }
    return false;
}

/* The resource list of a served group version, fetched once. */
static const gv_resources *fetch_resources(ls_discovery *d, const char *group, const char *version)
{
    char gv[300];
    snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
    for (uint32_t i = 0; i < d->fetched.len; i++) {
        const gv_resources *g = &LS_VEC_AT(&d->fetched, gv_resources, i);
        if (strcmp(g->group_version, gv) == 0)
            return g;
    }
    char path[340];
    snprintf(path, sizeof path, "%s/%s", *group ? "/apis" : "/api", gv);
    ls_error err;
    gv_resources *g = ls_vec_push(&d->fetched);
    g->group_version = ls_xstrdup(gv);
    g->list = get_json(d->client, path, &err);
    g->error = g->list ? NULL : ls_xstrdup(err.msg);
    return g;
}

/* ---- the list the worker gets */

enum { SERVED_LIST_MAX = 64 * 1024, SERVED_LIST_MAX_ENTRIES = 512 };

static void append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = ls_xrealloc(*buf, *cap);
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

char *ls_discovery_served_list(const ls_discovery *d)
{
    size_t len = 0, cap = 256;
    char *buf = ls_xmalloc(cap);
    buf[0] = '\0';
    append(&buf, &len, &cap, d->version);
    append(&buf, &len, &cap, "|");
    bool first = true;
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(d->core, "versions")) {
        if (cJSON_IsString(v)) {
            append(&buf, &len, &cap, first ? "" : ",");
            append(&buf, &len, &cap, v->valuestring);
            first = false;
        }
    }
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d->groups, "groups")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(g, "versions")) {
            const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v, "version");
            if (!cJSON_IsString(name) || !cJSON_IsString(ver))
                continue;
            append(&buf, &len, &cap, first ? "" : ",");
            append(&buf, &len, &cap, name->valuestring);
            append(&buf, &len, &cap, "/");
            append(&buf, &len, &cap, ver->valuestring);
            first = false;
        }
    }
    return buf;
}

static bool name_chars(const char *s, size_t n, bool version)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                  (version && ((c >= 'A' && c <= 'Z') || c == '+' || c == '_'));
        if (!ok)
            return false;
    }
    return true;
}

/* One "GROUP/VERSION" or "VERSION" entry into the core list or the groups. */
static bool add_entry(ls_discovery *d, const char *e, size_t n)
{
    const char *slash = memchr(e, '/', n);
    size_t glen = slash ? (size_t)(slash - e) : 0, vlen = slash ? n - glen - 1 : n;
    const char *ver = slash ? slash + 1 : e;
    if (!vlen || vlen > 63 || glen > 253 || (slash && !glen) || !name_chars(e, glen, false) ||
        !name_chars(ver, vlen, false))
        return false;
    char group[256], version[64];
    snprintf(group, sizeof group, "%.*s", (int)glen, e);
    snprintf(version, sizeof version, "%.*s", (int)vlen, ver);
    if (!slash) {
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d->core, "versions"), cJSON_CreateString(version));
        return true;
    }
    cJSON *groups = cJSON_GetObjectItemCaseSensitive(d->groups, "groups"), *g;
    cJSON_ArrayForEach(g, groups) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
        if (strcmp(name->valuestring, group) == 0)
            break;
    }
    if (!g) {
        g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", group);
        cJSON_AddArrayToObject(g, "versions");
        cJSON_AddItemToArray(groups, g);
    }
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddStringToObject(entry, "version", version);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(g, "versions"), entry);
    return true;
}

ls_discovery *ls_discovery_from_list(const char *text, ls_error *err)
{
    const char *bar = strchr(text, '|');
    size_t len = strlen(text);
    if (!bar || len > SERVED_LIST_MAX || (size_t)(bar - text) >= 128 || !name_chars(text, (size_t)(bar - text), true)) {
        ls_errorf(err, "--served-apis: expected VERSION|GROUP/VERSION,... (at most %d bytes)", SERVED_LIST_MAX);
        return NULL;
    }
    ls_discovery *d = ls_xcalloc(1, sizeof *d);
    ls_vec_init(&d->fetched, sizeof(gv_resources));
    ls_vec_init(&d->off, sizeof(char *));
    snprintf(d->version, sizeof d->version, "%.*s", (int)(bar - text), text);
    d->core = cJSON_CreateObject();
    cJSON_AddArrayToObject(d->core, "versions");
    d->groups = cJSON_CreateObject();
    cJSON_AddArrayToObject(d->groups, "groups");
    unsigned entries = 0;
    for (const char *e = bar + 1; *e;) {
        const char *comma = strchr(e, ',');
        size_t n = comma ? (size_t)(comma - e) : strlen(e);
        if (++entries > SERVED_LIST_MAX_ENTRIES || !add_entry(d, e, n)) {
            ls_errorf(err, "--served-apis: entry %u \"%.*s\": expected GROUP/VERSION or VERSION of [a-z0-9.-], at "
                      "most %d entries", entries, (int)(n > 80 ? 80 : n), e, SERVED_LIST_MAX_ENTRIES);
            ls_discovery_free(d);
            return NULL;
        }
        e = comma ? comma + 1 : e + n;
    }
    return d;
}

static const cJSON *resources_of(ls_discovery *d, const char *group, const char *version)
{
    return fetch_resources(d, group, version)->list;
}

/* The APIResource entry of a served resource, or NULL. */
static const cJSON *resource_entry(ls_discovery *d, const char *group, const char *version, const char *resource)
{
    if (!group)
        group = "";
    if (!d->client || !ls_discovery_serves_group_version(d, group, version))
        return NULL;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(resources_of(d, group, version), "resources")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, resource) == 0)
            return r;
    }
    return NULL;
}

bool ls_discovery_serves(ls_discovery *d, const char *group, const char *version, const char *resource)
{
    if (!d->client)   /* read from a list: by group version */
        return ls_discovery_serves_group_version(d, group ? group : "", version);
    return resource_entry(d, group, version, resource) != NULL;
}

const char *ls_discovery_kind(ls_discovery *d, const char *group, const char *version, const char *resource)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(resource_entry(d, group, version, resource), "kind");
    return cJSON_IsString(kind) ? kind->valuestring : NULL;
}

bool ls_discovery_serves_name(ls_discovery *d, const char *name)
{
    const char *dot1 = strchr(name, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot2)
        return true;
    char plural[256], version[64];
    snprintf(plural, sizeof plural, "%.*s", (int)(dot1 - name), name);
    snprintf(version, sizeof version, "%.*s", (int)(dot2 - dot1 - 1), dot1 + 1);
    return ls_discovery_serves(d, dot2 + 1, version, plural);
}

/* ---- what was turned off */

void ls_discovery_note_off(ls_discovery *d, const char *what, const char *group, const char *version,
                           const char *resource)
{
    if (!group)
        group = "";
    char api[400], entry[1000];
    if (resource)
        snprintf(api, sizeof api, "%s.%s%s%s", resource, version, *group ? "." : "", group);
    else
        snprintf(api, sizeof api, "%s%s%s", group, *group ? "/" : "", version);
    const gv_resources *g = d->client && ls_discovery_serves_group_version(d, group, version)
                                ? fetch_resources(d, group, version) : NULL;
    if (g && g->error)
        snprintf(entry, sizeof entry, "%s (%s: %s)", what, api, g->error);
    else
        snprintf(entry, sizeof entry, "%s (%s not served)", what, api);
    for (uint32_t i = 0; i < d->off.len; i++)
        if (strcmp(LS_VEC_AT(&d->off, char *, i), entry) == 0)
            return;
    *(char **)ls_vec_push(&d->off) = ls_xstrdup(entry);
}

uint32_t ls_discovery_off_count(const ls_discovery *d)
{
    return d->off.len;
}

char *ls_discovery_off_text(const ls_discovery *d)
{
    size_t len = 1;
    for (uint32_t i = 0; i < d->off.len; i++)
        len += strlen(LS_VEC_AT(&d->off, char *, i)) + 2;
    char *text = ls_xmalloc(len);
    text[0] = '\0';
    for (uint32_t i = 0; i < d->off.len; i++) {
        if (i)
            strcat(text, "; ");
        strcat(text, LS_VEC_AT(&d->off, char *, i));
    }
    return text;
}

void ls_discovery_warn(const ls_discovery *d)
{
    if (!d || !d->off.len)
        return;
    char *text = ls_discovery_off_text(d);
    ls_log_warning("Turning off what needs APIs the server does not serve", "serverVersion",
                   *d->version ? d->version : "unknown", "turnedOff", text);
    free(text);
}
