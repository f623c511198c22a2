/*
 * test_config.c: KubeSchedulerConfiguration loading and multiPoint expansion
 * (core/src/config/config.c) against the reference, §5.1 (defaults), §5.3
 * (validation, with file:line and field path in every message) and §2.1 /
 * §1.5 (mergePlugins, expandMultiPointPlugins, score weights). Config files
 * are written to a fresh directory under /tmp; plugins are a fake table of
 * name -> extension points handed to ls_config_expand.
 */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */

#include "config/config_internal.h"   /* Go durations */
#include "luasched/config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#define API "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

/* ---- temp files */

static char tmp_dir[64];
static char tmp_paths[128][128];
static int n_tmp_paths;

/* Writes text to <tmp_dir>/<name> and returns the path (kept for cleanup). */
static const char *write_file(const char *name, const char *text)
{
    if (n_tmp_paths == (int)(sizeof tmp_paths / sizeof tmp_paths[0])) {
        fprintf(stderr, "too many temp files\n");
        abort();
    }
    char *path = tmp_paths[n_tmp_paths++];
    snprintf(path, sizeof tmp_paths[0], "%s/%s", tmp_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        abort();
    }
    fputs(text, f);
    fclose(f);
    return path;
}

static void cleanup_files(void)
{
    for (int i = 0; i < n_tmp_paths; i++)
        unlink(tmp_paths[i]);
    rmdir(tmp_dir);
}

/* ---- fake plugin registry for ls_config_expand */

#define P(ep) (1u << (ep))

static const struct {
    const char *name;
    uint32_t points;
} fake_plugins[] = {
    {"PrioritySort", P(LS_EP_QUEUE_SORT)},
    {"NodeUnschedulable", P(LS_EP_FILTER)},
    {"NodeName", P(LS_EP_FILTER)},
    {"TaintToleration", P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"NodeResourcesFit", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"DefaultBinder", P(LS_EP_BIND)},
    {"NodeAffinity", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"ImageLocality", P(LS_EP_SCORE)},
    /* the rest of upstream's default set, with the extension points of reference §2.1 */
    {"SchedulingGates", P(LS_EP_PRE_ENQUEUE)},
    {"NodePorts", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER)},
    {"PodTopologySpread", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"InterPodAffinity", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"DefaultPreemption", P(LS_EP_POST_FILTER)},
    {"NodeResourcesBalancedAllocation", P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
    {"NodeDeclaredFeatures", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER)},
    {"DynamicResources", P(LS_EP_PRE_ENQUEUE) | P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_POST_FILTER) |
                             P(LS_EP_RESERVE) | P(LS_EP_PRE_BIND)},
    {"VolumeRestrictions", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER)},
    {"NodeVolumeLimits", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER)},
    {"VolumeBinding", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE) | P(LS_EP_RESERVE) |
                          P(LS_EP_PRE_BIND)},
    {"VolumeZone", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER)},
    /* not upstream defaults: what a user adds */
    {"CustomSort", P(LS_EP_QUEUE_SORT)},
    {"CustomBinder", P(LS_EP_BIND)},
    {"Gate", P(LS_EP_PRE_ENQUEUE) | P(LS_EP_RESERVE) | P(LS_EP_PERMIT)},
    {"CustomScore", P(LS_EP_SCORE)},
    {"CustomAffinity", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
};

static int fake_calls;

static bool fake_points(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    (void)ud;
    fake_calls++;
    for (size_t i = 0; i < sizeof fake_plugins / sizeof fake_plugins[0]; i++) {
        if (strcmp(fake_plugins[i].name, name) == 0) {
            *points = fake_plugins[i].points;
            return true;
        }
    }
    return ls_errorf(err, "plugin \"%s\" does not exist", name);
}

/* "A,B,C" for an extension point of a profile; Score entries as "name:weight". */
static const char *plugins_at(const ls_config *cfg, uint32_t profile, int ep)
{
    static char buf[512];
    size_t len = 0;
    buf[0] = '\0';
    const ls_vec *v = &cfg->profiles[profile].plugins[ep];
    for (uint32_t i = 0; i < v->len; i++) {
        const ls_plugin_ref *r = &LS_VEC_AT(v, ls_plugin_ref, i);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", ls_str_get(r->name));
        if (ep == LS_EP_SCORE)
            len += (size_t)snprintf(buf + len, sizeof buf - len, ":%d", r->weight);
    }
    return buf;
}

/* Loads and expands a config whose profile 0 has the given `plugins:` body
 * (YAML indented for a member of the profile). False on any error. */
static bool load_expanded(ls_config *cfg, const char *name, const char *text, ls_error *err)
{
    const char *path = write_file(name, text);
    if (!ls_config_load(cfg, path, err))
        return false;
    return ls_config_expand(cfg, fake_points, NULL, err);
}

/* Loading fails and the message contains "<path>:<line>: <rest>" (no ":<line>" when line is 0). */
static void check_load_error(const char *name, const char *text, int line, const char *rest, int src_line)
{
    const char *path = write_file(name, text);
    ls_config cfg;
    ls_error err = {{0}};
    bool ok = ls_config_load(&cfg, path, &err);
    char expected[1024];
    if (line)
        snprintf(expected, sizeof expected, "%s:%d: %s", path, line, rest);
    else
        snprintf(expected, sizeof expected, "%s: %s", path, rest);
    ls_test_checks++;
    if (ok || !strstr(err.msg, expected)) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: %s\n  got      \"%s\"\n  expected \"%s\"\n", __FILE__, src_line,
                ok ? "load succeeded" : "wrong error", ok ? "" : err.msg, expected);
    }
    ls_config_free(&cfg);
}
#define CHECK_LOAD_ERROR(name, text, line, rest) check_load_error(name, text, line, rest, __LINE__)

/* ---- defaults */

static void check_defaults(const ls_config *cfg)
{
    CHECK_INT(cfg->parallelism, 16);
    CHECK_INT(cfg->percentage_of_nodes_to_score, 0);
    CHECK_INT(cfg->pod_initial_backoff_seconds, 1);
    CHECK_INT(cfg->pod_max_backoff_seconds, 10);
    CHECK_INT(cfg->n_profiles, 1);
    if (cfg->n_profiles == 1) {
        CHECK_STR(ls_str_get(cfg->profiles[0].scheduler_name), "default-scheduler");
        CHECK_INT(cfg->profiles[0].percentage_of_nodes_to_score, -1);   /* unset: use the global value */
    }
    /* §5.1: leaderElection, clientConnection, profiling, delayCacheUntilActive */
    const ls_leader_election_config *le = &cfg->leader_election;
    CHECK(le->leader_elect);
    CHECK_INT(le->lease_duration_ns, 15000000000LL);
    CHECK_INT(le->renew_deadline_ns, 10000000000LL);
    CHECK_INT(le->retry_period_ns, 2000000000LL);
    CHECK_STR(le->resource_lock, "leases");
    CHECK_STR(le->resource_name, "kube-scheduler");
    CHECK_STR(le->resource_namespace, "kube-system");
    const ls_client_connection_config *cc = &cfg->client_connection;
    CHECK_STR(cc->kubeconfig, "");
    CHECK_STR(cc->accept_content_types, "");
    CHECK_STR(cc->content_type, "application/vnd.kubernetes.protobuf");
    CHECK(cc->qps == 50);
    CHECK_INT(cc->burst, 100);
    CHECK(cfg->enable_profiling && cfg->enable_contention_profiling);
    CHECK(!cfg->delay_cache_until_active);
    CHECK(!cfg->healthz_bind_address && !cfg->metrics_bind_address);
    /* the luasched section's defaults, present or not */
    CHECK(!cfg->luasched.present);
    CHECK_INT(cfg->luasched.n_plugin_path, 0);
    CHECK(cfg->luasched.plugin_dirs == NULL);
    CHECK_INT(cfg->luasched.plugin_timeout_ms, 10000);
    CHECK_INT(cfg->luasched.instruction_budget, 200000000);
    CHECK_INT(cfg->luasched.memory_limit_bytes, 1073741824);   /* 1 GiB (config.h) */
    CHECK_INT(cfg->problems.len, 0);
    CHECK(cfg->completed_args == NULL);
}

static void test_defaults(void)
{
    ls_config cfg;
    ls_error err = {{0}};
    /* the built-in default */
    CHECK(ls_config_load(&cfg, NULL, &err));
    check_defaults(&cfg);
    CHECK_STR(cfg.source, "<defaults>");
    CHECK_INT(ls_config_profile_index(&cfg, ls_intern_cstr("default-scheduler")), 0);
    CHECK_INT(ls_config_profile_index(&cfg, ls_intern_cstr("other")), -1);
    ls_config_free(&cfg);

    /* a file with only apiVersion and kind */
    const char *path = write_file("minimal.yaml", API);
    CHECK(ls_config_load(&cfg, path, &err));
    check_defaults(&cfg);
    CHECK_STR(cfg.source, path);
    ls_config_free(&cfg);

    /* the same as JSON */
    path = write_file("minimal.json", "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\","
                                      " \"kind\": \"KubeSchedulerConfiguration\"}");
    CHECK(ls_config_load(&cfg, path, &err));
    check_defaults(&cfg);
    ls_config_free(&cfg);

    /* one profile without a name is named default-scheduler */
    path = write_file("unnamed.yaml", API "profiles:\n- percentageOfNodesToScore: 40\n");
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.n_profiles, 1);
    CHECK_STR(ls_str_get(cfg.profiles[0].scheduler_name), "default-scheduler");
    CHECK_INT(cfg.profiles[0].percentage_of_nodes_to_score, 40);
    ls_config_free(&cfg);
}

static void test_explicit_values(void)
{
    const char *path = write_file("values.yaml", API
                                  "parallelism: 8\n"
                                  "percentageOfNodesToScore: 30\n"
                                  "podInitialBackoffSeconds: 2\n"
                                  "podMaxBackoffSeconds: 20\n"
                                  "leaderElection: {leaderElect: false}\n"
                                  "profiles:\n"
                                  "- schedulerName: fast\n"
                                  "  percentageOfNodesToScore: 100\n"
                                  "- schedulerName: slow\n"
                                  "  pluginConfig:\n"
                                  "  - name: NodeResourcesFit\n"
                                  "    args: {scoringStrategy: {type: MostAllocated}}\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.parallelism, 8);
    CHECK_INT(cfg.percentage_of_nodes_to_score, 30);
    CHECK_INT(cfg.pod_initial_backoff_seconds, 2);
    CHECK_INT(cfg.pod_max_backoff_seconds, 20);
    CHECK_INT(cfg.n_profiles, 2);
    if (cfg.n_profiles == 2) {
        CHECK_STR(ls_str_get(cfg.profiles[0].scheduler_name), "fast");
        CHECK_INT(cfg.profiles[0].percentage_of_nodes_to_score, 100);
        CHECK_STR(ls_str_get(cfg.profiles[1].scheduler_name), "slow");
        CHECK_INT(cfg.profiles[1].percentage_of_nodes_to_score, -1);
        CHECK_INT(ls_config_profile_index(&cfg, ls_intern_cstr("slow")), 1);
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(cfg.profiles[1].plugin_args, "NodeResourcesFit");
        const cJSON *strategy = cJSON_GetObjectItemCaseSensitive(args, "scoringStrategy");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(strategy, "type");
        CHECK(cJSON_IsString(type) && strcmp(type->valuestring, "MostAllocated") == 0);
    }
    ls_config_free(&cfg);

    /* podMaxBackoffSeconds == podInitialBackoffSeconds is allowed (>=) */
    path = write_file("equal-backoff.yaml", API "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 5\n");
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.pod_max_backoff_seconds, 5);
    ls_config_free(&cfg);
}

/* ---- validation */

static void test_validation(void)
{
    CHECK_LOAD_ERROR("unknown-field.yaml", API "parallelism: 4\nfooBar: 1\n", 4, "fooBar: unknown field");
    CHECK_LOAD_ERROR("api-version.yaml",
                     "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", 1,
                     "apiVersion: expected \"kubescheduler.config.k8s.io/v1\", got kubescheduler.config.k8s.io/v1beta3 "
                     "(the beta versions were removed: v1beta2 in v1.28, v1beta3 in v1.29)");
    CHECK_LOAD_ERROR("kind.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", 2,
                     "kind: expected \"KubeSchedulerConfiguration\", got Pod");
    /* percentageOfNodesToScore in [0, 100], globally and per profile */
    CHECK_LOAD_ERROR("percentage.yaml", API "percentageOfNodesToScore: 101\n", 3,
                     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]");
    CHECK_LOAD_ERROR("profile-percentage.yaml",
                     API "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n", 5,
                     "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]");
    /* parallelism > 0; podInitialBackoffSeconds > 0 (upstream's wording) */
    CHECK_LOAD_ERROR("parallelism.yaml", API "parallelism: 0\n", 3,
                     "parallelism: Invalid value: 0: should be an integer value greater than zero");
    CHECK_LOAD_ERROR("parallelism-type.yaml", API "parallelism: '4'\n", 3, "parallelism: expected an integer");
    CHECK_LOAD_ERROR("initial-backoff.yaml", API "podInitialBackoffSeconds: 0\n", 3,
                     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0");
    /* podMaxBackoffSeconds >= podInitialBackoffSeconds, pointing at the max */
    CHECK_LOAD_ERROR("backoff.yaml", API "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 3\n", 4,
                     "podMaxBackoffSeconds: Invalid value: 3: must be greater than or equal to PodInitialBackoffSeconds");
    /* an initial above the default max (10): the initial value's line, the max's path */
    CHECK_LOAD_ERROR("backoff-initial.yaml", API "parallelism: 2\npodInitialBackoffSeconds: 20\n", 4,
                     "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds");
    /* a max below the default initial (1): upstream has no other bound on the max */
    CHECK_LOAD_ERROR("backoff-default.yaml", API "podMaxBackoffSeconds: 0\n", 3,
                     "podMaxBackoffSeconds: Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds");
    /* field.Duplicate / field.Required on schedulerName */
    CHECK_LOAD_ERROR("duplicate.yaml",
                     API "profiles:\n- schedulerName: one\n- schedulerName: two\n- schedulerName: one\n", 6,
                     "profiles[2].schedulerName: Duplicate value: \"one\"");
    CHECK_LOAD_ERROR("required.yaml", API "profiles:\n- percentageOfNodesToScore: 10\n- schedulerName: b\n", 4,
                     "profiles[0].schedulerName: Required value");
    CHECK_LOAD_ERROR("empty-name.yaml", API "profiles:\n- schedulerName: a\n- schedulerName: ''\n", 5,
                     "profiles[1].schedulerName: Required value");
    /* plugins: unknown extension point, malformed entries */
    CHECK_LOAD_ERROR("ext-point.yaml",
                     API "profiles:\n- schedulerName: a\n  plugins:\n    preFilter: {}\n    normalizeScore: {}\n", 7,
                     "profiles[0].plugins.normalizeScore: unknown extension point");
    /* a point in the wrong case names the right one (a newcomer's typo) */
    CHECK_LOAD_ERROR("ext-point-case.yaml", API "profiles:\n- plugins:\n    multipoint: {}\n", 5,
                     "profiles[0].plugins.multipoint: unknown extension point (expected preEnqueue, queueSort, "
                     "preFilter, filter, postFilter, preScore, score, reserve, permit, preBind, bind, postBind or "
                     "multiPoint); did you mean \"multiPoint\"?");
    CHECK_LOAD_ERROR("plugin-name.yaml",
                     API "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 2\n", 7,
                     "profiles[0].plugins.filter.enabled[0].name: expected a plugin name");
    CHECK_LOAD_ERROR("plugin-weight.yaml",
                     API "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: X, weight: x}\n", 7,
                     "profiles[0].plugins.score.enabled[0].weight: expected an integer");
    /* pluginConfig names are unique */
    CHECK_LOAD_ERROR("plugin-config.yaml",
                     API "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n  - name: NodeResourcesFit\n", 6,
                     "profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\"");
    /* whole-file problems */
    CHECK_LOAD_ERROR("two-docs.yaml", API "---\n" API, 0,
                     "expected exactly one KubeSchedulerConfiguration document, found 2");
    CHECK_LOAD_ERROR("extenders.yaml", API "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n", 4,
                     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it");

    /* a file that does not exist names the path */
    ls_config cfg;
    ls_error err = {{0}};
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.yaml", tmp_dir);
    CHECK(!ls_config_load(&cfg, missing, &err));
    CHECK_CONTAINS(err.msg, missing);
    ls_config_free(&cfg);
}

/* ---- multiPoint expansion */

/* upstream's default v1 profile (reference §2.1): name and weight, in
 * multiPoint order (VolumeBinding has no weight there: it scores with 1). */
static const struct {
    const char *name;
    int weight;
} upstream_defaults[] = {
    {"SchedulingGates", 0}, {"PrioritySort", 0}, {"NodeUnschedulable", 0}, {"NodeName", 0},
    {"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodePorts", 0}, {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0}, {"NodeVolumeLimits", 0}, {"VolumeBinding", 1}, {"VolumeZone", 0},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 2}, {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1}, {"DefaultBinder", 0},
    {"NodeDeclaredFeatures", 0},
};

/* An expected plugin list at one extension point, spelled as plugins_at
 * prints it, built from hand-written pieces so that the cases that merge
 * with the built-in default do not depend on which defaults are enabled. */
typedef struct want_list {
    int ep;
    size_t len;
    char text[1024];
} want_list;

static void want_init(want_list *w, int ep)
{
    w->ep = ep;
    w->len = 0;
    w->text[0] = '\0';
}

/* Appends `name` (as "name:weight" at Score) if it implements the extension
 * point; the weight is the one expected, so an unset or 0 weight is written 1. */
static void want_add(want_list *w, const char *name, int weight)
{
    uint32_t points = 0;
    ls_error err;
    if (!fake_points(NULL, name, &points, &err)) {
        fprintf(stderr, "want_add: %s is not in the fake plugin table\n", name);
        abort();
    }
    if (!(points & P(w->ep)))
        return;
    w->len += (size_t)snprintf(w->text + w->len, sizeof w->text - w->len, "%s%s", w->len ? "," : "", name);
    if (w->ep == LS_EP_SCORE)
        w->len += (size_t)snprintf(w->text + w->len, sizeof w->text - w->len, ":%d", weight);
}

/* Appends the built-in default at the extension point: upstream's order,
 * restricted to the plugins ls_config_default_enabled() reports today,
 * leaving out `skip` and giving `reweight` the weight `weight` (NULL: none). */
static void want_defaults(want_list *w, const char *skip, const char *reweight, int weight)
{
    for (size_t i = 0; i < sizeof upstream_defaults / sizeof upstream_defaults[0]; i++) {
        const char *name = upstream_defaults[i].name;
        if (!ls_config_default_enabled(name) || (skip && strcmp(name, skip) == 0))
            continue;
        want_add(w, name, reweight && strcmp(name, reweight) == 0 ? weight : upstream_defaults[i].weight);
    }
}

/* The built-in default at one extension point, untouched. */
static const char *defaults_at(int ep)
{
    static want_list w;
    want_init(&w, ep);
    want_defaults(&w, NULL, NULL, 0);
    return w.text;
}

static void test_expand_defaults(void)
{
    ls_config cfg;
    ls_error err = {{0}};
    /* the built-in default: upstream's multiPoint list (those luasched ships), in
     * order; each plugin lands where it implements a hook */
    CHECK(ls_config_load(&cfg, NULL, &err));
    CHECK(ls_config_expand(&cfg, fake_points, NULL, &err));
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        CHECK_STR(plugins_at(&cfg, 0, ep), defaults_at(ep));
    /* what issue 2 shipped is always there */
    CHECK(ls_config_default_enabled("PrioritySort") && ls_config_default_enabled("NodeResourcesFit") &&
          ls_config_default_enabled("TaintToleration") && ls_config_default_enabled("DefaultBinder") &&
          ls_config_default_enabled("NodeUnschedulable") && ls_config_default_enabled("NodeName"));
    CHECK(ls_config_default_enabled("VolumeBinding") && ls_config_default_enabled("VolumeRestrictions") &&
          ls_config_default_enabled("VolumeZone") && ls_config_default_enabled("NodeVolumeLimits"));
    CHECK(ls_config_default_enabled("DynamicResources"));   /* v1.37: before DefaultPreemption */
    CHECK(ls_config_default_enabled("NodeDeclaredFeatures"));
    CHECK(!ls_config_default_enabled("CustomScore"));
    ls_config_free(&cfg);

    /* a file without plugins expands the same way, per profile */
    CHECK(load_expanded(&cfg, "two-profiles.yaml", API "profiles:\n- schedulerName: a\n- schedulerName: b\n", &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), defaults_at(LS_EP_SCORE));
    CHECK_STR(plugins_at(&cfg, 1, LS_EP_SCORE), defaults_at(LS_EP_SCORE));
    CHECK_STR(plugins_at(&cfg, 1, LS_EP_FILTER), defaults_at(LS_EP_FILTER));
    ls_config_free(&cfg);
}

/* Expands `plugins` (the YAML body under "  plugins:\n") of a single profile. */
static bool expand_profile(ls_config *cfg, const char *name, const char *plugins, ls_error *err)
{
    char text[4096];
    if ((size_t)snprintf(text, sizeof text, API "profiles:\n- schedulerName: p\n  plugins:\n%s", plugins) >=
        sizeof text) {
        fprintf(stderr, "%s: config text too long\n", name);
        abort();
    }
    return load_expanded(cfg, name, text, err);
}

/* A multiPoint section that stands in for the built-in default: disabled "*"
 * drops the default set and the enabled list is the set issue 2 shipped, with
 * upstream's order and weights. Cases built on it have hand-derived
 * expectations that do not move as config.c enables more defaults. */
#define BASE_MULTI_POINT                                                                              \
    "    multiPoint:\n      disabled:\n      - name: '*'\n      enabled:\n"                           \
    "      - name: PrioritySort\n      - name: NodeUnschedulable\n      - name: NodeName\n"            \
    "      - {name: TaintToleration, weight: 3}\n      - {name: NodeResourcesFit, weight: 1}\n"      \
    "      - name: DefaultBinder\n"

static void test_expand_overrides(void)
{
    ls_config cfg;
    ls_error err = {{0}};
    want_list w;

    /* the base on its own: only the user's multiPoint plugins, in their order,
     * each where it implements a hook */
    CHECK(expand_profile(&cfg, "base.yaml", BASE_MULTI_POINT, &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_ENQUEUE), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_QUEUE_SORT), "PrioritySort");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_FILTER), "NodeResourcesFit");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), "NodeUnschedulable,NodeName,TaintToleration,NodeResourcesFit");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_POST_FILTER), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_SCORE), "TaintToleration,NodeResourcesFit");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:3,NodeResourcesFit:1");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_RESERVE), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PERMIT), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_BIND), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_BIND), "DefaultBinder");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_POST_BIND), "");
    ls_config_free(&cfg);

    /* an explicit score entry for a multiPoint plugin overrides it: explicit
     * first (part 1), then the other multiPoint plugins (part 2); its weight
     * is the explicit one (5, not 1) */
    CHECK(expand_profile(&cfg, "score-override.yaml",
                         BASE_MULTI_POINT "    score:\n      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "NodeResourcesFit:5,TaintToleration:3");
    /* other extension points keep the multiPoint order */
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_SCORE), "TaintToleration,NodeResourcesFit");
    ls_config_free(&cfg);

    /* explicit overrides keep their own order: ImageLocality is not in multiPoint (part 3) */
    CHECK(expand_profile(&cfg, "score-order.yaml",
                         BASE_MULTI_POINT "    score:\n      enabled:\n      - {name: ImageLocality, weight: 4}\n"
                                          "      - {name: NodeResourcesFit, weight: 2}\n"
                                          "      - {name: TaintToleration, weight: 6}\n",
                         &err));
    /* part 1: NodeResourcesFit, TaintToleration (explicit order); part 2: nothing left; part 3: ImageLocality */
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "NodeResourcesFit:2,TaintToleration:6,ImageLocality:4");
    ls_config_free(&cfg);

    /* disabled "*" on filter: no multiPoint expansion there, only the explicit entries */
    CHECK(expand_profile(&cfg, "filter-star.yaml",
                         BASE_MULTI_POINT "    filter:\n      disabled:\n      - name: '*'\n"
                                          "      enabled:\n      - name: NodeName\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), "NodeName");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_FILTER), "NodeResourcesFit");   /* other points untouched */
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:3,NodeResourcesFit:1");
    ls_config_free(&cfg);

    /* disabled and re-enabled at one point (the v1beta habit for re-weighting):
     * upstream checks "disabled" before "explicitly re-configured", so the entry
     * is no override (part 1) but a remaining explicit entry (part 3, last) */
    CHECK(expand_profile(&cfg, "disable-reenable.yaml",
                         BASE_MULTI_POINT "    score:\n      disabled:\n      - name: NodeResourcesFit\n"
                                          "      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n"
                                          "    filter:\n      disabled:\n      - name: NodeName\n"
                                          "      enabled:\n      - name: NodeName\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:3,NodeResourcesFit:5");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), "NodeUnschedulable,TaintToleration,NodeResourcesFit,NodeName");
    ls_config_free(&cfg);

    /* a multiPoint plugin disabled at one extension point stays at the others */
    CHECK(expand_profile(&cfg, "prescore-disabled.yaml",
                         BASE_MULTI_POINT "    preScore:\n      disabled:\n      - name: TaintToleration\n", &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_SCORE), "NodeResourcesFit");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:3,NodeResourcesFit:1");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), "NodeUnschedulable,NodeName,TaintToleration,NodeResourcesFit");
    ls_config_free(&cfg);

    /* the same rules on top of the built-in default, whatever it holds today */
    CHECK(expand_profile(&cfg, "score-override-defaults.yaml",
                         "    score:\n      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n", &err));
    want_init(&w, LS_EP_SCORE);
    want_add(&w, "NodeResourcesFit", 5);
    want_defaults(&w, "NodeResourcesFit", NULL, 0);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), w.text);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_SCORE), defaults_at(LS_EP_PRE_SCORE));
    ls_config_free(&cfg);

    CHECK(expand_profile(&cfg, "disable-reenable-defaults.yaml",
                         "    score:\n      disabled:\n      - name: NodeResourcesFit\n"
                         "      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n"
                         "    filter:\n      disabled:\n      - name: NodeName\n"
                         "      enabled:\n      - name: NodeName\n",
                         &err));
    want_init(&w, LS_EP_SCORE);
    want_defaults(&w, "NodeResourcesFit", NULL, 0);
    want_add(&w, "NodeResourcesFit", 5);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), w.text);
    want_init(&w, LS_EP_FILTER);
    want_defaults(&w, "NodeName", NULL, 0);
    want_add(&w, "NodeName", 0);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), w.text);
    ls_config_free(&cfg);

    CHECK(expand_profile(&cfg, "prescore-disabled-defaults.yaml",
                         "    preScore:\n      disabled:\n      - name: TaintToleration\n", &err));
    want_init(&w, LS_EP_PRE_SCORE);
    want_defaults(&w, "TaintToleration", NULL, 0);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_SCORE), w.text);
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), defaults_at(LS_EP_SCORE));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), defaults_at(LS_EP_FILTER));
    ls_config_free(&cfg);
}

static void test_expand_multi_point(void)
{
    ls_config cfg;
    ls_error err = {{0}};
    want_list w;

    /* user multiPoint entries come after the defaults (mergePlugins appends
     * them), in the user's order, at every extension point they implement;
     * CustomAffinity's unset weight becomes 1 */
    CHECK(expand_profile(&cfg, "multi-append.yaml",
                         "    multiPoint:\n      enabled:\n      - {name: CustomScore, weight: 2}\n"
                         "      - name: CustomAffinity\n",
                         &err));
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        want_init(&w, ep);
        want_defaults(&w, NULL, NULL, 0);
        want_add(&w, "CustomScore", 2);
        want_add(&w, "CustomAffinity", 1);
        CHECK_STR(plugins_at(&cfg, 0, ep), w.text);
    }
    ls_config_free(&cfg);

    /* a user multiPoint entry naming a default replaces it in place with its
     * weight, even when listed after a plugin that is appended */
    CHECK(expand_profile(&cfg, "multi-reweight.yaml",
                         "    multiPoint:\n      enabled:\n      - {name: CustomScore, weight: 2}\n"
                         "      - {name: TaintToleration, weight: 7}\n",
                         &err));
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        want_init(&w, ep);
        want_defaults(&w, NULL, "TaintToleration", 7);
        want_add(&w, "CustomScore", 2);
        CHECK_STR(plugins_at(&cfg, 0, ep), w.text);
    }
    ls_config_free(&cfg);

    /* weight 0 becomes 1: an explicit score weight 0 wins over multiPoint's 3, then 0 -> 1 */
    CHECK(expand_profile(&cfg, "weight-zero.yaml",
                         BASE_MULTI_POINT "    score:\n      enabled:\n      - {name: TaintToleration, weight: 0}\n"
                                          "      - {name: ImageLocality, weight: 0}\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:1,NodeResourcesFit:1,ImageLocality:1");
    ls_config_free(&cfg);

    /* a default disabled in multiPoint is gone from every extension point */
    CHECK(expand_profile(&cfg, "multi-disabled.yaml",
                         "    multiPoint:\n      disabled:\n      - name: TaintToleration\n", &err));
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        want_init(&w, ep);
        want_defaults(&w, "TaintToleration", NULL, 0);
        CHECK_STR(plugins_at(&cfg, 0, ep), w.text);
    }
    CHECK(!strstr(plugins_at(&cfg, 0, LS_EP_FILTER), "TaintToleration"));
    CHECK(!strstr(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration"));
    ls_config_free(&cfg);

    /* multiPoint disabled "*": only the user's plugins */
    CHECK(expand_profile(&cfg, "multi-star.yaml",
                         "    multiPoint:\n      disabled:\n      - name: '*'\n"
                         "      enabled:\n      - name: CustomSort\n      - name: Gate\n      - name: CustomBinder\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_QUEUE_SORT), "CustomSort");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PRE_ENQUEUE), "Gate");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_RESERVE), "Gate");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_PERMIT), "Gate");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_BIND), "CustomBinder");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_FILTER), "");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_SCORE), "");
    ls_config_free(&cfg);

    /* replacing the queue sort and the binder per extension point */
    CHECK(expand_profile(&cfg, "replace-sort.yaml",
                         "    queueSort:\n      disabled:\n      - name: '*'\n      enabled:\n      - name: CustomSort\n"
                         "    bind:\n      disabled:\n      - name: DefaultBinder\n      enabled:\n"
                         "      - name: CustomBinder\n",
                         &err));
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_QUEUE_SORT), "CustomSort");
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_BIND), "CustomBinder");
    ls_config_free(&cfg);
}

/* Expansion fails and the message contains `needle`. */
static void check_expand_error(const char *name, const char *plugins, const char *needle, int line)
{
    ls_config cfg;
    ls_error err = {{0}};
    bool ok = expand_profile(&cfg, name, plugins, &err);
    ls_test_checks++;
    if (ok || !strstr(err.msg, needle)) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: %s\n  got      \"%s\"\n  expected \"%s\"\n", __FILE__, line,
                ok ? "expand succeeded" : "wrong error", ok ? "" : err.msg, needle);
    }
    ls_config_free(&cfg);
}
#define CHECK_EXPAND_ERROR(name, plugins, needle) check_expand_error(name, plugins, needle, __LINE__)

/* None of these depends on which defaults are enabled: PrioritySort,
 * DefaultBinder and NodeName are always in the built-in default, and the
 * plugins named twice are not upstream defaults. */
static void test_expand_errors(void)
{
    /* not exactly one QueueSort */
    CHECK_EXPAND_ERROR("no-sort.yaml", "    multiPoint:\n      disabled:\n      - name: PrioritySort\n",
                       "profile p: one queue sort plugin required for profile, got 0");
    CHECK_EXPAND_ERROR("two-sorts.yaml", "    queueSort:\n      enabled:\n      - name: CustomSort\n",
                       "profile p: one queue sort plugin required for profile, got 2");
    /* no Bind plugin */
    CHECK_EXPAND_ERROR("no-bind.yaml", "    bind:\n      disabled:\n      - name: DefaultBinder\n",
                       "profile p: at least one bind plugin is needed");
    /* unknown plugins, from the registry's answer, named with the profile */
    CHECK_EXPAND_ERROR("unknown-multi.yaml", "    multiPoint:\n      enabled:\n      - name: Nope\n",
                       "profile p: plugin \"Nope\" does not exist");
    CHECK_EXPAND_ERROR("unknown-explicit.yaml", "    filter:\n      enabled:\n      - name: Nope\n",
                       "plugin \"Nope\" does not exist");
    /* a plugin at an extension point it does not implement */
    CHECK_EXPAND_ERROR("not-a-filter.yaml", "    filter:\n      enabled:\n      - name: CustomScore\n",
                       "profile p: plugin \"CustomScore\" does not extend Filter plugin");
    /* an explicit entry for a multiPoint plugin at a point it does not implement
     * is no override: upstream rejects it like any other explicit entry */
    CHECK_EXPAND_ERROR("sort-as-filter.yaml", "    filter:\n      enabled:\n      - name: PrioritySort\n",
                       "profile p: plugin \"PrioritySort\" does not extend Filter plugin");
    /* a plugin twice in the user's multiPoint: mergePluginSet keeps both and the
     * framework reports the double registration */
    CHECK_EXPAND_ERROR("multi-twice.yaml", "    multiPoint:\n      enabled:\n      - name: CustomScore\n"
                                           "      - name: CustomScore\n",
                       "plugin CustomScore already registered as Score");
    /* re-configuring a default twice: the last entry replaces it, the first is appended */
    CHECK_EXPAND_ERROR("multi-default-twice.yaml", "    multiPoint:\n      enabled:\n      - name: NodeName\n"
                                                   "      - name: NodeName\n",
                       "plugin NodeName already registered as Filter");
    /* the same plugin twice at one extension point: as remaining explicit
     * entries (part 3), and as overrides of a multiPoint plugin (part 1) */
    CHECK_EXPAND_ERROR("twice.yaml", "    score:\n      enabled:\n      - name: CustomScore\n"
                                     "      - name: CustomScore\n",
                       "plugin CustomScore already registered as Score");
    CHECK_EXPAND_ERROR("twice-override.yaml", "    score:\n      enabled:\n      - name: TaintToleration\n"
                                              "      - name: TaintToleration\n",
                       "plugin TaintToleration already registered as Score");
    /* every error names the file */
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(!expand_profile(&cfg, "named.yaml", "    bind:\n      disabled:\n      - name: '*'\n", &err));
    CHECK_CONTAINS(err.msg, tmp_dir);
    CHECK_CONTAINS(err.msg, "named.yaml: profile p: at least one bind plugin is needed");
    ls_config_free(&cfg);
}

/* ---- every top-level field (reference §5.1) */

static void test_all_fields(void)
{
    const char *path = write_file("fields.yaml", API
                                  "leaderElection:\n"
                                  "  leaderElect: true\n"
                                  "  leaseDuration: 1m30s\n"
                                  "  renewDeadline: 1.5s\n"
                                  "  retryPeriod: 500ms\n"
                                  "  resourceLock: leases\n"
                                  "  resourceName: my-scheduler\n"
                                  "  resourceNamespace: ''\n"          /* empty: the default */
                                  "clientConnection:\n"
                                  "  kubeconfig: /etc/kubernetes/scheduler.conf\n"
                                  "  qps: 25.5\n"
                                  "  burst: 0\n"                      /* 0: the default */
                                  "  contentType: application/json\n"
                                  "  acceptContentTypes: application/json\n"
                                  "enableProfiling: false\n"
                                  "delayCacheUntilActive: true\n"
                                  "healthzBindAddress: 0.0.0.0:10251\n"
                                  "metricsBindAddress: 0.0.0.0:10251\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err));
    const ls_leader_election_config *le = &cfg.leader_election;
    CHECK(le->leader_elect);
    CHECK_INT(le->lease_duration_ns, 90000000000LL);
    CHECK_INT(le->renew_deadline_ns, 1500000000LL);
    CHECK_INT(le->retry_period_ns, 500000000LL);
    CHECK_STR(le->resource_name, "my-scheduler");
    CHECK_STR(le->resource_namespace, "kube-system");
    CHECK_STR(cfg.client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
    CHECK(cfg.client_connection.qps == 25.5);
    CHECK_INT(cfg.client_connection.burst, 100);
    CHECK_STR(cfg.client_connection.content_type, "application/json");
    CHECK_STR(cfg.client_connection.accept_content_types, "application/json");
    /* contention profiling follows profiling when not written */
    CHECK(!cfg.enable_profiling && !cfg.enable_contention_profiling);
    CHECK(cfg.delay_cache_until_active);
    CHECK_STR(cfg.healthz_bind_address, "0.0.0.0:10251");
    CHECK_STR(cfg.metrics_bind_address, "0.0.0.0:10251");
    ls_config_free(&cfg);

    /* written explicitly, contention profiling stands on its own */
    path = write_file("contention.yaml", API "enableProfiling: false\nenableContentionProfiling: true\n");
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(!cfg.enable_profiling && cfg.enable_contention_profiling);
    ls_config_free(&cfg);

    /* leaderElect false: the timings are not validated (component-base) */
    path = write_file("no-leader.yaml", API "leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n"
                                            "  resourceLock: endpoints\n");
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(!cfg.leader_election.leader_elect);
    CHECK_STR(cfg.leader_election.resource_lock, "endpoints");
    ls_config_free(&cfg);
}

/* Go's time.ParseDuration and Duration.String, on the cases that matter. */
static void test_durations(void)
{
    static const struct {
        const char *in, *out;
        int64_t ns;
    } cases[] = {
        {"15s", "15s", 15000000000LL},   {"90s", "1m30s", 90000000000LL},   {"1h", "1h0m0s", 3600000000000LL},
        {"1.5h", "1h30m0s", 5400000000000LL}, {"2h45m", "2h45m0s", 9900000000000LL}, {"300ms", "300ms", 300000000},
        {"1500us", "1.5ms", 1500000},    {"1µs", "1µs", 1000},              {"10ns", "10ns", 10},
        {"0", "0s", 0},                  {"-2s", "-2s", -2000000000LL},     {"1.000000001s", "1.000000001s", 1000000001},
        {"+5m", "5m0s", 300000000000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ns = -1;
        char text[64];
        CHECK(ls_go_duration_parse(cases[i].in, &ns));
        CHECK_INT(ns, cases[i].ns);
        ls_go_duration_format(cases[i].ns, text, sizeof text);
        CHECK_STR(text, cases[i].out);
    }
    static const char *const bad[] = {"", "15", "s", "1x", "1.5", "-", "1h 2m", "9999999999h", ".s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns;
        CHECK(!ls_go_duration_parse(bad[i], &ns));
    }
}

/* ---- the luasched extension */

static void test_luasched_section(void)
{
    const char *path = write_file("ext.yaml", API
                                  "luasched:\n"
                                  "  pluginPath: [plugins, /opt/luasched/plugins, ../more-plugins]\n"
                                  "  pluginTimeoutMilliseconds: 250\n"
                                  "  instructionBudget: 5000000\n"
                                  "  memoryLimitBytes: 67108864\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err));
    const ls_luasched_config *lc = &cfg.luasched;
    CHECK(lc->present);
    CHECK_INT(lc->n_plugin_path, 3);
    if (lc->n_plugin_path == 3) {
        CHECK_STR(lc->plugin_path[0], "plugins");   /* as written */
        CHECK_STR(lc->plugin_path[2], "../more-plugins");
    }
    /* relative entries are relative to the config file's directory */
    char want[512];
    snprintf(want, sizeof want, "%s/plugins:/opt/luasched/plugins:%s/../more-plugins", tmp_dir, tmp_dir);
    CHECK_STR(lc->plugin_dirs, want);
    CHECK_INT(lc->plugin_timeout_ms, 250);
    CHECK_INT(lc->instruction_budget, 5000000);
    CHECK_INT(lc->memory_limit_bytes, 67108864);
    ls_config_free(&cfg);

    /* an empty section: present, every default */
    path = write_file("ext-empty.yaml", API "luasched: {}\n");
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(cfg.luasched.present);
    CHECK_INT(cfg.luasched.plugin_timeout_ms, 10000);
    CHECK_INT(cfg.luasched.instruction_budget, 200000000);
    CHECK(cfg.luasched.plugin_dirs == NULL);
    ls_config_free(&cfg);

    /* its validation */
    CHECK_LOAD_ERROR("ext-timeout.yaml", API "luasched:\n  pluginTimeoutMilliseconds: 0\n", 4,
                     "luasched.pluginTimeoutMilliseconds: Invalid value: 0: must be greater than zero");
    CHECK_LOAD_ERROR("ext-budget.yaml", API "luasched:\n  instructionBudget: -5\n", 4,
                     "luasched.instructionBudget: Invalid value: -5: must be greater than zero");
    CHECK_LOAD_ERROR("ext-memory.yaml", API "luasched:\n  memoryLimitBytes: -1\n", 4,
                     "luasched.memoryLimitBytes: Invalid value: -1: must be non-negative");
    CHECK_LOAD_ERROR("ext-path.yaml", API "luasched:\n  pluginPath: plugins\n", 4,
                     "luasched.pluginPath: expected a list of directories");
    CHECK_LOAD_ERROR("ext-path-empty.yaml", API "luasched:\n  pluginPath:\n  - a\n  - ''\n", 6,
                     "luasched.pluginPath[1]: Invalid value: \"\": must not be empty");
    CHECK_LOAD_ERROR("ext-unknown.yaml", API "luasched:\n  pluginTimeout: 5\n", 4,
                     "luasched.pluginTimeout: unknown field (did you mean \"pluginTimeoutMilliseconds\"?)");
    CHECK_LOAD_ERROR("ext-type.yaml", API "luasched: [1]\n", 3, "luasched: expected an object");
}

/* A profile's own luasched block: time, instruction budget and memory limit
 * of that profile's Lua state (memoryLimitBytes 0: unlimited; absent: the
 * configuration's). */
static void test_profile_luasched(void)
{
    const char *path = write_file("prof-lc.yaml", API
                                  "luasched: {memoryLimitBytes: 2000000000}\n"
                                  "profiles:\n"
                                  "- schedulerName: a\n"
                                  "  luasched: {pluginTimeoutMilliseconds: 300, instructionBudget: 4000,"
                                  " memoryLimitBytes: 33554432}\n"
                                  "- schedulerName: b\n"
                                  "  luasched: {memoryLimitBytes: 0}\n"
                                  "- schedulerName: c\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.n_profiles, 3);
    if (cfg.n_profiles == 3) {
        const ls_profile *p = cfg.profiles;
        CHECK_INT(p[0].plugin_timeout_ms, 300);
        CHECK_INT(p[0].instruction_budget, 4000);
        CHECK(p[0].memory_limit_set);
        CHECK_INT(p[0].memory_limit_bytes, 33554432);
        CHECK(p[1].memory_limit_set);           /* given as 0: that state is unlimited */
        CHECK_INT(p[1].memory_limit_bytes, 0);
        CHECK(!p[2].memory_limit_set);          /* the configuration's 2000000000 applies */
        CHECK_INT(p[2].plugin_timeout_ms, 0);
        CHECK_INT(cfg.luasched.memory_limit_bytes, 2000000000);
    }
    ls_config_free(&cfg);

    CHECK_LOAD_ERROR("prof-lc-neg.yaml", API "profiles:\n- schedulerName: a\n  luasched:\n    memoryLimitBytes: -1\n",
                     6, "profiles[0].luasched.memoryLimitBytes: Invalid value: -1: must be non-negative");
    CHECK_LOAD_ERROR("prof-lc-type.yaml",
                     API "profiles:\n- schedulerName: a\n- schedulerName: b\n  luasched:\n    memoryLimitBytes: lots\n",
                     7, "profiles[1].luasched.memoryLimitBytes");
    CHECK_LOAD_ERROR("prof-lc-unknown.yaml", API "profiles:\n- schedulerName: a\n  luasched:\n    memoryLimit: 5\n",
                     6, "profiles[0].luasched.memoryLimit: unknown field");
}

/* ---- every new validation message: file, line, field path, upstream's words */

/* Loading fails and cfg.problems is exactly `want` (NULL-terminated), each
 * with "%s" standing for the file's path. */
static void check_problems(const char *name, const char *text, const char *const *want, int src_line)
{
    const char *path = write_file(name, text);
    ls_config cfg;
    ls_error err = {{0}};
    bool ok = ls_config_load(&cfg, path, &err);
    ls_test_checks++;
    uint32_t n = 0;
    while (want[n])
        n++;
    bool same = !ok && cfg.problems.len == n;
    for (uint32_t i = 0; same && i < n; i++) {
        char expected[1200];
        snprintf(expected, sizeof expected, want[i], path);
        same = strcmp(LS_VEC_AT(&cfg.problems, char *, i), expected) == 0;
    }
    if (!same) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: problems differ; got %u:\n", __FILE__, src_line, cfg.problems.len);
        for (uint32_t i = 0; i < cfg.problems.len; i++)
            fprintf(stderr, "    %s\n", LS_VEC_AT(&cfg.problems, char *, i));
    }
    /* the first problem is the error */
    if (n && cfg.problems.len)
        CHECK_STR(err.msg, LS_VEC_AT(&cfg.problems, char *, 0));
    ls_config_free(&cfg);
}
#define CHECK_PROBLEMS(name, text, ...)                                \
    do {                                                               \
        static const char *const want_[] = {__VA_ARGS__, NULL};        \
        check_problems(name, text, want_, __LINE__);                   \
    } while (0)

static void test_leader_client_validation(void)
{
    CHECK_PROBLEMS("le-order.yaml", API "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
                   "%s:4: leaderElection.leaseDuration: Invalid value: 10s: must be greater than `RenewDeadline`");
    /* client-go: renewDeadline > retryPeriod x 1.2 */
    CHECK_PROBLEMS("le-jitter.yaml", API "leaderElection:\n  renewDeadline: 2400ms\n  retryPeriod: 2s\n",
                   "%s:4: leaderElection.renewDeadline: Invalid value: 2.4s: must be greater than "
                   "retryPeriod*JitterFactor (2.4s)");
    CHECK_PROBLEMS("le-zero.yaml", API "leaderElection:\n  retryPeriod: 0s\n",
                   "%s:4: leaderElection.retryPeriod: Invalid value: 0s: must be greater than zero");
    CHECK_PROBLEMS("le-lock.yaml", API "leaderElection:\n  resourceLock: endpointsleases\n",
                   "%s:4: leaderElection.resourceLock: Invalid value: \"endpointsleases\": resourceLock value must "
                   "be \"leases\"");
    CHECK_PROBLEMS("le-duration.yaml", API "leaderElection:\n  leaseDuration: '15'\n  renewDeadline: 5\n",
                   "%s:4: leaderElection.leaseDuration: invalid duration \"15\": expected a duration such as \"15s\" "
                   "or \"1m30s\"",
                   "%s:5: leaderElection.renewDeadline: expected a duration string such as \"15s\" or \"1m30s\"");
    CHECK_PROBLEMS("le-fields.yaml", API "leaderElection:\n  leaderElection: true\n  leaderElect: 'yes'\n",
                   "%s:4: leaderElection.leaderElection: unknown field (did you mean \"leaderElect\"?)",
                   "%s:5: leaderElection.leaderElect: expected true or false");
    CHECK_PROBLEMS("cc.yaml", API "clientConnection:\n  burst: -1\n  qps: fast\n  timeout: 5s\n",
                   "%s:6: clientConnection.timeout: unknown field", "%s:5: clientConnection.qps: expected a number",
                   "%s:4: clientConnection.burst: Invalid value: -1: must be non-negative");
    CHECK_PROBLEMS("profiling.yaml", API "enableProfiling: 'on'\nhealthzBindAddress: 10251\n",
                   "%s:3: enableProfiling: expected true or false", "%s:4: healthzBindAddress: expected a string");
    CHECK_PROBLEMS("cc-type.yaml", API "clientConnection: fast\n", "%s:3: clientConnection: expected an object");
}

static void test_profile_validation(void)
{
    /* queueSort the same in every profile: the plugin set... */
    CHECK_PROBLEMS("qs-differs.yaml",
                   API "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
                       "      enabled:\n      - name: CustomSort\n      disabled:\n      - name: '*'\n",
                   "%s:7: profiles[1].plugins.queueSort: Invalid value: {\"enabled\":[{\"name\":\"CustomSort\"}],"
                   "\"disabled\":[{\"name\":\"*\"}]}: must be the same for all profiles");
    /* ... and its args, compared with profile 0's */
    CHECK_PROBLEMS("qs-args.yaml",
                   API "profiles:\n"
                       "- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n      - name: CustomSort\n"
                       "  pluginConfig:\n  - name: CustomSort\n    args: {order: fifo}\n"
                       "- schedulerName: b\n  plugins:\n    queueSort:\n      enabled:\n      - name: CustomSort\n"
                       "  pluginConfig:\n  - name: CustomSort\n    args: {order: lifo}\n",
                   "%s:19: profiles[1].pluginConfig[0].args: Invalid value: {\"order\":\"lifo\"}: queueSort must be "
                   "the same for all profiles");
    /* the same sort and args everywhere is fine */
    ls_config cfg;
    ls_error err = {{0}};
    const char *path = write_file("qs-same.yaml", API "profiles:\n"
                                  "- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n"
                                  "      - name: CustomSort\n  pluginConfig:\n  - name: CustomSort\n    args: {x: 1}\n"
                                  "- schedulerName: b\n  plugins:\n    queueSort:\n      enabled:\n"
                                  "      - name: CustomSort\n  pluginConfig:\n  - name: CustomSort\n    args: {x: 1}\n");
    CHECK(ls_config_load(&cfg, path, &err));
    ls_config_free(&cfg);
    /* profile 0 enables at most one */
    CHECK_PROBLEMS("qs-two.yaml",
                   API "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: A\n      - name: B\n",
                   "%s:6: profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one queue sort plugin can be "
                   "enabled");
    /* removed plugins, in plugins (any extension point) and in pluginConfig; disabling one is fine */
    CHECK_PROBLEMS("removed.yaml",
                   API "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n"
                       "      - name: EBSLimits\n      disabled:\n      - name: GCEPDLimits\n"
                       "    multiPoint:\n      enabled:\n      - name: AzureDiskLimits\n"
                       "  pluginConfig:\n  - name: CinderLimits\n",
                   "%s:8: profiles[0].plugins.filter.enabled[1]: Invalid value: \"EBSLimits\": was invalid in version "
                   "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version "
                   "\"kubescheduler.config.k8s.io/v1\")",
                   "%s:13: profiles[0].plugins.multiPoint.enabled[0]: Invalid value: \"AzureDiskLimits\": was invalid "
                   "in version \"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version "
                   "\"kubescheduler.config.k8s.io/v1\")",
                   "%s:15: profiles[0].pluginConfig[0]: Invalid value: \"CinderLimits\": was invalid in version "
                   "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version "
                   "\"kubescheduler.config.k8s.io/v1\")");
    /* every upstream plugin is shipped: the volume plugins and DynamicResources
     * may be enabled, disabled or configured anywhere */
    {
        const char *path = write_file("volume.yaml",
                                      API "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: VolumeZone\n"
                                          "      disabled:\n      - name: VolumeRestrictions\n"
                                          "    preBind:\n      enabled:\n      - name: DynamicResources\n"
                                          "  pluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: 600}\n");
        ls_config cfg;
        ls_error err = {{0}};
        CHECK(ls_config_load(&cfg, path, &err));
        CHECK_STR(err.msg, "");
        ls_config_free(&cfg);
    }
    /* a score weight is not negative */
    CHECK_PROBLEMS("weight.yaml", API "profiles:\n- plugins:\n    score:\n      enabled:\n"
                                      "      - {name: X, weight: -3}\n",
                   "%s:7: profiles[0].plugins.score.enabled[0].weight: Invalid value: -3: must be non-negative");
    /* unknown fields inside profiles, plugin sets, entries */
    CHECK_PROBLEMS("profile-fields.yaml",
                   API "profiles:\n- schedulerName: a\n  plugin: {}\n  plugins:\n    score:\n      enable: []\n"
                       "      enabled:\n      - {name: X, weigth: 2}\n  pluginConfig:\n  - name: X\n    arg: {}\n",
                   "%s:5: profiles[0].plugin: unknown field (did you mean \"plugins\"?)",
                   "%s:8: profiles[0].plugins.score.enable: unknown field (did you mean \"enabled\"?)",
                   "%s:10: profiles[0].plugins.score.enabled[0].weigth: unknown field (did you mean \"weight\"?)",
                   "%s:13: profiles[0].pluginConfig[0].arg: unknown field (did you mean \"args\"?)");
}

/* Every problem of a file at once, in file order within each part, with
 * the structural ones first; loading still gives a usable profile list. */
static void test_all_problems_at_once(void)
{
    CHECK_PROBLEMS("many.yaml",
                   API "parallelism: -2\n"
                       "percentageOfNodesToScore: 120\n"
                       "podInitialBackoffSeconds: 0\n"
                       "podMaxBackoffSeconds: -1\n"
                       "leaderElection: {leaseDuration: 1s, renewDeadline: 2s}\n"
                       "extenders:\n- {urlPrefix: http://x, prioritizeVerb: p}\n"
                       "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 101\n- schedulerName: a\n"
                       "  pluginConfig:\n  - name: P\n  - name: P\n"
                       "colour: blue\n",
                   "%s:17: colour: unknown field",
                   "%s:7: leaderElection.leaseDuration: Invalid value: 1s: must be greater than `RenewDeadline`",
                   "%s:7: leaderElection.renewDeadline: Invalid value: 2s: must be greater than "
                   "retryPeriod*JitterFactor (2.4s)",
                   "%s:3: parallelism: Invalid value: -2: should be an integer value greater than zero",
                   "%s:12: profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                   "%s:16: profiles[1].pluginConfig[1]: Duplicate value: \"P\"",
                   "%s:13: profiles[1].schedulerName: Duplicate value: \"a\"",
                   "%s:4: percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]",
                   "%s:5: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
                   "%s:6: podMaxBackoffSeconds: Invalid value: -1: must be greater than or equal to "
                   "PodInitialBackoffSeconds",
                   "%s:9: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it");
    /* a file that is no configuration at all: that one problem, no profiles */
    const char *path = write_file("not-a-config.yaml", "apiVersion: v1\nkind: Pod\nparallelism: 0\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(!ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.problems.len, 1);
    CHECK_INT(cfg.n_profiles, 0);
    ls_config_free(&cfg);
    path = write_file("bad.yaml", API "profiles: [\n");
    CHECK(!ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.problems.len, 1);
    CHECK_INT(cfg.n_profiles, 0);
    CHECK_CONTAINS(err.msg, "bad.yaml:");
    ls_config_free(&cfg);
    /* the field problems leave a usable configuration for the plugin checks */
    path = write_file("usable.yaml", API "parallelism: 0\nprofiles:\n- schedulerName: x\n- schedulerName: y\n");
    CHECK(!ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.n_profiles, 2);
    ls_config_free(&cfg);
}

/* ---- expansion that gathers every problem (luasched check) */

static void test_expand_all(void)
{
    const char *path = write_file("expand-all.yaml", API "profiles:\n"
                                  "- schedulerName: p\n  plugins:\n"
                                  "    multiPoint:\n      enabled:\n      - name: Nope\n"
                                  "    filter:\n      enabled:\n      - name: CustomScore\n      - name: Nope\n"
                                  "    score:\n      enabled:\n      - name: CustomScore\n      - name: CustomScore\n"
                                  "- schedulerName: q\n  plugins:\n    bind:\n      disabled:\n      - name: '*'\n");
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(!ls_config_expand_all(&cfg, fake_points, NULL));
    char want[4][300];
    /* line 8: the first "- name: Nope" (the file's two API lines, then profiles:) */
    snprintf(want[0], sizeof want[0], "%s:8: profile p: plugin \"Nope\" does not exist", path);
    snprintf(want[1], sizeof want[1], "%s: profile p: plugin \"CustomScore\" does not extend Filter plugin", path);
    snprintf(want[2], sizeof want[2], "%s: profile p: plugin CustomScore already registered as Score", path);
    snprintf(want[3], sizeof want[3], "%s: profile q: at least one bind plugin is needed", path);
    CHECK_INT(cfg.problems.len, 4);   /* Nope once, though named twice */
    for (uint32_t i = 0; i < 4 && i < cfg.problems.len; i++)
        CHECK_STR(LS_VEC_AT(&cfg.problems, char *, i), want[i]);
    /* what could be expanded was: the defaults, and CustomScore once */
    CHECK_STR(plugins_at(&cfg, 0, LS_EP_QUEUE_SORT), "PrioritySort");
    CHECK(strstr(plugins_at(&cfg, 0, LS_EP_SCORE), "CustomScore:1") != NULL);
    CHECK(!strstr(plugins_at(&cfg, 0, LS_EP_FILTER), "CustomScore"));
    ls_config_free(&cfg);

    /* strict expansion stops at the first, with the same words */
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(!ls_config_expand(&cfg, fake_points, NULL, &err));
    CHECK_STR(err.msg, want[0]);
    ls_config_free(&cfg);

    /* a clean file gathers nothing */
    CHECK(ls_config_load(&cfg, NULL, &err));
    CHECK(ls_config_expand_all(&cfg, fake_points, NULL));
    CHECK_INT(cfg.problems.len, 0);
    ls_config_free(&cfg);
}

/* ---- --write-config-to */

/* The text written for a config, or NULL. */
static char *format_file(const char *path, bool expand, bool json)
{
    ls_config cfg;
    ls_error err = {{0}};
    if (!ls_config_load(&cfg, path, &err) || (expand && !ls_config_expand(&cfg, fake_points, NULL, &err))) {
        fprintf(stderr, "format_file %s: %s\n", path, err.msg);
        ls_config_free(&cfg);
        return NULL;
    }
    char *text = ls_config_format(&cfg, json, &err);
    ls_config_free(&cfg);
    return text;
}

static void check_same_values(const ls_config *a, const ls_config *b)
{
    CHECK_INT(a->parallelism, b->parallelism);
    CHECK_INT(a->percentage_of_nodes_to_score, b->percentage_of_nodes_to_score);
    CHECK_INT(a->pod_initial_backoff_seconds, b->pod_initial_backoff_seconds);
    CHECK_INT(a->pod_max_backoff_seconds, b->pod_max_backoff_seconds);
    CHECK_INT(a->leader_election.leader_elect, b->leader_election.leader_elect);
    CHECK_INT(a->leader_election.lease_duration_ns, b->leader_election.lease_duration_ns);
    CHECK_INT(a->leader_election.renew_deadline_ns, b->leader_election.renew_deadline_ns);
    CHECK_INT(a->leader_election.retry_period_ns, b->leader_election.retry_period_ns);
    CHECK_STR(a->leader_election.resource_name, b->leader_election.resource_name);
    CHECK_STR(a->client_connection.kubeconfig, b->client_connection.kubeconfig);
    CHECK(a->client_connection.qps == b->client_connection.qps);
    CHECK_INT(a->client_connection.burst, b->client_connection.burst);
    CHECK_INT(a->enable_profiling, b->enable_profiling);
    CHECK_INT(a->enable_contention_profiling, b->enable_contention_profiling);
    CHECK_INT(a->delay_cache_until_active, b->delay_cache_until_active);
    CHECK_INT(a->luasched.present, b->luasched.present);
    CHECK_INT(a->luasched.plugin_timeout_ms, b->luasched.plugin_timeout_ms);
    CHECK_INT(a->luasched.n_plugin_path, b->luasched.n_plugin_path);
    CHECK_INT(a->n_profiles, b->n_profiles);
    for (uint32_t p = 0; p < a->n_profiles && p < b->n_profiles; p++) {
        CHECK_STR(ls_str_get(a->profiles[p].scheduler_name), ls_str_get(b->profiles[p].scheduler_name));
        CHECK_INT(a->profiles[p].percentage_of_nodes_to_score, b->profiles[p].percentage_of_nodes_to_score);
        CHECK_INT(a->profiles[p].instruction_budget, b->profiles[p].instruction_budget);
        CHECK_INT(a->profiles[p].plugin_timeout_ms, b->profiles[p].plugin_timeout_ms);
        CHECK_INT(a->profiles[p].memory_limit_set, b->profiles[p].memory_limit_set);
        CHECK_INT(a->profiles[p].memory_limit_bytes, b->profiles[p].memory_limit_bytes);
        for (int ep = 0; ep < LS_EP_COUNT; ep++) {
            char pa[512];
            snprintf(pa, sizeof pa, "%s", plugins_at(a, p, ep));
            CHECK_STR(plugins_at(b, p, ep), pa);
        }
        /* the given args survive (the written file has an entry for every plugin besides) */
        for (const cJSON *c = a->profiles[p].plugin_args->child; c; c = c->next)
            CHECK(cJSON_Compare(c, cJSON_GetObjectItemCaseSensitive(b->profiles[p].plugin_args, c->string), true));
    }
}

#define ROUND_TRIP_SOURCE                                                                                 \
    API "parallelism: 8\n"                                                                                \
        "percentageOfNodesToScore: 40\n"                                                                  \
        "podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 60\n"                                         \
        "leaderElection: {leaderElect: false, leaseDuration: 1.5h, retryPeriod: 750ms}\n"                 \
        "clientConnection: {kubeconfig: /k.conf, qps: 12.5, burst: 7}\n"                                  \
        "enableProfiling: false\ndelayCacheUntilActive: true\n"                                           \
        "luasched: {pluginPath: [plugins], pluginTimeoutMilliseconds: 99}\n"                              \
        "profiles:\n"                                                                                     \
        "- schedulerName: main\n  percentageOfNodesToScore: 70\n  plugins:\n"                             \
        "    multiPoint:\n      enabled:\n      - {name: CustomScore, weight: 4}\n"                       \
        "      - {name: TaintToleration, weight: 9}\n      disabled:\n      - name: ImageLocality\n"       \
        "    score:\n      disabled:\n      - name: NodeResourcesFit\n"                                   \
        "      enabled:\n      - {name: NodeResourcesFit, weight: 5}\n"                                   \
        "  pluginConfig:\n  - name: CustomScore\n    args: {label: 'true', levels: [1, 2.5], on: '10',"   \
        " nested: {x: null}}\n"                                                                           \
        "  luasched: {instructionBudget: 777, memoryLimitBytes: 0}\n"                                     \
        "- schedulerName: other\n  luasched: {memoryLimitBytes: 33554432}\n"                              \
        "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n"                                \
        "      enabled:\n      - name: PrioritySort\n      - name: DefaultBinder\n      - name: Gate\n"

static void test_write_round_trip(void)
{
    const char *src = write_file("round.yaml", ROUND_TRIP_SOURCE);
    for (int json = 0; json <= 1; json++) {
        char *first = format_file(src, true, json);
        CHECK(first != NULL);
        if (!first)
            continue;
        const char *copy = write_file(json ? "round-out.json" : "round-out.yaml", first);
        ls_config a, b;
        ls_error err = {{0}};
        CHECK(ls_config_load(&a, src, &err) && ls_config_expand(&a, fake_points, NULL, &err));
        CHECK(ls_config_load(&b, copy, &err));
        CHECK(ls_config_expand(&b, fake_points, NULL, &err));
        check_same_values(&a, &b);
        ls_config_free(&a);
        ls_config_free(&b);
        /* writing what was written changes nothing */
        char *second = format_file(copy, true, json);
        CHECK(second && strcmp(first, second) == 0);
        free(first);
        free(second);
    }
}

/* v1.37's configured extension points: the ones the exact texts below name. */
static bool is_v137_point(const char *key)
{
    static const char *const keys[] = {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                                       "score",      "reserve",   "permit",    "preBind", "bind",       "postBind"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

/* A written configuration without the "    <key>: {}" line of each point of
 * the extension-point table beyond v1.37's (each checked written), so that
 * the exact text holds with a point added to the table. Edits `text`. */
static char *v137_points_only(char *text)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        const char *key = ls_ext_point_info_of(ep)->config_key;
        if (is_v137_point(key))
            continue;
        char line[96];
        snprintf(line, sizeof line, "\n    %s: {}\n", key);
        char *at = strstr(text, line);
        CHECK(at != NULL);
        if (at)
            memmove(at + 1, at + strlen(line), strlen(at + strlen(line)) + 1);
    }
    return text;
}

/* The exact YAML of a small configuration, as kube-scheduler writes it (no
 * plugins built: pluginConfig holds the given args). */
static void test_write_exact(void)
{
    const char *src = write_file("exact.yaml", API
                                 "profiles:\n- schedulerName: s\n  plugins:\n"
                                 "    multiPoint:\n      disabled:\n      - name: '*'\n      enabled:\n"
                                 "      - name: PrioritySort\n      - name: NodeName\n      - name: DefaultBinder\n"
                                 "    filter:\n      disabled:\n      - name: NodeName\n"
                                 "  pluginConfig:\n  - name: NodeName\n    args: {strict: yes, value: '0x1F'}\n");
    char *text = format_file(src, true, false);
    CHECK_STR(v137_points_only(text), "apiVersion: kubescheduler.config.k8s.io/v1\n"
                    "clientConnection:\n"
                    "  acceptContentTypes: \"\"\n"
                    "  burst: 100\n"
                    "  contentType: application/vnd.kubernetes.protobuf\n"
                    "  kubeconfig: \"\"\n"
                    "  qps: 50\n"
                    "enableContentionProfiling: true\n"
                    "enableProfiling: true\n"
                    "kind: KubeSchedulerConfiguration\n"
                    "leaderElection:\n"
                    "  leaderElect: true\n"
                    "  leaseDuration: 15s\n"
                    "  renewDeadline: 10s\n"
                    "  resourceLock: leases\n"
                    "  resourceName: kube-scheduler\n"
                    "  resourceNamespace: kube-system\n"
                    "  retryPeriod: 2s\n"
                    "parallelism: 16\n"
                    "percentageOfNodesToScore: 0\n"
                    "podInitialBackoffSeconds: 1\n"
                    "podMaxBackoffSeconds: 10\n"
                    "profiles:\n"
                    "- pluginConfig:\n"
                    "  - args:\n"
                    "      strict: \"yes\"\n"
                    "      value: \"0x1F\"\n"
                    "    name: NodeName\n"
                    "  plugins:\n"
                    "    bind: {}\n"
                    "    filter:\n"
                    "      disabled:\n"
                    "      - name: NodeName\n"
                    "        weight: 0\n"
                    "    multiPoint:\n"
                    "      disabled:\n"
                    "      - name: '*'\n"
                    "        weight: 0\n"
                    "      enabled:\n"
                    "      - name: PrioritySort\n"
                    "        weight: 0\n"
                    "      - name: NodeName\n"
                    "        weight: 0\n"
                    "      - name: DefaultBinder\n"
                    "        weight: 0\n"
                    "    permit: {}\n"
                    "    placementGenerate: {}\n"
                    "    placementScore: {}\n"
                    "    podGroupPostFilter: {}\n"
                    "    postBind: {}\n"
                    "    postFilter: {}\n"
                    "    preBind: {}\n"
                    "    preEnqueue: {}\n"
                    "    preFilter: {}\n"
                    "    preScore: {}\n"
                    "    queueSort: {}\n"
                    "    reserve: {}\n"
                    "    score: {}\n"
                    "  schedulerName: s\n");
    free(text);

    /* completed args replace the given ones only for upstream's typed args
     * (none here): NodeName keeps the args as given, PrioritySort (no args
     * given, no typed args) has no entry */
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, src, &err) && ls_config_expand(&cfg, fake_points, NULL, &err));
    cfg.completed_args = cJSON_Parse("[{\"PrioritySort\": {\"order\": \"priority\"}, \"NodeName\": {\"strict\": true}}]");
    text = ls_config_format(&cfg, true, &err);
    CHECK_CONTAINS(text, "\"strict\":\t\"yes\"");
    CHECK(strstr(text, "\"order\"") == NULL);
    free(text);

    /* ls_config_write: .json picks JSON; a path that cannot be written is an error naming it */
    char out[160];
    snprintf(out, sizeof out, "%s/written.json", tmp_dir);
    CHECK(ls_config_write(&cfg, out, &err));
    ls_config again;
    CHECK(ls_config_load(&again, out, &err));
    CHECK_STR(ls_str_get(again.profiles[0].scheduler_name), "s");
    ls_config_free(&again);
    unlink(out);
    CHECK(!ls_config_write(&cfg, "/nonexistent-dir/x.yaml", &err));
    CHECK_CONTAINS(err.msg, "/nonexistent-dir/x.yaml: cannot write file");
    ls_config_free(&cfg);
}

/* ---- the example configurations under profiles/examples */

static void test_examples(void)
{
    static const char *const files[] = {"multiple-profiles.yaml", "disabled-plugins.yaml", "plugin-args.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/../profiles/examples/%s", LS_SPEC_DIR, files[i]);
        ls_config cfg;
        ls_error err = {{0}};
        bool ok = ls_config_load(&cfg, path, &err) && ls_config_expand(&cfg, fake_points, NULL, &err);
        if (!ok)
            fprintf(stderr, "%s: %s\n", files[i], err.msg);
        CHECK(ok);
        CHECK_INT(cfg.problems.len, 0);
        CHECK(!cfg.luasched.present);   /* upstream files: no luasched section */
        ls_config_free(&cfg);
    }
    /* what they set */
    char path[512];
    snprintf(path, sizeof path, "%s/../profiles/examples/disabled-plugins.yaml", LS_SPEC_DIR);
    ls_config cfg;
    ls_error err = {{0}};
    CHECK(ls_config_load(&cfg, path, &err) && ls_config_expand(&cfg, fake_points, NULL, &err));
    CHECK_INT(cfg.parallelism, 32);
    CHECK_INT(cfg.leader_election.lease_duration_ns, 30000000000LL);
    CHECK_STR(cfg.leader_election.resource_namespace, "scheduling");
    CHECK(!strstr(plugins_at(&cfg, 0, LS_EP_SCORE), "ImageLocality"));
    CHECK(strstr(plugins_at(&cfg, 0, LS_EP_SCORE), "TaintToleration:6") != NULL);
    CHECK(!strstr(plugins_at(&cfg, 0, LS_EP_FILTER), "NodePorts"));
    ls_config_free(&cfg);
    snprintf(path, sizeof path, "%s/../profiles/examples/multiple-profiles.yaml", LS_SPEC_DIR);
    CHECK(ls_config_load(&cfg, path, &err) && ls_config_expand(&cfg, fake_points, NULL, &err));
    CHECK_INT(cfg.n_profiles, 2);
    CHECK_INT(ls_config_profile_index(&cfg, ls_intern_cstr("bin-packing")), 1);
    CHECK_STR(cfg.client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
    ls_config_free(&cfg);
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ls-test-config-XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_defaults();
    test_explicit_values();
    test_validation();
    test_expand_defaults();
    test_expand_overrides();
    test_expand_multi_point();
    test_expand_errors();
    test_all_fields();
    test_durations();
    test_luasched_section();
    test_profile_luasched();
    test_leader_client_validation();
    test_profile_validation();
    test_all_problems_at_once();
    test_expand_all();
    test_write_round_trip();
    test_write_exact();
    test_examples();
    CHECK(fake_calls > 0);
    cleanup_files();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
