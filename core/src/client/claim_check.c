/*
 * claim_check.c: the checks of claim_check.h. The special claim's shape is
 * upstream v1.37's (dynamicresources.go: the claim is created with
 * generateName "<pod>-extended-resources-", the annotation
 * resource.kubernetes.io/extended-resource-claim "true" and the pod as its
 * controller owner; the pod's status is then patched with
 * extendedResourceClaimStatus).
 */
#include "client/claim_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool no(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool no(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return false;
}

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool is_true(const cJSON *obj, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* Every key of obj is one of the NULL-terminated `allowed`. */
static const char *unexpected_key(const cJSON *obj, const char *const *allowed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(item->string, *a) == 0;
        if (!ok)
            return item->string;
    }
    return NULL;
}

static bool check_owner(const cJSON *meta, ls_claim_owner *owner, char *why, size_t cap)
{
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences");
    if (!cJSON_IsArray(refs) || cJSON_GetArraySize(refs) != 1)
        return no(why, cap, "metadata.ownerReferences: expected one, its pod");
    const cJSON *ref = cJSON_GetArrayItem(refs, 0);
    const char *api = text_of(ref, "apiVersion"), *kind = text_of(ref, "kind");
    owner->name = text_of(ref, "name");
    owner->uid = text_of(ref, "uid");
    if (!api || strcmp(api, "v1") != 0 || !kind || strcmp(kind, "Pod") != 0 || !owner->name || !owner->uid ||
        !is_true(ref, "controller") || !is_true(ref, "blockOwnerDeletion"))
        return no(why, cap, "metadata.ownerReferences[0]: expected the pod (v1 Pod, name, uid), controller and "
                            "blockOwnerDeletion true");
    return true;
}

static bool check_meta(const cJSON *meta, const char *ns, ls_claim_owner *owner, char *why, size_t cap)
{
    static const char *const allowed[] = {"namespace", "generateName", "annotations", "ownerReferences", NULL};
    const char *extra = unexpected_key(meta, allowed);
    if (extra)
        return no(why, cap, "metadata.%s: not set on the special claim", extra);
    const char *claim_ns = text_of(meta, "namespace");
    if (claim_ns && strcmp(claim_ns, ns) != 0)
        return no(why, cap, "metadata.namespace: %s, expected the pod's, %s", claim_ns, ns);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    const char *mark = text_of(ann, LS_EXTENDED_RESOURCE_CLAIM_ANNOTATION);
    if (!cJSON_IsObject(ann) || cJSON_GetArraySize(ann) != 1 || !mark || strcmp(mark, "true") != 0)
        return no(why, cap, "metadata.annotations: expected only " LS_EXTENDED_RESOURCE_CLAIM_ANNOTATION ": \"true\"");
    if (!check_owner(meta, owner, why, cap))
        return false;
    const char *gen = text_of(meta, "generateName");
    char want[300];
    snprintf(want, sizeof want, "%s-extended-resources-", owner->name);
    if (!gen || strcmp(gen, want) != 0)
        return no(why, cap, "metadata.generateName: expected \"%.260s\"", want);
    return true;
}

bool ls_claim_check_extended(const cJSON *claim, const char *ns, ls_claim_owner *owner, char *why, size_t cap)
{
    *owner = (ls_claim_owner){0};
    if (!cJSON_IsObject(claim))
        return no(why, cap, "not a JSON object");
    static const char *const allowed[] = {"apiVersion", "kind", "metadata", "spec", NULL};
    const char *extra = unexpected_key(claim, allowed);
    if (extra)
        return no(why, cap, "%s: not set on the special claim", extra);
    const char *api = text_of(claim, "apiVersion"), *kind = text_of(claim, "kind");
    if (!api || strcmp(api, "resource.k8s.io/v1") != 0 || !kind || strcmp(kind, "ResourceClaim") != 0)
        return no(why, cap, "expected apiVersion resource.k8s.io/v1, kind ResourceClaim");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(claim, "metadata");
    if (!cJSON_IsObject(meta) || !check_meta(meta, ns, owner, why, cap))
        return cJSON_IsObject(meta) ? false : no(why, cap, "metadata: expected an object");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "spec"), "devices");
    const cJSON *requests = cJSON_GetObjectItemCaseSensitive(devices, "requests");
    if (!cJSON_IsArray(requests) || cJSON_GetArraySize(requests) == 0)
        return no(why, cap, "spec.devices.requests: expected a non-empty list");
    return true;
}

static bool check_mapping(const cJSON *m, int i, char *why, size_t cap)
{
    static const char *const allowed[] = {"containerName", "resourceName", "requestName", NULL};
    if (!cJSON_IsObject(m) || unexpected_key(m, allowed) || !text_of(m, "containerName") ||
        !text_of(m, "resourceName") || !text_of(m, "requestName"))
        return no(why, cap,
                  "status.extendedResourceClaimStatus.requestMappings[%d]: expected containerName, resourceName "
                  "and requestName",
                  i);
    return true;
}

bool ls_claim_check_pod_status_patch(const cJSON *patch, char *why, size_t cap)
{
    static const char *const top[] = {"status", NULL}, *const status_keys[] = {"extendedResourceClaimStatus", NULL},
                             *const ext_keys[] = {"requestMappings", "resourceClaimName", NULL};
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(patch, "status");
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(status, "extendedResourceClaimStatus");
    if (!cJSON_IsObject(patch) || unexpected_key(patch, top) || !cJSON_IsObject(status) ||
        unexpected_key(status, status_keys) || !cJSON_IsObject(ext) || unexpected_key(ext, ext_keys))
        return no(why, cap, "a pod's status patch: only status.extendedResourceClaimStatus (requestMappings, "
                            "resourceClaimName) is written");
    if (!text_of(ext, "resourceClaimName"))
        return no(why, cap, "status.extendedResourceClaimStatus.resourceClaimName: expected a name");
    const cJSON *maps = cJSON_GetObjectItemCaseSensitive(ext, "requestMappings");
    if (!cJSON_IsArray(maps) || cJSON_GetArraySize(maps) == 0)
        return no(why, cap, "status.extendedResourceClaimStatus.requestMappings: expected a non-empty list");
    int i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, maps)
    {
        if (!check_mapping(m, i++, why, cap))
            return false;
    }
    return true;
}
