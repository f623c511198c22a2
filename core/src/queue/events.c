/*
 * events.c: cluster events: action names, resource names, the fine-grained
 * update actions derived from an object's old and new versions (upstream's
 * NodeSchedulingPropertiesChange / PodSchedulingPropertiesChange), and the
 * registered-event match.
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
    "*", "Pod", "Node", "PersistentVolume", "PersistentVolumeClaim",
    "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity",
    "storage.k8s.io/StorageClass", "storage.k8s.io/CSINode", "storage.k8s.io/CSIDriver",
    "storage.k8s.io/CSIStorageCapacity", "storage.k8s.io/VolumeAttachment", "VolumeAttachment",
    "resource.k8s.io/ResourceClaim", "resource.k8s.io/ResourceSlice", "resource.k8s.io/DeviceClass",
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
    return actions ? actions : LS_ACT_UPDATE;
}

bool ls_event_matches(ls_str reg_resource, uint32_t reg_actions, const ls_cluster_event *ev)
{
    static ls_str wildcard;
    if (!wildcard)
        wildcard = ls_intern_cstr("*");
    if (reg_resource == wildcard && reg_actions == LS_ACT_ALL)
        return true;
    if (reg_resource != wildcard && reg_resource != ev->resource)
        return false;
    return (reg_actions & ev->actions) != 0;
}
