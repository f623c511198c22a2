/*
 * config.c: KubeSchedulerConfiguration v1. Reads the file through the one
 * document loader, applies upstream's defaults and validation (gathering
 * every problem, config_fields.c has the non-profile sections), merges each
 * profile's plugin sets with the default multiPoint set (mergePluginSet), and
 * expands multiPoint into the extension points in upstream's order.
 * Over 800 lines: the default-plugin table and the plugin-set merge rules
 * are one piece of upstream's logic that the validation walks; the
 * non-profile sections and extenders are already apart (config_fields.c,
 * config_extenders.c).
 */
#include "config/config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* upstream's default v1 profile (default_plugins.go) at v1.37, in multiPoint
 * order, with what its feature gates add when on by default: DynamicResources
 * before DefaultPreemption (DRA is locked on; weight 2 as two readings of
 * upstream's applyDynamicResources give it, not verified in upstream's code)
 * and NodeDeclaredFeatures (GA and locked on in v1.37;
 * appended at the end as applyFeatureGates appends gated plugins: the v1.37
 * position could not be verified in upstream's code). luasched ships them all. */
static const struct {
    const char *name;
    int32_t weight;
} default_plugins[] = {
    {"SchedulingGates", 0},
    {"PrioritySort", 0},
    {"NodeUnschedulable", 0},
    {"NodeName", 0},
    {"TaintToleration", 3},
    {"NodeAffinity", 2},
    {"NodePorts", 0},
    {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},
    {"VolumeBinding", 0},
    {"VolumeZone", 0},
    {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},
    {"DynamicResources", 2},
    {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"DefaultBinder", 0},
    {"NodeDeclaredFeatures", 0},
};

/* Plugins removed from upstream (rejected by validation since 1.32). */
static const char *const removed_plugins[] = {"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits", NULL};

static bool listed(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* Rejects a plugin removed from upstream named at `path` (an enabled entry,
 * or a pluginConfig entry). */
static bool plugin_allowed(const parse_ctx *pc, const cJSON *at, const char *path, const char *name)
{
    if (listed(removed_plugins, name))
        return ls_cfg_problem(pc, at, path,
                              "Invalid value: \"%s\": was invalid in version \"%s\" (KubeSchedulerConfiguration is "
                              "version \"%s\")",
                              name, LS_API_VERSION, LS_API_VERSION);
    return true;
}

/* ---- profiles */

/* The config keys of the extension points, from the table, as a message
 * lists them ("preEnqueue, queueSort, ..., postBind"). */
static const char *point_keys(char *buf, size_t len)
{
    buf[0] = '\0';
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", ep ? ", " : "", ls_ext_point_info_of(ep)->config_key);
    return buf;
}

/* The extension point key `key` misspells ("multipoint", "filters"), or NULL. */
static const char *point_near(const char *key)
{
    const char *keys[LS_EP_COUNT + 1];
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        keys[ep] = ls_ext_point_info_of(ep)->config_key;
    keys[LS_EP_COUNT] = "multiPoint";
    return ls_did_you_mean(key, keys, LS_EP_COUNT + 1);
}

/* The name member of a plugins or pluginConfig entry: NULL (a problem) when it
 * is not a non-empty string. */
static const cJSON *entry_name(const parse_ctx *pc, const cJSON *e, const char *path)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (cJSON_IsString(name) && name->valuestring[0])
        return name;
    char p[300];
    ls_cfg_path(p, sizeof p, "%s.name", path);
    ls_cfg_problem(pc, e, p, "expected a plugin name");
    return NULL;
}

typedef struct plugin_list {
    ls_vec *out;   /* ls_plugin_ref when enabled, ls_str (the names) when disabled */
    bool enabled;
    ls_map *lines;   /* the profile's name -> line (errors about the plugin name it) */
} plugin_list;

static void parse_plugin_entry(const parse_ctx *pc, const cJSON *e, const char *path, void *ctx)
{
    static const char *const known[] = {"name", "weight", NULL};
    ls_vec *out = ((plugin_list *)ctx)->out;
    bool enabled = ((plugin_list *)ctx)->enabled;
    const cJSON *name;
    if (!ls_cfg_object(pc, e, path, "expected {name, weight}", known) || !(name = entry_name(pc, e, path)))
        return;
    char p[300];
    int32_t weight = 0;
    ls_cfg_path(p, sizeof p, "%s.", path);
    if (!ls_cfg_int32(pc, e, "weight", p, &weight))
        return;
    if (weight < 0) {
        ls_cfg_path(p, sizeof p, "%s.weight", path);
        ls_cfg_problem(pc, cJSON_GetObjectItemCaseSensitive(e, "weight"), p, "Invalid value: %d: must be non-negative",
                       weight);
        return;
    }
    ls_str interned = ls_intern_cstr(name->valuestring);
    ls_map *lines = ((plugin_list *)ctx)->lines;
    if (pc->doc && lines && !ls_map_get(lines, interned))
        ls_map_put(lines, interned, (void *)(uintptr_t)ls_doc_line(pc->doc, name));
    if (!enabled) {
        *(ls_str *)ls_vec_push(out) = interned;
        return;
    }
    if (!plugin_allowed(pc, name, path, name->valuestring))
        return;
    ls_plugin_ref *ref = ls_vec_push(out);
    ref->name = ls_intern_cstr(name->valuestring);
    ref->weight = weight;
}

static void parse_plugin_list(const parse_ctx *pc, const cJSON *list, const char *path, ls_vec *out, bool enabled,
                              ls_map *lines)
{
    plugin_list ctx = {out, enabled, lines};
    ls_cfg_each(pc, list, path, "{name, weight}", parse_plugin_entry, &ctx);
}

static void parse_plugin_set(const parse_ctx *pc, const cJSON *c, const char *path, plugin_set *set, ls_map *lines)
{
    static const char *const known[] = {"enabled", "disabled", NULL};
    if (!ls_cfg_object(pc, c, path, "expected an object with enabled and disabled lists", known))
        return;
    char p[300];
    ls_cfg_path(p, sizeof p, "%s.enabled", path);
    parse_plugin_list(pc, cJSON_GetObjectItemCaseSensitive(c, "enabled"), p, &set->enabled, true, lines);
    ls_cfg_path(p, sizeof p, "%s.disabled", path);
    parse_plugin_list(pc, cJSON_GetObjectItemCaseSensitive(c, "disabled"), p, &set->disabled, false, lines);
}

static void parse_plugins(const parse_ctx *pc, const cJSON *plugins, const char *path, raw_profile *rp)
{
    if (!plugins || cJSON_IsNull(plugins))
        return;
    if (!cJSON_IsObject(plugins)) {
        ls_cfg_problem(pc, plugins, path, "expected an object of extension points");
        return;
    }
    for (const cJSON *c = plugins->child; c; c = c->next) {
        int set = ls_ext_point_from_config_key(c->string);
        if (set < 0 && strcmp(c->string, "multiPoint") == 0)
            set = SET_MULTI_POINT;
        char p[300];
        ls_cfg_path(p, sizeof p, "%s.%s", path, c->string);
        if (set < 0 && ls_cfg_is_workload_point(c->string)) {
            /* kube-scheduler writes these empty ({}); a plugin in one needs
             * workload scheduling (feature gates off by default) */
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "enabled");
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "disabled");
            if (cJSON_GetArraySize(e) || cJSON_GetArraySize(d))
                ls_cfg_problem(pc, c, p, "workload scheduling extension points (GenericWorkload, "
                                         "TopologyAwareWorkloadScheduling) are not implemented");
            continue;
        }
        char keys[400], hint[120] = "";
        const char *near = set < 0 ? point_near(c->string) : NULL;
        if (near)
            snprintf(hint, sizeof hint, "; did you mean \"%s\"?", near);
        else if (strcmp(c->string, "placementFeasible") == 0)
            snprintf(hint, sizeof hint, "; placementFeasible is an extension point from v1.38, v1.37 refuses it");
        if (set < 0)
            ls_cfg_problem(pc, c, p, "unknown extension point (expected %s or multiPoint)%s",
                           point_keys(keys, sizeof keys), hint);
        else if (!cJSON_IsNull(c))
            parse_plugin_set(pc, c, p, &rp->sets[set], &rp->name_lines);
    }
}

/* The line of every field of a plugin's args ("a.b" -> line), so the args
 * check names the line of the field it rejects. */
static void record_field_lines(const parse_ctx *pc, const cJSON *obj, const char *prefix, cJSON *lines, int depth)
{
    if (depth > 16)
        return;
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (!c->string)
            continue;
        char key[300];
        int n = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", c->string);
        if (n < 0 || (size_t)n >= sizeof key)
            continue;   /* a path that long names no field a plugin declares */
        cJSON_AddNumberToObject(lines, key, ls_doc_line(pc->doc, c));
        if (cJSON_IsObject(c))
            record_field_lines(pc, c, key, lines, depth + 1);
    }
}

static void record_args_location(const parse_ctx *pc, const cJSON *args, const char *path, const char *name,
                                 ls_profile *prof)
{
    if (!prof->plugin_args_at)
        prof->plugin_args_at = cJSON_CreateObject();
    cJSON *at = cJSON_CreateObject();
    cJSON_AddStringToObject(at, "source", pc->source);
    cJSON_AddNumberToObject(at, "line", ls_doc_line(pc->doc, args));
    cJSON_AddStringToObject(at, "path", path);
    cJSON *lines = cJSON_AddObjectToObject(at, "lines");
    record_field_lines(pc, args, "", lines, 0);
    cJSON_AddItemToObject(prof->plugin_args_at, name, at);
}

/* A typed-args plugin's args name their type, if at all, as upstream's
 * decodeNestedObjects wants: kind <Name>Args of kubescheduler.config.k8s.io/v1
 * (a kind or group of another type is refused with its message; another
 * version is not registered). */
static bool typed_args_kind_ok(const parse_ctx *pc, const cJSON *args, const char *path, const char *name)
{
    bool typed = false;
    for (int i = 0; LS_CONFIG_TYPED_ARGS[i] && !typed; i++)
        typed = strcmp(LS_CONFIG_TYPED_ARGS[i], name) == 0;
    if (!typed || !cJSON_IsObject(args))
        return true;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(args, "kind");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(args, "apiVersion");
    char want[128], got_kind[128], group[128];
    snprintf(want, sizeof want, "%sArgs", name);
    snprintf(got_kind, sizeof got_kind, "%s", cJSON_IsString(kind) ? kind->valuestring : want);
    const char *version = "v1";
    snprintf(group, sizeof group, "kubescheduler.config.k8s.io");
    if (cJSON_IsString(api)) {
        const char *slash = strchr(api->valuestring, '/');
        snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - api->valuestring) : 0, api->valuestring);
        version = slash ? slash + 1 : api->valuestring;
    }
    if (strcmp(got_kind, want) != 0 || strcmp(group, "kubescheduler.config.k8s.io") != 0)
        return ls_cfg_problem(pc, args, path,
                              "args for plugin %s were not of type %s.kubescheduler.config.k8s.io, got %s%s%s", name,
                              want, got_kind, *group ? "." : "", group);
    if (strcmp(version, "v1") != 0)
        return ls_cfg_problem(pc, args, path,
                              "decoding args for plugin %s: no kind \"%s\" is registered for version \"%s/%s\"", name,
                              want, group, version);
    return true;
}

static void parse_plugin_config_entry(const parse_ctx *pc, const cJSON *e, const char *path, void *ctx)
{
    static const char *const known[] = {"name", "args", NULL};
    ls_profile *prof = ctx;
    const cJSON *name;
    if (!ls_cfg_object(pc, e, path, "expected {name, args}", known) || !(name = entry_name(pc, e, path)))
        return;
    char p[300];
    if (cJSON_GetObjectItemCaseSensitive(prof->plugin_args, name->valuestring)) {
        ls_cfg_problem(pc, name, path, "Duplicate value: \"%s\"", name->valuestring);
        return;
    }
    if (!plugin_allowed(pc, name, path, name->valuestring))
        return;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    ls_cfg_path(p, sizeof p, "%s.args", path);
    if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args)) {
        ls_cfg_problem(pc, args, p, "expected an object");
        return;
    }
    if (!typed_args_kind_ok(pc, args, p, name->valuestring))
        return;
    cJSON_AddItemToObject(prof->plugin_args, name->valuestring,
                          args && cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
    if (pc->doc && args && cJSON_IsObject(args))
        record_args_location(pc, args, p, name->valuestring, prof);
}


static void read_percentage(const parse_ctx *pc, const cJSON *obj, const char *prefix, int32_t *out)
{
    int32_t v = 0;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(obj, "percentageOfNodesToScore");
    if (!at || cJSON_IsNull(at) || !ls_cfg_int32(pc, obj, "percentageOfNodesToScore", prefix, &v))
        return;
    char path[300];
    ls_cfg_path(path, sizeof path, "%spercentageOfNodesToScore", prefix);
    if (v < 0 || v > 100)
        ls_cfg_problem(pc, at, path, "Invalid value: %d: not in valid range [0-100]", v);
    else
        *out = v;
}

static void parse_profile(const parse_ctx *pc, const cJSON *obj, int index, ls_profile *prof, raw_profile *rp)
{
    static const char *const known[] = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig",
                                        "luasched", NULL};
    char path[64], p[128];
    ls_cfg_path(path, sizeof path, "profiles[%d]", index);
    if (!ls_cfg_object(pc, obj, path, "expected an object", known))
        return;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "schedulerName");
    ls_cfg_path(p, sizeof p, "%s.schedulerName", path);
    if (name && !cJSON_IsString(name) && !cJSON_IsNull(name))
        ls_cfg_problem(pc, name, p, "expected a string");
    prof->scheduler_name = cJSON_IsString(name) ? ls_intern_cstr(name->valuestring) : 0;
    ls_cfg_path(p, sizeof p, "%s.", path);
    read_percentage(pc, obj, p, &prof->percentage_of_nodes_to_score);
    ls_cfg_path(p, sizeof p, "%s.plugins", path);
    parse_plugins(pc, cJSON_GetObjectItemCaseSensitive(obj, "plugins"), p, rp);
    ls_cfg_path(p, sizeof p, "%s.pluginConfig", path);
    ls_cfg_each(pc, cJSON_GetObjectItemCaseSensitive(obj, "pluginConfig"), p, "{name, args}", parse_plugin_config_entry,
                prof);
    ls_cfg_parse_profile_luasched(pc, obj, path, prof);
}

static void raw_profiles_free(raw_profile *rps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        for (int s = 0; s < SET_COUNT; s++) {
            ls_vec_free(&rps[i].sets[s].enabled);
            ls_vec_free(&rps[i].sets[s].disabled);
        }
        ls_map_free(&rps[i].name_lines);
    }
    free(rps);
}

static raw_profile *raw_profiles_new(uint32_t n)
{
    raw_profile *rps = ls_xcalloc(n ? n : 1, sizeof *rps);
    for (uint32_t i = 0; i < n; i++)
        ls_map_init(&rps[i].name_lines);
    for (uint32_t i = 0; i < n; i++)
        for (int s = 0; s < SET_COUNT; s++) {
            ls_vec_init(&rps[i].sets[s].enabled, sizeof(ls_plugin_ref));
            ls_vec_init(&rps[i].sets[s].disabled, sizeof(ls_str));
        }
    return rps;
}

static void profiles_new(ls_config *cfg, uint32_t n)
{
    cfg->n_profiles = n ? n : 1;
    cfg->profiles = ls_xcalloc(cfg->n_profiles, sizeof *cfg->profiles);
    cfg->raw_profiles = raw_profiles_new(cfg->n_profiles);
    for (uint32_t i = 0; i < cfg->n_profiles; i++) {
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            ls_vec_init(&cfg->profiles[i].plugins[ep], sizeof(ls_plugin_ref));
        cfg->profiles[i].percentage_of_nodes_to_score = -1;
        cfg->profiles[i].plugin_args = cJSON_CreateObject();
    }
}

/* field.Required / field.Duplicate on schedulerName; errors point at the
 * schedulerName, or at the profile that lacks one. */
static void validate_profile_names(const ls_config *cfg, const parse_ctx *pc, const cJSON *profiles)
{
    for (uint32_t a = 0; a < cfg->n_profiles; a++) {
        char path[64];
        ls_cfg_path(path, sizeof path, "profiles[%u].schedulerName", a);
        const cJSON *at = profiles ? cJSON_GetArrayItem(profiles, (int)a) : NULL;
        at = at ? ls_cfg_at(at, "schedulerName") : profiles;
        if (!cfg->profiles[a].scheduler_name || !ls_str_len(cfg->profiles[a].scheduler_name)) {
            ls_cfg_problem(pc, at, path, "Required value");
            continue;
        }
        for (uint32_t b = 0; b < a; b++)
            if (cfg->profiles[a].scheduler_name == cfg->profiles[b].scheduler_name) {
                ls_cfg_problem(pc, at, path, "Duplicate value: \"%s\"", ls_str_get(cfg->profiles[a].scheduler_name));
                break;
            }
    }
}

/* ---- queueSort the same in every profile (validateCommonQueueSort) */

static bool plugin_sets_equal(const plugin_set *a, const plugin_set *b)
{
    if (a->enabled.len != b->enabled.len || a->disabled.len != b->disabled.len)
        return false;
    for (uint32_t i = 0; i < a->enabled.len; i++) {
        const ls_plugin_ref *x = &LS_VEC_AT(&a->enabled, ls_plugin_ref, i);
        const ls_plugin_ref *y = &LS_VEC_AT(&b->enabled, ls_plugin_ref, i);
        if (x->name != y->name || x->weight != y->weight)
            return false;
    }
    for (uint32_t i = 0; i < a->disabled.len; i++)
        if (LS_VEC_AT(&a->disabled, ls_str, i) != LS_VEC_AT(&b->disabled, ls_str, i))
            return false;
    return true;
}

/* The set as JSON, for "Invalid value: ..." (upstream prints the Go struct). */
static char *plugin_set_json(const plugin_set *set)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *en = cJSON_AddArrayToObject(o, "enabled"), *dis = cJSON_AddArrayToObject(o, "disabled");
    for (uint32_t i = 0; i < set->enabled.len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(&set->enabled, ls_plugin_ref, i);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", ls_str_get(r->name));
        if (r->weight)
            cJSON_AddNumberToObject(e, "weight", r->weight);
        cJSON_AddItemToArray(en, e);
    }
    for (uint32_t i = 0; i < set->disabled.len; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", ls_str_get(LS_VEC_AT(&set->disabled, ls_str, i)));
        cJSON_AddItemToArray(dis, e);
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* The node of profiles[i].plugins.queueSort, or the nearest one written. */
static const cJSON *queue_sort_node(const cJSON *profiles, uint32_t i)
{
    const cJSON *prof = cJSON_GetArrayItem(profiles, (int)i);
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(prof, "plugins");
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(plugins, "queueSort");
    return qs ? qs : plugins ? plugins : prof;
}

static int plugin_config_index(const cJSON *profiles, uint32_t i, const char *name, const cJSON **at)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(profiles, (int)i), "pluginConfig");
    int k = 0;
    for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e; e = e->next, k++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
            *at = args ? args : e;
            return k;
        }
    }
    *at = NULL;
    return -1;
}

static void validate_queue_sort_args(const ls_config *cfg, const parse_ctx *pc, const cJSON *profiles, uint32_t i,
                                     ls_str sort)
{
    const char *name = ls_str_get(sort);
    const cJSON *mine = cJSON_GetObjectItemCaseSensitive(cfg->profiles[i].plugin_args, name);
    const cJSON *canon = cJSON_GetObjectItemCaseSensitive(cfg->profiles[0].plugin_args, name);
    cJSON *empty = cJSON_CreateObject();
    const cJSON *at;
    int k = plugin_config_index(profiles, i, name, &at);
    if (mine && !cJSON_Compare(canon ? canon : empty, mine, true)) {
        char path[96];
        ls_cfg_path(path, sizeof path, "profiles[%u].pluginConfig[%d].args", i, k);
        char *text = cJSON_PrintUnformatted(mine);
        ls_cfg_problem(pc, at, path, "Invalid value: %s: queueSort must be the same for all profiles", text);
        free(text);
    }
    cJSON_Delete(empty);
}

static void validate_queue_sort(const ls_config *cfg, const parse_ctx *pc, const cJSON *profiles)
{
    const plugin_set *canon = &cfg->raw_profiles[0].sets[LS_EP_QUEUE_SORT];
    ls_str sort = canon->enabled.len ? LS_VEC_AT(&canon->enabled, ls_plugin_ref, 0).name : 0;
    if (canon->enabled.len > 1) {
        const cJSON *qs = queue_sort_node(profiles, 0);
        ls_cfg_problem(pc, ls_cfg_at(qs, "enabled"), "profiles[0].plugins.queueSort.enabled",
                       "Invalid value: %u: only one queue sort plugin can be enabled", canon->enabled.len);
    }
    for (uint32_t i = 1; i < cfg->n_profiles; i++) {
        const plugin_set *mine = &cfg->raw_profiles[i].sets[LS_EP_QUEUE_SORT];
        if (!plugin_sets_equal(canon, mine)) {
            char path[64];
            ls_cfg_path(path, sizeof path, "profiles[%u].plugins.queueSort", i);
            char *text = plugin_set_json(mine);
            ls_cfg_problem(pc, queue_sort_node(profiles, i), path, "Invalid value: %s: must be the same for all profiles",
                           text);
            free(text);
        }
        if (sort)
            validate_queue_sort_args(cfg, pc, profiles, i, sort);
    }
}

static void parse_profiles(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    if (profiles && !cJSON_IsArray(profiles) && !cJSON_IsNull(profiles)) {
        ls_cfg_problem(pc, profiles, "profiles", "expected a list");
        profiles = NULL;
    }
    if (profiles && cJSON_IsNull(profiles))
        profiles = NULL;
    profiles_new(cfg, profiles ? (uint32_t)cJSON_GetArraySize(profiles) : 0);
    int i = 0;
    for (const cJSON *p = profiles ? profiles->child : NULL; p; p = p->next, i++)
        parse_profile(pc, p, i, &cfg->profiles[i], &cfg->raw_profiles[i]);
    if (cfg->n_profiles == 1 && !cfg->profiles[0].scheduler_name)
        cfg->profiles[0].scheduler_name = ls_intern_cstr(LS_DEFAULT_SCHEDULER);
    validate_profile_names(cfg, pc, profiles);
    validate_queue_sort(cfg, pc, profiles);
}

/* ---- the document */

/* apiVersion and kind: without them the file is not a configuration at all. */
static bool check_type(const parse_ctx *pc, const cJSON *root)
{
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!cJSON_IsString(api) || strcmp(api->valuestring, LS_API_VERSION) != 0) {
        bool beta = cJSON_IsString(api) && strncmp(api->valuestring, "kubescheduler.config.k8s.io/v1beta", 34) == 0;
        return ls_cfg_problem(pc, api ? api : root, "apiVersion", "expected \"" LS_API_VERSION "\", got %s%s",
                              cJSON_IsString(api) ? api->valuestring : "nothing",
                              beta ? " (the beta versions were removed: v1beta2 in v1.28, v1beta3 in v1.29)" : "");
    }
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "KubeSchedulerConfiguration") != 0)
        return ls_cfg_problem(pc, kind ? kind : root, "kind", "expected \"KubeSchedulerConfiguration\", got %s",
                              cJSON_IsString(kind) ? kind->valuestring : "nothing");
    return true;
}

static void parse_scalars(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    ls_cfg_int32(pc, root, "parallelism", "", &cfg->parallelism);
    ls_cfg_int64(pc, root, "podInitialBackoffSeconds", "", &cfg->pod_initial_backoff_seconds);
    ls_cfg_int64(pc, root, "podMaxBackoffSeconds", "", &cfg->pod_max_backoff_seconds);
    ls_cfg_bool(pc, root, "enableProfiling", "", &cfg->enable_profiling);
    /* contention profiling defaults to on only when profiling is */
    cfg->enable_contention_profiling = cfg->enable_profiling;
    ls_cfg_bool(pc, root, "enableContentionProfiling", "", &cfg->enable_contention_profiling);
    ls_cfg_bool(pc, root, "delayCacheUntilActive", "", &cfg->delay_cache_until_active);
    ls_cfg_string(pc, root, "healthzBindAddress", "", &cfg->healthz_bind_address);
    ls_cfg_string(pc, root, "metricsBindAddress", "", &cfg->metrics_bind_address);
}

/* What upstream validates after the profiles, in its order. */
static void validate_scalars(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    read_percentage(pc, root, "", &cfg->percentage_of_nodes_to_score);
    if (cfg->pod_initial_backoff_seconds <= 0)
        ls_cfg_problem(pc, ls_cfg_at(root, "podInitialBackoffSeconds"), "podInitialBackoffSeconds",
                       "Invalid value: %lld: must be greater than 0", (long long)cfg->pod_initial_backoff_seconds);
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds) {
        /* the line of the max if it is written, else of the initial value that exceeds the default max */
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "podMaxBackoffSeconds");
        ls_cfg_problem(pc, at ? at : ls_cfg_at(root, "podInitialBackoffSeconds"), "podMaxBackoffSeconds",
                       "Invalid value: %lld: must be greater than or equal to PodInitialBackoffSeconds",
                       (long long)cfg->pod_max_backoff_seconds);
    }
    ls_cfg_parse_extenders(cfg, pc, root);
}

static void parse_root(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    static const char *const known[] = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                                        "healthzBindAddress", "metricsBindAddress", "enableProfiling",
                                        "enableContentionProfiling", "percentageOfNodesToScore",
                                        "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                                        "delayCacheUntilActive", "luasched", NULL};
    if (!check_type(pc, root))
        return;
    ls_cfg_known_fields(pc, root, "", known);
    parse_scalars(cfg, pc, root);
    ls_cfg_parse_leader_election(cfg, pc, root);
    ls_cfg_parse_client_connection(cfg, pc, root);
    if (cfg->parallelism <= 0)   /* upstream's order: parallelism before the profiles */
        ls_cfg_problem(pc, ls_cfg_at(root, "parallelism"), "parallelism",
                       "Invalid value: %d: should be an integer value greater than zero", cfg->parallelism);
    parse_profiles(cfg, pc, root);
    validate_scalars(cfg, pc, root);
    ls_cfg_parse_luasched(cfg, pc, root);
}

bool ls_config_load(ls_config *cfg, const char *path, ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    ls_vec_init(&cfg->problems, sizeof(char *));
    ls_cfg_set_defaults(cfg);
    cfg->source = ls_arena_strdup(&cfg->text, path ? path : "<defaults>");
    parse_ctx pc = {NULL, cfg->source, &cfg->problems, err, &cfg->text};
    if (!path) {
        static const char defaults[] = "{\"apiVersion\":\"" LS_API_VERSION "\",\"kind\":\"KubeSchedulerConfiguration\"}";
        cJSON *root = cJSON_Parse(defaults);
        parse_root(cfg, &pc, root);
        cJSON_Delete(root);
        return cfg->problems.len == 0;
    }
    ls_error doc_err;
    ls_doc_set *doc = ls_doc_load_file(path, &doc_err);
    if (!doc)
        return ls_cfg_problem_plain(&cfg->problems, err, "%s", doc_err.msg);
    pc.doc = doc;
    if (ls_doc_count(doc) != 1)
        ls_cfg_problem_plain(&cfg->problems, err, "%s: expected exactly one KubeSchedulerConfiguration document, found %u",
                             path, ls_doc_count(doc));
    else
        parse_root(cfg, &pc, ls_doc_get(doc, 0));
    ls_doc_free(doc);
    if (cfg->n_extenders)
        ls_model_keep_json(true);   /* the extenders' wire format carries whole Pods and Nodes */
    return cfg->problems.len == 0;
}

/* ---- merging with the defaults and expanding multiPoint */

static bool name_in(const ls_vec *names, ls_str name)
{
    for (uint32_t i = 0; i < names->len; i++)
        if (LS_VEC_AT(names, ls_str, i) == name)
            return true;
    return false;
}

static const ls_plugin_ref *ref_in(const ls_vec *refs, ls_str name)
{
    for (uint32_t i = 0; i < refs->len; i++)
        if (LS_VEC_AT(refs, ls_plugin_ref, i).name == name)
            return &LS_VEC_AT(refs, ls_plugin_ref, i);
    return NULL;
}

/* mergePluginSet: default multiPoint entries stay in place unless disabled
 * (or replaced by the user's last entry of the same name); the other user
 * entries follow in order. Duplicates are kept, as upstream keeps them, so
 * that expansion reports the double registration. */
void ls_cfg_merge_default_multi_point(const plugin_set *user, ls_vec *out)
{
    static ls_str star;
    if (!star)
        star = ls_intern_cstr("*");
    bool *replaced = ls_xcalloc(user->enabled.len + 1, sizeof *replaced);
    if (!name_in(&user->disabled, star)) {
        for (size_t i = 0; i < sizeof default_plugins / sizeof default_plugins[0]; i++) {
            ls_str name = ls_intern_cstr(default_plugins[i].name);
            if (name_in(&user->disabled, name) || ls_config_unavailable_api(name))
                continue;
            ls_plugin_ref *slot = ls_vec_push(out);
            slot->name = name;
            slot->weight = default_plugins[i].weight;
            for (uint32_t k = user->enabled.len; k-- > 0;) {
                const ls_plugin_ref *custom = &LS_VEC_AT(&user->enabled, ls_plugin_ref, k);
                if (custom->name == name) {
                    slot->weight = custom->weight;
                    replaced[k] = true;
                    break;
                }
            }
        }
    }
    for (uint32_t i = 0; i < user->enabled.len; i++)
        if (!replaced[i])
            *(ls_plugin_ref *)ls_vec_push(out) = LS_VEC_AT(&user->enabled, ls_plugin_ref, i);
    free(replaced);
}

/* The state of one expansion: strict (the first problem stops it, in *err)
 * or gathering (problems recorded, the entry at fault left out). */
typedef struct known_plugin {
    ls_str name;
    uint32_t points;
    bool failed;
} known_plugin;

typedef struct expand_ctx {
    ls_config *cfg;
    const ls_profile *prof;
    uint32_t prof_index;
    ls_plugin_points_fn points_of;
    void *ud;
    ls_error *err;
    bool gather;
    bool any;               /* a problem was recorded */
    bool profile_failed;    /* a plugin of this profile could not be looked up */
    int line;               /* > 0: the line report() names (the plugin's name) */
    ls_vec known;           /* known_plugin, this profile */
} expand_ctx;

static bool report(expand_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records "file: profile NAME: what"; true when expansion goes on. */
static bool report(expand_ctx *x, const char *fmt, ...)
{
    char what[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    x->any = true;
    char label[64];   /* a profile without a name (already a problem) by its index */
    if (!ls_str_len(x->prof->scheduler_name))
        snprintf(label, sizeof label, "profiles[%u]", x->prof_index);
    const char *name = ls_str_len(x->prof->scheduler_name) ? ls_str_get(x->prof->scheduler_name) : label;
    char where[600];
    if (x->line > 0)
        snprintf(where, sizeof where, "%s:%d", x->cfg->source, x->line);
    else
        snprintf(where, sizeof where, "%s", x->cfg->source);
    if (x->gather)
        ls_cfg_problem_plain(&x->cfg->problems, NULL, "%s: profile %s: %s", where, name, what);
    else
        ls_errorf(x->err, "%s: profile %s: %s", where, name, what);
    return x->gather;
}

/* The extension points of a plugin, asked once per profile. False only when
 * strict expansion must stop; a plugin that cannot be looked up while
 * gathering is reported once and implements nothing. */
static bool lookup(expand_ctx *x, ls_str name, uint32_t *pts)
{
    for (uint32_t i = 0; i < x->known.len; i++) {
        const known_plugin *k = &LS_VEC_AT(&x->known, known_plugin, i);
        if (k->name == name) {
            *pts = k->points;
            return true;
        }
    }
    known_plugin *k = ls_vec_push(&x->known);
    k->name = name;
    ls_error err;
    if (!x->points_of(x->ud, ls_str_get(name), &k->points, &err)) {
        k->points = 0;
        k->failed = true;
        x->profile_failed = true;
        *pts = 0;
        const raw_profile *rp = x->cfg->raw_profiles ? &x->cfg->raw_profiles[x->prof_index] : NULL;
        x->line = rp ? (int)(uintptr_t)ls_map_get(&rp->name_lines, name) : 0;
        bool go_on = report(x, "%s", err.msg);
        x->line = 0;
        return go_on;
    }
    *pts = k->points;
    return true;
}

static bool lookup_failed(const expand_ctx *x, ls_str name)
{
    for (uint32_t i = 0; i < x->known.len; i++)
        if (LS_VEC_AT(&x->known, known_plugin, i).name == name)
            return LS_VEC_AT(&x->known, known_plugin, i).failed;
    return false;
}

static bool push_unique(expand_ctx *x, ls_vec *list, const ls_plugin_ref *r, int ep)
{
    if (ref_in(list, r->name))
        return report(x, "plugin %s already registered as %s", ls_str_get(r->name), ls_ext_point_name(ep));
    ls_plugin_ref *slot = ls_vec_push(list);
    *slot = *r;
    if (slot->weight == 0)
        slot->weight = 1;
    return true;
}

/* upstream's overridePlugins: an explicit entry that multiPoint would also
 * put at this point (listed there, implementing it, not disabled at it) */
static bool is_override(const plugin_set *set, const ls_vec *multi, bool skip_multi, ls_str name, uint32_t pts,
                        int ep)
{
    return !skip_multi && (pts & (1u << ep)) && ref_in(multi, name) && !name_in(&set->disabled, name);
}

/* (1) explicit entries that override a multiPoint entry, in their own order */
static bool expand_overrides(expand_ctx *x, const plugin_set *set, const ls_vec *multi, int ep, ls_vec *out)
{
    for (uint32_t i = 0; i < set->enabled.len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(&set->enabled, ls_plugin_ref, i);
        uint32_t pts;
        if (!lookup(x, r->name, &pts))
            return false;
        if (is_override(set, multi, false, r->name, pts, ep) && !push_unique(x, out, r, ep))
            return false;
    }
    return true;
}

/* (2) multiPoint plugins that implement this extension point, are not
 * disabled at it and are not re-configured by an explicit entry */
static bool expand_multi(expand_ctx *x, const plugin_set *set, const ls_vec *multi, int ep, ls_vec *out)
{
    for (uint32_t i = 0; i < multi->len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(multi, ls_plugin_ref, i);
        uint32_t pts;
        if (!lookup(x, r->name, &pts))
            return false;
        if (!(pts & (1u << ep)) || name_in(&set->disabled, r->name) || ref_in(&set->enabled, r->name))
            continue;
        if (!push_unique(x, out, r, ep))
            return false;
    }
    return true;
}

/* (3) the remaining explicit entries */
static bool expand_rest(expand_ctx *x, const plugin_set *set, const ls_vec *multi, bool skip_multi, int ep,
                        ls_vec *out)
{
    for (uint32_t i = 0; i < set->enabled.len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(&set->enabled, ls_plugin_ref, i);
        uint32_t pts;
        if (!lookup(x, r->name, &pts))
            return false;
        if (lookup_failed(x, r->name) || is_override(set, multi, skip_multi, r->name, pts, ep))
            continue;
        if (!(pts & (1u << ep))) {
            if (!report(x, "plugin \"%s\" does not extend %s plugin", ls_str_get(r->name), ls_ext_point_name(ep)))
                return false;
            continue;
        }
        if (!push_unique(x, out, r, ep))
            return false;
    }
    return true;
}

/* expandMultiPointPlugins for one extension point. */
static bool expand_point(expand_ctx *x, ls_profile *prof, const raw_profile *rp, const ls_vec *multi, int ep)
{
    static ls_str star;
    if (!star)
        star = ls_intern_cstr("*");
    const plugin_set *set = &rp->sets[ep];
    ls_vec *out = &prof->plugins[ep];
    bool skip_multi = name_in(&set->disabled, star);
    if (!skip_multi && (!expand_overrides(x, set, multi, ep, out) || !expand_multi(x, set, multi, ep, out)))
        return false;
    return expand_rest(x, set, multi, skip_multi, ep, out);
}

static bool check_profile(expand_ctx *x, const ls_profile *prof)
{
    /* after a plugin that could not be loaded, the counts say nothing new */
    if (x->profile_failed)
        return true;
    if (prof->plugins[LS_EP_QUEUE_SORT].len != 1 &&
        !report(x, "one queue sort plugin required for profile, got %u", prof->plugins[LS_EP_QUEUE_SORT].len))
        return false;
    if (prof->plugins[LS_EP_BIND].len == 0 && !report(x, "at least one bind plugin is needed"))
        return false;
    return true;
}

/* A plugin enabled explicitly (at any point) whose API the server does not serve. */
static bool check_available(expand_ctx *x, const raw_profile *rp)
{
    for (int set = 0; set < SET_COUNT; set++)
        for (uint32_t i = 0; i < rp->sets[set].enabled.len; i++) {
            ls_str name = LS_VEC_AT(&rp->sets[set].enabled, ls_plugin_ref, i).name;
            const char *api = ls_config_unavailable_api(name);
            if (api && !report(x, "plugin %s is enabled but needs %s, which the API server does not serve: "
                                  "remove the plugin from the profile or use a server that serves %s",
                                  ls_str_get(name), api, api))
                return false;
        }
    return true;
}

static bool expand_profile(expand_ctx *x, ls_profile *prof, const raw_profile *rp)
{
    ls_vec multi;
    ls_vec_init(&multi, sizeof(ls_plugin_ref));
    ls_vec_init(&x->known, sizeof(known_plugin));
    x->prof = prof;
    x->profile_failed = false;
    ls_cfg_merge_default_multi_point(&rp->sets[SET_MULTI_POINT], &multi);
    bool ok = check_available(x, rp);
    for (int ep = 0; ok && ep < LS_EP_COUNT; ep++)
        ok = expand_point(x, prof, rp, &multi, ep);
    ok = ok && check_profile(x, prof);
    ls_vec_free(&multi);
    ls_vec_free(&x->known);
    return ok;
}

static bool expand(ls_config *cfg, expand_ctx *x)
{
    for (uint32_t i = 0; i < cfg->n_profiles; i++) {
        ls_profile *prof = &cfg->profiles[i];
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            prof->plugins[ep].len = 0;
        x->prof_index = i;
        if (!expand_profile(x, prof, &cfg->raw_profiles[i]))
            return false;
    }
    return !x->any;
}

bool ls_config_expand(ls_config *cfg, ls_plugin_points_fn points_of, void *ud, ls_error *err)
{
    expand_ctx x = {.cfg = cfg, .points_of = points_of, .ud = ud, .err = err};
    return expand(cfg, &x);
}

bool ls_config_expand_all(ls_config *cfg, ls_plugin_points_fn points_of, void *ud)
{
    expand_ctx x = {.cfg = cfg, .points_of = points_of, .ud = ud, .gather = true};
    return expand(cfg, &x);
}

void ls_config_free(ls_config *cfg)
{
    for (uint32_t i = 0; i < cfg->n_profiles; i++) {
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            ls_vec_free(&cfg->profiles[i].plugins[ep]);
        cJSON_Delete(cfg->profiles[i].plugin_args);
        cJSON_Delete(cfg->profiles[i].plugin_args_at);
    }
    free(cfg->profiles);
    if (cfg->raw_profiles)
        raw_profiles_free(cfg->raw_profiles, cfg->n_profiles);
    ls_cfg_problems_free(&cfg->problems);
    ls_arena_free(&cfg->text);
    cJSON_Delete(cfg->completed_args);
    memset(cfg, 0, sizeof *cfg);
}

bool ls_config_default_enabled(const char *name)
{
    for (size_t i = 0; i < sizeof default_plugins / sizeof default_plugins[0]; i++)
        if (strcmp(default_plugins[i].name, name) == 0)
            return true;
    return false;
}

int32_t ls_config_profile_index(const ls_config *cfg, ls_str scheduler_name)
{
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        if (cfg->profiles[i].scheduler_name == scheduler_name)
            return (int32_t)i;
    return -1;
}
