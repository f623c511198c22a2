/*
 * cluster_input.c: warnings about a cluster file's Pods and Nodes, each with
 * its file and line and the object: a field the API type has no member for
 * (with the closest one: `nodeSelecter:` -> nodeSelector), a pod without
 * containers, a node whose allocatable (or capacity, when it reports no
 * allocatable) lacks pods, cpu or memory, naming what the scheduler will
 * then do. `--strict` makes them errors (cluster.c).
 */
#include "sim/cluster_input.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model/fields_check.h"

typedef struct sink {
    ls_vec *warnings;
    const ls_doc_set *doc;
    char object[400];    /* "Pod default/web", "Node n1" */
} sink;

static void add(sink *s, const cJSON *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(sink *s, const cJSON *at, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t n = strlen(what) + strlen(s->object) + 600;
    char *text = ls_xmalloc(n);
    snprintf(text, n, "%s:%d: %s: %s", ls_doc_source(s->doc), ls_doc_line(s->doc, at), s->object, what);
    *(char **)ls_vec_push(s->warnings) = text;
}

static void unknown_field(void *ud, const cJSON *at, const char *path, const char *suggestion)
{
    char hint[200] = "";
    if (suggestion)
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", suggestion);
    add(ud, at, "%s%sunknown field \"%s\"%s: it is ignored", path, *path ? ": " : "", at->string, hint);
}

static const cJSON *member(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static void check_pod(sink *s, const cJSON *obj)
{
    const cJSON *spec = member(obj, "spec");
    const cJSON *containers = member(spec, "containers");
    if (!cJSON_GetArraySize(containers))
        add(s, containers ? containers : spec ? spec : obj,
            "spec.containers: no containers (the API server requires one): the scheduler places the pod as "
            "requesting nothing but its overhead");
}

/* What a node without `resource` in allocatable does to the pods. */
static const char *without(const char *resource)
{
    if (strcmp(resource, "pods") == 0)
        return "no pod fits on it (NodeResourcesFit: \"Too many pods\")";
    if (strcmp(resource, "cpu") == 0)
        return "a pod requesting cpu does not fit on it (NodeResourcesFit: \"Insufficient cpu\")";
    return "a pod requesting memory does not fit on it (NodeResourcesFit: \"Insufficient memory\")";
}

static void check_node(sink *s, const cJSON *obj)
{
    const cJSON *status = member(obj, "status");
    const cJSON *alloc = member(status, "allocatable");
    const char *field = "status.allocatable";
    if (!alloc) {   /* the decoder then takes the capacity */
        alloc = member(status, "capacity");
        field = "status.capacity (no allocatable)";
    }
    static const char *const needed[] = {"pods", "cpu", "memory"};
    for (int i = 0; i < 3; i++)
        if (!member(alloc, needed[i]))
            add(s, alloc ? alloc : status ? status : obj, "%s has no %s: %s", field, needed[i], without(needed[i]));
}

void ls_cluster_input_warnings(ls_vec *warnings, const cJSON *obj, const ls_doc_set *doc)
{
    const cJSON *kind = member(obj, "kind");
    const cJSON *meta = member(obj, "metadata");
    const cJSON *name = member(meta, "name"), *ns = member(meta, "namespace");
    if (!cJSON_IsString(kind) || !doc)
        return;
    bool pod = strcmp(kind->valuestring, "Pod") == 0;
    if (!pod && strcmp(kind->valuestring, "Node") != 0)
        return;
    sink s = {warnings, doc, ""};
    const char *n = cJSON_IsString(name) ? name->valuestring : "?";
    if (pod)
        snprintf(s.object, sizeof s.object, "Pod %s/%s", cJSON_IsString(ns) ? ns->valuestring : "default", n);
    else
        snprintf(s.object, sizeof s.object, "Node %s", n);
    ls_check_known_fields(obj, unknown_field, &s);
    if (pod)
        check_pod(&s, obj);
    else
        check_node(&s, obj);
}
