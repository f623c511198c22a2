/*
 * objects.c: decoding of the API objects other than Pods and Nodes (see
 * objects.h), and the store the scheduler keeps them in, by kind.
 */
#include "luasched/objects.h"
#include "luasched/map.h"
#include "model/labels_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

static const char *const KNOWN_KINDS[] = {
    "Namespace", "Service", "ReplicaSet", "StatefulSet", "ReplicationController", "PodDisruptionBudget",
    /* the volume plugins' kinds */
    "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity",
    "VolumeAttachment",
    /* metrics.k8s.io/v1beta1, for load-aware plugins */
    "NodeMetrics", "PodMetrics", NULL,
};

bool ls_object_kind_known(const char *kind)
{
    for (int i = 0; KNOWN_KINDS[i]; i++)
        if (strcmp(kind, KNOWN_KINDS[i]) == 0)
            return true;
    return false;
}

bool ls_custom_resource_name(const char *kind, const char *api_version, char *out, size_t cap)
{
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    if (cap)
        out[0] = '\0';
    if (!kind || !*kind || !slash || !memchr(api_version, '.', (size_t)(slash - api_version)) ||
        ls_object_kind_known(kind) || cap < 8)
        return false;
    char plural[256];
    size_t n = 0;
    for (const char *p = kind; *p && n + 4 < sizeof plural; p++)
        plural[n++] = (char)tolower((unsigned char)*p);
    plural[n] = '\0';
    if (n > 1 && plural[n - 1] == 'y' && !strchr("aeiou", plural[n - 2]))
        strcpy(plural + n - 1, "ies");
    else if (plural[n - 1] == 's' || plural[n - 1] == 'x' || (n > 1 && plural[n - 1] == 'h'))
        strcat(plural, "es");
    else
        strcat(plural, "s");
    int len = snprintf(out, cap, "%s.%s.%.*s", plural, slash + 1, (int)(slash - api_version), api_version);
    return len > 0 && (size_t)len < cap;
}

/* Kinds without a namespace (their ns is 0), by kind or, as the API
 * client names what it watches, plural.version.group. */
bool ls_object_kind_cluster_scoped(const char *kind)
{
    static const char *const cluster_scoped[] = {"Namespace", "PersistentVolume", "StorageClass", "CSINode",
                                                 "CSIDriver", "VolumeAttachment", "PriorityClass", "DeviceClass", "NodeMetrics",
                                                 "NodeResourceTopology", "CustomResourceDefinition",
                                                 "ResourceSlice", "deviceclasses.v1.resource.k8s.io",
                                                 "resourceslices.v1.resource.k8s.io", NULL};
    for (int i = 0; cluster_scoped[i]; i++)
        if (strcmp(kind, cluster_scoped[i]) == 0)
            return true;
    return false;
}

static bool where(const ls_decode_ctx *ctx, const cJSON *item, ls_error *err, const char *what, const char *who)
{
    int line = ctx && ctx->line_of ? ctx->line_of(item, ctx->line_ud) : 0;
    const char *src = ctx && ctx->source ? ctx->source : "<object>";
    if (line)
        return ls_errorf(err, "%s:%d: %s: %s", src, line, who, what);
    return ls_errorf(err, "%s: %s: %s", src, who, what);
}

static bool decode_labels(const cJSON *labels, ls_arena *a, ls_labels *out)
{
    const cJSON *bad;
    if (!labels || cJSON_IsNull(labels))
        return true;
    return cJSON_IsObject(labels) && ls_labels_from_json(labels, a, out, &bad);
}

/* Services and ReplicationControllers select with a plain label map. */
static bool is_map_selector_kind(const char *kind)
{
    return strcmp(kind, "Service") == 0 || strcmp(kind, "ReplicationController") == 0;
}

static bool decode_selector(ls_object *o, const char *kind, const cJSON *spec, ls_arena *a, const char *who,
                            const ls_decode_ctx *ctx, ls_error *err)
{
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
    if (!sel || cJSON_IsNull(sel))
        return true;
    if (!cJSON_IsObject(sel))
        return where(ctx, sel, err, "spec.selector: expected an object", who);
    cJSON *wrapped = NULL;
    const cJSON *label_selector = sel;
    if (is_map_selector_kind(kind)) {
        wrapped = cJSON_CreateObject();
        cJSON_AddItemToObject(wrapped, "matchLabels", cJSON_Duplicate(sel, 1));
        label_selector = wrapped;
    }
    ls_error inner;
    const cJSON *bad = NULL;
    bool ok = ls_selector_compile_at(label_selector, a, &o->selector, "spec.selector", &inner, &bad);
    cJSON_Delete(wrapped);
    if (!ok)
        return where(ctx, bad ? bad : sel, err, inner.msg, who);
    o->has_selector = 1;
    return true;
}

/* ---- the fields the volume plugins read, checked as the API server would */

typedef enum { F_QUANTITY, F_STRINGS, F_STRING, F_COUNT, F_BOOL, F_OBJECT, F_LIST } field_type;

typedef struct storage_field {
    const char *kind;
    const char *path[5];          /* member names, NULL-terminated */
    field_type type;
} storage_field;

static const storage_field STORAGE_FIELDS[] = {
    {"PersistentVolume", {"spec", "capacity", "storage"}, F_QUANTITY},
    {"PersistentVolume", {"spec", "accessModes"}, F_STRINGS},
    {"PersistentVolume", {"spec", "storageClassName"}, F_STRING},
    {"PersistentVolume", {"spec", "claimRef"}, F_OBJECT},
    {"PersistentVolume", {"spec", "nodeAffinity"}, F_OBJECT},
    {"PersistentVolume", {"spec", "csi", "driver"}, F_STRING},
    {"PersistentVolumeClaim", {"spec", "resources", "requests", "storage"}, F_QUANTITY},
    {"PersistentVolumeClaim", {"spec", "accessModes"}, F_STRINGS},
    {"PersistentVolumeClaim", {"spec", "storageClassName"}, F_STRING},
    {"PersistentVolumeClaim", {"spec", "volumeName"}, F_STRING},
    {"StorageClass", {"provisioner"}, F_STRING},
    {"StorageClass", {"volumeBindingMode"}, F_STRING},
    {"StorageClass", {"allowedTopologies"}, F_LIST},
    {"CSINode", {"spec", "drivers"}, F_LIST},
    {"CSIDriver", {"spec", "storageCapacity"}, F_BOOL},
    {"CSIDriver", {"spec", "preventPodSchedulingIfMissing"}, F_BOOL},
    {"CSIStorageCapacity", {"capacity"}, F_QUANTITY},
    {"CSIStorageCapacity", {"maximumVolumeSize"}, F_QUANTITY},
    {"CSIStorageCapacity", {"storageClassName"}, F_STRING},
    {"CSIStorageCapacity", {"nodeTopology"}, F_OBJECT},
    {"VolumeAttachment", {"spec", "nodeName"}, F_STRING},
    {"VolumeAttachment", {"spec", "attacher"}, F_STRING},
};

static const char *field_problem(const cJSON *v, field_type t, char *buf, size_t len)
{
    switch (t) {
    case F_QUANTITY: {
        int64_t q;
        ls_error e;
        if (!cJSON_IsString(v) && !cJSON_IsNumber(v))
            return "expected a quantity (a string or a number)";
        char num[64];
        const char *text = cJSON_IsString(v) ? v->valuestring : (snprintf(num, sizeof num, "%.17g", v->valuedouble), num);
        if (!ls_quantity_parse(text, 0, &q, &e)) {
            snprintf(buf, len, "invalid quantity \"%.100s\"", text);
            return buf;
        }
        return NULL;
    }
    case F_STRINGS: {
        const cJSON *x;
        if (!cJSON_IsArray(v))
            return "expected an array of strings";
        cJSON_ArrayForEach(x, v)
            if (!cJSON_IsString(x))
                return "expected an array of strings";
        return NULL;
    }
    case F_STRING: return cJSON_IsString(v) ? NULL : "expected a string";
    case F_COUNT: return cJSON_IsNumber(v) && v->valuedouble >= 0 ? NULL : "expected a non-negative integer";
    case F_BOOL: return cJSON_IsBool(v) ? NULL : "expected a boolean";
    case F_OBJECT: return cJSON_IsObject(v) ? NULL : "expected an object";
    case F_LIST: return cJSON_IsArray(v) ? NULL : "expected an array";
    }
    return NULL;
}

/* CSINode drivers: a name each, and allocatable.count an integer >= 0. */
static bool check_csinode_drivers(const cJSON *json, const ls_decode_ctx *ctx, ls_error *err, const char *who)
{
    const cJSON *drivers = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "spec"), "drivers");
    const cJSON *d;
    int i = 0;
    cJSON_ArrayForEach(d, drivers) {
        char what[200];
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(d, "allocatable");
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(alloc, "count");
        if (!cJSON_IsString(name)) {
            snprintf(what, sizeof what, "spec.drivers[%d].name: expected a string", i);
            return where(ctx, d, err, what, who);
        }
        if (count && !cJSON_IsNull(count) && field_problem(count, F_COUNT, what, sizeof what)) {
            snprintf(what, sizeof what, "spec.drivers[%d].allocatable.count: expected a non-negative integer", i);
            return where(ctx, count, err, what, who);
        }
        i++;
    }
    return true;
}

/* The storage kinds' fields the volume plugins read: a wrong type or a bad
 * quantity is an error naming the field, as the API server would refuse it. */
static bool check_storage_fields(const cJSON *json, const char *kind, const ls_decode_ctx *ctx, ls_error *err,
                                 const char *who)
{
    for (size_t i = 0; i < sizeof STORAGE_FIELDS / sizeof STORAGE_FIELDS[0]; i++) {
        const storage_field *f = &STORAGE_FIELDS[i];
        if (strcmp(f->kind, kind) != 0)
            continue;
        const cJSON *v = json;
        char path[200] = "";
        size_t n = 0;
        for (int k = 0; f->path[k] && v; k++) {
            v = cJSON_GetObjectItemCaseSensitive(v, f->path[k]);
            n += (size_t)snprintf(path + n, sizeof path - n, "%s%s", k ? "." : "", f->path[k]);
        }
        if (!v || cJSON_IsNull(v))
            continue;
        char buf[200], what[500];
        const char *problem = field_problem(v, f->type, buf, sizeof buf);
        if (problem) {
            snprintf(what, sizeof what, "%s: %s", path, problem);
            return where(ctx, v, err, what, who);
        }
    }
    return strcmp(kind, "CSINode") != 0 || check_csinode_drivers(json, ctx, err, who);
}

static bool decode_pdb_status(ls_object *o, const cJSON *status, ls_arena *a)
{
    const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(status, "disruptionsAllowed");
    /* Out of int32 (or NaN), converting would be undefined: such a value is ignored. */
    if (cJSON_IsNumber(allowed) && allowed->valuedouble >= INT32_MIN && allowed->valuedouble <= INT32_MAX)
        o->disruptions_allowed = (int32_t)allowed->valuedouble;
    const cJSON *disrupted = cJSON_GetObjectItemCaseSensitive(status, "disruptedPods");
    if (!cJSON_IsObject(disrupted))
        return true;
    uint32_t n = (uint32_t)cJSON_GetArraySize(disrupted);
    ls_str *names = ls_arena_alloc(a, (n ? n : 1) * sizeof *names);
    uint32_t i = 0;
    for (const cJSON *c = disrupted->child; c; c = c->next)
        names[i++] = ls_intern_cstr(c->string);
    o->n_disrupted_pods = i;
    o->disrupted_pods = names;
    return true;
}

ls_object_obj *ls_object_decode(const cJSON *json, const ls_decode_ctx *ctx, ls_error *err)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(json, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    if (!cJSON_IsString(kind)) {
        where(ctx, json, err, "kind: expected a string", "object");
        return NULL;
    }
    char who[300];
    snprintf(who, sizeof who, "%.100s %.180s", kind->valuestring, cJSON_IsString(name) ? name->valuestring : "?");
    if (!cJSON_IsString(name) || !name->valuestring[0]) {
        where(ctx, meta ? meta : json, err, "metadata.name: expected a non-empty string", who);
        return NULL;
    }
    ls_object_obj *oo = ls_xcalloc(1, sizeof *oo);
    ls_arena_init(&oo->arena);
    ls_object *o = &oo->obj;
    o->kind = ls_intern_cstr(kind->valuestring);
    o->name = ls_intern_cstr(name->valuestring);
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    bool namespaced = !ls_object_kind_cluster_scoped(kind->valuestring);
    o->ns = namespaced ? ls_intern_cstr(cJSON_IsString(ns) ? ns->valuestring : "default") : 0;
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");
    o->uid = cJSON_IsString(uid) ? ls_intern_cstr(uid->valuestring) : 0;
    bool ok = decode_labels(cJSON_GetObjectItemCaseSensitive(meta, "labels"), &oo->arena, &o->labels);
    if (!ok)
        where(ctx, meta, err, "metadata.labels: expected an object of strings", who);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(json, "spec");
    ok = ok && decode_selector(o, kind->valuestring, spec, &oo->arena, who, ctx, err);
    ok = ok && check_storage_fields(json, kind->valuestring, ctx, err, who);
    if (ok && strcmp(kind->valuestring, "PodDisruptionBudget") == 0)
        ok = decode_pdb_status(o, cJSON_GetObjectItemCaseSensitive(json, "status"), &oo->arena);
    if (!ok) {
        ls_object_obj_free(oo);
        return NULL;
    }
    static _Atomic uint64_t next_seq;
    o->seq = ++next_seq;
    char *text = cJSON_PrintUnformatted(json);
    o->json_len = (uint32_t)strlen(text);
    o->json = ls_arena_memdup(&oo->arena, text, o->json_len + 1);
    free(text);
    return oo;
}

void ls_object_obj_free(ls_object_obj *o)
{
    if (!o)
        return;
    ls_arena_free(&o->arena);
    free(o);
}

/* ---- the store: per kind, a list in arrival order and an index by ns/name */

typedef struct kind_list {
    ls_vec items;          /* const ls_object * */
    ls_map index;          /* interned "ns/name" -> position + 1 */
    uint64_t generation;   /* set from a process-wide counter by every put and remove */
} kind_list;

/* Unique across stores, so that a generation identifies one store's state. */
static _Atomic uint64_t generations;

struct ls_object_store {
    ls_map kinds;          /* kind -> kind_list */
    uint64_t generation;   /* every put and remove of any kind: set from the same counter */
};

ls_object_store *ls_object_store_new(void)
{
    ls_object_store *s = ls_xcalloc(1, sizeof *s);
    ls_map_init(&s->kinds);
    return s;
}

void ls_object_store_free(ls_object_store *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->kinds.cap; i++) {
        kind_list *k = s->kinds.slots[i].value;
        if (!s->kinds.slots[i].key)
            continue;
        ls_vec_free(&k->items);
        ls_map_free(&k->index);
        free(k);
    }
    ls_map_free(&s->kinds);
    free(s);
}

/* ns, a NUL byte, then name, interned with its length when `create`, else only
 * looked up (0 when never seen). Neither can hold a NUL, so no two pairs share
 * a key ("a/b" + "c" and "a" + "b/c" would as "ns/name"), however long. */
static ls_str key_of(ls_str ns, ls_str name, bool create)
{
    uint32_t ns_len = ls_str_len(ns), name_len = ls_str_len(name);
    size_t len = (size_t)ns_len + 1 + name_len;
    char small[256];
    char *buf = len <= sizeof small ? small : ls_xmalloc(len);
    memcpy(buf, ls_str_get(ns), ns_len);
    buf[ns_len] = '\0';
    memcpy(buf + ns_len + 1, ls_str_get(name), name_len);
    ls_str key = create ? ls_intern(buf, len) : ls_intern_lookup(buf, len);
    if (buf != small)
        free(buf);
    return key;
}

void ls_object_store_put(ls_object_store *s, const ls_object *obj)
{
    s->generation = ++generations;
    kind_list *k = ls_map_get(&s->kinds, obj->kind);
    if (!k) {
        k = ls_xcalloc(1, sizeof *k);
        ls_vec_init(&k->items, sizeof(const ls_object *));
        ls_map_init(&k->index);
        ls_map_put(&s->kinds, obj->kind, k);
    }
    k->generation = ++generations;
    ls_str key = key_of(obj->ns, obj->name, true);
    uintptr_t pos = (uintptr_t)ls_map_get(&k->index, key);
    if (pos) {
        LS_VEC_AT(&k->items, const ls_object *, pos - 1) = obj;
        return;
    }
    *(const ls_object **)ls_vec_push(&k->items) = obj;
    ls_map_put(&k->index, key, (void *)(uintptr_t)k->items.len);
}

void ls_object_store_remove(ls_object_store *s, const ls_object *obj)
{
    s->generation = ++generations;
    kind_list *k = ls_map_get(&s->kinds, obj->kind);
    if (!k)
        return;
    uintptr_t pos = (uintptr_t)ls_map_remove(&k->index, key_of(obj->ns, obj->name, false));
    if (!pos)
        return;
    k->generation = ++generations;
    /* Keep arrival order: shift the tail and renumber it. */
    const ls_object **items = k->items.data;
    for (uint32_t i = (uint32_t)pos; i < k->items.len; i++) {
        items[i - 1] = items[i];
        ls_map_put(&k->index, key_of(items[i - 1]->ns, items[i - 1]->name, true), (void *)(uintptr_t)i);
    }
    k->items.len--;
}

uint32_t ls_objects_count(const ls_object_store *s, ls_str kind)
{
    const kind_list *k = s ? ls_map_get(&s->kinds, kind) : NULL;
    return k ? k->items.len : 0;
}

uint64_t ls_objects_generation(const ls_object_store *s, ls_str kind)
{
    if (s && !kind)
        return s->generation;
    const kind_list *k = s ? ls_map_get(&s->kinds, kind) : NULL;
    return k ? k->generation : 0;
}

const ls_object *ls_objects_at(const ls_object_store *s, ls_str kind, uint32_t i)
{
    const kind_list *k = s ? ls_map_get(&s->kinds, kind) : NULL;
    return k && i < k->items.len ? LS_VEC_AT(&k->items, const ls_object *, i) : NULL;
}

const ls_object *ls_objects_find(const ls_object_store *s, ls_str kind, ls_str ns, ls_str name)
{
    const kind_list *k = s ? ls_map_get(&s->kinds, kind) : NULL;
    if (!k)
        return NULL;
    uintptr_t pos = (uintptr_t)ls_map_get(&k->index, key_of(ns, name, false));
    return pos ? LS_VEC_AT(&k->items, const ls_object *, pos - 1) : NULL;
}
