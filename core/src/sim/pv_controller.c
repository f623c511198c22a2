/*
 * pv_controller.c: binding and provisioning of claims for clusters luasched
 * owns (see pv_controller.h). Works on the objects' JSON through ls_pv_ops.
 */
#include "sim/pv_controller.h"
#include "luasched/model.h"
#include "model/doc.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
#define ANN_BETA_CLASS "volume.beta.kubernetes.io/storage-class"
#define NO_PROVISIONER "kubernetes.io/no-provisioner"

/* ---- JSON helpers */

static const cJSON *at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, a);
    return b ? cJSON_GetObjectItemCaseSensitive(j, b) : j;
}

static const char *annotation(const cJSON *obj, const char *key)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(at(obj, "metadata", "annotations"), key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static void set_annotation(cJSON *obj, const char *key, const char *value)
{
    ls_json_set_string(ls_json_child_object(ls_json_child_object(obj, "metadata"), "annotations"), key, value);
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* storage in bytes of a quantity field (0 when absent or bad). */
static int64_t storage_of(const cJSON *resources)
{
    const char *q = ls_json_text(resources, "storage", NULL);
    int64_t v = 0;
    ls_error err;
    return q && ls_quantity_parse(q, 0, &v, &err) ? v : 0;
}

/* The class of a claim or a volume (GetPersistentVolumeClaimClass and
 * GetPersistentVolumeClass read alike): the beta annotation, then
 * spec.storageClassName. */
static const char *storage_class_of(const cJSON *obj)
{
    const char *beta = annotation(obj, ANN_BETA_CLASS);
    if (beta)
        return beta;
    const char *cls = ls_json_text(obj, "spec", "storageClassName");
    return cls ? cls : "";
}

/* ---- matching an available volume to a claim (Immediate binding) */

static bool has_mode(const cJSON *modes, const char *mode)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, modes)
        if (cJSON_IsString(m) && strcmp(m->valuestring, mode) == 0)
            return true;
    return false;
}

static bool modes_cover(const cJSON *pv_modes, const cJSON *claim_modes)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, claim_modes)
        if (cJSON_IsString(m) && !has_mode(pv_modes, m->valuestring))
            return false;
    return true;
}

static bool in_values(const cJSON *values, const char *v)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, values)
        if (v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0)
            return true;
    return false;
}

/* metav1.LabelSelector on a label object; a missing selector matches all. */
static bool selector_matches(const cJSON *sel, const cJSON *labels)
{
    if (!cJSON_IsObject(sel))
        return true;
    const cJSON *kv;
    cJSON_ArrayForEach(kv, at(sel, "matchLabels", NULL))
        if (!cJSON_IsString(kv) || !same(ls_json_text(labels, kv->string, NULL), kv->valuestring))
            return false;
    const cJSON *e;
    cJSON_ArrayForEach(e, at(sel, "matchExpressions", NULL)) {
        const char *key = ls_json_text(e, "key", NULL), *op = ls_json_text(e, "operator", NULL);
        const char *v = key ? ls_json_text(labels, key, NULL) : NULL;
        const cJSON *values = at(e, "values", NULL);
        bool ok = op && ((strcmp(op, "In") == 0 && in_values(values, v)) ||
                         (strcmp(op, "NotIn") == 0 && !in_values(values, v)) ||
                         (strcmp(op, "Exists") == 0 && v) || (strcmp(op, "DoesNotExist") == 0 && !v));
        if (!ok)
            return false;
    }
    return true;
}

typedef struct match_search {
    const cJSON *pvc;
    int64_t request;
    cJSON *best;          /* copy */
    int64_t best_size;
} match_search;

static bool volume_available(const cJSON *pv)
{
    const cJSON *ref = at(pv, "spec", "claimRef");
    return !ref && !at(at(pv, "metadata", NULL), "deletionTimestamp", NULL);
}

static bool consider_volume(void *ud, const cJSON *pv)
{
    match_search *m = ud;
    const cJSON *spec = at(pv, "spec", NULL), *cspec = at(m->pvc, "spec", NULL);
    const char *pv_mode = ls_json_text(spec, "volumeMode", NULL), *claim_mode = ls_json_text(cspec, "volumeMode", NULL);
    int64_t size = storage_of(at(spec, "capacity", NULL));
    if (!volume_available(pv) || strcmp(storage_class_of(pv), storage_class_of(m->pvc)) != 0 || size < m->request ||
        !modes_cover(at(spec, "accessModes", NULL), at(cspec, "accessModes", NULL)) ||
        strcmp(pv_mode ? pv_mode : "Filesystem", claim_mode ? claim_mode : "Filesystem") != 0 ||
        !selector_matches(at(cspec, "selector", NULL), at(at(pv, "metadata", NULL), "labels", NULL)))
        return true;
    if (!m->best || size < m->best_size) {
        cJSON_Delete(m->best);
        m->best = cJSON_Duplicate(pv, 1);
        m->best_size = size;
    }
    return true;
}

/* ---- the volume pre-bound to a claim (claimRef naming it) */

typedef struct claimed_search {
    const char *ns, *name;
    cJSON *found;         /* copy */
} claimed_search;

static bool find_claimed(void *ud, const cJSON *pv)
{
    claimed_search *s = ud;
    const cJSON *ref = at(pv, "spec", "claimRef");
    if (ref && same(ls_json_text(ref, "namespace", NULL), s->ns) && same(ls_json_text(ref, "name", NULL), s->name)) {
        s->found = cJSON_Duplicate(pv, 1);
        return false;
    }
    return true;
}

/* ---- binding and provisioning */

static bool bind_pair(const ls_pv_ops *ops, cJSON *pv, cJSON *pvc, ls_error *err)
{
    const char *ns = ls_json_text(pvc, "metadata", "namespace"), *name = ls_json_text(pvc, "metadata", "name");
    const char *uid = ls_json_text(pvc, "metadata", "uid");
    char fallback_uid[600];   /* a hand-written claim without uid: "ns/name", as the pod decoder does */
    snprintf(fallback_uid, sizeof fallback_uid, "%s/%s", ns ? ns : "default", name ? name : "");
    if (!uid)
        uid = fallback_uid;
    cJSON *spec = ls_json_child_object(pv, "spec");
    const cJSON *old_ref = at(spec, "claimRef", NULL);
    if (!old_ref || !ls_json_text(old_ref, "uid", NULL)) {
        cJSON *ref = cJSON_CreateObject();
        cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
        cJSON_AddStringToObject(ref, "namespace", ns ? ns : "default");
        cJSON_AddStringToObject(ref, "name", name);
        cJSON_AddStringToObject(ref, "apiVersion", "v1");
        cJSON_AddStringToObject(ref, "uid", uid);
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "claimRef");
        cJSON_AddItemToObject(spec, "claimRef", ref);
        if (!old_ref)
            set_annotation(pv, ANN_BOUND_BY_CONTROLLER, "yes");
    }
    ls_json_set_string(ls_json_child_object(pv, "status"), "phase", "Bound");
    if (!ops->put(ops->ud, "PersistentVolume", pv, err))
        return false;
    cJSON *cspec = ls_json_child_object(pvc, "spec");
    if (!ls_json_text(cspec, "volumeName", NULL)) {
        ls_json_set_string(cspec, "volumeName", ls_json_text(pv, "metadata", "name"));
        set_annotation(pvc, ANN_BOUND_BY_CONTROLLER, "yes");
    }
    set_annotation(pvc, ANN_BIND_COMPLETED, "yes");
    cJSON *status = ls_json_child_object(pvc, "status");
    ls_json_set_string(status, "phase", "Bound");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "capacity");
    cJSON_AddItemToObject(status, "capacity", cJSON_Duplicate(at(spec, "capacity", NULL), 1));
    cJSON_DeleteItemFromObjectCaseSensitive(status, "accessModes");
    cJSON_AddItemToObject(status, "accessModes", cJSON_Duplicate(at(spec, "accessModes", NULL), 1));
    return ops->put(ops->ud, "PersistentVolumeClaim", pvc, err);
}

/* Topology keys for the provisioned volume: the CSI driver's on the node, or the class's. */
static void add_topology_keys(const ls_pv_ops *ops, const cJSON *cls, const char *node, cJSON *keys)
{
    const char *driver = ls_json_text(cls, "provisioner", NULL);
    cJSON *csinode = ops->get(ops->ud, "CSINode", NULL, node);
    const cJSON *d;
    cJSON_ArrayForEach(d, at(csinode, "spec", "drivers"))
        if (same(ls_json_text(d, "name", NULL), driver)) {
            const cJSON *k;
            cJSON_ArrayForEach(k, at(d, "topologyKeys", NULL))
                if (cJSON_IsString(k))
                    cJSON_AddItemToArray(keys, cJSON_CreateString(k->valuestring));
        }
    cJSON_Delete(csinode);
    if (cJSON_GetArraySize(keys))
        return;
    const cJSON *term, *e;
    cJSON_ArrayForEach(term, at(cls, "allowedTopologies", NULL))
        cJSON_ArrayForEach(e, at(term, "matchLabelExpressions", NULL)) {
            const char *key = ls_json_text(e, "key", NULL);
            if (key && !in_values(keys, key))
                cJSON_AddItemToArray(keys, cJSON_CreateString(key));
        }
}

/* spec.nodeAffinity.required: one term, key In [the node's value] per topology key. */
static cJSON *node_affinity(const ls_pv_ops *ops, const cJSON *cls, const char *node)
{
    cJSON *keys = cJSON_CreateArray();
    add_topology_keys(ops, cls, node, keys);
    cJSON *node_obj = ops->get(ops->ud, "Node", NULL, node);
    const cJSON *labels = at(at(node_obj, "metadata", NULL), "labels", NULL);
    cJSON *exprs = cJSON_CreateArray();
    const cJSON *k;
    cJSON_ArrayForEach(k, keys) {
        const char *v = ls_json_text(labels, k->valuestring, NULL);
        if (!v)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "key", k->valuestring);
        cJSON_AddStringToObject(e, "operator", "In");
        cJSON *values = cJSON_AddArrayToObject(e, "values");
        cJSON_AddItemToArray(values, cJSON_CreateString(v));
        cJSON_AddItemToArray(exprs, e);
    }
    cJSON_Delete(node_obj);
    cJSON_Delete(keys);
    if (!cJSON_GetArraySize(exprs)) {
        cJSON_Delete(exprs);
        return NULL;
    }
    cJSON *aff = cJSON_CreateObject(), *req = cJSON_AddObjectToObject(aff, "required");
    cJSON *terms = cJSON_AddArrayToObject(req, "nodeSelectorTerms"), *term = cJSON_CreateObject();
    cJSON_AddItemToObject(term, "matchExpressions", exprs);
    cJSON_AddItemToArray(terms, term);
    return aff;
}

static cJSON *new_volume(const ls_pv_ops *ops, const cJSON *pvc, const cJSON *cls, const char *node)
{
    const char *uid = ls_json_text(pvc, "metadata", "uid"), *ns = ls_json_text(pvc, "metadata", "namespace");
    const char *driver = ls_json_text(cls, "provisioner", NULL);
    char name[600];
    if (uid)
        snprintf(name, sizeof name, "pvc-%s", uid);
    else
        snprintf(name, sizeof name, "pvc-%s-%s", ns ? ns : "default", ls_json_text(pvc, "metadata", "name"));
    cJSON *pv = cJSON_CreateObject();
    cJSON_AddStringToObject(pv, "apiVersion", "v1");
    cJSON_AddStringToObject(pv, "kind", "PersistentVolume");
    cJSON *meta = cJSON_AddObjectToObject(pv, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), ANN_PROVISIONED_BY, driver);
    cJSON *spec = cJSON_AddObjectToObject(pv, "spec");
    cJSON *cap = cJSON_AddObjectToObject(spec, "capacity");
    const char *request = ls_json_text(at(pvc, "spec", "resources"), "requests", "storage");
    cJSON_AddStringToObject(cap, "storage", request ? request : "0");
    cJSON_AddItemToObject(spec, "accessModes", cJSON_Duplicate(at(pvc, "spec", "accessModes"), 1));
    cJSON_AddStringToObject(spec, "storageClassName", ls_json_text(cls, "metadata", "name"));
    const char *mode = ls_json_text(pvc, "spec", "volumeMode");
    cJSON_AddStringToObject(spec, "volumeMode", mode ? mode : "Filesystem");
    const char *reclaim = ls_json_text(cls, "reclaimPolicy", NULL);
    cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", reclaim ? reclaim : "Delete");
    cJSON *csi = cJSON_AddObjectToObject(spec, "csi");
    cJSON_AddStringToObject(csi, "driver", driver);
    cJSON_AddStringToObject(csi, "volumeHandle", name);
    cJSON *aff = node ? node_affinity(ops, cls, node) : NULL;
    if (aff)
        cJSON_AddItemToObject(spec, "nodeAffinity", aff);
    return pv;
}

/* The provisioner's answer for a claim with a selected node (or an Immediate one). */
static bool provision(const ls_pv_ops *ops, cJSON *pvc, const cJSON *cls, const char *node, ls_error *err)
{
    const char *driver = ls_json_text(cls, "provisioner", NULL);
    if (!driver || !*driver || strcmp(driver, NO_PROVISIONER) == 0)
        return true;
    if (ops->fault == LS_PROVISION_NEVER)
        return true;
    if (ops->fault == LS_PROVISION_FAIL) {
        if (!node)
            return true;
        /* A failing provisioner gives the claim back to the scheduler. */
        cJSON *annotations = ls_json_child_object(ls_json_child_object(pvc, "metadata"), "annotations");
        cJSON_DeleteItemFromObjectCaseSensitive(annotations, ANN_SELECTED_NODE);
        return ops->put(ops->ud, "PersistentVolumeClaim", pvc, err);
    }
    cJSON *pv = new_volume(ops, pvc, cls, node);
    bool ok = ops->put(ops->ud, "PersistentVolume", pv, err) && bind_pair(ops, pv, pvc, err);
    cJSON_Delete(pv);
    return ok;
}

static bool claim_done(const cJSON *pvc)
{
    return ls_json_text(pvc, "spec", "volumeName") && annotation(pvc, ANN_BIND_COMPLETED) &&
           same(ls_json_text(pvc, "status", "phase"), "Bound");
}

/* A claim naming its volume: bind when the volume is free or already names the claim. */
static bool sync_prebound_claim(const ls_pv_ops *ops, cJSON *pvc, ls_error *err)
{
    cJSON *pv = ops->get(ops->ud, "PersistentVolume", NULL, ls_json_text(pvc, "spec", "volumeName"));
    bool ok = true;
    const cJSON *ref = pv ? at(pv, "spec", "claimRef") : NULL;
    if (pv && (!ref || (same(ls_json_text(ref, "name", NULL), ls_json_text(pvc, "metadata", "name")) &&
                        same(ls_json_text(ref, "namespace", NULL), ls_json_text(pvc, "metadata", "namespace")))))
        ok = bind_pair(ops, pv, pvc, err);
    cJSON_Delete(pv);
    return ok;
}

static bool sync_unbound_claim(const ls_pv_ops *ops, cJSON *pvc, ls_error *err)
{
    const char *ns = ls_json_text(pvc, "metadata", "namespace"), *name = ls_json_text(pvc, "metadata", "name");
    claimed_search cs = {ns ? ns : "default", name, NULL};
    ops->each(ops->ud, "PersistentVolume", find_claimed, &cs);
    if (cs.found) {
        bool ok = bind_pair(ops, cs.found, pvc, err);
        cJSON_Delete(cs.found);
        return ok;
    }
    const char *class_name = storage_class_of(pvc);
    cJSON *cls = *class_name ? ops->get(ops->ud, "StorageClass", NULL, class_name) : NULL;
    bool delayed = cls && same(ls_json_text(cls, "volumeBindingMode", NULL), "WaitForFirstConsumer");
    const char *selected = annotation(pvc, ANN_SELECTED_NODE);
    bool ok = true;
    if (!delayed) {
        match_search m = {pvc, storage_of(at(at(pvc, "spec", "resources"), "requests", NULL)), NULL, 0};
        ops->each(ops->ud, "PersistentVolume", consider_volume, &m);
        if (m.best)
            ok = bind_pair(ops, m.best, pvc, err);
        else if (cls)
            ok = provision(ops, pvc, cls, selected, err);
        cJSON_Delete(m.best);
    } else if (selected) {
        ok = provision(ops, pvc, cls, selected, err);
    }
    cJSON_Delete(cls);
    return ok;
}

/* A claim bound before (pv.kubernetes.io/bind-completed) whose volume name is
 * gone or names no volume: upstream's syncBoundClaim marks it Lost ("Bound
 * claim has lost its PersistentVolume"), and VolumeBinding's PreFilter then
 * says `persistentvolumeclaim "<c>" bound to non-existent persistentvolume "<v>"`. */
static bool lost_its_volume(const ls_pv_ops *ops, const cJSON *pvc)
{
    if (!annotation(pvc, ANN_BIND_COMPLETED))
        return false;
    const char *volume = ls_json_text(pvc, "spec", "volumeName");
    if (!volume || !*volume)
        return true;
    cJSON *pv = ops->get(ops->ud, "PersistentVolume", NULL, volume);
    cJSON_Delete(pv);
    return pv == NULL;
}

static bool mark_lost(const ls_pv_ops *ops, cJSON *pvc, ls_error *err)
{
    if (same(ls_json_text(pvc, "status", "phase"), "Lost"))
        return true;
    ls_json_set_string(ls_json_child_object(pvc, "status"), "phase", "Lost");
    return ops->put(ops->ud, "PersistentVolumeClaim", pvc, err);
}

bool ls_pv_sync_claim(const ls_pv_ops *ops, const char *ns, const char *name, ls_error *err)
{
    cJSON *pvc = ops->get(ops->ud, "PersistentVolumeClaim", ns, name);
    if (!pvc)
        return true;
    bool ok = true;
    if (lost_its_volume(ops, pvc))
        ok = mark_lost(ops, pvc, err);
    else if (!claim_done(pvc) && !at(at(pvc, "metadata", NULL), "deletionTimestamp", NULL))
        ok = ls_json_text(pvc, "spec", "volumeName") ? sync_prebound_claim(ops, pvc, err)
                                                     : sync_unbound_claim(ops, pvc, err);
    cJSON_Delete(pvc);
    return ok;
}

/* Claims are collected first: syncing writes to the store being walked. */
static bool collect_claim(void *ud, const cJSON *pvc)
{
    cJSON *keys = ud;
    cJSON *k = cJSON_CreateArray();
    const char *ns = ls_json_text(pvc, "metadata", "namespace");
    cJSON_AddItemToArray(k, cJSON_CreateString(ns ? ns : "default"));
    cJSON_AddItemToArray(k, cJSON_CreateString(ls_json_text(pvc, "metadata", "name")));
    cJSON_AddItemToArray(keys, k);
    return true;
}

/* A new volume without a claim becomes Available (the controller's first pass). */
static bool collect_new_volume(void *ud, const cJSON *pv)
{
    if (!at(pv, "spec", "claimRef") && !ls_json_text(pv, "status", "phase"))
        cJSON_AddItemToArray(ud, cJSON_CreateString(ls_json_text(pv, "metadata", "name")));
    return true;
}

static bool mark_available(const ls_pv_ops *ops, ls_error *err)
{
    cJSON *names = cJSON_CreateArray();
    ops->each(ops->ud, "PersistentVolume", collect_new_volume, names);
    bool ok = true;
    const cJSON *n;
    cJSON_ArrayForEach(n, names) {
        cJSON *pv = ok && cJSON_IsString(n) ? ops->get(ops->ud, "PersistentVolume", NULL, n->valuestring) : NULL;
        if (pv) {
            ls_json_set_string(ls_json_child_object(pv, "status"), "phase", "Available");
            ok = ops->put(ops->ud, "PersistentVolume", pv, err);
            cJSON_Delete(pv);
        }
    }
    cJSON_Delete(names);
    return ok;
}

bool ls_pv_sync_all(const ls_pv_ops *ops, ls_error *err)
{
    if (!mark_available(ops, err))
        return false;
    cJSON *keys = cJSON_CreateArray();
    ops->each(ops->ud, "PersistentVolumeClaim", collect_claim, keys);
    bool ok = true;
    const cJSON *k;
    cJSON_ArrayForEach(k, keys)
        if (ok)
            ok = ls_pv_sync_claim(ops, cJSON_GetArrayItem(k, 0)->valuestring, cJSON_GetArrayItem(k, 1)->valuestring,
                                  err);
    cJSON_Delete(keys);
    return ok;
}

static cJSON *ephemeral_claim(const cJSON *pod, const cJSON *vol, const char *claim_name)
{
    const cJSON *tmpl = at(at(vol, "ephemeral", NULL), "volumeClaimTemplate", NULL);
    const char *ns = ls_json_text(pod, "metadata", "namespace");
    cJSON *pvc = cJSON_CreateObject();
    cJSON_AddStringToObject(pvc, "apiVersion", "v1");
    cJSON_AddStringToObject(pvc, "kind", "PersistentVolumeClaim");
    cJSON *meta = cJSON_AddObjectToObject(pvc, "metadata");
    cJSON_AddStringToObject(meta, "name", claim_name);
    cJSON_AddStringToObject(meta, "namespace", ns ? ns : "default");
    const cJSON *labels = at(at(tmpl, "metadata", NULL), "labels", NULL);
    if (labels)
        cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(labels, 1));
    cJSON *owner = cJSON_CreateObject();
    cJSON_AddStringToObject(owner, "apiVersion", "v1");
    cJSON_AddStringToObject(owner, "kind", "Pod");
    const char *pod_name = ls_json_text(pod, "metadata", "name");
    cJSON_AddStringToObject(owner, "name", pod_name);
    const char *uid = ls_json_text(pod, "metadata", "uid");
    char fallback[600];
    snprintf(fallback, sizeof fallback, "%s/%s", ns ? ns : "default", pod_name ? pod_name : "");
    cJSON_AddStringToObject(owner, "uid", uid ? uid : fallback);   /* the pod's uid as the decoder fills it */
    cJSON_AddBoolToObject(owner, "controller", 1);
    cJSON_AddBoolToObject(owner, "blockOwnerDeletion", 1);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
    const cJSON *spec = at(tmpl, "spec", NULL);
    cJSON_AddItemToObject(pvc, "spec", spec ? cJSON_Duplicate(spec, 1) : cJSON_CreateObject());
    cJSON_AddStringToObject(cJSON_AddObjectToObject(pvc, "status"), "phase", "Pending");
    return pvc;
}

bool ls_pv_create_ephemeral_claims(const ls_pv_ops *ops, const cJSON *pod, ls_error *err)
{
    const char *ns = ls_json_text(pod, "metadata", "namespace"), *pod_name = ls_json_text(pod, "metadata", "name");
    const cJSON *vol;
    if (!pod_name)
        return true;
    cJSON_ArrayForEach(vol, at(pod, "spec", "volumes")) {
        const char *vol_name = ls_json_text(vol, "name", NULL);
        if (!at(vol, "ephemeral", NULL) || !vol_name)
            continue;
        char claim_name[600];
        snprintf(claim_name, sizeof claim_name, "%s-%s", pod_name, vol_name);
        cJSON *existing = ops->get(ops->ud, "PersistentVolumeClaim", ns ? ns : "default", claim_name);
        if (existing) {
            cJSON_Delete(existing);
            continue;
        }
        cJSON *pvc = ephemeral_claim(pod, vol, claim_name);
        bool ok = ops->put(ops->ud, "PersistentVolumeClaim", pvc, err);
        cJSON_Delete(pvc);
        if (!ok)
            return false;
    }
    return true;
}

bool ls_provision_fault_parse(const char *value, ls_provision_fault *out)
{
    if (strcmp(value, "fail") == 0)
        *out = LS_PROVISION_FAIL;
    else if (strcmp(value, "never") == 0)
        *out = LS_PROVISION_NEVER;
    else
        return false;
    return true;
}
