/*
 * decode.c: v1 Pod and v1 Node JSON (cJSON trees, from the API server or from
 * the YAML loader) into the flat structs of model.h.
 *
 * Decoding is done once per object version, so it also does the work that would
 * otherwise repeat every scheduling cycle: the pod's resource requests (what it
 * reads here, containers, pod-level resources, overhead and the in-place resize
 * status, goes to pod_resources.c), its host ports and normalized images
 * (containers' and image volumes'), the node features it needs, and its
 * selectors compiled with matchLabelKeys merged in. Everything an object points to lives in its
 * own arena, so it is freed in one call.
 *
 * Validation follows the API server wherever a mistake would otherwise change
 * scheduling silently. Every error names the source, the line (when the input
 * has lines), the object and the field path.
 *
 * Over 800 lines: one decoder per object kind would need the typed-access and
 * error helpers above in a shared internal header; they are kept static here
 * and shared by every part of the pod and node decoders, volumes included.
 */
#include "decode_extra.h"
#include "labels_internal.h"
#include "pod_resources.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoder state, field paths and errors -------------------------------- */

typedef struct dec {
    const ls_decode_ctx *ctx;
    ls_error *err;
    ls_error scratch;      /* callee messages, before the context is added */
    ls_arena *a;
    const char *kind;      /* "pod" or "node" */
    char who[512];         /* "namespace/name" or the node name, once known */
    char path[512];        /* the field being decoded, e.g. spec.containers[0] */
    size_t len;
} dec;

static void dec_init(dec *d, const ls_decode_ctx *ctx, ls_error *err, ls_arena *a, const char *kind)
{
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->err = err;
    d->a = a;
    d->kind = kind;
}

static size_t path_push(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the path and returns the mark to pop back to. An error leaves the
 * path as it is, so the message names the field that failed. */
static size_t path_push(dec *d, const char *fmt, ...)
{
    size_t mark = d->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->len, sizeof d->path - d->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->len += (size_t)n < sizeof d->path - d->len ? (size_t)n : sizeof d->path - d->len - 1;
    return mark;
}

static size_t path_field(dec *d, const char *name)
{
    return d->len ? path_push(d, ".%s", name) : path_push(d, "%s", name);
}

static size_t path_index(dec *d, int i)
{
    return path_push(d, "[%d]", i);
}

static void path_pop(dec *d, size_t mark)
{
    d->len = mark;
    d->path[mark] = '\0';
}

/* "file:line: pod ns/name: path: msg"; parts that are unknown are left out. */
static bool report(dec *d, const cJSON *at, const char *path, const char *msg)
{
    const ls_decode_ctx *c = d->ctx;
    const char *src = c && c->source ? c->source : NULL;
    int line = c && c->line_of && at ? c->line_of(at, c->line_ud) : 0;
    char loc[320] = "";
    if (src && line > 0)
        snprintf(loc, sizeof loc, "%s:%d: ", src, line);
    else if (src)
        snprintf(loc, sizeof loc, "%s: ", src);
    else if (line > 0)
        snprintf(loc, sizeof loc, "line %d: ", line);
    return ls_errorf(d->err, "%s%s%s%s%s%s: %s", loc, d->kind, *d->who ? " " : "", d->who,
                     *path ? ": " : "", path, msg);
}

static bool fail(dec *d, const cJSON *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool fail(dec *d, const cJSON *at, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return report(d, at, d->path, msg);
}

/* For messages that already carry their own field path (selector compiling). */
static bool fail_scratch(dec *d, const cJSON *at)
{
    return report(d, at, "", d->scratch.msg);
}

/* ---- typed access to JSON members ----------------------------------------- */

/* A JSON null reads as an absent field, as in Kubernetes. */
static const cJSON *member(const cJSON *obj, const char *name)
{
    const cJSON *j = obj ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
    return cJSON_IsNull(j) ? NULL : j;
}

static uint32_t size_of(const cJSON *j)
{
    return j ? (uint32_t)cJSON_GetArraySize(j) : 0;
}

/* Fails on obj.name, at the member's line (or the object's when it is absent). */
static bool fail_member(dec *d, const cJSON *obj, const char *name, const char *msg)
{
    const cJSON *j = member(obj, name);
    path_field(d, name);
    return fail(d, j ? j : obj, "%s", msg);
}

static bool get_object(dec *d, const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *j = member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsObject(j))
        return fail_member(d, obj, name, "expected an object");
    *out = j;
    return true;
}

static bool get_array(dec *d, const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *j = member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsArray(j))
        return fail_member(d, obj, name, "expected an array");
    *out = j;
    return true;
}

static bool get_text(dec *d, const cJSON *obj, const char *name, const char **out)
{
    const cJSON *j = member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsString(j))
        return fail_member(d, obj, name, "expected a string");
    *out = j ? j->valuestring : NULL;
    return true;
}

/* Interned string member; absent and "" both leave *out as it was, since
 * Kubernetes gives an empty string field the same meaning as a missing one. */
static bool get_str(dec *d, const cJSON *obj, const char *name, ls_str *out)
{
    const char *s;
    if (!get_text(d, obj, name, &s))
        return false;
    if (s && *s)
        *out = ls_intern_cstr(s);
    return true;
}

static bool require_str(dec *d, const cJSON *obj, const char *name, ls_str *out)
{
    *out = 0;
    if (!get_str(d, obj, name, out))
        return false;
    return *out ? true : fail_member(d, obj, name, "required");
}

static bool get_bool(dec *d, const cJSON *obj, const char *name, uint8_t *out)
{
    const cJSON *j = member(obj, name);
    if (j && !cJSON_IsBool(j))
        return fail_member(d, obj, name, "expected a boolean");
    if (j)
        *out = cJSON_IsTrue(j) ? 1 : 0;
    return true;
}

/* The YAML loader keeps a number's source text in valuestring: read that when it
 * is a plain decimal (exact beyond 2^53), else the double if it is integral. */
static bool json_int64(const cJSON *j, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    if (j->valuestring && ls_parse_int64(j->valuestring, out))
        return true;
    double v = j->valuedouble;
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return false;
    int64_t i = (int64_t)v;
    if ((double)i != v)
        return false;
    *out = i;
    return true;
}

static bool get_int64(dec *d, const cJSON *obj, const char *name, int64_t *out, bool *present)
{
    const cJSON *j = member(obj, name);
    if (present)
        *present = j != NULL;
    if (j && !json_int64(j, out))
        return fail_member(d, obj, name, "expected an integer");
    return true;
}

static bool get_int32(dec *d, const cJSON *obj, const char *name, int32_t *out, bool *present)
{
    int64_t v = *out;
    if (!get_int64(d, obj, name, &v, present))
        return false;
    if (v < INT32_MIN || v > INT32_MAX)
        return fail_member(d, obj, name, "expected an integer (32-bit)");
    *out = (int32_t)v;
    return true;
}

/* "A, B or C" from the non-NULL names. */
static const char *join_names(const char *const *names, int n, char *buf, size_t size)
{
    int total = 0, k = 0;
    for (int i = 0; i < n; i++)
        total += names[i] != NULL;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < size; i++) {
        if (!names[i])
            continue;
        const char *sep = k == 0 ? "" : (k == total - 1 ? " or " : ", ");
        len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, names[i]);
        k++;
    }
    return buf;
}

/* A string member naming one of names[] (indexed by the enum value; NULL
 * entries are not accepted). Absent leaves *out as it was, unless required. */
static bool get_enum(dec *d, const cJSON *obj, const char *name, const char *const *names,
                     int n, bool required, uint8_t *out)
{
    const char *s;
    if (!get_text(d, obj, name, &s))
        return false;
    if (!s || !*s)
        return required ? fail_member(d, obj, name, "required") : true;
    for (int i = 0; i < n; i++) {
        if (names[i] && strcmp(names[i], s) == 0) {
            *out = (uint8_t)i;
            return true;
        }
    }
    char expected[256], msg[512];
    snprintf(msg, sizeof msg, "unknown value \"%.200s\" (expected %s)", s,
             join_names(names, n, expected, sizeof expected));
    return fail_member(d, obj, name, msg);
}

static bool get_time(dec *d, const cJSON *obj, const char *name, int64_t *out)
{
    const char *s;
    if (!get_text(d, obj, name, &s))
        return false;
    if (!s)
        return true;
    if (ls_time_parse(s, out))
        return true;
    char msg[400];
    snprintf(msg, sizeof msg, "invalid time \"%.200s\" (expected RFC 3339, e.g. 2006-01-02T15:04:05Z)", s);
    return fail_member(d, obj, name, msg);
}

/* ---- labels and quantities ------------------------------------------------- */

static bool decode_labels(dec *d, const cJSON *obj, const char *name, ls_labels *out)
{
    const cJSON *j;
    if (!get_object(d, obj, name, &j))
        return false;
    if (!j)
        return true;
    size_t mark = path_field(d, name);
    uint32_t n = 0;
    ls_label *items = ls_arena_alloc(d->a, size_of(j) * sizeof *items);
    const cJSON *item;
    cJSON_ArrayForEach(item, j) {
        if (!cJSON_IsString(item)) {
            path_field(d, item->string);
            return fail(d, item, "expected a string");
        }
        items[n].key = ls_intern_cstr(item->string);
        items[n].value = ls_intern_cstr(item->valuestring);
        n++;
    }
    ls_labels_sort(items, &n);
    out->n = n;
    out->items = items;
    path_pop(d, mark);
    return true;
}

/* Prints a JSON number with the fewest digits that read back the same, so
 * cpu: 0.1 stays "0.1" and is not rounded up from 0.10000000000000001. */
static const char *number_text(const cJSON *j, char *buf, size_t size)
{
    if (j->valuestring)
        return j->valuestring;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, j->valuedouble);
        if (strtod(buf, NULL) == j->valuedouble)
            break;
    }
    return buf;
}

static bool decode_quantity(dec *d, const cJSON *j, int scale, int64_t *out)
{
    char buf[64];
    const char *text;
    if (cJSON_IsString(j))
        text = j->valuestring;
    else if (cJSON_IsNumber(j))
        text = number_text(j, buf, sizeof buf);
    else
        return fail(d, j, "expected a quantity (a string or a number)");
    if (!ls_quantity_parse(text, scale, out, &d->scratch))
        return fail(d, j, "%s", d->scratch.msg);
    if (*out < 0)
        return fail(d, j, "invalid quantity \"%.200s\": must not be negative", text);
    return true;
}

/* A ResourceList: cpu in millicores, everything else in units. Unknown names
 * get a registry slot; *set (may be NULL) gets a bit per slot given. */
static bool decode_resources(dec *d, const cJSON *obj, const char *name, ls_resources *out, uint32_t *set)
{
    const cJSON *j;
    if (!get_object(d, obj, name, &j))
        return false;
    if (!j)
        return true;
    size_t mark = path_field(d, name);
    const cJSON *item;
    cJSON_ArrayForEach(item, j) {
        size_t m = path_field(d, item->string);
        int64_t v;
        /* Parse before registering, so a typo'd value does not use up a slot. */
        if (!decode_quantity(d, item, strcmp(item->string, "cpu") == 0 ? 3 : 0, &v))
            return false;
        int32_t slot = ls_resource_intern(item->string, &d->scratch);
        if (slot < 0)
            return fail(d, item, "%s", d->scratch.msg);
        out->v[slot] = v;
        if (set)
            *set |= 1u << slot;
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

static bool decode_selector(dec *d, const cJSON *obj, const char *name, ls_selector *out)
{
    const cJSON *bad = NULL;
    size_t mark = path_field(d, name);
    if (!ls_selector_compile_at(member(obj, name), d->a, out, d->path, &d->scratch, &bad))
        return fail_scratch(d, bad ? bad : obj);
    path_pop(d, mark);
    return true;
}

static bool decode_node_term(dec *d, const cJSON *j, const cJSON *parent, ls_node_selector_term *out)
{
    const cJSON *bad = NULL;
    if (!ls_node_selector_term_compile(j, d->a, out, d->path, &d->scratch, &bad))
        return fail_scratch(d, bad ? bad : parent);
    return true;
}

/* An array of strings into interned ids (in the arena). */
static bool decode_strings(dec *d, const cJSON *obj, const char *name, uint32_t *n, const ls_str **out)
{
    const cJSON *arr;
    if (!get_array(d, obj, name, &arr))
        return false;
    if (!arr)
        return true;
    size_t mark = path_field(d, name);
    ls_str *v = ls_arena_alloc(d->a, size_of(arr) * sizeof *v);
    uint32_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr) {
        if (!cJSON_IsString(item)) {
            path_index(d, (int)i);
            return fail(d, item, "expected a string");
        }
        v[i++] = ls_intern_cstr(item->valuestring);
    }
    *n = i;
    *out = v;
    path_pop(d, mark);
    return true;
}

/* ---- pod containers ---------------------------------------------------------- */

typedef struct pod_build {
    ls_vec ctrs;             /* ls_ctr_res, spec order (init first) */
    ls_pod_res_input in;     /* the pod-level parts; ctrs are attached at the end */
    ls_vec ports;            /* ls_host_port, copied into the arena at the end */
    ls_str *images;
    uint32_t n_images;
    uint8_t restart_all_rule; /* a container's restartPolicyRules restarts all containers */
    uint8_t host_network, host_users; /* spec.hostNetwork; spec.hostUsers (true when unset) */
} pod_build;

static bool decode_container_resources(dec *d, const cJSON *c, ls_resources *req, uint32_t *set)
{
    const cJSON *res;
    if (!get_object(d, c, "resources", &res))
        return false;
    if (!res)
        return true;
    size_t mark = path_field(d, "resources");
    ls_resources lim = {0};
    uint32_t lim_set = 0;
    if (!decode_resources(d, res, "requests", req, set) || !decode_resources(d, res, "limits", &lim, &lim_set))
        return false;
    path_pop(d, mark);
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

static bool decode_port(dec *d, const cJSON *p, bool collect, pod_build *b)
{
    if (!cJSON_IsObject(p))
        return fail(d, p, "expected an object");
    int32_t container_port = 0, host_port = 0;
    uint8_t proto = LS_PROTO_TCP;
    ls_str ip = 0;
    if (!get_int32(d, p, "containerPort", &container_port, NULL) ||
        !get_int32(d, p, "hostPort", &host_port, NULL) || !get_str(d, p, "hostIP", &ip) ||
        !get_enum(d, p, "protocol", protocol_names, 3, false, &proto))
        return false;
    if (collect && host_port > 0) {
        ls_host_port *hp = ls_vec_push(&b->ports);
        hp->host_ip = ip ? ip : ls_intern_cstr("0.0.0.0");
        hp->protocol = proto;
        hp->port = host_port;
    }
    return true;
}

static bool decode_ports(dec *d, const cJSON *c, bool collect, pod_build *b)
{
    const cJSON *arr, *p;
    if (!get_array(d, c, "ports", &arr))
        return false;
    size_t mark = path_field(d, "ports");
    int i = 0;
    cJSON_ArrayForEach(p, arr) {
        size_t m = path_index(d, i++);
        if (!decode_port(d, p, collect, b))
            return false;
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

/* Kind of container: an init container with restartPolicy Always is a sidecar. */
static bool container_kind(dec *d, const cJSON *c, bool init, uint8_t *kind)
{
    const char *policy;
    if (!get_text(d, c, "restartPolicy", &policy))
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
    return fail_member(d, c, "restartPolicy", msg);
}

/* Whether restartPolicyRules has a rule with action RestartAllContainers
 * (what NodeDeclaredFeatures infers RestartAllContainersOnContainerExits from). */
static bool decode_restart_rules(dec *d, const cJSON *c, pod_build *b)
{
    const cJSON *arr, *rule;
    if (!get_array(d, c, "restartPolicyRules", &arr))
        return false;
    size_t mark = path_field(d, "restartPolicyRules");
    int i = 0;
    cJSON_ArrayForEach(rule, arr) {
        size_t m = path_index(d, i++);
        const char *action;
        if (!cJSON_IsObject(rule))
            return fail(d, rule, "expected an object");
        if (!get_text(d, rule, "action", &action))
            return false;
        if (action && strcmp(action, "RestartAllContainers") == 0)
            b->restart_all_rule = 1;
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

static bool decode_container(dec *d, const cJSON *c, bool init, pod_build *b)
{
    if (!cJSON_IsObject(c))
        return fail(d, c, "expected an object");
    const char *name, *image;
    ls_ctr_res r = {0};
    if (!get_text(d, c, "name", &name) || !get_text(d, c, "image", &image) ||
        !container_kind(d, c, init, &r.kind) || !decode_restart_rules(d, c, b))
        return false;
    if (!decode_container_resources(d, c, &r.spec.v, &r.spec.set))
        return false;
    /* Ports of containers that keep running: regular ones and sidecars. */
    if (!decode_ports(d, c, r.kind != LS_CTR_INIT, b))
        return false;
    r.name = name && *name ? ls_intern_cstr(name) : 0;
    *(ls_ctr_res *)ls_vec_push(&b->ctrs) = r;
    b->images[b->n_images++] = ls_image_normalize(image ? image : "");
    return true;
}

static bool decode_container_list(dec *d, const cJSON *arr, const char *name, bool init, pod_build *b)
{
    size_t mark = path_field(d, name);
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, arr) {
        size_t m = path_index(d, i++);
        if (!decode_container(d, c, init, b))
            return false;
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

/* volumes[].image.reference: ImageLocality scores these images too. */
static uint32_t count_image_volumes(const cJSON *volumes)
{
    uint32_t n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, volumes)
        n += cJSON_IsObject(v) && member(v, "image") != NULL;
    return n;
}

static bool decode_image_volumes(dec *d, const cJSON *volumes, pod_build *b)
{
    size_t mark = path_field(d, "volumes");
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, volumes) {
        size_t m = path_index(d, i++);
        const cJSON *image;
        const char *ref;
        if (!cJSON_IsObject(v))
            return fail(d, v, "expected an object");
        if (!get_object(d, v, "image", &image))
            return false;
        if (image) {
            path_field(d, "image");
            if (!get_text(d, image, "reference", &ref))
                return false;
            b->images[b->n_images++] = ls_image_normalize(ref ? ref : "");
        }
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

/* A pod-level ResourceList: only cpu, memory and hugepages-* are allowed. */
static bool decode_pod_level_list(dec *d, const cJSON *res, const char *name, ls_rlist *out)
{
    if (!decode_resources(d, res, name, &out->v, &out->set))
        return false;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        if (!(out->set & (1u << i)) || ls_pod_level_resource_supported(i))
            continue;
        path_field(d, name);
        path_field(d, ls_resource_name(i));
        return fail(d, member(member(res, name), ls_resource_name(i)),
                    "unsupported pod-level resource (only cpu, memory and hugepages-<size> can be set)");
    }
    return true;
}

/* spec.resources, with the API server's validation (request <= limit) and
 * defaulting: when pod-level limits are given, a pod-level request left unset
 * takes the containers' aggregate request of that resource, else the limit. */
static bool decode_pod_level_resources(dec *d, const cJSON *spec, pod_build *b)
{
    const cJSON *res;
    if (!get_object(d, spec, "resources", &res))
        return false;
    if (!res)
        return true;
    size_t mark = path_field(d, "resources");
    ls_rlist req = {0}, lim = {0};
    if (!decode_pod_level_list(d, res, "requests", &req) || !decode_pod_level_list(d, res, "limits", &lim))
        return false;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        uint32_t bit = 1u << i;
        if ((req.set & bit) && (lim.set & bit) && req.v.v[i] > lim.v.v[i]) {
            path_field(d, "requests");
            path_field(d, ls_resource_name(i));
            return fail(d, member(member(res, "requests"), ls_resource_name(i)),
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
    path_pop(d, mark);
    return true;
}

static bool decode_containers(dec *d, const cJSON *spec, ls_pod *pod, pod_build *b)
{
    const cJSON *init, *regular, *volumes;
    if (!get_array(d, spec, "initContainers", &init) || !get_array(d, spec, "containers", &regular) ||
        !get_array(d, spec, "volumes", &volumes))
        return false;
    uint32_t n = size_of(init) + size_of(regular) + count_image_volumes(volumes);
    b->images = ls_arena_alloc(d->a, n * sizeof *b->images);
    if (!decode_container_list(d, init, "initContainers", true, b) ||
        !decode_container_list(d, regular, "containers", false, b) ||
        (volumes && !decode_image_volumes(d, volumes, b)))
        return false;
    b->host_users = 1;
    if (!decode_resources(d, spec, "overhead", &b->in.overhead.v, &b->in.overhead.set) ||
        !decode_pod_level_resources(d, spec, b) || !get_bool(d, spec, "hostNetwork", &b->host_network) ||
        !get_bool(d, spec, "hostUsers", &b->host_users))
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
static bool decode_container_status(dec *d, const cJSON *j, pod_build *b)
{
    const char *name;
    const cJSON *res;
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!get_text(d, j, "name", &name) || !get_object(d, j, "resources", &res))
        return false;
    ls_ctr_res tmp = {0};
    if (!decode_resources(d, j, "allocatedResources", &tmp.allocated.v, &tmp.allocated.set))
        return false;
    tmp.has_allocated = member(j, "allocatedResources") != NULL;
    if (res) {
        size_t mark = path_field(d, "resources");
        if (!decode_resources(d, res, "requests", &tmp.actual.v, &tmp.actual.set))
            return false;
        tmp.has_actual = member(res, "requests") != NULL;
        path_pop(d, mark);
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

static bool decode_container_statuses(dec *d, const cJSON *status, const char *name, pod_build *b)
{
    const cJSON *arr, *j;
    if (!get_array(d, status, name, &arr))
        return false;
    size_t mark = path_field(d, name);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i++);
        if (!decode_container_status(d, j, b))
            return false;
        path_pop(d, m);
    }
    path_pop(d, mark);
    return true;
}

/* conditions[]: the first PodResizePending decides whether the resize is Infeasible. */
static bool decode_resize_condition(dec *d, const cJSON *status, pod_build *b)
{
    const cJSON *arr, *j;
    if (!get_array(d, status, "conditions", &arr))
        return false;
    size_t mark = path_field(d, "conditions");
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i++);
        const char *type, *reason;
        if (!cJSON_IsObject(j))
            return fail(d, j, "expected an object");
        if (!get_text(d, j, "type", &type) || !get_text(d, j, "reason", &reason))
            return false;
        path_pop(d, m);
        if (type && strcmp(type, "PodResizePending") == 0) {
            b->in.resize_infeasible = reason && strcmp(reason, "Infeasible") == 0;
            break;
        }
    }
    path_pop(d, mark);
    return true;
}

/* status.resources.requests and status.allocatedResources (pod level). */
static bool decode_pod_level_status(dec *d, const cJSON *status, pod_build *b)
{
    const cJSON *res;
    if (!get_object(d, status, "resources", &res) ||
        !decode_resources(d, status, "allocatedResources", &b->in.status_allocated.v, &b->in.status_allocated.set))
        return false;
    b->in.has_status_allocated = member(status, "allocatedResources") != NULL;
    b->in.has_status_resources = res != NULL;
    if (res) {
        size_t mark = path_field(d, "resources");
        if (!decode_resources(d, res, "requests", &b->in.status_requests.v, &b->in.status_requests.set))
            return false;
        b->in.has_status_requests = member(res, "requests") != NULL;
        path_pop(d, mark);
    }
    return true;
}

static bool decode_resize_status(dec *d, const cJSON *status, pod_build *b)
{
    return decode_container_statuses(d, status, "containerStatuses", b) &&
           decode_container_statuses(d, status, "initContainerStatuses", b) &&
           decode_resize_condition(d, status, b) && decode_pod_level_status(d, status, b);
}

/* The requests every plugin reads, once spec and status are in. */
static void finish_requests(ls_pod *pod, pod_build *b)
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
static void infer_required_features(dec *d, ls_pod *pod, const pod_build *b)
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

/* ---- tolerations and taints ------------------------------------------------ */

static const char *const effect_names[] = {NULL, "NoSchedule", "PreferNoSchedule", "NoExecute"};
static const char *const toleration_ops[] = {"Equal", "Exists"};

static bool decode_toleration(dec *d, const cJSON *j, ls_toleration *t)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!get_str(d, j, "key", &t->key) || !get_str(d, j, "value", &t->value) ||
        !get_enum(d, j, "operator", toleration_ops, 2, false, &t->op) ||
        !get_enum(d, j, "effect", effect_names, 4, false, &t->effect))
        return false;
    /* The API server rejects these; matching would quietly mean something else. */
    if (!t->key && t->op != LS_TOL_EXISTS)
        return fail_member(d, j, "operator", "must be Exists when key is empty");
    if (t->op == LS_TOL_EXISTS && t->value)
        return fail_member(d, j, "value", "must be empty when operator is Exists");
    return true;
}

static bool decode_tolerations(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, spec, "tolerations", &arr))
        return false;
    size_t mark = path_field(d, "tolerations");
    ls_toleration *t = ls_arena_alloc(d->a, size_of(arr) * sizeof *t);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_toleration(d, j, &t[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_tolerations = (uint32_t)i;
    pod->tolerations = t;
    path_pop(d, mark);
    return true;
}

static bool decode_taint(dec *d, const cJSON *j, ls_taint *t)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    return require_str(d, j, "key", &t->key) && get_str(d, j, "value", &t->value) &&
           get_enum(d, j, "effect", effect_names, 4, true, &t->effect);
}

static bool decode_taints(dec *d, const cJSON *spec, ls_node *node)
{
    const cJSON *arr, *j;
    if (!get_array(d, spec, "taints", &arr))
        return false;
    size_t mark = path_field(d, "taints");
    ls_taint *t = ls_arena_alloc(d->a, size_of(arr) * sizeof *t);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_taint(d, j, &t[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    node->n_taints = (uint32_t)i;
    node->taints = t;
    path_pop(d, mark);
    return true;
}

/* ---- affinity ---------------------------------------------------------------- */

static bool get_weight(dec *d, const cJSON *j, int32_t *w)
{
    bool present;
    if (!get_int32(d, j, "weight", w, &present))
        return false;
    if (!present)
        return fail_member(d, j, "weight", "required");
    if (*w < 1 || *w > 100)
        return fail_member(d, j, "weight", "must be in the range 1-100");
    return true;
}

static bool decode_required_node_affinity(dec *d, const cJSON *na, ls_pod *pod)
{
    const cJSON *req, *terms, *j;
    if (!get_object(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &req))
        return false;
    if (!req)
        return true;
    size_t mark = path_field(d, "requiredDuringSchedulingIgnoredDuringExecution");
    if (!get_array(d, req, "nodeSelectorTerms", &terms))
        return false;
    if (size_of(terms) == 0)
        return fail_member(d, req, "nodeSelectorTerms", "must have at least one node selector term");
    path_field(d, "nodeSelectorTerms");
    ls_node_selector_term *t = ls_arena_alloc(d->a, size_of(terms) * sizeof *t);
    int i = 0;
    cJSON_ArrayForEach(j, terms) {
        size_t m = path_index(d, i);
        if (!decode_node_term(d, j, terms, &t[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->has_required_node_affinity = 1;
    pod->required_node_affinity.n_terms = (uint32_t)i;
    pod->required_node_affinity.terms = t;
    path_pop(d, mark);
    return true;
}

static bool decode_preferred_node_term(dec *d, const cJSON *j, ls_preferred_term *p)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!get_weight(d, j, &p->weight))
        return false;
    size_t mark = path_field(d, "preference");
    if (!decode_node_term(d, member(j, "preference"), j, &p->term))
        return false;
    path_pop(d, mark);
    return true;
}

static bool decode_preferred_node_affinity(dec *d, const cJSON *na, ls_pod *pod)
{
    const char *name = "preferredDuringSchedulingIgnoredDuringExecution";
    const cJSON *arr, *j;
    if (!get_array(d, na, name, &arr))
        return false;
    size_t mark = path_field(d, name);
    ls_preferred_term *p = ls_arena_alloc(d->a, size_of(arr) * sizeof *p);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_preferred_node_term(d, j, &p[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_preferred_node_affinity = (uint32_t)i;
    pod->preferred_node_affinity = p;
    path_pop(d, mark);
    return true;
}

/* matchLabelKeys / mismatchLabelKeys: each key the pod itself carries becomes
 * `key In (value)` / `key NotIn (value)` ANDed into the selector. */
static bool merge_label_keys(dec *d, const cJSON *obj, const char *name, uint8_t op,
                             const ls_labels *labels, ls_selector *sel)
{
    uint32_t n = 0;
    const ls_str *keys = NULL;
    if (!decode_strings(d, obj, name, &n, &keys))
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

static bool decode_affinity_term(dec *d, const cJSON *j, const ls_pod *pod, ls_pod_affinity_term *t)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!decode_selector(d, j, "labelSelector", &t->selector) ||
        !decode_strings(d, j, "namespaces", &t->n_namespaces, &t->namespaces) ||
        !require_str(d, j, "topologyKey", &t->topology_key))
        return false;
    if (member(j, "namespaceSelector")) {
        t->has_ns_selector = 1;
        if (!decode_selector(d, j, "namespaceSelector", &t->ns_selector))
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

static bool decode_weighted_term(dec *d, const cJSON *j, const ls_pod *pod, ls_weighted_pod_affinity_term *w)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!get_weight(d, j, &w->weight))
        return false;
    const cJSON *term = member(j, "podAffinityTerm");
    if (!term)
        return fail_member(d, j, "podAffinityTerm", "required");
    size_t mark = path_field(d, "podAffinityTerm");
    if (!decode_affinity_term(d, term, pod, &w->term))
        return false;
    path_pop(d, mark);
    return true;
}

typedef struct affinity_out {
    uint32_t *n_required, *n_preferred;
    const ls_pod_affinity_term **required;
    const ls_weighted_pod_affinity_term **preferred;
} affinity_out;

static bool decode_required_terms(dec *d, const cJSON *arr, const ls_pod *pod, const affinity_out *o)
{
    ls_pod_affinity_term *t = ls_arena_alloc(d->a, size_of(arr) * sizeof *t);
    int i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_affinity_term(d, j, pod, &t[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    *o->n_required = (uint32_t)i;
    *o->required = t;
    return true;
}

static bool decode_preferred_terms(dec *d, const cJSON *arr, const ls_pod *pod, const affinity_out *o)
{
    ls_weighted_pod_affinity_term *w = ls_arena_alloc(d->a, size_of(arr) * sizeof *w);
    int i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_weighted_term(d, j, pod, &w[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    *o->n_preferred = (uint32_t)i;
    *o->preferred = w;
    return true;
}

/* podAffinity or podAntiAffinity. */
static bool decode_pod_affinity(dec *d, const cJSON *aff, const char *name, const ls_pod *pod,
                                const affinity_out *o)
{
    const cJSON *pa, *req, *pref;
    if (!get_object(d, aff, name, &pa))
        return false;
    if (!pa)
        return true;
    size_t mark = path_field(d, name);
    if (!get_array(d, pa, "requiredDuringSchedulingIgnoredDuringExecution", &req) ||
        !get_array(d, pa, "preferredDuringSchedulingIgnoredDuringExecution", &pref))
        return false;
    size_t m = path_field(d, "requiredDuringSchedulingIgnoredDuringExecution");
    if (!decode_required_terms(d, req, pod, o))
        return false;
    path_pop(d, m);
    path_field(d, "preferredDuringSchedulingIgnoredDuringExecution");
    if (!decode_preferred_terms(d, pref, pod, o))
        return false;
    path_pop(d, mark);
    return true;
}

static bool decode_affinity(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *aff, *na;
    if (!get_object(d, spec, "affinity", &aff))
        return false;
    if (!aff)
        return true;
    size_t mark = path_field(d, "affinity");
    if (!get_object(d, aff, "nodeAffinity", &na))
        return false;
    if (na) {
        size_t m = path_field(d, "nodeAffinity");
        if (!decode_required_node_affinity(d, na, pod) || !decode_preferred_node_affinity(d, na, pod))
            return false;
        path_pop(d, m);
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
    path_pop(d, mark);
    return true;
}

/* ---- topology spread, gates, owners ------------------------------------------ */

static const char *const unsatisfiable_names[] = {"DoNotSchedule", "ScheduleAnyway"};
static const char *const policy_names[] = {"Honor", "Ignore"};

static bool decode_spread(dec *d, const cJSON *j, const ls_pod *pod, ls_spread_constraint *c)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    bool has_skew, has_min;
    c->min_domains = 1;
    c->node_affinity_policy = LS_POLICY_HONOR;
    c->node_taints_policy = LS_POLICY_IGNORE;
    if (!get_int32(d, j, "maxSkew", &c->max_skew, &has_skew) ||
        !require_str(d, j, "topologyKey", &c->topology_key) ||
        !get_enum(d, j, "whenUnsatisfiable", unsatisfiable_names, 2, true, &c->when_unsatisfiable) ||
        !get_int32(d, j, "minDomains", &c->min_domains, &has_min) ||
        !get_enum(d, j, "nodeAffinityPolicy", policy_names, 2, false, &c->node_affinity_policy) ||
        !get_enum(d, j, "nodeTaintsPolicy", policy_names, 2, false, &c->node_taints_policy))
        return false;
    if (!has_skew)
        return fail_member(d, j, "maxSkew", "required");
    if (c->max_skew <= 0)
        return fail_member(d, j, "maxSkew", "must be greater than zero");
    if (has_min && c->min_domains <= 0)
        return fail_member(d, j, "minDomains", "must be greater than zero");
    return decode_selector(d, j, "labelSelector", &c->selector) &&
           merge_label_keys(d, j, "matchLabelKeys", LS_OP_IN, &pod->labels, &c->selector);
}

static bool decode_spreads(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, spec, "topologySpreadConstraints", &arr))
        return false;
    size_t mark = path_field(d, "topologySpreadConstraints");
    ls_spread_constraint *c = ls_arena_alloc(d->a, size_of(arr) * sizeof *c);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_spread(d, j, pod, &c[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_spread_constraints = (uint32_t)i;
    pod->spread_constraints = c;
    path_pop(d, mark);
    return true;
}

static bool decode_gates(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, spec, "schedulingGates", &arr))
        return false;
    size_t mark = path_field(d, "schedulingGates");
    ls_str *g = ls_arena_alloc(d->a, size_of(arr) * sizeof *g);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!cJSON_IsObject(j))
            return fail(d, j, "expected an object");
        if (!require_str(d, j, "name", &g[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_scheduling_gates = (uint32_t)i;
    pod->scheduling_gates = g;
    path_pop(d, mark);
    return true;
}

/* spec.resourceClaims: a claim by name, or by template (resolved in status). */
static bool decode_resource_claims(dec *d, const cJSON *spec, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, spec, "resourceClaims", &arr))
        return false;
    size_t mark = path_field(d, "resourceClaims");
    ls_pod_claim *c = ls_arena_alloc(d->a, size_of(arr) * sizeof *c);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!cJSON_IsObject(j))
            return fail(d, j, "expected an object");
        ls_str template_name = 0;
        c[i] = (ls_pod_claim){0};
        if (!require_str(d, j, "name", &c[i].name) || !get_str(d, j, "resourceClaimName", &c[i].claim_name) ||
            !get_str(d, j, "resourceClaimTemplateName", &template_name))
            return false;
        if (c[i].claim_name && template_name)
            return fail(d, j, "resourceClaimName and resourceClaimTemplateName are mutually exclusive");
        c[i].state = c[i].claim_name ? LS_CLAIM_NAMED : template_name ? LS_CLAIM_TEMPLATE_PENDING : LS_CLAIM_UNSUPPORTED;
        path_pop(d, m);
        i++;
    }
    pod->n_resource_claims = (uint32_t)i;
    pod->resource_claims = c;
    path_pop(d, mark);
    return true;
}

/* status.resourceClaimStatuses: the generated claim of each template entry
 * (a null resourceClaimName: none was needed). */
static bool decode_claim_statuses(dec *d, const cJSON *status, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, status, "resourceClaimStatuses", &arr))
        return false;
    size_t mark = path_field(d, "resourceClaimStatuses");
    ls_pod_claim *claims = (ls_pod_claim *)pod->resource_claims;
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        ls_str name = 0, claim_name = 0;
        if (!cJSON_IsObject(j))
            return fail(d, j, "expected an object");
        if (!require_str(d, j, "name", &name) || !get_str(d, j, "resourceClaimName", &claim_name))
            return false;
        for (uint32_t k = 0; k < pod->n_resource_claims; k++)
            if (claims[k].name == name && claims[k].state == LS_CLAIM_TEMPLATE_PENDING) {
                claims[k].claim_name = claim_name;
                claims[k].state = claim_name ? LS_CLAIM_TEMPLATE_CREATED : LS_CLAIM_TEMPLATE_NONE;
            }
        path_pop(d, m);
        i++;
    }
    path_pop(d, mark);
    return true;
}

static bool decode_owner(dec *d, const cJSON *j, ls_owner_ref *o)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    return get_str(d, j, "kind", &o->kind) && get_str(d, j, "name", &o->name) &&
           get_str(d, j, "uid", &o->uid) && get_bool(d, j, "controller", &o->controller);
}

static bool decode_owners(dec *d, const cJSON *meta, ls_pod *pod)
{
    const cJSON *arr, *j;
    if (!get_array(d, meta, "ownerReferences", &arr))
        return false;
    size_t mark = path_field(d, "ownerReferences");
    ls_owner_ref *o = ls_arena_alloc(d->a, size_of(arr) * sizeof *o);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_owner(d, j, &o[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_owner_refs = (uint32_t)i;
    pod->owner_refs = o;
    path_pop(d, mark);
    return true;
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
    size_t mark = path_field(d, k->field);
    if (!cJSON_IsObject(src))
        return fail(d, src, "expected an object");
    v->source = k->source;
    if (k->source == LS_VOL_PVC && (!require_str(d, src, "claimName", &v->claim) ||
                                    !get_bool(d, src, "readOnly", &v->read_only)))
        return false;
    if (k->source == LS_VOL_EPHEMERAL) {
        /* ephemeral.VolumeClaimName: the pod's name, "-", the volume's name */
        char name[600];
        snprintf(name, sizeof name, "%s-%s", ls_str_get(pod->name), ls_str_get(v->name));
        v->claim = ls_intern_cstr(name);
    }
    if (k->handle && (!require_str(d, src, k->handle, &v->handle) || !get_bool(d, src, "readOnly", &v->read_only)))
        return false;
    if (k->source == LS_VOL_RBD && (!get_str(d, src, "pool", &v->pool) ||
                                    !decode_strings(d, src, "monitors", &v->n_monitors, &v->monitors)))
        return false;
    if (k->source == LS_VOL_RBD && !v->pool)
        v->pool = ls_intern_cstr("rbd");    /* the API server's default */
    path_pop(d, mark);
    return true;
}

static bool decode_volume(dec *d, const cJSON *j, const ls_pod *pod, ls_volume *v)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    if (!require_str(d, j, "name", &v->name))
        return false;
    for (size_t k = 0; k < sizeof volume_sources / sizeof volume_sources[0]; k++) {
        const cJSON *src = member(j, volume_sources[k].field);
        if (src)
            return decode_volume_source(d, src, &volume_sources[k], pod, v);
    }
    return true;
}

static bool decode_volumes(dec *d, const cJSON *obj, ls_pod *pod)
{
    const cJSON *spec, *arr, *j;
    if (!get_object(d, obj, "spec", &spec))
        return false;
    if (!spec)
        return true;
    size_t mark = path_field(d, "spec");
    if (!get_array(d, spec, "volumes", &arr))
        return false;
    path_field(d, "volumes");
    ls_volume *v = ls_arena_alloc(d->a, (size_of(arr) ? size_of(arr) : 1) * sizeof *v);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        memset(&v[i], 0, sizeof v[i]);
        if (!decode_volume(d, j, pod, &v[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    pod->n_volumes = (uint32_t)i;
    pod->volumes = v;
    path_pop(d, mark);
    return true;
}

/* ---- pods ------------------------------------------------------------------- */

static bool decode_pod_meta(dec *d, const cJSON *obj, ls_pod *pod)
{
    const cJSON *meta;
    if (!get_object(d, obj, "metadata", &meta))
        return false;
    size_t mark = path_field(d, "metadata");
    if (!meta) {
        path_field(d, "name");
        return fail(d, obj, "required");
    }
    if (!require_str(d, meta, "name", &pod->name))
        return false;
    pod->ns = ls_intern_cstr("default");
    if (!get_str(d, meta, "namespace", &pod->ns))
        return false;
    snprintf(d->who, sizeof d->who, "%s/%s", ls_str_get(pod->ns), ls_str_get(pod->name));
    /* The cache is keyed by uid; hand-written manifests often have none. */
    pod->uid = ls_intern_cstr(d->who);
    if (!get_str(d, meta, "uid", &pod->uid) || !decode_labels(d, meta, "labels", &pod->labels) ||
        !decode_owners(d, meta, pod) || !get_time(d, meta, "creationTimestamp", &pod->creation_ns) ||
        !get_time(d, meta, "deletionTimestamp", &pod->deletion_ns))
        return false;
    path_pop(d, mark);
    return true;
}

static const char *const preemption_names[] = {"PreemptLowerPriority", "Never"};

static bool decode_pod_spec_scalars(dec *d, const cJSON *spec, ls_pod *pod)
{
    bool has_priority;
    pod->scheduler_name = ls_intern_cstr("default-scheduler");
    if (!get_str(d, spec, "nodeName", &pod->node_name) ||
        !get_str(d, spec, "schedulerName", &pod->scheduler_name) ||
        !get_int32(d, spec, "priority", &pod->priority, &has_priority) ||
        !get_str(d, spec, "priorityClassName", &pod->priority_class_name) ||
        !get_enum(d, spec, "preemptionPolicy", preemption_names, 2, false, &pod->preemption_policy))
        return false;
    pod->has_priority = has_priority;
    return true;
}

static bool decode_pod_spec(dec *d, const cJSON *obj, ls_pod *pod, pod_build *b)
{
    const cJSON *spec;
    if (!get_object(d, obj, "spec", &spec))
        return false;
    size_t mark = path_field(d, "spec");
    if (!decode_pod_spec_scalars(d, spec, pod) || !decode_labels(d, spec, "nodeSelector", &pod->node_selector) ||
        !decode_affinity(d, spec, pod) || !decode_tolerations(d, spec, pod) || !decode_spreads(d, spec, pod) ||
        !decode_gates(d, spec, pod) || !decode_resource_claims(d, spec, pod) || !decode_containers(d, spec, pod, b))
        return false;
    path_pop(d, mark);
    return true;
}

static const char *const phase_names[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

static bool decode_pod_status(dec *d, const cJSON *obj, ls_pod *pod, pod_build *b)
{
    const cJSON *status;
    if (!get_object(d, obj, "status", &status))
        return false;
    size_t mark = path_field(d, "status");
    if (!get_enum(d, status, "phase", phase_names, 5, false, &pod->phase) ||
        !get_str(d, status, "nominatedNodeName", &pod->nominated_node_name) ||
        !get_time(d, status, "startTime", &pod->start_ns) || !decode_resize_status(d, status, b) ||
        !decode_claim_statuses(d, status, pod))
        return false;
    path_pop(d, mark);
    finish_requests(pod, b);
    infer_required_features(d, pod, b);
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
                                  : fail(&d, obj, "expected an object");
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

static bool decode_image(dec *d, const cJSON *j, ls_node_image *img)
{
    if (!cJSON_IsObject(j))
        return fail(d, j, "expected an object");
    /* Node image names stay as the kubelet reported them: upstream normalizes
     * only the pod's side (ImageLocality), so "nginx" on a node does not match a
     * pod's "nginx" (which becomes "nginx:latest"). */
    return decode_strings(d, j, "names", &img->n_names, &img->names) &&
           get_int64(d, j, "sizeBytes", &img->size, NULL);
}

static bool decode_images(dec *d, const cJSON *status, ls_node *node)
{
    const cJSON *arr, *j;
    if (!get_array(d, status, "images", &arr))
        return false;
    size_t mark = path_field(d, "images");
    ls_node_image *img = ls_arena_alloc(d->a, size_of(arr) * sizeof *img);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!decode_image(d, j, &img[i]))
            return false;
        path_pop(d, m);
        i++;
    }
    node->n_images = (uint32_t)i;
    node->images = img;
    path_pop(d, mark);
    return true;
}

static bool decode_conditions(dec *d, const cJSON *status, ls_node *node)
{
    const cJSON *arr, *j;
    if (!get_array(d, status, "conditions", &arr))
        return false;
    size_t mark = path_field(d, "conditions");
    ls_node_condition *c = ls_arena_alloc(d->a, size_of(arr) * sizeof *c);
    int i = 0;
    cJSON_ArrayForEach(j, arr) {
        size_t m = path_index(d, i);
        if (!cJSON_IsObject(j))
            return fail(d, j, "expected an object");
        if (!get_str(d, j, "type", &c[i].type) || !get_str(d, j, "status", &c[i].status))
            return false;
        path_pop(d, m);
        i++;
    }
    node->n_conditions = (uint32_t)i;
    node->conditions = c;
    path_pop(d, mark);
    return true;
}

static bool decode_node_meta(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *meta;
    if (!get_object(d, obj, "metadata", &meta))
        return false;
    size_t mark = path_field(d, "metadata");
    if (!meta) {
        path_field(d, "name");
        return fail(d, obj, "required");
    }
    if (!require_str(d, meta, "name", &node->name))
        return false;
    snprintf(d->who, sizeof d->who, "%s", ls_str_get(node->name));
    if (!get_str(d, meta, "uid", &node->uid) || !decode_labels(d, meta, "labels", &node->labels))
        return false;
    path_pop(d, mark);
    return true;
}

static bool decode_node_spec(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *spec;
    if (!get_object(d, obj, "spec", &spec))
        return false;
    size_t mark = path_field(d, "spec");
    if (!get_bool(d, spec, "unschedulable", &node->unschedulable) || !decode_taints(d, spec, node))
        return false;
    path_pop(d, mark);
    return true;
}

static bool decode_node_status(dec *d, const cJSON *obj, ls_node *node)
{
    const cJSON *status;
    if (!get_object(d, obj, "status", &status))
        return false;
    size_t mark = path_field(d, "status");
    if (!decode_resources(d, status, "capacity", &node->capacity, NULL))
        return false;
    /* A node that reports no allocatable can use all of its capacity. */
    node->allocatable = node->capacity;
    if (member(status, "allocatable")) {
        memset(&node->allocatable, 0, sizeof node->allocatable);
        if (!decode_resources(d, status, "allocatable", &node->allocatable, NULL))
            return false;
    }
    if (!decode_images(d, status, node) || !decode_conditions(d, status, node) ||
        !decode_strings(d, status, "declaredFeatures", &node->n_declared_features, &node->declared_features))
        return false;
    path_pop(d, mark);
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
                                  : fail(&d, obj, "expected an object");
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
