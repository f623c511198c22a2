/*
 * config_write.c: --write-config-to. The completed configuration as a cJSON
 * tree in upstream's shape (every default filled in, multiPoint merged with
 * the default plugins, a pluginConfig entry for every plugin that takes
 * upstream's typed args or has args in the file),
 * then printed as YAML through libyaml's emitter, or as JSON.
 *
 * Keys are in upstream's order: its YAML encoder sorts them. Where upstream's
 * v1 types omit empty values (omitempty), so does this.
 */
#include "config/config_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* ---- the tree */

static void add_duration(cJSON *obj, const char *key, int64_t ns)
{
    char text[64];
    ls_go_duration_format(ns, text, sizeof text);
    cJSON_AddStringToObject(obj, key, text);
}

static void add_leader_election(cJSON *root, const ls_leader_election_config *le)
{
    cJSON *o = cJSON_AddObjectToObject(root, "leaderElection");
    cJSON_AddBoolToObject(o, "leaderElect", le->leader_elect);
    add_duration(o, "leaseDuration", le->lease_duration_ns);
    add_duration(o, "renewDeadline", le->renew_deadline_ns);
    add_duration(o, "retryPeriod", le->retry_period_ns);
    cJSON_AddStringToObject(o, "resourceLock", le->resource_lock);
    cJSON_AddStringToObject(o, "resourceName", le->resource_name);
    cJSON_AddStringToObject(o, "resourceNamespace", le->resource_namespace);
}

static void add_client_connection(cJSON *root, const ls_client_connection_config *cc)
{
    cJSON *o = cJSON_AddObjectToObject(root, "clientConnection");
    cJSON_AddStringToObject(o, "kubeconfig", cc->kubeconfig);
    cJSON_AddStringToObject(o, "acceptContentTypes", cc->accept_content_types);
    cJSON_AddStringToObject(o, "contentType", cc->content_type);
    cJSON_AddNumberToObject(o, "qps", cc->qps);
    cJSON_AddNumberToObject(o, "burst", cc->burst);
}

static void add_luasched(cJSON *root, const ls_luasched_config *lc)
{
    if (!lc->present)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "luasched");
    cJSON *dirs = cJSON_AddArrayToObject(o, "pluginPath");
    for (uint32_t i = 0; i < lc->n_plugin_path; i++)
        cJSON_AddItemToArray(dirs, cJSON_CreateString(lc->plugin_path[i]));
    cJSON_AddNumberToObject(o, "pluginTimeoutMilliseconds", (double)lc->plugin_timeout_ms);
    cJSON_AddNumberToObject(o, "instructionBudget", (double)lc->instruction_budget);
    cJSON_AddNumberToObject(o, "memoryLimitBytes", (double)lc->memory_limit_bytes);
}

/* Every entry has its weight: upstream converts its internal plugin (a plain
 * int32) to v1's pointer, so weight 0 is written too. */
static cJSON *plugin_entry(ls_str name, int64_t weight)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", ls_str_get(name));
    cJSON_AddNumberToObject(e, "weight", (double)weight);
    return e;
}

static cJSON *set_json(const ls_vec *enabled, const ls_vec *disabled)
{
    cJSON *o = cJSON_CreateObject();
    if (enabled->len) {
        cJSON *list = cJSON_AddArrayToObject(o, "enabled");
        for (uint32_t i = 0; i < enabled->len; i++) {
            const ls_plugin_ref *r = &LS_VEC_AT(enabled, ls_plugin_ref, i);
            cJSON_AddItemToArray(list, plugin_entry(r->name, r->weight));
        }
    }
    if (disabled->len) {
        cJSON *list = cJSON_AddArrayToObject(o, "disabled");
        for (uint32_t i = 0; i < disabled->len; i++)
            cJSON_AddItemToArray(list, plugin_entry(LS_VEC_AT(disabled, ls_str, i), 0));
    }
    return o;
}

/* v1.37's: placementFeasible became a configuration extension point only in
 * v1.38 (kubernetes #141314), and v1.37's strict decoder refuses it. */
const char *const LS_CFG_WORKLOAD_POINTS[] = {"placementGenerate", "placementScore", "podGroupPostFilter", NULL};

bool ls_cfg_is_workload_point(const char *key)
{
    for (int i = 0; LS_CFG_WORKLOAD_POINTS[i]; i++)
        if (strcmp(LS_CFG_WORKLOAD_POINTS[i], key) == 0)
            return true;
    return false;
}

/* multiPoint merged with the default plugins; the other points as written.
 * Every point is written, `{}` when empty (v1's Plugins holds its sets by
 * value, which omitempty does not leave out). */
static cJSON *plugins_json(const raw_profile *rp, const ls_vec *multi)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "multiPoint", set_json(multi, &rp->sets[SET_MULTI_POINT].disabled));
    for (int s = 0; s < LS_EP_COUNT; s++) {
        const plugin_set *set = &rp->sets[s];
        cJSON_AddItemToObject(o, ls_ext_point_info_of(s)->config_key, set_json(&set->enabled, &set->disabled));
    }
    for (int i = 0; LS_CFG_WORKLOAD_POINTS[i]; i++)
        cJSON_AddObjectToObject(o, LS_CFG_WORKLOAD_POINTS[i]);
    return o;
}

/* ---- pluginConfig (upstream's SetDefaults_KubeSchedulerProfile, then the
 * framework's captured profile): an entry for each plugin enabled at some
 * point (multiPoint included, even if a point disables it) that either has
 * one in the file or takes upstream's typed args, sorted by name. */

const char *const LS_CONFIG_TYPED_ARGS[] = {
    "DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
    "NodeResourcesFit", "PodTopologySpread", "VolumeBinding", NULL,
};

static bool has_typed_args(const char *name)
{
    for (int i = 0; LS_CONFIG_TYPED_ARGS[i]; i++)
        if (strcmp(LS_CONFIG_TYPED_ARGS[i], name) == 0)
            return true;
    return false;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_name(const char ***names, uint32_t *n, uint32_t *cap, const char *name)
{
    for (uint32_t k = 0; k < *n; k++)
        if (strcmp((*names)[k], name) == 0)
            return;
    if (*n == *cap)
        *names = ls_xrealloc(*names, (*cap *= 2) * sizeof **names);
    (*names)[(*n)++] = name;
}

/* upstream's pluginsNeeded: every name enabled in a merged set, sorted. */
static uint32_t needed_plugins(const raw_profile *rp, const ls_vec *multi, const char ***out)
{
    uint32_t n = 0, cap = 16;
    const char **names = ls_xmalloc(cap * sizeof *names);
    for (uint32_t i = 0; i < multi->len; i++)
        add_name(&names, &n, &cap, ls_str_get(LS_VEC_AT(multi, ls_plugin_ref, i).name));
    for (int s = 0; s < LS_EP_COUNT; s++)
        for (uint32_t i = 0; i < rp->sets[s].enabled.len; i++)
            add_name(&names, &n, &cap, ls_str_get(LS_VEC_AT(&rp->sets[s].enabled, ls_plugin_ref, i).name));
    qsort(names, n, sizeof *names, compare_names);
    *out = names;
    return n;
}

/* v1's args types leave out empty lists and absent values (omitempty). */
static void drop_empty(cJSON *node)
{
    cJSON *c = node->child;
    while (c) {
        cJSON *next = c->next;
        if (cJSON_IsNull(c) || (cJSON_IsArray(c) && !c->child))
            cJSON_Delete(cJSON_DetachItemViaPointer(node, c));
        else if (cJSON_IsObject(c) || cJSON_IsArray(c))
            drop_empty(c);
        c = next;
    }
}

/* Typed args are completed with their defaults and carry their apiVersion
 * and kind; other plugins' args are written as given. */
static void add_plugin_config_entry(cJSON *list, const char *name, const cJSON *completed, const cJSON *given)
{
    bool typed = has_typed_args(name);
    const cJSON *args = typed ? cJSON_GetObjectItemCaseSensitive(completed, name) : NULL;
    if (!args)
        args = cJSON_GetObjectItemCaseSensitive(given, name);
    cJSON *copy = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
    if (typed && cJSON_IsObject(copy)) {
        char kind[128];
        snprintf(kind, sizeof kind, "%sArgs", name);
        drop_empty(copy);
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "apiVersion");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "kind");
        cJSON_AddStringToObject(copy, "apiVersion", LS_API_VERSION);
        cJSON_AddStringToObject(copy, "kind", kind);
    }
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddItemToObject(e, "args", copy);
    cJSON_AddItemToArray(list, e);
}

static cJSON *plugin_config_json(const ls_profile *prof, const raw_profile *rp, const ls_vec *multi,
                                 const cJSON *completed)
{
    cJSON *list = cJSON_CreateArray();
    const char **names;
    uint32_t n = needed_plugins(rp, multi, &names);
    for (uint32_t i = 0; i < n; i++)
        if (has_typed_args(names[i]) || cJSON_GetObjectItemCaseSensitive(prof->plugin_args, names[i]))
            add_plugin_config_entry(list, names[i], completed, prof->plugin_args);
    free(names);
    return list;
}

static cJSON *profile_json(const ls_config *cfg, uint32_t i)
{
    const ls_profile *prof = &cfg->profiles[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schedulerName", ls_str_get(prof->scheduler_name));
    if (prof->percentage_of_nodes_to_score >= 0)
        cJSON_AddNumberToObject(o, "percentageOfNodesToScore", prof->percentage_of_nodes_to_score);
    const raw_profile *rp = &cfg->raw_profiles[i];
    ls_vec multi;
    ls_vec_init(&multi, sizeof(ls_plugin_ref));
    ls_cfg_merge_default_multi_point(&rp->sets[SET_MULTI_POINT], &multi);
    cJSON_AddItemToObject(o, "plugins", plugins_json(rp, &multi));
    const cJSON *completed = cfg->completed_args ? cJSON_GetArrayItem(cfg->completed_args, (int)i) : NULL;
    cJSON *plugin_config = plugin_config_json(prof, rp, &multi, completed);
    if (plugin_config->child)
        cJSON_AddItemToObject(o, "pluginConfig", plugin_config);
    else
        cJSON_Delete(plugin_config);
    ls_vec_free(&multi);
    if (prof->plugin_timeout_ms || prof->instruction_budget || prof->memory_limit_set) {
        cJSON *lc = cJSON_AddObjectToObject(o, "luasched");
        if (prof->instruction_budget)
            cJSON_AddNumberToObject(lc, "instructionBudget", (double)prof->instruction_budget);
        if (prof->memory_limit_set)
            cJSON_AddNumberToObject(lc, "memoryLimitBytes", (double)prof->memory_limit_bytes);
        if (prof->plugin_timeout_ms)
            cJSON_AddNumberToObject(lc, "pluginTimeoutMilliseconds", (double)prof->plugin_timeout_ms);
    }
    return o;
}

static cJSON *config_json(const ls_config *cfg)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "apiVersion", LS_API_VERSION);
    cJSON_AddStringToObject(root, "kind", "KubeSchedulerConfiguration");
    cJSON_AddNumberToObject(root, "parallelism", cfg->parallelism);
    add_leader_election(root, &cfg->leader_election);
    add_client_connection(root, &cfg->client_connection);
    cJSON_AddBoolToObject(root, "enableProfiling", cfg->enable_profiling);
    cJSON_AddBoolToObject(root, "enableContentionProfiling", cfg->enable_contention_profiling);
    if (cfg->healthz_bind_address)
        cJSON_AddStringToObject(root, "healthzBindAddress", cfg->healthz_bind_address);
    if (cfg->metrics_bind_address)
        cJSON_AddStringToObject(root, "metricsBindAddress", cfg->metrics_bind_address);
    cJSON_AddNumberToObject(root, "percentageOfNodesToScore", cfg->percentage_of_nodes_to_score);
    cJSON_AddNumberToObject(root, "podInitialBackoffSeconds", (double)cfg->pod_initial_backoff_seconds);
    cJSON_AddNumberToObject(root, "podMaxBackoffSeconds", (double)cfg->pod_max_backoff_seconds);
    if (cfg->delay_cache_until_active)   /* omitempty upstream */
        cJSON_AddBoolToObject(root, "delayCacheUntilActive", true);
    cJSON *profiles = cJSON_AddArrayToObject(root, "profiles");
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        cJSON_AddItemToArray(profiles, profile_json(cfg, i));
    cJSON *extenders = ls_cfg_extenders_json(cfg);
    if (extenders)
        cJSON_AddItemToObject(root, "extenders", extenders);
    add_luasched(root, &cfg->luasched);
    return root;
}

/* ---- key order */

static int compare_items(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

static void sort_keys(cJSON *node)
{
    if (cJSON_IsArray(node)) {
        for (cJSON *c = node->child; c; c = c->next)
            sort_keys(c);
        return;
    }
    if (!cJSON_IsObject(node) || !node->child)
        return;
    int n = cJSON_GetArraySize(node);
    cJSON **items = ls_xmalloc((size_t)n * sizeof *items);
    for (int i = 0; i < n; i++)
        items[i] = cJSON_DetachItemViaPointer(node, node->child);
    qsort(items, (size_t)n, sizeof *items, compare_items);
    for (int i = 0; i < n; i++) {
        sort_keys(items[i]);
        cJSON_AddItemToArray(node, items[i]);   /* keeps the item's key */
    }
    free(items);
}

/* ---- YAML */

typedef struct out_buf {
    char *data;
    size_t len, cap;
} out_buf;

static int buf_write(void *ud, unsigned char *bytes, size_t n)
{
    out_buf *b = ud;
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = ls_xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 1;
}

/* Whether a plain scalar with this text would read back as something other
 * than a string (null, a boolean, a number), so it must be quoted. */
static bool looks_typed(const char *s)
{
    static const char *const words[] = {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", NULL};
    if (!*s)
        return true;
    for (int i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return true;
    char *end;
    strtod(s, &end);   /* integers of any radix, floats, .inf, .nan */
    if (*end == '\0' || strncmp(s, "0o", 2) == 0)
        return true;
    return s[0] == '.' && (strcasecmp(s + 1, "inf") == 0 || strcasecmp(s + 1, "nan") == 0);
}

/* A number as written in the source when known (the document loader keeps
 * the text, so 2^53 + 1 stays exact), else as the loader reads it back to the
 * same double. */
static void number_text(const cJSON *n, char *buf, size_t len)
{
    if (n->valuestring && n->valuestring[0] && strlen(n->valuestring) < len) {
        snprintf(buf, len, "%s", n->valuestring);
        return;
    }
    double v = n->valuedouble;
    if (v == floor(v) && fabs(v) < 9.0e15) {
        snprintf(buf, len, "%lld", (long long)v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static bool emit(yaml_emitter_t *e, yaml_event_t *ev)
{
    return yaml_emitter_emit(e, ev) != 0;
}

static bool emit_scalar(yaml_emitter_t *e, const char *text, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1, style);
    return emit(e, &ev);
}

static bool emit_node(yaml_emitter_t *e, const cJSON *node);

static bool emit_mapping(yaml_emitter_t *e, const cJSON *node)
{
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                        node->child ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
    bool ok = emit(e, &ev);
    for (const cJSON *c = node->child; ok && c; c = c->next)
        ok = emit_scalar(e, c->string, looks_typed(c->string) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE) &&
             emit_node(e, c);
    yaml_mapping_end_event_initialize(&ev);
    return ok && emit(e, &ev);
}

static bool emit_sequence(yaml_emitter_t *e, const cJSON *node)
{
    yaml_event_t ev;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                         node->child ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE);
    bool ok = emit(e, &ev);
    for (const cJSON *c = node->child; ok && c; c = c->next)
        ok = emit_node(e, c);
    yaml_sequence_end_event_initialize(&ev);
    return ok && emit(e, &ev);
}

static bool emit_node(yaml_emitter_t *e, const cJSON *node)
{
    char num[64];
    if (cJSON_IsObject(node))
        return emit_mapping(e, node);
    if (cJSON_IsArray(node))
        return emit_sequence(e, node);
    if (cJSON_IsString(node))
        return emit_scalar(e, node->valuestring,
                           looks_typed(node->valuestring) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    if (cJSON_IsNumber(node)) {
        number_text(node, num, sizeof num);
        return emit_scalar(e, num, YAML_PLAIN_SCALAR_STYLE);
    }
    if (cJSON_IsBool(node))
        return emit_scalar(e, cJSON_IsTrue(node) ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
    return emit_scalar(e, "null", YAML_PLAIN_SCALAR_STYLE);
}

static bool emit_document(yaml_emitter_t *e, const cJSON *root)
{
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (!emit(e, &ev))
        return false;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if (!emit(e, &ev) || !emit_node(e, root))
        return false;
    yaml_document_end_event_initialize(&ev, 1);
    if (!emit(e, &ev))
        return false;
    yaml_stream_end_event_initialize(&ev);
    return emit(e, &ev);
}

static char *to_yaml(const cJSON *root, ls_error *err)
{
    out_buf b = {0};
    yaml_emitter_t e;
    yaml_emitter_initialize(&e);
    yaml_emitter_set_output(&e, buf_write, &b);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    bool ok = emit_document(&e, root);
    if (!ok)
        ls_errorf(err, "writing YAML: %s", e.problem ? e.problem : "emitter error");
    yaml_emitter_delete(&e);
    if (!ok) {
        free(b.data);
        return NULL;
    }
    return b.data ? b.data : ls_xstrdup("");
}

char *ls_config_format(const ls_config *cfg, bool json, ls_error *err)
{
    cJSON *root = config_json(cfg);
    sort_keys(root);
    char *text;
    if (json) {
        char *printed = cJSON_Print(root);
        size_t n = strlen(printed);
        text = ls_xmalloc(n + 2);
        memcpy(text, printed, n);
        memcpy(text + n, "\n", 2);
        free(printed);
    } else {
        text = to_yaml(root, err);
    }
    cJSON_Delete(root);
    return text;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool ls_config_write(const ls_config *cfg, const char *path, ls_error *err)
{
    bool to_stdout = strcmp(path, "-") == 0;
    char *text = ls_config_format(cfg, !to_stdout && ends_with(path, ".json"), err);
    if (!text)
        return false;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    bool ok = f != NULL;
    if (!f)
        ls_errorf(err, "%s: cannot write file: %s", path, strerror(errno));
    else
        ok = fputs(text, f) >= 0;
    if (f && !to_stdout && fclose(f) != 0)
        ok = false;
    if (f && !ok)
        ls_errorf(err, "%s: cannot write file: %s", path, strerror(errno));
    if (to_stdout)
        fflush(stdout);
    free(text);
    return ok;
}
