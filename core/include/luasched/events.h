/*
 * events.h: cluster events (upstream's ClusterEvent): a resource and a set of
 * action bits, derived from an object's old and new versions, and matched
 * against what plugins registered (EventsToRegister) to decide which
 * unschedulable pods deserve another try.
 */
#ifndef LUASCHED_EVENTS_H
#define LUASCHED_EVENTS_H

#include "luasched/model.h"

/* ffi:begin */
/* ActionType bits in upstream's (v1.34) order. The values are ours: never persist them. */
enum {
    LS_ACT_ADD = 1 << 0,
    LS_ACT_DELETE = 1 << 1,
    LS_ACT_UPDATE_NODE_ALLOCATABLE = 1 << 2,
    LS_ACT_UPDATE_NODE_LABEL = 1 << 3,
    LS_ACT_UPDATE_NODE_TAINT = 1 << 4,
    LS_ACT_UPDATE_NODE_CONDITION = 1 << 5,
    LS_ACT_UPDATE_NODE_ANNOTATION = 1 << 6,
    LS_ACT_UPDATE_POD_LABEL = 1 << 7,
    LS_ACT_UPDATE_POD_SCALE_DOWN = 1 << 8,
    LS_ACT_UPDATE_POD_TOLERATION = 1 << 9,
    LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10,
    LS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11,
    /* Any other change of a pod (upstream's unexported updatePodOther): only a
     * registration for "Update" or "All" matches it, no fine-grained one. */
    LS_ACT_UPDATE_POD_OTHER = 1 << 12,
    LS_ACT_ALL = (1 << 13) - 1,
    LS_ACT_UPDATE = LS_ACT_ALL & ~(LS_ACT_ADD | LS_ACT_DELETE)
};

/* What kind of object an event's old/new pointers are. */
enum { LS_OBJ_NONE = 0, LS_OBJ_POD = 1, LS_OBJ_NODE = 2, LS_OBJ_OTHER = 3 };

/* Pod events carry one of v1.37's pod resources: "AssignedPod" (a pod on a
 * node: added, updated, deleted, or a deleted nominated pod), "UnscheduledPod"
 * (another pending pod) or "TargetPod" (the rejected pod itself was updated).
 * A plugin that registers "Pod" gets all three. */
typedef struct ls_cluster_event {
    ls_str resource;          /* "AssignedPod", "TargetPod", "Node", ..., "plural.version.group", "*" */
    uint32_t actions;
    const char *label;        /* upstream's event label, e.g. "NodeAdd", "AssignedPodDelete" */
    uint8_t object_type;
    const void *old_obj;
    const void *new_obj;
    uint32_t origin_pod;      /* id + 1 of the pod whose scheduling attempt caused it (a plugin's
                               * object write during that attempt), 0 for any other: no news for that pod */
} ls_cluster_event;

/* Action names as plugins write them in `events` tables ("Add",
 * "UpdateNodeTaint", "Update", "All", ...); 0 when unknown. */
uint32_t ls_action_from_name(const char *name);
/* Resource names a plugin may register: the built-in kinds, "*", or a custom
 * resource "plural.version.group" (at least two dots). */
bool ls_resource_name_valid(const char *name);
/* A queueing hint's answer (upstream's QueueingHint): Queue or QueueSkip;
 * LS_HINT_FAILED is dispatch.hint's answer for a hint that raised or returned
 * something else (it counts as Queue, and the runtime counts it). */
enum { LS_HINT_QUEUE = 1, LS_HINT_SKIP = 0, LS_HINT_FAILED = 2 };
/* Does a registered (resource, actions) match the incoming event? (The test
 * kit's T.hint asks it too.) */
bool ls_event_matches(ls_str reg_resource, uint32_t reg_actions, const ls_cluster_event *ev);
/* ffi:end */

/* The fine-grained update actions between two versions of a node (upstream's
 * NodeSchedulingPropertiesChange); 0 when nothing the scheduler cares about changed. */
uint32_t ls_node_update_actions(const ls_node *old_node, const ls_node *new_node);
/* The same for a pod (PodSchedulingPropertiesChange); a change that maps to no
 * fine-grained action gives LS_ACT_UPDATE_POD_OTHER, and 0 when only what the
 * pod's status holds changed (phase, nominatedNodeName, start time,
 * conditions): such an update is not an event (the scheduler's own
 * PodScheduled=False patch comes back as one). */
uint32_t ls_pod_update_actions(const ls_pod *old_pod, const ls_pod *new_pod);


/* What cluster events cost: every event received, those some plugin
 * registered (the others stop at once), the unschedulable pods they visited
 * (hints asked) and the pods they moved to activeQ or backoffQ (requeues). */
typedef struct ls_event_stats {
    uint64_t events, registered, visited, requeued;
} ls_event_stats;
/* The same for one event label ("NodeAdd", "NodeUpdate", "AssignedPodAdd", ...). */
typedef struct ls_event_label_stats {
    const char *label;
    ls_event_stats stats;
} ls_event_label_stats;

#endif
