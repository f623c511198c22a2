/*
 * cache_internal.h: the cache's own structures, shared by cache.c and
 * snapshot.c (and node_info.c, for ls_node_info_point).
 */
#ifndef LS_CACHE_INTERNAL_H
#define LS_CACHE_INTERNAL_H

#include "luasched/cache.h"
#include "luasched/map.h"

/* The lists a NodeInfo points into: the cache's nodes, the snapshot's and
 * the changeable clones each own one. */
typedef struct ls_node_lists {
    ls_vec pods;                  /* const ls_pod * */
    ls_vec with_affinity;         /* the pods with affinity */
    ls_vec with_anti_affinity;    /* the pods with required anti-affinity */
    ls_vec ports;                 /* ls_host_port: the used host ports */
} ls_node_lists;
void ls_node_lists_init(ls_node_lists *l);
void ls_node_lists_free(ls_node_lists *l);
/* dst becomes a copy of src, reusing dst's vectors (zeroed ones will do). */
void ls_node_lists_copy(ls_node_lists *dst, const ls_node_lists *src);

typedef struct ls_cnode ls_cnode;
struct ls_cnode {
    ls_str name;
    ls_str zone;
    const ls_node *node;          /* NULL for a ghost: node deleted, pods not yet */
    ls_node_info info;            /* live view; arrays point into the vectors below */
    ls_node_lists lists;
    ls_cnode *prev, *next;        /* MRU list */
};

typedef struct ls_pod_state {
    const ls_pod *pod;
    ls_str node;
    bool assumed;
    bool binding_finished;
} ls_pod_state;

typedef struct ls_zone {
    ls_str key;
    ls_vec names;                 /* ls_str, insertion order */
} ls_zone;

typedef struct ls_image_summary {
    int64_t size;
    uint32_t num_nodes;
} ls_image_summary;

struct ls_cache {
    ls_map nodes;                 /* name -> ls_cnode */
    ls_map pods;                  /* uid -> ls_pod_state */
    ls_map images;                /* image name -> ls_image_summary */
    ls_cnode *head;               /* most recently changed */
    ls_vec zones;                 /* ls_zone, first-seen order */
    uint32_t num_tree_nodes, num_nodes, num_assumed;
    uint64_t tree_generation;     /* bumped when the node tree changes */
    uint64_t removed_generation;  /* bumped when a node leaves the cache */
};

uint64_t ls_cache_next_generation(void);
/* Points a NodeInfo's lists at the vectors that hold them, after those changed. */
void ls_node_info_point(ls_node_info *info, const ls_node_lists *l);
/* Fills out (capacity >= num_tree_nodes) with node names in zone round-robin order. */
uint32_t ls_cache_tree_list(const ls_cache *c, ls_str *out);
const ls_image_summary *ls_cache_image(const ls_cache *c, ls_str name);

#endif
