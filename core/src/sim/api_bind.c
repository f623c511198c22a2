/*
 * api_bind.c: the pods/binding subresource. A binding sets spec.nodeName and
 * the PodScheduled condition, and drops status.nominatedNodeName (upstream's
 * ClearingNominatedNodeNameAfterBinding), as one new version of the pod (MODIFIED); a pod
 * that already has a node refuses it with 409 Conflict. Both outcomes go into
 * the pod's record.
 */
#include "sim/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_scheduled_condition(cJSON *pod)
{
    cJSON *status = ls_json_child_object(pod, "status");
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
    }
    cJSON *cond = NULL;
    for (cJSON *c = conds->child; c && !cond; c = c->next)
        if (ls_json_text(c, "type", NULL) && strcmp(ls_json_text(c, "type", NULL), "PodScheduled") == 0)
            cond = c;
    if (!cond) {
        cond = cJSON_CreateObject();
        cJSON_AddStringToObject(cond, "type", "PodScheduled");
        cJSON_AddItemToArray(conds, cond);
    }
    char ts[32];
    api_now(ts, sizeof ts);
    ls_json_set_string(cond, "status", "True");
    ls_json_set_string(cond, "lastTransitionTime", ts);
    cJSON_DeleteItemFromObjectCaseSensitive(cond, "reason");
    cJSON_DeleteItemFromObjectCaseSensitive(cond, "message");
}

static int refuse_binding(ls_api *a, api_obj *o, const char *name, const char *target, cJSON **out)
{
    ls_api_record *rec = &LS_VEC_AT(&a->records, ls_api_record, o->record - 1);
    rec->refused++;
    if (!rec->refused_node)
        rec->refused_node = ls_arena_strdup(&a->record_text, target);
    char msg[900];
    snprintf(msg, sizeof msg, "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned to "
             "node \"%s\"", name, name, ls_json_text(o->obj, "spec", "nodeName"));
    return api_fail_named(out, 409, "Conflict", ls_api_resource_find("", "v1", "pods"), name, msg);
}

static int apply_binding(ls_api *a, api_obj *o, const cJSON *binding, const char *target, cJSON **out)
{
    const ls_api_resource *pods = ls_api_resource_find("", "v1", "pods");
    cJSON *next = cJSON_Duplicate(o->obj, 1);
    ls_json_set_string(ls_json_child_object(next, "spec"), "nodeName", target);
    /* ClearingNominatedNodeNameAfterBinding: the nomination has served its purpose. */
    cJSON_DeleteItemFromObjectCaseSensitive(ls_json_child_object(next, "status"), "nominatedNodeName");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(binding, "metadata"),
                                                       "annotations");
    if (cJSON_IsObject(ann))
        api_patch_apply(ls_json_child_object(ls_json_child_object(next, "metadata"), "annotations"), ann, false);
    set_scheduled_condition(next);
    api_set_rv(next, ++a->rv);
    cJSON *old = o->obj;
    o->obj = next;
    api_emit(a, API_MODIFIED, pods, next, old);
    cJSON_Delete(old);
    ls_api_record *rec = &LS_VEC_AT(&a->records, ls_api_record, o->record - 1);
    rec->binds++;
    a->bindings++;
    a->scheduled_events_at_last_bind = a->scheduled_events;
    rec->node = ls_arena_strdup(&a->record_text, target);   /* a pod binds once (a refused second binding keeps it) */
    rec->missing_node = !api_coll_find(api_coll_of(a, ls_api_resource_find("", "v1", "nodes")), target);
    *out = ls_api_status(201, NULL, NULL);
    return 201;
}

int ls_api_bind(ls_api *a, const char *ns, const char *name, const cJSON *binding, cJSON **out)
{
    const ls_api_resource *pods = ls_api_resource_find("", "v1", "pods");
    const char *target = ls_json_text(binding, "target", "name");
    const char *uid = ls_json_text(binding, "metadata", "uid");
    char msg[900];
    if (!target || !*target) {
        snprintf(msg, sizeof msg, "Binding \"%s\" is invalid: target.name: Required value", name);
        return api_fail(out, 422, "Invalid", msg);
    }
    pthread_mutex_lock(&a->mu);
    api_obj *o = api_lookup(a, pods, ns, name);
    const char *have = o ? ls_json_text(o->obj, "metadata", "uid") : NULL;
    int code;
    if (!o) {
        code = api_not_found(out, pods, name);
    } else if (uid && *uid && (!have || strcmp(uid, have) != 0)) {
        snprintf(msg, sizeof msg, "Operation cannot be fulfilled on pods/binding \"%s\": Precondition failed: UID in "
                 "precondition: %s, UID in object meta: %s", name, uid, have ? have : "");
        code = api_fail_named(out, 409, "Conflict", pods, name, msg);
    } else if (ls_json_text(o->obj, "spec", "nodeName") && *ls_json_text(o->obj, "spec", "nodeName")) {
        code = refuse_binding(a, o, name, target, out);
    } else {
        code = apply_binding(a, o, binding, target, out);
    }
    pthread_mutex_unlock(&a->mu);
    return code;
}
