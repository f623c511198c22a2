/*
 * api_patch.c: JSON merge patch (RFC 7386) and the part of the strategic
 * merge patch that schedulers and kubectl send. Without the Go structs'
 * patch tags, list merge keys come from a table of field names (conditions by
 * type, containers by name, ...); other lists are replaced, as they are
 * upstream for lists without a patch strategy. Directives: "$patch" (replace,
 * delete, merge) on objects and list items; "$setElementOrder/..." and
 * "$retainKeys" are accepted and ignored (order is not kept).
 */
#include "sim/api_internal.h"

#include <string.h>

static const struct {
    const char *field, *key;
} merge_keys[] = {
    {"conditions", "type"},       {"containers", "name"},       {"initContainers", "name"},
    {"ephemeralContainers", "name"}, {"volumes", "name"},       {"env", "name"},
    {"volumeMounts", "mountPath"}, {"ports", "containerPort"},  {"imagePullSecrets", "name"},
    {"ownerReferences", "uid"},   {"addresses", "type"},        {"hostAliases", "ip"},
    {"resourceClaims", "name"},   {"topologySpreadConstraints", "topologyKey"},
};

/* Lists merged as sets of primitives (patchStrategy merge, no key). */
static bool primitive_set(const char *field)
{
    return strcmp(field, "finalizers") == 0;
}

static const char *merge_key_of(const char *field)
{
    for (size_t i = 0; i < sizeof merge_keys / sizeof merge_keys[0]; i++)
        if (strcmp(merge_keys[i].field, field) == 0)
            return merge_keys[i].key;
    return NULL;
}

static const char *directive(const cJSON *o)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "$patch");
    return cJSON_IsString(d) ? d->valuestring : NULL;
}

/* A copy of o with every "$..." key dropped at every level. */
static cJSON *clean_copy(const cJSON *o)
{
    if (!cJSON_IsObject(o) && !cJSON_IsArray(o))
        return cJSON_Duplicate(o, 1);
    cJSON *out = cJSON_IsObject(o) ? cJSON_CreateObject() : cJSON_CreateArray();
    for (const cJSON *c = o->child; c; c = c->next) {
        if (cJSON_IsObject(o) && c->string[0] == '$')
            continue;
        if (cJSON_IsObject(o) && cJSON_IsNull(c))
            continue;   /* a null onto nothing builds nothing */
        cJSON *copy = clean_copy(c);
        if (cJSON_IsObject(o))
            cJSON_AddItemToObject(out, c->string, copy);
        else
            cJSON_AddItemToArray(out, copy);
    }
    return out;
}

static cJSON *find_by_key(cJSON *list, const char *key, const cJSON *value)
{
    for (cJSON *e = list->child; e; e = e->next)
        if (cJSON_Compare(cJSON_GetObjectItemCaseSensitive(e, key), value, 1))
            return e;
    return NULL;
}

static void patch_object(cJSON *target, const cJSON *patch, bool strategic);

static void merge_keyed_list(cJSON *target, const cJSON *patch, const char *key)
{
    for (const cJSON *p = patch->child; p; p = p->next) {
        const cJSON *kv = cJSON_GetObjectItemCaseSensitive(p, key);
        cJSON *t = kv ? find_by_key(target, key, kv) : NULL;
        const char *d = directive(p);
        if (d && strcmp(d, "delete") == 0) {
            if (t)
                cJSON_Delete(cJSON_DetachItemViaPointer(target, t));
        } else if (t && d && strcmp(d, "replace") == 0) {
            cJSON_ReplaceItemViaPointer(target, t, clean_copy(p));
        } else if (t) {
            patch_object(t, p, true);
        } else {
            cJSON_AddItemToArray(target, clean_copy(p));
        }
    }
}

static void merge_primitive_set(cJSON *target, const cJSON *patch)
{
    for (const cJSON *p = patch->child; p; p = p->next) {
        bool have = false;
        for (const cJSON *t = target->child; t && !have; t = t->next)
            have = cJSON_Compare(t, p, 1);
        if (!have)
            cJSON_AddItemToArray(target, cJSON_Duplicate(p, 1));
    }
}

/* One member of an object patch. */
static void patch_member(cJSON *target, const cJSON *p, bool strategic)
{
    cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
    if (cJSON_IsNull(p)) {
        cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
        return;
    }
    if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
        const char *d = strategic ? directive(p) : NULL;
        if (d && strcmp(d, "delete") == 0)
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
        else if (d && strcmp(d, "replace") == 0)
            cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, clean_copy(p));
        else
            patch_object(t, p, strategic);
        return;
    }
    if (strategic && cJSON_IsArray(p) && cJSON_IsArray(t)) {
        const char *key = merge_key_of(p->string);
        if (key) {
            merge_keyed_list(t, p, key);
            return;
        }
        if (primitive_set(p->string)) {
            merge_primitive_set(t, p);
            return;
        }
    }
    cJSON *copy = strategic ? clean_copy(p) : cJSON_Duplicate(p, 1);
    if (!strategic && cJSON_IsObject(p)) {
        cJSON_Delete(copy);
        copy = cJSON_CreateObject();
        patch_object(copy, p, false);
    }
    if (t)
        cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, copy);
    else
        cJSON_AddItemToObject(target, p->string, copy);
}

static void patch_object(cJSON *target, const cJSON *patch, bool strategic)
{
    for (const cJSON *p = patch->child; p; p = p->next) {
        if (strategic && p->string[0] == '$')
            continue;   /* directives: handled by the parent or ignored */
        patch_member(target, p, strategic);
    }
}

void api_patch_apply(cJSON *target, const cJSON *patch, bool strategic)
{
    if (cJSON_IsObject(patch) && cJSON_IsObject(target))
        patch_object(target, patch, strategic);
}
