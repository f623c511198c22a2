/*
 * test_decode.c: v1 Pod / v1 Node decoding (core/src/model/decode.c) and the
 * resource registry (resources.c): request arithmetic worked out by hand,
 * defaults, merged selectors, images, node resources, and error messages.
 */
#include "luasched/model.h"
#include "model/doc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "test.h"
#include "test_json.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static ls_pod_obj *pod_ctx(const char *text, const ls_decode_ctx *ctx, ls_error *err)
{
    cJSON *j = json(text);
    ls_pod_obj *p = ls_pod_decode(j, ctx, err);
    cJSON_Delete(j);
    return p;
}

static ls_pod_obj *pod(const char *text)
{
    ls_error err = {{0}};
    ls_pod_obj *p = pod_ctx(text, NULL, &err);
    if (!p)
        fprintf(stderr, "pod decode failed: %s\n", err.msg);
    return p;
}

static ls_node_obj *node_ctx(const char *text, const ls_decode_ctx *ctx, ls_error *err)
{
    cJSON *j = json(text);
    ls_node_obj *n = ls_node_decode(j, ctx, err);
    cJSON_Delete(j);
    return n;
}

static ls_node_obj *node(const char *text)
{
    ls_error err = {{0}};
    ls_node_obj *n = node_ctx(text, NULL, &err);
    if (!n)
        fprintf(stderr, "node decode failed: %s\n", err.msg);
    return n;
}

/* A pod named web-1 with the given spec body. */
static ls_pod_obj *pod_spec(const char *spec)
{
    char text[8192];
    snprintf(text, sizeof text, "{'metadata':{'name':'web-1'},'spec':{%s}}", spec);
    return pod(text);
}

#define POD_ERROR(text, needle)                                             \
    do {                                                                    \
        ls_error e_ = {{0}};                                                \
        ls_pod_obj *p_ = pod_ctx(text, NULL, &e_);                          \
        CHECK(p_ == NULL);                                                  \
        CHECK_CONTAINS(e_.msg, needle);                                     \
        ls_pod_obj_free(p_);                                                \
    } while (0)

#define SPEC_ERROR(spec, needle)                                            \
    do {                                                                    \
        char t_[8192];                                                      \
        snprintf(t_, sizeof t_, "{'metadata':{'name':'web-1'},'spec':{%s}}", spec); \
        POD_ERROR(t_, needle);                                              \
    } while (0)

#define NODE_ERROR(text, needle)                                            \
    do {                                                                    \
        ls_error e_ = {{0}};                                                \
        ls_node_obj *n_ = node_ctx(text, NULL, &e_);                        \
        CHECK(n_ == NULL);                                                  \
        CHECK_CONTAINS(e_.msg, needle);                                     \
        ls_node_obj_free(n_);                                               \
    } while (0)

/* ---- resource registry ----------------------------------------------------- */

static void test_registry_fixed_slots(void)
{
    CHECK_STR(ls_resource_name(LS_RES_CPU), "cpu");
    CHECK_STR(ls_resource_name(LS_RES_MEMORY), "memory");
    CHECK_STR(ls_resource_name(LS_RES_EPHEMERAL), "ephemeral-storage");
    CHECK_STR(ls_resource_name(LS_RES_PODS), "pods");
    CHECK_INT(ls_resource_count(), LS_RES_FIRST_SCALAR);
    CHECK_INT(ls_resource_index("memory"), LS_RES_MEMORY);
    CHECK_INT(ls_resource_index("example.com/foo"), -1);
    CHECK_INT(ls_resource_index(NULL), -1);
    CHECK(ls_resource_name(LS_RES_FIRST_SCALAR) == NULL);
    ls_error err = {{0}};
    CHECK_INT(ls_resource_intern("pods", &err), LS_RES_PODS);
    CHECK_INT(ls_resource_intern("", &err), -1);
    CHECK_CONTAINS(err.msg, "empty resource name");
}

/* ---- pod requests ------------------------------------------------------------- */

static void test_requests_containers(void)
{
    ls_pod_obj *p = pod_spec("'containers':[{'name':'a','resources':{'requests':{'cpu':'500m','memory':'1Gi'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 500);
    CHECK_INT(p->pod.requests.memory, GI);
    CHECK_INT(p->pod.nonzero_milli_cpu, 500);
    CHECK_INT(p->pod.nonzero_memory, GI);
    CHECK_INT(p->pod.requests_nothing, 0);
    ls_pod_obj_free(p);

    /* a: cpu only, b: memory only. Non-zero fills each one's missing half. */
    p = pod_spec("'containers':[{'name':'a','resources':{'requests':{'cpu':'100m'}}},"
                 "{'name':'b','resources':{'requests':{'memory':'256Mi'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 100);
    CHECK_INT(p->pod.requests.memory, 256 * MI);
    CHECK_INT(p->pod.nonzero_milli_cpu, 100 + 100);
    CHECK_INT(p->pod.nonzero_memory, 200 * MI + 256 * MI);
    ls_pod_obj_free(p);

    /* JSON numbers as quantities: 0.1 cpu is 100m, not rounded up to 101m. */
    p = pod_spec("'containers':[{'resources':{'requests':{'cpu':0.1,'memory':1000,'ephemeral-storage':'1e3'}}},"
                 "{'resources':{'requests':{'cpu':2}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 2100);
    CHECK_INT(p->pod.requests.memory, 1000);
    CHECK_INT(p->pod.requests.ephemeral_storage, 1000);
    CHECK_INT(p->pod.nonzero_memory, 1000 + 200 * MI);
    ls_pod_obj_free(p);
}

static void test_requests_init_containers(void)
{
    /* Ordinary init containers run alone: the pod needs the largest of them. */
    ls_pod_obj *p = pod_spec("'initContainers':[{'resources':{'requests':{'cpu':'1','memory':'100Mi'}}},"
                             "{'resources':{'requests':{'cpu':'500m','memory':'1Gi'}}}],"
                             "'containers':[{'resources':{'requests':{'cpu':'200m','memory':'300Mi'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 1000);   /* max(200, 1000, 500) */
    CHECK_INT(p->pod.requests.memory, GI);        /* max(300Mi, 100Mi, 1Gi) */
    ls_pod_obj_free(p);

    /* Regular containers win when they add up to more. */
    p = pod_spec("'initContainers':[{'resources':{'requests':{'cpu':'300m'}}}],"
                 "'containers':[{'resources':{'requests':{'cpu':'200m'}}},{'resources':{'requests':{'cpu':'200m'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 400);
    /* Non-zero: the init container's memory is 200Mi, as is each regular one's. */
    CHECK_INT(p->pod.nonzero_memory, 400 * MI);
    ls_pod_obj_free(p);
}

static void test_requests_sidecars(void)
{
    /*
     * S1 (sidecar 100m), I1 (init 1000m), S2 (sidecar 300m), I2 (init 800m), C (200m):
     *   running: C + S1 + S2 = 600
     *   I1 runs beside S1: 1000 + 100 = 1100; I2 beside S1, S2: 800 + 400 = 1200
     *   max = 1200, plus overhead 50m = 1250.
     * No container sets memory, so exact memory is just the 1Mi overhead; the
     * non-zero memory counts 200Mi each: running 3 x 200 = 600Mi; I1 200 + 200;
     * I2 200 + 400 = 600Mi; max 600Mi + 1Mi overhead.
     */
    ls_pod_obj *p = pod_spec(
        "'initContainers':["
        "{'name':'s1','restartPolicy':'Always','resources':{'requests':{'cpu':'100m'}}},"
        "{'name':'i1','resources':{'requests':{'cpu':'1'}}},"
        "{'name':'s2','restartPolicy':'Always','resources':{'requests':{'cpu':'300m'}}},"
        "{'name':'i2','resources':{'requests':{'cpu':'800m'}}}],"
        "'containers':[{'name':'c','resources':{'requests':{'cpu':'200m'}}}],"
        "'overhead':{'cpu':'50m','memory':'1Mi'}");
    CHECK_INT(p->pod.requests.milli_cpu, 1250);
    CHECK_INT(p->pod.requests.memory, MI);
    CHECK_INT(p->pod.nonzero_milli_cpu, 1250);
    CHECK_INT(p->pod.nonzero_memory, 600 * MI + MI);
    ls_pod_obj_free(p);

    /* A sidecar declared after an init container does not run beside it. */
    p = pod_spec("'initContainers':["
                 "{'name':'i1','resources':{'requests':{'cpu':'1'}}},"
                 "{'name':'s1','restartPolicy':'Always','resources':{'requests':{'cpu':'500m'}}}],"
                 "'containers':[{'name':'c','resources':{'requests':{'cpu':'100m'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 1000);   /* max(100 + 500, 1000) */
    ls_pod_obj_free(p);

    /* Sidecars alone add to the running sum. */
    p = pod_spec("'initContainers':[{'restartPolicy':'Always','resources':{'requests':{'cpu':'250m','memory':'1Gi'}}}],"
                 "'containers':[{'resources':{'requests':{'cpu':'250m','memory':'1Gi'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 500);
    CHECK_INT(p->pod.requests.memory, 2 * GI);
    ls_pod_obj_free(p);
}

static void test_requests_limits_and_zeros(void)
{
    /* Limits stand in for missing requests (API defaulting), and count as set. */
    ls_pod_obj *p = pod_spec("'containers':[{'resources':{'limits':{'cpu':'1','memory':'1Gi'},"
                             "'requests':{'memory':'512Mi'}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 1000);
    CHECK_INT(p->pod.requests.memory, 512 * MI);
    CHECK_INT(p->pod.nonzero_milli_cpu, 1000);
    CHECK_INT(p->pod.nonzero_memory, 512 * MI);
    ls_pod_obj_free(p);

    /* Explicit zeros stay zero, also in the non-zero variant. */
    p = pod_spec("'containers':[{'resources':{'requests':{'cpu':'0','memory':0}}}]");
    CHECK_INT(p->pod.requests.milli_cpu, 0);
    CHECK_INT(p->pod.nonzero_milli_cpu, 0);
    CHECK_INT(p->pod.nonzero_memory, 0);
    CHECK_INT(p->pod.requests_nothing, 1);
    ls_pod_obj_free(p);

    /* Nothing specified: best effort, with the scheduler's defaults. */
    p = pod_spec("'containers':[{'name':'a'},{'name':'b','resources':{}}]");
    CHECK_INT(p->pod.requests_nothing, 1);
    CHECK_INT(p->pod.nonzero_milli_cpu, 200);
    CHECK_INT(p->pod.nonzero_memory, 400 * MI);
    ls_pod_obj_free(p);

    /* No containers at all. */
    p = pod_spec("");
    CHECK_INT(p->pod.requests_nothing, 1);
    CHECK_INT(p->pod.nonzero_milli_cpu, 0);
    ls_pod_obj_free(p);

    /* Overhead alone makes a pod request something. */
    p = pod_spec("'overhead':{'cpu':'10m'}");
    CHECK_INT(p->pod.requests_nothing, 0);
    CHECK_INT(p->pod.requests.milli_cpu, 10);
    ls_pod_obj_free(p);
}

static void test_requests_extended(void)
{
    ls_pod_obj *p = pod_spec("'containers':[{'resources':{'limits':{'example.com/gpu':2},"
                             "'requests':{'pods':'5','hugepages-2Mi':'4Mi'}}}]");
    int32_t gpu = ls_resource_index("example.com/gpu"), huge = ls_resource_index("hugepages-2Mi");
    CHECK(gpu >= LS_RES_FIRST_SCALAR);
    CHECK(huge >= LS_RES_FIRST_SCALAR && huge != gpu);
    CHECK_STR(ls_resource_name((uint32_t)gpu), "example.com/gpu");
    if (gpu >= 0 && huge >= 0) {
        CHECK_INT(p->pod.requests.v[gpu], 2);
        CHECK_INT(p->pod.requests.v[huge], 4 * MI);
    }
    CHECK_INT(p->pod.requests.pods, 0);   /* the pods slot is node-side only */
    CHECK_INT(p->pod.requests_nothing, 0);
    ls_pod_obj_free(p);

    /* Same name, same slot, in any later object. */
    ls_node_obj *n = node("{'metadata':{'name':'n'},'status':{'allocatable':{'example.com/gpu':'8'}}}");
    CHECK(gpu >= 0 && n->node.allocatable.v[gpu] == 8);
    CHECK_INT(ls_resource_intern("example.com/gpu", NULL), gpu);
    ls_node_obj_free(n);
}

static void test_host_ports(void)
{
    ls_pod_obj *p = pod_spec(
        "'initContainers':["
        "{'name':'init','ports':[{'containerPort':1,'hostPort':1111}]},"
        "{'name':'side','restartPolicy':'Always','ports':[{'containerPort':9000,'hostPort':9000,'protocol':'UDP'}]}],"
        "'containers':[{'name':'c','ports':["
        "{'containerPort':80,'hostPort':8080},"
        "{'containerPort':81},"
        "{'containerPort':82,'hostPort':0},"
        "{'containerPort':53,'hostPort':53,'hostIP':'10.0.0.1','protocol':'SCTP'}]}]");
    CHECK_INT(p->pod.n_host_ports, 3);
    const ls_host_port *hp = p->pod.host_ports;
    CHECK_INT(hp[0].port, 9000);
    CHECK_INT(hp[0].protocol, LS_PROTO_UDP);
    CHECK_STR(ls_str_get(hp[0].host_ip), "0.0.0.0");
    CHECK_INT(hp[1].port, 8080);
    CHECK_INT(hp[1].protocol, LS_PROTO_TCP);
    CHECK_STR(ls_str_get(hp[1].host_ip), "0.0.0.0");
    CHECK_INT(hp[2].port, 53);
    CHECK_INT(hp[2].protocol, LS_PROTO_SCTP);
    CHECK_STR(ls_str_get(hp[2].host_ip), "10.0.0.1");
    ls_pod_obj_free(p);

    SPEC_ERROR("'containers':[{'ports':[{'hostPort':80,'protocol':'tcp'}]}]",
               "spec.containers[0].ports[0].protocol: unknown value \"tcp\" (expected TCP, UDP or SCTP)");
    SPEC_ERROR("'containers':[{'ports':[{'hostPort':'80'}]}]", "spec.containers[0].ports[0].hostPort: expected an integer");
}

/* ---- images ------------------------------------------------------------------- */

static void test_image_normalize(void)
{
    CHECK_STR(ls_str_get(ls_image_normalize("nginx")), "nginx:latest");
    CHECK_STR(ls_str_get(ls_image_normalize("nginx:1.25")), "nginx:1.25");
    CHECK_STR(ls_str_get(ls_image_normalize("library/nginx")), "library/nginx:latest");
    CHECK_STR(ls_str_get(ls_image_normalize("registry:5000/app")), "registry:5000/app:latest");
    CHECK_STR(ls_str_get(ls_image_normalize("registry:5000/app:v2")), "registry:5000/app:v2");
    CHECK_STR(ls_str_get(ls_image_normalize("repo/app@sha256:0123abcd")), "repo/app@sha256:0123abcd");
    CHECK_STR(ls_str_get(ls_image_normalize("app:v1@sha256:0123abcd")), "app:v1@sha256:0123abcd");
    CHECK_STR(ls_str_get(ls_image_normalize("")), ":latest");
    CHECK_INT(ls_image_normalize("busybox"), ls_intern_cstr("busybox:latest"));

    ls_pod_obj *p = pod_spec("'containers':[{'image':'app'},{'image':'side:v1'}],"
                             "'initContainers':[{'image':'setup'}]");
    CHECK_INT(p->pod.n_images, 3);
    CHECK_STR(ls_str_get(p->pod.images[0]), "setup:latest");   /* init containers first */
    CHECK_STR(ls_str_get(p->pod.images[1]), "app:latest");
    CHECK_STR(ls_str_get(p->pod.images[2]), "side:v1");
    ls_pod_obj_free(p);
}

/* ---- metadata, spec scalars, status --------------------------------------------- */

static void test_pod_metadata_and_defaults(void)
{
    ls_pod_obj *p = pod("{'metadata':{'name':'web-1'}}");
    CHECK_STR(ls_str_get(p->pod.name), "web-1");
    CHECK_STR(ls_str_get(p->pod.ns), "default");
    CHECK_STR(ls_str_get(p->pod.uid), "default/web-1");   /* synthesised */
    CHECK_STR(ls_str_get(p->pod.scheduler_name), "default-scheduler");
    CHECK_INT(p->pod.has_priority, 0);
    CHECK_INT(p->pod.priority, 0);
    CHECK_INT(p->pod.preemption_policy, LS_PREEMPT_LOWER_PRIORITY);
    CHECK_INT(p->pod.phase, LS_PHASE_PENDING);
    CHECK_INT(p->pod.creation_ns, 0);
    CHECK_INT(p->pod.node_name, 0);
    CHECK_INT(p->pod.labels.n, 0);
    CHECK_INT(p->pod.has_affinity, 0);
    ls_pod_obj_free(p);

    p = pod("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'db','namespace':'prod','uid':'u-123',"
            "'labels':{'app':'db'},'creationTimestamp':'2024-01-02T03:04:05Z',"
            "'deletionTimestamp':'2024-01-02T03:04:06.5Z',"
            "'ownerReferences':[{'apiVersion':'apps/v1','kind':'ReplicaSet','name':'db-rs','uid':'rs-1','controller':true},"
            "{'kind':'Other','name':'o'}]},"
            "'spec':{'nodeName':'n1','schedulerName':'mine','priority':-5,'priorityClassName':'low',"
            "'preemptionPolicy':'Never','schedulingGates':[{'name':'g1'},{'name':'g2'}]},"
            "'status':{'phase':'Running','nominatedNodeName':'n2','startTime':'1970-01-01T00:00:10Z'}}");
    CHECK_STR(ls_str_get(p->pod.ns), "prod");
    CHECK_STR(ls_str_get(p->pod.uid), "u-123");
    CHECK_STR(ls_str_get(ls_labels_get(&p->pod.labels, ls_intern_cstr("app"))), "db");
    CHECK_INT(p->pod.creation_ns, 1704164645LL * 1000000000LL);
    CHECK_INT(p->pod.deletion_ns, 1704164646LL * 1000000000LL + 500000000LL);
    CHECK_INT(p->pod.n_owner_refs, 2);
    CHECK_STR(ls_str_get(p->pod.owner_refs[0].kind), "ReplicaSet");
    CHECK_STR(ls_str_get(p->pod.owner_refs[0].name), "db-rs");
    CHECK_STR(ls_str_get(p->pod.owner_refs[0].uid), "rs-1");
    CHECK_INT(p->pod.owner_refs[0].controller, 1);
    CHECK_INT(p->pod.owner_refs[1].controller, 0);
    CHECK_STR(ls_str_get(p->pod.node_name), "n1");
    CHECK_STR(ls_str_get(p->pod.scheduler_name), "mine");
    CHECK_INT(p->pod.has_priority, 1);
    CHECK_INT(p->pod.priority, -5);
    CHECK_STR(ls_str_get(p->pod.priority_class_name), "low");
    CHECK_INT(p->pod.preemption_policy, LS_PREEMPT_NEVER);
    CHECK_INT(p->pod.n_scheduling_gates, 2);
    CHECK_STR(ls_str_get(p->pod.scheduling_gates[1]), "g2");
    CHECK_INT(p->pod.phase, LS_PHASE_RUNNING);
    CHECK_STR(ls_str_get(p->pod.nominated_node_name), "n2");
    CHECK_INT(p->pod.start_ns, 10LL * 1000000000LL);
    ls_pod_obj_free(p);

    /* JSON null reads as absent. */
    p = pod("{'metadata':{'name':'x','namespace':null,'labels':null},'spec':{'priority':null,'containers':null}}");
    CHECK_STR(ls_str_get(p->pod.ns), "default");
    CHECK_INT(p->pod.has_priority, 0);
    ls_pod_obj_free(p);
}

/* ---- pod affinity and spread ------------------------------------------------- */

static ls_node_obj *labelled(const char *labels)
{
    char text[1024];
    snprintf(text, sizeof text, "{'metadata':{'name':'x','labels':{%s}}}", labels);
    return node(text);
}

static bool selects(const ls_selector *sel, const char *labels)
{
    ls_node_obj *n = labelled(labels);
    bool m = n && ls_selector_matches(sel, &n->node.labels);
    ls_node_obj_free(n);
    return m;
}

static void test_pod_affinity_terms(void)
{
    ls_pod_obj *p = pod(
        "{'metadata':{'name':'web','namespace':'shop','labels':{'app':'web','ver':'v1'}},'spec':{'affinity':{"
        "'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{"
        "  'labelSelector':{'matchLabels':{'tier':'fe'}},'topologyKey':'zone',"
        "  'matchLabelKeys':['app','missing'],'mismatchLabelKeys':['ver']}],"
        " 'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':5,'podAffinityTerm':{"
        "  'labelSelector':{},'namespaceSelector':{},'topologyKey':'host'}}]},"
        "'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':100,'podAffinityTerm':{"
        "  'namespaces':['a','b'],'namespaceSelector':{'matchLabels':{'team':'x'}},'topologyKey':'host',"
        "  'matchLabelKeys':['app']}}]}}}}");
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_INT(p->pod.has_affinity, 1);
    CHECK_INT(p->pod.has_required_anti_affinity, 0);
    CHECK_INT(p->pod.n_affinity, 1);
    CHECK_INT(p->pod.n_preferred_affinity, 1);
    CHECK_INT(p->pod.n_anti_affinity, 0);
    CHECK_INT(p->pod.n_preferred_anti_affinity, 1);

    /* tier In (fe) AND app In (web) AND ver NotIn (v1); "missing" is not on the pod. */
    const ls_pod_affinity_term *t = &p->pod.affinity[0];
    CHECK_INT(t->selector.n, 3);
    CHECK(selects(&t->selector, "'tier':'fe','app':'web','ver':'v2'"));
    CHECK(selects(&t->selector, "'tier':'fe','app':'web'"));
    CHECK(!selects(&t->selector, "'tier':'fe','app':'web','ver':'v1'"));
    CHECK(!selects(&t->selector, "'tier':'fe','app':'db'"));
    CHECK(!selects(&t->selector, "'app':'web'"));
    CHECK_STR(ls_str_get(t->topology_key), "zone");
    CHECK_INT(t->has_ns_selector, 0);
    CHECK_INT(t->n_namespaces, 1);   /* the pod's own namespace */
    CHECK_STR(ls_str_get(t->namespaces[0]), "shop");

    const ls_weighted_pod_affinity_term *w = &p->pod.preferred_affinity[0];
    CHECK_INT(w->weight, 5);
    CHECK_INT(w->term.has_ns_selector, 1);   /* {} selects all namespaces */
    CHECK_INT(w->term.n_namespaces, 0);
    CHECK(selects(&w->term.ns_selector, "'any':'ns'"));
    CHECK(selects(&w->term.selector, ""));

    w = &p->pod.preferred_anti_affinity[0];
    CHECK_INT(w->weight, 100);
    CHECK_INT(w->term.n_namespaces, 2);
    CHECK_INT(w->term.has_ns_selector, 1);
    CHECK(selects(&w->term.ns_selector, "'team':'x'"));
    /* A null labelSelector stays null: matchLabelKeys cannot make it match. */
    CHECK_INT(w->term.selector.match_nothing, 1);
    CHECK(!selects(&w->term.selector, "'app':'web'"));
    ls_pod_obj_free(p);

    p = pod("{'metadata':{'name':'p'},'spec':{'affinity':{'podAntiAffinity':{"
            "'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':{},'topologyKey':'host'}]}}}}");
    CHECK_INT(p->pod.has_affinity, 1);
    CHECK_INT(p->pod.has_required_anti_affinity, 1);
    CHECK_INT(p->pod.n_anti_affinity, 1);
    ls_pod_obj_free(p);

    /* Node affinity alone is not pod affinity. */
    p = pod("{'metadata':{'name':'p'},'spec':{'affinity':{'nodeAffinity':{}}}}");
    CHECK_INT(p->pod.has_affinity, 0);
    CHECK_INT(p->pod.has_required_node_affinity, 0);
    ls_pod_obj_free(p);
}

static void test_spread_constraints(void)
{
    ls_pod_obj *p = pod(
        "{'metadata':{'name':'p','labels':{'app':'web','rev':'r7'}},'spec':{'topologySpreadConstraints':["
        "{'maxSkew':1,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule',"
        " 'labelSelector':{'matchLabels':{'app':'web'}},'matchLabelKeys':['rev','nope']},"
        "{'maxSkew':3,'topologyKey':'host','whenUnsatisfiable':'ScheduleAnyway','minDomains':2,"
        " 'nodeAffinityPolicy':'Ignore','nodeTaintsPolicy':'Honor'}]}}");
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_INT(p->pod.n_spread_constraints, 2);
    const ls_spread_constraint *c = p->pod.spread_constraints;
    CHECK_INT(c[0].max_skew, 1);
    CHECK_STR(ls_str_get(c[0].topology_key), "zone");
    CHECK_INT(c[0].when_unsatisfiable, LS_DO_NOT_SCHEDULE);
    CHECK_INT(c[0].min_domains, 1);
    CHECK_INT(c[0].node_affinity_policy, LS_POLICY_HONOR);
    CHECK_INT(c[0].node_taints_policy, LS_POLICY_IGNORE);
    CHECK_INT(c[0].selector.n, 2);
    CHECK(selects(&c[0].selector, "'app':'web','rev':'r7'"));
    CHECK(!selects(&c[0].selector, "'app':'web','rev':'r6'"));
    CHECK(!selects(&c[0].selector, "'app':'web'"));
    CHECK_INT(c[1].when_unsatisfiable, LS_SCHEDULE_ANYWAY);
    CHECK_INT(c[1].min_domains, 2);
    CHECK_INT(c[1].node_affinity_policy, LS_POLICY_IGNORE);
    CHECK_INT(c[1].node_taints_policy, LS_POLICY_HONOR);
    CHECK_INT(c[1].selector.match_nothing, 1);
    ls_pod_obj_free(p);

    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone'}]",
               "spec.topologySpreadConstraints[0].whenUnsatisfiable: required");
    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':0,'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'}]",
               "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero");
    SPEC_ERROR("'topologySpreadConstraints':[{'topologyKey':'zone','whenUnsatisfiable':'DoNotSchedule'}]",
               "spec.topologySpreadConstraints[0].maxSkew: required");
    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':1,'whenUnsatisfiable':'DoNotSchedule'}]",
               "spec.topologySpreadConstraints[0].topologyKey: required");
    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'z','whenUnsatisfiable':'Maybe'}]",
               "whenUnsatisfiable: unknown value \"Maybe\" (expected DoNotSchedule or ScheduleAnyway)");
    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'z','whenUnsatisfiable':'DoNotSchedule',"
               "'nodeTaintsPolicy':'Always'}]",
               "nodeTaintsPolicy: unknown value \"Always\" (expected Honor or Ignore)");
    SPEC_ERROR("'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'z','whenUnsatisfiable':'DoNotSchedule',"
               "'matchLabelKeys':[1]}]",
               "spec.topologySpreadConstraints[0].matchLabelKeys[0]: expected a string");
}

/* ---- nodes -------------------------------------------------------------------- */

static void test_node_decode(void)
{
    ls_node_obj *n = node(
        "{'metadata':{'name':'n1','uid':'nu-1','labels':{'zone':'a'}},"
        "'spec':{'unschedulable':true,'taints':[{'key':'k','value':'v','effect':'NoExecute'}]},"
        "'status':{'capacity':{'cpu':'4','memory':'8Gi','pods':'110','ephemeral-storage':'100Gi'},"
        "'allocatable':{'cpu':'3500m','memory':'7Gi','pods':100},"
        "'images':[{'names':['nginx','docker.io/library/nginx@sha256:abcd'],'sizeBytes':52428800},"
        "{'names':['big:v1'],'sizeBytes':9007199254740993}],"
        "'conditions':[{'type':'Ready','status':'True'},{'type':'DiskPressure','status':'False'}]}}");
    CHECK(n != NULL);
    if (!n)
        return;
    CHECK_STR(ls_str_get(n->node.name), "n1");
    CHECK_STR(ls_str_get(n->node.uid), "nu-1");
    CHECK_INT(n->node.unschedulable, 1);
    CHECK_INT(n->node.n_taints, 1);
    CHECK_INT(n->node.taints[0].effect, LS_EFFECT_NO_EXECUTE);
    CHECK_INT(n->node.capacity.milli_cpu, 4000);
    CHECK_INT(n->node.capacity.memory, 8 * GI);
    CHECK_INT(n->node.capacity.pods, 110);
    CHECK_INT(n->node.capacity.ephemeral_storage, 100 * GI);
    CHECK_INT(n->node.allocatable.milli_cpu, 3500);
    CHECK_INT(n->node.allocatable.memory, 7 * GI);
    CHECK_INT(n->node.allocatable.pods, 100);
    CHECK_INT(n->node.allocatable.ephemeral_storage, 0);   /* given allocatable is taken as is */
    CHECK_INT(n->node.n_images, 2);
    CHECK_INT(n->node.images[0].n_names, 2);
    /* node image names are kept as reported: only the pod's side is normalized */
    CHECK_STR(ls_str_get(n->node.images[0].names[0]), "nginx");
    CHECK_STR(ls_str_get(n->node.images[0].names[1]), "docker.io/library/nginx@sha256:abcd");
    CHECK_INT(n->node.images[0].size, 50 * MI);
    CHECK_INT(n->node.n_conditions, 2);
    CHECK_STR(ls_str_get(n->node.conditions[0].type), "Ready");
    CHECK_STR(ls_str_get(n->node.conditions[1].status), "False");
    ls_node_obj_free(n);

    /* No allocatable: everything in capacity is allocatable. */
    n = node("{'metadata':{'name':'n2'},'status':{'capacity':{'cpu':2,'memory':'4Gi','pods':'10'}}}");
    CHECK_INT(n->node.allocatable.milli_cpu, 2000);
    CHECK_INT(n->node.allocatable.memory, 4 * GI);
    CHECK_INT(n->node.allocatable.pods, 10);
    CHECK_INT(n->node.unschedulable, 0);
    CHECK_INT(n->node.n_taints, 0);
    ls_node_obj_free(n);
}

/* ---- errors ------------------------------------------------------------------- */

/* Fake line numbers: the "cpu" item is on line 14, everything else on line 3. */
static int fake_line_of(const cJSON *item, void *ud)
{
    (void)ud;
    return item->string && strcmp(item->string, "cpu") == 0 ? 14 : 3;
}

static void test_error_context(void)
{
    const char *bad_cpu = "{'metadata':{'name':'web-1'},'spec':{'containers':[{'resources':{'requests':{'cpu':'abc'}}}]}}";
    ls_decode_ctx yaml = {"cluster.yaml", fake_line_of, NULL};
    ls_decode_ctx file = {"pods.json", NULL, NULL};
    ls_error err = {{0}};
    CHECK(pod_ctx(bad_cpu, &yaml, &err) == NULL);
    CHECK_CONTAINS(err.msg, "cluster.yaml:14: pod default/web-1: spec.containers[0].resources.requests.cpu: "
                            "invalid quantity \"abc\"");
    CHECK(strncmp(err.msg, "cluster.yaml:14: ", 17) == 0);
    CHECK(pod_ctx(bad_cpu, &file, &err) == NULL);
    CHECK(strncmp(err.msg, "pods.json: pod default/web-1: spec.containers", 45) == 0);
    CHECK(pod_ctx(bad_cpu, NULL, &err) == NULL);
    CHECK(strncmp(err.msg, "pod default/web-1: spec.containers[0]", 37) == 0);

    /* A missing field is reported at its parent's line. */
    CHECK(pod_ctx("{'metadata':{'labels':{}}}", &yaml, &err) == NULL);
    CHECK_STR(err.msg, "cluster.yaml:3: pod: metadata.name: required");

    /* Selector errors carry the full path and the offending item's line. */
    CHECK(pod_ctx("{'metadata':{'name':'p','namespace':'ns'},'spec':{'affinity':{'podAffinity':{"
                  "'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'z','labelSelector':"
                  "{'matchExpressions':[{'key':'cpu','operator':'In','values':[]}]}}]}}}}", &yaml, &err) == NULL);
    CHECK_STR(err.msg, "cluster.yaml:3: pod ns/p: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                       ".labelSelector.matchExpressions[0].values: must be non-empty for operator In");

    ls_node_obj *n = node_ctx("{'metadata':{'name':'n1'},'status':{'capacity':{'cpu':'1x'}}}", &yaml, &err);
    CHECK(n == NULL);
    CHECK_CONTAINS(err.msg, "cluster.yaml:14: node n1: status.capacity.cpu: invalid quantity \"1x\"");
}

/* spec.resourceClaims: a claim by name; a template, resolved through
 * status.resourceClaimStatuses (created, none needed, not created yet). */
static void test_resource_claims(void)
{
    ls_pod_obj *p = pod("{'metadata':{'name':'w'},'spec':{'resourceClaims':["
                        "{'name':'gpu','resourceClaimName':'gpu-claim'},"
                        "{'name':'nic','resourceClaimTemplateName':'nic-t'},"
                        "{'name':'opt','resourceClaimTemplateName':'opt-t'},"
                        "{'name':'late','resourceClaimTemplateName':'late-t'}]},"
                        "'status':{'resourceClaimStatuses':[{'name':'nic','resourceClaimName':'w-nic-x7'},"
                        "{'name':'opt'}]}}");
    CHECK_INT(p->pod.n_resource_claims, 4);
    const ls_pod_claim *c = p->pod.resource_claims;
    CHECK_STR(ls_str_get(c[0].name), "gpu");
    CHECK_STR(ls_str_get(c[0].claim_name), "gpu-claim");
    CHECK_INT(c[0].state, LS_CLAIM_NAMED);
    CHECK_STR(ls_str_get(c[1].claim_name), "w-nic-x7");
    CHECK_INT(c[1].state, LS_CLAIM_TEMPLATE_CREATED);
    CHECK_INT(c[2].claim_name, 0);
    CHECK_INT(c[2].state, LS_CLAIM_TEMPLATE_NONE);
    CHECK_INT(c[3].claim_name, 0);
    CHECK_INT(c[3].state, LS_CLAIM_TEMPLATE_PENDING);
    ls_pod_obj_free(p);
    p = pod("{'metadata':{'name':'plain'}}");
    CHECK_INT(p->pod.n_resource_claims, 0);
    ls_pod_obj_free(p);
}

static void test_pod_errors(void)
{
    POD_ERROR("[]", "pod: expected an object");
    POD_ERROR("{'metadata':{}}", "pod: metadata.name: required");
    POD_ERROR("{'metadata':{'name':''}}", "pod: metadata.name: required");
    POD_ERROR("{}", "pod: metadata.name: required");
    POD_ERROR("{'metadata':[]}", "pod: metadata: expected an object");
    POD_ERROR("{'metadata':{'name':5}}", "pod: metadata.name: expected a string");
    POD_ERROR("{'metadata':{'name':'web-1','labels':['a']}}", "pod default/web-1: metadata.labels: expected an object");
    POD_ERROR("{'metadata':{'name':'web-1','labels':{'app':true}}}", "pod default/web-1: metadata.labels.app: expected a string");
    POD_ERROR("{'metadata':{'name':'web-1','creationTimestamp':'yesterday'}}",
              "pod default/web-1: metadata.creationTimestamp: invalid time \"yesterday\"");
    POD_ERROR("{'metadata':{'name':'web-1','ownerReferences':[{'controller':'yes'}]}}",
              "metadata.ownerReferences[0].controller: expected a boolean");
    POD_ERROR("{'metadata':{'name':'web-1'},'spec':[]}", "pod default/web-1: spec: expected an object");
    POD_ERROR("{'metadata':{'name':'web-1'},'status':{'phase':'Sleeping'}}",
              "status.phase: unknown value \"Sleeping\" (expected Pending, Running, Succeeded, Failed or Unknown)");
    POD_ERROR("{'metadata':{'name':'web-1'},'status':{'startTime':12}}", "status.startTime: expected a string");

    SPEC_ERROR("'priority':'5'", "pod default/web-1: spec.priority: expected an integer");
    SPEC_ERROR("'priority':1.5", "spec.priority: expected an integer");
    SPEC_ERROR("'priority':3000000000", "spec.priority: expected an integer (32-bit)");
    SPEC_ERROR("'preemptionPolicy':'Sometimes'",
               "spec.preemptionPolicy: unknown value \"Sometimes\" (expected PreemptLowerPriority or Never)");
    SPEC_ERROR("'containers':{}", "spec.containers: expected an array");
    SPEC_ERROR("'containers':['c']", "spec.containers[0]: expected an object");
    SPEC_ERROR("'containers':[{'image':7}]", "spec.containers[0].image: expected a string");
    SPEC_ERROR("'containers':[{},{'resources':{'requests':{'cpu':'abc'}}}]",
               "pod default/web-1: spec.containers[1].resources.requests.cpu: invalid quantity \"abc\"");
    SPEC_ERROR("'containers':[{'resources':{'limits':{'memory':'-1Gi'}}}]",
               "spec.containers[0].resources.limits.memory: invalid quantity \"-1Gi\": must not be negative");
    SPEC_ERROR("'containers':[{'resources':{'requests':{'memory':[]}}}]",
               "spec.containers[0].resources.requests.memory: expected a quantity (a string or a number)");
    SPEC_ERROR("'containers':[{'resources':{'requests':'1'}}]", "spec.containers[0].resources.requests: expected an object");
    SPEC_ERROR("'initContainers':[{'restartPolicy':'OnFailure'}]",
               "spec.initContainers[0].restartPolicy: unsupported value \"OnFailure\"");
    SPEC_ERROR("'overhead':{'cpu':'lots'}", "spec.overhead.cpu: invalid quantity \"lots\"");
    SPEC_ERROR("'schedulingGates':[{'name':'a'},{}]", "spec.schedulingGates[1].name: required");
    SPEC_ERROR("'resourceClaims':[{'resourceClaimName':'c'}]", "spec.resourceClaims[0].name: required");
    SPEC_ERROR("'resourceClaims':[{'name':'a','resourceClaimName':'c','resourceClaimTemplateName':'t'}]",
               "spec.resourceClaims[0]: resourceClaimName and resourceClaimTemplateName are mutually exclusive");
    POD_ERROR("{'metadata':{'name':'web-1'},'status':{'resourceClaimStatuses':[{'resourceClaimName':'x'}]}}",
              "status.resourceClaimStatuses[0].name: required");
    SPEC_ERROR("'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'labelSelector':{}}]}}",
               "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: required");
    SPEC_ERROR("'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':1}]}}",
               "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm: required");
    SPEC_ERROR("'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'z',"
               "'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'Exists','values':['x']}]}}]}}",
               "requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector.matchExpressions[0].values: "
               "must be empty for operator Exists");
    SPEC_ERROR("'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'z',"
               "'namespaces':'ns'}]}}",
               "requiredDuringSchedulingIgnoredDuringExecution[0].namespaces: expected an array");
    SPEC_ERROR("'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{}}}",
               "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution: expected an array");
}

/* spec.volumes: the sources the volume plugins tell apart, the ephemeral
 * claim's name ("<pod>-<volume>", ephemeral.VolumeClaimName), RBD's default
 * pool, and errors naming the field. */
static void test_pod_volumes(void)
{
    ls_pod_obj *p = pod("{'metadata':{'name':'db-0','namespace':'data'},'spec':{'volumes':["
                        "{'name':'data','persistentVolumeClaim':{'claimName':'pgdata','readOnly':true}},"
                        "{'name':'scratch','ephemeral':{'volumeClaimTemplate':{'spec':{}}}},"
                        "{'name':'pd','gcePersistentDisk':{'pdName':'disk-1','readOnly':true}},"
                        "{'name':'ebs','awsElasticBlockStore':{'volumeID':'vol-1'}},"
                        "{'name':'iscsi','iscsi':{'iqn':'iqn.a','targetPortal':'p','lun':0}},"
                        "{'name':'rbd','rbd':{'image':'img','monitors':['m1','m2']}},"
                        "{'name':'csi','csi':{'driver':'csi.example.com'}},"
                        "{'name':'cfg','configMap':{'name':'x'}}]}}");
    CHECK(p != NULL);
    if (!p)
        return;
    const ls_pod *q = &p->pod;
    CHECK_INT(q->n_volumes, 8);
    CHECK_INT(q->volumes[0].source, LS_VOL_PVC);
    CHECK_STR(ls_str_get(q->volumes[0].claim), "pgdata");
    CHECK_INT(q->volumes[0].read_only, 1);
    CHECK_INT(q->volumes[1].source, LS_VOL_EPHEMERAL);
    CHECK_STR(ls_str_get(q->volumes[1].claim), "db-0-scratch");
    CHECK_INT(q->volumes[2].source, LS_VOL_GCE_PD);
    CHECK_STR(ls_str_get(q->volumes[2].handle), "disk-1");
    CHECK_INT(q->volumes[2].read_only, 1);
    CHECK_INT(q->volumes[3].source, LS_VOL_AWS_EBS);
    CHECK_STR(ls_str_get(q->volumes[3].handle), "vol-1");
    CHECK_INT(q->volumes[3].read_only, 0);
    CHECK_INT(q->volumes[4].source, LS_VOL_ISCSI);
    CHECK_STR(ls_str_get(q->volumes[4].handle), "iqn.a");
    CHECK_INT(q->volumes[5].source, LS_VOL_RBD);
    CHECK_STR(ls_str_get(q->volumes[5].pool), "rbd");
    CHECK_INT(q->volumes[5].n_monitors, 2);
    CHECK_STR(ls_str_get(q->volumes[5].monitors[1]), "m2");
    CHECK_INT(q->volumes[6].source, LS_VOL_CSI);
    CHECK_STR(ls_str_get(q->volumes[6].handle), "csi.example.com");
    CHECK_INT(q->volumes[7].source, LS_VOL_OTHER);
    CHECK_STR(ls_str_get(q->volumes[7].name), "cfg");
    ls_pod_obj_free(p);
    p = pod("{'metadata':{'name':'plain'}}");
    CHECK(p && p->pod.n_volumes == 0);
    ls_pod_obj_free(p);

    SPEC_ERROR("'volumes':{}", "pod default/web-1: spec.volumes: expected an array");
    SPEC_ERROR("'volumes':[{'persistentVolumeClaim':{'claimName':'c'}}]", "spec.volumes[0].name: required");
    SPEC_ERROR("'volumes':[{'name':'d','persistentVolumeClaim':{}}]",
               "spec.volumes[0].persistentVolumeClaim.claimName: required");
    SPEC_ERROR("'volumes':[{'name':'d','persistentVolumeClaim':'c'}]",
               "spec.volumes[0].persistentVolumeClaim: expected an object");
    SPEC_ERROR("'volumes':[{'name':'d','gcePersistentDisk':{'pdName':'x','readOnly':'yes'}}]",
               "spec.volumes[0].gcePersistentDisk.readOnly: expected a boolean");
    SPEC_ERROR("'volumes':[{'name':'d','rbd':{'image':'i','monitors':'m1'}}]",
               "spec.volumes[0].rbd.monitors: expected an array");
}

static void test_node_errors(void)
{
    NODE_ERROR("{'metadata':{}}", "node: metadata.name: required");
    NODE_ERROR("'n'", "node: expected an object");
    NODE_ERROR("{'metadata':{'name':'n1'},'spec':{'taints':[{'key':'k','effect':'NoRun'}]}}",
               "node n1: spec.taints[0].effect: unknown value \"NoRun\" (expected NoSchedule, PreferNoSchedule or NoExecute)");
    NODE_ERROR("{'metadata':{'name':'n1'},'spec':{'taints':[{'key':'k'}]}}", "node n1: spec.taints[0].effect: required");
    NODE_ERROR("{'metadata':{'name':'n1'},'spec':{'taints':[{'effect':'NoSchedule'}]}}", "spec.taints[0].key: required");
    NODE_ERROR("{'metadata':{'name':'n1'},'spec':{'unschedulable':'yes'}}", "node n1: spec.unschedulable: expected a boolean");
    NODE_ERROR("{'metadata':{'name':'n1'},'status':{'allocatable':{'memory':'12Q'}}}",
               "node n1: status.allocatable.memory: invalid quantity \"12Q\"");
    NODE_ERROR("{'metadata':{'name':'n1'},'status':{'images':[{'names':['a'],'sizeBytes':'1Mi'}]}}",
               "node n1: status.images[0].sizeBytes: expected an integer");
    NODE_ERROR("{'metadata':{'name':'n1'},'status':{'images':[{'names':[1]}]}}", "status.images[0].names[0]: expected a string");
    NODE_ERROR("{'metadata':{'name':'n1'},'status':{'conditions':[{'type':1}]}}", "status.conditions[0].type: expected a string");
}

/* Through the real loader: YAML numbers keep their text (exact quantities and
 * integers beyond 2^53), and errors carry the real line of the bad item. */
static ls_pod_obj *yaml_pod(const char *text, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, strlen(text), "cluster.yaml", err);
    if (!doc)
        return NULL;
    ls_decode_ctx ctx = {ls_doc_source(doc), ls_doc_line_of, doc};
    ls_pod_obj *p = ls_pod_decode(ls_doc_get(doc, 0), &ctx, err);
    ls_doc_free(doc);
    return p;
}

static void test_yaml_input(void)
{
    ls_error err = {{0}};
    ls_pod_obj *p = yaml_pod("metadata:\n"
                             "  name: web-1\n"
                             "spec:\n"
                             "  priority: 0x10\n"
                             "  containers:\n"
                             "  - name: a\n"
                             "    resources:\n"
                             "      requests:\n"
                             "        cpu: 0.1\n"
                             "        memory: 9007199254740993\n",
                             &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(p->pod.priority, 16);
        CHECK_INT(p->pod.requests.milli_cpu, 100);
        CHECK_INT(p->pod.requests.memory, 9007199254740993LL);
    } else {
        fprintf(stderr, "yaml pod failed: %s\n", err.msg);
    }
    ls_pod_obj_free(p);

    p = yaml_pod("metadata:\n"
                 "  name: web-1\n"
                 "spec:\n"
                 "  containers:\n"
                 "  - name: a\n"
                 "    resources:\n"
                 "      requests:\n"
                 "        memory: 1Gi\n"
                 "        cpu: abc\n",
                 &err);
    CHECK(p == NULL);
    CHECK_CONTAINS(err.msg, "cluster.yaml:9: pod default/web-1: spec.containers[0].resources.requests.cpu: "
                            "invalid quantity \"abc\"");
    ls_pod_obj_free(p);

    p = yaml_pod("metadata:\n"
                 "  name: web-1\n"
                 "spec:\n"
                 "  affinity:\n"
                 "    podAntiAffinity:\n"
                 "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "      - topologyKey: zone\n"
                 "        labelSelector:\n"
                 "          matchExpressions:\n"
                 "          - key: app\n"
                 "            operator: Exists\n"
                 "            values: [x]\n",
                 &err);
    CHECK(p == NULL);
    CHECK_CONTAINS(err.msg, "cluster.yaml:12: pod default/web-1: spec.affinity.podAntiAffinity."
                            "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: "
                            "must be empty for operator Exists");
    ls_pod_obj_free(p);

    p = yaml_pod("metadata:\n"
                 "  name: web-1\n"
                 "spec:\n"
                 "  priority: \"5\"\n",
                 &err);
    CHECK(p == NULL);
    CHECK_STR(err.msg, "cluster.yaml:4: pod default/web-1: spec.priority: expected an integer");
    ls_pod_obj_free(p);
}

/* Runs last: it fills the process-wide registry. */
static void test_too_many_resources(void)
{
    char name[64];
    while (ls_resource_count() < LS_MAX_RESOURCES) {
        snprintf(name, sizeof name, "example.com/r%u", ls_resource_count());
        CHECK(ls_resource_intern(name, NULL) >= 0);
    }
    /* A bad value does not consume a slot; a good one finds none left. */
    SPEC_ERROR("'containers':[{'resources':{'requests':{'example.com/extra':'x'}}}]", "invalid quantity \"x\"");
    SPEC_ERROR("'containers':[{'resources':{'requests':{'example.com/extra':'1'}}}]",
               "pod default/web-1: spec.containers[0].resources.requests.example.com/extra: "
               "too many distinct resource names (at most 12 extended resources)");
    CHECK_INT(ls_resource_count(), LS_MAX_RESOURCES);
    CHECK_INT(ls_resource_index("example.com/extra"), -1);
    /* Known names still work. */
    ls_pod_obj *p = pod_spec("'containers':[{'resources':{'requests':{'example.com/gpu':'1','cpu':'1'}}}]");
    CHECK(p != NULL);
    ls_pod_obj_free(p);
}

int main(void)
{
    test_registry_fixed_slots();
    test_requests_containers();
    test_requests_init_containers();
    test_requests_sidecars();
    test_requests_limits_and_zeros();
    test_requests_extended();
    test_host_ports();
    test_image_normalize();
    test_pod_metadata_and_defaults();
    test_pod_affinity_terms();
    test_spread_constraints();
    test_node_decode();
    test_error_context();
    test_resource_claims();
    test_pod_errors();
    test_node_errors();
    test_pod_volumes();
    test_yaml_input();
    test_too_many_resources();
    ls_intern_reset();
    TEST_MAIN_END();
}
