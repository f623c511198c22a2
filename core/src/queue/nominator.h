/*
 * nominator.h: upstream's PodNominator: which pods are nominated to which
 * node (after preemption made room there, or from status.nominatedNodeName),
 * so that Filter can count them as if they were already running.
 */
#ifndef LS_NOMINATOR_H
#define LS_NOMINATOR_H

#include "luasched/map.h"
#include "luasched/model.h"

typedef struct ls_nominator {
    ls_map by_pod;      /* pod id + 1 -> node name (as a pointer-sized int) */
    ls_map by_node;     /* node name -> ls_vec of const ls_pod * */
} ls_nominator;

void ls_nominator_init(ls_nominator *n);
void ls_nominator_free(ls_nominator *n);
/* Nominates pod to node, replacing an earlier nomination. */
void ls_nominator_add(ls_nominator *n, const ls_pod *pod, ls_str node);
void ls_nominator_delete(ls_nominator *n, const ls_pod *pod);
/* The pod object changed (same id): its status.nominatedNodeName decides when
 * either version has one, else a nomination made in memory follows the new
 * object (upstream UpdateNominatedPod). */
void ls_nominator_update(ls_nominator *n, const ls_pod *old_pod, const ls_pod *new_pod);
ls_str ls_nominator_node_of(const ls_nominator *n, const ls_pod *pod);
uint32_t ls_nominator_count(const ls_nominator *n, ls_str node);
const ls_pod *ls_nominator_at(const ls_nominator *n, ls_str node, uint32_t i);
uint32_t ls_nominator_total(const ls_nominator *n);

#endif
