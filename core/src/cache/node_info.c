/*
 * node_info.c: changeable copies of a NodeInfo (see cache.h). The copy owns
 * its arrays; adding or removing a pod keeps requested and non-zero sums, the
 * used host ports and the (anti-)affinity pod lists as the cache would.
 */
#include "cache/cache_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct clone {
    ls_node_info info;              /* first: the public pointer is the clone's */
    ls_node_lists lists;
} clone;

void ls_node_lists_init(ls_node_lists *l)
{
    ls_vec_init(&l->pods, sizeof(const ls_pod *));
    ls_vec_init(&l->with_affinity, sizeof(const ls_pod *));
    ls_vec_init(&l->with_anti_affinity, sizeof(const ls_pod *));
    ls_vec_init(&l->ports, sizeof(ls_host_port));
}

void ls_node_lists_free(ls_node_lists *l)
{
    ls_vec_free(&l->pods);
    ls_vec_free(&l->with_affinity);
    ls_vec_free(&l->with_anti_affinity);
    ls_vec_free(&l->ports);
}

static void copy_vec(ls_vec *dst, const ls_vec *src)
{
    if (dst->cap < src->len) {
        dst->data = ls_xrealloc(dst->data, (size_t)src->len * src->item_size);
        dst->cap = src->len;
    }
    dst->item_size = src->item_size;
    dst->len = src->len;
    if (src->len)
        memcpy(dst->data, src->data, (size_t)src->len * src->item_size);
}

void ls_node_lists_copy(ls_node_lists *dst, const ls_node_lists *src)
{
    copy_vec(&dst->pods, &src->pods);
    copy_vec(&dst->with_affinity, &src->with_affinity);
    copy_vec(&dst->with_anti_affinity, &src->with_anti_affinity);
    copy_vec(&dst->ports, &src->ports);
}

static void copy_into(ls_vec *v, const void *items, uint32_t n, uint32_t size)
{
    ls_vec_init(v, size);
    for (uint32_t i = 0; i < n; i++)
        memcpy(ls_vec_push(v), (const char *)items + (size_t)i * size, size);
}

void ls_node_info_point(ls_node_info *info, const ls_node_lists *l)
{
    info->num_pods = l->pods.len;
    info->pods = l->pods.data;
    info->num_pods_with_affinity = l->with_affinity.len;
    info->pods_with_affinity = l->with_affinity.data;
    info->num_pods_with_required_anti_affinity = l->with_anti_affinity.len;
    info->pods_with_required_anti_affinity = l->with_anti_affinity.data;
    info->n_used_ports = l->ports.len;
    info->used_ports = l->ports.data;
}

static void sync(clone *c)
{
    ls_node_info_point(&c->info, &c->lists);
}

ls_node_info *ls_node_info_clone(const ls_node_info *ni)
{
    ls_critical_enter();
    clone *c = ls_xcalloc(1, sizeof *c);
    c->info = *ni;
    ls_node_lists *l = &c->lists;
    copy_into(&l->pods, ni->pods, ni->num_pods, sizeof(const ls_pod *));
    copy_into(&l->with_affinity, ni->pods_with_affinity, ni->num_pods_with_affinity, sizeof(const ls_pod *));
    copy_into(&l->with_anti_affinity, ni->pods_with_required_anti_affinity, ni->num_pods_with_required_anti_affinity,
              sizeof(const ls_pod *));
    copy_into(&l->ports, ni->used_ports, ni->n_used_ports, sizeof(ls_host_port));
    sync(c);
    ls_critical_leave();
    return &c->info;
}

void ls_node_info_free(ls_node_info *ni)
{
    if (!ni)
        return;
    ls_critical_enter();
    clone *c = (clone *)ni;
    ls_node_lists_free(&c->lists);
    free(c);
    ls_critical_leave();
}

static void account(ls_node_info *ni, const ls_pod *pod, int sign)
{
    for (int r = 0; r < LS_MAX_RESOURCES; r++)
        ni->requested.v[r] += sign * pod->requests.v[r];
    ni->nonzero_milli_cpu += sign * pod->nonzero_milli_cpu;
    ni->nonzero_memory += sign * pod->nonzero_memory;
}

void ls_node_info_add_pod(ls_node_info *ni, const ls_pod *pod)
{
    ls_critical_enter();
    clone *c = (clone *)ni;
    *(const ls_pod **)ls_vec_push(&c->lists.pods) = pod;
    if (pod->has_affinity)
        *(const ls_pod **)ls_vec_push(&c->lists.with_affinity) = pod;
    if (pod->has_required_anti_affinity)
        *(const ls_pod **)ls_vec_push(&c->lists.with_anti_affinity) = pod;
    for (uint32_t i = 0; i < pod->n_host_ports; i++)
        *(ls_host_port *)ls_vec_push(&c->lists.ports) = pod->host_ports[i];
    account(ni, pod, +1);
    sync(c);
    ls_critical_leave();
}

static bool remove_ptr(ls_vec *v, const ls_pod *pod)
{
    const ls_pod **items = v->data;
    for (uint32_t i = 0; i < v->len; i++) {
        if (items[i] != pod && !(items[i]->uid && items[i]->uid == pod->uid))
            continue;
        memmove(&items[i], &items[i + 1], (v->len - i - 1) * sizeof *items);
        v->len--;
        return true;
    }
    return false;
}

static void remove_ports(ls_vec *ports, const ls_pod *pod)
{
    ls_host_port *items = ports->data;
    for (uint32_t k = 0; k < pod->n_host_ports; k++) {
        const ls_host_port *p = &pod->host_ports[k];
        for (uint32_t i = 0; i < ports->len; i++) {
            if (items[i].port != p->port || items[i].protocol != p->protocol || items[i].host_ip != p->host_ip)
                continue;
            memmove(&items[i], &items[i + 1], (ports->len - i - 1) * sizeof *items);
            ports->len--;
            break;
        }
    }
}

bool ls_node_info_remove_pod(ls_node_info *ni, const ls_pod *pod)
{
    ls_critical_enter();
    clone *c = (clone *)ni;
    bool found = remove_ptr(&c->lists.pods, pod);
    if (found) {
        if (pod->has_affinity)
            remove_ptr(&c->lists.with_affinity, pod);
        if (pod->has_required_anti_affinity)
            remove_ptr(&c->lists.with_anti_affinity, pod);
        remove_ports(&c->lists.ports, pod);
        account(ni, pod, -1);
        sync(c);
    }
    ls_critical_leave();
    return found;
}
