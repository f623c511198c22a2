/*
 * api_validate.c: the API server's validation of a pod on create and update
 * (pkg/apis/core/validation, the parts a scheduler's input depends on), with
 * upstream's field paths and wording: the pod name (an RFC 1123 subdomain),
 * spec.containers required, each container's name and image, resource
 * quantities (requests and limits of containers and init containers, and
 * pod-level resources): a quantity that does not parse fails decoding (400,
 * as the API server's decoder), a negative one "must be greater than or
 * equal to 0", a request above its limit "must be less than or equal to
 * <resource> limit of <limit>". All errors are reported at once, as the
 * API server's Status: 422 Invalid with details.causes.
 *
 * One deliberate difference: upstream keeps decimal quantities of any size
 * and caps binary ones at 2^63-1; luasched holds quantities in 64 bits
 * (milli-units for cpu), so a larger one is refused here (422, the field
 * named) rather than misread later.
 */
#include "sim/api_internal.h"
#include "luasched/model.h"

#include <stdio.h>
#include <string.h>

#define QUANTITY_REGEX "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

typedef struct problems {
    cJSON *causes;      /* [{reason, message, field}] */
    int n;
    bool undecodable;   /* a quantity that does not parse: a 400 from the decoder */
    char decode_msg[300];
} problems;

static void add_cause(problems *p, const char *reason, const char *field, const char *message)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(p->causes, c);
    p->n++;
}

static void invalid(problems *p, const char *field, const char *value, const char *detail)
{
    char msg[600];
    snprintf(msg, sizeof msg, "Invalid value: \"%.200s\": %s", value, detail);
    add_cause(p, "FieldValueInvalid", field, msg);
}

static void required(problems *p, const char *field)
{
    add_cause(p, "FieldValueRequired", field, "Required value");
}

/* ---- names */

static bool is_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 1123 subdomain: labels of [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.'. */
static bool is_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
        if (c == '.' ? edge : edge ? !is_alnum_lower(c) : !(is_alnum_lower(c) || c == '-'))
            return false;
    }
    return true;
}

static void check_pod_name(problems *p, const char *name)
{
    if (name && !is_subdomain(name))
        invalid(p, "metadata.name", name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

/* ---- quantities */

/* The quantity's value (milli-units for cpu) in *out; false (with the
 * problem recorded) when it is not a usable quantity. */
static bool check_quantity(problems *p, const char *field, const char *resource, const cJSON *q, int64_t *out)
{
    char text[128];
    if (cJSON_IsString(q))
        snprintf(text, sizeof text, "%s", q->valuestring);
    else if (cJSON_IsNumber(q))
        snprintf(text, sizeof text, "%.17g", q->valuedouble);
    else
        snprintf(text, sizeof text, "%s", "");
    ls_error err;
    int scale = strcmp(resource, "cpu") == 0 ? 3 : 0;
    if (!ls_quantity_parse(text, scale, out, &err)) {
        if (strstr(err.msg, "too large")) {
            invalid(p, field, text, scale ? "must be less than or equal to 9223372036854775807m (luasched holds "
                                            "quantities in 64 bits)"
                                          : "must be less than or equal to 9223372036854775807 (luasched holds "
                                            "quantities in 64 bits)");
        } else if (!p->undecodable) {
            p->undecodable = true;
            snprintf(p->decode_msg, sizeof p->decode_msg,
                     "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular "
                     "expression '%s'", QUANTITY_REGEX);
        }
        return false;
    }
    if (*out < 0) {
        invalid(p, field, text, "must be greater than or equal to 0");
        return false;
    }
    return true;
}

/* requests and limits of one resources block ("spec.containers[0].resources"). */
static void check_resources(problems *p, const cJSON *res, const char *path)
{
    const cJSON *limits = cJSON_GetObjectItemCaseSensitive(res, "limits");
    const cJSON *requests = cJSON_GetObjectItemCaseSensitive(res, "requests");
    const cJSON *q;
    char field[400];
    cJSON_ArrayForEach(q, limits) {
        int64_t v;
        snprintf(field, sizeof field, "%s.limits[%s]", path, q->string);
        check_quantity(p, field, q->string, q, &v);
    }
    cJSON_ArrayForEach(q, requests) {
        int64_t req, lim;
        snprintf(field, sizeof field, "%s.requests[%s]", path, q->string);
        if (!check_quantity(p, field, q->string, q, &req))
            continue;
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(limits, q->string);
        problems scratch = {.causes = cJSON_CreateArray()};
        if (l && check_quantity(&scratch, "", q->string, l, &lim) && req > lim) {
            char detail[300];
            snprintf(detail, sizeof detail, "must be less than or equal to %s limit of %s", q->string,
                     cJSON_IsString(l) ? l->valuestring : "");
            snprintf(field, sizeof field, "%s.requests", path);
            invalid(p, field, cJSON_IsString(q) ? q->valuestring : "", detail);
        }
        cJSON_Delete(scratch.causes);
    }
}

static void check_containers(problems *p, const cJSON *spec, const char *key, bool need_one)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, key);
    char path[300];
    if (need_one && cJSON_GetArraySize(list) == 0) {
        snprintf(path, sizeof path, "spec.%s", key);
        required(p, path);
        return;
    }
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        const char *name = ls_json_text(c, "name", NULL), *image = ls_json_text(c, "image", NULL);
        if (!name || !*name) {
            snprintf(path, sizeof path, "spec.%s[%d].name", key, i);
            required(p, path);
        }
        if (!image || !*image) {
            snprintf(path, sizeof path, "spec.%s[%d].image", key, i);
            required(p, path);
        }
        snprintf(path, sizeof path, "spec.%s[%d].resources", key, i);
        check_resources(p, cJSON_GetObjectItemCaseSensitive(c, "resources"), path);
        i++;
    }
}

int api_validate_pod(const cJSON *pod, const char *name, cJSON **out)
{
    problems p = {.causes = cJSON_CreateArray()};
    check_pod_name(&p, name);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    check_containers(&p, spec, "containers", true);
    check_containers(&p, spec, "initContainers", false);
    check_resources(&p, cJSON_GetObjectItemCaseSensitive(spec, "resources"), "spec.resources");
    if (p.undecodable) {
        cJSON_Delete(p.causes);
        return api_fail(out, 400, "BadRequest", p.decode_msg);
    }
    if (p.n == 0) {
        cJSON_Delete(p.causes);
        return 0;
    }
    /* "Pod "x" is invalid: f: m" for one problem, "[f: m, g: n]" for several */
    char msg[4096];
    int len = snprintf(msg, sizeof msg, "Pod \"%.250s\" is invalid: %s", name ? name : "", p.n > 1 ? "[" : "");
    const cJSON *c;
    bool first = true;
    cJSON_ArrayForEach(c, p.causes) {
        if (len >= (int)sizeof msg - 1)
            break;
        len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s: %s", first ? "" : ", ",
                        ls_json_text(c, "field", NULL), ls_json_text(c, "message", NULL));
        first = false;
    }
    if (p.n > 1 && len < (int)sizeof msg - 1)
        snprintf(msg + len, sizeof msg - (size_t)len, "]");
    api_fail(out, 422, "Invalid", msg);
    cJSON *d = cJSON_AddObjectToObject(*out, "details");
    cJSON_AddStringToObject(d, "name", name ? name : "");
    cJSON_AddStringToObject(d, "kind", "Pod");
    cJSON_AddItemToObject(d, "causes", p.causes);
    return 422;
}

bool ls_api_annotations_fit(const cJSON *obj, const char *kind, const char *name, char *msg, size_t size)
{
    const cJSON *annotations = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                                "annotations");
    size_t total = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, annotations)
        total += strlen(a->string) + (cJSON_IsString(a) ? strlen(a->valuestring) : 0);
    if (total <= LS_API_ANNOTATIONS_MAX)
        return true;
    snprintf(msg, size, "%s \"%s\" is invalid: metadata.annotations: Too long: must have at most %d bytes", kind,
             name, LS_API_ANNOTATIONS_MAX);
    return false;
}
