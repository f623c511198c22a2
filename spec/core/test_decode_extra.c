/*
 * test_decode_extra.c: the pod and node fields of decode_pod_extra.c
 * (annotations, containers, ports, spec.resources, overhead, conditions,
 * container statuses, QoS class) and their error messages with the YAML line.
 * Expected values are worked by hand from the manifests (cpu in millicores).
 */
#include "luasched/model.h"
#include "model/doc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "test.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static int64_t q(const ls_resource_list *l, const char *name)
{
    int64_t v;
    int32_t slot = ls_resource_index(name);
    return slot >= 0 && ls_resource_list_get(l, (uint32_t)slot, &v) ? v : -1;
}

/* Decodes the first document of YAML text as a pod, with line numbers. */
static ls_pod_obj *yaml_pod(const char *text, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, strlen(text), "pod.yaml", err);
    if (!doc)
        return NULL;
    ls_decode_ctx ctx = {"pod.yaml", ls_doc_line_of, doc};
    ls_pod_obj *p = ls_pod_decode(ls_doc_get(doc, 0), &ctx, err);
    ls_doc_free(doc);
    return p;
}

static ls_node_obj *yaml_node(const char *text, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, strlen(text), "node.yaml", err);
    if (!doc)
        return NULL;
    ls_decode_ctx ctx = {"node.yaml", ls_doc_line_of, doc};
    ls_node_obj *n = ls_node_decode(ls_doc_get(doc, 0), &ctx, err);
    ls_doc_free(doc);
    return n;
}

static const char *const POD =
    "metadata:\n"
    "  name: w\n"
    "  annotations: {team: a, note: \"x y\"}\n"
    "spec:\n"
    "  initContainers:\n"
    "  - {name: i, image: busybox, resources: {limits: {cpu: 300m}}}\n"
    "  - {name: s, image: envoy, restartPolicy: Always, ports: [{containerPort: 9901}]}\n"
    "  containers:\n"
    "  - name: m\n"
    "    image: app\n"
    "    resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 2}}\n"
    "    ports: [{name: p, containerPort: 80, hostPort: 8080, protocol: SCTP}]\n"
    "  overhead: {memory: 10Mi}\n"
    "  resources: {limits: {cpu: 4, memory: 4Gi}}\n"
    "status:\n"
    "  conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable}]\n"
    "  initContainerStatuses: [{name: s, allocatedResources: {cpu: 0}}]\n"
    "  resources: {requests: {cpu: 1500m}}\n";

static void test_pod_fields(void)
{
    ls_error err = {{0}};
    ls_pod_obj *o = yaml_pod(POD, &err);
    CHECK(o != NULL);
    if (!o) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const ls_pod *p = &o->pod;
    CHECK_STR(ls_str_get(ls_labels_get(&p->annotations, ls_intern_cstr("note"))), "x y");
    CHECK_INT(p->annotations.n, 2);

    CHECK_INT(p->n_containers, 3);
    CHECK_INT(p->containers[0].kind, LS_CONTAINER_INIT);
    CHECK_INT(p->containers[1].kind, LS_CONTAINER_SIDECAR);
    CHECK_INT(p->containers[2].kind, LS_CONTAINER_REGULAR);
    CHECK_STR(ls_str_get(p->containers[2].image), "app");
    CHECK_INT(q(&p->containers[0].requests, "cpu"), 300);   /* from the limit */
    CHECK_INT(q(&p->containers[2].requests, "cpu"), 1000);
    CHECK_INT(q(&p->containers[2].requests, "memory"), GI);
    CHECK_INT(q(&p->containers[2].limits, "cpu"), 2000);
    CHECK_INT(q(&p->containers[2].limits, "memory"), -1);

    CHECK_INT(p->n_ports, 2);
    CHECK_INT(p->ports[0].container, 1);
    CHECK_INT(p->ports[0].container_port, 9901);
    CHECK_INT(p->ports[0].protocol, LS_PROTO_TCP);
    CHECK_INT(p->ports[1].container, 2);
    CHECK_INT(p->ports[1].host_port, 8080);
    CHECK_INT(p->ports[1].protocol, LS_PROTO_SCTP);
    CHECK_STR(ls_str_get(p->ports[1].name), "p");
    CHECK_INT(p->containers[2].n_ports, 1);
    CHECK(p->containers[2].ports == &p->ports[1]);

    CHECK_INT(q(&p->overhead, "memory"), 10 * MI);
    CHECK_INT(p->has_resources, 1);
    /* pod-level requests defaulted: cpu from the containers' aggregate
     * (max(300m init, 1 regular + 0 sidecar) = 1000m), memory likewise (1Gi) */
    CHECK_INT(q(&p->resources_requests, "cpu"), 1000);
    CHECK_INT(q(&p->resources_requests, "memory"), GI);
    CHECK_INT(q(&p->resources_limits, "memory"), 4 * GI);
    CHECK_INT(p->qos_class, LS_QOS_BURSTABLE);

    CHECK_INT(p->n_conditions, 1);
    CHECK_STR(ls_str_get(p->conditions[0].reason), "Unschedulable");
    CHECK_INT(p->n_container_statuses, 1);
    CHECK_INT(p->container_statuses[0].init, 1);
    CHECK_INT(p->container_statuses[0].has_allocated, 1);
    CHECK_INT(p->container_statuses[0].has_resources, 0);
    CHECK_INT(q(&p->container_statuses[0].allocated, "cpu"), 0);
    CHECK_INT(p->has_allocated_resources, 0);
    CHECK_INT(q(&p->status_requests, "cpu"), 1500);
    ls_pod_obj_free(o);
}

static void test_qos(void)
{
    ls_error err = {{0}};
    static const struct { const char *spec; int qos; } cases[] = {
        {"{containers: [{name: a}]}", LS_QOS_BEST_EFFORT},
        {"{containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]}", LS_QOS_GUARANTEED},
        {"{containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}}},"
         " {name: b}]}", LS_QOS_BURSTABLE},
        {"{containers: [{name: a, resources: {requests: {memory: 1Gi}, limits: {memory: 1Gi}}}]}", LS_QOS_BURSTABLE},
        {"{containers: [{name: a, resources: {requests: {example.com/gpu: 1}}}]}", LS_QOS_BEST_EFFORT},
        {"{containers: [{name: a}], resources: {limits: {cpu: 1, memory: 1Gi}}}", LS_QOS_GUARANTEED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "metadata: {name: q%zu}\nspec: %s\n", i, cases[i].spec);
        ls_pod_obj *o = yaml_pod(text, &err);
        CHECK(o != NULL);
        if (o) {
            if (o->pod.qos_class != cases[i].qos)
                fprintf(stderr, "case %zu: ", i);
            CHECK_INT(o->pod.qos_class, cases[i].qos);
        }
        ls_pod_obj_free(o);
    }
    ls_pod_obj *o = yaml_pod("metadata: {name: r}\nspec: {containers: [{name: a}]}\nstatus: {qosClass: Guaranteed}\n",
                             &err);
    CHECK(o && o->pod.qos_class == LS_QOS_GUARANTEED);
    ls_pod_obj_free(o);
}

static void test_errors(void)
{
    ls_error err = {{0}};
    CHECK(yaml_pod("metadata:\n  name: e\n  annotations:\n    a: 1\n", &err) == NULL);
    CHECK_STR(err.msg, "pod.yaml:4: pod default/e: metadata.annotations: a: expected a string");
    CHECK(yaml_pod("metadata: {name: e}\nstatus:\n  containerStatuses:\n  - name: m\n    resources:\n"
                   "      limits: {cpu: lots}\n", &err) == NULL);
    CHECK_CONTAINS(err.msg, "pod.yaml:6: pod default/e: status.containerStatuses[0].resources: limits.cpu: ");
    CHECK(yaml_pod("metadata: {name: e}\nstatus:\n  conditions: [{type: Ready, status: true}]\n", &err) == NULL);
    CHECK_STR(err.msg, "pod.yaml:3: pod default/e: status.conditions[0]: status: expected a string");
    ls_node_obj *n = yaml_node("metadata:\n  name: n\n  annotations: [x]\n", &err);
    CHECK(n == NULL);
    CHECK_STR(err.msg, "node.yaml:3: node n: metadata.annotations: expected an object");
}

static void test_node_annotations(void)
{
    ls_error err = {{0}};
    ls_node_obj *n = yaml_node("metadata:\n  name: n\n  annotations: {load: \"0.7\"}\n", &err);
    CHECK(n != NULL);
    if (n)
        CHECK_STR(ls_str_get(ls_labels_get(&n->node.annotations, ls_intern_cstr("load"))), "0.7");
    ls_node_obj_free(n);
}

int main(void)
{
    test_pod_fields();
    test_qos();
    test_errors();
    test_node_annotations();
    ls_intern_reset();
    TEST_MAIN_END();
}
