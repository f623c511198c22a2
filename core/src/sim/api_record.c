/*
 * api_record.c: the binding record: per pod, successful bindings, bindings
 * refused because the pod was already bound, and the node. Printed when
 * serving ends (and served as JSON at /luasched/v1/record) so a test can
 * prove a scheduler bound every pod exactly once.
 */
#include "sim/api_internal.h"

#include <stdio.h>
#include <stdlib.h>

void api_record_add(ls_api *a, api_obj *o, const char *ns, const char *name)
{
    ls_api_record *rec = ls_vec_push(&a->records);
    rec->ns = ls_arena_strdup(&a->record_text, ns ? ns : "");
    rec->name = ls_arena_strdup(&a->record_text, name);
    const char *uid = ls_json_text(o->obj, "metadata", "uid");
    rec->uid = ls_arena_strdup(&a->record_text, uid ? uid : "");
    const char *node = ls_json_text(o->obj, "spec", "nodeName");
    rec->running = node != NULL;
    rec->node = ls_arena_strdup_opt(&a->record_text, node);
    o->record = a->records.len;
}

bool ls_api_print_record(ls_api *a, FILE *out)
{
    pthread_mutex_lock(&a->mu);
    uint32_t bound = 0, pending = 0, running = 0, deleted = 0, twice = 0, refused = 0, missing = 0;
    uint64_t accepted = 0, refusals = 0;
    for (uint32_t i = 0; i < a->records.len; i++) {
        const ls_api_record *r = &LS_VEC_AT(&a->records, ls_api_record, i);
        accepted += r->binds;
        refusals += r->refused;
        if (r->running)
            fprintf(out, "%s/%s: already running on %s\n", r->ns, r->name, r->node);
        else if (r->binds)
            fprintf(out, "%s/%s: bound to %s%s\n", r->ns, r->name, r->node, r->missing_node ? " (no such node)" : "");
        else if (r->deleted)
            fprintf(out, "%s/%s: deleted\n", r->ns, r->name);
        else
            fprintf(out, "%s/%s: pending\n", r->ns, r->name);
        if (r->binds > 1)
            fprintf(out, "%s/%s: bound %u times\n", r->ns, r->name, r->binds);
        if (r->refused)
            fprintf(out, "%s/%s: %u binding%s refused: already assigned to node \"%s\" (first refused: to %s)\n",
                    r->ns, r->name, r->refused, r->refused == 1 ? "" : "s", r->node, r->refused_node);
        running += r->running;
        bound += !r->running && r->binds > 0;
        pending += !r->running && !r->binds && !r->deleted;
        deleted += r->deleted;
        twice += r->binds > 1;
        refused += r->refused > 0;
        missing += r->missing_node;
    }
    bool claims_ok = api_volumes_print(a, out);
    fprintf(out, "summary: %u nodes, %u pods: %u bound, %u pending, %u already running, %u deleted; "
            "bindings: %llu accepted, %llu refused\n",
            api_coll_of(a, ls_api_resource_find("", "v1", "nodes"))->len, a->records.len, bound, pending, running,
            deleted, (unsigned long long)accepted, (unsigned long long)refusals);
    const uint64_t *f = a->injected;
    if (f[API_FAULT_ERROR] + f[API_FAULT_THROTTLE] + f[API_FAULT_GONE] + f[API_FAULT_DROP])
        fprintf(out, "faults injected: %llu errors (500), %llu throttled (429), %llu watches answered 410, "
                "%llu watches dropped\n", (unsigned long long)f[API_FAULT_ERROR],
                (unsigned long long)f[API_FAULT_THROTTLE], (unsigned long long)f[API_FAULT_GONE],
                (unsigned long long)f[API_FAULT_DROP]);
    pthread_mutex_unlock(&a->mu);
    return !twice && !refused && !missing && claims_ok;
}

static cJSON *record_json(const ls_api_record *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "namespace", r->ns);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "uid", r->uid);
    if (r->node)
        cJSON_AddStringToObject(o, "node", r->node);
    else
        cJSON_AddNullToObject(o, "node");
    cJSON_AddNumberToObject(o, "binds", r->binds);
    cJSON_AddNumberToObject(o, "refused", r->refused);
    cJSON_AddBoolToObject(o, "running", r->running);
    cJSON_AddBoolToObject(o, "deleted", r->deleted);
    cJSON_AddBoolToObject(o, "missingNode", r->missing_node);
    return o;
}

cJSON *ls_api_record_json(ls_api *a)
{
    cJSON *root = cJSON_CreateObject(), *pods = cJSON_AddArrayToObject(root, "pods");
    bool ok = true;
    pthread_mutex_lock(&a->mu);
    for (uint32_t i = 0; i < a->records.len; i++) {
        const ls_api_record *r = &LS_VEC_AT(&a->records, ls_api_record, i);
        cJSON_AddItemToArray(pods, record_json(r));
        ok = ok && r->binds <= 1 && !r->refused && !r->missing_node;
    }
    cJSON *ev = cJSON_AddObjectToObject(root, "events");
    cJSON_AddNumberToObject(ev, "bindings", (double)a->bindings);
    cJSON_AddNumberToObject(ev, "scheduled", (double)a->scheduled_events);
    cJSON_AddNumberToObject(ev, "scheduledAtLastBinding", (double)a->scheduled_events_at_last_bind);
    cJSON_AddItemToObject(root, "claims", api_volumes_json(a, &ok));
    pthread_mutex_unlock(&a->mu);
    cJSON_AddBoolToObject(root, "ok", ok);
    return root;
}
