/*
 * pod_resources.c: what a pod requests, as kube-scheduler v1.37 computes it
 * (k8s.io/component-helpers/resource PodRequests and the scheduler's
 * NodeInfo/resource-allocation callers), with every v1.37 default gate on:
 * PodLevelResources, InPlacePodVerticalScaling (GA) and
 * InPlacePodLevelResourcesVerticalScaling (beta).
 *
 * Containers: regular containers and sidecars (restartable init containers)
 * add up; each other init container needs its own requests plus the sidecars
 * declared before it, and the pod needs the larger of the two (KEP-753).
 *
 * In-place resize: three such aggregates are taken, of the spec's requests, of
 * what the kubelet allocated (a container's status.allocatedResources, else its
 * spec) and of what is actuated (status.resources.requests, else allocated,
 * else spec), and the pod counts the larger of the three per resource. While
 * the PodResizePending condition says Infeasible the spec is left out, and a
 * container without status counts nothing. When the pod reports pod-level
 * status.allocatedResources and status.resources.requests, those two stand for
 * the allocated and actuated aggregates.
 *
 * Pod-level resources: when spec.resources.requests names cpu, memory or a
 * hugepages size, each of those replaces the containers' aggregate (while the
 * pod also reports pod-level status: the larger of spec, status requests and
 * allocated, both less the overhead; the spec left out when Infeasible). Other
 * resources still come from the containers. The overhead is added last.
 *
 * Non-zero requests (LeastAllocated, MostAllocated, RequestedToCapacityRatio
 * and the node sums they read): a container that leaves cpu or memory unset
 * counts 100m / 200Mi. Two callers differ upstream and both are kept:
 * - NodeInfo (the node's non-zero sums): with pod-level requests set, the
 *   defaults apply only to a resource that neither the containers, the pod
 *   level nor the overhead names;
 * - the Fit scorers (the incoming pod's request): always per container, then
 *   the pod-level values replace them.
 */
#include "pod_resources.h"

#include <string.h>

enum { DEFAULT_MILLI_CPU = 100 };
#define DEFAULT_MEMORY (200LL * 1024 * 1024)
#define BIT(slot) (1u << (slot))

bool ls_pod_level_resource_supported(uint32_t slot)
{
    if (slot == LS_RES_CPU || slot == LS_RES_MEMORY)
        return true;
    const char *name = ls_resource_name(slot);
    return name && strncmp(name, "hugepages-", 10) == 0;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void list_add(ls_rlist *to, const ls_rlist *r)
{
    for (int i = 0; i < LS_MAX_RESOURCES; i++)
        if (r->set & BIT(i))
            to->v.v[i] = add_sat(to->v.v[i], r->v.v[i]);
    to->set |= r->set;
}

static void list_max(ls_rlist *to, const ls_rlist *r)
{
    for (int i = 0; i < LS_MAX_RESOURCES; i++)
        if ((r->set & BIT(i)) && (!(to->set & BIT(i)) || r->v.v[i] > to->v.v[i]))
            to->v.v[i] = r->v.v[i];
    to->set |= r->set;
}

/* Each source of a container's requests; a NULL list (nothing counted) is
 * returned as an empty one with *present false. */
enum { SRC_SPEC, SRC_ALLOCATED, SRC_ACTUATED };

static ls_rlist container_list(const ls_ctr_res *c, int src, bool infeasible)
{
    static const ls_rlist empty;
    if (src == SRC_ACTUATED && c->has_actual)
        return c->actual;
    if (src != SRC_SPEC && c->has_allocated)
        return c->allocated;
    if (src != SRC_SPEC && infeasible)
        return empty;
    return c->spec;
}

/* 100m / 200Mi for the resources in defaults_mask the list does not name. */
static void apply_defaults(ls_rlist *l, uint32_t defaults_mask)
{
    if ((defaults_mask & BIT(LS_RES_CPU)) && !(l->set & BIT(LS_RES_CPU)))
        l->v.v[LS_RES_CPU] = DEFAULT_MILLI_CPU;
    if ((defaults_mask & BIT(LS_RES_MEMORY)) && !(l->set & BIT(LS_RES_MEMORY)))
        l->v.v[LS_RES_MEMORY] = DEFAULT_MEMORY;
    l->set |= defaults_mask;
}

/* The containers' aggregate from one source (aggregateContainerResourcesByFn). */
static ls_rlist aggregate(const ls_pod_res_input *in, int src, uint32_t defaults_mask)
{
    ls_rlist result = {0}, sidecars = {0}, init_max = {0};
    for (uint32_t i = 0; i < in->n_ctrs; i++) {
        const ls_ctr_res *c = &in->ctrs[i];
        ls_rlist l = container_list(c, src, in->resize_infeasible);
        apply_defaults(&l, defaults_mask);
        if (c->kind == LS_CTR_REGULAR) {
            list_add(&result, &l);
        } else if (c->kind == LS_CTR_SIDECAR) {
            list_add(&result, &l);
            list_add(&sidecars, &l);
            list_max(&init_max, &sidecars);
        } else {
            list_add(&l, &sidecars);
            list_max(&init_max, &l);
        }
    }
    list_max(&result, &init_max);
    return result;
}

ls_rlist ls_pod_container_spec_requests(const ls_pod_res_input *in)
{
    return aggregate(in, SRC_SPEC, 0);
}

/* AggregateContainerRequests with status resources. */
static ls_rlist container_requests(const ls_pod_res_input *in, uint32_t defaults_mask)
{
    ls_rlist spec = aggregate(in, SRC_SPEC, defaults_mask), allocated, actuated;
    if (in->has_status_allocated && in->has_status_requests) {
        allocated = in->status_allocated;
        actuated = in->status_requests;
    } else {
        allocated = aggregate(in, SRC_ALLOCATED, defaults_mask);
        actuated = aggregate(in, SRC_ACTUATED, defaults_mask);
    }
    ls_rlist r = actuated;
    list_max(&r, &allocated);
    if (!in->resize_infeasible)
        list_max(&r, &spec);
    return r;
}

/* A pod-level status list less the overhead (names the list holds only). */
static ls_rlist less_overhead(const ls_rlist *l, const ls_rlist *overhead)
{
    ls_rlist r = *l;
    for (int i = 0; i < LS_MAX_RESOURCES; i++) {
        if (!(r.set & BIT(i)) || !(overhead->set & BIT(i)))
            continue;
        int64_t v = r.v.v[i] - overhead->v.v[i];
        r.v.v[i] = v > 0 ? v : 0;
    }
    return r;
}

/* The pod-level requests in effect: the spec's, or while the pod reports
 * pod-level status the larger of spec, status and allocated. */
static ls_rlist pod_level_requests(const ls_pod_res_input *in)
{
    if (!in->has_status_resources && !in->has_status_allocated)
        return in->pod_requests;
    ls_rlist r = {0};
    if (!in->resize_infeasible)
        r = in->pod_requests;
    if (in->has_status_requests) {
        ls_rlist s = less_overhead(&in->status_requests, &in->overhead);
        list_max(&r, &s);
    }
    if (in->has_status_allocated) {
        ls_rlist a = less_overhead(&in->status_allocated, &in->overhead);
        list_max(&r, &a);
    }
    return r;
}

/* PodRequests: containers, then pod-level values, then the overhead. */
static ls_rlist pod_requests(const ls_pod_res_input *in, uint32_t defaults_mask)
{
    ls_rlist r = container_requests(in, defaults_mask);
    if (in->pod_requests.set) {
        ls_rlist p = pod_level_requests(in);
        for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
            if ((p.set & BIT(i)) && ls_pod_level_resource_supported(i)) {
                r.v.v[i] = p.v.v[i];
                r.set |= BIT(i);
            }
        }
    }
    list_add(&r, &in->overhead);
    r.v.v[LS_RES_PODS] = 0;    /* a pod does not request pod slots */
    return r;
}

void ls_pod_resources_compute(const ls_pod_res_input *in, ls_pod_res_output *out)
{
    const uint32_t both = BIT(LS_RES_CPU) | BIT(LS_RES_MEMORY);
    ls_rlist req = pod_requests(in, 0);
    out->requests = req.v;

    /* NodeInfo: defaults for every container, or with pod-level requests only
     * for a resource that nothing names. */
    uint32_t mask = in->pod_requests.set ? both & ~req.set : both;
    ls_rlist nz = mask ? pod_requests(in, mask) : req;
    out->nonzero_milli_cpu = nz.v.v[LS_RES_CPU];
    out->nonzero_memory = nz.v.v[LS_RES_MEMORY];

    ls_rlist sc = pod_requests(in, both);
    out->scoring_milli_cpu = sc.v.v[LS_RES_CPU];
    out->scoring_memory = sc.v.v[LS_RES_MEMORY];
}
