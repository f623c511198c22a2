/*
 * model.h: the scheduler's view of Kubernetes objects. Pods and Nodes are
 * decoded once (from JSON or YAML, through one decoder) into flat, read-only
 * structs: strings interned, label maps sorted by key id, selectors compiled,
 * resource requests computed. Plugins read them as const cdata.
 */
#ifndef LUASCHED_MODEL_H
#define LUASCHED_MODEL_H

#include "luasched/base.h"

struct cJSON;

/* ffi:begin */
enum {
    LS_MAX_RESOURCES = 16,
    LS_RES_CPU = 0,            /* millicores */
    LS_RES_MEMORY = 1,         /* bytes */
    LS_RES_EPHEMERAL = 2,      /* bytes */
    LS_RES_PODS = 3,           /* allowed pod number (node side only) */
    LS_RES_FIRST_SCALAR = 4    /* extended resources, hugepages, ... */
};

/* @view Resources: a dense resource vector (pod.requests, ni.allocatable, ni.requested); slot i names ls.resource_name(i). */
typedef union ls_resources {
    struct { int64_t milli_cpu, memory, ephemeral_storage, pods; };  /* cpu in millicores, memory and ephemeral storage in bytes, pod count */
    int64_t v[16];                 /* every slot: v[ls.RES_CPU], v[ls.resource_index("nvidia.com/gpu")], ... */
} ls_resources;

/* @view Label: one label (or annotation): interned key and value. */
typedef struct ls_label {
    ls_str key;                    /* the key's id */
    ls_str value;                  /* the value's id */
} ls_label;
/* @view Labels: a label set, sorted by key id: read one with ls.label(labels, key_id). */
typedef struct ls_labels {
    uint32_t n;                    /* how many labels */
    const ls_label *items;         /* items[0] .. items[n - 1] */
} ls_labels;

enum {
    LS_OP_IN = 0, LS_OP_NOT_IN = 1, LS_OP_EXISTS = 2, LS_OP_DOES_NOT_EXIST = 3,
    LS_OP_GT = 4, LS_OP_LT = 5
};

/* @view Requirement: one requirement of a compiled selector (matchExpressions entry, or a matchLabels pair as In). */
typedef struct ls_requirement {
    ls_str key;                /* the label key's id */
    uint8_t op;                /* ls.OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT */
    uint32_t n_values;         /* how many values */
    const ls_str *values;      /* value ids, sorted by id */
    int64_t number;            /* operand of Gt / Lt */
} ls_requirement;

/* @view Selector: a compiled label selector. A null selector matches nothing, an empty one
 * matches everything (as metav1.LabelSelectorAsSelector); match it with ls.selector_matches. */
typedef struct ls_selector {
    uint8_t match_nothing;     /* 1 for a null selector */
    uint32_t n;                /* how many requirements (ANDed) */
    const ls_requirement *reqs;  /* reqs[0] .. reqs[n - 1] */
} ls_selector;

/* @view NodeSelectorTerm: matchExpressions on labels, matchFields on metadata.name. */
typedef struct ls_node_selector_term {
    ls_selector exprs;    /* matchExpressions */
    ls_selector fields;   /* matchFields: keys are the interned "metadata.name" */
} ls_node_selector_term;

/* @view NodeSelector: a required node affinity (terms ORed); ls.node_selector_matches. */
typedef struct ls_node_selector {
    uint32_t n_terms;     /* terms are ORed; a term with nothing in it matches no node */
    const ls_node_selector_term *terms;  /* terms[0] .. terms[n_terms - 1] */
} ls_node_selector;

/* @view PreferredTerm: a preferredDuringScheduling node affinity term. */
typedef struct ls_preferred_term {
    int32_t weight;              /* 1..100 */
    ls_node_selector_term term;  /* the preference; ls.node_selector_term_matches */
} ls_preferred_term;

/* @view PodAffinityTerm: a pod (anti-)affinity term. */
typedef struct ls_pod_affinity_term {
    ls_selector selector;          /* labelSelector (matchLabelKeys merged in) */
    uint8_t has_ns_selector;       /* namespaceSelector given */
    ls_selector ns_selector;       /* namespaceSelector */
    uint32_t n_namespaces;         /* namespaces; the pod's own when both are empty */
    const ls_str *namespaces;      /* namespace ids */
    ls_str topology_key;           /* topologyKey's id */
} ls_pod_affinity_term;

/* @view WeightedPodAffinityTerm: a preferred pod (anti-)affinity term. */
typedef struct ls_weighted_pod_affinity_term {
    int32_t weight;                /* 1..100 */
    ls_pod_affinity_term term;     /* the term */
} ls_weighted_pod_affinity_term;

enum { LS_EFFECT_ALL = 0, LS_EFFECT_NO_SCHEDULE = 1, LS_EFFECT_PREFER_NO_SCHEDULE = 2, LS_EFFECT_NO_EXECUTE = 3 };
enum { LS_TOL_EQUAL = 0, LS_TOL_EXISTS = 1 };

/* @view Taint: a node taint (node.taints[i]). */
typedef struct ls_taint {
    ls_str key;                    /* the key's id */
    ls_str value;                  /* the value's id (0 when absent) */
    uint8_t effect;                /* ls.EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, EFFECT_NO_EXECUTE */
} ls_taint;
/* @view Toleration: a pod toleration (pod.tolerations[i]). */
typedef struct ls_toleration {
    ls_str key;                    /* the key's id (0: every key, with Exists) */
    ls_str value;                  /* the value's id */
    uint8_t op;                    /* ls.TOL_EQUAL or ls.TOL_EXISTS */
    uint8_t effect;                /* ls.EFFECT_* (ls.EFFECT_ALL when unset) */
} ls_toleration;

enum { LS_DO_NOT_SCHEDULE = 0, LS_SCHEDULE_ANYWAY = 1 };
enum { LS_POLICY_HONOR = 0, LS_POLICY_IGNORE = 1 };

/* @view SpreadConstraint: a topologySpreadConstraints entry. */
typedef struct ls_spread_constraint {
    int32_t max_skew;              /* maxSkew */
    ls_str topology_key;           /* topologyKey's id */
    uint8_t when_unsatisfiable;    /* ls.DO_NOT_SCHEDULE or ls.SCHEDULE_ANYWAY */
    int32_t min_domains;           /* 1 when unset */
    uint8_t node_affinity_policy;  /* ls.POLICY_HONOR or ls.POLICY_IGNORE: Honor when unset */
    uint8_t node_taints_policy;    /* ls.POLICY_*: Ignore when unset */
    ls_selector selector;          /* matchLabelKeys merged in */
} ls_spread_constraint;

enum { LS_PROTO_TCP = 0, LS_PROTO_UDP = 1, LS_PROTO_SCTP = 2 };

/* @view HostPort: a host port a container asks for (pod.host_ports) or a node uses (ni.used_ports). */
typedef struct ls_host_port {
    ls_str host_ip;                /* "0.0.0.0" when unset */
    uint8_t protocol;              /* ls.PROTO_TCP, PROTO_UDP, PROTO_SCTP */
    int32_t port;                  /* hostPort */
} ls_host_port;

/* @view OwnerRef: a metadata.ownerReferences entry. */
typedef struct ls_owner_ref {
    ls_str kind;                   /* kind's id ("ReplicaSet", ...) */
    ls_str name;                   /* the owner's name id */
    ls_str uid;                    /* the owner's uid id */
    uint8_t controller;            /* 1 when controller: true */
} ls_owner_ref;

/* The volume sources the volume plugins look at; any other source is OTHER. */
enum {
    LS_VOL_OTHER = 0, LS_VOL_PVC = 1, LS_VOL_EPHEMERAL = 2, LS_VOL_GCE_PD = 3, LS_VOL_AWS_EBS = 4,
    LS_VOL_ISCSI = 5, LS_VOL_RBD = 6, LS_VOL_AZURE_DISK = 7, LS_VOL_CINDER = 8, LS_VOL_CSI = 9,
    LS_VOL_PORTWORX = 10
};

/* @view Volume: a spec.volumes entry as the volume plugins read it. */
typedef struct ls_volume {
    ls_str name;                   /* the volume's name id */
    uint8_t source;                /* LS_VOL_* */
    uint8_t read_only;             /* readOnly of the source */
    ls_str claim;                  /* PVC: claimName; EPHEMERAL: "<pod>-<volume>" */
    ls_str handle;                 /* pdName, volumeID, diskURI, iqn, rbd image, csi driver */
    ls_str pool;                   /* rbd pool */
    uint32_t n_monitors;           /* rbd monitors */
    const ls_str *monitors;        /* rbd monitors (ids) */
} ls_volume;

enum {
    LS_PHASE_PENDING = 0, LS_PHASE_RUNNING = 1, LS_PHASE_SUCCEEDED = 2,
    LS_PHASE_FAILED = 3, LS_PHASE_UNKNOWN = 4
};
enum { LS_PREEMPT_LOWER_PRIORITY = 0, LS_PREEMPT_NEVER = 1 };

/* One entry of spec.resourceClaims (DynamicResources). claim_name is the
 * ResourceClaim's name: resourceClaimName, or for a template the name that
 * status.resourceClaimStatuses gives (upstream's resourceclaim.Name). */
enum { LS_CLAIM_NAMED = 0, LS_CLAIM_TEMPLATE_PENDING = 1, LS_CLAIM_TEMPLATE_CREATED = 2, LS_CLAIM_TEMPLATE_NONE = 3,
       LS_CLAIM_UNSUPPORTED = 4 };
/* @view PodClaim: a spec.resourceClaims entry (DynamicResources), resolved against status. */
typedef struct ls_pod_claim {
    ls_str name;                   /* spec.resourceClaims[].name */
    ls_str claim_name;             /* 0 unless NAMED or TEMPLATE_CREATED */
    uint8_t state;                 /* ls.CLAIM_NAMED; a template: CLAIM_TEMPLATE_PENDING, _CREATED, _NONE (null name) */
} ls_pod_claim;

/* A ResourceList as given, in its order: slot names ls_resource_name(slot);
 * cpu in millicores, everything else in units (bytes for memory). */
/* @view Quantity: one entry of a resource list. */
typedef struct ls_quantity {
    uint32_t slot;                 /* the resource's slot: ls.resource_name(slot) */
    int64_t value;                 /* cpu in millicores, else units (bytes for memory) */
} ls_quantity;
/* @view ResourceList: a ResourceList as given, in its order; ls.quantity(list, "cpu"), ls.resource_table(list). */
typedef struct ls_resource_list {
    uint32_t n;                    /* how many entries */
    const ls_quantity *items;      /* items[0] .. items[n - 1] */
} ls_resource_list;

/* QoS class (status.qosClass when set, else computed as upstream's ComputePodQOS). */
enum { LS_QOS_BEST_EFFORT = 0, LS_QOS_BURSTABLE = 1, LS_QOS_GUARANTEED = 2 };
/* An init container with restartPolicy Always is a sidecar. */
enum { LS_CONTAINER_REGULAR = 0, LS_CONTAINER_SIDECAR = 1, LS_CONTAINER_INIT = 2 };

/* @view ContainerPort: a container's ports entry (pod.ports[i], container.ports[i]). */
typedef struct ls_container_port {
    ls_str name;                   /* 0 when unset */
    int32_t container_port;        /* containerPort */
    int32_t host_port;             /* 0 when unset */
    uint8_t protocol;              /* LS_PROTO_* (TCP when unset) */
    ls_str host_ip;                /* 0 when unset */
    uint32_t container;            /* index in pod.containers */
} ls_container_port;

/* @view Container: an init or regular container (pod.containers[i]). */
typedef struct ls_container {
    ls_str name;                   /* the container's name id */
    ls_str image;                  /* image as written (pod.images holds the normalized ones) */
    uint8_t kind;                  /* LS_CONTAINER_* */
    ls_resource_list requests;     /* resources.requests, a limit without a request added (API defaulting) */
    ls_resource_list limits;       /* resources.limits */
    uint32_t n_ports;              /* how many ports */
    const ls_container_port *ports;  /* ports[0] .. ports[n_ports - 1] */
} ls_container;

/* @view ContainerStatus: status.containerStatuses[] and initContainerStatuses[] (in-place resize). */
typedef struct ls_container_status {
    ls_str name;                   /* the container's name id */
    uint8_t init;                  /* from initContainerStatuses */
    uint8_t has_allocated;         /* allocatedResources present */
    uint8_t has_resources;         /* resources present */
    ls_resource_list allocated;    /* allocatedResources */
    ls_resource_list requests;     /* resources.requests */
    ls_resource_list limits;       /* resources.limits */
} ls_container_status;

/* @view PodCondition: a status.conditions entry of a pod. */
typedef struct ls_pod_condition {
    ls_str type;                   /* "PodScheduled", "Ready", ... (an id) */
    ls_str status;                 /* "True", "False", "Unknown" (an id) */
    ls_str reason;                 /* reason's id (0 when absent) */
} ls_pod_condition;

/* @view Pod: a pod as every hook receives it (`pod`), and the pods on a node
 * (ni.pods[i]). Strings are interned ids (ls.str), lists 0-based with their count beside them. */
typedef struct ls_pod {
    uint32_t id;                   /* slot in the owning table; stable while the pod lives (reused after) */
    ls_str uid;                    /* metadata.uid */
    ls_str name;                   /* metadata.name */
    ls_str ns;                     /* metadata.namespace */
    ls_str scheduler_name;         /* spec.schedulerName */
    ls_str node_name;              /* spec.nodeName (0 while pending) */
    ls_str nominated_node_name;    /* status.nominatedNodeName */
    ls_str priority_class_name;    /* spec.priorityClassName */
    ls_labels labels;              /* metadata.labels; ls.label(pod.labels, key_id) */
    int32_t priority;              /* spec.priority (resolved from the PriorityClass) */
    uint8_t has_priority;          /* a priority was given or resolved */
    uint8_t preemption_policy;     /* ls.PREEMPT_LOWER_PRIORITY or ls.PREEMPT_NEVER */
    uint8_t phase;                 /* status.phase: ls.PHASE_* */
    uint8_t has_affinity;                  /* any pod affinity or anti-affinity */
    uint8_t has_required_anti_affinity;    /* a required pod anti-affinity term */
    int64_t creation_ns;           /* metadata.creationTimestamp, unix nanoseconds; 0 = absent */
    int64_t deletion_ns;           /* metadata.deletionTimestamp, unix nanoseconds; 0 = absent */
    int64_t start_ns;              /* status.startTime, unix nanoseconds; 0 = absent */
    uint64_t seq;                          /* arrival order, ties after the timestamp */

    ls_resources requests;                 /* PodRequests: containers, sidecars, init max, overhead */
    int64_t nonzero_milli_cpu;     /* cpu for node sums: 100m for what nothing sets */
    int64_t nonzero_memory;        /* memory for node sums: 200Mi for what nothing sets */
    int64_t scoring_milli_cpu;     /* NodeResourcesFit scoring cpu: 100m per container that sets none, then pod level */
    int64_t scoring_memory;        /* NodeResourcesFit scoring memory: 200Mi per container that sets none, then pod level */
    uint8_t requests_nothing;              /* every request is zero */

    uint32_t n_host_ports;                 /* how many host_ports */
    const ls_host_port *host_ports;        /* regular containers' ports with hostPort > 0 */
    uint32_t n_images;                     /* how many images */
    const ls_str *images;                  /* normalized (":latest" added): init, regular, image volumes */
    uint32_t n_required_features;          /* how many required_features */
    const ls_str *required_features;       /* NodeDeclaredFeatures inferred from the spec, sorted by name */

    ls_labels node_selector;               /* spec.nodeSelector */
    uint8_t has_required_node_affinity;    /* requiredDuringSchedulingIgnoredDuringExecution given */
    ls_node_selector required_node_affinity;  /* the required node affinity */
    uint32_t n_preferred_node_affinity;    /* how many preferred node affinity terms */
    const ls_preferred_term *preferred_node_affinity;  /* preferredDuringScheduling node affinity */

    uint32_t n_affinity;                   /* how many required pod affinity terms */
    uint32_t n_anti_affinity;              /* how many required pod anti-affinity terms */
    uint32_t n_preferred_affinity;         /* how many preferred pod affinity terms */
    uint32_t n_preferred_anti_affinity;    /* how many preferred pod anti-affinity terms */
    const ls_pod_affinity_term *affinity;  /* required pod affinity */
    const ls_pod_affinity_term *anti_affinity;  /* required pod anti-affinity */
    const ls_weighted_pod_affinity_term *preferred_affinity;       /* preferred pod affinity */
    const ls_weighted_pod_affinity_term *preferred_anti_affinity;  /* preferred pod anti-affinity */

    uint32_t n_tolerations;                /* how many tolerations */
    const ls_toleration *tolerations;      /* spec.tolerations */
    uint32_t n_spread_constraints;         /* how many spread constraints */
    const ls_spread_constraint *spread_constraints;  /* spec.topologySpreadConstraints */
    uint32_t n_scheduling_gates;           /* how many scheduling gates */
    const ls_str *scheduling_gates;        /* spec.schedulingGates names */
    uint32_t n_owner_refs;                 /* how many owner references */
    const ls_owner_ref *owner_refs;        /* metadata.ownerReferences */
    uint32_t n_resource_claims;            /* how many resource claims */
    const ls_pod_claim *resource_claims;   /* spec.resourceClaims, resolved against status */
    uint32_t n_volumes;                    /* spec.volumes, in order */
    const ls_volume *volumes;              /* the volumes */

    ls_labels annotations;                 /* metadata.annotations; read with ls.label as labels */
    uint8_t qos_class;                     /* LS_QOS_* */
    uint32_t n_containers;                 /* initContainers then containers, each in spec order */
    const ls_container *containers;        /* containers[0] .. containers[n_containers - 1] */
    uint32_t n_ports;                      /* every container's ports, in container order */
    const ls_container_port *ports;        /* ports[0] .. ports[n_ports - 1] */
    uint8_t has_resources;                 /* spec.resources present */
    ls_resource_list resources_requests;   /* spec.resources.requests, as the API server defaults them */
    ls_resource_list resources_limits;     /* spec.resources.limits */
    ls_resource_list overhead;             /* spec.overhead */
    uint32_t n_conditions;                 /* how many status.conditions */
    const ls_pod_condition *conditions;    /* status.conditions; ls.condition(pod, "Ready") */
    uint32_t n_container_statuses;         /* containerStatuses then initContainerStatuses */
    const ls_container_status *container_statuses;  /* the container statuses */
    uint8_t has_allocated_resources;       /* status.allocatedResources present */
    ls_resource_list allocated_resources;  /* status.allocatedResources */
    ls_resource_list status_requests;      /* status.resources.requests */
    ls_resource_list status_limits;        /* status.resources.limits */
    /* The Workload API's gang membership (GangScheduling): v1.36+
     * spec.schedulingGroup.podGroupName; 0 when absent. */
    ls_str pod_group_name;
    ls_str workload_name;                  /* v1.35's spec.workloadRef: the Workload's name; 0 when absent */
    ls_str workload_pod_group;             /* v1.35's spec.workloadRef: the pod group inside it; 0 when absent */
} ls_pod;

/* @view NodeImage: a status.images entry of a node. */
typedef struct ls_node_image {
    uint32_t n_names;              /* how many names */
    const ls_str *names;           /* the image's names (ids) */
    int64_t size;                  /* sizeBytes */
} ls_node_image;
/* @view NodeCondition: a status.conditions entry of a node. */
typedef struct ls_node_condition {
    ls_str type;                   /* "Ready", "MemoryPressure", ... (an id) */
    ls_str status;                 /* "True", "False", "Unknown" (an id) */
} ls_node_condition;

/* @view Node: a Node object (ni.node in the hooks, which get NodeInfos). */
typedef struct ls_node {
    uint32_t id;                   /* slot in the owning table */
    ls_str name;                   /* metadata.name */
    ls_str uid;                    /* metadata.uid */
    ls_labels labels;              /* metadata.labels; ls.label(ni.node.labels, key_id) */
    uint32_t n_taints;             /* how many taints */
    const ls_taint *taints;        /* spec.taints */
    uint8_t unschedulable;         /* spec.unschedulable (cordoned) */
    ls_resources capacity;         /* status.capacity */
    ls_resources allocatable;      /* status.allocatable */
    uint32_t n_images;             /* how many images */
    const ls_node_image *images;   /* status.images */
    uint32_t n_conditions;         /* how many conditions */
    const ls_node_condition *conditions;  /* status.conditions; ls.condition(ni.node, "Ready") */
    uint32_t n_declared_features;  /* how many declared features */
    const ls_str *declared_features;       /* status.declaredFeatures */
    ls_labels annotations;                 /* metadata.annotations; read with ls.label as labels */
} ls_node;

/* Helpers that plugins call through the FFI (cheap, JIT-inlined calls). */
ls_str ls_labels_get(const ls_labels *labels, ls_str key);   /* 0 when absent */
bool ls_labels_has(const ls_labels *labels, ls_str key);
bool ls_selector_matches(const ls_selector *sel, const ls_labels *labels);
bool ls_node_selector_term_matches(const ls_node_selector_term *t, const ls_node *node);
bool ls_node_selector_matches(const ls_node_selector *s, const ls_node *node);
/* nodeSelector and required node affinity (NodeAffinity's filter core). */
bool ls_pod_matches_node_affinity(const ls_pod *pod, const ls_node *node);
bool ls_toleration_tolerates(const ls_toleration *t, const ls_taint *taint);
bool ls_tolerations_tolerate(const ls_toleration *t, uint32_t n, const ls_taint *taint);
/* Index of the first taint whose effect is in effect_mask (1 << LS_EFFECT_*) that
 * the tolerations do not tolerate; -1 when all are tolerated. */
int32_t ls_find_untolerated_taint(const ls_taint *taints, uint32_t n_taints,
                                  const ls_toleration *tols, uint32_t n_tols, uint32_t effect_mask);
const char *ls_resource_name(uint32_t index);
/* A quantity text ("1500m", "3Gi", "250000n") times 10^scale (3: milli-units,
 * 0: units, 0..9), rounded up; false on garbage, overflow or another scale. */
bool ls_quantity_value(const char *text, int32_t scale, int64_t *out);
/* The value of slot `slot` in a list; false (and *value 0) when it is not in it. */
bool ls_resource_list_get(const ls_resource_list *list, uint32_t slot, int64_t *value);
int32_t ls_resource_index(const char *name);    /* -1 when unknown */
uint32_t ls_resource_count(void);

/* What loaded plugins declared they read beyond the flat fields (a plugin's
 * `object_data` list): the whole Pod / Node (the decoder then keeps each
 * object's JSON for ls.pod_data / ls.node_data), NodeMetrics / PodMetrics
 * (`luasched run` then polls metrics.k8s.io). Process-wide; bits only add. */
enum { LS_WANT_POD_JSON = 1, LS_WANT_NODE_JSON = 2, LS_WANT_NODE_METRICS = 4, LS_WANT_POD_METRICS = 8 };
void ls_model_want(uint32_t bits);
uint32_t ls_model_wanted(void);
/* The object's JSON as decoded, or NULL when it was not kept. Every pod and
 * node the scheduler sees comes from ls_pod_decode / ls_node_decode. */
const char *ls_pod_json(const ls_pod *pod);
const char *ls_node_json(const ls_node *node);

/* One object from JSON or YAML text (the plugin author's kit and the specs use
 * these; the cluster loader decodes whole files). NULL with err filled on error. */
const ls_pod *ls_pod_parse(const char *text, size_t len, const char *source, ls_error *err);
const ls_node *ls_node_parse(const char *text, size_t len, const char *source, ls_error *err);
void ls_pod_release(const ls_pod *pod);
void ls_node_release(const ls_node *node);
/* A cluster file's documents (YAML or JSON text, Lists expanded as the cluster
 * loader expands them), each as compact JSON on a line of its own (compact JSON
 * has no raw newline). NULL with err filled on error; free with ls_text_free. */
char *ls_documents_json(const char *text, size_t len, const char *source, ls_error *err);
void ls_text_free(char *text);
/* ffi:end */

/* Resource names: cpu, memory, ephemeral-storage, pods are fixed; others get
 * the next free slot on first sight. Returns -1 (and fills err) when full. */
int32_t ls_resource_intern(const char *name, ls_error *err);

/* Kubernetes quantities ("100m", "1Gi", "1.5e3", "2"): the value times 10^scale,
 * rounded up as resource.Quantity's ScaledValue does. scale 0 for bytes, 3 for
 * millicores. False on garbage or on overflow of int64. */
bool ls_quantity_parse(const char *s, int scale, int64_t *out, ls_error *err);

/* Decoding. Each object owns an arena holding everything it points to. */
typedef struct ls_pod_obj { ls_pod pod; ls_arena arena; const char *json; } ls_pod_obj;
typedef struct ls_node_obj { ls_node node; ls_arena arena; const char *json; } ls_node_obj;

/* Whether ls_pod_decode / ls_node_decode keep each object's JSON text (in its
 * arena; `json` above, NULL otherwise): on once a configuration with
 * extenders is loaded (their wire format carries whole Pods and Nodes), for
 * the rest of the process; the same as ls_model_want(LS_WANT_POD_JSON |
 * LS_WANT_NODE_JSON). A plugin's object_data declaration turns on one kind. */
void ls_model_keep_json(bool on);

/* Where an object came from, for error messages: "file.yaml:12" or a field path. */
typedef struct ls_decode_ctx {
    const char *source;                       /* file name or "<stdin>" */
    int (*line_of)(const struct cJSON *item, void *ud);  /* may be NULL (JSON input) */
    void *line_ud;
} ls_decode_ctx;

ls_pod_obj *ls_pod_decode(const struct cJSON *obj, const ls_decode_ctx *ctx, ls_error *err);
ls_node_obj *ls_node_decode(const struct cJSON *obj, const ls_decode_ctx *ctx, ls_error *err);
void ls_pod_obj_free(ls_pod_obj *p);
void ls_node_obj_free(ls_node_obj *n);

/* Compiles a metav1.LabelSelector JSON object ("matchLabels"/"matchExpressions")
 * into arena memory. A NULL json gives the null selector (matches nothing). */
bool ls_selector_compile(const struct cJSON *json, ls_arena *a, ls_selector *out,
                         const char *field_path, ls_error *err);
/* Parses "2006-01-02T15:04:05Z" (RFC 3339, optional fraction and offset). */
bool ls_time_parse(const char *s, int64_t *unix_ns);
/* Image name normalisation used by ImageLocality: ":latest" when no tag. */
ls_str ls_image_normalize(const char *image);

#endif
