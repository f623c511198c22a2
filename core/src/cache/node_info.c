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
    ls_vec pods, with_affinity, with_anti_affinity, ports;
} clone;

static void copy_into(ls_vec *v, const void *items, uint32_t n, uint32_t size)
{
    ls_vec_init(v, size);
    for (uint32_t i = 0; i < n; i++)
        memcpy(ls_vec_push(v), (const char *)items + (size_t)i * size, size);
}

void ls_node_info_point(ls_node_info *info, const ls_vec *pods, const ls_vec *with_affinity,
                        const ls_vec *with_anti_affinity, const ls_vec *ports)
{
    info->num_pods = pods->len;
    info->pods = pods->data;
    info->num_pods_with_affinity = with_affinity->len;
    info->pods_with_affinity = with_affinity->data;
    info->num_pods_with_required_anti_affinity = with_anti_affinity->len;
    info->pods_with_required_anti_affinity = with_anti_affinity->data;
    info->n_used_ports = ports->len;
    info->used_ports = ports->data;
}

static void sync(clone *c)
{
    ls_node_info_point(&c->info, &c->pods, &c->with_affinity, &c->with_anti_affinity, &c->ports);
}

ls_node_info *ls_node_info_clone(const ls_node_info *ni)
{
    ls_critical_enter();
    clone *c = ls_xcalloc(1, sizeof *c);
    c->info = *ni;
    copy_into(&c->pods, ni->pods, ni->num_pods, sizeof(const ls_pod *));
    copy_into(&c->with_affinity, ni->pods_with_affinity, ni->num_pods_with_affinity, sizeof(const ls_pod *));
    copy_into(&c->with_anti_affinity, ni->pods_with_required_anti_affinity, ni->num_pods_with_required_anti_affinity,
              sizeof(const ls_pod *));
    copy_into(&c->ports, ni->used_ports, ni->n_used_ports, sizeof(ls_host_port));
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
    ls_vec_free(&c->pods);
    ls_vec_free(&c->with_affinity);
    ls_vec_free(&c->with_anti_affinity);
    ls_vec_free(&c->ports);
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
    *(const ls_pod **)ls_vec_push(&c->pods) = pod;
    if (pod->has_affinity)
        *(const ls_pod **)ls_vec_push(&c->with_affinity) = pod;
    if (pod->has_required_anti_affinity)
        *(const ls_pod **)ls_vec_push(&c->with_anti_affinity) = pod;
    for (uint32_t i = 0; i < pod->n_host_ports; i++)
        *(ls_host_port *)ls_vec_push(&c->ports) = pod->host_ports[i];
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
    bool found = remove_ptr(&c->pods, pod);
    if (found) {
        if (pod->has_affinity)
            remove_ptr(&c->with_affinity, pod);
        if (pod->has_required_anti_affinity)
            remove_ptr(&c->with_anti_affinity, pod);
        remove_ports(&c->ports, pod);
        account(ni, pod, -1);
        sync(c);
    }
    ls_critical_leave();
    return found;
}
