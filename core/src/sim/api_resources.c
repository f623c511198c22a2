/*
 * api_resources.c: the table of served resources and the discovery documents
 * built from it (/api, /api/v1, /apis, /apis/GROUP/VERSION), as kubectl and
 * client-go expect them.
 */
#include "sim/api_internal.h"
#include "sim/api_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POD_FIELDS "spec.nodeName,status.phase,spec.schedulerName,spec.serviceAccountName,spec.restartPolicy," \
                   "status.podIP,status.nominatedNodeName"
#define EVENT_FIELDS "involvedObject.kind,involvedObject.namespace,involvedObject.name,involvedObject.uid," \
                     "involvedObject.apiVersion,involvedObject.resourceVersion,involvedObject.fieldPath,reason," \
                     "reportingComponent,source,type"

static const ls_api_resource resources[] = {
    {"", "v1", "pods", "pod", "Pod", true, "po", "status,binding", POD_FIELDS},
    {"", "v1", "nodes", "node", "Node", false, "no", "status", "spec.unschedulable"},
    {"", "v1", "namespaces", "namespace", "Namespace", false, "ns", "status", "status.phase"},
    {"", "v1", "events", "event", "Event", true, "ev", NULL, EVENT_FIELDS},
    {"", "v1", "services", "service", "Service", true, "svc", "status", NULL},
    {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", true, "rc", "status",
     NULL},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true, "pvc", "status",
     NULL},
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, "pv", "status", NULL},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, "rs", "status", NULL},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, "sts", "status", NULL},
    {"apps", "v1", "deployments", "deployment", "Deployment", true, "deploy", "status", NULL},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, "pdb", "status",
     NULL},
    {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, "pc", NULL, NULL},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, NULL, NULL, NULL},
    {"events.k8s.io", "v1", "events", "event", "Event", true, "ev", NULL, "regarding.kind,regarding.name,"
     "regarding.namespace,reason,reportingController,type"},
    {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", false, "sc", NULL, NULL},
    {"storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", false, NULL, NULL, NULL},
    {"storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", false, NULL, NULL, NULL},
    {"storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", true, NULL, NULL,
     NULL},
    {"resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", true, NULL, "status", NULL},
    {"resource.k8s.io", "v1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", true, NULL,
     NULL, NULL},
    {"resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", false, NULL, NULL, NULL},
    {"resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", false, NULL, NULL, NULL},
    {"storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", false, NULL, "status",
     NULL},
    /* metrics-server's API (read-only there: get and list, no watch) */
    {"metrics.k8s.io", "v1beta1", "nodes", "", "NodeMetrics", false, NULL, NULL, NULL},
    {"metrics.k8s.io", "v1beta1", "pods", "", "PodMetrics", true, NULL, NULL, NULL},
};
#define N_RES (sizeof resources / sizeof resources[0])

/* The built-in group versions that not every supported release serves
 * (--serve-as), by the first and last minor release serving them (0: still
 * served), as each release serves them with its alpha and beta APIs on.
 * Group versions absent from this list (the core, apps, policy, storage,
 * coordination, events, scheduling.k8s.io/v1 groups, metrics-server's API and
 * custom resources) are served by every release from v1.28. */
static const struct {
    const char *group, *version;
    int since, until;
} RELEASES[] = {
    {"resource.k8s.io", "v1alpha2", 26, 30},
    {"resource.k8s.io", "v1alpha3", 31, 0},
    {"resource.k8s.io", "v1beta1", 32, 0},
    {"resource.k8s.io", "v1beta2", 33, 0},
    {"resource.k8s.io", "v1", 34, 0},
    {"scheduling.k8s.io", "v1alpha1", 35, 35},   /* Workload */
    {"scheduling.k8s.io", "v1alpha2", 36, 36},   /* Workload, PodGroup */
    {"scheduling.k8s.io", "v1alpha3", 37, 0},
    {"scheduling.k8s.io", "v1beta1", 37, 0},
};

bool api_served_in(const char *group, const char *version, int serve_as)
{
    if (!serve_as)
        return true;
    for (size_t i = 0; i < sizeof RELEASES / sizeof RELEASES[0]; i++)
        if (strcmp(RELEASES[i].group, group) == 0 && strcmp(RELEASES[i].version, version) == 0)
            return serve_as >= RELEASES[i].since && (!RELEASES[i].until || serve_as <= RELEASES[i].until);
    return true;
}

void api_version_serve_as(cJSON *version, int serve_as)
{
    if (!serve_as)
        return;
    char minor[16], git[64];
    snprintf(minor, sizeof minor, "%d", serve_as);
    snprintf(git, sizeof git, "v1.%d.0-luasched", serve_as);
    cJSON_ReplaceItemInObjectCaseSensitive(version, "minor", cJSON_CreateString(minor));
    cJSON_ReplaceItemInObjectCaseSensitive(version, "gitVersion", cJSON_CreateString(git));
}

bool ls_api_parse_release(const char *text, int *minor)
{
    const char *p = text[0] == 'v' ? text + 1 : text;
    char *end;
    long major = strtol(p, &end, 10);
    if (end == p || major != 1 || *end != '.')
        return false;
    p = end + 1;
    long m = strtol(p, &end, 10);
    if (end == p || (*end && *end != '.') || m < LS_API_OLDEST_RELEASE || m > LS_API_NEWEST_RELEASE)
        return false;
    if (*end) {   /* a patch release: digits only */
        p = end + 1;
        strtol(p, &end, 10);
        if (end == p || *end)
            return false;
    }
    *minor = (int)m;
    return true;
}

void ls_api_set_serve_as(ls_api *a, int minor)
{
    a->serve_as = minor;
}

uint32_t api_num_resources(void)
{
    return (uint32_t)N_RES + api_custom_count();
}

uint32_t api_max_resources(void)
{
    return (uint32_t)N_RES + API_MAX_CUSTOM;
}

const ls_api_resource *api_resource_at(uint32_t i)
{
    return i < N_RES ? &resources[i] : api_custom_at(i - (uint32_t)N_RES);
}

uint32_t api_resource_index(const ls_api_resource *r)
{
    if (r >= resources && r < resources + N_RES)
        return (uint32_t)(r - resources);
    for (uint32_t i = 0; i < api_custom_count(); i++)
        if (api_custom_at(i) == r)
            return (uint32_t)N_RES + i;
    return 0;   /* not reached: every resource comes from the table or the registry */
}

const ls_api_resource *ls_api_resource_find(const char *group, const char *version, const char *plural)
{
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 && strcmp(r->plural, plural) == 0)
            return r;
    }
    return NULL;
}

/* metrics.k8s.io is read-only, as metrics-server serves it. */
bool api_resource_read_only(const ls_api_resource *r)
{
    return strcmp(r->group, "metrics.k8s.io") == 0;
}

/* Whether resource i is the first of its group version (discovery lists each
 * API group version once, in table order). */
static bool first_of_group_version(uint32_t i)
{
    const ls_api_resource *r = api_resource_at(i);
    for (uint32_t j = 0; j < i; j++) {
        const ls_api_resource *q = api_resource_at(j);
        if (strcmp(q->group, r->group) == 0 && strcmp(q->version, r->version) == 0)
            return false;
    }
    return true;
}

void api_group_version(const ls_api_resource *r, char *buf, size_t len)
{
    if (*r->group)
        snprintf(buf, len, "%s/%s", r->group, r->version);
    else
        snprintf(buf, len, "%s", r->version);
}

bool api_list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

bool api_resource_has_sub(const ls_api_resource *r, const char *sub)
{
    return api_list_has(r->subresources, sub);
}

static void add_strings(cJSON *obj, const char *key, const char *list)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);
    char buf[256];
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s", (int)len, p);
        cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
        p = end ? end + 1 : NULL;
    }
}

cJSON *api_discovery_core(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "APIVersions");
    add_strings(o, "versions", "v1");
    cJSON *addrs = cJSON_AddArrayToObject(o, "serverAddressByClientCIDRs");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "clientCIDR", "0.0.0.0/0");
    cJSON_AddStringToObject(a, "serverAddress", "127.0.0.1");
    cJSON_AddItemToArray(addrs, a);
    return o;
}

cJSON *api_discovery_groups(int serve_as)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "APIGroupList");
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON *arr = cJSON_AddArrayToObject(o, "groups");
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (!*r->group || !first_of_group_version(i) || !api_served_in(r->group, r->version, serve_as))
            continue;
        char gv[256];
        api_group_version(r, gv, sizeof gv);
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", r->group);
        cJSON *versions = cJSON_AddArrayToObject(g, "versions");
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "groupVersion", gv);
        cJSON_AddStringToObject(v, "version", r->version);
        cJSON_AddItemToArray(versions, v);
        cJSON_AddItemToObject(g, "preferredVersion", cJSON_Duplicate(v, 1));
        cJSON_AddItemToArray(arr, g);
    }
    return o;
}

static cJSON *resource_entry(const ls_api_resource *r, const char *sub)
{
    char name[128];
    snprintf(name, sizeof name, "%s%s%s", r->plural, sub ? "/" : "", sub ? sub : "");
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "singularName", sub ? "" : r->singular);
    cJSON_AddBoolToObject(e, "namespaced", r->namespaced);
    cJSON_AddStringToObject(e, "kind", sub && strcmp(sub, "binding") == 0 ? "Binding" : r->kind);
    if (!sub && api_resource_read_only(r))
        add_strings(e, "verbs", "get,list");
    else if (!sub)
        add_strings(e, "verbs", "create,delete,get,list,patch,update,watch");
    else if (strcmp(sub, "binding") == 0)
        add_strings(e, "verbs", "create");
    else
        add_strings(e, "verbs", "get,patch,update");
    if (!sub && r->short_names)
        add_strings(e, "shortNames", r->short_names);
    return e;
}

cJSON *api_discovery_resources(const char *group, const char *version, int serve_as)
{
    cJSON *o = NULL, *arr = NULL;
    if (!api_served_in(group, version, serve_as))
        return NULL;
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        if (!o) {
            char gv[256];
            api_group_version(r, gv, sizeof gv);
            o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "kind", "APIResourceList");
            cJSON_AddStringToObject(o, "apiVersion", "v1");
            cJSON_AddStringToObject(o, "groupVersion", gv);
            arr = cJSON_AddArrayToObject(o, "resources");
        }
        cJSON_AddItemToArray(arr, resource_entry(r, NULL));
        if (api_resource_has_sub(r, "binding"))
            cJSON_AddItemToArray(arr, resource_entry(r, "binding"));
        if (api_resource_has_sub(r, "status"))
            cJSON_AddItemToArray(arr, resource_entry(r, "status"));
    }
    return o;
}

/* ---- OpenAPI v3, only as much as kubectl reads: it looks for the
 * fieldValidation query parameter on a resource's PATCH operation to decide
 * that the server validates fields itself (else it would download the full
 * schema to validate client-side). */

static const char *gv_path(const ls_api_resource *r, char *buf, size_t len)
{
    if (*r->group)
        snprintf(buf, len, "apis/%s/%s", r->group, r->version);
    else
        snprintf(buf, len, "api/%s", r->version);
    return buf;
}

cJSON *api_openapi_root(int serve_as)
{
    cJSON *o = cJSON_CreateObject(), *paths = cJSON_AddObjectToObject(o, "paths");
    char p[256], url[300];
    cJSON_AddStringToObject(cJSON_AddObjectToObject(paths, "api/v1"), "serverRelativeURL", "/openapi/v3/api/v1");
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (!*r->group || !first_of_group_version(i) || !api_served_in(r->group, r->version, serve_as))
            continue;
        gv_path(r, p, sizeof p);
        snprintf(url, sizeof url, "/openapi/v3/%s", p);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(paths, p), "serverRelativeURL", url);
    }
    return o;
}

static cJSON *patch_operation(const ls_api_resource *r)
{
    cJSON *op = cJSON_CreateObject();
    cJSON *gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
    cJSON_AddStringToObject(gvk, "group", r->group);
    cJSON_AddStringToObject(gvk, "version", r->version);
    cJSON_AddStringToObject(gvk, "kind", r->kind);
    cJSON *params = cJSON_AddArrayToObject(op, "parameters");
    cJSON *fv = cJSON_CreateObject();
    cJSON_AddStringToObject(fv, "name", "fieldValidation");
    cJSON_AddStringToObject(fv, "in", "query");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(fv, "schema"), "type", "string");
    cJSON_AddItemToArray(params, fv);
    cJSON_AddObjectToObject(op, "responses");
    return op;
}

cJSON *api_openapi_group(const char *path, int serve_as)
{
    cJSON *o = NULL, *paths = NULL;
    char p[256];
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (strcmp(gv_path(r, p, sizeof p), path) != 0 || !api_served_in(r->group, r->version, serve_as))
            continue;
        if (!o) {
            o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "openapi", "3.0.0");
            cJSON *info = cJSON_AddObjectToObject(o, "info");
            cJSON_AddStringToObject(info, "title", "Kubernetes");
            cJSON_AddStringToObject(info, "version", LS_API_SERVER_GIT_VERSION);
            paths = cJSON_AddObjectToObject(o, "paths");
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "components"), "schemas");
        }
        char rp[600];
        snprintf(rp, sizeof rp, "/%s/%s%s/{name}", p, r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(paths, rp), "patch", patch_operation(r));
    }
    return o;
}
