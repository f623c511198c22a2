/*
 * decode.c: v1 Pod and v1 Node JSON (cJSON trees, from the API server or from
 * the YAML loader) into the flat structs of model.h.
 *
 * Decoding is done once per object version, so it also does the work that would
 * otherwise repeat every scheduling cycle: the pod's resource requests and its
 * host ports and normalized images (decode_containers.c), the node features it
 * needs, and its selectors compiled with matchLabelKeys merged in. Everything an
 * object points to lives in its own arena, so it is freed in one call.
 *
 * Validation follows the API server wherever a mistake would otherwise change
 * scheduling silently. Every error names the source, the line (when the input
 * has lines), the object and the field path (decode_access.c's helpers, shared
 * through decode_internal.h; every list goes through dec_list).
 */
#include "decode_internal.h"
#include "luasched/feature_gates.h"
#include "decode_extra.h"
#include "labels_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tolerations and taints ------------------------------------------------ */

static const char *const effect_names[] = {NULL, "NoSchedule", "PreferNoSchedule", "NoExecute"};
static const char *const toleration_ops[] = {"Equal", "Exists"};

static bool decode_toleration(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_toleration *t = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_get_str(d, j, "key", &t->key) || !dec_get_str(d, j, "value", &t->value) ||
        !dec_get_enum(d, j, "operator", toleration_ops, 2, false, &t->op) ||
        !dec_get_enum(d, j, "effect", effect_names, 4, false, &t->effect))
        return false;
    /* The API server rejects these; matching would quietly mean something else. */
    if (!t->key && t->op != LS_TOL_EXISTS)
        return dec_fail_member(d, j, "operator", "must be Exists when key is empty");
    if (t->op == LS_TOL_EXISTS && t->value)
        return dec_fail_member(d, j, "value", "must be empty when operator is Exists");
    return true;
}

static bool decode_taint(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_taint *t = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    return dec_require_str(d, j, "key", &t->key) && dec_get_str(d, j, "value", &t->value) &&
           dec_get_enum(d, j, "effect", effect_names, 4, true, &t->effect);
}

/* ---- affinity ---------------------------------------------------------------- */

static bool get_weight(dec *d, const cJSON *j, int32_t *w)
{
    bool present;
    if (!dec_get_int32(d, j, "weight", w, &present))
        return false;
    if (!present)
        return dec_fail_member(d, j, "weight", "required");
    if (*w < 1 || *w > 100)
        return dec_fail_member(d, j, "weight", "must be in the range 1-100");
    return true;
}

static bool decode_node_term_item(dec *d, const cJSON *j, void *out, void *ctx)
{
    return dec_node_term(d, j, ctx, out);
}

static bool decode_required_node_affinity(dec *d, const cJSON *na, ls_pod *pod)
{
    const cJSON *req, *terms;
    list_out l;
    if (!dec_get_object(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &req))
        return false;
    if (!req)
        return true;
    size_t mark = dec_path_field(d, "requiredDuringSchedulingIgnoredDuringExecution");
    if (!dec_get_array(d, req, "nodeSelectorTerms", &terms))
        return false;
    if (dec_size_of(terms) == 0)
        return dec_fail_member(d, req, "nodeSelectorTerms", "must have at least one node selector term");
    dec_path_field(d, "nodeSelectorTerms");
    if (!dec_items(d, terms, sizeof(ls_node_selector_term), decode_node_term_item, (void *)terms, &l))
        return false;
    pod->has_required_node_affinity = 1;
    pod->required_node_affinity.n_terms = l.n;
    pod->required_node_affinity.terms = l.items;
    dec_path_pop(d, mark);
    return true;
}

static bool decode_preferred_node_term(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_preferred_term *p = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!get_weight(d, j, &p->weight))
        return false;
    size_t mark = dec_path_field(d, "preference");
    if (!dec_node_term(d, ls_json_member(j, "preference"), j, &p->term))
        return false;
    dec_path_pop(d, mark);
    return true;
}

/* matchLabelKeys / mismatchLabelKeys: each key the pod itself carries becomes
 * `key In (value)` / `key NotIn (value)` ANDed into the selector. */
static bool merge_label_keys(dec *d, const cJSON *obj, const char *name, uint8_t op,
                             const ls_labels *labels, ls_selector *sel)
{
    uint32_t n = 0;
    const ls_str *keys = NULL;
    if (!dec_strings(d, obj, name, &n, &keys))
        return false;
    ls_requirement *reqs = ls_arena_alloc(d->a, n * sizeof *reqs);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!ls_labels_has(labels, keys[i]))
            continue;
        ls_str *v = ls_arena_alloc(d->a, sizeof *v);
        *v = ls_labels_get(labels, keys[i]);
        reqs[k++] = (ls_requirement){.key = keys[i], .op = op, .n_values = 1, .values = v};
    }
    ls_selector_and(sel, reqs, k, d->a);
    return true;
}

static bool decode_affinity_term(dec *d, const cJSON *j, void *out, void *ctx)
{
    ls_pod_affinity_term *t = out;
    const ls_pod *pod = ctx;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_selector(d, j, "labelSelector", &t->selector) ||
        !dec_strings(d, j, "namespaces", &t->n_namespaces, &t->namespaces) ||
        !dec_require_str(d, j, "topologyKey", &t->topology_key))
        return false;
    if (ls_json_member(j, "namespaceSelector")) {
        t->has_ns_selector = 1;
        if (!dec_selector(d, j, "namespaceSelector", &t->ns_selector))
            return false;
    }
    if (t->n_namespaces == 0 && !t->has_ns_selector) {
        ls_str *own = ls_arena_alloc(d->a, sizeof *own);
        *own = pod->ns;
        t->n_namespaces = 1;
        t->namespaces = own;
    }
    return merge_label_keys(d, j, "matchLabelKeys", LS_OP_IN, &pod->labels, &t->selector) &&
           merge_label_keys(d, j, "mismatchLabelKeys", LS_OP_NOT_IN, &pod->labels, &t->selector);
}

static bool decode_weighted_term(dec *d, const cJSON *j, void *out, void *ctx)
{
    ls_weighted_pod_affinity_term *w = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!get_weight(d, j, &w->weight))
        return false;
    const cJSON *term = ls_json_member(j, "podAffinityTerm");
    if (!term)
        return dec_fail_member(d, j, "podAffinityTerm", "required");
    size_t mark = dec_path_field(d, "podAffinityTerm");
    if (!decode_affinity_term(d, term, &w->term, ctx))
        return false;
    dec_path_pop(d, mark);
    return true;
}

typedef struct affinity_out {
    uint32_t *n_required, *n_preferred;
    const ls_pod_affinity_term **required;
    const ls_weighted_pod_affinity_term **preferred;
} affinity_out;





/* podAffinity or podAntiAffinity. */
/* podAffinity or podAntiAffinity. */
/* podAffinity or podAntiAffinity. */
static bool decode_pod_affinity(dec *d, const cJSON *aff, const char *name, const ls_pod *pod,
                                const affinity_out *o)
{
    const cJSON *pa, *req, *pref;
    list_out r, p;
    if (!dec_get_object(d, aff, name, &pa))
        return false;
    if (!pa)
        return true;
    size_t mark = dec_path_field(d, name);
    if (!dec_get_array(d, pa, "requiredDuringSchedulingIgnoredDuringExecution", &req) ||
        !dec_get_array(d, pa, "preferredDuringSchedulingIgnoredDuringExecution", &pref))
        return false;
    size_t m = dec_path_field(d, "requiredDuringSchedulingIgnoredDuringExecution");
    if (!dec_items(d, req, sizeof(ls_pod_affinity_term), decode_affinity_term, (void *)pod, &r))
        return false;
    dec_path_pop(d, m);
    dec_path_field(d, "preferredDuringSchedulingIgnoredDuringExecution");
    if (!dec_items(d, pref, sizeof(ls_weighted_pod_affinity_term), decode_weighted_term, (void *)pod, &p))
        return false;
    *o->n_required = r.n;
    *o->required = r.items;
    *o->n_preferred = p.n;
    *o->preferred = p.items;
    dec_path_pop(d, mark);
    return true;
}

static bool decode_affinity(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *aff, *na;
    if (!dec_get_object(d, spec, "affinity", &aff))
        return false;
    if (!aff)
        return true;
    size_t mark = dec_path_field(d, "affinity");
    if (!dec_get_object(d, aff, "nodeAffinity", &na))
        return false;
    if (na) {
        size_t m = dec_path_field(d, "nodeAffinity");
        if (!decode_required_node_affinity(d, na, pod) ||
            !DEC_LIST_INTO(d, na, "preferredDuringSchedulingIgnoredDuringExecution", decode_preferred_node_term, NULL,
                           pod, preferred_node_affinity))
            return false;
        dec_path_pop(d, m);
    }
    affinity_out in = {&pod->n_affinity, &pod->n_preferred_affinity, &pod->affinity, &pod->preferred_affinity};
    affinity_out anti = {&pod->n_anti_affinity, &pod->n_preferred_anti_affinity, &pod->anti_affinity,
                         &pod->preferred_anti_affinity};
    if (!decode_pod_affinity(d, aff, "podAffinity", pod, &in) ||
        !decode_pod_affinity(d, aff, "podAntiAffinity", pod, &anti))
        return false;
    pod->has_affinity = pod->n_affinity || pod->n_anti_affinity || pod->n_preferred_affinity ||
                        pod->n_preferred_anti_affinity;
    pod->has_required_anti_affinity = pod->n_anti_affinity > 0;
    dec_path_pop(d, mark);
    return true;
}

/* ---- topology spread, gates, owners ------------------------------------------ */

static const char *const unsatisfiable_names[] = {"DoNotSchedule", "ScheduleAnyway"};
static const char *const policy_names[] = {"Honor", "Ignore"};

static bool decode_spread(dec *d, const cJSON *j, void *out, void *ctx)
{
    ls_spread_constraint *c = out;
    const ls_pod *pod = ctx;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    bool has_skew, has_min;
    c->min_domains = 1;
    c->node_affinity_policy = LS_POLICY_HONOR;
    c->node_taints_policy = LS_POLICY_IGNORE;
    if (!dec_get_int32(d, j, "maxSkew", &c->max_skew, &has_skew) ||
        !dec_require_str(d, j, "topologyKey", &c->topology_key) ||
        !dec_get_enum(d, j, "whenUnsatisfiable", unsatisfiable_names, 2, true, &c->when_unsatisfiable) ||
        !dec_get_int32(d, j, "minDomains", &c->min_domains, &has_min) ||
        !dec_get_enum(d, j, "nodeAffinityPolicy", policy_names, 2, false, &c->node_affinity_policy) ||
        !dec_get_enum(d, j, "nodeTaintsPolicy", policy_names, 2, false, &c->node_taints_policy))
        return false;
    if (!has_skew)
        return dec_fail_member(d, j, "maxSkew", "required");
    if (c->max_skew <= 0)
        return dec_fail_member(d, j, "maxSkew", "must be greater than zero");
    if (has_min && c->min_domains <= 0)
        return dec_fail_member(d, j, "minDomains", "must be greater than zero");
    /* --feature-gates MatchLabelKeysInPodTopologySpread=false: matchLabelKeys is not read */
    return dec_selector(d, j, "labelSelector", &c->selector) &&
           (!ls_feature_enabled(LS_FG_MatchLabelKeysInPodTopologySpread) ||
            merge_label_keys(d, j, "matchLabelKeys", LS_OP_IN, &pod->labels, &c->selector));
}

static bool decode_gate(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    return dec_require_str(d, j, "name", out);
}

/* spec.resourceClaims: a claim by name, or by template (resolved in status). */
static bool decode_resource_claim(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_pod_claim *c = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    ls_str template_name = 0;
    if (!dec_require_str(d, j, "name", &c->name) || !dec_get_str(d, j, "resourceClaimName", &c->claim_name) ||
        !dec_get_str(d, j, "resourceClaimTemplateName", &template_name))
        return false;
    if (c->claim_name && template_name)
        return dec_fail(d, j, "resourceClaimName and resourceClaimTemplateName are mutually exclusive");
    c->state = c->claim_name ? LS_CLAIM_NAMED : template_name ? LS_CLAIM_TEMPLATE_PENDING : LS_CLAIM_UNSUPPORTED;
    return true;
}

/* status.resourceClaimStatuses: the generated claim of each template entry
 * (a null resourceClaimName: none was needed). */
/* status.resourceClaimStatuses[]: the generated claim of a template entry
 * (a null resourceClaimName: none was needed). */
static bool decode_claim_status(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)out;
    const ls_pod *pod = ctx;
    ls_pod_claim *claims = (ls_pod_claim *)pod->resource_claims;
    ls_str name = 0, claim_name = 0;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_require_str(d, j, "name", &name) || !dec_get_str(d, j, "resourceClaimName", &claim_name))
        return false;
    for (uint32_t k = 0; k < pod->n_resource_claims; k++)
        if (claims[k].name == name && claims[k].state == LS_CLAIM_TEMPLATE_PENDING) {
            claims[k].claim_name = claim_name;
            claims[k].state = claim_name ? LS_CLAIM_TEMPLATE_CREATED : LS_CLAIM_TEMPLATE_NONE;
        }
    return true;
}

static bool decode_owner(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_owner_ref *o = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    return dec_get_str(d, j, "kind", &o->kind) && dec_get_str(d, j, "name", &o->name) &&
           dec_get_str(d, j, "uid", &o->uid) && dec_get_bool(d, j, "controller", &o->controller);
}

/* ---- pod volumes (what the volume plugins read) ---------------------------- */

typedef struct volume_source_name { const char *field; uint8_t source; const char *handle; } volume_source_name;

/* The sources the volume plugins tell apart, and the field naming the disk. */
static const volume_source_name volume_sources[] = {
    {"persistentVolumeClaim", LS_VOL_PVC, NULL},    {"ephemeral", LS_VOL_EPHEMERAL, NULL},
    {"gcePersistentDisk", LS_VOL_GCE_PD, "pdName"}, {"awsElasticBlockStore", LS_VOL_AWS_EBS, "volumeID"},
    {"iscsi", LS_VOL_ISCSI, "iqn"},                 {"rbd", LS_VOL_RBD, "image"},
    {"azureDisk", LS_VOL_AZURE_DISK, "diskURI"},    {"cinder", LS_VOL_CINDER, "volumeID"},
    {"csi", LS_VOL_CSI, "driver"},                  {"portworxVolume", LS_VOL_PORTWORX, "volumeID"},
};

static bool decode_volume_source(dec *d, const cJSON *src, const volume_source_name *k, const ls_pod *pod,
                                 ls_volume *v)
{
    size_t mark = dec_path_field(d, k->field);
    if (!cJSON_IsObject(src))
        return dec_fail(d, src, "expected an object");
    v->source = k->source;
    if (k->source == LS_VOL_PVC && (!dec_require_str(d, src, "claimName", &v->claim) ||
                                    !dec_get_bool(d, src, "readOnly", &v->read_only)))
        return false;
    if (k->source == LS_VOL_EPHEMERAL) {
        /* ephemeral.VolumeClaimName: the pod's name, "-", the volume's name */
        char name[600];
        snprintf(name, sizeof name, "%s-%s", ls_str_get(pod->name), ls_str_get(v->name));
        v->claim = ls_intern_cstr(name);
    }
    if (k->handle && (!dec_require_str(d, src, k->handle, &v->handle) || !dec_get_bool(d, src, "readOnly", &v->read_only)))
        return false;
    if (k->source == LS_VOL_RBD && (!dec_get_str(d, src, "pool", &v->pool) ||
                                    !dec_strings(d, src, "monitors", &v->n_monitors, &v->monitors)))
        return false;
    if (k->source == LS_VOL_RBD && !v->pool)
        v->pool = ls_intern_cstr("rbd");    /* the API server's default */
    dec_path_pop(d, mark);
    return true;
}

static bool decode_volume(dec *d, const cJSON *j, void *out, void *ctx)
{
    ls_volume *v = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_require_str(d, j, "name", &v->name))
        return false;
    for (size_t k = 0; k < sizeof volume_sources / sizeof volume_sources[0]; k++) {
        const cJSON *src = ls_json_member(j, volume_sources[k].field);
        if (src)
            return decode_volume_source(d, src, &volume_sources[k], ctx, v);
    }
    return true;
}

static bool decode_volumes(dec *d, const cJSON *obj, ls_pod *pod)
{
    const cJSON *spec;
    if (!dec_get_object(d, obj, "spec", &spec))
        return false;
    if (!spec)
        return true;
    size_t mark = dec_path_field(d, "spec");
    if (!DEC_LIST_INTO(d, spec, "volumes", decode_volume, pod, pod, volumes))
        return false;
    dec_path_pop(d, mark);
    return true;
}

/* ---- pods ------------------------------------------------------------------- */

static bool decode_pod_meta(dec *d, const cJSON *obj, ls_pod *pod)
{
    const cJSON *meta;
    if (!dec_get_object(d, obj, "metadata", &meta))
        return false;
    size_t mark = dec_path_field(d, "metadata");
    if (!meta) {
        dec_path_field(d, "name");
        return dec_fail(d, obj, "required");
    }
    if (!dec_require_str(d, meta, "name", &pod->name))
        return false;
    pod->ns = ls_intern_cstr("default");
    if (!dec_get_str(d, meta, "namespace", &pod->ns))
        return false;
    snprintf(d->who, sizeof d->who, "%s/%s", ls_str_get(pod->ns), ls_str_get(pod->name));
    /* The cache is keyed by uid; hand-written manifests often have none. */
    pod->uid = ls_intern_cstr(d->who);
    if (!dec_get_str(d, meta, "uid", &pod->uid) || !dec_labels(d, meta, "labels", &pod->labels) ||
        !DEC_LIST_INTO(d, meta, "ownerReferences", decode_owner, NULL, pod, owner_refs) ||
        !dec_get_time(d, meta, "creationTimestamp", &pod->creation_ns) ||
        !dec_get_time(d, meta, "deletionTimestamp", &pod->deletion_ns))
        return false;
    dec_path_pop(d, mark);
    return true;
}

static const char *const preemption_names[] = {"PreemptLowerPriority", "Never"};

static bool decode_pod_spec_scalars(dec *d, const cJSON *spec, ls_pod *pod)
{
    bool has_priority;
    pod->scheduler_name = ls_intern_cstr("default-scheduler");
    if (!dec_get_str(d, spec, "nodeName", &pod->node_name) ||
        !dec_get_str(d, spec, "schedulerName", &pod->scheduler_name) ||
        !dec_get_int32(d, spec, "priority", &pod->priority, &has_priority) ||
        !dec_get_str(d, spec, "priorityClassName", &pod->priority_class_name) ||
        !dec_get_enum(d, spec, "preemptionPolicy", preemption_names, 2, false, &pod->preemption_policy))
        return false;
    pod->has_priority = has_priority;
    return true;
}

/* spec.schedulingGroup.podGroupName (Workload API, v1.36+) and v1.35's
 * spec.workloadRef {name, podGroup}: what GangScheduling groups pods by. */
static bool decode_scheduling_group(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *group, *ref;
    if (!dec_get_object(d, spec, "schedulingGroup", &group) || !dec_get_object(d, spec, "workloadRef", &ref))
        return false;
    if (group) {
        size_t mark = dec_path_field(d, "schedulingGroup");
        if (!dec_get_str(d, group, "podGroupName", &pod->pod_group_name))
            return false;
        dec_path_pop(d, mark);
    }
    if (ref) {
        size_t mark = dec_path_field(d, "workloadRef");
        if (!dec_get_str(d, ref, "name", &pod->workload_name) || !dec_get_str(d, ref, "podGroup", &pod->workload_pod_group))
            return false;
        dec_path_pop(d, mark);
    }
    return true;
}

static bool decode_pod_spec(dec *d, const cJSON *obj, ls_pod *pod, pod_build *b)
{
    const cJSON *spec;
    if (!dec_get_object(d, obj, "spec", &spec))
        return false;
    size_t mark = dec_path_field(d, "spec");
    if (!decode_pod_spec_scalars(d, spec, pod) || !dec_labels(d, spec, "nodeSelector", &pod->node_selector) ||
        !decode_affinity(d, spec, pod) ||
        !DEC_LIST_INTO(d, spec, "tolerations", decode_toleration, NULL, pod, tolerations) ||
        !DEC_LIST_INTO(d, spec, "topologySpreadConstraints", decode_spread, pod, pod, spread_constraints) ||
        !DEC_LIST_INTO(d, spec, "schedulingGates", decode_gate, NULL, pod, scheduling_gates) ||
        !DEC_LIST_INTO(d, spec, "resourceClaims", decode_resource_claim, NULL, pod, resource_claims) ||
        !dec_containers(d, spec, pod, b) ||
        !decode_scheduling_group(d, spec, pod))
        return false;
    dec_path_pop(d, mark);
    return true;
}

static const char *const phase_names[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

static bool decode_pod_status(dec *d, const cJSON *obj, ls_pod *pod, pod_build *b)
{
    const cJSON *status;
    if (!dec_get_object(d, obj, "status", &status))
        return false;
    size_t mark = dec_path_field(d, "status");
    if (!dec_get_enum(d, status, "phase", phase_names, 5, false, &pod->phase) ||
        !dec_get_str(d, status, "nominatedNodeName", &pod->nominated_node_name) ||
        !dec_get_time(d, status, "startTime", &pod->start_ns) || !dec_resize_status(d, status, b) ||
        !dec_list(d, status, "resourceClaimStatuses", 0, decode_claim_status, pod, NULL))
        return false;
    dec_path_pop(d, mark);
    dec_finish_requests(pod, b);
    dec_infer_required_features(d, pod, b);
    return true;
}

/* ---- the objects' JSON, kept for extenders ---------------------------------- */

static _Atomic uint32_t wanted;

void ls_model_keep_json(bool on)
{
    if (on)
        ls_model_want(LS_WANT_POD_JSON | LS_WANT_NODE_JSON);
}

void ls_model_want(uint32_t bits)
{
    wanted |= bits;
}

uint32_t ls_model_wanted(void)
{
    return wanted;
}

static const char *kept_json(ls_arena *a, const cJSON *obj, uint32_t want)
{
    if (!(wanted & want))
        return NULL;
    char *text = cJSON_PrintUnformatted(obj);
    if (!text)
        return NULL;
    const char *copy = ls_arena_strdup(a, text);
    free(text);
    return copy;
}

const char *ls_pod_json(const ls_pod *pod)
{
    return ((const ls_pod_obj *)(const void *)((const char *)pod - offsetof(ls_pod_obj, pod)))->json;
}

const char *ls_node_json(const ls_node *node)
{
    return ((const ls_node_obj *)(const void *)((const char *)node - offsetof(ls_node_obj, node)))->json;
}

ls_pod_obj *ls_pod_decode(const cJSON *obj, const ls_decode_ctx *ctx, ls_error *err)
{
    ls_pod_obj *p = ls_xcalloc(1, sizeof *p);
    ls_arena_init(&p->arena);
    dec d;
    dec_init(&d, ctx, err, &p->arena, "pod");
    pod_build b = {0};
    ls_vec_init(&b.ports, sizeof(ls_host_port));
    ls_vec_init(&b.ctrs, sizeof(ls_ctr_res));
    bool ok = cJSON_IsObject(obj) ? decode_pod_meta(&d, obj, &p->pod) && decode_pod_spec(&d, obj, &p->pod, &b) &&
                                        decode_volumes(&d, obj, &p->pod) && decode_pod_status(&d, obj, &p->pod, &b) &&
                                        ls_pod_decode_extra(obj, &p->pod, &p->arena, ctx, err)
                                  : dec_fail(&d, obj, "expected an object");
    ls_vec_free(&b.ports);
    ls_vec_free(&b.ctrs);
    if (!ok) {
        ls_pod_obj_free(p);
        return NULL;
    }
    p->json = kept_json(&p->arena, obj, LS_WANT_POD_JSON);
    return p;
}

void ls_pod_obj_free(ls_pod_obj *p)
{
    if (!p)
        return;
    ls_arena_free(&p->arena);
    free(p);
}

/* ---- nodes -------------------------------------------------------------------- */

static bool decode_image(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_node_image *img = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    /* Node image names stay as the kubelet reported them: upstream normalizes
     * only the pod's side (ImageLocality), so "nginx" on a node does not match a
     * pod's "nginx" (which becomes "nginx:latest"). */
    return dec_strings(d, j, "names", &img->n_names, &img->names) &&
           dec_get_int64(d, j, "sizeBytes", &img->size, NULL);
}

static bool decode_condition(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)ctx;
    ls_node_condition *c = out;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    return dec_get_str(d, j, "type", &c->type) && dec_get_str(d, j, "status", &c->status);
}

static bool decode_node_meta(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *meta;
    if (!dec_get_object(d, obj, "metadata", &meta))
        return false;
    size_t mark = dec_path_field(d, "metadata");
    if (!meta) {
        dec_path_field(d, "name");
        return dec_fail(d, obj, "required");
    }
    if (!dec_require_str(d, meta, "name", &node->name))
        return false;
    snprintf(d->who, sizeof d->who, "%s", ls_str_get(node->name));
    if (!dec_get_str(d, meta, "uid", &node->uid) || !dec_labels(d, meta, "labels", &node->labels))
        return false;
    dec_path_pop(d, mark);
    return true;
}

static bool decode_node_spec(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *spec;
    if (!dec_get_object(d, obj, "spec", &spec))
        return false;
    size_t mark = dec_path_field(d, "spec");
    if (!dec_get_bool(d, spec, "unschedulable", &node->unschedulable) ||
        !DEC_LIST_INTO(d, spec, "taints", decode_taint, NULL, node, taints))
        return false;
    dec_path_pop(d, mark);
    return true;
}

static bool decode_node_status(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *status;
    if (!dec_get_object(d, obj, "status", &status))
        return false;
    size_t mark = dec_path_field(d, "status");
    if (!dec_resources(d, status, "capacity", &node->capacity, NULL))
        return false;
    /* A node that reports no allocatable can use all of its capacity. */
    node->allocatable = node->capacity;
    if (ls_json_member(status, "allocatable")) {
        memset(&node->allocatable, 0, sizeof node->allocatable);
        if (!dec_resources(d, status, "allocatable", &node->allocatable, NULL))
            return false;
    }
    if (!DEC_LIST_INTO(d, status, "images", decode_image, NULL, node, images) ||
        !DEC_LIST_INTO(d, status, "conditions", decode_condition, NULL, node, conditions) ||
        !dec_strings(d, status, "declaredFeatures", &node->n_declared_features, &node->declared_features))
        return false;
    dec_path_pop(d, mark);
    return true;
}

ls_node_obj *ls_node_decode(const cJSON *obj, const ls_decode_ctx *ctx, ls_error *err)
{
    ls_node_obj *n = ls_xcalloc(1, sizeof *n);
    ls_arena_init(&n->arena);
    dec d;
    dec_init(&d, ctx, err, &n->arena, "node");
    bool ok = cJSON_IsObject(obj) ? decode_node_meta(&d, obj, &n->node) && decode_node_spec(&d, obj, &n->node) &&
                                        decode_node_status(&d, obj, &n->node) &&
                                        ls_node_decode_extra(obj, &n->node, &n->arena, ctx, err)
                                  : dec_fail(&d, obj, "expected an object");
    if (!ok) {
        ls_node_obj_free(n);
        return NULL;
    }
    n->json = kept_json(&n->arena, obj, LS_WANT_NODE_JSON);
    return n;
}

void ls_node_obj_free(ls_node_obj *n)
{
    if (!n)
        return;
    ls_arena_free(&n->arena);
    free(n);
}

/* ---- images ------------------------------------------------------------------- */

ls_str ls_image_normalize(const char *image)
{
    if (!image)
        image = "";
    /* A tag or a digest ("@sha256:...") puts a ':' after the last '/'; a
     * registry port ("registry:5000/app") does not, so that image has no tag. */
    const char *colon = strrchr(image, ':'), *slash = strrchr(image, '/');
    if (colon && (!slash || colon > slash))
        return ls_intern_cstr(image);
    size_t n = strlen(image);
    char *s = ls_xmalloc(n + sizeof ":latest");
    memcpy(s, image, n);
    memcpy(s + n, ":latest", sizeof ":latest");
    ls_str id = ls_intern(s, n + sizeof ":latest" - 1);
    free(s);
    return id;
}
