/*
 * nominator.c: see nominator.h.
 */
#include "queue/nominator.h"

#include <stdlib.h>

void ls_nominator_init(ls_nominator *n)
{
    ls_map_init(&n->by_pod);
    ls_map_init(&n->by_node);
}

static void free_list(void *list)
{
    ls_vec_free(list);
    free(list);
}

void ls_nominator_free(ls_nominator *n)
{
    ls_map_free_values(&n->by_node, free_list);
    ls_map_free(&n->by_pod);
}

static ls_vec *node_list(ls_nominator *n, ls_str node, bool create)
{
    ls_vec *v = ls_map_get(&n->by_node, node);
    if (!v && create) {
        v = ls_xcalloc(1, sizeof *v);
        ls_vec_init(v, sizeof(const ls_pod *));
        ls_map_put(&n->by_node, node, v);
    }
    return v;
}

void ls_nominator_delete(ls_nominator *n, const ls_pod *pod)
{
    ls_str node = (ls_str)(uintptr_t)ls_map_remove(&n->by_pod, pod->id + 1);
    ls_vec *v = node ? node_list(n, node, false) : NULL;
    if (!v)
        return;
    const ls_pod **items = v->data;
    for (uint32_t i = 0; i < v->len; i++) {
        if (items[i]->id != pod->id)
            continue;
        items[i] = items[v->len - 1];
        v->len--;
        break;
    }
}

void ls_nominator_add(ls_nominator *n, const ls_pod *pod, ls_str node)
{
    ls_nominator_delete(n, pod);
    if (!node || pod->node_name)
        return;
    *(const ls_pod **)ls_vec_push(node_list(n, node, true)) = pod;
    ls_map_put(&n->by_pod, pod->id + 1, (void *)(uintptr_t)node);
}

/* upstream's UpdateNominatedPod: the new object's status.nominatedNodeName
 * decides (added, changed or removed), except when neither version has one:
 * then a nomination made in memory stays (its status patch may not have come
 * back yet). */
void ls_nominator_update(ls_nominator *n, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_str node = new_pod->nominated_node_name;
    if (!old_pod->nominated_node_name && !node)
        node = (ls_str)(uintptr_t)ls_map_get(&n->by_pod, old_pod->id + 1);
    ls_nominator_delete(n, old_pod);
    if (node)
        ls_nominator_add(n, new_pod, node);
}

ls_str ls_nominator_node_of(const ls_nominator *n, const ls_pod *pod)
{
    return (ls_str)(uintptr_t)ls_map_get(&n->by_pod, pod->id + 1);
}

uint32_t ls_nominator_count(const ls_nominator *n, ls_str node)
{
    const ls_vec *v = ls_map_get(&n->by_node, node);
    return v ? v->len : 0;
}

const ls_pod *ls_nominator_at(const ls_nominator *n, ls_str node, uint32_t i)
{
    const ls_vec *v = ls_map_get(&n->by_node, node);
    return v && i < v->len ? LS_VEC_AT(v, const ls_pod *, i) : NULL;
}

uint32_t ls_nominator_total(const ls_nominator *n)
{
    return n->by_pod.len;
}
