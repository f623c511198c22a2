/*
 * api_volumes.c: the served API's PersistentVolume and ephemeral-volume
 * controllers (sim/pv_controller.h) and the claims part of the binding
 * record. After every successful write of a claim, a volume, a class, a
 * CSINode or a pod, and after a cluster file is loaded, the controllers take
 * one pass over the store, under its lock, as kube-controller-manager and a
 * CSI provisioner would answer: their writes are watch events like any other.
 */
#include "sim/api_internal.h"
#include "sim/pv_controller.h"

#include <stdlib.h>
#include <string.h>

static const ls_api_resource *resource_of_kind(const char *kind)
{
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (strcmp(r->kind, kind) == 0 && strcmp(r->group, "events.k8s.io") != 0)
            return r;
    }
    return NULL;
}

static cJSON *ops_get(void *ud, const char *kind, const char *ns, const char *name)
{
    const ls_api_resource *r = resource_of_kind(kind);
    api_obj *o = r && name ? api_lookup(ud, r, ns ? ns : "default", name) : NULL;
    return o ? cJSON_Duplicate(o->obj, 1) : NULL;
}

static void ops_each(void *ud, const char *kind, bool (*fn)(void *fud, const cJSON *obj), void *fud)
{
    const ls_api_resource *r = resource_of_kind(kind);
    if (!r)
        return;
    api_coll *c = api_coll_of(ud, r);
    for (uint32_t i = 0; i < c->len; i++)
        if (!fn(fud, c->items[i]->obj))
            return;
}

static api_claim_record *claim_record(ls_api *a, const char *ns, const char *name)
{
    for (uint32_t i = 0; i < a->claims.len; i++) {
        api_claim_record *c = &LS_VEC_AT(&a->claims, api_claim_record, i);
        if (strcmp(c->ns, ns) == 0 && strcmp(c->name, name) == 0)
            return c;
    }
    api_claim_record *c = ls_vec_push(&a->claims);
    memset(c, 0, sizeof *c);
    c->ns = ls_arena_strdup(&a->record_text, ns);
    c->name = ls_arena_strdup(&a->record_text, name);
    return c;
}

static void set_text(char **field, const char *value)
{
    free(*field);
    *field = value ? ls_xstrdup(value) : NULL;
}

/* A claim that becomes Bound is recorded (with its volume and selected node). */
static void note_claim(ls_api *a, const cJSON *pvc)
{
    const char *ns = ls_json_text(pvc, "metadata", "namespace"), *name = ls_json_text(pvc, "metadata", "name");
    const char *phase = ls_json_text(pvc, "status", "phase");
    if (!name || !phase || strcmp(phase, "Bound") != 0)
        return;
    api_obj *before = api_lookup(a, resource_of_kind("PersistentVolumeClaim"), ns ? ns : "default", name);
    const char *was = before ? ls_json_text(before->obj, "status", "phase") : NULL;
    if (was && strcmp(was, "Bound") == 0)
        return;
    api_claim_record *c = claim_record(a, ns ? ns : "default", name);
    c->binds++;
    set_text(&c->volume, ls_json_text(pvc, "spec", "volumeName"));
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pvc, "metadata"),
                                                        "annotations");
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(ann, "volume.kubernetes.io/selected-node");
    set_text(&c->selected_node, cJSON_IsString(node) ? node->valuestring : NULL);
}

static bool ops_put(void *ud, const char *kind, const cJSON *obj, ls_error *err)
{
    ls_api *a = ud;
    const ls_api_resource *r = resource_of_kind(kind);
    if (!r)
        return ls_errorf(err, "no served resource for kind %s", kind);
    if (strcmp(kind, "PersistentVolumeClaim") == 0)
        note_claim(a, obj);
    if (!api_store_put_locked(a, r, obj))
        return ls_errorf(err, "%s %s could not be stored", kind, ls_json_text(obj, "metadata", "name"));
    return true;
}

static bool is_storage_kind(const char *kind)
{
    static const char *const kinds[] = {"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                                        "Pod", "Node", NULL};
    for (int i = 0; kinds[i]; i++)
        if (strcmp(kind, kinds[i]) == 0)
            return true;
    return false;
}

void api_volumes_after_write(ls_api *a, const ls_api_resource *r, const cJSON *obj)
{
    if (r && !is_storage_kind(r->kind))
        return;
    pthread_mutex_lock(&a->mu);
    ls_pv_ops ops = {.ud = a, .get = ops_get, .each = ops_each, .put = ops_put,
                     .fault = (ls_provision_fault)a->faults.provision};
    ls_error err;
    bool ok = true;
    if (r && obj && strcmp(r->kind, "Pod") == 0)
        ok = ls_pv_create_ephemeral_claims(&ops, obj, &err);
    if (ok)
        ok = ls_pv_sync_all(&ops, &err);
    pthread_mutex_unlock(&a->mu);
    if (!ok)
        fprintf(stderr, "luasched simulate --serve: PersistentVolume controller: %s\n", err.msg);
}

/* The claims part of the record: a line per claim the controllers bound. */
bool api_volumes_print(ls_api *a, FILE *out)
{
    uint32_t twice = 0;
    for (uint32_t i = 0; i < a->claims.len; i++) {
        const api_claim_record *c = &LS_VEC_AT(&a->claims, api_claim_record, i);
        fprintf(out, "claim %s/%s: bound to volume %s%s%s\n", c->ns, c->name, c->volume ? c->volume : "?",
                c->selected_node ? " on " : "", c->selected_node ? c->selected_node : "");
        if (c->binds > 1)
            fprintf(out, "claim %s/%s: bound %u times\n", c->ns, c->name, c->binds);
        twice += c->binds > 1;
    }
    return twice == 0;
}

cJSON *api_volumes_json(ls_api *a, bool *ok)
{
    cJSON *claims = cJSON_CreateArray();
    for (uint32_t i = 0; i < a->claims.len; i++) {
        const api_claim_record *c = &LS_VEC_AT(&a->claims, api_claim_record, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "namespace", c->ns);
        cJSON_AddStringToObject(o, "name", c->name);
        cJSON_AddStringToObject(o, "volume", c->volume ? c->volume : "");
        if (c->selected_node)
            cJSON_AddStringToObject(o, "selectedNode", c->selected_node);
        cJSON_AddNumberToObject(o, "binds", c->binds);
        cJSON_AddItemToArray(claims, o);
        *ok = *ok && c->binds <= 1;
    }
    return claims;
}

void api_volumes_free(ls_api *a)
{
    for (uint32_t i = 0; i < a->claims.len; i++) {
        api_claim_record *c = &LS_VEC_AT(&a->claims, api_claim_record, i);
        free(c->volume);
        free(c->selected_node);
    }
    ls_vec_free(&a->claims);
}
