/*
 * pod_resources.h: the pod's resource requests as kube-scheduler v1.37 counts
 * them, from what the decoder read (containers, pod-level resources, overhead
 * and the in-place resize status). Internal to the model: decode.c fills the
 * input, pod_resources.c does the arithmetic.
 */
#ifndef LUASCHED_POD_RESOURCES_H
#define LUASCHED_POD_RESOURCES_H

#include "luasched/model.h"

/* A ResourceList: values per slot and which names it holds (a name given as 0
 * is there; upstream's "exists" checks depend on it). */
typedef struct ls_rlist {
    ls_resources v;
    uint32_t set;      /* bit per slot */
} ls_rlist;

enum { LS_CTR_REGULAR = 0, LS_CTR_SIDECAR = 1, LS_CTR_INIT = 2 };

/* One container: its spec requests and, when the pod reports them, its status. */
typedef struct ls_ctr_res {
    ls_str name;
    uint8_t kind;              /* LS_CTR_* */
    ls_rlist spec;             /* resources.requests, limits copied in for unset requests */
    uint8_t has_status;        /* a container status names it */
    uint8_t has_allocated;     /* status allocatedResources present */
    uint8_t has_actual;        /* status resources.requests present */
    ls_rlist allocated, actual;
} ls_ctr_res;

typedef struct ls_pod_res_input {
    const ls_ctr_res *ctrs;    /* spec order: init containers first, then regular ones */
    uint32_t n_ctrs;
    ls_rlist overhead;
    ls_rlist pod_requests;     /* spec.resources.requests after defaulting (set == 0: none) */
    uint8_t has_status_resources;     /* status.resources present */
    uint8_t has_status_requests;      /* status.resources.requests present */
    uint8_t has_status_allocated;     /* status.allocatedResources present */
    ls_rlist status_requests, status_allocated;
    uint8_t resize_infeasible; /* the PodResizePending condition's reason is Infeasible */
} ls_pod_res_input;

typedef struct ls_pod_res_output {
    ls_resources requests;                  /* PodRequests */
    int64_t nonzero_milli_cpu, nonzero_memory;  /* NodeInfo's non-zero sums */
    int64_t scoring_milli_cpu, scoring_memory;  /* the Fit scorers' request of the pod */
} ls_pod_res_output;

/* cpu, memory and hugepages-*: the names allowed in spec.resources. */
bool ls_pod_level_resource_supported(uint32_t slot);
/* The containers' spec requests aggregated (no status, no pod level, no
 * overhead): the API server's default for pod-level requests. */
ls_rlist ls_pod_container_spec_requests(const ls_pod_res_input *in);
void ls_pod_resources_compute(const ls_pod_res_input *in, ls_pod_res_output *out);

#endif
