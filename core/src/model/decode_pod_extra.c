/*
 * decode_pod_extra.c: the fields of v1 Pods and Nodes that policy plugins read
 * and the scheduler's own plugins do not: annotations, the containers one by
 * one (kind, requests and limits as given, every port), spec.resources,
 * overhead, status conditions, the containers' and the pod's allocated and
 * actual resources, and the QoS class.
 *
 * decode.c validates and flattens what scheduling itself needs and calls
 * ls_pod_decode_extra / ls_node_decode_extra once an object has decoded; the
 * fields read again here (containers' resources and ports) are valid by then,
 * so the checks below matter for the fields only this file reads. Errors take
 * the same form as decode.c's: "file:line: pod ns/name: field.path: message".
 */
#include "decode_extra.h"
#include "decode_internal.h"
#include "labels_internal.h"
#include "pod_resources.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xdec {
    const ls_decode_ctx *ctx;
    ls_error *err;
    ls_arena *a;
    const char *kind;          /* "pod" or "node" */
    char who[512];
} xdec;

static bool xfail(xdec *d, const cJSON *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool xfail(xdec *d, const cJSON *at, const char *path, const char *fmt, ...)
{
    char loc[320], where[sizeof d->err->msg];
    dec_location(d->ctx, at, loc, sizeof loc);
    snprintf(where, sizeof where, "%s%s %s: %s", loc, d->kind, d->who, path);
    va_list ap;
    va_start(ap, fmt);
    ls_verror_at(d->err, where, fmt, ap);
    va_end(ap);
    return false;
}

static uint32_t count_of(const cJSON *arr)
{
    return cJSON_IsArray(arr) ? (uint32_t)cJSON_GetArraySize(arr) : 0;
}

static bool want_object(xdec *d, const cJSON *j, const char *path)
{
    return !j || cJSON_IsObject(j) || xfail(d, j, path, "expected an object");
}

static bool want_array(xdec *d, const cJSON *j, const char *path)
{
    return !j || cJSON_IsArray(j) || xfail(d, j, path, "expected a list");
}

/* obj[name] into *out (NULL when absent): false, failing with "NAME:
 * expected WHAT", when it is there but not what is() accepts. */
static bool member_of(xdec *d, const cJSON *obj, const char *name, const char *path, cJSON_bool (*is)(const cJSON *),
                      const char *what, const cJSON **out)
{
    *out = ls_json_member(obj, name);
    return !*out || is(*out) || xfail(d, *out, path, "%s: expected %s", name, what);
}

/* A string member interned (0 when absent). */
static bool text_of(xdec *d, const cJSON *obj, const char *name, const char *path, ls_str *out)
{
    const cJSON *j;
    bool ok = member_of(d, obj, name, path, cJSON_IsString, "a string", &j);
    *out = ok && j ? ls_intern_cstr(j->valuestring) : 0;
    return ok;
}

/* ---- annotations ----------------------------------------------------------- */

static bool decode_annotations(xdec *d, const cJSON *obj, ls_labels *out)
{
    const cJSON *j = ls_json_member(ls_json_member(obj, "metadata"), "annotations");
    if (!j)
        return true;
    if (!cJSON_IsObject(j))
        return xfail(d, j, "metadata.annotations", "expected an object");
    const cJSON *bad;
    if (!ls_labels_from_json(j, d->a, out, &bad))
        return xfail(d, bad, "metadata.annotations", "%s: expected a string", bad->string);
    return true;
}

/* ---- resource lists ----------------------------------------------------------- */

/* As decode.c prints a JSON number: the fewest digits that read back the same. */
static const char *number_text(const cJSON *j, char *buf, size_t size)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, j->valuedouble);
        if (strtod(buf, NULL) == j->valuedouble)
            break;
    }
    return buf;
}

static bool decode_list(xdec *d, const cJSON *obj, const char *name, const char *path, ls_resource_list *out)
{
    const cJSON *j;
    if (!member_of(d, obj, name, path, cJSON_IsObject, "an object", &j))
        return false;
    if (!j)
        return true;
    ls_quantity *items = ls_arena_alloc(d->a, (size_t)cJSON_GetArraySize(j) * sizeof *items);
    uint32_t n = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, j) {
        char buf[64];
        ls_error e = {0};
        const char *text = cJSON_IsString(item) ? item->valuestring
                           : cJSON_IsNumber(item) ? number_text(item, buf, sizeof buf) : NULL;
        if (!text)
            return xfail(d, item, path, "%s.%s: expected a quantity (a string or a number)", name, item->string);
        int64_t v;
        if (!ls_quantity_parse(text, strcmp(item->string, "cpu") == 0 ? 3 : 0, &v, &e))
            return xfail(d, item, path, "%s.%s: %s", name, item->string, e.msg);
        if (v < 0)
            return xfail(d, item, path, "%s.%s: invalid quantity \"%.200s\": must not be negative", name,
                         item->string, text);
        int32_t slot = ls_resource_intern(item->string, &e);
        if (slot < 0)
            return xfail(d, item, path, "%s.%s: %s", name, item->string, e.msg);
        items[n].slot = (uint32_t)slot;
        items[n].value = v;
        n++;
    }
    out->n = n;
    out->items = items;
    return true;
}

bool ls_resource_list_get(const ls_resource_list *list, uint32_t slot, int64_t *value)
{
    *value = 0;
    if (!list)
        return false;
    for (uint32_t i = 0; i < list->n; i++) {
        if (list->items[i].slot == slot) {
            *value = list->items[i].value;
            return true;
        }
    }
    return false;
}

static ls_rlist rlist_of(const ls_resource_list *l)
{
    ls_rlist r = {0};
    for (uint32_t i = 0; i < l->n; i++) {
        r.v.v[l->items[i].slot] = l->items[i].value;
        r.set |= 1u << l->items[i].slot;
    }
    return r;
}

static ls_resource_list list_of(ls_arena *a, const ls_rlist *r)
{
    ls_resource_list out = {0};
    ls_quantity *items = ls_arena_alloc(a, LS_MAX_RESOURCES * sizeof *items);
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        if (r->set & (1u << i)) {
            items[out.n].slot = i;
            items[out.n].value = r->v.v[i];
            out.n++;
        }
    }
    out.items = items;
    return out;
}

/* API defaulting: a limit without a request sets the request to the limit. */
static ls_resource_list defaulted_requests(ls_arena *a, const ls_resource_list *req, const ls_resource_list *lim)
{
    ls_rlist r = rlist_of(req), l = rlist_of(lim);
    if ((l.set & ~r.set) == 0)
        return *req;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        uint32_t bit = 1u << i;
        if ((l.set & bit) && !(r.set & bit)) {
            r.v.v[i] = l.v.v[i];
            r.set |= bit;
        }
    }
    return list_of(a, &r);
}

/* ---- containers -------------------------------------------------------------- */

static const char *const protocol_names[] = {"TCP", "UDP", "SCTP"};

static bool decode_port(xdec *d, const cJSON *p, const char *path, uint32_t container, ls_container_port *out)
{
    if (!want_object(d, p, path))
        return false;
    const cJSON *cp = ls_json_member(p, "containerPort"), *hp = ls_json_member(p, "hostPort");
    const cJSON *proto = ls_json_member(p, "protocol");
    out->container = container;
    out->container_port = cJSON_IsNumber(cp) ? (int32_t)cp->valuedouble : 0;
    out->host_port = cJSON_IsNumber(hp) ? (int32_t)hp->valuedouble : 0;
    out->protocol = LS_PROTO_TCP;
    for (uint8_t i = 0; cJSON_IsString(proto) && i < 3; i++)
        if (strcmp(proto->valuestring, protocol_names[i]) == 0)
            out->protocol = i;
    return text_of(d, p, "name", path, &out->name) && text_of(d, p, "hostIP", path, &out->host_ip);
}

static uint32_t count_ports(const cJSON *spec)
{
    static const char *const lists[] = {"initContainers", "containers"};
    uint32_t n = 0;
    for (int l = 0; l < 2; l++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, ls_json_member(spec, lists[l]))
            n += count_of(ls_json_member(c, "ports"));
    }
    return n;
}

typedef struct ctr_build {
    ls_container *ctrs;
    uint32_t n_ctrs;
    ls_container_port *ports;
    uint32_t n_ports;
} ctr_build;

static bool decode_container(xdec *d, const cJSON *c, bool init, const char *path, ctr_build *b)
{
    ls_container *out = &b->ctrs[b->n_ctrs];
    const cJSON *res = ls_json_member(c, "resources"), *policy = ls_json_member(c, "restartPolicy");
    char sub[600];
    if (!want_object(d, c, path) || !text_of(d, c, "name", path, &out->name) ||
        !text_of(d, c, "image", path, &out->image) || !want_object(d, res, path))
        return false;
    out->kind = !init ? LS_CONTAINER_REGULAR
                : cJSON_IsString(policy) && strcmp(policy->valuestring, "Always") == 0 ? LS_CONTAINER_SIDECAR
                                                                                       : LS_CONTAINER_INIT;
    snprintf(sub, sizeof sub, "%s.resources", path);
    ls_resource_list req = {0};
    if (!decode_list(d, res, "requests", sub, &req) || !decode_list(d, res, "limits", sub, &out->limits))
        return false;
    out->requests = defaulted_requests(d->a, &req, &out->limits);
    const cJSON *ports = ls_json_member(c, "ports"), *p;
    if (!want_array(d, ports, path))
        return false;
    out->ports = b->ports + b->n_ports;
    int i = 0;
    cJSON_ArrayForEach(p, ports) {
        snprintf(sub, sizeof sub, "%s.ports[%d]", path, i++);
        if (!decode_port(d, p, sub, b->n_ctrs, &b->ports[b->n_ports]))
            return false;
        b->n_ports++;
        out->n_ports++;
    }
    b->n_ctrs++;
    return true;
}

/* Calls item for every element of obj's two lists, in order, with the list's
 * index and the element's path ("PREFIX.LIST[i]"). */
static bool each_in_lists(xdec *d, const cJSON *obj, const char *prefix, const char *const lists[2],
                          bool (*item)(xdec *, const cJSON *, int, const char *, void *), void *ctx)
{
    for (int l = 0; l < 2; l++) {
        const cJSON *j;
        int i = 0;
        cJSON_ArrayForEach(j, ls_json_member(obj, lists[l])) {
            char path[96];
            snprintf(path, sizeof path, "%s.%s[%d]", prefix, lists[l], i++);
            if (!item(d, j, l, path, ctx))
                return false;
        }
    }
    return true;
}

static bool container_item(xdec *d, const cJSON *c, int list, const char *path, void *ctx)
{
    return decode_container(d, c, list == 0, path, ctx);
}

static bool decode_containers(xdec *d, const cJSON *spec, ls_pod *pod)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const cJSON *init = ls_json_member(spec, "initContainers"), *regular = ls_json_member(spec, "containers");
    if (!want_array(d, init, "spec.initContainers") || !want_array(d, regular, "spec.containers"))
        return false;
    ctr_build b = {0};
    b.ctrs = ls_arena_alloc(d->a, (size_t)(count_of(init) + count_of(regular)) * sizeof *b.ctrs);
    b.ports = ls_arena_alloc(d->a, (size_t)count_ports(spec) * sizeof *b.ports);
    if (!each_in_lists(d, spec, "spec", lists, container_item, &b))
        return false;
    pod->n_containers = b.n_ctrs;
    pod->containers = b.ctrs;
    pod->n_ports = b.n_ports;
    pod->ports = b.ports;
    return true;
}

/* spec.resources.requests as the API server defaults them: with limits given,
 * a supported resource (cpu, memory, hugepages-*) without a request takes the
 * containers' aggregate request of it, else its limit. */
static ls_resource_list default_pod_requests(ls_arena *a, const ls_pod *pod, const ls_resource_list *req)
{
    ls_rlist r = rlist_of(req), lim = rlist_of(&pod->resources_limits);
    if (!lim.set)
        return *req;
    ls_ctr_res *ctrs = ls_arena_alloc(a, (size_t)pod->n_containers * sizeof *ctrs + 1);
    for (uint32_t i = 0; i < pod->n_containers; i++) {
        ctrs[i].kind = pod->containers[i].kind;   /* LS_CONTAINER_* and LS_CTR_* agree */
        ctrs[i].spec = rlist_of(&pod->containers[i].requests);
    }
    ls_pod_res_input in = {.ctrs = ctrs, .n_ctrs = pod->n_containers};
    ls_rlist agg = ls_pod_container_spec_requests(&in);
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        uint32_t bit = 1u << i;
        if ((r.set & bit) || !ls_pod_level_resource_supported(i) || !((agg.set | lim.set) & bit))
            continue;
        r.v.v[i] = (agg.set & bit) ? agg.v.v[i] : lim.v.v[i];
        r.set |= bit;
    }
    return list_of(a, &r);
}

static bool decode_pod_resources(xdec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *res = ls_json_member(spec, "resources");
    ls_resource_list req = {0};
    if (!want_object(d, res, "spec.resources") || !decode_list(d, spec, "overhead", "spec", &pod->overhead))
        return false;
    if (!res)
        return true;
    pod->has_resources = 1;
    if (!decode_list(d, res, "requests", "spec.resources", &req) ||
        !decode_list(d, res, "limits", "spec.resources", &pod->resources_limits))
        return false;
    pod->resources_requests = default_pod_requests(d->a, pod, &req);
    return true;
}

/* ---- QoS class ----------------------------------------------------------------- */

/* upstream resourceQOS: one set of requirements, over cpu and memory. */
static uint8_t requirements_qos(const ls_resource_list *req, const ls_resource_list *lim)
{
    if (req->n == 0 && lim->n == 0)
        return LS_QOS_BEST_EFFORT;
    int qos = -1;
    static const uint32_t slots[] = {LS_RES_CPU, LS_RES_MEMORY};
    for (int i = 0; i < 2; i++) {
        int64_t r, l;
        ls_resource_list_get(req, slots[i], &r);
        ls_resource_list_get(lim, slots[i], &l);
        if (r != l)
            return LS_QOS_BURSTABLE;
        int here = r == 0 ? LS_QOS_BEST_EFFORT : LS_QOS_GUARANTEED;
        if (qos >= 0 && here != qos)
            return LS_QOS_BURSTABLE;
        qos = here;
    }
    return (uint8_t)qos;
}

static const char *const qos_names[] = {"BestEffort", "Burstable", "Guaranteed"};

/* GetPodQOS: status.qosClass when set, else ComputePodQOS (pod-level
 * resources when given, else every container). */
static bool decode_qos(xdec *d, const cJSON *status, ls_pod *pod)
{
    const cJSON *given = ls_json_member(status, "qosClass");
    if (given) {
        for (uint8_t i = 0; cJSON_IsString(given) && i < 3; i++) {
            if (strcmp(given->valuestring, qos_names[i]) == 0) {
                pod->qos_class = i;
                return true;
            }
        }
        return xfail(d, given, "status.qosClass", "expected one of BestEffort, Burstable, Guaranteed");
    }
    if (pod->has_resources) {
        pod->qos_class = requirements_qos(&pod->resources_requests, &pod->resources_limits);
        return true;
    }
    int qos = -1;
    for (uint32_t i = 0; i < pod->n_containers; i++) {
        int c = requirements_qos(&pod->containers[i].requests, &pod->containers[i].limits);
        if (c == LS_QOS_BURSTABLE || (qos >= 0 && c != qos)) {
            qos = LS_QOS_BURSTABLE;
            break;
        }
        qos = c;
    }
    pod->qos_class = qos < 0 ? LS_QOS_BEST_EFFORT : (uint8_t)qos;
    return true;
}

/* ---- status ---------------------------------------------------------------------- */

static bool decode_conditions(xdec *d, const cJSON *status, ls_pod *pod)
{
    const cJSON *arr = ls_json_member(status, "conditions"), *j;
    if (!want_array(d, arr, "status.conditions"))
        return false;
    ls_pod_condition *c = ls_arena_alloc(d->a, (size_t)count_of(arr) * sizeof *c);
    uint32_t n = 0;
    cJSON_ArrayForEach(j, arr) {
        char path[64];
        snprintf(path, sizeof path, "status.conditions[%u]", n);
        if (!want_object(d, j, path) || !text_of(d, j, "type", path, &c[n].type) ||
            !text_of(d, j, "status", path, &c[n].status) || !text_of(d, j, "reason", path, &c[n].reason))
            return false;
        n++;
    }
    pod->n_conditions = n;
    pod->conditions = c;
    return true;
}

static bool decode_container_status(xdec *d, const cJSON *j, bool init, const char *path, ls_container_status *s)
{
    const cJSON *res = ls_json_member(j, "resources");
    char sub[128];
    snprintf(sub, sizeof sub, "%s.resources", path);
    s->init = init;
    s->has_allocated = ls_json_member(j, "allocatedResources") != NULL;
    s->has_resources = res != NULL;
    return want_object(d, j, path) && text_of(d, j, "name", path, &s->name) &&
           decode_list(d, j, "allocatedResources", path, &s->allocated) && want_object(d, res, sub) &&
           decode_list(d, res, "requests", sub, &s->requests) && decode_list(d, res, "limits", sub, &s->limits);
}

typedef struct statuses_build {
    ls_container_status *items;
    uint32_t n;
} statuses_build;

static bool status_item(xdec *d, const cJSON *j, int list, const char *path, void *ctx)
{
    statuses_build *b = ctx;
    if (!decode_container_status(d, j, list == 1, path, &b->items[b->n]))
        return false;
    b->n++;
    return true;
}

static bool decode_container_statuses(xdec *d, const cJSON *status, ls_pod *pod)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses"};
    const cJSON *regular = ls_json_member(status, lists[0]), *init = ls_json_member(status, lists[1]);
    if (!want_array(d, regular, "status.containerStatuses") ||
        !want_array(d, init, "status.initContainerStatuses"))
        return false;
    statuses_build b = {ls_arena_alloc(d->a, (size_t)(count_of(regular) + count_of(init)) * sizeof *b.items), 0};
    if (!each_in_lists(d, status, "status", lists, status_item, &b))
        return false;
    pod->n_container_statuses = b.n;
    pod->container_statuses = b.items;
    return true;
}

static bool decode_status(xdec *d, const cJSON *status, ls_pod *pod)
{
    const cJSON *res = ls_json_member(status, "resources");
    pod->has_allocated_resources = ls_json_member(status, "allocatedResources") != NULL;
    return want_object(d, status, "status") && decode_conditions(d, status, pod) &&
           decode_container_statuses(d, status, pod) &&
           decode_list(d, status, "allocatedResources", "status", &pod->allocated_resources) &&
           want_object(d, res, "status.resources") &&
           decode_list(d, res, "requests", "status.resources", &pod->status_requests) &&
           decode_list(d, res, "limits", "status.resources", &pod->status_limits) && decode_qos(d, status, pod);
}

/* ---- entry points ------------------------------------------------------------------ */

bool ls_pod_decode_extra(const cJSON *obj, ls_pod *pod, ls_arena *a, const ls_decode_ctx *ctx, ls_error *err)
{
    xdec d = {.ctx = ctx, .err = err, .a = a, .kind = "pod"};
    snprintf(d.who, sizeof d.who, "%s/%s", ls_str_get(pod->ns), ls_str_get(pod->name));
    const cJSON *spec = ls_json_member(obj, "spec");
    return decode_annotations(&d, obj, &pod->annotations) && decode_containers(&d, spec, pod) &&
           decode_pod_resources(&d, spec, pod) && decode_status(&d, ls_json_member(obj, "status"), pod);
}

bool ls_node_decode_extra(const cJSON *obj, ls_node *node, ls_arena *a, const ls_decode_ctx *ctx, ls_error *err)
{
    xdec d = {.ctx = ctx, .err = err, .a = a, .kind = "node"};
    snprintf(d.who, sizeof d.who, "%s", ls_str_get(node->name));
    return decode_annotations(&d, obj, &node->annotations);
}
