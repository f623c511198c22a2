/*
 * api_custom.c: the custom resources the served API learns from cluster
 * files. A document whose apiVersion names a group with a dot in it (not a
 * core or built-in group) and whose kind is not served already registers a
 * resource: plural by the rule CRDs follow by default (ls_custom_resource_name,
 * the name plugins and the client use), namespaced unless the model lists the
 * kind as cluster-scoped (as the embedded cluster decides).
 *
 * The registry is process-wide and only grows (at most API_MAX_CUSTOM
 * entries, without heap memory): entries are written whole before the count
 * that publishes them, at load time, before serving.
 */
#include "luasched/objects.h"
#include "sim/api_internal.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct custom_entry {
    ls_api_resource r;
    char group[128], version[64], plural[128], singular[128], kind[128];
} custom_entry;

static custom_entry custom[API_MAX_CUSTOM];
static _Atomic uint32_t n_custom;

uint32_t api_custom_count(void)
{
    return n_custom;
}

const ls_api_resource *api_custom_at(uint32_t i)
{
    return i < n_custom ? &custom[i].r : NULL;
}

static bool cluster_scoped(const char *kind, const char *plural, const char *version, const char *group)
{
    char full[400];
    snprintf(full, sizeof full, "%s.%s.%s", plural, version, group);
    return ls_object_kind_cluster_scoped(kind) || ls_object_kind_cluster_scoped(full);
}

const ls_api_resource *api_custom_register(const cJSON *obj, ls_error *err)
{
    const char *kind = ls_json_text(obj, "kind", NULL), *av = ls_json_text(obj, "apiVersion", NULL);
    char name[400];
    if (!ls_custom_resource_name(kind, av, name, sizeof name))
        return NULL;   /* core or built-in groups are served from the fixed table or not at all */
    const char *slash = strchr(av, '/');
    char group[128], version[64], plural[128];
    snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
    snprintf(version, sizeof version, "%s", slash + 1);
    snprintf(plural, sizeof plural, "%.*s", (int)(strchr(name, '.') - name), name);
    const ls_api_resource *known = ls_api_resource_find(group, version, plural);
    if (known)
        return known;
    uint32_t n = n_custom;
    if (n >= API_MAX_CUSTOM) {
        ls_errorf(err, "%s %s: more than %d custom resources", av, kind, API_MAX_CUSTOM);
        return NULL;
    }
    custom_entry *e = &custom[n];
    snprintf(e->group, sizeof e->group, "%s", group);
    snprintf(e->version, sizeof e->version, "%s", version);
    snprintf(e->plural, sizeof e->plural, "%s", plural);
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    snprintf(e->singular, sizeof e->singular, "%s", kind);
    for (char *p = e->singular; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    e->r = (ls_api_resource){e->group, e->version, e->plural, e->singular, e->kind,
                             !cluster_scoped(kind, plural, version, group), NULL, "status", NULL};
    n_custom = n + 1;
    return &e->r;
}
