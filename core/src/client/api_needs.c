/*
 * api_needs.c: what depends on which API (see api_needs.h).
 */
#include "client/api_needs.h"

#include "luasched/config.h"

#include <stdio.h>
#include <string.h>

/* The default plugins that need an API group version beyond the core ones
 * every supported server (v1.28 and later) serves, and the resource whose
 * absence says so. */
static const struct {
    const char *plugin, *group, *version, *resource;
} DEFAULT_NEEDS[] = {
    {"DynamicResources", "resource.k8s.io", "v1", "resourceclaims"},
};

void ls_api_needs_apply(ls_discovery *d)
{
    for (size_t i = 0; i < sizeof DEFAULT_NEEDS / sizeof DEFAULT_NEEDS[0]; i++) {
        if (ls_discovery_serves(d, DEFAULT_NEEDS[i].group, DEFAULT_NEEDS[i].version, DEFAULT_NEEDS[i].resource))
            continue;
        char api[200], what[200];
        snprintf(api, sizeof api, "%s/%s", DEFAULT_NEEDS[i].group, DEFAULT_NEEDS[i].version);
        snprintf(what, sizeof what, "plugin %s and its watches", DEFAULT_NEEDS[i].plugin);
        ls_config_set_unavailable(DEFAULT_NEEDS[i].plugin, api);
        ls_discovery_note_off(d, what, DEFAULT_NEEDS[i].group, DEFAULT_NEEDS[i].version, NULL);
    }
}

enum { MAX_USES = 64 };

/* Whether any custom resource of (profile, plugin) is served. */
static bool plugin_served(ls_discovery *d, const ls_custom_use *uses, uint32_t n, const ls_custom_use *u)
{
    for (uint32_t i = 0; i < n; i++)
        if (uses[i].profile == u->profile && uses[i].plugin == u->plugin && ls_discovery_serves_name(d, uses[i].resource))
            return true;
    return false;
}

static void resources_of(const ls_custom_use *uses, uint32_t n, const ls_custom_use *u, char *buf, size_t len)
{
    buf[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        if (uses[i].profile == u->profile && uses[i].plugin == u->plugin)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", uses[i].resource);
}

bool ls_api_needs_check(ls_discovery *d, const ls_scheduler *s, ls_error *err)
{
    ls_custom_use uses[MAX_USES];
    uint32_t n = ls_scheduler_custom_uses(s, uses, MAX_USES);
    for (uint32_t i = 0; i < n; i++) {
        if (!plugin_served(d, uses, n, &uses[i])) {
            char list[1000];
            resources_of(uses, n, &uses[i], list, sizeof list);
            const ls_profile *p = ls_scheduler_profile(s, uses[i].profile);
            return ls_errorf(err, "%s: profile %s: plugin %s is enabled but reads %s, which the API server (%s) does "
                                  "not serve: install the API (its CustomResourceDefinition or the feature that "
                                  "serves it) or remove the plugin from the profile",
                             ls_scheduler_config(s)->source, p ? ls_str_get(p->scheduler_name) : "?", uses[i].plugin, list,
                             *ls_discovery_server_version(d) ? ls_discovery_server_version(d) : "version unknown");
        }
    }
    return true;
}
