/*
 * config_extenders.c: the `extenders:` list of a KubeSchedulerConfiguration
 * (upstream's Extender type, kubescheduler.config.k8s.io/v1): read with the
 * types upstream's strict decoder takes, validated as upstream's
 * validateExtenders (a prioritizeVerb needs weight > 0, at most one extender
 * with a bindVerb, managedResources named by valid and unique extended
 * resource names), freed, and written back in upstream's shape (omitempty
 * fields left out, httpTimeout always written, []byte fields in base64).
 *
 * Upstream's v1 defaults do not touch extenders: httpTimeout stays 0 in the
 * configuration and NewHTTPExtender uses DefaultExtenderTimeout (5 s) then.
 */
#include "client/kutil.h"
#include "config/config_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- upstream's name validation (apimachinery IsQualifiedName, IsDNS1123Subdomain) */

#define QUALIFIED_NAME_MSG                                                                                        \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "      \
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "                      \
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define DNS1123_SUBDOMAIN_MSG                                                                                     \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "    \
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "             \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

static bool qualified_name_part_ok(const char *s, size_t n)
{
    if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static bool dns_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool dns1123_subdomain_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!dns_label_char(s[i]) && s[i] != '-')
                return false;
            continue;
        }
        if (i == start || !dns_label_char(s[start]) || !dns_label_char(s[i - 1]))
            return false;
        start = i + 1;
    }
    return true;
}

/* IsQualifiedName: the first problem's message, or NULL when valid. */
static const char *qualified_name_problem(const char *v)
{
    const char *slash = strchr(v, '/');
    const char *name = v;
    if (slash) {
        if (strchr(slash + 1, '/'))
            return "a qualified name " QUALIFIED_NAME_MSG " with an optional DNS subdomain prefix and '/' (e.g. "
                   "'example.com/MyName')";
        size_t plen = (size_t)(slash - v);
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > 253)
            return "prefix part must be no more than 253 characters";
        if (!dns1123_subdomain_ok(v, plen))
            return "prefix part " DNS1123_SUBDOMAIN_MSG;
        name = slash + 1;
    }
    size_t n = strlen(name);
    if (n == 0)
        return "name part must be non-empty";
    if (n > 63)
        return "name part must be no more than 63 characters";
    if (!qualified_name_part_ok(name, n))
        return "name part " QUALIFIED_NAME_MSG;
    return NULL;
}

/* v1helper.IsExtendedResourceName. */
static bool is_extended_resource_name(const char *name)
{
    if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || strncmp(name, "requests.", 9) == 0)
        return false;
    size_t n = strlen(name) + 10;
    char *quota = ls_xmalloc(n);
    snprintf(quota, n, "requests.%s", name);
    bool ok = qualified_name_problem(quota) == NULL;
    free(quota);
    return ok;
}

/* ---- reading */

static bool read_bytes(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, char **out,
                       size_t *len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return true;
    char path[300];
    ls_cfg_path(path, sizeof path, "%s%s", prefix, key);
    if (!cJSON_IsString(v))
        return ls_cfg_problem(pc, v, path, "expected a base64 string");
    char *bytes = ls_kutil_base64_decode(v->valuestring, strlen(v->valuestring), len);
    if (!bytes)
        return ls_cfg_problem(pc, v, path, "illegal base64 data: expected standard base64 (PEM bytes)");
    *out = ls_arena_memdup(pc->text, bytes, *len + 1);
    free(bytes);
    return true;
}

static void parse_tls(const parse_ctx *pc, const cJSON *obj, const char *prefix, ls_extender_tls_config *tls)
{
    static const char *const known[] = {"insecure", "serverName", "certFile", "keyFile", "caFile",
                                        "certData", "keyData",    "caData",   NULL};
    if (!ls_cfg_object(pc, obj, prefix, "expected an object", known))
        return;
    char p[300];
    ls_cfg_path(p, sizeof p, "%s.", prefix);
    ls_cfg_bool(pc, obj, "insecure", p, &tls->insecure);
    ls_cfg_string(pc, obj, "serverName", p, &tls->server_name);
    ls_cfg_string(pc, obj, "certFile", p, &tls->cert_file);
    ls_cfg_string(pc, obj, "keyFile", p, &tls->key_file);
    ls_cfg_string(pc, obj, "caFile", p, &tls->ca_file);
    read_bytes(pc, obj, "certData", p, &tls->cert_data, &tls->cert_len);
    read_bytes(pc, obj, "keyData", p, &tls->key_data, &tls->key_len);
    read_bytes(pc, obj, "caData", p, &tls->ca_data, &tls->ca_len);
}

static void parse_managed(const parse_ctx *pc, const cJSON *list, const char *prefix, ls_extender_config *e)
{
    static const char *const known[] = {"name", "ignoredByScheduler", NULL};
    if (!list || cJSON_IsNull(list))
        return;
    if (!cJSON_IsArray(list)) {
        ls_cfg_problem(pc, list, prefix, "expected a list of {name, ignoredByScheduler}");
        return;
    }
    e->managed = ls_arena_alloc(pc->text, ((size_t)cJSON_GetArraySize(list) + 1) * sizeof *e->managed);
    int j = 0;
    for (const cJSON *r = list->child; r; r = r->next, j++) {
        char p[300];
        ls_cfg_path(p, sizeof p, "%s[%d].", prefix, j);
        if (!cJSON_IsObject(r)) {
            ls_cfg_problem(pc, r, prefix, "expected {name, ignoredByScheduler}");
            continue;
        }
        ls_cfg_known_fields(pc, r, p, known);
        ls_extender_managed_resource *m = &e->managed[e->n_managed++];
        m->name = ls_arena_strdup(pc->text, "");
        ls_cfg_string(pc, r, "name", p, &m->name);
        ls_cfg_bool(pc, r, "ignoredByScheduler", p, &m->ignored_by_scheduler);
    }
}

static void parse_timeout(const parse_ctx *pc, const cJSON *obj, const char *prefix, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "httpTimeout");
    if (!v || cJSON_IsNull(v))
        return;
    char path[300];
    ls_cfg_path(path, sizeof path, "%shttpTimeout", prefix);
    if (!cJSON_IsString(v) || !ls_go_duration_parse(v->valuestring, out))
        ls_cfg_problem(pc, v, path, "expected a duration such as \"30s\" or \"1m30s\"");
}

static void parse_one(const parse_ctx *pc, const cJSON *obj, int i, ls_extender_config *e)
{
    static const char *const known[] = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb",
                                        "weight", "bindVerb", "enableHTTPS", "tlsConfig", "httpTimeout",
                                        "nodeCacheCapable", "managedResources", "ignorable", NULL};
    char p[64], sub[96];
    ls_cfg_path(p, sizeof p, "extenders[%d].", i);
    e->url_prefix = ls_arena_strdup(pc->text, "");
    if (!cJSON_IsObject(obj)) {
        ls_cfg_path(sub, sizeof sub, "extenders[%d]", i);
        ls_cfg_problem(pc, obj, sub, "expected an object with urlPrefix and the verbs");
        return;
    }
    ls_cfg_known_fields(pc, obj, p, known);
    ls_cfg_string(pc, obj, "urlPrefix", p, &e->url_prefix);
    ls_cfg_string(pc, obj, "filterVerb", p, &e->filter_verb);
    ls_cfg_string(pc, obj, "preemptVerb", p, &e->preempt_verb);
    ls_cfg_string(pc, obj, "prioritizeVerb", p, &e->prioritize_verb);
    ls_cfg_string(pc, obj, "bindVerb", p, &e->bind_verb);
    ls_cfg_int64(pc, obj, "weight", p, &e->weight);
    ls_cfg_bool(pc, obj, "enableHTTPS", p, &e->enable_https);
    ls_cfg_bool(pc, obj, "nodeCacheCapable", p, &e->node_cache_capable);
    ls_cfg_bool(pc, obj, "ignorable", p, &e->ignorable);
    parse_timeout(pc, obj, p, &e->http_timeout_ns);
    const cJSON *tls = cJSON_GetObjectItemCaseSensitive(obj, "tlsConfig");
    if (tls && !cJSON_IsNull(tls)) {
        e->has_tls = true;
        ls_cfg_path(sub, sizeof sub, "extenders[%d].tlsConfig", i);
        parse_tls(pc, tls, sub, &e->tls);
    }
    ls_cfg_path(sub, sizeof sub, "extenders[%d].managedResources", i);
    parse_managed(pc, cJSON_GetObjectItemCaseSensitive(obj, "managedResources"), sub, e);
}

static bool verb_set(const char *verb)
{
    return verb && verb[0];
}

/* The managedResources line of entry j of extender obj, for problems. */
static const cJSON *managed_at(const cJSON *obj, int j)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, "managedResources");
    const cJSON *r = cJSON_IsArray(list) ? cJSON_GetArrayItem(list, j) : NULL;
    return r ? ls_cfg_at(r, "name") : obj;
}

/* upstream's validateExtenders, in its order. */
static void validate(const ls_config *cfg, const parse_ctx *pc, const cJSON *list)
{
    uint32_t binders = 0;
    ls_vec seen;
    ls_vec_init(&seen, sizeof(const char *));
    int i = 0;
    for (const cJSON *obj = list->child; obj; obj = obj->next, i++) {
        const ls_extender_config *e = &cfg->extenders[i];
        char p[300];
        if (verb_set(e->prioritize_verb) && e->weight <= 0) {
            ls_cfg_path(p, sizeof p, "extenders[%d].weight", i);
            ls_cfg_problem(pc, ls_cfg_at(obj, "weight"), p,
                           "Invalid value: %lld: must have a positive weight applied to it", (long long)e->weight);
        }
        if (verb_set(e->bind_verb))
            binders++;
        for (uint32_t j = 0; j < e->n_managed; j++) {
            const char *name = e->managed[j].name;
            ls_cfg_path(p, sizeof p, "extenders[%d].managedResources[%u].name", i, j);
            const char *why = qualified_name_problem(name);
            if (why)
                ls_cfg_problem(pc, managed_at(obj, (int)j), p, "Invalid value: \"%s\": %s", name, why);
            else if (!is_extended_resource_name(name))
                ls_cfg_problem(pc, managed_at(obj, (int)j), p,
                               "Invalid value: \"%s\": is an invalid extended resource name", name);
            bool dup = false;
            for (uint32_t k = 0; k < seen.len && !dup; k++)
                dup = strcmp(LS_VEC_AT(&seen, const char *, k), name) == 0;
            if (dup)
                ls_cfg_problem(pc, managed_at(obj, (int)j), p,
                               "Invalid value: \"%s\": duplicate extender managed resource name", name);
            else
                *(const char **)ls_vec_push(&seen) = name;
        }
    }
    ls_vec_free(&seen);
    if (binders > 1)
        ls_cfg_problem(pc, list, "extenders",
                       "Invalid value: \"found %u extenders implementing bind\": only one extender can implement bind",
                       binders);
}

void ls_cfg_parse_extenders(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "extenders");
    if (!list || cJSON_IsNull(list))
        return;
    if (!cJSON_IsArray(list)) {
        ls_cfg_problem(pc, list, "extenders", "expected a list of extenders");
        return;
    }
    int n = cJSON_GetArraySize(list);
    if (n == 0)
        return;
    cfg->extenders = ls_arena_alloc(pc->text, (size_t)n * sizeof *cfg->extenders);
    cfg->n_extenders = (uint32_t)n;
    int i = 0;
    for (const cJSON *obj = list->child; obj; obj = obj->next, i++)
        parse_one(pc, obj, i, &cfg->extenders[i]);
    validate(cfg, pc, list);
}


/* ---- writing */

static char *base64_encode(const char *data, size_t len)
{
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *in = (const unsigned char *)data;
    char *out = ls_xmalloc((len + 2) / 3 * 4 + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = table[(v >> 18) & 63];
        out[o++] = table[(v >> 12) & 63];
        out[o++] = i + 1 < len ? table[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? table[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static void add_string(cJSON *o, const char *key, const char *v)
{
    if (v && v[0])
        cJSON_AddStringToObject(o, key, v);
}

static void add_bytes(cJSON *o, const char *key, const char *data, size_t len)
{
    if (!data || !len)
        return;
    char *text = base64_encode(data, len);
    cJSON_AddStringToObject(o, key, text);
    free(text);
}

static cJSON *tls_json(const ls_extender_tls_config *t)
{
    cJSON *o = cJSON_CreateObject();
    if (t->insecure)
        cJSON_AddBoolToObject(o, "insecure", true);
    add_string(o, "serverName", t->server_name);
    add_string(o, "certFile", t->cert_file);
    add_string(o, "keyFile", t->key_file);
    add_string(o, "caFile", t->ca_file);
    add_bytes(o, "certData", t->cert_data, t->cert_len);
    add_bytes(o, "keyData", t->key_data, t->key_len);
    add_bytes(o, "caData", t->ca_data, t->ca_len);
    return o;
}

static cJSON *extender_json(const ls_extender_config *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "urlPrefix", e->url_prefix ? e->url_prefix : "");
    add_string(o, "filterVerb", e->filter_verb);
    add_string(o, "preemptVerb", e->preempt_verb);
    add_string(o, "prioritizeVerb", e->prioritize_verb);
    add_string(o, "bindVerb", e->bind_verb);
    if (e->weight)
        cJSON_AddNumberToObject(o, "weight", (double)e->weight);
    if (e->enable_https)
        cJSON_AddBoolToObject(o, "enableHTTPS", true);
    if (e->has_tls)
        cJSON_AddItemToObject(o, "tlsConfig", tls_json(&e->tls));
    char text[64];
    ls_go_duration_format(e->http_timeout_ns, text, sizeof text);
    cJSON_AddStringToObject(o, "httpTimeout", text);   /* a struct upstream: omitempty never leaves it out */
    if (e->node_cache_capable)
        cJSON_AddBoolToObject(o, "nodeCacheCapable", true);
    if (e->n_managed) {
        cJSON *list = cJSON_AddArrayToObject(o, "managedResources");
        for (uint32_t j = 0; j < e->n_managed; j++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "name", e->managed[j].name);
            if (e->managed[j].ignored_by_scheduler)
                cJSON_AddBoolToObject(r, "ignoredByScheduler", true);
            cJSON_AddItemToArray(list, r);
        }
    }
    if (e->ignorable)
        cJSON_AddBoolToObject(o, "ignorable", true);
    return o;
}

cJSON *ls_cfg_extenders_json(const ls_config *cfg)
{
    if (!cfg->n_extenders)
        return NULL;
    cJSON *list = cJSON_CreateArray();
    for (uint32_t i = 0; i < cfg->n_extenders; i++)
        cJSON_AddItemToArray(list, extender_json(&cfg->extenders[i]));
    return list;
}
