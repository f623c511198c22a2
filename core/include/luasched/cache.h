/*
 * cache.h: the scheduler cache (nodes, the pods on them, assumed pods) and the
 * per-cycle snapshot that plugins read. The cache is changed by cluster events
 * and by assume/forget; the snapshot is refreshed incrementally at the start of
 * each cycle from the nodes whose generation moved.
 */
#ifndef LUASCHED_CACHE_H
#define LUASCHED_CACHE_H

#include "luasched/model.h"

/* ffi:begin */
/* @view NodeInfo: a node with what is on it, as Filter, Score and the other
 * node hooks receive it (`node`, often called ni): ni.node is the Node object. */
typedef struct ls_node_info {
    const ls_node *node;                  /* the Node: ni.node.name, ni.node.labels, ni.node.taints, ... */
    uint32_t index;                       /* position in the snapshot's node list */
    ls_resources allocatable;             /* the node's allocatable resources */
    ls_resources requested;               /* the sum of the requests of the pods on the node (assumed ones included) */
    int64_t nonzero_milli_cpu;            /* requested cpu, 100m for each pod that sets none (scoring) */
    int64_t nonzero_memory;               /* requested memory, 200Mi for each pod that sets none (scoring) */
    uint32_t num_pods;                    /* how many pods are on the node */
    const ls_pod *const *pods;            /* the pods on the node: pods[0] .. pods[num_pods - 1] */
    uint32_t num_pods_with_affinity;      /* how many of them have pod (anti-)affinity */
    const ls_pod *const *pods_with_affinity;  /* those pods */
    uint32_t num_pods_with_required_anti_affinity;  /* how many have a required anti-affinity */
    const ls_pod *const *pods_with_required_anti_affinity;  /* those pods */
    uint32_t n_used_ports;                /* how many host ports are in use */
    const ls_host_port *used_ports;       /* the host ports the pods on the node use */
    uint64_t generation;                  /* changes whenever this NodeInfo does (unique process-wide) */
} ls_node_info;

typedef struct ls_snapshot ls_snapshot;

/* ImageLocality's view: size and number of nodes that have the image. */
bool ls_snapshot_image_state(const ls_snapshot *s, const ls_node_info *ni, ls_str image,
                             int64_t *size, uint32_t *num_nodes);
uint32_t ls_snapshot_num_nodes(const ls_snapshot *s);
const ls_node_info *ls_snapshot_node(const ls_snapshot *s, uint32_t i);
const ls_node_info *ls_snapshot_find(const ls_snapshot *s, ls_str node_name);
/* A private, changeable copy of a NodeInfo for what-if work (preemption's dry
 * runs, nominated pods): pods added or removed update the sums, ports and
 * affinity lists exactly as the cache does. Free with ls_node_info_free. */
ls_node_info *ls_node_info_clone(const ls_node_info *ni);
void ls_node_info_free(ls_node_info *ni);
void ls_node_info_add_pod(ls_node_info *ni, const ls_pod *pod);
bool ls_node_info_remove_pod(ls_node_info *ni, const ls_pod *pod);

typedef struct ls_cache ls_cache;

ls_cache *ls_cache_new(void);
void ls_cache_free(ls_cache *c);

/* Node objects are owned by the caller (the cluster source) and must outlive
 * their presence in the cache. */
void ls_cache_add_node(ls_cache *c, const ls_node *node);
void ls_cache_update_node(ls_cache *c, const ls_node *old_node, const ls_node *new_node);
void ls_cache_remove_node(ls_cache *c, const ls_node *node);

/* Pods: keyed by uid. The pod must have node_name set (or be given one). */
bool ls_cache_assume_pod(ls_cache *c, const ls_pod *pod, ls_str node_name, ls_error *err);
bool ls_cache_forget_pod(ls_cache *c, const ls_pod *pod, ls_error *err);
bool ls_cache_finish_binding(ls_cache *c, const ls_pod *pod);
/* An assumed pod's object was replaced before its binding showed up (a status
 * patch, say): the cache points at the new object, on the assumed node. */
bool ls_cache_replace_assumed(ls_cache *c, const ls_pod *old_pod, const ls_pod *new_pod);
bool ls_cache_add_pod(ls_cache *c, const ls_pod *pod, ls_error *err);      /* confirms an assumed pod */
bool ls_cache_update_pod(ls_cache *c, const ls_pod *old_pod, const ls_pod *new_pod, ls_error *err);
bool ls_cache_remove_pod(ls_cache *c, const ls_pod *pod, ls_error *err);
bool ls_cache_is_assumed(const ls_cache *c, const ls_pod *pod);
/* The process-wide generation last handed out: it moves whenever any cache's
 * NodeInfo, node tree or removed nodes (or a snapshot's list) change, so an
 * unchanged value means no cache changed (the what-if worker's warm
 * evaluator, cli/whatif_worker.c). */
uint64_t ls_cache_generation(void);
/* The node the cache has the pod on, 0 if the cache does not hold it. */
ls_str ls_cache_pod_node(const ls_cache *c, const ls_pod *pod);
uint32_t ls_cache_node_count(const ls_cache *c);
uint32_t ls_cache_pod_count(const ls_cache *c);
uint32_t ls_cache_assumed_count(const ls_cache *c);
/* The live (not snapshot) NodeInfo, for checks and tests. NULL if unknown. */
const ls_node_info *ls_cache_node_info(const ls_cache *c, ls_str node_name);

ls_snapshot *ls_snapshot_new(void);
void ls_snapshot_free(ls_snapshot *s);
/* Brings the snapshot up to date; returns how many NodeInfos were copied. */
uint32_t ls_cache_update_snapshot(ls_cache *c, ls_snapshot *s);
uint64_t ls_snapshot_generation(const ls_snapshot *s);
/* For results kept between cycles per node-list position. The list
 * generation changes (process-wide unique) whenever positions may have
 * changed (nodes added or removed). ls_snapshot_changed_since writes into
 * out[0..cap) the positions of the nodes whose NodeInfo generation is newer
 * than `since` (a value of ls_snapshot_generation), newest first, and returns
 * how many there are (more than cap: only the first cap were written). */
uint64_t ls_snapshot_list_generation(const ls_snapshot *s);
uint32_t ls_snapshot_changed_since(const ls_snapshot *s, uint64_t since, uint32_t *out, uint32_t cap);
const ls_node_info *const *ls_snapshot_list(const ls_snapshot *s);

/* ffi:end */

/* Zone key used for node-tree order: "region:\0zone" style, 0 when neither label. */
ls_str ls_node_zone_key(const ls_node *node);

#endif
