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
#include <string.h>

static const char *const KNOWN_KINDS[] = {
    "Namespace", "Service", "ReplicaSet", "StatefulSet", "ReplicationController", "PodDisruptionBudget",
    /* the volume plugins' kinds */
    "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity",
    "VolumeAttachment", NULL,
};

bool ls_object_kind_known(const char *kind)
{
    for (int i = 0; KNOWN_KINDS[i]; i++)
        if (strcmp(kind, KNOWN_KINDS[i]) == 0)
            return true;
    return false;
}

bool ls_object_kind_cluster_scoped(const char *kind)
{
    static const char *const cluster_scoped[] = {"Namespace",  "PersistentVolume", "StorageClass",    "CSINode",
                                                 "CSIDriver", "VolumeAttachment", "PriorityClass", NULL};
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
    if (!labels || cJSON_IsNull(labels))
        return true;
    if (!cJSON_IsObject(labels))
        return false;
    uint32_t n = (uint32_t)cJSON_GetArraySize(labels);
    ls_label *items = ls_arena_alloc(a, (n ? n : 1) * sizeof *items);
    uint32_t i = 0;
    for (const cJSON *c = labels->child; c; c = c->next) {
        if (!cJSON_IsString(c))
            return false;
        items[i].key = ls_intern_cstr(c->string);
        items[i].value = ls_intern_cstr(c->valuestring);
        i++;
    }
    ls_labels_sort(items, &i);
    out->n = i;
    out->items = items;
    return true;
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
    if (ok && strcmp(kind->valuestring, "PodDisruptionBudget") == 0)
        ok = decode_pdb_status(o, cJSON_GetObjectItemCaseSensitive(json, "status"), &oo->arena);
    if (!ok) {
        ls_object_obj_free(oo);
        return NULL;
    }
    static uint64_t decoded;   /* atomic: informer threads decode too */
    o->seq = __atomic_add_fetch(&decoded, 1, __ATOMIC_RELAXED);
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
} kind_list;

struct ls_object_store {
    ls_map kinds;          /* kind -> kind_list */
    uint64_t generation;   /* moves on every put and remove */
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

uint64_t ls_objects_generation(const ls_object_store *s)
{
    return s ? s->generation : 0;
}

void ls_object_store_put(ls_object_store *s, const ls_object *obj)
{
    s->generation++;
    kind_list *k = ls_map_get(&s->kinds, obj->kind);
    if (!k) {
        k = ls_xcalloc(1, sizeof *k);
        ls_vec_init(&k->items, sizeof(const ls_object *));
        ls_map_init(&k->index);
        ls_map_put(&s->kinds, obj->kind, k);
    }
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
    s->generation++;
    kind_list *k = ls_map_get(&s->kinds, obj->kind);
    if (!k)
        return;
    uintptr_t pos = (uintptr_t)ls_map_remove(&k->index, key_of(obj->ns, obj->name, false));
    if (!pos)
        return;
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
