/*
 * objects.h: the other API objects plugins read: Namespaces (namespaceSelector),
 * Services, ReplicaSets, StatefulSets and ReplicationControllers (the default
 * spreading selector), PodDisruptionBudgets (preemption), and custom resources.
 * Each is decoded once into a flat record with its labels and compiled
 * selector; the whole object stays available as compact JSON.
 */
#ifndef LUASCHED_OBJECTS_H
#define LUASCHED_OBJECTS_H

#include "luasched/model.h"

struct cJSON;

/* ffi:begin */
/* @view Object: any other API object a plugin reads (ls.objects, ls.find_object): Namespaces,
 * Services, workloads, PDBs, storage and DRA kinds, metrics, custom resources. The whole object:
 * ls.object_data(o). */
typedef struct ls_object {
    ls_str kind;                   /* "Namespace", "Service", ..., or "plural.version.group" */
    ls_str ns;                     /* metadata.namespace (0 for cluster-scoped kinds) */
    ls_str name;                   /* metadata.name */
    ls_str uid;                    /* metadata.uid */
    ls_labels labels;              /* metadata.labels */
    uint8_t has_selector;          /* spec.selector present (an empty one is compiled as matching all) */
    ls_selector selector;          /* Services and ReplicationControllers: a plain map; others: LabelSelector */
    int32_t disruptions_allowed;   /* PodDisruptionBudget status.disruptionsAllowed */
    uint32_t n_disrupted_pods;     /* PodDisruptionBudget status.disruptedPods (pod names) */
    const ls_str *disrupted_pods;  /* their ids */
    uint32_t json_len;             /* the length of json */
    const char *json;              /* the object as compact JSON (ls.object_data decodes it) */
    uint64_t seq;                  /* unique per decoded version (process-wide, from 1): a cache key */
} ls_object;

typedef struct ls_object_store ls_object_store;

uint32_t ls_objects_count(const ls_object_store *s, ls_str kind);
/* Changes with every put or remove of the kind, or of any kind when kind is 0
 * (0 before the first; values are unique across stores): a plugin's cache of
 * results over objects checks it. */
uint64_t ls_objects_generation(const ls_object_store *s, ls_str kind);
const ls_object *ls_objects_at(const ls_object_store *s, ls_str kind, uint32_t i);
const ls_object *ls_objects_find(const ls_object_store *s, ls_str kind, ls_str ns, ls_str name);

/* For the plugin author's kit (luasched.testing), which builds stores of its
 * own: one object from JSON or YAML text (NULL with err filled on error),
 * released with ls_object_release; a store, which does not own the objects (a
 * later put with the same kind, namespace and name replaces the earlier one). */
const ls_object *ls_object_parse(const char *text, size_t len, const char *source, ls_error *err);
void ls_object_release(const ls_object *obj);
ls_object_store *ls_object_store_new(void);
void ls_object_store_free(ls_object_store *s);
void ls_object_store_put(ls_object_store *s, const ls_object *obj);
/* A custom resource's name as plugins and the client use it,
 * "plural.version.group", from a manifest's kind and apiVersion: the plural is
 * the CRD default (kind lowercased, -ies after a consonant and y, -es after s,
 * x or h, else -s). False (out empty) for a core or built-in group (no dot in
 * it) or a kind the model knows. */
bool ls_custom_resource_name(const char *kind, const char *api_version, char *out, size_t cap);
/* ffi:end */

typedef struct ls_object_obj { ls_object obj; ls_arena arena; } ls_object_obj;

/* Kinds the embedded cluster keeps (others are skipped unless a plugin registers them). */
bool ls_object_kind_known(const char *kind);
/* Namespace, PersistentVolume, StorageClass, CSINode, CSIDriver, VolumeAttachment: no namespace. */
bool ls_object_kind_cluster_scoped(const char *kind);
ls_object_obj *ls_object_decode(const struct cJSON *json, const ls_decode_ctx *ctx, ls_error *err);
void ls_object_obj_free(ls_object_obj *o);

void ls_object_store_remove(ls_object_store *s, const ls_object *obj);

#endif
