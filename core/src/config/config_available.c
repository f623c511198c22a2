/*
 * config_available.c: the plugins the API server cannot serve (their API
 * group version is missing; `luasched run` learns it from discovery,
 * client/api_needs.c). Expansion leaves them out of the default multiPoint
 * set, as upstream leaves out a plugin whose feature gate is off, and reports
 * a profile that enables one explicitly (config.c). Process-wide: set once at
 * start, before the first configuration is expanded; reloads see the same.
 */
#include "config/config_internal.h"

#include <stdio.h>
#include <string.h>

enum { MAX_UNAVAILABLE = 16 };

static struct {
    ls_str plugin;
    char api[160];
} unavailable[MAX_UNAVAILABLE];
static uint32_t n_unavailable;

void ls_config_set_unavailable(const char *plugin, const char *api)
{
    ls_str name = ls_intern_cstr(plugin);
    if (ls_config_unavailable_api(name) || n_unavailable == MAX_UNAVAILABLE)
        return;
    unavailable[n_unavailable].plugin = name;
    snprintf(unavailable[n_unavailable].api, sizeof unavailable[n_unavailable].api, "%s", api);
    n_unavailable++;
}

void ls_config_clear_unavailable(void)
{
    n_unavailable = 0;
}

const char *ls_config_unavailable_api(ls_str plugin)
{
    for (uint32_t i = 0; i < n_unavailable; i++)
        if (unavailable[i].plugin == plugin)
            return unavailable[i].api;
    return NULL;
}
