/*
 * whatif_changes.c: the cluster a what-if question with "changes" runs on:
 * a cache of its own holding the live nodes and pods (bound and assumed), then
 * the changes in this order: pods removed, nodes removed, drained, cordoned,
 * nodes added from templates. The live objects are shared, never changed; a
 * cordoned node is a copy of its Node with spec.unschedulable set.
 */
#include "cli/whatif.h"
#include "scheduler/whatif_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ADDED_NODES = 10000 };

struct ls_whatif_view {
    ls_cache *cache;
    ls_snapshot *snapshot;
    ls_vec added;     /* ls_node_obj *: nodes added from templates */
    ls_vec copies;    /* ls_node *: cordoned copies */
    uint32_t next_id;
};

ls_cache *ls_whatif_view_cache(ls_whatif_view *v)
{
    return v->cache;
}

ls_snapshot *ls_whatif_view_snapshot(ls_whatif_view *v)
{
    ls_cache_update_snapshot(v->cache, v->snapshot);
    return v->snapshot;
}

void ls_whatif_view_free(ls_whatif_view *v)
{
    if (!v)
        return;
    ls_snapshot_free(v->snapshot);
    ls_cache_free(v->cache);
    for (uint32_t i = 0; i < v->added.len; i++)
        ls_node_obj_free(LS_VEC_AT(&v->added, ls_node_obj *, i));
    for (uint32_t i = 0; i < v->copies.len; i++)
        free(LS_VEC_AT(&v->copies, ls_node *, i));
    ls_vec_free(&v->added);
    ls_vec_free(&v->copies);
    free(v);
}

/* ---- the copy of the live state */

static void copy_live(ls_whatif_view *v, ls_scheduler *live)
{
    const ls_snapshot *snap = ls_whatif_live_snapshot(live);
    const ls_cache *live_cache = ls_scheduler_cache(live);
    ls_error err;
    for (uint32_t i = 0; i < ls_snapshot_num_nodes(snap); i++) {
        const ls_node_info *ni = ls_snapshot_node(snap, i);
        ls_cache_add_node(v->cache, ni->node);
        for (uint32_t k = 0; k < ni->num_pods; k++) {
            const ls_pod *pod = ni->pods[k];
            if (ls_cache_is_assumed(live_cache, pod) || !pod->node_name)
                ls_cache_assume_pod(v->cache, pod, ni->node->name, &err);
            else
                ls_cache_add_pod(v->cache, pod, &err);
        }
    }
}

/* ---- each kind of change */

static const ls_node_info *node_named(ls_whatif_view *v, const cJSON *item, const char *field, uint32_t i,
                                      ls_error *err)
{
    if (!cJSON_IsString(item)) {
        ls_errorf(err, "changes.%s[%u]: expected a node name (a string)", field, i);
        return NULL;
    }
    const ls_node_info *ni = ls_cache_node_info(v->cache, ls_intern(item->valuestring, strlen(item->valuestring)));
    if (!ni)
        ls_errorf(err, "changes.%s[%u]: no node named \"%s\" in the cluster", field, i, item->valuestring);
    return ni;
}

static bool is_daemon_pod(const ls_pod *pod)
{
    for (uint32_t i = 0; i < pod->n_owner_refs; i++)
        if (pod->owner_refs[i].controller && strcmp(ls_str_get(pod->owner_refs[i].kind), "DaemonSet") == 0)
            return true;
    return false;
}

/* The node's pods off it (all of them, or all but DaemonSet pods: a drain). */
static void empty_node(ls_whatif_view *v, const ls_node_info *ni, bool keep_daemons)
{
    ls_vec gone;
    ls_vec_init(&gone, sizeof(const ls_pod *));
    for (uint32_t k = 0; k < ni->num_pods; k++)
        if (!keep_daemons || !is_daemon_pod(ni->pods[k]))
            *(const ls_pod **)ls_vec_push(&gone) = ni->pods[k];
    ls_error err;
    for (uint32_t k = 0; k < gone.len; k++) {
        const ls_pod *pod = LS_VEC_AT(&gone, const ls_pod *, k);
        if (!ls_cache_remove_pod(v->cache, pod, &err))
            ls_cache_forget_pod(v->cache, pod, &err);
    }
    ls_vec_free(&gone);
}

static void cordon(ls_whatif_view *v, const ls_node_info *ni)
{
    if (ni->node->unschedulable)
        return;
    ls_node *copy = ls_xmalloc(sizeof *copy);
    *copy = *ni->node;
    copy->unschedulable = 1;
    *(ls_node **)ls_vec_push(&v->copies) = copy;
    ls_cache_update_node(v->cache, ni->node, copy);
}

static bool each_node(ls_whatif_view *v, const cJSON *changes, const char *field, int what, ls_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(changes, field);
    if (!list)
        return true;
    if (!cJSON_IsArray(list))
        return ls_errorf(err, "changes.%s: expected a list of node names", field);
    uint32_t i = 0;
    for (const cJSON *item = list->child; item; item = item->next, i++) {
        const ls_node_info *ni = node_named(v, item, field, i, err);
        if (!ni)
            return false;
        const ls_node *node = ni->node;
        if (what == 'r') {
            empty_node(v, ni, false);
            ls_cache_remove_node(v->cache, node);
        } else if (what == 'd') {
            empty_node(v, ni, true);
            cordon(v, ls_cache_node_info(v->cache, node->name));
        } else {
            cordon(v, ni);
        }
    }
    return true;
}

static const ls_pod *find_pod(ls_whatif_view *v, const char *ref)
{
    const char *slash = strchr(ref, '/');
    ls_str ns = slash ? ls_intern(ref, (size_t)(slash - ref)) : ls_intern("default", 7);
    const char *name = slash ? slash + 1 : ref;
    ls_str want = ls_intern(name, strlen(name));
    ls_snapshot *snap = ls_whatif_view_snapshot(v);
    for (uint32_t i = 0; i < ls_snapshot_num_nodes(snap); i++) {
        const ls_node_info *ni = ls_snapshot_node(snap, i);
        for (uint32_t k = 0; k < ni->num_pods; k++)
            if (ni->pods[k]->name == want && ni->pods[k]->ns == ns)
                return ni->pods[k];
    }
    return NULL;
}

static bool remove_pods(ls_whatif_view *v, const cJSON *changes, ls_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(changes, "removePods");
    if (!list)
        return true;
    if (!cJSON_IsArray(list))
        return ls_errorf(err, "changes.removePods: expected a list of \"namespace/name\"");
    uint32_t i = 0;
    for (const cJSON *item = list->child; item; item = item->next, i++) {
        const ls_pod *pod = cJSON_IsString(item) ? find_pod(v, item->valuestring) : NULL;
        if (!pod)
            return ls_errorf(err, "changes.removePods[%u]: %s", i,
                             cJSON_IsString(item) ? "no pod of that name on a node" : "expected \"namespace/name\"");
        ls_error ignored;
        if (!ls_cache_remove_pod(v->cache, pod, &ignored))
            ls_cache_forget_pod(v->cache, pod, &ignored);
    }
    return true;
}

/* addNodes: [{"template": Node, "count": N}]: nodes NAME-1 .. NAME-N, NAME
 * the template's metadata.name. */
static bool add_group(ls_whatif_view *v, const cJSON *group, uint32_t g, ls_error *err)
{
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(group, "template");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(group, "count");
    if (!cJSON_IsObject(tmpl))
        return ls_errorf(err, "changes.addNodes[%u].template: expected a Node object", g);
    double n = count ? (cJSON_IsNumber(count) ? count->valuedouble : -1) : 1;
    if (n < 1 || n > MAX_ADDED_NODES || n != (double)(uint32_t)n)
        return ls_errorf(err, "changes.addNodes[%u].count: expected a whole number from 1 to %d", g, MAX_ADDED_NODES);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
    const cJSON *name = meta ? cJSON_GetObjectItemCaseSensitive(meta, "name") : NULL;
    const char *base = cJSON_IsString(name) ? name->valuestring : "whatif-node";
    char source[64];
    snprintf(source, sizeof source, "changes.addNodes[%u].template", g);
    for (uint32_t i = 1; i <= (uint32_t)n; i++) {
        cJSON *copy = cJSON_Duplicate(tmpl, true);
        cJSON *m = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
        if (!m)
            m = cJSON_AddObjectToObject(copy, "metadata");
        char node_name[300];
        snprintf(node_name, sizeof node_name, "%.250s-%u", base, i);
        cJSON_DeleteItemFromObjectCaseSensitive(m, "name");
        cJSON_AddStringToObject(m, "name", node_name);
        ls_decode_ctx ctx = {.source = source};
        ls_node_obj *obj = ls_node_decode(copy, &ctx, err);
        cJSON_Delete(copy);
        if (!obj)
            return false;
        if (ls_cache_node_info(v->cache, obj->node.name)) {
            ls_node_obj_free(obj);
            return ls_errorf(err, "changes.addNodes[%u]: a node named \"%s\" is already in the cluster (give the "
                                  "template another metadata.name)", g, node_name);
        }
        obj->node.id = v->next_id++;
        *(ls_node_obj **)ls_vec_push(&v->added) = obj;
        ls_cache_add_node(v->cache, &obj->node);
    }
    return true;
}

static bool add_nodes(ls_whatif_view *v, const cJSON *changes, ls_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(changes, "addNodes");
    if (!list)
        return true;
    if (!cJSON_IsArray(list))
        return ls_errorf(err, "changes.addNodes: expected a list of {\"template\": Node, \"count\": N}");
    uint32_t g = 0;
    for (const cJSON *group = list->child; group; group = group->next, g++)
        if (!add_group(v, group, g, err))
            return false;
    return true;
}

static bool check_keys(const cJSON *changes, ls_error *err)
{
    static const char *const known[] = {"addNodes", "cordonNodes", "drainNodes", "removeNodes", "removePods"};
    for (const cJSON *item = changes->child; item; item = item->next) {
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            ok = ok || strcmp(item->string, known[k]) == 0;
        if (!ok)
            return ls_errorf(err, "changes.%s: unknown change (expected addNodes, cordonNodes, drainNodes, "
                                  "removeNodes or removePods)", item->string);
    }
    return true;
}

ls_whatif_view *ls_whatif_view_new(ls_scheduler *live, const cJSON *changes, uint32_t first_id, ls_error *err)
{
    if (!cJSON_IsObject(changes)) {
        ls_errorf(err, "changes: expected an object");
        return NULL;
    }
    if (!check_keys(changes, err))
        return NULL;
    ls_whatif_view *v = ls_xcalloc(1, sizeof *v);
    v->cache = ls_cache_new();
    v->snapshot = ls_snapshot_new();
    v->next_id = first_id;
    ls_vec_init(&v->added, sizeof(ls_node_obj *));
    ls_vec_init(&v->copies, sizeof(ls_node *));
    copy_live(v, live);
    if (!remove_pods(v, changes, err) || !each_node(v, changes, "removeNodes", 'r', err) ||
        !each_node(v, changes, "drainNodes", 'd', err) || !each_node(v, changes, "cordonNodes", 'c', err) ||
        !add_nodes(v, changes, err)) {
        ls_whatif_view_free(v);
        return NULL;
    }
    return v;
}
