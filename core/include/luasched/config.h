/*
 * config.h: KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
 * parse, default, and expand each profile's plugins (multiPoint included)
 * into per-extension-point lists in run order.
 */
#ifndef LUASCHED_CONFIG_H
#define LUASCHED_CONFIG_H

#include "luasched/framework.h"

typedef struct ls_config {
    char *source;                        /* the file, or "<defaults>" */
    int32_t parallelism;
    int32_t percentage_of_nodes_to_score;
    int32_t pod_initial_backoff_seconds, pod_max_backoff_seconds;
    uint32_t n_profiles;
    ls_profile *profiles;
    /* Per profile, the plugin sets as written, before expansion. */
    struct raw_profile *raw_profiles;
} ls_config;

/* Tells whether a plugin defines the hook of an extension point (the Lua
 * runtime answers); multiPoint expansion needs it. */
typedef bool (*ls_plugin_points_fn)(void *ud, const char *name, uint32_t *points, ls_error *err);

/* Loads a config file (NULL: the built-in default). Errors name file, line, field. */
bool ls_config_load(ls_config *cfg, const char *path, ls_error *err);
/* Expands multiPoint into each extension point; fills cfg->profiles[i].plugins. */
bool ls_config_expand(ls_config *cfg, ls_plugin_points_fn points, void *ud, ls_error *err);
void ls_config_free(ls_config *cfg);
/* Whether upstream's default plugin `name` is in the built-in default profile. */
bool ls_config_default_enabled(const char *name);
int32_t ls_config_profile_index(const ls_config *cfg, ls_str scheduler_name);  /* -1 if none */

#endif
