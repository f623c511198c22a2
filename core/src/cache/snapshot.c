/*
 * snapshot.c: the per-cycle snapshot of the cache. Refreshing walks the
 * cache's most-recently-changed list and copies only the NodeInfos whose
 * generation is newer than the snapshot's; the ordered node list (zone
 * round-robin) is rebuilt only when the node tree changed.
 *
 * The snapshot also keeps its nodes in generation order (newest first), so
 * that plugins keeping per-node results between cycles can ask which list
 * positions changed since a generation (ls_snapshot_changed_since) instead of
 * comparing every node's generation; list_generation changes whenever the
 * positions do.
 */
#include "cache/cache_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct snode snode;
struct snode {
    ls_node_info info;
    ls_node_lists lists;
    snode *newer, *older;           /* generation order */
};

struct ls_snapshot {
    uint64_t generation;
    uint64_t tree_generation;
    uint64_t list_generation;       /* process-wide generation of the last list rebuild */
    const ls_cache *cache;
    snode *newest;                  /* generation order: newest first */
    ls_map by_name;                 /* name -> snode */
    const ls_node_info **list;      /* node-tree order */
    uint32_t num_nodes, list_cap;
};

ls_snapshot *ls_snapshot_new(void)
{
    ls_snapshot *s = ls_xcalloc(1, sizeof *s);
    ls_map_init(&s->by_name);
    return s;
}

static void order_unlink(ls_snapshot *s, snode *n)
{
    if (n->newer)
        n->newer->older = n->older;
    else if (s->newest == n)
        s->newest = n->older;
    if (n->older)
        n->older->newer = n->newer;
    n->newer = n->older = NULL;
}

/* Puts n right after `after` (NULL: first). */
static void order_insert(ls_snapshot *s, snode *n, snode *after)
{
    n->newer = after;
    n->older = after ? after->older : s->newest;
    if (n->older)
        n->older->newer = n;
    if (after)
        after->older = n;
    else
        s->newest = n;
}

static void snode_free(void *node)
{
    snode *n = node;
    ls_node_lists_free(&n->lists);
    free(n);
}

void ls_snapshot_free(ls_snapshot *s)
{
    if (!s)
        return;
    ls_map_free_values(&s->by_name, snode_free);
    free(s->list);
    free(s);
}

static void snode_copy(snode *dst, const ls_cnode *src)
{
    uint32_t index = dst->info.index;
    ls_node_lists_copy(&dst->lists, &src->lists);
    dst->info = src->info;
    dst->info.index = index;
    ls_node_info_point(&dst->info, &dst->lists);
}

static void prune_removed(ls_cache *c, ls_snapshot *s)
{
    for (uint32_t i = 0; i < s->by_name.cap; i++) {
        uint32_t key = s->by_name.slots[i].key;
        if (!key)
            continue;
        const ls_cnode *n = ls_map_get(&c->nodes, key);
        if (!n || !n->node) {
            snode *sn = ls_map_remove(&s->by_name, key);
            order_unlink(s, sn);
            snode_free(sn);
            i--;   /* backward shift may have moved another entry into slot i */
        }
    }
}

static void rebuild_list(ls_cache *c, ls_snapshot *s)
{
    if (s->list_cap < c->num_tree_nodes) {
        s->list_cap = c->num_tree_nodes;
        s->list = ls_xrealloc(s->list, s->list_cap * sizeof *s->list);
    }
    s->list_generation = ls_cache_next_generation();
    ls_str *names = ls_xmalloc((c->num_tree_nodes + 1) * sizeof *names);
    uint32_t n = ls_cache_tree_list(c, names);
    s->num_nodes = 0;
    for (uint32_t i = 0; i < n; i++) {
        snode *sn = ls_map_get(&s->by_name, names[i]);
        if (!sn)
            continue;
        sn->info.index = s->num_nodes;
        s->list[s->num_nodes++] = &sn->info;
    }
    free(names);
}

uint32_t ls_cache_update_snapshot(ls_cache *c, ls_snapshot *s)
{
    uint32_t copied = 0;
    s->cache = c;
    bool removed = c->removed_generation > s->generation;
    snode *last = NULL;   /* the cache's list is newest first: keep that order */
    for (ls_cnode *n = c->head; n && n->info.generation > s->generation; n = n->next) {
        if (!n->node)
            continue;   /* ghosts are not scheduled onto */
        snode *sn = ls_map_get(&s->by_name, n->name);
        if (!sn) {
            sn = ls_xcalloc(1, sizeof *sn);
            ls_map_put(&s->by_name, n->name, sn);
        }
        snode_copy(sn, n);
        order_unlink(s, sn);
        order_insert(s, sn, last);
        last = sn;
        copied++;
    }
    if (removed)
        prune_removed(c, s);
    if (c->tree_generation > s->tree_generation || removed) {
        rebuild_list(c, s);
        s->tree_generation = c->tree_generation;
    }
    if (c->head && c->head->info.generation > s->generation)
        s->generation = c->head->info.generation;
    if (c->removed_generation > s->generation)
        s->generation = c->removed_generation;
    return copied;
}

uint64_t ls_snapshot_generation(const ls_snapshot *s)
{
    return s->generation;
}

uint64_t ls_snapshot_list_generation(const ls_snapshot *s)
{
    return s->list_generation;
}

uint32_t ls_snapshot_changed_since(const ls_snapshot *s, uint64_t since, uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (const snode *sn = s->newest; sn && sn->info.generation > since; sn = sn->older) {
        if (n < cap)
            out[n] = sn->info.index;
        n++;
    }
    return n;
}

uint32_t ls_snapshot_num_nodes(const ls_snapshot *s)
{
    return s->num_nodes;
}

const ls_node_info *const *ls_snapshot_list(const ls_snapshot *s)
{
    return s->list;
}

const ls_node_info *ls_snapshot_node(const ls_snapshot *s, uint32_t i)
{
    return i < s->num_nodes ? s->list[i] : NULL;
}

const ls_node_info *ls_snapshot_find(const ls_snapshot *s, ls_str node_name)
{
    const snode *sn = ls_map_get(&s->by_name, node_name);
    return sn ? &sn->info : NULL;
}

bool ls_snapshot_image_state(const ls_snapshot *s, const ls_node_info *ni, ls_str image,
                             int64_t *size, uint32_t *num_nodes)
{
    const ls_node *node = ni->node;
    for (uint32_t i = 0; i < node->n_images; i++) {
        const ls_node_image *img = &node->images[i];
        for (uint32_t k = 0; k < img->n_names; k++) {
            if (img->names[k] != image)
                continue;
            const ls_image_summary *sum = s->cache ? ls_cache_image(s->cache, image) : NULL;
            *size = sum ? sum->size : img->size;
            *num_nodes = sum ? sum->num_nodes : 1;
            return true;
        }
    }
    return false;
}
