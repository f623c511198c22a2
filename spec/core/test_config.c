/*
 * test_config.c: KubeSchedulerConfiguration loading and multiPoint expansion
 * (core/src/config/config.c) against the reference, §5.1 (defaults), §5.3
 * (validation, with file:line and field path in every message) and §2.1 /
 * §1.5 (mergePlugins, expandMultiPointPlugins, score weights). Config files
 * are written to a fresh directory under /tmp; plugins are a fake table of
 * name -> extension points handed to ls_config_expand.
 */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */

#include "luasched/config.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
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
                     "apiVersion: expected \"kubescheduler.config.k8s.io/v1\", got kubescheduler.config.k8s.io/v1beta3");
    CHECK_LOAD_ERROR("kind.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", 2,
                     "kind: expected \"KubeSchedulerConfiguration\"");
    /* percentageOfNodesToScore in [0, 100], globally and per profile */
    CHECK_LOAD_ERROR("percentage.yaml", API "percentageOfNodesToScore: 101\n", 3,
                     "percentageOfNodesToScore: must be in the range [0, 100], got 101");
    CHECK_LOAD_ERROR("profile-percentage.yaml",
                     API "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n", 5,
                     "profiles[0].percentageOfNodesToScore: must be in the range [0, 100], got -1");
    /* parallelism > 0; podInitialBackoffSeconds > 0 */
    CHECK_LOAD_ERROR("parallelism.yaml", API "parallelism: 0\n", 3, "parallelism: must be in the range [1, ");
    CHECK_LOAD_ERROR("parallelism-type.yaml", API "parallelism: '4'\n", 3, "parallelism: expected an integer");
    CHECK_LOAD_ERROR("initial-backoff.yaml", API "podInitialBackoffSeconds: 0\n", 3,
                     "podInitialBackoffSeconds: must be in the range [1, ");
    /* podMaxBackoffSeconds >= podInitialBackoffSeconds, pointing at the max */
    CHECK_LOAD_ERROR("backoff.yaml", API "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 3\n", 4,
                     "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds");
    /* an initial above the default max (10): the initial value's line, the max's path */
    CHECK_LOAD_ERROR("backoff-initial.yaml", API "parallelism: 2\npodInitialBackoffSeconds: 20\n", 4,
                     "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds");
    /* a max below the default initial (1) is still a range error first */
    CHECK_LOAD_ERROR("backoff-default.yaml", API "podMaxBackoffSeconds: 0\n", 3,
                     "podMaxBackoffSeconds: must be in the range [1, ");
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
    CHECK_LOAD_ERROR("plugin-name.yaml",
                     API "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 2\n", 7,
                     "profiles[0].plugins.filter.enabled[0].name: expected a plugin name");
    CHECK_LOAD_ERROR("plugin-weight.yaml",
                     API "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: X, weight: x}\n", 7,
                     "profiles[0].plugins.score.enabled[0].weight: expected an integer");
    /* pluginConfig names are unique */
    CHECK_LOAD_ERROR("plugin-config.yaml",
                     API "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n  - name: NodeResourcesFit\n", 6,
                     "profiles[0].pluginConfig[1].name: Duplicate value: \"NodeResourcesFit\"");
    /* whole-file problems */
    CHECK_LOAD_ERROR("two-docs.yaml", API "---\n" API, 0,
                     "expected exactly one KubeSchedulerConfiguration document, found 2");
    CHECK_LOAD_ERROR("extenders.yaml", API "extenders:\n- urlPrefix: http://x\n", 3,
                     "extenders: scheduler extenders are not supported");

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

/* upstream's default v1 profile (reference §2.1) without the volume plugins,
 * which luasched does not ship: name and weight, in multiPoint order. */
static const struct {
    const char *name;
    int weight;
} upstream_defaults[] = {
    {"SchedulingGates", 0}, {"PrioritySort", 0}, {"NodeUnschedulable", 0}, {"NodeName", 0},
    {"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodePorts", 0}, {"NodeResourcesFit", 1},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1}, {"DefaultBinder", 0},
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
    CHECK(!ls_config_default_enabled("VolumeBinding"));
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
    CHECK(fake_calls > 0);
    cleanup_files();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
