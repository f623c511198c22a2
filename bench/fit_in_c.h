/*
 * fit_in_c.h: NodeResourcesFit's Filter and its LeastAllocated Score (cpu and
 * memory, weight 1 each: the default args) written once more in C, for the
 * Lua-versus-C comparison of bench/lua_vs_c.c only. The scheduler never uses
 * this: plugins/node_resources_fit.lua is the plugin.
 *
 * It mirrors the Lua plugin step for step: PreFilter records the pod's
 * requests, Filter checks every resource and collects every failure (a
 * status registered once per failure combination), Filter's loop fills the
 * cycle's feasible list and node statuses as lua/luasched/loops.lua does,
 * and Score writes one score per feasible node.
 */
#ifndef LS_BENCH_FIT_IN_C_H
#define LS_BENCH_FIT_IN_C_H

#include "luasched/framework.h"

typedef struct fit_pod_state {
    bool nothing;                          /* the pod requests nothing */
    int64_t cpu, memory, ephemeral;
    uint32_t n_scalars;
    uint32_t slots[LS_MAX_RESOURCES];      /* extended resources the pod requests */
    int64_t reqs[LS_MAX_RESOURCES];
    int64_t score_cpu, score_memory;       /* non-zero requests (100m / 200Mi defaults) */
} fit_pod_state;

/* Failure bits: pods, cpu, memory, ephemeral-storage, then scalar slot s -> bit s. */
enum { FIT_PODS = 1, FIT_CPU = 2, FIT_MEMORY = 4, FIT_EPHEMERAL = 8 };

void fit_pre_filter(const ls_pod *pod, fit_pod_state *st);
/* 0 when the pod fits; else the failure bits, and *unresolvable when some
 * request alone exceeds the node's allocatable. */
uint32_t fit_filter(const fit_pod_state *st, const ls_node_info *ni, bool *unresolvable);
/* LeastAllocated over cpu and memory: 0..100. */
int64_t fit_score(const fit_pod_state *st, const ls_node_info *ni);

/* The cycle as the scheduler runs it with NodeResourcesFit alone: PreFilter
 * and the filter loop over cycle->candidates (from cycle->start, until
 * num_to_find are feasible); then, when more than one node is feasible, the
 * score loop over cycle->feasible into cycle->scores. */
void fit_run_filter(ls_cycle *cycle, fit_pod_state *st);
void fit_run_score(ls_cycle *cycle, const fit_pod_state *st);
/* Frees the status cache. */
void fit_reset(void);

#endif
