/*
 * cluster.h: the embedded, in-memory cluster. It loads manifests (a dump of
 * real objects), plays the API server's part for the scheduler (events in,
 * bindings applied), and keeps the record of every pod's outcome so a run can
 * prove that no pod was lost.
 */
#ifndef LS_SIM_CLUSTER_H
#define LS_SIM_CLUSTER_H

#include "luasched/scheduler.h"
#include "sim/pv_controller.h"

#include <stdio.h>

typedef enum ls_pod_outcome {
    LS_POD_RUNNING = 0,      /* had spec.nodeName in the file */
    LS_POD_PENDING,          /* waiting for its first attempt */
    LS_POD_BOUND,            /* bound by this run */
    LS_POD_UNSCHEDULABLE,    /* pending with a recorded reason */
    LS_POD_GATED,            /* held by scheduling gates */
    LS_POD_NOT_OURS,         /* schedulerName names no profile */
    LS_POD_DELETED,          /* deleted by a timeline step */
    LS_POD_PREEMPTED,        /* evicted by preemption (DisruptionTarget recorded) */
} ls_pod_outcome;

typedef struct ls_sim_pod {
    ls_pod_obj *obj;
    ls_pod_outcome outcome;
    ls_str node;
    char *message;           /* the last failure's message */
    uint32_t attempts;
    uint32_t binds;          /* must end 0 or 1 */
    uint64_t bound_at_ms;    /* on the simulation's clock */
    uint64_t last_attempt_ms;
    uint64_t created_at_ms;  /* on the simulation's clock: 0 for the file's pods, the step's time for a timeline's */
    struct cJSON *json;      /* kept when a timeline may patch the pod */
    bool has_policy;         /* spec.preemptionPolicy was written (admission keeps it) */
    bool refused_delete;     /* the fault hook refused its deletion once */
    char where[256];         /* file:line, for admission errors */
} ls_sim_pod;

typedef struct ls_cluster ls_cluster;

typedef void (*ls_attempt_observer)(void *ud, const ls_attempt *a, const ls_cycle *cycle,
                                    const ls_scheduler *s);

ls_cluster *ls_cluster_new(void);
/* The registered name (plural.version.group) of a custom resource object, or
 * 0 for a kind the scheduler knows or a core/built-in group. */
ls_str ls_cluster_custom_resource_name(const struct cJSON *obj);
void ls_cluster_free(ls_cluster *c);
/* Adds the objects of a file; kinds the scheduler does not use are counted and
 * skipped. Errors name the file, line and field. */
bool ls_cluster_load_file(ls_cluster *c, const char *path, ls_error *err);
/* The same from text in memory (YAML or JSON documents); `source` names it in errors. */
bool ls_cluster_load_text(ls_cluster *c, const char *text, size_t len, const char *source, ls_error *err);
/* Prints the input warnings of the loaded files ("warning: file:line: Pod
 * ns/name: ...": unknown fields, a pod without containers, a node whose
 * allocatable lacks pods, cpu or memory) and one notice per skipped kind. */
void ls_cluster_print_notices(const ls_cluster *c, FILE *out);
/* --strict: input warnings are errors of the file (set before loading). */
void ls_cluster_set_strict(ls_cluster *c, bool strict);
uint32_t ls_cluster_num_input_warnings(const ls_cluster *c);
/* Every error of the files loaded (a load goes on past an error, up to 20
 * per file); a failed load's *err holds the first. */
uint32_t ls_cluster_num_load_errors(const ls_cluster *c);
const char *ls_cluster_load_error(const ls_cluster *c, uint32_t i);

/* The provisioner's behaviour (the --fault provision=... option); default OK. */
void ls_cluster_set_provision_fault(ls_cluster *c, ls_provision_fault fault);

/* Priority admission: a pod naming a PriorityClass (or none, with a
 * globalDefault class present) gets the class's value and preemptionPolicy. */
bool ls_cluster_admit(ls_cluster *c, ls_error *err);

/* The source side of the scheduler: bind and attempt reporting. */
/* The observer also sees an attempt pausing at Permit (a->permit ==
 * LS_PERMIT_WAITING) before its outcome. */
ls_sched_source ls_cluster_source(ls_cluster *c, ls_attempt_observer observer, void *observer_ud);
/* Delivers the cluster's objects to the scheduler as add events: nodes first,
 * then running pods, then pending pods in file order. */
void ls_cluster_start(ls_cluster *c, ls_scheduler *s);

bool ls_cluster_has_timeline(const ls_cluster *c);
/* Every PersistentVolumeClaim's state: namespace, name, phase, volumeName and
 * the selected node, when set (for output and tests). */
struct cJSON *ls_cluster_claims_json(const ls_cluster *c);
/* Every allocated DRA ResourceClaim: namespace, name, devices (each
 * "driver/pool/device" and the consumedCapacity of a share) and the names of
 * the pods in reservedFor (for output and tests). */
struct cJSON *ls_cluster_resource_claims_json(const ls_cluster *c);
/* The first timeline step that could not be applied (NULL when all were). */
const char *ls_cluster_warning(const ls_cluster *c);

/* After the run: pods still held by their scheduling gates become gated. */
void ls_cluster_finish(ls_cluster *c, const ls_scheduler *s);

uint32_t ls_cluster_num_pods(const ls_cluster *c);
/* Every node the cluster ever had, by index (0 .. ls_cluster_node_slots - 1);
 * NULL for one a timeline deleted. */
uint32_t ls_cluster_node_slots(const ls_cluster *c);
const ls_node *ls_cluster_node(const ls_cluster *c, uint32_t i);
/* Called each time the virtual clock moves, with the new time, before the
 * timeline steps due by then are played (a report samples the cluster). */
void ls_cluster_on_advance(ls_cluster *c, void (*fn)(void *ud, uint64_t now_ms), void *ud);
/* Agreement with a recording's Bindings document (luasched record): of the
 * recorded pods still in the cluster at the end, how many this run bound to
 * the node the live scheduler chose. False when the files had no Bindings. */
bool ls_cluster_agreement(const ls_cluster *c, uint32_t *same, uint32_t *total);
/* What the recording names as read by the scheduler but not recorded (its
 * Bindings document's notRecorded list), "KIND: reason; ..."; NULL when none. */
const char *ls_cluster_not_recorded(const ls_cluster *c);
/* The time of the timeline's last step; false without a timeline. */
bool ls_cluster_timeline_end(const ls_cluster *c, uint64_t *at_ms);
uint32_t ls_cluster_num_nodes(const ls_cluster *c);
const ls_sim_pod *ls_cluster_pod(const ls_cluster *c, uint32_t i);
/* An object of another kind ("Namespace", ..., "plural.version.group" for a
 * custom resource) by namespace (NULL or "" when cluster-scoped) and name;
 * NULL when the cluster has none. */
const struct ls_object *ls_cluster_find_object(const ls_cluster *c, const char *kind, const char *ns,
                                               const char *name);
/* The no-lost-pod invariant: every pod bound at most once, to an existing node,
 * and every pod running, bound, pending with a reason, gated or not ours. */
bool ls_cluster_check(const ls_cluster *c, ls_error *err);

#endif
