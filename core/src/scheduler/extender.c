/*
 * extender.c: HTTP scheduler extenders. Building them from the configuration
 * (one libcurl client each, TLS as upstream's makeTransport: with
 * enableHTTPS and no CA the server is not verified), the POST of one verb and
 * the decoding of its answer, which pods an extender is interested in
 * (managedResources), and the filter, prioritize and bind steps of a cycle.
 * Preemption's step is in extender_preempt.c.
 *
 * Upstream sources: pkg/scheduler/extender.go (HTTPExtender),
 * pkg/scheduler/schedule_one.go (findNodesThatPassExtenders, prioritizeNodes,
 * extendersBinding), pkg/scheduler/scheduler.go (buildExtenders).
 */
#include "scheduler/extender_internal.h"

#include "client/kutil.h"
#include "luasched/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building */

static bool read_pem(const char *data, size_t len, const char *file, char **out, size_t *out_len, ls_error *err)
{
    if (data && len) {
        *out = ls_xstrndup(data, len);
        *out_len = len;
        return true;
    }
    if (!file || !file[0])
        return true;
    *out = ls_kutil_read_file(file, out_len, err);
    return *out != NULL;
}

/* The client config: TLS settings (data before files, as upstream). */
static bool kubeconfig_of(const ls_extender_config *e, const char *server, ls_kubeconfig *kc, ls_error *err)
{
    memset(kc, 0, sizeof *kc);
    kc->server = ls_xstrdup(server);
    const ls_extender_tls_config *t = &e->tls;
    bool ok = read_pem(t->ca_data, t->ca_len, t->ca_file, &kc->ca_pem, &kc->ca_len, err) &&
              read_pem(t->cert_data, t->cert_len, t->cert_file, &kc->cert_pem, &kc->cert_len, err) &&
              read_pem(t->key_data, t->key_len, t->key_file, &kc->key_pem, &kc->key_len, err);
    kc->insecure = t->insecure || (e->enable_https && !kc->ca_pem);
    return ok;
}

/* In a worker process: calls go through the supervisor (docs/plugins/worker.md). */
static ls_extender_transport_fn transport;
static void *transport_ud;

void ls_extender_set_transport(ls_extender_transport_fn fn, void *ud)
{
    transport = fn;
    transport_ud = ud;
}

static bool build_one(const ls_extender_config *e, ls_extender *out, ls_error *err)
{
    out->cfg = e;
    size_t n = strlen(e->url_prefix);
    while (n > 0 && e->url_prefix[n - 1] == '/')
        n--;
    out->url = ls_xstrndup(e->url_prefix, n);
    out->timeout_ms = e->http_timeout_ns > 0 ? (long)((e->http_timeout_ns + 999999) / 1000000)
                                             : LS_DEFAULT_EXTENDER_TIMEOUT_MS;
    if (transport)   /* the supervisor holds the client and its TLS files */
        return true;
    ls_kubeconfig kc;
    bool ok = kubeconfig_of(e, out->url, &kc, err);
    if (ok) {
        /* one attempt (upstream's http.Client does not retry), no rate limit */
        ls_kclient_options o = {.qps = -1, .connect_timeout_ms = out->timeout_ms, .timeout_ms = out->timeout_ms,
                                .max_attempts = 1, .tls_server_name = e->tls.server_name};
        out->client = ls_kclient_new(&kc, &o, err);
        ok = out->client != NULL;
    }
    ls_kubeconfig_free(&kc);
    if (!ok) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        ls_errorf(err, "extender %s: %s", e->url_prefix, why);
        free(out->url);
        out->url = NULL;
    }
    return ok;
}

ls_extenders *ls_extenders_new(const ls_config *cfg, ls_error *err)
{
    if (!cfg->n_extenders)
        return NULL;
    ls_extenders *x = ls_xcalloc(1, sizeof *x);
    x->items = ls_xcalloc(cfg->n_extenders, sizeof *x->items);
    ls_vec_init(&x->candidates, sizeof(extender_candidate));
    ls_vec_init(&x->victims, sizeof(const ls_pod *));
    /* ignorable extenders go last */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < cfg->n_extenders; i++) {
            const ls_extender_config *e = &cfg->extenders[i];
            if (e->ignorable != (pass == 1))
                continue;
            if (!build_one(e, &x->items[x->n], err)) {
                ls_extenders_free(x);
                return NULL;
            }
            x->n++;
        }
    return x;
}

cJSON *ls_extenders_send_to(const ls_extenders *x, const char *url, const char *verb, const char *body, char **msg)
{
    for (uint32_t i = 0; x && i < x->n; i++) {
        const ls_extender *e = &x->items[i];
        const ls_extender_config *c = e->cfg;
        const char *verbs[] = {c->filter_verb, c->prioritize_verb, c->bind_verb, c->preempt_verb};
        if (strcmp(e->url, url) != 0)
            continue;
        for (size_t v = 0; v < 4; v++)
            if (verbs[v] && *verbs[v] && strcmp(verbs[v], verb) == 0)
                return ls_extender_send(e, verb, body, msg);
    }
    *msg = ls_extender_format("no extender at URL %s with verb %s is configured", url, verb);
    return NULL;
}

void ls_extenders_free(ls_extenders *x)
{
    if (!x)
        return;
    for (uint32_t i = 0; i < x->n; i++) {
        ls_kclient_free(x->items[i].client);
        free(x->items[i].url);
    }
    free(x->items);
    free(x->verdicts);
    free(x->scores);
    free(x->scored);
    ls_vec_free(&x->candidates);
    ls_vec_free(&x->victims);
    free(x);
}

bool ls_extender_skip_ignorable(const ls_extender *e, char **err, int v, const char *message)
{
    if (!*err || !e->cfg->ignorable)
        return false;
    ls_log_info(v, message, "extender", e->cfg->url_prefix, "err", *err);
    free(*err);
    *err = NULL;
    return true;
}

static bool verb_set(const char *verb)
{
    return verb && verb[0];
}

bool ls_extenders_have_filter(const ls_extenders *x)
{
    for (uint32_t i = 0; x && i < x->n; i++)
        if (verb_set(x->items[i].cfg->filter_verb))
            return true;
    return false;
}

bool ls_extenders_have_prioritizer(const ls_extenders *x)
{
    for (uint32_t i = 0; x && i < x->n; i++)
        if (verb_set(x->items[i].cfg->prioritize_verb))
            return true;
    return false;
}

/* ---- NodeResourcesFit's ignoredResources and the queue */

void ls_extenders_apply_ignored_resources(const ls_config *cfg, ls_profile *profiles, uint32_t n_profiles)
{
    cJSON *ignored = cJSON_CreateArray();
    for (uint32_t i = 0; i < cfg->n_extenders; i++)
        for (uint32_t j = 0; j < cfg->extenders[i].n_managed; j++)
            if (cfg->extenders[i].managed[j].ignored_by_scheduler)
                cJSON_AddItemToArray(ignored, cJSON_CreateString(cfg->extenders[i].managed[j].name));
    for (uint32_t p = 0; p < n_profiles && cJSON_GetArraySize(ignored) > 0; p++) {
        cJSON *args = cJSON_GetObjectItemCaseSensitive(profiles[p].plugin_args, "NodeResourcesFit");
        if (!args) {
            args = cJSON_CreateObject();
            cJSON_AddItemToObject(profiles[p].plugin_args, "NodeResourcesFit", args);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(args, "ignoredResources");
        cJSON_AddItemToObject(args, "ignoredResources", cJSON_Duplicate(ignored, 1));
    }
    cJSON_Delete(ignored);
}

void ls_extenders_registrations(const ls_extenders *x, uint32_t n_profiles, ls_event_registration **regs,
                                uint32_t *n)
{
    if (!x || !x->n)
        return;
    *regs = ls_xrealloc(*regs, (*n + n_profiles) * sizeof **regs);
    for (uint32_t p = 0; p < n_profiles; p++)
        (*regs)[(*n)++] = (ls_event_registration){.profile = p, .plugin = ls_intern_cstr(LS_EXTENDER_NAME),
                                                  .resource = ls_intern_cstr("*"), .actions = LS_ACT_ALL};
}

/* ---- the trace of a cycle, for output */

void ls_extenders_begin_cycle(ls_extenders *x, uint32_t num_all_nodes, bool trace)
{
    if (!x)
        return;
    x->trace = trace;
    x->num_scored = 0;
    if (!trace)
        return;
    if (num_all_nodes > x->verdicts_cap) {
        x->verdicts_cap = num_all_nodes;
        x->verdicts = ls_xrealloc(x->verdicts, num_all_nodes * sizeof *x->verdicts);
    }
    if (num_all_nodes)
        memset(x->verdicts, 0, num_all_nodes * sizeof *x->verdicts);
    if (!x->scored)
        x->scored = ls_xcalloc(x->n, 1);
    memset(x->scored, 0, x->n);
}

const char *ls_extenders_verdict(const ls_extenders *x, uint32_t node_index)
{
    if (!x || !x->trace || node_index >= x->verdicts_cap)
        return NULL;
    uint32_t v = x->verdicts[node_index];
    if (v == 0)
        return NULL;
    if (v == 1)
        return "passed";
    if (v == LS_EXTENDER_DROPPED)
        return "filtered out (the extender gave no reason)";
    return ls_status_get(v - 1)->message;
}

bool ls_extenders_score(const ls_extenders *x, uint32_t e, uint32_t i, int64_t *raw, int64_t *final)
{
    if (!x || !x->trace || e >= x->n || !x->scored[e] || i >= x->num_scored)
        return false;
    *raw = x->scores[e * x->num_scored + i].raw;
    *final = x->scores[e * x->num_scored + i].final;
    return true;
}

const char *ls_extenders_name(const ls_extenders *x, uint32_t e)
{
    return x && e < x->n ? x->items[e].cfg->url_prefix : NULL;
}

/* Filter's verdicts on the nodes one extender was asked about. */
static void trace_filter(ls_extenders *x, const ls_cycle *c, const ls_node_info *const *asked, uint32_t n_asked,
                         const ls_node_info *const *kept, uint32_t n_kept)
{
    if (!x->trace)
        return;
    for (uint32_t i = 0; i < n_asked; i++) {
        uint32_t idx = asked[i]->index;
        bool still = false;
        for (uint32_t k = 0; k < n_kept && !still; k++)
            still = kept[k] == asked[i];
        if (still) {
            if (x->verdicts[idx] == 0)
                x->verdicts[idx] = 1;
            continue;
        }
        const ls_node_status *st = &c->node_status[idx];
        x->verdicts[idx] = st->plugin == -1 && st->code != LS_SUCCESS ? st->status + 1 : LS_EXTENDER_DROPPED;
    }
}

/* ---- IsInterested */

bool ls_extender_interested(const ls_extender *e, const ls_pod *pod)
{
    const ls_extender_config *c = e->cfg;
    if (!c->n_managed)
        return true;
    /* A pod asks for an extended resource through its containers' requests
     * or limits; a limit alone is also its request (extended resources cannot
     * be overcommitted), so the pod's requests say which it names. */
    for (uint32_t j = 0; j < c->n_managed; j++) {
        int32_t slot = ls_resource_index(c->managed[j].name);
        if (slot >= 0 && pod->requests.v[slot] > 0)
            return true;
    }
    return false;
}

/* ---- the wire */

void ls_extender_add_string(ls_buf *b, const char *s)
{
    cJSON *str = cJSON_CreateString(s);
    char *text = cJSON_PrintUnformatted(str);
    ls_buf_adds(b, text);
    free(text);
    cJSON_Delete(str);
}

/* An object as the scheduler received it (its kept JSON); without one (a
 * configuration reloaded with extenders after the object arrived), its
 * identity only: the name, and for a pod the namespace and uid. */
static void add_object(ls_buf *b, const char *json, ls_str name, const char *ns, const char *uid)
{
    if (json) {
        ls_buf_adds(b, json);
        return;
    }
    ls_buf_adds(b, "{\"metadata\":{\"name\":");
    ls_extender_add_string(b, ls_str_get(name));
    if (ns) {
        ls_buf_adds(b, ",\"namespace\":");
        ls_extender_add_string(b, ns);
        ls_buf_adds(b, ",\"uid\":");
        ls_extender_add_string(b, uid);
    }
    ls_buf_adds(b, "}}");
}

void ls_extender_add_pod(ls_buf *b, const ls_pod *pod)
{
    add_object(b, ls_pod_json(pod), pod->name, ls_str_get(pod->ns), ls_str_get(pod->uid));
}

static void add_node(ls_buf *b, const ls_node *node)
{
    add_object(b, ls_node_json(node), node->name, NULL, NULL);
}

/* ExtenderArgs: the pod, and the nodes (names only when nodeCacheCapable). */
static char *extender_args(const ls_extender *e, const ls_pod *pod, const ls_node_info *const *nodes, uint32_t n)
{
    ls_buf b = {0};
    ls_buf_adds(&b, "{\"Pod\":");
    ls_extender_add_pod(&b, pod);
    if (e->cfg->node_cache_capable) {
        ls_buf_adds(&b, ",\"Nodes\":null,\"NodeNames\":[");
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                ls_buf_adds(&b, ",");
            ls_extender_add_string(&b, ls_str_get(nodes[i]->node->name));
        }
        ls_buf_adds(&b, "]}");
    } else {
        ls_buf_adds(&b, ",\"Nodes\":{\"metadata\":{},\"items\":[");
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                ls_buf_adds(&b, ",");
            add_node(&b, nodes[i]->node);
        }
        ls_buf_adds(&b, "]},\"NodeNames\":null}");
    }
    return b.data;
}

/* A message built with printf's format, of any length (caller frees). */
char *ls_extender_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *out = ls_xmalloc((size_t)(n > 0 ? n : 0) + 1);
    va_start(ap, fmt);
    vsnprintf(out, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    va_end(ap);
    return out;
}

/* Go's http.Client error for a request that got no answer. */
static char *transport_error(const char *url, const char *client_msg)
{
    /* the client's message is "POST <url>: <why>" */
    const char *why = strstr(client_msg, ": ");
    why = why ? why + 2 : client_msg;
    if (strcmp(why, "Timeout was reached") == 0)
        why = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
    return ls_extender_format("Post \"%s\": %s", url, why);
}

cJSON *ls_extender_send(const ls_extender *e, const char *verb, const char *body, char **msg)
{
    if (transport)
        return transport(transport_ud, e->url, verb, body, msg);
    char path[512];
    snprintf(path, sizeof path, "/%s", verb);
    char *url = ls_extender_format("%s/%s", e->url, verb);
    ls_krequest req = {.method = "POST", .path = path, .content_type = "application/json", .body = body,
                       .len = strlen(body)};
    ls_kresponse resp;
    ls_error err;
    cJSON *result = NULL;
    bool got = ls_kclient_do(e->client, &req, &resp, &err);
    if (!got)
        *msg = transport_error(url, err.msg);
    else if (resp.status != 200)
        *msg = ls_extender_format("failed %s with extender at URL %s, code %ld", verb, url, resp.status);
    else if (!(result = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.len)))
        *msg = ls_extender_format("decoding the answer of extender at URL %s: not valid JSON", url);
    ls_kresponse_free(&resp);
    free(url);
    return result;
}

/* Go's encoding/json matches field names case-insensitively. */
static const cJSON *field(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* ---- Filter */

static void set_failed(ls_cycle *c, const cJSON *map, const cJSON *skip, uint8_t code)
{
    if (!cJSON_IsObject(map))
        return;
    for (const cJSON *f = map->child; f; f = f->next) {
        if (skip && cJSON_GetObjectItemCaseSensitive(skip, f->string))
            continue;   /* FailedAndUnresolvableNodes takes precedence */
        const ls_node_info *ni = ls_snapshot_find(c->snapshot, ls_intern_cstr(f->string));
        if (!ni)
            continue;
        const char *text = cJSON_IsString(f) ? f->valuestring : "";
        ls_node_status *st = &c->node_status[ni->index];
        st->status = ls_status_register(code, text, strlen(text));
        st->code = code;
        st->plugin = -1;
    }
}

static const ls_node_info *find_feasible(const ls_cycle *c, uint32_t n, const char *name)
{
    ls_str id = ls_intern_cstr(name);
    for (uint32_t i = 0; i < n; i++)
        if (c->feasible[i]->node->name == id)
            return c->feasible[i];
    return NULL;
}

/* The names the extender kept (NodeNames when nodeCacheCapable and given,
 * else Nodes.items[].metadata.name), as node infos of the input list. */
static char *kept_nodes(const ls_extender *e, ls_cycle *c, const cJSON *result, const ls_node_info **kept,
                        uint32_t *n_kept)
{
    const cJSON *names = field(result, "NodeNames");
    const cJSON *nodes = field(result, "Nodes");
    const cJSON *list = e->cfg->node_cache_capable && names ? names : field(nodes, "items");
    *n_kept = 0;
    if (!list && !(e->cfg->node_cache_capable && names))
        return NULL;
    for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
        const cJSON *name = cJSON_IsString(it) ? it : field(field(it, "metadata"), "name");
        const char *text = cJSON_IsString(name) ? name->valuestring : "";
        const ls_node_info *ni = find_feasible(c, c->num_feasible, text);
        if (!ni)
            return ls_extender_format("extender \"%s\" claims a filtered node \"%s\" which is not found in the "
                                      "input node list",
                          e->cfg->url_prefix, text);
        kept[(*n_kept)++] = ni;
        if (*n_kept == c->num_feasible)
            break;
    }
    return NULL;
}

/* One extender's Filter; NULL on success, else the error. */
static char *filter_one(const ls_extender *e, ls_cycle *c, const ls_node_info **kept, uint32_t *n_kept)
{
    char *body = extender_args(e, c->pod, c->feasible, c->num_feasible);
    char *msg = NULL;
    cJSON *result = ls_extender_send(e, e->cfg->filter_verb, body, &msg);
    free(body);
    if (!result)
        return msg;
    const cJSON *error = field(result, "Error");
    if (cJSON_IsString(error) && error->valuestring[0]) {
        msg = ls_xstrdup(error->valuestring);
    } else {
        msg = kept_nodes(e, c, result, kept, n_kept);
        if (!msg) {
            const cJSON *unresolvable = field(result, "FailedAndUnresolvableNodes");
            set_failed(c, unresolvable, NULL, LS_UNRESOLVABLE);
            set_failed(c, field(result, "FailedNodes"), unresolvable, LS_UNSCHEDULABLE);
        }
    }
    cJSON_Delete(result);
    return msg;
}

bool ls_extenders_filter(ls_extenders *x, ls_cycle *c, bool *rejected, char **msg)
{
    *rejected = false;
    *msg = NULL;
    if (!x)
        return true;
    const ls_node_info **kept = ls_xmalloc((c->num_feasible + 1) * sizeof *kept);
    for (uint32_t i = 0; i < x->n && c->num_feasible > 0; i++) {
        const ls_extender *e = &x->items[i];
        if (!verb_set(e->cfg->filter_verb) || !ls_extender_interested(e, c->pod))
            continue;
        uint32_t n_kept = 0;
        char *err = filter_one(e, c, kept, &n_kept);
        if (ls_extender_skip_ignorable(e, &err, 0, "Skipping extender as it returned error and has ignorable flag set"))
            continue;
        if (err) {
            free(kept);
            *msg = err;
            return false;
        }
        trace_filter(x, c, c->feasible, c->num_feasible, kept, n_kept);
        if (n_kept != c->num_feasible)
            *rejected = true;
        memcpy(c->feasible, kept, n_kept * sizeof *kept);
        c->num_feasible = n_kept;
    }
    free(kept);
    return true;
}

/* ---- Prioritize */

static void prioritize_one(ls_extenders *x, uint32_t ei, const ls_cycle *c, int64_t *totals)
{
    const ls_extender *e = &x->items[ei];
    char *body = extender_args(e, c->pod, c->feasible, c->num_feasible);
    char *msg = NULL;
    cJSON *result = ls_extender_send(e, e->cfg->prioritize_verb, body, &msg);
    free(body);
    if (!result || !cJSON_IsArray(result)) {
        ls_log_info(5, "Failed to run extender's priority function. No score given by this extender.", "error",
                    msg ? msg : "the answer is not a HostPriorityList", "pod", ls_str_get(c->pod->name), "extender",
                    e->cfg->url_prefix);
        free(msg);
        cJSON_Delete(result);
        return;
    }
    for (const cJSON *hp = result->child; hp; hp = hp->next) {
        const cJSON *host = field(hp, "Host"), *score = field(hp, "Score");
        if (!cJSON_IsString(host) || !cJSON_IsNumber(score))
            continue;
        const ls_node_info *ni = find_feasible(c, c->num_feasible, host->valuestring);
        if (!ni)
            continue;
        int64_t raw = (int64_t)score->valuedouble;
        int64_t final = raw * e->cfg->weight * (LS_MAX_NODE_SCORE / LS_MAX_EXTENDER_PRIORITY);
        for (uint32_t i = 0; i < c->num_feasible; i++) {
            if (c->feasible[i] != ni)
                continue;
            totals[i] += final;
            if (x->trace) {
                x->scores[ei * x->num_scored + i].raw += raw;
                x->scores[ei * x->num_scored + i].final += final;
            }
        }
    }
    if (x->trace)
        x->scored[ei] = 1;
    cJSON_Delete(result);
}

/* Room for every extender's score of every feasible node, zeroed. */
static void trace_scores(ls_extenders *x, uint32_t num_feasible)
{
    x->num_scored = num_feasible;
    uint32_t need = x->n * num_feasible;
    if (need > x->scores_cap) {
        x->scores_cap = need;
        x->scores = ls_xrealloc(x->scores, need * sizeof *x->scores);
    }
    if (need)
        memset(x->scores, 0, need * sizeof *x->scores);
}

void ls_extenders_prioritize(ls_extenders *x, const ls_cycle *c, int64_t *totals)
{
    if (x && x->trace)
        trace_scores(x, c->num_feasible);
    for (uint32_t i = 0; x && i < x->n; i++) {
        const ls_extender *e = &x->items[i];
        if (verb_set(e->cfg->prioritize_verb) && ls_extender_interested(e, c->pod))
            prioritize_one(x, i, c, totals);
    }
}

/* ---- Bind */

static char *bind_one(const ls_extender *e, const ls_pod *pod, ls_str node)
{
    ls_buf b = {0};
    ls_buf_adds(&b, "{\"PodName\":");
    ls_extender_add_string(&b, ls_str_get(pod->name));
    ls_buf_adds(&b, ",\"PodNamespace\":");
    ls_extender_add_string(&b, ls_str_get(pod->ns));
    ls_buf_adds(&b, ",\"PodUID\":");
    ls_extender_add_string(&b, ls_str_get(pod->uid));
    ls_buf_adds(&b, ",\"Node\":");
    ls_extender_add_string(&b, ls_str_get(node));
    ls_buf_adds(&b, "}");
    char *msg = NULL;
    cJSON *result = ls_extender_send(e, e->cfg->bind_verb, b.data, &msg);
    ls_buf_free(&b);
    const cJSON *error = result ? field(result, "Error") : NULL;
    if (cJSON_IsString(error) && error->valuestring[0])
        msg = ls_xstrdup(error->valuestring);
    cJSON_Delete(result);
    return msg;
}

int ls_extenders_bind(ls_extenders *x, const ls_pod *pod, ls_str node, char **msg)
{
    *msg = NULL;
    for (uint32_t i = 0; x && i < x->n; i++) {
        const ls_extender *e = &x->items[i];
        if (!verb_set(e->cfg->bind_verb) || !ls_extender_interested(e, pod))
            continue;
        char *err = bind_one(e, pod, node);
        if (ls_extender_skip_ignorable(e, &err, 0,
                                       "Skipping extender in bind as it returned error and has ignorable flag set"))
            continue;
        *msg = err;
        return err ? -1 : 1;
    }
    return 0;
}
