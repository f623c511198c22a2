/*
 * check.c: the configuration tools, which load a configuration and its
 * plugins without a cluster. `luasched check CONFIG` reports every problem at
 * once (fields first, then each profile's plugins); --write-config-to (a flag
 * of simulate and explain) writes the completed configuration.
 */
#include "cli/cli.h"
#include "framework/runtime.h"
#include "luasched/config.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Lua state with the plugin path and limits of the configuration (the
 * --plugin-path flag, when given, replaces its pluginPath). */
typedef struct plugin_env {
    ls_cycle *cycle;
    ls_lua *lua;
} plugin_env;

static bool points_of(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    return ls_lua_plugin_points(ud, name, points, err);
}

static bool env_open(plugin_env *env, const ls_config *cfg, const char *plugin_path, ls_error *err)
{
    env->cycle = ls_xcalloc(1, sizeof *env->cycle);
    ls_lua_options lo = {.plugin_path = plugin_path};
    ls_lua_options_from_config(&lo, cfg);
    env->lua = ls_lua_new(env->cycle, &lo, err);
    return env->lua != NULL;
}

static void env_close(plugin_env *env)
{
    ls_lua_free(env->lua);
    free(env->cycle);
    memset(env, 0, sizeof *env);
}

/* ---- --write-config-to */

char *ls_cli_completed_config(ls_config *cfg, const char *plugin_path, bool json, ls_error *err)
{
    plugin_env env = {0};
    char *text = NULL;
    bool ok = env_open(&env, cfg, plugin_path, err) && ls_config_expand(cfg, points_of, env.lua, err) &&
              ls_lua_build(env.lua, cfg->profiles, cfg->n_profiles, err);
    if (ok) {
        cfg->completed_args = ls_lua_completed_args(env.lua, cfg->profiles, cfg->n_profiles, err);
        text = cfg->completed_args ? ls_config_format(cfg, json, err) : NULL;
    }
    env_close(&env);
    return text;
}

static bool build_and_write(ls_config *cfg, const ls_sim_opts *o, ls_error *err)
{
    const char *path = o->write_config;
    size_t len = strlen(path);
    bool json = strcmp(path, "-") != 0 && len > 5 && strcmp(path + len - 5, ".json") == 0;
    FILE *out = ls_cli_output_open(path, "w", err);   /* before any plugin code runs */
    if (!out)
        return false;
    plugin_env env = {0};
    char *text = NULL;
    bool ok = env_open(&env, cfg, o->plugin_path, err) && ls_config_expand(cfg, points_of, env.lua, err) &&
              ls_lua_build(env.lua, cfg->profiles, cfg->n_profiles, err);
    if (ok) {
        cfg->completed_args = ls_lua_completed_args(env.lua, cfg->profiles, cfg->n_profiles, err);
        text = cfg->completed_args ? ls_config_format(cfg, json, err) : NULL;
        ok = text != NULL;
    }
    env_close(&env);
    ls_error werr;
    bool written = ls_cli_output_finish(out, path, text, &werr);
    if (ok && !written) {
        *err = werr;
        ok = false;
    }
    free(text);
    return ok;
}

int ls_cli_write_config(const char *cmd, const ls_sim_opts *o)
{
    ls_config cfg;
    ls_error err;
    int rc = LS_EXIT_OK;
    if (!ls_config_load(&cfg, o->config, &err)) {
        for (uint32_t i = 0; i < cfg.problems.len; i++)
            fprintf(stderr, "luasched %s: %s\n", cmd, LS_VEC_AT(&cfg.problems, char *, i));
        rc = LS_EXIT_USAGE;
    } else if (!build_and_write(&cfg, o, &err)) {
        fprintf(stderr, "luasched %s: %s\n", cmd, err.msg);
        rc = LS_EXIT_USAGE;
    }
    ls_config_free(&cfg);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}

/* ---- check */

static void check_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched check CONFIG [flags]\n"
            "\n"
            "Loads a KubeSchedulerConfiguration and every plugin its profiles name, and reports every\n"
            "problem at once, one per line: the file's fields first (file, line, field path, in upstream's\n"
            "wording), then for each profile: plugins that cannot be found or loaded (Lua syntax and runtime\n"
            "errors), bad events tables, args a plugin's init refuses, plugins listed at an extension point\n"
            "they do not implement, plugins registered twice, not exactly one QueueSort or no Bind plugin.\n"
            "Prints \"ok: CONFIG: N profiles, M plugins\" and exits 0 when there is none; otherwise prints\n"
            "\"N problems\" last and exits 2.\n"
            "\n"
            "flags:\n"
            "  --feature-gates A=true,B=false\n"
            "                       upstream's scheduler gates, v1.37 defaults (docs/configuration/feature-gates.md)\n"
            "  --plugin-path DIRS   ':'-separated plugin directories searched before the built-in ones\n"
            "                       (instead of the configuration's luasched.pluginPath)\n"
            "  -h, --help           this help\n");
}

static void add_problem(ls_config *cfg, const char *what)
{
    size_t n = strlen(cfg->source) + strlen(what) + 3;
    char *msg = ls_xmalloc(n);
    snprintf(msg, n, "%s: %s", cfg->source, what);
    *(char **)ls_vec_push(&cfg->problems) = msg;
}

/* Runs the plugin checks of dispatch's M.check and adds their problems. */
static void check_in_lua(ls_config *cfg, ls_lua *lua, ls_vec *resolved)
{
    ls_vec found;
    ls_vec_init(&found, sizeof(char *));
    ls_error err;
    if (!ls_lua_check(lua, cfg->profiles, cfg->n_profiles, &found, resolved, &err))
        add_problem(cfg, err.msg);
    for (uint32_t i = 0; i < found.len; i++) {
        add_problem(cfg, LS_VEC_AT(&found, char *, i));
        free(LS_VEC_AT(&found, char *, i));
    }
    ls_vec_free(&found);
}

/* The profile a problem names ("file[:line]: profile NAME: ..."); n_profiles if none. */
static uint32_t profile_of(const ls_config *cfg, const char *msg)
{
    size_t n = strlen(cfg->source);
    if (strncmp(msg, cfg->source, n) != 0)
        return cfg->n_profiles;
    msg += n;
    if (msg[0] == ':' && msg[1] >= '0' && msg[1] <= '9')   /* the line of the plugin's name */
        msg += 1 + strspn(msg + 1, "0123456789");
    for (uint32_t p = 0; p < cfg->n_profiles; p++) {
        char prefix[600];
        ls_str name = cfg->profiles[p].scheduler_name;
        if (ls_str_len(name))
            snprintf(prefix, sizeof prefix, ": profile %s: ", ls_str_get(name));
        else   /* as config.c names a profile without a name */
            snprintf(prefix, sizeof prefix, ": profile profiles[%u]: ", p);
        if (strncmp(msg, prefix, strlen(prefix)) == 0)
            return p;
    }
    return cfg->n_profiles;
}

/* Orders problems[from..] by profile, keeping the order within a profile. */
static void group_by_profile(ls_config *cfg, uint32_t from)
{
    char **v = (char **)cfg->problems.data;
    for (uint32_t i = from + 1; i < cfg->problems.len; i++) {
        char *msg = v[i];
        uint32_t p = profile_of(cfg, msg), j = i;
        for (; j > from && profile_of(cfg, v[j - 1]) > p; j--)
            v[j] = v[j - 1];
        v[j] = msg;
    }
}

/* The plugins of every profile: expansion (loading each plugin, extension
 * points, registrations), M.check, and, when all that passed, the build
 * simulate would do, so that "ok" means it builds. Their problems come after
 * the file's, profile by profile. */
static void check_plugins(ls_config *cfg, const char *plugin_path, ls_vec *resolved)
{
    plugin_env env = {0};
    ls_error err;
    uint32_t from = cfg->problems.len;
    if (!env_open(&env, cfg, plugin_path, &err)) {
        add_problem(cfg, err.msg);
        env_close(&env);
        return;
    }
    ls_config_expand_all(cfg, points_of, env.lua);
    check_in_lua(cfg, env.lua, resolved);
    if (cfg->problems.len == 0 && !ls_lua_build(env.lua, cfg->profiles, cfg->n_profiles, &err))
        add_problem(cfg, err.msg);
    env_close(&env);
    group_by_profile(cfg, from);
}

/* Distinct plugins over every profile's extension points. */
static uint32_t count_plugins(const ls_config *cfg)
{
    ls_vec seen;
    ls_vec_init(&seen, sizeof(ls_str));
    for (uint32_t p = 0; p < cfg->n_profiles; p++)
        for (int ep = 0; ep < LS_EP_COUNT; ep++)
            for (uint32_t i = 0; i < cfg->profiles[p].plugins[ep].len; i++) {
                ls_str name = LS_VEC_AT(&cfg->profiles[p].plugins[ep], ls_plugin_ref, i).name;
                bool known = false;
                for (uint32_t k = 0; k < seen.len && !known; k++)
                    known = LS_VEC_AT(&seen, ls_str, k) == name;
                if (!known)
                    *(ls_str *)ls_vec_push(&seen) = name;
            }
    uint32_t n = seen.len;
    ls_vec_free(&seen);
    return n;
}

/* After "ok": the file each enabled plugin resolves to, profile by profile
 * ("  profile P: plugin N: FILE (built-in)"). */
static int report(const ls_config *cfg, const char *path, const ls_vec *resolved)
{
    uint32_t n = cfg->problems.len;
    if (n == 0) {
        uint32_t plugins = count_plugins(cfg);
        printf("ok: %s: %u profile%s, %u plugin%s\n", path, cfg->n_profiles, cfg->n_profiles == 1 ? "" : "s", plugins,
               plugins == 1 ? "" : "s");
        for (uint32_t i = 0; i < resolved->len; i++)
            printf("  %s\n", LS_VEC_AT(resolved, char *, i));
        return LS_EXIT_OK;
    }
    for (uint32_t i = 0; i < n; i++)
        printf("%s\n", LS_VEC_AT(&cfg->problems, char *, i));
    printf("%u problem%s\n", n, n == 1 ? "" : "s");
    return LS_EXIT_USAGE;
}

/* The config path and --plugin-path; -1 after --help. */
static int parse_check_args(int argc, char **argv, const char **path, const char **plugin_path)
{
    static const struct option longopts[] = {
        {"plugin-path", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p': *plugin_path = optarg; break;
        case 'h': check_usage(stdout); return -1;
        default: check_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "luasched check: expected 1 argument, got %d\n", argc - optind);
        check_usage(stderr);
        return LS_EXIT_USAGE;
    }
    *path = argv[optind];
    return 0;
}

int ls_cli_check(int argc, char **argv)
{
    const char *path = NULL, *plugin_path = NULL;
    int rc = parse_check_args(argc, argv, &path, &plugin_path);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_config cfg;
    ls_error err;
    ls_config_load(&cfg, path, &err);
    ls_vec resolved;
    ls_vec_init(&resolved, sizeof(char *));
    if (cfg.n_profiles > 0)   /* the file could be read: its plugins can be checked */
        check_plugins(&cfg, plugin_path, &resolved);
    rc = report(&cfg, path, &resolved);
    for (uint32_t i = 0; i < resolved.len; i++)
        free(LS_VEC_AT(&resolved, char *, i));
    ls_vec_free(&resolved);
    ls_config_free(&cfg);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}
