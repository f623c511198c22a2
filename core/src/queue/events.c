/*
 * events.c: cluster events: action names, resource names (v1.37's pod
 * resources AssignedPod, UnscheduledPod and TargetPod beside the older "Pod"),
 * the fine-grained update actions derived from an object's old and new
 * versions (upstream's NodeSchedulingPropertiesChange /
 * PodSchedulingPropertiesChange), and the registered-event match.
 */
#include "luasched/events.h"

#include <string.h>

static const struct {
    const char *name;
    uint32_t bits;
} ACTIONS[] = {
    {"Add", LS_ACT_ADD},
    {"Delete", LS_ACT_DELETE},
    {"Update", LS_ACT_UPDATE},
    {"All", LS_ACT_ALL},
    {"UpdateNodeAllocatable", LS_ACT_UPDATE_NODE_ALLOCATABLE},
    {"UpdateNodeLabel", LS_ACT_UPDATE_NODE_LABEL},
    {"UpdateNodeTaint", LS_ACT_UPDATE_NODE_TAINT},
    {"UpdateNodeCondition", LS_ACT_UPDATE_NODE_CONDITION},
    {"UpdateNodeAnnotation", LS_ACT_UPDATE_NODE_ANNOTATION},
    {"UpdatePodLabel", LS_ACT_UPDATE_POD_LABEL},
    {"UpdatePodScaleDown", LS_ACT_UPDATE_POD_SCALE_DOWN},
    {"UpdatePodToleration", LS_ACT_UPDATE_POD_TOLERATION},
    {"UpdatePodSchedulingGatesEliminated", LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED},
    {"UpdatePodGeneratedResourceClaim", LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM},
};

static const char *const RESOURCES[] = {
    "*", "Pod", "AssignedPod", "UnscheduledPod", "TargetPod", "Node", "PersistentVolume", "PersistentVolumeClaim",
    "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity",
    "storage.k8s.io/StorageClass", "storage.k8s.io/CSINode", "storage.k8s.io/CSIDriver",
    "storage.k8s.io/CSIStorageCapacity", "storage.k8s.io/VolumeAttachment", "VolumeAttachment",
    "resource.k8s.io/ResourceClaim", "resource.k8s.io/ResourceSlice", "resource.k8s.io/DeviceClass",
    "NodeMetrics", "PodMetrics",
    NULL,
};

uint32_t ls_action_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof ACTIONS / sizeof ACTIONS[0]; i++)
        if (strcmp(ACTIONS[i].name, name) == 0)
            return ACTIONS[i].bits;
    return 0;
}

/* plural.version.group: lowercase DNS-ish labels, at least two dots, no empty part. */
static bool custom_resource_name(const char *name)
{
    int dots = 0;
    char prev = '.';
    for (const char *p = name; *p; p++) {
        char ch = *p;
        if (ch == '.') {
            if (prev == '.')
                return false;
            dots++;
        } else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-')) {
            return false;
        }
        prev = ch;
    }
    return dots >= 2 && prev != '.';
}

bool ls_resource_name_valid(const char *name)
{
    for (int i = 0; RESOURCES[i]; i++)
        if (strcmp(RESOURCES[i], name) == 0)
            return true;
    return custom_resource_name(name);
}

/* ---- node updates */

static bool labels_equal(const ls_labels *a, const ls_labels *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->items[i].key != b->items[i].key || a->items[i].value != b->items[i].value)
            return false;
    return true;
}

static bool taints_equal(const ls_node *a, const ls_node *b)
{
    if (a->n_taints != b->n_taints)
        return false;
    for (uint32_t i = 0; i < a->n_taints; i++)
        if (a->taints[i].key != b->taints[i].key || a->taints[i].value != b->taints[i].value ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return true;
}

static ls_str condition_status(const ls_node *n, ls_str type)
{
    for (uint32_t i = 0; i < n->n_conditions; i++)
        if (n->conditions[i].type == type)
            return n->conditions[i].status;
    return 0;
}

/* Conditions compared as a type -> status map (heartbeat times do not count). */
static bool conditions_equal(const ls_node *a, const ls_node *b)
{
    if (a->n_conditions != b->n_conditions)
        return false;
    for (uint32_t i = 0; i < a->n_conditions; i++)
        if (condition_status(b, a->conditions[i].type) != a->conditions[i].status)
            return false;
    return true;
}

uint32_t ls_node_update_actions(const ls_node *old_node, const ls_node *new_node)
{
    uint32_t actions = 0;
    /* Only a node becoming schedulable can help a pending pod. */
    bool unschedulable_lifted = old_node->unschedulable && !new_node->unschedulable;
    if (unschedulable_lifted || !taints_equal(old_node, new_node))
        actions |= LS_ACT_UPDATE_NODE_TAINT;
    if (memcmp(&old_node->allocatable, &new_node->allocatable, sizeof old_node->allocatable) != 0)
        actions |= LS_ACT_UPDATE_NODE_ALLOCATABLE;
    if (!labels_equal(&old_node->labels, &new_node->labels))
        actions |= LS_ACT_UPDATE_NODE_LABEL;
    if (!conditions_equal(old_node, new_node))
        actions |= LS_ACT_UPDATE_NODE_CONDITION;
    if (!labels_equal(&old_node->annotations, &new_node->annotations))
        actions |= LS_ACT_UPDATE_NODE_ANNOTATION;
    return actions;
}

/* ---- pod updates */

static bool tolerations_equal(const ls_pod *a, const ls_pod *b)
{
    if (a->n_tolerations != b->n_tolerations)
        return false;
    for (uint32_t i = 0; i < a->n_tolerations; i++) {
        const ls_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->key != y->key || x->value != y->value || x->op != y->op || x->effect != y->effect)
            return false;
    }
    return true;
}

static bool requests_scaled_down(const ls_pod *old_pod, const ls_pod *new_pod)
{
    for (int r = 0; r < LS_MAX_RESOURCES; r++)
        if (new_pod->requests.v[r] < old_pod->requests.v[r])
            return true;
    return false;
}

static bool strs_equal(const ls_str *a, uint32_t na, const ls_str *b, uint32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

static bool owner_refs_equal(const ls_pod *a, const ls_pod *b)
{
    if (a->n_owner_refs != b->n_owner_refs)
        return false;
    for (uint32_t i = 0; i < a->n_owner_refs; i++) {
        const ls_owner_ref *x = &a->owner_refs[i], *y = &b->owner_refs[i];
        if (x->kind != y->kind || x->name != y->name || x->uid != y->uid || x->controller != y->controller)
            return false;
    }
    return true;
}

/* What else of metadata and spec the scheduler keeps and a pod may change
 * (the rest of a pod's spec is immutable once created; a gated pod's
 * scheduling directives are handled by the gate's own path). */
static bool other_fields_changed(const ls_pod *a, const ls_pod *b)
{
    return a->deletion_ns != b->deletion_ns || a->priority != b->priority ||
           memcmp(&a->requests, &b->requests, sizeof a->requests) != 0 ||
           !strs_equal(a->images, a->n_images, b->images, b->n_images) || !owner_refs_equal(a, b) ||
           a->n_host_ports != b->n_host_ports || a->n_spread_constraints != b->n_spread_constraints ||
           a->n_affinity != b->n_affinity || a->n_anti_affinity != b->n_anti_affinity ||
           !labels_equal(&a->node_selector, &b->node_selector);
}

/* A generated ResourceClaim's name appeared in status.resourceClaimStatuses. */
static bool generated_claim_added(const ls_pod *old_pod, const ls_pod *new_pod)
{
    for (uint32_t i = 0; i < new_pod->n_resource_claims; i++) {
        uint8_t now = new_pod->resource_claims[i].state;
        uint8_t before = i < old_pod->n_resource_claims ? old_pod->resource_claims[i].state : LS_CLAIM_TEMPLATE_PENDING;
        if (before == LS_CLAIM_TEMPLATE_PENDING && now != LS_CLAIM_TEMPLATE_PENDING)
            return true;
    }
    return false;
}

uint32_t ls_pod_update_actions(const ls_pod *old_pod, const ls_pod *new_pod)
{
    uint32_t actions = 0;
    if (!labels_equal(&old_pod->labels, &new_pod->labels))
        actions |= LS_ACT_UPDATE_POD_LABEL;
    if (requests_scaled_down(old_pod, new_pod))
        actions |= LS_ACT_UPDATE_POD_SCALE_DOWN;
    if (old_pod->n_scheduling_gates > 0 && new_pod->n_scheduling_gates == 0)
        actions |= LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
    if (!tolerations_equal(old_pod, new_pod))
        actions |= LS_ACT_UPDATE_POD_TOLERATION;
    if (generated_claim_added(old_pod, new_pod))
        actions |= LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM;
    if (actions)
        return actions;
    bool gates_changed = !strs_equal(old_pod->scheduling_gates, old_pod->n_scheduling_gates,
                                     new_pod->scheduling_gates, new_pod->n_scheduling_gates);
    return gates_changed || other_fields_changed(old_pod, new_pod) ? LS_ACT_UPDATE_POD_OTHER : 0;
}

/* A registration for "Pod" takes every pod resource; the others only their own. */
static bool resource_matches(ls_str registered, ls_str incoming)
{
    static ls_str pod, assigned, unscheduled, target;
    if (!pod) {
        pod = ls_intern_cstr("Pod");
        assigned = ls_intern_cstr("AssignedPod");
        unscheduled = ls_intern_cstr("UnscheduledPod");
        target = ls_intern_cstr("TargetPod");
    }
    if (registered == incoming)
        return true;
    return registered == pod && (incoming == assigned || incoming == unscheduled || incoming == target);
}

bool ls_event_matches(ls_str reg_resource, uint32_t reg_actions, const ls_cluster_event *ev)
{
    static ls_str wildcard;
    if (!wildcard)
        wildcard = ls_intern_cstr("*");
    if (!ev->actions)
        return false;   /* nothing the scheduler looks at changed */
    if (reg_resource == wildcard && reg_actions == LS_ACT_ALL)
        return true;
    if (reg_resource != wildcard && !resource_matches(reg_resource, ev->resource))
        return false;
    return (reg_actions & ev->actions) != 0;
}
