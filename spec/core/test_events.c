/*
 * test_events.c: cluster events (core/src/queue/events.c) against the
 * reference, section 3.5: action names and bits, the resource names a plugin
 * may register, the fine-grained update actions of a node
 * (NodeSchedulingPropertiesChange) and of an unscheduled pod
 * (PodSchedulingPropertiesChange), and the registered-event match
 * (ClusterEvent.Match).
 */
#include "luasched/events.h"

#include <stdlib.h>

#include "test.h"

/* ---- fixtures: every parsed object is released at the end */

static const void *objects[128];
static bool is_node[128];
static int n_objects;

static void keep(const void *o, bool node)
{
    if (n_objects == (int)(sizeof objects / sizeof objects[0]))
        abort();
    is_node[n_objects] = node;
    objects[n_objects++] = o;
}

static const ls_node *node(const char *yaml)
{
    ls_error err = {{0}};
    const ls_node *n = ls_node_parse(yaml, strlen(yaml), "test-node", &err);
    if (!n) {
        fprintf(stderr, "node parse failed: %s\n", err.msg);
        abort();
    }
    keep(n, true);
    return n;
}

static const ls_pod *pod(const char *yaml)
{
    ls_error err = {{0}};
    const ls_pod *p = ls_pod_parse(yaml, strlen(yaml), "test-pod", &err);
    if (!p) {
        fprintf(stderr, "pod parse failed: %s\n", err.msg);
        abort();
    }
    keep(p, false);
    return p;
}

/* ---- action names */

static void test_action_names(void)
{
    CHECK_INT(ls_action_from_name("Add"), LS_ACT_ADD);
    CHECK_INT(ls_action_from_name("Delete"), LS_ACT_DELETE);
    CHECK_INT(ls_action_from_name("UpdateNodeAllocatable"), LS_ACT_UPDATE_NODE_ALLOCATABLE);
    CHECK_INT(ls_action_from_name("UpdateNodeLabel"), LS_ACT_UPDATE_NODE_LABEL);
    CHECK_INT(ls_action_from_name("UpdateNodeTaint"), LS_ACT_UPDATE_NODE_TAINT);
    CHECK_INT(ls_action_from_name("UpdateNodeCondition"), LS_ACT_UPDATE_NODE_CONDITION);
    CHECK_INT(ls_action_from_name("UpdateNodeAnnotation"), LS_ACT_UPDATE_NODE_ANNOTATION);
    CHECK_INT(ls_action_from_name("UpdatePodLabel"), LS_ACT_UPDATE_POD_LABEL);
    CHECK_INT(ls_action_from_name("UpdatePodScaleDown"), LS_ACT_UPDATE_POD_SCALE_DOWN);
    CHECK_INT(ls_action_from_name("UpdatePodToleration"), LS_ACT_UPDATE_POD_TOLERATION);
    CHECK_INT(ls_action_from_name("UpdatePodSchedulingGatesEliminated"),
              LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    CHECK_INT(ls_action_from_name("UpdatePodGeneratedResourceClaim"), LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    CHECK_INT(ls_action_from_name("Update"), LS_ACT_UPDATE);
    CHECK_INT(ls_action_from_name("All"), LS_ACT_ALL);
    /* names are exact: case, spaces, unknown names and "" give 0 */
    CHECK_INT(ls_action_from_name("add"), 0);
    CHECK_INT(ls_action_from_name("ADD"), 0);
    CHECK_INT(ls_action_from_name("Add "), 0);
    CHECK_INT(ls_action_from_name(""), 0);
    CHECK_INT(ls_action_from_name("UpdateNodeTaints"), 0);
    CHECK_INT(ls_action_from_name("UpdatePodOther"), 0);
    CHECK_INT(ls_action_from_name("*"), 0);

    /* the bits (reference 3.5: 1 << iota in upstream's order, All = (1 << n) - 1,
     * Update = OR of the UpdateXxx bits) */
    static const uint32_t fine[] = {
        LS_ACT_ADD, LS_ACT_DELETE, LS_ACT_UPDATE_NODE_ALLOCATABLE, LS_ACT_UPDATE_NODE_LABEL,
        LS_ACT_UPDATE_NODE_TAINT, LS_ACT_UPDATE_NODE_CONDITION, LS_ACT_UPDATE_NODE_ANNOTATION,
        LS_ACT_UPDATE_POD_LABEL, LS_ACT_UPDATE_POD_SCALE_DOWN, LS_ACT_UPDATE_POD_TOLERATION,
        LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM,
        LS_ACT_UPDATE_POD_OTHER,
    };
    uint32_t all = 0;
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        CHECK_INT(fine[i], 1u << i);
        all |= fine[i];
    }
    CHECK_INT(LS_ACT_ALL, all);
    CHECK_INT(LS_ACT_ALL, (1u << 13) - 1);
    CHECK_INT(LS_ACT_UPDATE, all & ~(uint32_t)(LS_ACT_ADD | LS_ACT_DELETE));
    CHECK_INT(LS_ACT_UPDATE & LS_ACT_ADD, 0);
    CHECK_INT(LS_ACT_UPDATE & LS_ACT_DELETE, 0);
}

/* ---- resource names */

static void test_resource_names(void)
{
    static const char *const valid[] = {
        "*", "Pod", "AssignedPod", "UnscheduledPod", "TargetPod", "Node", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
        "CSIDriver", "CSIStorageCapacity",
        /* upstream's spellings with the group (reference 3.5) */
        "storage.k8s.io/StorageClass", "storage.k8s.io/CSINode", "storage.k8s.io/CSIDriver",
        "storage.k8s.io/CSIStorageCapacity", "storage.k8s.io/VolumeAttachment", "resource.k8s.io/ResourceClaim",
        "resource.k8s.io/ResourceSlice", "resource.k8s.io/DeviceClass",
        /* custom resources: plural.version.group, lowercase, at least two dots */
        "noderesourcetopologies.v1alpha2.topology.node.k8s.io", "widgets.v1.example.com", "a.b.c",
        "gpu-slices.v1beta1.x-y.io",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        ls_test_checks++;
        if (!ls_resource_name_valid(valid[i])) {
            ls_test_failures++;
            fprintf(stderr, "%s:%d: \"%s\" should be a valid resource name\n", __FILE__, __LINE__, valid[i]);
        }
    }
    static const char *const invalid[] = {
        "foo",                    /* not a kind we know, not plural.version.group */
        "a.b",                    /* one dot: no group */
        "Foo.v1.x.y",             /* uppercase in a custom name */
        "a..b.c",                 /* an empty part */
        ".a.b",                   /* starts with a dot */
        "a.b.",                   /* ends with a dot */
        "pod", "node", "Pods",    /* kinds are exact */
        "",
        "**",
        "widgets.v1.example.com/x", /* a slash is not part of a custom name */
        "storage.k8s.io/Foo",
        "wid gets.v1.example.com",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        ls_test_checks++;
        if (ls_resource_name_valid(invalid[i])) {
            ls_test_failures++;
            fprintf(stderr, "%s:%d: \"%s\" should not be a valid resource name\n", __FILE__, __LINE__, invalid[i]);
        }
    }
}

/* ---- node updates (NodeSchedulingPropertiesChange) */

/* A node with the given spec members and status members (flow YAML bodies). */
static const ls_node *node_with(const char *labels, const char *spec, const char *status)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: n1, labels: {%s}}\n"
             "spec: {%s}\n"
             "status: {%s}\n",
             labels, spec, status);
    return node(yaml);
}

#define ALLOC4 "allocatable: {cpu: '4', memory: 8Gi, pods: '110'}"
#define ALLOC8 "allocatable: {cpu: '8', memory: 8Gi, pods: '110'}"
#define READY_T "conditions: [{type: Ready, status: 'True'}, {type: MemoryPressure, status: 'False'}]"

static void test_node_update_actions(void)
{
    const ls_node *base = node_with("zone: a", "", ALLOC4 ", " READY_T);
    /* the same content in another object: nothing the scheduler cares about */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "", ALLOC4 ", " READY_T)), 0);

    /* taints: added, removed, value or effect changed -> UpdateNodeTaint */
    const ls_node *tainted = node_with("zone: a", "taints: [{key: k, value: v, effect: NoSchedule}]",
                                       ALLOC4 ", " READY_T);
    CHECK_INT(ls_node_update_actions(base, tainted), LS_ACT_UPDATE_NODE_TAINT);
    CHECK_INT(ls_node_update_actions(tainted, base), LS_ACT_UPDATE_NODE_TAINT);
    CHECK_INT(ls_node_update_actions(tainted, node_with("zone: a", "taints: [{key: k, value: w, effect: NoSchedule}]",
                                                        ALLOC4 ", " READY_T)),
              LS_ACT_UPDATE_NODE_TAINT);
    CHECK_INT(ls_node_update_actions(tainted, node_with("zone: a", "taints: [{key: k, value: v, effect: NoExecute}]",
                                                        ALLOC4 ", " READY_T)),
              LS_ACT_UPDATE_NODE_TAINT);
    CHECK_INT(ls_node_update_actions(tainted, node_with("zone: a", "taints: [{key: k, value: v, effect: NoSchedule}]",
                                                        ALLOC4 ", " READY_T)),
              0);

    /* spec.unschedulable counts (as UpdateNodeTaint) only when it flips to false */
    const ls_node *cordoned = node_with("zone: a", "unschedulable: true", ALLOC4 ", " READY_T);
    CHECK_INT(ls_node_update_actions(cordoned, base), LS_ACT_UPDATE_NODE_TAINT);   /* uncordon */
    CHECK_INT(ls_node_update_actions(base, cordoned), 0);                          /* cordon */
    CHECK_INT(ls_node_update_actions(cordoned, node_with("zone: a", "unschedulable: true", ALLOC4 ", " READY_T)), 0);

    /* allocatable */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "", ALLOC8 ", " READY_T)),
              LS_ACT_UPDATE_NODE_ALLOCATABLE);
    /* labels: changed value, added, removed */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: b", "", ALLOC4 ", " READY_T)), LS_ACT_UPDATE_NODE_LABEL);
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a, ssd: 'true'", "", ALLOC4 ", " READY_T)),
              LS_ACT_UPDATE_NODE_LABEL);
    CHECK_INT(ls_node_update_actions(base, node_with("", "", ALLOC4 ", " READY_T)), LS_ACT_UPDATE_NODE_LABEL);
    /* annotations: any change (upstream's extractNodeAnnotationsChange, Semantic.DeepEqual:
     * none and an empty map are equal) */
    const ls_node *plain = node("metadata: {name: n1}\n");
    const ls_node *annotated = node("metadata: {name: n1, annotations: {a: '1'}}\n");
    CHECK_INT(ls_node_update_actions(plain, annotated), LS_ACT_UPDATE_NODE_ANNOTATION);
    CHECK_INT(ls_node_update_actions(annotated, plain), LS_ACT_UPDATE_NODE_ANNOTATION);
    CHECK_INT(ls_node_update_actions(annotated, node("metadata: {name: n1, annotations: {a: '2'}}\n")),
              LS_ACT_UPDATE_NODE_ANNOTATION);
    CHECK_INT(ls_node_update_actions(annotated, node("metadata: {name: n1, annotations: {a: '1'}}\n")), 0);
    CHECK_INT(ls_node_update_actions(plain, node("metadata: {name: n1, annotations: {}}\n")), 0);

    /* conditions, compared as a type -> status map: a status change counts, the
     * order of the list does not, nor do heartbeat times */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "",
                                                     ALLOC4 ", conditions: [{type: Ready, status: 'False'}, "
                                                     "{type: MemoryPressure, status: 'False'}]")),
              LS_ACT_UPDATE_NODE_CONDITION);
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "",
                                                     ALLOC4 ", conditions: [{type: MemoryPressure, status: 'False'}, "
                                                     "{type: Ready, status: 'True'}]")),
              0);
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "",
                                                     ALLOC4 ", conditions: [{type: Ready, status: 'True', "
                                                     "lastHeartbeatTime: '2024-01-01T00:00:00Z'}, "
                                                     "{type: MemoryPressure, status: 'False'}]")),
              0);
    /* a condition added or removed */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "", ALLOC4 ", conditions: [{type: Ready, status: 'True'}]")),
              LS_ACT_UPDATE_NODE_CONDITION);
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "",
                                                     ALLOC4 ", conditions: [{type: Ready, status: 'True'}, "
                                                     "{type: MemoryPressure, status: 'False'}, "
                                                     "{type: DiskPressure, status: 'False'}]")),
              LS_ACT_UPDATE_NODE_CONDITION);
    /* the same number of conditions, one type replaced by another */
    CHECK_INT(ls_node_update_actions(base, node_with("zone: a", "",
                                                     ALLOC4 ", conditions: [{type: Ready, status: 'True'}, "
                                                     "{type: DiskPressure, status: 'False'}]")),
              LS_ACT_UPDATE_NODE_CONDITION);

    /* several properties at once: one bit each */
    CHECK_INT(ls_node_update_actions(cordoned, node_with("zone: b", "taints: [{key: k, effect: NoSchedule}]",
                                                         ALLOC8 ", conditions: [{type: Ready, status: 'False'}]")),
              LS_ACT_UPDATE_NODE_TAINT | LS_ACT_UPDATE_NODE_LABEL | LS_ACT_UPDATE_NODE_ALLOCATABLE |
                  LS_ACT_UPDATE_NODE_CONDITION);
}

/* ---- pod updates (PodSchedulingPropertiesChange) */

/* An unscheduled pod with labels, cpu request, and extra spec members. */
static const ls_pod *pod_with(const char *labels, const char *cpu, const char *extra)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: p, namespace: default, labels: {%s}}\n"
             "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: '%s', memory: 1Gi}}}]%s%s}\n",
             labels, cpu, extra[0] ? ", " : "", extra);
    return pod(yaml);
}

#define TOL "tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule}]"
#define GATES "schedulingGates: [{name: example.com/a}]"

static void test_pod_update_actions(void)
{
    const ls_pod *base = pod_with("app: web", "500m", "");
    /* nothing changed, or only the status (phase, conditions, nominatedNodeName,
     * start time: our own PodScheduled=False patch): not an event (0) */
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: web", "500m", "")), 0);
    const ls_pod *patched = pod("metadata: {name: p, namespace: default, labels: {app: web}}\n"
                                "spec: {containers: [{name: c, image: app, resources: "
                                "{requests: {cpu: '500m', memory: 1Gi}}}]}\n"
                                "status: {phase: Pending, nominatedNodeName: n1, startTime: '2024-01-01T00:00:00Z', "
                                "conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n");
    CHECK_INT(ls_pod_update_actions(base, patched), 0);
    CHECK_INT(ls_pod_update_actions(patched, base), 0);
    /* another change the scheduler keeps but no fine-grained action names
     * (priority, an image, deletion): upstream's updatePodOther */
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: web", "500m", "priority: 7")), LS_ACT_UPDATE_POD_OTHER);
    CHECK_INT(ls_pod_update_actions(base, pod("metadata: {name: p, namespace: default, labels: {app: web}}\n"
                                              "spec: {containers: [{name: c, image: app2, resources: "
                                              "{requests: {cpu: '500m', memory: 1Gi}}}]}\n")),
              LS_ACT_UPDATE_POD_OTHER);
    /* labels */
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: api", "500m", "")), LS_ACT_UPDATE_POD_LABEL);
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: web, tier: fe", "500m", "")), LS_ACT_UPDATE_POD_LABEL);
    CHECK_INT(ls_pod_update_actions(base, pod_with("", "500m", "")), LS_ACT_UPDATE_POD_LABEL);
    /* requests: down -> UpdatePodScaleDown; up is no fine-grained action */
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: web", "250m", "")), LS_ACT_UPDATE_POD_SCALE_DOWN);
    CHECK_INT(ls_pod_update_actions(base, pod_with("app: web", "1", "")), LS_ACT_UPDATE_POD_OTHER);
    /* a request removed is a scale-down too (memory gone) */
    CHECK_INT(ls_pod_update_actions(base, pod("metadata: {name: p, namespace: default, labels: {app: web}}\n"
                                              "spec: {containers: [{name: c, image: app, resources: "
                                              "{requests: {cpu: 500m}}}]}\n")),
              LS_ACT_UPDATE_POD_SCALE_DOWN);
    /* scheduling gates: only all of them gone counts */
    const ls_pod *gated = pod_with("app: web", "500m", GATES);
    const ls_pod *two_gates = pod_with("app: web", "500m", "schedulingGates: [{name: example.com/a}, {name: b}]");
    CHECK_INT(ls_pod_update_actions(gated, base), LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    CHECK_INT(ls_pod_update_actions(two_gates, gated), LS_ACT_UPDATE_POD_OTHER);   /* one gate left */
    CHECK_INT(ls_pod_update_actions(base, base), 0);
    /* a template's generated claim recorded in status (or "none needed"):
     * UpdatePodGeneratedResourceClaim; a claim by name never changes it */
    const char *tmpl = "metadata: {name: p, namespace: default, labels: {app: web}}\n"
                       "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 500m, memory: 1Gi}}}], "
                       "resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]}\n";
    char created[1024], none[1024];
    snprintf(created, sizeof created, "%sstatus: {resourceClaimStatuses: [{name: gpu, resourceClaimName: p-gpu-1}]}\n",
             tmpl);
    snprintf(none, sizeof none, "%sstatus: {resourceClaimStatuses: [{name: gpu}]}\n", tmpl);
    const ls_pod *waiting = pod(tmpl);
    CHECK_INT(ls_pod_update_actions(waiting, pod(created)), LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    CHECK_INT(ls_pod_update_actions(waiting, pod(none)), LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    CHECK_INT(ls_pod_update_actions(pod(created), pod(created)), 0);
    /* tolerations */
    const ls_pod *tolerant = pod_with("app: web", "500m", TOL);
    CHECK_INT(ls_pod_update_actions(base, tolerant), LS_ACT_UPDATE_POD_TOLERATION);
    CHECK_INT(ls_pod_update_actions(tolerant, pod_with("app: web", "500m", TOL)), 0);
    CHECK_INT(ls_pod_update_actions(tolerant, pod_with("app: web", "500m",
                                                       "tolerations: [{key: k, operator: Equal, value: w, "
                                                       "effect: NoSchedule}]")),
              LS_ACT_UPDATE_POD_TOLERATION);
    /* several at once: one bit each, no generic Update */
    CHECK_INT(ls_pod_update_actions(pod_with("app: web", "500m", GATES), pod_with("app: api", "100m", TOL)),
              LS_ACT_UPDATE_POD_LABEL | LS_ACT_UPDATE_POD_SCALE_DOWN |
                  LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED | LS_ACT_UPDATE_POD_TOLERATION);
}

/* ---- ClusterEvent.Match */

static ls_cluster_event ev(const char *resource, uint32_t actions)
{
    return (ls_cluster_event){.resource = ls_intern_cstr(resource), .actions = actions, .label = "test"};
}

static bool matches(const char *reg_resource, uint32_t reg_actions, const char *resource, uint32_t actions)
{
    ls_cluster_event e = ev(resource, actions);
    return ls_event_matches(ls_intern_cstr(reg_resource), reg_actions, &e);
}

static void test_event_matches(void)
{
    /* the wildcard registration ("*", All) matches everything, even the
     * wildcard event and resources nobody knows */
    CHECK(matches("*", LS_ACT_ALL, "Node", LS_ACT_ADD));
    CHECK(matches("*", LS_ACT_ALL, "Pod", LS_ACT_UPDATE_POD_LABEL));
    CHECK(matches("*", LS_ACT_ALL, "*", LS_ACT_ALL));
    CHECK(matches("*", LS_ACT_ALL, "widgets.v1.example.com", LS_ACT_DELETE));
    /* "*" with some actions: any resource, those actions */
    CHECK(matches("*", LS_ACT_ADD, "Node", LS_ACT_ADD));
    CHECK(matches("*", LS_ACT_ADD, "Pod", LS_ACT_ADD));
    CHECK(!matches("*", LS_ACT_ADD, "Node", LS_ACT_DELETE));
    /* same resource, actions ANDed */
    CHECK(matches("Node", LS_ACT_ADD, "Node", LS_ACT_ADD));
    CHECK(matches("Node", LS_ACT_ADD | LS_ACT_UPDATE_NODE_TAINT, "Node", LS_ACT_UPDATE_NODE_TAINT));
    CHECK(matches("Node", LS_ACT_UPDATE, "Node", LS_ACT_UPDATE_NODE_LABEL));
    CHECK(matches("Node", LS_ACT_UPDATE_NODE_LABEL, "Node", LS_ACT_UPDATE_NODE_LABEL | LS_ACT_UPDATE_NODE_TAINT));
    CHECK(matches("Node", LS_ACT_ALL, "Node", LS_ACT_DELETE));
    CHECK(!matches("Node", LS_ACT_UPDATE_NODE_TAINT, "Node", LS_ACT_UPDATE_NODE_LABEL));
    CHECK(!matches("Node", LS_ACT_UPDATE, "Node", LS_ACT_ADD));
    CHECK(!matches("Node", LS_ACT_ADD, "Node", LS_ACT_DELETE));
    /* a pod update that changed nothing fine-grained (UpdatePodOther) matches
     * only registrations for Update or All */
    CHECK(!matches("Pod", LS_ACT_UPDATE_POD_LABEL, "TargetPod", LS_ACT_UPDATE_POD_OTHER));
    CHECK(matches("Pod", LS_ACT_UPDATE, "TargetPod", LS_ACT_UPDATE_POD_OTHER));
    CHECK(matches("Pod", LS_ACT_ALL, "AssignedPod", LS_ACT_UPDATE_POD_OTHER));
    /* v1.37's pod resources: "Pod" takes all three, each the others not */
    CHECK(matches("Pod", LS_ACT_DELETE, "AssignedPod", LS_ACT_DELETE));
    CHECK(matches("Pod", LS_ACT_ADD, "UnscheduledPod", LS_ACT_ADD));
    CHECK(matches("Pod", LS_ACT_UPDATE_POD_TOLERATION, "TargetPod", LS_ACT_UPDATE_POD_TOLERATION));
    CHECK(matches("AssignedPod", LS_ACT_DELETE, "AssignedPod", LS_ACT_DELETE));
    CHECK(!matches("AssignedPod", LS_ACT_ADD, "UnscheduledPod", LS_ACT_ADD));
    CHECK(!matches("AssignedPod", LS_ACT_UPDATE_POD_LABEL, "TargetPod", LS_ACT_UPDATE_POD_LABEL));
    CHECK(!matches("TargetPod", LS_ACT_UPDATE_POD_LABEL, "AssignedPod", LS_ACT_UPDATE_POD_LABEL));
    CHECK(!matches("UnscheduledPod", LS_ACT_ALL, "AssignedPod", LS_ACT_ADD));
    CHECK(!matches("AssignedPod", LS_ACT_ALL, "Pod", LS_ACT_ADD));
    /* another resource never matches */
    CHECK(!matches("Node", LS_ACT_ALL, "Pod", LS_ACT_ADD));
    CHECK(!matches("Pod", LS_ACT_ADD, "Node", LS_ACT_ADD));
    CHECK(!matches("PersistentVolume", LS_ACT_ALL, "PersistentVolumeClaim", LS_ACT_ADD));
    CHECK(matches("widgets.v1.example.com", LS_ACT_UPDATE, "widgets.v1.example.com", LS_ACT_UPDATE));
    CHECK(!matches("widgets.v1.example.com", LS_ACT_ALL, "gadgets.v1.example.com", LS_ACT_ADD));
    /* a specific registration does not match the wildcard event by itself
     * (isPodWorthRequeuing handles that event before matching) */
    CHECK(!matches("Node", LS_ACT_ALL, "*", LS_ACT_ALL));
    /* an event without action bits (a status-only pod update) matches
     * nothing, not even the wildcard registration */
    CHECK(!matches("Node", LS_ACT_ALL, "Node", 0));
    CHECK(!matches("*", LS_ACT_ALL, "TargetPod", 0));
}

int main(void)
{
    test_action_names();
    test_resource_names();
    test_node_update_actions();
    test_pod_update_actions();
    test_event_matches();
    for (int i = 0; i < n_objects; i++) {
        if (is_node[i])
            ls_node_release(objects[i]);
        else
            ls_pod_release(objects[i]);
    }
    TEST_MAIN_END();
}
