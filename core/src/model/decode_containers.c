/*
 * decode_containers.c: a pod's containers, ports, image volumes, pod-level
 * resources and in-place resize status (decode_internal.h's pod_build), and
 * from them the requests every plugin reads (pod_resources.c computes) and the
 * node features the pod needs declared.
 */
#include "decode_internal.h"
#include "luasched/feature_gates.h"

#include <stdio.h>
#include <string.h>

/* ---- pod containers ---------------------------------------------------------- */

static bool decode_container_resources(dec *d, const cJSON *c, ls_resources *req, uint32_t *set)
{
    const cJSON *res;
    if (!dec_get_object(d, c, "resources", &res))
        return false;
    if (!res)
        return true;
    size_t mark = dec_path_field(d, "resources");
    ls_resources lim = {0};
    uint32_t lim_set = 0;
    if (!dec_resources(d, res, "requests", req, set) || !dec_resources(d, res, "limits", &lim, &lim_set))
        return false;
    dec_path_pop(d, mark);
    /* API defaulting: a limit without a request sets the request to the limit. */
    for (int i = 0; i < LS_MAX_RESOURCES; i++) {
        uint32_t bit = 1u << i;
        if ((lim_set & bit) && !(*set & bit)) {
            req->v[i] = lim.v[i];
            *set |= bit;
        }
    }
    return true;
}

static const char *const protocol_names[] = {"TCP", "UDP", "SCTP"};

/* What a container list or its ports decode with: the pod being built and
 * whether the containers are init containers / the ports are collected. */
typedef struct build_ctx {
    pod_build *b;
    bool flag;
} build_ctx;

static bool decode_port(dec *d, const cJSON *p, void *out, void *ctx)
{
    (void)out;
    bool collect = ((build_ctx *)ctx)->flag;
    pod_build *b = ((build_ctx *)ctx)->b;
    if (!cJSON_IsObject(p))
        return dec_fail(d, p, "expected an object");
    int32_t container_port = 0, host_port = 0;
    uint8_t proto = LS_PROTO_TCP;
    ls_str ip = 0;
    if (!dec_get_int32(d, p, "containerPort", &container_port, NULL) ||
        !dec_get_int32(d, p, "hostPort", &host_port, NULL) || !dec_get_str(d, p, "hostIP", &ip) ||
        !dec_get_enum(d, p, "protocol", protocol_names, 3, false, &proto))
        return false;
    if (collect && host_port > 0) {
        ls_host_port *hp = ls_vec_push(&b->ports);
        hp->host_ip = ip ? ip : ls_intern_cstr("0.0.0.0");
        hp->protocol = proto;
        hp->port = host_port;
    }
    return true;
}

/* Kind of container: an init container with restartPolicy Always is a sidecar. */
static bool container_kind(dec *d, const cJSON *c, bool init, uint8_t *kind)
{
    const char *policy;
    if (!dec_get_text(d, c, "restartPolicy", &policy))
        return false;
    *kind = init ? LS_CTR_INIT : LS_CTR_REGULAR;
    if (!init || !policy)
        return true;
    if (strcmp(policy, "Always") == 0) {
        *kind = LS_CTR_SIDECAR;
        return true;
    }
    char msg[320];
    snprintf(msg, sizeof msg, "unsupported value \"%.200s\" (only Always, for a sidecar)", policy);
    return dec_fail_member(d, c, "restartPolicy", msg);
}

/* Whether restartPolicyRules has a rule with action RestartAllContainers
 * (what NodeDeclaredFeatures infers RestartAllContainersOnContainerExits from). */
/* A restartPolicyRules entry with action RestartAllContainers (what
 * NodeDeclaredFeatures infers RestartAllContainersOnContainerExits from). */
static bool decode_restart_rule(dec *d, const cJSON *rule, void *out, void *ctx)
{
    (void)out;
    pod_build *b = ctx;
    const char *action;
    if (!cJSON_IsObject(rule))
        return dec_fail(d, rule, "expected an object");
    if (!dec_get_text(d, rule, "action", &action))
        return false;
    if (action && strcmp(action, "RestartAllContainers") == 0)
        b->restart_all_rule = 1;
    return true;
}

static bool decode_container(dec *d, const cJSON *c, void *out, void *ctx)
{
    (void)out;
    bool init = ((build_ctx *)ctx)->flag;
    pod_build *b = ((build_ctx *)ctx)->b;
    if (!cJSON_IsObject(c))
        return dec_fail(d, c, "expected an object");
    const char *name, *image;
    ls_ctr_res r = {0};
    if (!dec_get_text(d, c, "name", &name) || !dec_get_text(d, c, "image", &image) ||
        !container_kind(d, c, init, &r.kind) || !dec_list(d, c, "restartPolicyRules", 0, decode_restart_rule, b, NULL))
        return false;
    if (!decode_container_resources(d, c, &r.spec.v, &r.spec.set))
        return false;
    /* Ports of containers that keep running: regular ones and sidecars. */
    if (!dec_list(d, c, "ports", 0, decode_port, &(build_ctx){b, r.kind != LS_CTR_INIT}, NULL))
        return false;
    r.name = name && *name ? ls_intern_cstr(name) : 0;
    *(ls_ctr_res *)ls_vec_push(&b->ctrs) = r;
    b->images[b->n_images++] = ls_image_normalize(image ? image : "");
    return true;
}

/* volumes[].image.reference: ImageLocality scores these images too. */
static uint32_t count_image_volumes(const cJSON *volumes)
{
    uint32_t n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, volumes)
        n += cJSON_IsObject(v) && ls_json_member(v, "image") != NULL;
    return n;
}

static bool decode_image_volume(dec *d, const cJSON *v, void *out, void *ctx)
{
    (void)out;
    pod_build *b = ctx;
    const cJSON *image;
    const char *ref;
    if (!cJSON_IsObject(v))
        return dec_fail(d, v, "expected an object");
    if (!dec_get_object(d, v, "image", &image))
        return false;
    if (image) {
        size_t mark = dec_path_field(d, "image");
        if (!dec_get_text(d, image, "reference", &ref))
            return false;
        b->images[b->n_images++] = ls_image_normalize(ref ? ref : "");
        dec_path_pop(d, mark);
    }
    return true;
}

/* A pod-level ResourceList: only cpu, memory and hugepages-* are allowed. */
static bool decode_pod_level_list(dec *d, const cJSON *res, const char *name, ls_rlist *out)
{
    if (!dec_resources(d, res, name, &out->v, &out->set))
        return false;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        if (!(out->set & (1u << i)) || ls_pod_level_resource_supported(i))
            continue;
        dec_path_field(d, name);
        dec_path_field(d, ls_resource_name(i));
        return dec_fail(d, ls_json_member(ls_json_member(res, name), ls_resource_name(i)),
                    "unsupported pod-level resource (only cpu, memory and hugepages-<size> can be set)");
    }
    return true;
}

/* spec.resources, with the API server's validation (request <= limit) and
 * defaulting: when pod-level limits are given, a pod-level request left unset
 * takes the containers' aggregate request of that resource, else the limit. */
static bool decode_pod_level_resources(dec *d, const cJSON *spec, pod_build *b)
{
    if (!ls_feature_enabled(LS_FG_PodLevelResources))   /* --feature-gates: spec.resources is not read */
        return true;
    const cJSON *res;
    if (!dec_get_object(d, spec, "resources", &res))
        return false;
    if (!res)
        return true;
    size_t mark = dec_path_field(d, "resources");
    ls_rlist req = {0}, lim = {0};
    if (!decode_pod_level_list(d, res, "requests", &req) || !decode_pod_level_list(d, res, "limits", &lim))
        return false;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        uint32_t bit = 1u << i;
        if ((req.set & bit) && (lim.set & bit) && req.v.v[i] > lim.v.v[i]) {
            dec_path_field(d, "requests");
            dec_path_field(d, ls_resource_name(i));
            return dec_fail(d, ls_json_member(ls_json_member(res, "requests"), ls_resource_name(i)),
                        "must be less than or equal to the pod-level %s limit", ls_resource_name(i));
        }
    }
    if (lim.set) {
        b->in.ctrs = b->ctrs.data;
        b->in.n_ctrs = b->ctrs.len;
        ls_rlist ctrs = ls_pod_container_spec_requests(&b->in);
        for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
            uint32_t bit = 1u << i;
            if ((req.set & bit) || !ls_pod_level_resource_supported(i))
                continue;
            if (ctrs.set & bit)
                req.v.v[i] = ctrs.v.v[i];
            else if (lim.set & bit)
                req.v.v[i] = lim.v.v[i];
            else
                continue;
            req.set |= bit;
        }
    }
    b->in.pod_requests = req;
    dec_path_pop(d, mark);
    return true;
}

bool dec_containers(dec *d, const cJSON *spec, ls_pod *pod, pod_build *b)
{
    const cJSON *init, *regular, *volumes;
    if (!dec_get_array(d, spec, "initContainers", &init) || !dec_get_array(d, spec, "containers", &regular) ||
        !dec_get_array(d, spec, "volumes", &volumes))
        return false;
    uint32_t n = dec_size_of(init) + dec_size_of(regular) + count_image_volumes(volumes);
    b->images = ls_arena_alloc(d->a, n * sizeof *b->images);
    if (!dec_list(d, spec, "initContainers", 0, decode_container, &(build_ctx){b, true}, NULL) ||
        !dec_list(d, spec, "containers", 0, decode_container, &(build_ctx){b, false}, NULL) ||
        (volumes && !dec_list(d, spec, "volumes", 0, decode_image_volume, b, NULL)))
        return false;
    b->host_users = 1;
    if (!dec_resources(d, spec, "overhead", &b->in.overhead.v, &b->in.overhead.set) ||
        !decode_pod_level_resources(d, spec, b) || !dec_get_bool(d, spec, "hostNetwork", &b->host_network) ||
        !dec_get_bool(d, spec, "hostUsers", &b->host_users))
        return false;

    pod->n_images = b->n_images;
    pod->images = b->images;
    pod->n_host_ports = b->ports.len;
    pod->host_ports = ls_arena_memdup(d->a, b->ports.data, (size_t)b->ports.len * sizeof(ls_host_port));
    return true;
}

/* ---- in-place resize status -------------------------------------------------- */

/* One containerStatuses[] / initContainerStatuses[] entry: its allocated and
 * actual requests go to the first container of that name without a status. */
static bool decode_container_status(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)out;
    pod_build *b = ctx;
    const char *name;
    const cJSON *res;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_get_text(d, j, "name", &name) || !dec_get_object(d, j, "resources", &res))
        return false;
    ls_ctr_res tmp = {0};
    if (!dec_resources(d, j, "allocatedResources", &tmp.allocated.v, &tmp.allocated.set))
        return false;
    tmp.has_allocated = ls_json_member(j, "allocatedResources") != NULL;
    if (res) {
        size_t mark = dec_path_field(d, "resources");
        if (!dec_resources(d, res, "requests", &tmp.actual.v, &tmp.actual.set))
            return false;
        tmp.has_actual = ls_json_member(res, "requests") != NULL;
        dec_path_pop(d, mark);
    }
    ls_str id = name && *name ? ls_intern_cstr(name) : 0;
    ls_ctr_res *ctrs = b->ctrs.data;
    for (uint32_t i = 0; id && i < b->ctrs.len; i++) {
        if (ctrs[i].name != id || ctrs[i].has_status)
            continue;
        ctrs[i].has_status = 1;
        ctrs[i].has_allocated = tmp.has_allocated;
        ctrs[i].allocated = tmp.allocated;
        ctrs[i].has_actual = tmp.has_actual;
        ctrs[i].actual = tmp.actual;
        break;
    }
    return true;
}

/* conditions[]: the first PodResizePending decides whether the resize is Infeasible. */
typedef struct resize_ctx {
    pod_build *b;
    bool found;     /* a PodResizePending condition was read: the rest are not */
} resize_ctx;

static bool decode_resize_condition(dec *d, const cJSON *j, void *out, void *ctx)
{
    (void)out;
    resize_ctx *r = ctx;
    const char *type, *reason;
    if (r->found)
        return true;
    if (!cJSON_IsObject(j))
        return dec_fail(d, j, "expected an object");
    if (!dec_get_text(d, j, "type", &type) || !dec_get_text(d, j, "reason", &reason))
        return false;
    if (type && strcmp(type, "PodResizePending") == 0) {
        r->b->in.resize_infeasible = reason && strcmp(reason, "Infeasible") == 0;
        r->found = true;
    }
    return true;
}

/* status.resources.requests and status.allocatedResources (pod level). */
static bool decode_pod_level_status(dec *d, const cJSON *status, pod_build *b)
{
    if (!ls_feature_enabled(LS_FG_PodLevelResources))
        return true;
    const cJSON *res;
    if (!dec_get_object(d, status, "resources", &res) ||
        !dec_resources(d, status, "allocatedResources", &b->in.status_allocated.v, &b->in.status_allocated.set))
        return false;
    b->in.has_status_allocated = ls_json_member(status, "allocatedResources") != NULL;
    b->in.has_status_resources = res != NULL;
    if (res) {
        size_t mark = dec_path_field(d, "resources");
        if (!dec_resources(d, res, "requests", &b->in.status_requests.v, &b->in.status_requests.set))
            return false;
        b->in.has_status_requests = ls_json_member(res, "requests") != NULL;
        dec_path_pop(d, mark);
    }
    return true;
}

bool dec_resize_status(dec *d, const cJSON *status, pod_build *b)
{
    return dec_list(d, status, "containerStatuses", 0, decode_container_status, b, NULL) &&
           dec_list(d, status, "initContainerStatuses", 0, decode_container_status, b, NULL) &&
           dec_list(d, status, "conditions", 0, decode_resize_condition, &(resize_ctx){b, false}, NULL) &&
           decode_pod_level_status(d, status, b);
}

/* The requests every plugin reads, once spec and status are in. */
void dec_finish_requests(ls_pod *pod, pod_build *b)
{
    b->in.ctrs = b->ctrs.data;
    b->in.n_ctrs = b->ctrs.len;
    ls_pod_res_output out;
    ls_pod_resources_compute(&b->in, &out);
    pod->requests = out.requests;
    pod->nonzero_milli_cpu = out.nonzero_milli_cpu;
    pod->nonzero_memory = out.nonzero_memory;
    pod->scoring_milli_cpu = out.scoring_milli_cpu;
    pod->scoring_memory = out.scoring_memory;
    pod->requests_nothing = 1;
    for (int i = 0; i < LS_MAX_RESOURCES; i++)
        if (pod->requests.v[i])
            pod->requests_nothing = 0;
}

/* NodeDeclaredFeatures: the features the spec needs a node to declare, in
 * name order (InferForScheduling of the features registered upstream that
 * infer anything at scheduling time). */
void dec_infer_required_features(dec *d, ls_pod *pod, const pod_build *b)
{
    bool restart_all = b->restart_all_rule, userns_host_net = b->host_network && !b->host_users;
    uint32_t n = (uint32_t)restart_all + (uint32_t)userns_host_net;
    if (!n)
        return;
    ls_str *f = ls_arena_alloc(d->a, n * sizeof *f);
    uint32_t i = 0;
    if (restart_all)
        f[i++] = ls_intern_cstr("RestartAllContainersOnContainerExits");
    if (userns_host_net)
        f[i++] = ls_intern_cstr("UserNamespacesHostNetworkSupport");
    pod->n_required_features = i;
    pod->required_features = f;
}
