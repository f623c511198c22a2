/*
 * cache.c: the scheduler cache. Holds a NodeInfo per node with the sums of
 * its pods' requests, its used host ports and its pods with (anti-)affinity;
 * tracks assumed pods; keeps nodes in a most-recently-updated list stamped
 * with a process-wide generation so snapshot.c copies only what changed; and
 * keeps the zone-round-robin node tree that fixes the order Filter walks.
 */
#include "cache/cache_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t next_generation_counter;

uint64_t ls_cache_next_generation(void)
{
    return ++next_generation_counter;
}

uint64_t ls_cache_generation(void)
{
    return next_generation_counter;
}

ls_cache *ls_cache_new(void)
{
    ls_cache *c = ls_xcalloc(1, sizeof *c);
    ls_map_init(&c->nodes);
    ls_map_init(&c->pods);
    ls_map_init(&c->images);
    ls_vec_init(&c->zones, sizeof(ls_zone));
    return c;
}

static void cnode_free(void *node)
{
    ls_cnode *n = node;
    ls_node_lists_free(&n->lists);
    free(n);
}

void ls_cache_free(ls_cache *c)
{
    if (!c)
        return;
    ls_map_free_values(&c->nodes, cnode_free);
    ls_map_free_values(&c->pods, free);
    ls_map_free_values(&c->images, free);
    for (uint32_t z = 0; z < c->zones.len; z++)
        ls_vec_free(&LS_VEC_AT(&c->zones, ls_zone, z).names);
    ls_vec_free(&c->zones);
    free(c);
}

/* ---- MRU list: the most recently changed node at the head */

static void mru_unlink(ls_cache *c, ls_cnode *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else if (c->head == n)
        c->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

static void touch(ls_cache *c, ls_cnode *n)
{
    n->info.generation = ls_cache_next_generation();
    mru_unlink(c, n);
    n->next = c->head;
    if (c->head)
        c->head->prev = n;
    c->head = n;
}

static ls_cnode *cnode_get_or_create(ls_cache *c, ls_str name)
{
    ls_cnode *n = ls_map_get(&c->nodes, name);
    if (n)
        return n;
    n = ls_xcalloc(1, sizeof *n);
    n->name = name;
    ls_node_lists_init(&n->lists);
    ls_map_put(&c->nodes, name, n);
    return n;
}

/* ---- node tree: zones in first-seen order, nodes in insertion order */

ls_str ls_node_zone_key(const ls_node *node)
{
    static ls_str region_key, zone_key, old_region_key, old_zone_key;
    if (!region_key) {
        region_key = ls_intern_cstr("topology.kubernetes.io/region");
        zone_key = ls_intern_cstr("topology.kubernetes.io/zone");
        old_region_key = ls_intern_cstr("failure-domain.beta.kubernetes.io/region");
        old_zone_key = ls_intern_cstr("failure-domain.beta.kubernetes.io/zone");
    }
    ls_str region = ls_labels_get(&node->labels, region_key);
    if (!region)
        region = ls_labels_get(&node->labels, old_region_key);
    ls_str zone = ls_labels_get(&node->labels, zone_key);
    if (!zone)
        zone = ls_labels_get(&node->labels, old_zone_key);
    if (!region && !zone)
        return 0;
    /* upstream joins region and zone with ":\x00:" so that no label value can forge a key */
    char buf[600];
    size_t rl = ls_str_len(region), zl = ls_str_len(zone);
    if (rl + zl + 3 > sizeof buf)
        return ls_intern(ls_str_get(zone), zl);
    memcpy(buf, ls_str_get(region), rl);
    memcpy(buf + rl, ":\0:", 3);
    memcpy(buf + rl + 3, ls_str_get(zone), zl);
    return ls_intern(buf, rl + zl + 3);
}

static ls_zone *zone_find(ls_cache *c, ls_str key, bool create)
{
    for (uint32_t z = 0; z < c->zones.len; z++) {
        ls_zone *zone = &LS_VEC_AT(&c->zones, ls_zone, z);
        if (zone->key == key)
            return zone;
    }
    if (!create)
        return NULL;
    ls_zone *zone = ls_vec_push(&c->zones);
    zone->key = key;
    ls_vec_init(&zone->names, sizeof(ls_str));
    return zone;
}

static void tree_add(ls_cache *c, ls_str zone_key, ls_str name)
{
    ls_zone *zone = zone_find(c, zone_key, true);
    *(ls_str *)ls_vec_push(&zone->names) = name;
    c->num_tree_nodes++;
    c->tree_generation = ls_cache_next_generation();
}

static void tree_remove(ls_cache *c, ls_str zone_key, ls_str name)
{
    ls_zone *zone = zone_find(c, zone_key, false);
    if (!zone)
        return;
    ls_str *names = zone->names.data;
    for (uint32_t i = 0; i < zone->names.len; i++) {
        if (names[i] != name)
            continue;
        memmove(&names[i], &names[i + 1], (zone->names.len - i - 1) * sizeof *names);
        zone->names.len--;
        c->num_tree_nodes--;
        break;
    }
    if (zone->names.len == 0) {
        ls_vec_free(&zone->names);
        uint32_t z = (uint32_t)(zone - (ls_zone *)c->zones.data);
        memmove(zone, zone + 1, (c->zones.len - z - 1) * sizeof *zone);
        c->zones.len--;
    }
    c->tree_generation = ls_cache_next_generation();
}

uint32_t ls_cache_tree_list(const ls_cache *c, ls_str *out)
{
    uint32_t n = 0;
    for (uint32_t round = 0; n < c->num_tree_nodes; round++) {
        for (uint32_t z = 0; z < c->zones.len; z++) {
            const ls_zone *zone = &LS_VEC_AT(&c->zones, ls_zone, z);
            if (round < zone->names.len)
                out[n++] = LS_VEC_AT(&zone->names, ls_str, round);
        }
    }
    return n;
}

/* ---- image states: how many nodes have each image name */

static void images_update(ls_cache *c, const ls_node *node, int delta)
{
    for (uint32_t i = 0; i < node->n_images; i++) {
        const ls_node_image *img = &node->images[i];
        for (uint32_t k = 0; k < img->n_names; k++) {
            ls_image_summary *s = ls_map_get(&c->images, img->names[k]);
            if (!s) {
                if (delta < 0)
                    continue;
                /* One summary per name: its size is the first reporting node's,
                 * as upstream's image states keep it. */
                s = ls_xcalloc(1, sizeof *s);
                s->size = img->size;
                ls_map_put(&c->images, img->names[k], s);
            }
            s->num_nodes = (uint32_t)((int64_t)s->num_nodes + delta);
            if (s->num_nodes == 0)
                free(ls_map_remove(&c->images, img->names[k]));
        }
    }
}

const ls_image_summary *ls_cache_image(const ls_cache *c, ls_str name)
{
    return ls_map_get(&c->images, name);
}

/* ---- nodes */

static void set_node(ls_cnode *n, const ls_node *node)
{
    n->node = node;
    n->info.node = node;
    n->info.allocatable = node ? node->allocatable : (ls_resources){0};
}

void ls_cache_add_node(ls_cache *c, const ls_node *node)
{
    ls_cnode *n = cnode_get_or_create(c, node->name);
    if (n->node) {
        ls_cache_update_node(c, n->node, node);
        return;
    }
    set_node(n, node);
    n->zone = ls_node_zone_key(node);
    tree_add(c, n->zone, node->name);
    images_update(c, node, +1);
    c->num_nodes++;
    touch(c, n);
}

void ls_cache_update_node(ls_cache *c, const ls_node *old_node, const ls_node *new_node)
{
    ls_cnode *n = ls_map_get(&c->nodes, new_node->name);
    if (!n || !n->node) {
        ls_cache_add_node(c, new_node);
        return;
    }
    images_update(c, old_node ? old_node : n->node, -1);
    images_update(c, new_node, +1);
    ls_str zone = ls_node_zone_key(new_node);
    if (zone != n->zone) {
        tree_remove(c, n->zone, n->name);
        tree_add(c, zone, n->name);
        n->zone = zone;
    }
    set_node(n, new_node);
    touch(c, n);
}

static void cnode_drop(ls_cache *c, ls_cnode *n)
{
    mru_unlink(c, n);
    ls_map_remove(&c->nodes, n->name);
    cnode_free(n);
    c->removed_generation = ls_cache_next_generation();
}

void ls_cache_remove_node(ls_cache *c, const ls_node *node)
{
    ls_cnode *n = ls_map_get(&c->nodes, node->name);
    if (!n || !n->node)
        return;
    images_update(c, n->node, -1);
    tree_remove(c, n->zone, n->name);
    c->num_nodes--;
    /* A node with pods stays as a ghost (no node object) until their deletes arrive. */
    set_node(n, NULL);
    if (n->lists.pods.len == 0)
        cnode_drop(c, n);
    else
        touch(c, n);
    c->removed_generation = ls_cache_next_generation();
}

uint32_t ls_cache_node_count(const ls_cache *c)
{
    return c->num_nodes;
}

const ls_node_info *ls_cache_node_info(const ls_cache *c, ls_str node_name)
{
    const ls_cnode *n = ls_map_get(&c->nodes, node_name);
    return n && n->node ? &n->info : NULL;
}

/* ---- pods on a node */

static void ptr_vec_remove(ls_vec *v, const ls_pod *pod)
{
    const ls_pod **items = v->data;
    for (uint32_t i = 0; i < v->len; i++) {
        if (items[i] != pod)
            continue;
        items[i] = items[v->len - 1];
        v->len--;
        return;
    }
}

static void ptr_vec_replace(ls_vec *v, const ls_pod *old_pod, const ls_pod *new_pod)
{
    const ls_pod **items = v->data;
    for (uint32_t i = 0; i < v->len; i++)
        if (items[i] == old_pod)
            items[i] = new_pod;
}

static void sync_views(ls_cnode *n)
{
    ls_node_info_point(&n->info, &n->lists);
}

static void add_ports(ls_cnode *n, const ls_pod *pod)
{
    for (uint32_t i = 0; i < pod->n_host_ports; i++)
        *(ls_host_port *)ls_vec_push(&n->lists.ports) = pod->host_ports[i];
}

static void remove_ports(ls_cnode *n, const ls_pod *pod)
{
    ls_host_port *ports = n->lists.ports.data;
    for (uint32_t k = 0; k < pod->n_host_ports; k++) {
        const ls_host_port *p = &pod->host_ports[k];
        for (uint32_t i = 0; i < n->lists.ports.len; i++) {
            if (ports[i].port == p->port && ports[i].protocol == p->protocol &&
                ports[i].host_ip == p->host_ip) {
                ports[i] = ports[n->lists.ports.len - 1];
                n->lists.ports.len--;
                break;
            }
        }
    }
}

static void account(ls_cnode *n, const ls_pod *pod, int sign)
{
    for (int r = 0; r < LS_MAX_RESOURCES; r++)
        n->info.requested.v[r] += sign * pod->requests.v[r];
    n->info.nonzero_milli_cpu += sign * pod->nonzero_milli_cpu;
    n->info.nonzero_memory += sign * pod->nonzero_memory;
}

static void node_add_pod(ls_cache *c, ls_cnode *n, const ls_pod *pod)
{
    *(const ls_pod **)ls_vec_push(&n->lists.pods) = pod;
    if (pod->has_affinity)
        *(const ls_pod **)ls_vec_push(&n->lists.with_affinity) = pod;
    if (pod->has_required_anti_affinity)
        *(const ls_pod **)ls_vec_push(&n->lists.with_anti_affinity) = pod;
    add_ports(n, pod);
    account(n, pod, +1);
    sync_views(n);
    touch(c, n);
}

static void node_remove_pod(ls_cache *c, ls_cnode *n, const ls_pod *pod)
{
    ptr_vec_remove(&n->lists.pods, pod);
    if (pod->has_affinity)
        ptr_vec_remove(&n->lists.with_affinity, pod);
    if (pod->has_required_anti_affinity)
        ptr_vec_remove(&n->lists.with_anti_affinity, pod);
    remove_ports(n, pod);
    account(n, pod, -1);
    sync_views(n);
    if (!n->node && n->lists.pods.len == 0)
        cnode_drop(c, n);
    else
        touch(c, n);
}

/* ---- pod lifecycle: assume, forget, confirm, update, remove */

static bool pod_key(const ls_pod *pod, ls_error *err)
{
    if (!pod->uid)
        return ls_errorf(err, "pod %s/%s has no uid", ls_str_get(pod->ns), ls_str_get(pod->name));
    return true;
}

bool ls_cache_assume_pod(ls_cache *c, const ls_pod *pod, ls_str node_name, ls_error *err)
{
    if (!pod_key(pod, err))
        return false;
    if (ls_map_get(&c->pods, pod->uid))
        return ls_errorf(err, "pod %s/%s is in the cache, so can't be assumed",
                         ls_str_get(pod->ns), ls_str_get(pod->name));
    ls_cnode *n = cnode_get_or_create(c, node_name);
    ls_pod_state *ps = ls_xcalloc(1, sizeof *ps);
    ps->pod = pod;
    ps->node = node_name;
    ps->assumed = true;
    ls_map_put(&c->pods, pod->uid, ps);
    node_add_pod(c, n, pod);
    c->num_assumed++;
    return true;
}

bool ls_cache_replace_assumed(ls_cache *c, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_pod_state *ps = ls_map_get(&c->pods, old_pod->uid);
    if (!ps || !ps->assumed || ps->pod == new_pod)
        return false;
    ls_cnode *n = ls_map_get(&c->nodes, ps->node);
    if (n)
        node_remove_pod(c, n, ps->pod);
    n = cnode_get_or_create(c, ps->node);
    node_add_pod(c, n, new_pod);
    ps->pod = new_pod;
    return true;
}

bool ls_cache_finish_binding(ls_cache *c, const ls_pod *pod)
{
    ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    if (!ps || !ps->assumed)
        return false;
    ps->binding_finished = true;
    return true;
}

bool ls_cache_forget_pod(ls_cache *c, const ls_pod *pod, ls_error *err)
{
    ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    if (!ps || !ps->assumed)
        return ls_errorf(err, "pod %s/%s wasn't assumed so cannot be forgotten",
                         ls_str_get(pod->ns), ls_str_get(pod->name));
    ls_cnode *n = ls_map_get(&c->nodes, ps->node);
    if (n)
        node_remove_pod(c, n, ps->pod);
    free(ls_map_remove(&c->pods, pod->uid));
    c->num_assumed--;
    return true;
}

bool ls_cache_add_pod(ls_cache *c, const ls_pod *pod, ls_error *err)
{
    if (!pod_key(pod, err))
        return false;
    if (!pod->node_name)
        return ls_errorf(err, "pod %s/%s is not assigned to a node",
                         ls_str_get(pod->ns), ls_str_get(pod->name));
    ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    if (ps && ps->assumed) {
        /* The binding was observed: the real object replaces the assumed one. */
        if (ps->node != pod->node_name) {
            ls_cnode *old = ls_map_get(&c->nodes, ps->node);
            if (old)
                node_remove_pod(c, old, ps->pod);
            node_add_pod(c, cnode_get_or_create(c, pod->node_name), pod);
        } else {
            ls_cnode *n = ls_map_get(&c->nodes, ps->node);
            ptr_vec_replace(&n->lists.pods, ps->pod, pod);
            ptr_vec_replace(&n->lists.with_affinity, ps->pod, pod);
            ptr_vec_replace(&n->lists.with_anti_affinity, ps->pod, pod);
            sync_views(n);
            touch(c, n);
        }
        ps->pod = pod;
        ps->node = pod->node_name;
        ps->assumed = false;
        c->num_assumed--;
        return true;
    }
    if (ps)
        return ls_errorf(err, "pod %s/%s was already in added state",
                         ls_str_get(pod->ns), ls_str_get(pod->name));
    ps = ls_xcalloc(1, sizeof *ps);
    ps->pod = pod;
    ps->node = pod->node_name;
    ls_map_put(&c->pods, pod->uid, ps);
    node_add_pod(c, cnode_get_or_create(c, pod->node_name), pod);
    return true;
}

bool ls_cache_update_pod(ls_cache *c, const ls_pod *old_pod, const ls_pod *new_pod, ls_error *err)
{
    ls_pod_state *ps = ls_map_get(&c->pods, old_pod->uid);
    if (!ps || ps->assumed)
        return ls_errorf(err, "pod %s/%s is not added to scheduler cache, so cannot be updated",
                         ls_str_get(old_pod->ns), ls_str_get(old_pod->name));
    if (new_pod->node_name != ps->node)
        return ls_errorf(err, "pod %s/%s moved from node %s to %s: the cache does not allow a node change",
                         ls_str_get(old_pod->ns), ls_str_get(old_pod->name), ls_str_get(ps->node),
                         ls_str_get(new_pod->node_name));
    ls_cnode *n = ls_map_get(&c->nodes, ps->node);
    node_remove_pod(c, n, ps->pod);
    n = cnode_get_or_create(c, ps->node);
    node_add_pod(c, n, new_pod);
    ps->pod = new_pod;
    return true;
}

bool ls_cache_remove_pod(ls_cache *c, const ls_pod *pod, ls_error *err)
{
    ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    if (!ps)
        return ls_errorf(err, "pod %s/%s is not found in scheduler cache, so cannot be removed from it",
                         ls_str_get(pod->ns), ls_str_get(pod->name));
    ls_cnode *n = ls_map_get(&c->nodes, ps->node);
    if (n)
        node_remove_pod(c, n, ps->pod);
    if (ps->assumed)
        c->num_assumed--;
    free(ls_map_remove(&c->pods, pod->uid));
    return true;
}

bool ls_cache_is_assumed(const ls_cache *c, const ls_pod *pod)
{
    const ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    return ps && ps->assumed;
}

ls_str ls_cache_pod_node(const ls_cache *c, const ls_pod *pod)
{
    const ls_pod_state *ps = ls_map_get(&c->pods, pod->uid);
    return ps ? ps->node : 0;
}

uint32_t ls_cache_pod_count(const ls_cache *c)
{
    return c->pods.len;
}

uint32_t ls_cache_assumed_count(const ls_cache *c)
{
    return c->num_assumed;
}
