/*
 * api_load.c: filling the served store from cluster files, and the --fault
 * flag's parser.
 */
#include "model/doc.h"
#include "sim/api_internal.h"
#include "sim/pv_controller.h"

#include <stdlib.h>
#include <string.h>

/* The resource a manifest's kind/apiVersion names (a custom resource is
 * registered on first sight); NULL for kinds not served. */
static const ls_api_resource *resource_of(const cJSON *obj, ls_error *err)
{
    const char *kind = ls_json_text(obj, "kind", NULL), *av = ls_json_text(obj, "apiVersion", NULL);
    if (!kind)
        return NULL;
    char group[128] = "";
    const char *slash = av ? strchr(av, '/') : NULL;
    if (slash)
        snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        if (strcmp(r->kind, kind) == 0 && (!av || strcmp(r->group, group) == 0))
            return r;
    }
    return api_custom_register(obj, err);
}

static bool create_doc(ls_api *a, const ls_doc_set *doc, const cJSON *obj, const ls_api_resource *r, ls_error *err)
{
    cJSON *res = NULL;
    const char *ns = r->namespaced ? ls_json_text(obj, "metadata", "namespace") : NULL;
    int code = api_create(a, r, ns ? ns : (r->namespaced ? "default" : NULL), cJSON_Duplicate(obj, 1), true, &res);
    if (code >= 300) {
        const char *msg = ls_json_text(res, "message", NULL);
        ls_errorf(err, "%s:%d: %s: %s", ls_doc_source(doc), ls_doc_line(doc, obj), ls_json_text(obj, "kind", NULL),
                  msg ? msg : "rejected");
    }
    cJSON_Delete(res);
    return code < 300;
}

/* Namespaces that objects of the file live in exist before them. */
static void ensure_namespace(ls_api *a, const char *ns)
{
    const ls_api_resource *nsr = ls_api_resource_find("", "v1", "namespaces");
    cJSON *res = NULL;
    if (ls_api_get(a, nsr, NULL, ns, &res) == 404) {
        cJSON_Delete(res);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "metadata"), "name", ns);
        ls_api_create(a, nsr, NULL, o, &res);
    }
    cJSON_Delete(res);
}

bool ls_api_load_file(ls_api *a, const char *path, ls_error *err)
{
    ls_doc_set *doc = ls_doc_load_file(path, err);
    if (!doc)
        return false;
    bool ok = true;
    /* Pass 0: namespaces and PriorityClasses (admission needs them); pass 1: the rest. */
    for (int pass = 0; pass < 2 && ok; pass++)
        for (uint32_t i = 0; i < ls_doc_count(doc) && ok; i++) {
            const cJSON *obj = ls_doc_get(doc, i);
            err->msg[0] = '\0';
            const ls_api_resource *r = resource_of(obj, err);
            if (!r && err->msg[0])
                ok = false;
            if (!r)
                continue;
            if (!api_served_in(r->group, r->version, a->serve_as)) {
                ok = ls_errorf(err, "%s:%d: %s %s: not served by the API server of v1.%d (--serve-as): leave the "
                                    "object out or serve a later release", ls_doc_source(doc), ls_doc_line(doc, obj),
                               ls_json_text(obj, "apiVersion", NULL), r->kind, a->serve_as);
                break;
            }
            bool early = strcmp(r->kind, "PriorityClass") == 0 || strcmp(r->kind, "Namespace") == 0;
            if (pass == 1 && r->namespaced) {
                const char *ns = ls_json_text(obj, "metadata", "namespace");
                ensure_namespace(a, ns ? ns : "default");
            }
            if (early == (pass == 0))
                ok = create_doc(a, doc, obj, r, err);
            if (ok && pass == 1 && strcmp(r->kind, "Pod") == 0)
                api_volumes_after_write(a, r, obj);   /* a pod's ephemeral claims */
        }
    ls_doc_free(doc);
    if (ok)
        api_volumes_after_write(a, NULL, NULL);   /* the controllers' first pass over the file */
    return ok;
}

/* ---- --fault */

static bool parse_rate(const char *s, double *rate, char **end)
{
    *rate = strtod(s, end);
    return *end != s && *rate >= 0 && *rate <= 1;
}

bool ls_api_parse_fault(ls_api_faults *f, const char *spec, ls_error *err)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return ls_errorf(err, "--fault %s: expected KIND=VALUE (watch-drop=N, gone=RATE, error=RATE, "
                         "throttle=RATE[:SECONDS], latency=MS, provision=fail|never)", spec);
    size_t klen = (size_t)(eq - spec);
    const char *v = eq + 1;
    char *end;
    if (klen == 10 && strncmp(spec, "watch-drop", klen) == 0) {
        unsigned long n = strtoul(v, &end, 10);
        f->watch_drop = (uint32_t)n;
        if (!*v || *end || n == 0)
            return ls_errorf(err, "--fault %s: expected a number of events > 0", spec);
    } else if (klen == 7 && strncmp(spec, "latency", klen) == 0) {
        unsigned long n = strtoul(v, &end, 10);
        f->latency_ms = (uint32_t)n;
        if (!*v || *end)
            return ls_errorf(err, "--fault %s: expected milliseconds", spec);
    } else if ((klen == 4 && strncmp(spec, "gone", klen) == 0) || (klen == 5 && strncmp(spec, "error", klen) == 0)) {
        double *rate = klen == 4 ? &f->gone : &f->error;
        if (!parse_rate(v, rate, &end) || *end)
            return ls_errorf(err, "--fault %s: expected a rate between 0 and 1", spec);
    } else if (klen == 9 && strncmp(spec, "provision", klen) == 0) {
        ls_provision_fault pf;
        if (!ls_provision_fault_parse(v, &pf))
            return ls_errorf(err, "--fault %s: expected provision=fail or provision=never", spec);
        f->provision = (int)pf;
    } else if (klen == 8 && strncmp(spec, "throttle", klen) == 0) {
        f->throttle_seconds = 1;
        if (!parse_rate(v, &f->throttle, &end) || (*end && *end != ':'))
            return ls_errorf(err, "--fault %s: expected RATE[:SECONDS] with a rate between 0 and 1", spec);
        if (*end == ':') {
            const char *s = end + 1;
            unsigned long n = strtoul(s, &end, 10);
            if (!*s || *end || n == 0)
                return ls_errorf(err, "--fault %s: expected Retry-After seconds > 0 after ':'", spec);
            f->throttle_seconds = (uint32_t)n;
        }
    } else {
        return ls_errorf(err, "--fault %s: unknown fault \"%.*s\" (watch-drop, gone, error, throttle, latency, "
                         "provision)", spec,
                         (int)klen, spec);
    }
    return true;
}
