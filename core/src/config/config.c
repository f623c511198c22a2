/*
 * config.c: KubeSchedulerConfiguration v1. Reads the file through the one
 * document loader, applies upstream's defaults, merges each profile's plugin
 * sets with the default multiPoint set (mergePluginSet), and expands
 * multiPoint into the extension points in upstream's order.
 */
#include "luasched/config.h"
#include "model/doc.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LS_API_VERSION "kubescheduler.config.k8s.io/v1"
#define LS_DEFAULT_SCHEDULER "default-scheduler"

/* upstream's default v1 profile (default_plugins.go), in multiPoint order.
 * `implemented` marks what luasched ships today; the others are left out of
 * the built-in default until their plugins exist, and naming them in a file is
 * an error from the plugin loader. */
static const struct {
    const char *name;
    int32_t weight;
    bool implemented;
} default_plugins[] = {
    {"SchedulingGates", 0, true},
    {"PrioritySort", 0, true},
    {"NodeUnschedulable", 0, true},
    {"NodeName", 0, true},
    {"TaintToleration", 3, true},
    {"NodeAffinity", 2, true},
    {"NodePorts", 0, true},
    {"NodeResourcesFit", 1, true},
    {"VolumeRestrictions", 0, false},
    {"NodeVolumeLimits", 0, false},
    {"VolumeBinding", 0, false},
    {"VolumeZone", 0, false},
    {"PodTopologySpread", 2, true},
    {"InterPodAffinity", 2, true},
    {"DefaultPreemption", 0, true},
    {"NodeResourcesBalancedAllocation", 1, true},
    {"ImageLocality", 1, true},
    {"DefaultBinder", 0, true},
};

enum { SET_MULTI_POINT = LS_EP_COUNT, SET_COUNT };

typedef struct plugin_set {
    ls_vec enabled;    /* ls_plugin_ref */
    ls_vec disabled;   /* ls_str */
} plugin_set;

typedef struct raw_profile {
    plugin_set sets[SET_COUNT];
} raw_profile;

typedef struct parse_ctx {
    const ls_doc_set *doc;
    const char *source;
    ls_error *err;
} parse_ctx;

static bool field_error(const parse_ctx *pc, const cJSON *item, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool field_error(const parse_ctx *pc, const cJSON *item, const char *path, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line = pc->doc && item ? ls_doc_line(pc->doc, item) : 0;
    if (line)
        return ls_errorf(pc->err, "%s:%d: %s: %s", pc->source, line, path, what);
    return ls_errorf(pc->err, "%s: %s: %s", pc->source, path, what);
}

static bool read_int(const parse_ctx *pc, const cJSON *obj, const char *key, const char *path,
                     int32_t lo, int32_t hi, int32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return true;
    char full[256];
    snprintf(full, sizeof full, "%s%s", path, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble)
        return field_error(pc, v, full, "expected an integer");
    if (v->valuedouble < lo || v->valuedouble > hi)
        return field_error(pc, v, full, "must be in the range [%d, %d], got %.0f", lo, hi, v->valuedouble);
    *out = (int32_t)v->valuedouble;
    return true;
}

static bool parse_plugin_list(const parse_ctx *pc, const cJSON *list, const char *path, ls_vec *out,
                              bool with_weight)
{
    if (!list || cJSON_IsNull(list))
        return true;
    if (!cJSON_IsArray(list))
        return field_error(pc, list, path, "expected a list of {name, weight}");
    int i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%d].name", path, i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return field_error(pc, e, p, "expected a plugin name");
        if (with_weight) {
            ls_plugin_ref *ref = ls_vec_push(out);
            ref->name = ls_intern_cstr(name->valuestring);
            snprintf(p, sizeof p, "%s[%d].", path, i);
            if (!read_int(pc, e, "weight", p, 0, 100000, &ref->weight))
                return false;
        } else {
            *(ls_str *)ls_vec_push(out) = ls_intern_cstr(name->valuestring);
        }
    }
    return true;
}

static bool parse_plugins(const parse_ctx *pc, const cJSON *plugins, const char *path, raw_profile *rp)
{
    if (!plugins || cJSON_IsNull(plugins))
        return true;
    if (!cJSON_IsObject(plugins))
        return field_error(pc, plugins, path, "expected an object of extension points");
    for (const cJSON *c = plugins->child; c; c = c->next) {
        int set = ls_ext_point_from_config_key(c->string);
        if (set < 0 && strcmp(c->string, "multiPoint") == 0)
            set = SET_MULTI_POINT;
        char p[256];
        snprintf(p, sizeof p, "%s.%s", path, c->string);
        if (set < 0)
            return field_error(pc, c, p, "unknown extension point (expected preEnqueue, queueSort, preFilter, "
                                         "filter, postFilter, preScore, score, reserve, permit, preBind, bind, "
                                         "postBind or multiPoint)");
        if (!cJSON_IsObject(c))
            return field_error(pc, c, p, "expected an object with enabled and disabled lists");
        char pe[300], pd[300];
        snprintf(pe, sizeof pe, "%s.enabled", p);
        snprintf(pd, sizeof pd, "%s.disabled", p);
        if (!parse_plugin_list(pc, cJSON_GetObjectItemCaseSensitive(c, "enabled"), pe, &rp->sets[set].enabled, true))
            return false;
        if (!parse_plugin_list(pc, cJSON_GetObjectItemCaseSensitive(c, "disabled"), pd, &rp->sets[set].disabled,
                               false))
            return false;
    }
    return true;
}

static bool parse_plugin_config(const parse_ctx *pc, const cJSON *list, const char *path, ls_profile *prof)
{
    prof->plugin_args = cJSON_CreateObject();
    if (!list || cJSON_IsNull(list))
        return true;
    if (!cJSON_IsArray(list))
        return field_error(pc, list, path, "expected a list of {name, args}");
    int i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%d].name", path, i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return field_error(pc, e, p, "expected a plugin name");
        if (cJSON_GetObjectItemCaseSensitive(prof->plugin_args, name->valuestring))
            return field_error(pc, name, p, "Duplicate value: \"%s\"", name->valuestring);
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        snprintf(p, sizeof p, "%s[%d].args", path, i);
        if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
            return field_error(pc, args, p, "expected an object");
        cJSON_AddItemToObject(prof->plugin_args, name->valuestring,
                              args && cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
    }
    return true;
}

static bool parse_profile(const parse_ctx *pc, const cJSON *obj, int index, ls_profile *prof, raw_profile *rp)
{
    char path[64];
    snprintf(path, sizeof path, "profiles[%d]", index);
    if (!cJSON_IsObject(obj))
        return field_error(pc, obj, path, "expected an object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "schedulerName");
    if (name && !cJSON_IsString(name) && !cJSON_IsNull(name))
        return field_error(pc, name, path, "schedulerName: expected a string");
    prof->scheduler_name = cJSON_IsString(name) ? ls_intern_cstr(name->valuestring) : 0;
    char p[128];
    snprintf(p, sizeof p, "%s.", path);
    prof->percentage_of_nodes_to_score = -1;
    if (!read_int(pc, obj, "percentageOfNodesToScore", p, 0, 100, &prof->percentage_of_nodes_to_score))
        return false;
    snprintf(p, sizeof p, "%s.plugins", path);
    if (!parse_plugins(pc, cJSON_GetObjectItemCaseSensitive(obj, "plugins"), p, rp))
        return false;
    snprintf(p, sizeof p, "%s.pluginConfig", path);
    return parse_plugin_config(pc, cJSON_GetObjectItemCaseSensitive(obj, "pluginConfig"), p, prof);
}

static void set_defaults(ls_config *cfg)
{
    cfg->parallelism = 16;
    cfg->percentage_of_nodes_to_score = 0;
    cfg->pod_initial_backoff_seconds = 1;
    cfg->pod_max_backoff_seconds = 10;
}

static void raw_profiles_free(raw_profile *rps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (int s = 0; s < SET_COUNT; s++) {
            ls_vec_free(&rps[i].sets[s].enabled);
            ls_vec_free(&rps[i].sets[s].disabled);
        }
    free(rps);
}

static raw_profile *raw_profiles_new(uint32_t n)
{
    raw_profile *rps = ls_xcalloc(n ? n : 1, sizeof *rps);
    for (uint32_t i = 0; i < n; i++)
        for (int s = 0; s < SET_COUNT; s++) {
            ls_vec_init(&rps[i].sets[s].enabled, sizeof(ls_plugin_ref));
            ls_vec_init(&rps[i].sets[s].disabled, sizeof(ls_str));
        }
    return rps;
}

static bool check_top_level(const parse_ctx *pc, const cJSON *root)
{
    static const char *known[] = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                                  "healthzBindAddress", "metricsBindAddress", "enableProfiling",
                                  "enableContentionProfiling", "percentageOfNodesToScore",
                                  "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                                  "delayCacheUntilActive", NULL};
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!cJSON_IsString(api) || strcmp(api->valuestring, LS_API_VERSION) != 0)
        return field_error(pc, api ? api : root, "apiVersion", "expected \"" LS_API_VERSION "\", got %s",
                           cJSON_IsString(api) ? api->valuestring : "nothing");
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "KubeSchedulerConfiguration") != 0)
        return field_error(pc, kind ? kind : root, "kind", "expected \"KubeSchedulerConfiguration\"");
    for (const cJSON *c = root->child; c; c = c->next) {
        bool ok = false;
        for (int i = 0; known[i]; i++)
            ok = ok || strcmp(c->string, known[i]) == 0;
        if (!ok)
            return field_error(pc, c, c->string, "unknown field");
    }
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(root, "extenders");
    if (cJSON_IsArray(ext) && cJSON_GetArraySize(ext) > 0)
        return field_error(pc, ext, "extenders", "scheduler extenders are not supported by luasched");
    return true;
}

static bool parse_root(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    if (!check_top_level(pc, root))
        return false;
    if (!read_int(pc, root, "parallelism", "", 1, 1 << 20, &cfg->parallelism) ||
        !read_int(pc, root, "percentageOfNodesToScore", "", 0, 100, &cfg->percentage_of_nodes_to_score) ||
        !read_int(pc, root, "podInitialBackoffSeconds", "", 1, 1 << 30, &cfg->pod_initial_backoff_seconds) ||
        !read_int(pc, root, "podMaxBackoffSeconds", "", 1, 1 << 30, &cfg->pod_max_backoff_seconds))
        return false;
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds) {
        /* the line of the max if it is written, else of the initial value that exceeds the default max */
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "podMaxBackoffSeconds");
        if (!at)
            at = cJSON_GetObjectItemCaseSensitive(root, "podInitialBackoffSeconds");
        return field_error(pc, at ? at : root, "podMaxBackoffSeconds",
                           "must be greater than or equal to podInitialBackoffSeconds");
    }
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    if (profiles && !cJSON_IsArray(profiles))
        return field_error(pc, profiles, "profiles", "expected a list");
    uint32_t n = profiles ? (uint32_t)cJSON_GetArraySize(profiles) : 0;
    cfg->n_profiles = n ? n : 1;
    cfg->profiles = ls_xcalloc(cfg->n_profiles, sizeof *cfg->profiles);
    cfg->raw_profiles = raw_profiles_new(cfg->n_profiles);
    raw_profile *raw = cfg->raw_profiles;
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            ls_vec_init(&cfg->profiles[i].plugins[ep], sizeof(ls_plugin_ref));
    if (!n) {
        cfg->profiles[0].percentage_of_nodes_to_score = -1;
        cfg->profiles[0].plugin_args = cJSON_CreateObject();
    }
    int i = 0;
    for (const cJSON *p = profiles ? profiles->child : NULL; p; p = p->next, i++)
        if (!parse_profile(pc, p, i, &cfg->profiles[i], &raw[i]))
            return false;
    if (cfg->n_profiles == 1 && !cfg->profiles[0].scheduler_name)
        cfg->profiles[0].scheduler_name = ls_intern_cstr(LS_DEFAULT_SCHEDULER);
    for (uint32_t a = 0; a < cfg->n_profiles; a++) {
        char path[64];
        snprintf(path, sizeof path, "profiles[%u].schedulerName", a);
        /* errors point at the schedulerName, or at the profile that lacks one */
        const cJSON *at = profiles ? cJSON_GetArrayItem(profiles, (int)a) : NULL;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(at, "schedulerName");
        if (name)
            at = name;
        if (!cfg->profiles[a].scheduler_name || !ls_str_len(cfg->profiles[a].scheduler_name))
            return field_error(pc, at, path, "Required value");
        for (uint32_t b = 0; b < a; b++)
            if (cfg->profiles[a].scheduler_name == cfg->profiles[b].scheduler_name)
                return field_error(pc, at, path, "Duplicate value: \"%s\"",
                                   ls_str_get(cfg->profiles[a].scheduler_name));
    }
    return true;
}

bool ls_config_load(ls_config *cfg, const char *path, ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    set_defaults(cfg);
    cfg->source = ls_xstrdup(path ? path : "<defaults>");
    if (!path) {
        static const char defaults[] = "{\"apiVersion\":\"" LS_API_VERSION "\",\"kind\":\"KubeSchedulerConfiguration\"}";
        cJSON *root = cJSON_Parse(defaults);
        parse_ctx pc = {NULL, cfg->source, err};
        bool ok = parse_root(cfg, &pc, root);
        cJSON_Delete(root);
        return ok;
    }
    ls_doc_set *doc = ls_doc_load_file(path, err);
    if (!doc)
        return false;
    parse_ctx pc = {doc, path, err};
    bool ok;
    if (ls_doc_count(doc) != 1)
        ok = ls_errorf(err, "%s: expected exactly one KubeSchedulerConfiguration document, found %u", path,
                       ls_doc_count(doc));
    else
        ok = parse_root(cfg, &pc, ls_doc_get(doc, 0));
    ls_doc_free(doc);
    return ok;
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
static void merge_default_multi_point(plugin_set *user, ls_vec *out)
{
    static ls_str star;
    if (!star)
        star = ls_intern_cstr("*");
    bool *replaced = ls_xcalloc(user->enabled.len + 1, sizeof *replaced);
    if (!name_in(&user->disabled, star)) {
        for (size_t i = 0; i < sizeof default_plugins / sizeof default_plugins[0]; i++) {
            if (!default_plugins[i].implemented)
                continue;
            ls_str name = ls_intern_cstr(default_plugins[i].name);
            if (name_in(&user->disabled, name))
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

static bool push_unique(ls_vec *list, const ls_plugin_ref *r, int ep, const ls_profile *prof, ls_error *err)
{
    if (ref_in(list, r->name))
        return ls_errorf(err, "profile %s: plugin %s already registered as %s", ls_str_get(prof->scheduler_name),
                         ls_str_get(r->name), ls_ext_point_name(ep));
    ls_plugin_ref *slot = ls_vec_push(list);
    *slot = *r;
    if (slot->weight == 0)
        slot->weight = 1;
    return true;
}

static bool points_or_error(const ls_profile *prof, ls_str name, ls_plugin_points_fn points_of, void *ud,
                            uint32_t *pts, ls_error *err)
{
    *pts = 0;
    if (!points_of(ud, ls_str_get(name), pts, err))
        return ls_error_prefix(err, "profile %s", ls_str_get(prof->scheduler_name));
    return true;
}

/* upstream's overridePlugins: an explicit entry that multiPoint would also
 * put at this point (listed there, implementing it, not disabled at it) */
static bool is_override(const plugin_set *set, const ls_vec *multi, bool skip_multi, ls_str name, uint32_t pts,
                        int ep)
{
    return !skip_multi && (pts & (1u << ep)) && ref_in(multi, name) && !name_in(&set->disabled, name);
}

/* expandMultiPointPlugins for one extension point. */
static bool expand_point(ls_profile *prof, const raw_profile *rp, const ls_vec *multi, int ep,
                         ls_plugin_points_fn points_of, void *ud, ls_error *err)
{
    static ls_str star;
    if (!star)
        star = ls_intern_cstr("*");
    const plugin_set *set = &rp->sets[ep];
    ls_vec *out = &prof->plugins[ep];
    bool skip_multi = name_in(&set->disabled, star);
    uint32_t pts;
    /* (1) explicit entries that override a multiPoint entry, in their own order */
    for (uint32_t i = 0; !skip_multi && i < set->enabled.len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(&set->enabled, ls_plugin_ref, i);
        if (!points_or_error(prof, r->name, points_of, ud, &pts, err))
            return false;
        if (is_override(set, multi, skip_multi, r->name, pts, ep) && !push_unique(out, r, ep, prof, err))
            return false;
    }
    /* (2) multiPoint plugins that implement this extension point, are not
     * disabled at it and are not re-configured by an explicit entry */
    for (uint32_t i = 0; !skip_multi && i < multi->len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(multi, ls_plugin_ref, i);
        if (!points_or_error(prof, r->name, points_of, ud, &pts, err))
            return false;
        if (!(pts & (1u << ep)) || name_in(&set->disabled, r->name) || ref_in(&set->enabled, r->name))
            continue;
        if (!push_unique(out, r, ep, prof, err))
            return false;
    }
    /* (3) the remaining explicit entries */
    for (uint32_t i = 0; i < set->enabled.len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(&set->enabled, ls_plugin_ref, i);
        if (!points_or_error(prof, r->name, points_of, ud, &pts, err))
            return false;
        if (is_override(set, multi, skip_multi, r->name, pts, ep))
            continue;
        if (!(pts & (1u << ep)))
            return ls_errorf(err, "profile %s: plugin \"%s\" does not extend %s plugin",
                             ls_str_get(prof->scheduler_name), ls_str_get(r->name), ls_ext_point_name(ep));
        if (!push_unique(out, r, ep, prof, err))
            return false;
    }
    return true;
}

static bool check_profile(const ls_profile *prof, ls_error *err)
{
    const char *name = ls_str_get(prof->scheduler_name);
    if (prof->plugins[LS_EP_QUEUE_SORT].len != 1)
        return ls_errorf(err, "profile %s: one queue sort plugin required for profile, got %u", name,
                         prof->plugins[LS_EP_QUEUE_SORT].len);
    if (prof->plugins[LS_EP_BIND].len == 0)
        return ls_errorf(err, "profile %s: at least one bind plugin is needed", name);
    return true;
}

bool ls_config_expand(ls_config *cfg, ls_plugin_points_fn points_of, void *ud, ls_error *err)
{
    bool ok = true;
    raw_profile *raw = cfg->raw_profiles;
    for (uint32_t i = 0; ok && i < cfg->n_profiles; i++) {
        ls_profile *prof = &cfg->profiles[i];
        ls_vec multi;
        ls_vec_init(&multi, sizeof(ls_plugin_ref));
        merge_default_multi_point(&raw[i].sets[SET_MULTI_POINT], &multi);
        for (int ep = 0; ok && ep < LS_EP_COUNT; ep++)
            ok = expand_point(prof, &raw[i], &multi, ep, points_of, ud, err);
        ls_vec_free(&multi);
        ok = ok && check_profile(prof, err);
    }
    if (!ok)
        ls_error_prefix(err, "%s", cfg->source);
    return ok;
}

void ls_config_free(ls_config *cfg)
{
    for (uint32_t i = 0; i < cfg->n_profiles; i++) {
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            ls_vec_free(&cfg->profiles[i].plugins[ep]);
        cJSON_Delete(cfg->profiles[i].plugin_args);
    }
    free(cfg->profiles);
    free(cfg->source);
    if (cfg->raw_profiles)
        raw_profiles_free(cfg->raw_profiles, cfg->n_profiles);
    memset(cfg, 0, sizeof *cfg);
}

bool ls_config_default_enabled(const char *name)
{
    for (size_t i = 0; i < sizeof default_plugins / sizeof default_plugins[0]; i++)
        if (strcmp(default_plugins[i].name, name) == 0)
            return default_plugins[i].implemented;
    return false;
}

int32_t ls_config_profile_index(const ls_config *cfg, ls_str scheduler_name)
{
    for (uint32_t i = 0; i < cfg->n_profiles; i++)
        if (cfg->profiles[i].scheduler_name == scheduler_name)
            return (int32_t)i;
    return -1;
}
