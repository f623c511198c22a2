/*
 * test_pod_resources.c: the pod's requests as kube-scheduler v1.37 counts them
 * (core/src/model/pod_resources.c through the decoder): pod-level resources
 * with the API server's defaulting and validation, the two non-zero variants,
 * in-place resize status, and the other spec parts the v1.37 plugins read
 * (image volumes, NodeDeclaredFeatures inference, node declaredFeatures).
 * Every expected value is worked out by hand in the comment beside it.
 */
#include "luasched/model.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "test.h"
#include "test_json.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

/* A pod with the given spec body and status body ("" for none). */
static ls_pod_obj *decode(const char *spec, const char *status, ls_error *err)
{
    char text[8192];
    snprintf(text, sizeof text, "{'metadata':{'name':'web-1','namespace':'shop'},'spec':{%s},'status':{%s}}", spec,
             status);
    cJSON *j = json(text);
    ls_pod_obj *p = ls_pod_decode(j, NULL, err);
    cJSON_Delete(j);
    return p;
}

static ls_pod_obj *pod(const char *spec, const char *status)
{
    ls_error err = {{0}};
    ls_pod_obj *p = decode(spec, status, &err);
    if (!p)
        fprintf(stderr, "pod decode failed: %s\n", err.msg);
    return p;
}

#define SPEC_ERROR(spec, needle)                                                                                     \
    do {                                                                                                             \
        ls_error e_ = {{0}};                                                                                         \
        ls_pod_obj *p_ = decode(spec, "", &e_);                                                                      \
        CHECK(p_ == NULL);                                                                                           \
        CHECK_CONTAINS(e_.msg, needle);                                                                              \
        ls_pod_obj_free(p_);                                                                                         \
    } while (0)

/* requests cpu/memory, node non-zero cpu/memory, scoring cpu/memory */
static void check_pod(const ls_pod_obj *p, int64_t cpu, int64_t mem, int64_t nz_cpu, int64_t nz_mem, int64_t sc_cpu,
                      int64_t sc_mem, int line)
{
    ls_test_checks++;
    if (!p) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: pod not decoded\n", __FILE__, line);
        return;
    }
    const ls_pod *x = &p->pod;
    if (x->requests.milli_cpu != cpu || x->requests.memory != mem || x->nonzero_milli_cpu != nz_cpu ||
        x->nonzero_memory != nz_mem || x->scoring_milli_cpu != sc_cpu || x->scoring_memory != sc_mem) {
        ls_test_failures++;
        fprintf(stderr,
                "%s:%d: got requests %lld/%lld nonzero %lld/%lld scoring %lld/%lld, want %lld/%lld %lld/%lld "
                "%lld/%lld\n",
                __FILE__, line,
                 (long long)x->requests.milli_cpu, (long long)x->requests.memory, (long long)x->nonzero_milli_cpu,
                 (long long)x->nonzero_memory, (long long)x->scoring_milli_cpu, (long long)x->scoring_memory,
                 (long long)cpu, (long long)mem, (long long)nz_cpu, (long long)nz_mem, (long long)sc_cpu,
                 (long long)sc_mem);
    }
}
#define CHECK_POD(p, cpu, mem, nzc, nzm, scc, scm) check_pod(p, cpu, mem, nzc, nzm, scc, scm, __LINE__)

static void test_no_pod_level(void)
{
    /* containers {cpu 500m}, {}: requests 500m / 0; both non-zero variants default
     * the missing ones per container: cpu 500 + 100 = 600, memory 200Mi x 2 */
    ls_pod_obj *p = pod("'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'}}},{'name':'b'}]", "");
    CHECK_POD(p, 500, 0, 600, 400 * MI, 600, 400 * MI);
    ls_pod_obj_free(p);
}

static void test_pod_level_requests(void)
{
    /* pod level {cpu 2}: it replaces the containers' cpu (500m); memory stays the
     * containers' (1Gi). Node sums: pod-level requests set and both names present
     * (cpu at pod level, memory in a container) -> no defaults: 2000 / 1Gi.
     * Scoring: per-container defaults first (memory 1Gi + 200Mi), then pod-level cpu. */
    ls_pod_obj *p = pod("'resources':{'requests':{'cpu':'2'}},"
                        "'containers':[{'name':'a','resources':{'requests':{'cpu':'500m','memory':'1Gi'}}},"
                        "{'name':'b'}]",
                        "");
    CHECK_POD(p, 2000, GI, 2000, GI, 2000, GI + 200 * MI);
    ls_pod_obj_free(p);

    /* pod level {memory 1Gi}; containers {cpu 100m}, {}: cpu is named by a container,
     * so the node sums take no default (100m) while scoring adds one for b (200m) */
    p = pod("'resources':{'requests':{'memory':'1Gi'}},"
            "'containers':[{'name':'a','resources':{'requests':{'cpu':'100m'}}},{'name':'b'}]",
            "");
    CHECK_POD(p, 100, GI, 100, GI, 200, GI);
    ls_pod_obj_free(p);

    /* nothing names cpu: the node sums default it per container too (2 x 100m) */
    p = pod("'resources':{'requests':{'memory':'1Gi'}},'containers':[{'name':'a'},{'name':'b'}]", "");
    CHECK_POD(p, 0, GI, 200, GI, 200, GI);
    ls_pod_obj_free(p);

    /* overhead is added after the pod-level values: 1000 + 250 */
    p = pod("'resources':{'requests':{'cpu':'1','memory':'1Gi'}},'overhead':{'cpu':'250m'},"
            "'containers':[{'name':'a','resources':{'requests':{'cpu':'3'}}}]",
            "");
    CHECK_POD(p, 1250, GI, 1250, GI, 1250, GI);
    ls_pod_obj_free(p);

    /* other resources still come from the containers */
    p = pod("'resources':{'requests':{'cpu':'1'}},"
            "'containers':[{'name':'a','resources':{'requests':{'ephemeral-storage':'1Gi'}}}]",
            "");
    CHECK(p && p->pod.requests.ephemeral_storage == GI);
    ls_pod_obj_free(p);

    /* an empty spec.resources sets nothing: as without pod level */
    p = pod("'resources':{},'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'}}},{'name':'b'}]", "");
    CHECK_POD(p, 500, 0, 600, 400 * MI, 600, 400 * MI);
    ls_pod_obj_free(p);
}

static void test_pod_level_defaulting(void)
{
    /* limits {cpu 2, memory 1Gi}, no requests; containers ask cpu 500m: the pod-level
     * cpu request defaults to the containers' 500m, memory to its limit 1Gi */
    ls_pod_obj *p = pod("'resources':{'limits':{'cpu':'2','memory':'1Gi'}},"
                        "'containers':[{'name':'a','resources':{'requests':{'cpu':'500m'}}}]",
                        "");
    CHECK_POD(p, 500, GI, 500, GI, 500, GI);
    ls_pod_obj_free(p);
    /* an explicit request stays */
    p = pod("'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'2'}},'containers':[{'name':'a'}]", "");
    CHECK_POD(p, 1000, 0, 1000, 200 * MI, 1000, 200 * MI);
    ls_pod_obj_free(p);
}

static void test_pod_level_errors(void)
{
    SPEC_ERROR("'resources':{'requests':{'nvidia.com/gpu':'1'}},'containers':[{'name':'a'}]",
               "pod shop/web-1: spec.resources.requests.nvidia.com/gpu: unsupported pod-level resource (only cpu, "
               "memory and hugepages-<size> can be set)");
    SPEC_ERROR("'resources':{'limits':{'ephemeral-storage':'1Gi'}},'containers':[{'name':'a'}]",
               "spec.resources.limits.ephemeral-storage: unsupported pod-level resource");
    SPEC_ERROR("'resources':{'requests':{'cpu':'3'},'limits':{'cpu':'2'}},'containers':[{'name':'a'}]",
               "spec.resources.requests.cpu: must be less than or equal to the pod-level cpu limit");
    SPEC_ERROR("'resources':{'requests':{'memory':'-1'}},'containers':[{'name':'a'}]",
               "spec.resources.requests.memory: invalid quantity \"-1\": must not be negative");
    SPEC_ERROR("'resources':[],'containers':[{'name':'a'}]", "spec.resources: expected an object");
    /* hugepages are allowed at pod level */
    ls_pod_obj *p = pod("'resources':{'requests':{'hugepages-2Mi':'4Mi'},'limits':{'hugepages-2Mi':'4Mi'}},"
                        "'containers':[{'name':'a'}]",
                        "");
    CHECK(p && p->pod.requests.v[ls_resource_index("hugepages-2Mi")] == 4 * MI);
    ls_pod_obj_free(p);
}

static void test_resize(void)
{
    const char *spec3 = "'containers':[{'name':'c','resources':{'requests':{'cpu':'3','memory':'1Gi'}}}]";
    /* resize 1 -> 3 cpu pending (Deferred): max(spec 3000, allocated 1000, actual 1000) */
    ls_pod_obj *p = pod(spec3, "'conditions':[{'type':'PodResizePending','status':'True','reason':'Deferred'}],"
                               "'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'1','memory':'1Gi'},"
                               "'resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]");
    CHECK_POD(p, 3000, GI, 3000, GI, 3000, GI);
    ls_pod_obj_free(p);
    /* Infeasible: the spec is left out -> max(allocated, actual) = 1000 */
    p = pod(spec3, "'conditions':[{'type':'Ready','status':'True'},"
                   "{'type':'PodResizePending','status':'True','reason':'Infeasible'}],"
                   "'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'1','memory':'1Gi'},"
                   "'resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]");
    CHECK_POD(p, 1000, GI, 1000, GI, 1000, GI);
    ls_pod_obj_free(p);
    /* Infeasible and no status for the container: it counts nothing, and the
     * defaults stand in for the empty lists -> 0 requested, 100m / 200Mi non-zero */
    p = pod(spec3, "'conditions':[{'type':'PodResizePending','status':'True','reason':'Infeasible'}]");
    CHECK_POD(p, 0, 0, 100, 200 * MI, 100, 200 * MI);
    ls_pod_obj_free(p);
    /* a shrink in progress: spec and actual 1 cpu, allocated still 3500m -> 3500 */
    p = pod("'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]",
            "'containerStatuses':[{'name':'c','allocatedResources':{'cpu':'3500m'},"
            "'resources':{'requests':{'cpu':'1'}}}]");
    CHECK_POD(p, 3500, 0, 3500, 200 * MI, 3500, 200 * MI);
    ls_pod_obj_free(p);
    /* only actual requests reported (no allocatedResources): allocated falls back to the spec */
    p = pod("'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]",
            "'containerStatuses':[{'name':'c','resources':{'requests':{'cpu':'2'}}}]");
    CHECK(p && p->pod.requests.milli_cpu == 2000);
    ls_pod_obj_free(p);
    /* a status for a container name the spec does not have changes nothing */
    p = pod("'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]",
            "'containerStatuses':[{'name':'other','allocatedResources':{'cpu':'5'}}]");
    CHECK(p && p->pod.requests.milli_cpu == 1000);
    ls_pod_obj_free(p);
    /* a sidecar's status counts like a regular container's (initContainerStatuses) */
    p = pod("'initContainers':[{'name':'s','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}}],"
            "'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]",
            "'initContainerStatuses':[{'name':'s','allocatedResources':{'cpu':'2'}}]");
    CHECK(p && p->pod.requests.milli_cpu == 3000);
    ls_pod_obj_free(p);
}

static void test_resize_pod_level_status(void)
{
    /* pod-level status reported (both fields): it stands for the containers'
     * aggregates: max(spec 1000, actual 2000, allocated 1500) = 2000 */
    ls_pod_obj *p = pod("'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]",
                        "'resources':{'requests':{'cpu':'2'}},'allocatedResources':{'cpu':'1500m'}");
    CHECK(p && p->pod.requests.milli_cpu == 2000);
    ls_pod_obj_free(p);
    /* pod-level spec requests with pod-level status, overhead 500m in the status values:
     * max(spec 1000, 2500 - 500, 3000 - 500) = 2500, plus the overhead -> 3000 */
    p = pod("'resources':{'requests':{'cpu':'1'}},'overhead':{'cpu':'500m'},'containers':[{'name':'c'}]",
            "'resources':{'requests':{'cpu':'2500m'}},'allocatedResources':{'cpu':'3'}");
    CHECK(p && p->pod.requests.milli_cpu == 3000);
    ls_pod_obj_free(p);
    /* Infeasible: the pod-level spec is left out -> max(2000 - 0, 1500) = 2000 */
    p = pod("'resources':{'requests':{'cpu':'4'}},'containers':[{'name':'c'}]",
            "'conditions':[{'type':'PodResizePending','status':'True','reason':'Infeasible'}],"
            "'resources':{'requests':{'cpu':'2'}},'allocatedResources':{'cpu':'1500m'}");
    CHECK(p && p->pod.requests.milli_cpu == 2000);
    ls_pod_obj_free(p);
}

static void test_image_volumes(void)
{
    ls_pod_obj *p = pod("'containers':[{'name':'c','image':'app:1'}],"
                        "'volumes':[{'name':'cfg','configMap':{'name':'x'}},"
                        "{'name':'model','image':{'reference':'example.com/model','pullPolicy':'IfNotPresent'}}]",
                        "");
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(p->pod.n_images, 2);
        CHECK_STR(ls_str_get(p->pod.images[0]), "app:1");
        CHECK_STR(ls_str_get(p->pod.images[1]), "example.com/model:latest");
    }
    ls_pod_obj_free(p);
    SPEC_ERROR("'containers':[{'name':'c'}],'volumes':[{'name':'m','image':{'reference':1}}]",
               "spec.volumes[0].image.reference: expected a string");
}

static void test_declared_features(void)
{
    ls_pod_obj *p = pod("'containers':[{'name':'c'}]", "");
    CHECK(p && p->pod.n_required_features == 0);
    ls_pod_obj_free(p);
    p = pod("'hostNetwork':true,'hostUsers':false,'containers':[{'name':'c','restartPolicyRules':"
            "[{'action':'RestartAllContainers','exitCodes':{'operator':'In','values':[42]}}]}]",
            "");
    CHECK(p && p->pod.n_required_features == 2);
    if (p && p->pod.n_required_features == 2) {
        CHECK_STR(ls_str_get(p->pod.required_features[0]), "RestartAllContainersOnContainerExits");
        CHECK_STR(ls_str_get(p->pod.required_features[1]), "UserNamespacesHostNetworkSupport");
    }
    ls_pod_obj_free(p);
    /* host network alone, or hostUsers false alone, needs nothing */
    p = pod("'hostNetwork':true,'containers':[{'name':'c'}]", "");
    CHECK(p && p->pod.n_required_features == 0);
    ls_pod_obj_free(p);
    SPEC_ERROR("'containers':[{'name':'c','restartPolicyRules':{}}]",
               "spec.containers[0].restartPolicyRules: expected an array");

    cJSON *j = json("{'metadata':{'name':'n1'},'status':{'declaredFeatures':['A','B']}}");
    ls_error err = {{0}};
    ls_node_obj *n = ls_node_decode(j, NULL, &err);
    cJSON_Delete(j);
    CHECK(n && n->node.n_declared_features == 2);
    if (n && n->node.n_declared_features == 2)
        CHECK_STR(ls_str_get(n->node.declared_features[1]), "B");
    ls_node_obj_free(n);
}

int main(void)
{
    test_no_pod_level();
    test_pod_level_requests();
    test_pod_level_defaulting();
    test_pod_level_errors();
    test_resize();
    test_resize_pod_level_status();
    test_image_volumes();
    test_declared_features();
    TEST_MAIN_END();
}
