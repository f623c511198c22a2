/*
 * bench_workload.c: reads a workload file (kind: Workload; the format is
 * documented at the top of bench/README.md) through the document loader, so
 * every error names the file, the line and the field.
 */
#include "cli/bench.h"
#include "model/doc.h"
#include "sim/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parse_ctx {
    const ls_doc_set *doc;
    ls_error *err;
} parse_ctx;

static bool field_error(const parse_ctx *pc, const cJSON *at, const char *path, const char *what)
{
    int line = ls_doc_line(pc->doc, at);
    if (line)
        return ls_errorf(pc->err, "%s:%d: %s: %s", ls_doc_source(pc->doc), line, path, what);
    return ls_errorf(pc->err, "%s: %s: %s", ls_doc_source(pc->doc), path, what);
}

static char *where_of(const parse_ctx *pc, const cJSON *at, const char *path)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s:%d: %s", ls_doc_source(pc->doc), ls_doc_line(pc->doc, at), path);
    return ls_xstrdup(buf);
}

/* Every key of obj must be one of `allowed` (NULL-terminated). */
static bool check_keys(const parse_ctx *pc, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool known = false;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp(c->string, allowed[i]) == 0;
        if (!known) {
            char what[400];
            snprintf(what, sizeof what, "unknown field \"%.200s\"", c->string);
            return field_error(pc, c, path, what);
        }
    }
    return true;
}

static bool get_count(const parse_ctx *pc, const cJSON *obj, const char *key, const char *path, bool required,
                      uint32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[300];
    snprintf(p, sizeof p, "%.250s.%s", path, key);
    if (!v) {
        if (required)
            return field_error(pc, obj, p, "required");
        return true;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 10000000 ||
        v->valuedouble != floor(v->valuedouble))
        return field_error(pc, v, p, "expected a non-negative integer");
    *out = (uint32_t)v->valuedouble;
    return true;
}

static bool get_string(const parse_ctx *pc, const cJSON *obj, const char *key, const char *path, bool required,
                       char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[300];
    snprintf(p, sizeof p, "%.250s.%s", path, key);
    if (!v) {
        if (required)
            return field_error(pc, obj, p, "required");
        return true;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return field_error(pc, v, p, "expected a non-empty string");
    *out = ls_xstrdup(v->valuestring);
    return true;
}

/* A template: an object of the given kind (NULL: any kind), copied. */
static bool get_template(const parse_ctx *pc, const cJSON *v, const char *path, const char *kind, cJSON **out,
                         char **where)
{
    if (!cJSON_IsObject(v))
        return field_error(pc, v, path, kind ? "expected a Kubernetes object (the template)" : "expected an object");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(v, "kind");
    if (!cJSON_IsString(k))
        return field_error(pc, v, path, "expected a Kubernetes object with a \"kind\"");
    if (kind && strcmp(k->valuestring, kind) != 0) {
        char what[300];
        snprintf(what, sizeof what, "expected kind %s, got %.100s", kind, k->valuestring);
        return field_error(pc, k, path, what);
    }
    *out = cJSON_Duplicate(v, 1);
    *where = where_of(pc, v, path);
    return true;
}

/* ---- node and pod groups */

static bool parse_zones(const parse_ctx *pc, const cJSON *z, const char *path, bench_group *g)
{
    static const char *const keys[] = {"key", "values", NULL};
    if (!cJSON_IsObject(z))
        return field_error(pc, z, path, "expected {key, values}");
    if (!check_keys(pc, z, path, keys) || !get_string(pc, z, "key", path, true, &g->zone_key))
        return false;
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(z, "values");
    char p[300];
    snprintf(p, sizeof p, "%.250s.values", path);
    if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) == 0)
        return field_error(pc, values ? values : z, p, "expected a non-empty list of label values");
    g->n_zones = (uint32_t)cJSON_GetArraySize(values);
    g->zones = ls_xcalloc(g->n_zones, sizeof *g->zones);
    uint32_t i = 0;
    for (const cJSON *v = values->child; v; v = v->next, i++) {
        if (!cJSON_IsString(v))
            return field_error(pc, v, p, "expected strings");
        g->zones[i] = ls_xstrdup(v->valuestring);
    }
    return true;
}

/* An optional template member of a group (its "where" is not kept). */
static bool optional_template(const parse_ctx *pc, const cJSON *obj, const char *key, const char *kind,
                              const char *path, cJSON **out)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!t)
        return true;
    char p[300], *where = NULL;
    snprintf(p, sizeof p, "%.250s.%s", path, key);
    bool ok = get_template(pc, t, p, kind, out, &where);
    free(where);
    return ok;
}

/* A pod group's gangs (ours): {size, label (optional), template: a PodGroup}. */
static bool parse_gang(const parse_ctx *pc, const cJSON *gang, const char *path, bench_group *g)
{
    static const char *const keys[] = {"size", "label", "template", NULL};
    if (!cJSON_IsObject(gang))
        return field_error(pc, gang, path, "expected {size, label, template}");
    if (!check_keys(pc, gang, path, keys) || !get_count(pc, gang, "size", path, true, &g->gang_size) ||
        !get_string(pc, gang, "label", path, false, &g->gang_label) ||
        !optional_template(pc, gang, "template", "PodGroup", path, &g->gang))
        return false;
    if (g->gang_size == 0)
        return field_error(pc, gang, path, "size: expected at least 1");
    if (!g->gang)
        return field_error(pc, gang, path, "template: required");
    return true;
}

static bool parse_group(const parse_ctx *pc, const cJSON *obj, const char *path, bool nodes, bench_group *g)
{
    static const char *const node_keys[] = {"count", "template", "zones", "csiNode", NULL};
    static const char *const pod_keys[] = {"count", "namespace", "template", "persistentVolume",
                                           "persistentVolumeClaim", "gang", NULL};
    if (!cJSON_IsObject(obj))
        return field_error(pc, obj, path, "expected {count, template, ...}");
    if (!check_keys(pc, obj, path, nodes ? node_keys : pod_keys) || !get_count(pc, obj, "count", path, true, &g->count))
        return false;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "template");
    char p[300];
    snprintf(p, sizeof p, "%.250s.template", path);
    if (!t)
        return field_error(pc, obj, p, "required");
    if (!get_template(pc, t, p, nodes ? "Node" : "Pod", &g->tmpl, &g->where))
        return false;
    if (nodes) {
        const cJSON *z = cJSON_GetObjectItemCaseSensitive(obj, "zones");
        snprintf(p, sizeof p, "%.250s.zones", path);
        if (z && !parse_zones(pc, z, p, g))
            return false;
        return optional_template(pc, obj, "csiNode", "CSINode", path, &g->csinode);
    }
    if (!optional_template(pc, obj, "persistentVolume", "PersistentVolume", path, &g->pv) ||
        !optional_template(pc, obj, "persistentVolumeClaim", "PersistentVolumeClaim", path, &g->pvc))
        return false;
    if (!g->pv != !g->pvc)
        return field_error(pc, obj, path, "persistentVolume and persistentVolumeClaim go together");
    const cJSON *gang = cJSON_GetObjectItemCaseSensitive(obj, "gang");
    snprintf(p, sizeof p, "%.250s.gang", path);
    if (gang && !parse_gang(pc, gang, p, g))
        return false;
    if (!get_string(pc, obj, "namespace", path, false, &g->ns))
        return false;
    if (!g->ns) {   /* the template's namespace, else default */
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(g->tmpl, "metadata");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
        g->ns = ls_xstrdup(cJSON_IsString(ns) && ns->valuestring[0] ? ns->valuestring : "default");
    }
    return true;
}

/* One group (an object) or a list of groups. */
static bool parse_groups(const parse_ctx *pc, const cJSON *v, const char *path, bool nodes, ls_vec *out)
{
    if (cJSON_IsObject(v))
        return parse_group(pc, v, path, nodes, ls_vec_push(out));
    if (!cJSON_IsArray(v))
        return field_error(pc, v, path, "expected a group {count, template, ...} or a list of groups");
    int i = 0;
    for (const cJSON *g = v->child; g; g = g->next, i++) {
        char p[300];
        snprintf(p, sizeof p, "%.250s[%d]", path, i);
        if (!parse_group(pc, g, p, nodes, ls_vec_push(out)))
            return false;
    }
    return true;
}

/* ---- namespaces and churn */

static bool parse_namespaces(const parse_ctx *pc, const cJSON *v, bench_workload *w)
{
    if (!cJSON_IsArray(v))
        return field_error(pc, v, "namespaces", "expected a list of names");
    w->n_namespaces = (uint32_t)cJSON_GetArraySize(v);
    w->namespaces = ls_xcalloc(w->n_namespaces + 1, sizeof *w->namespaces);
    uint32_t i = 0;
    for (const cJSON *n = v->child; n; n = n->next, i++) {
        if (!cJSON_IsString(n) || !n->valuestring[0])
            return field_error(pc, n, "namespaces", "expected non-empty strings");
        w->namespaces[i] = ls_xstrdup(n->valuestring);
    }
    return true;
}

/* A list of object templates (arr is an array), each copied with where it
 * stands ("file:line"); the arrays get a NULL entry at the end. */
static bool get_templates(const parse_ctx *pc, const cJSON *arr, const char *path, uint32_t *n, cJSON ***templates,
                          char ***where)
{
    *n = (uint32_t)cJSON_GetArraySize(arr);
    *templates = ls_xcalloc(*n + 1, sizeof **templates);
    *where = ls_xcalloc(*n + 1, sizeof **where);
    uint32_t i = 0;
    for (const cJSON *o = arr->child; o; o = o->next, i++) {
        char p[96];
        snprintf(p, sizeof p, "%s[%u]", path, i);
        if (!get_template(pc, o, p, NULL, &(*templates)[i], &(*where)[i]))
            return false;
    }
    return true;
}

/* objects: any kind the scheduler reads, or a custom resource. */
static bool parse_objects(const parse_ctx *pc, const cJSON *v, bench_workload *w)
{
    if (!cJSON_IsArray(v))
        return field_error(pc, v, "objects", "expected a list of Kubernetes objects");
    return get_templates(pc, v, "objects", &w->n_objects, &w->objects, &w->objects_where);
}

static bool parse_churn_mode(const parse_ctx *pc, const cJSON *obj, bench_churn *ch)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "mode");
    if (!m)
        return field_error(pc, obj, "churn.mode", "required (create, recreate or heartbeat)");
    if (cJSON_IsString(m) && strcmp(m->valuestring, "create") == 0)
        ch->mode = BENCH_CHURN_CREATE;
    else if (cJSON_IsString(m) && strcmp(m->valuestring, "recreate") == 0)
        ch->mode = BENCH_CHURN_RECREATE;
    else if (cJSON_IsString(m) && strcmp(m->valuestring, "heartbeat") == 0)
        ch->mode = BENCH_CHURN_HEARTBEAT;
    else
        return field_error(pc, m, "churn.mode", "expected create, recreate or heartbeat");
    return true;
}

static bool parse_churn_templates(const parse_ctx *pc, const cJSON *obj, bench_churn *ch)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "templates");
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) == 0)
        return field_error(pc, t ? t : obj, "churn.templates", "expected a non-empty list of objects");
    return get_templates(pc, t, "churn.templates", &ch->n_templates, &ch->templates, &ch->where);
}

static bool parse_churn(const parse_ctx *pc, const cJSON *obj, bench_churn *ch)
{
    static const char *const keys[] = {"mode", "number", "interval", "namespace", "templates", NULL};
    if (!cJSON_IsObject(obj))
        return field_error(pc, obj, "churn", "expected {mode, interval, templates, ...}");
    if (!check_keys(pc, obj, "churn", keys) || !parse_churn_mode(pc, obj, ch))
        return false;
    ch->number = ch->mode == BENCH_CHURN_RECREATE ? 1 : 0;
    if (!get_count(pc, obj, "number", "churn", false, &ch->number))
        return false;
    if (ch->mode == BENCH_CHURN_RECREATE && ch->number == 0)
        return field_error(pc, cJSON_GetObjectItemCaseSensitive(obj, "number"), "churn.number",
                           "recreate mode keeps at least 1 object per template");
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(obj, "interval");
    ch->interval_ms = 500;   /* upstream's default intervalMilliseconds */
    if (iv && (!ls_duration_parse(iv, &ch->interval_ms) || ch->interval_ms == 0))
        return field_error(pc, iv, "churn.interval", "expected a duration above 0 (\"200ms\", \"1s\")");
    if (!get_string(pc, obj, "namespace", "churn", false, &ch->ns))
        return false;
    if (!ch->ns)
        ch->ns = ls_xstrdup("default");
    if (ch->mode == BENCH_CHURN_HEARTBEAT) {
        if (cJSON_GetObjectItemCaseSensitive(obj, "templates"))
            return field_error(pc, cJSON_GetObjectItemCaseSensitive(obj, "templates"), "churn.templates",
                               "heartbeat mode updates the existing nodes: no templates");
        return true;
    }
    return parse_churn_templates(pc, obj, ch);
}

/* ---- the document */

static bool parse_header(const parse_ctx *pc, const cJSON *root, bench_workload *w)
{
    static const char *const keys[] = {"apiVersion", "kind", "name", "description", "threshold", "templates",
                                       "nodes", "namespaces", "objects", "initPods", "measurePods", "churn", "ops", NULL};
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "Workload") != 0)
        return field_error(pc, kind ? kind : root, "kind", "expected Workload");
    if (!check_keys(pc, root, "workload", keys) || !get_string(pc, root, "name", "workload", true, &w->name))
        return false;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "threshold");
    if (t && (!cJSON_IsNumber(t) || t->valuedouble < 0))
        return field_error(pc, t, "threshold", "expected pods/s (a non-negative number)");
    w->threshold = t ? t->valuedouble : 0;
    return true;
}

/* ---- staged workloads: ops (upstream's workloadTemplate opcodes) */

static bool get_bool(const parse_ctx *pc, const cJSON *obj, const char *key, const char *path, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[300];
    snprintf(p, sizeof p, "%.250s.%s", path, key);
    if (v && !cJSON_IsBool(v))
        return field_error(pc, v, p, "expected true or false");
    *out = v && cJSON_IsTrue(v);
    return true;
}

static bool get_strings(const parse_ctx *pc, const cJSON *v, const char *path, uint32_t *n, char ***out)
{
    if (!cJSON_IsArray(v))
        return field_error(pc, v, path, "expected a list of strings");
    *n = (uint32_t)cJSON_GetArraySize(v);
    *out = ls_xcalloc(*n + 1, sizeof **out);
    uint32_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e) || !e->valuestring[0])
            return field_error(pc, e, path, "expected non-empty strings");
        (*out)[i] = ls_xstrdup(e->valuestring);
    }
    return true;
}

/* namespaces: [..] and labelSelector: {key: value} (upstream's map of labels). */
static bool parse_selector(const parse_ctx *pc, const cJSON *obj, const char *path, bench_selector *sel)
{
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(obj, "namespaces");
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(obj, "labelSelector");
    char p[300];
    snprintf(p, sizeof p, "%.250s.namespaces", path);
    if (ns && !get_strings(pc, ns, p, &sel->n_namespaces, &sel->namespaces))
        return false;
    if (!ls)
        return true;
    snprintf(p, sizeof p, "%.250s.labelSelector", path);
    if (!cJSON_IsObject(ls))
        return field_error(pc, ls, p, "expected a map of labels {key: value}");
    sel->n_labels = (uint32_t)cJSON_GetArraySize(ls);
    sel->keys = ls_xcalloc(sel->n_labels + 1, sizeof *sel->keys);
    sel->values = ls_xcalloc(sel->n_labels + 1, sizeof *sel->values);
    uint32_t i = 0;
    for (const cJSON *e = ls->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e))
            return field_error(pc, e, p, "expected string label values");
        sel->keys[i] = ls_xstrdup(e->string);
        sel->values[i] = ls_xstrdup(e->valuestring);
    }
    return true;
}

static bool op_template(const parse_ctx *pc, const cJSON *obj, const char *path, const char *kind, bench_op *op)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "template");
    char p[300];
    snprintf(p, sizeof p, "%.250s.template", path);
    if (!t)
        return field_error(pc, obj, p, "required");
    return get_template(pc, t, p, kind, &op->group.tmpl, &op->group.where);
}

static bool parse_op_create(const parse_ctx *pc, const cJSON *obj, const char *path, bench_op *op)
{
    bench_group *g = &op->group;
    if (!get_count(pc, obj, "count", path, true, &g->count) ||
        !op_template(pc, obj, path, op->code == BENCH_OP_CREATE_NODES ? "Node" : "Pod", op))
        return false;
    if (op->code == BENCH_OP_CREATE_NODES)
        return optional_template(pc, obj, "csiNode", "CSINode", path, &g->csinode);
    if (!get_bool(pc, obj, "skipWaitToCompletion", path, &op->skip_wait) ||
        !get_string(pc, obj, "namespace", path, false, &g->ns) ||
        !optional_template(pc, obj, "persistentVolume", "PersistentVolume", path, &g->pv) ||
        !optional_template(pc, obj, "persistentVolumeClaim", "PersistentVolumeClaim", path, &g->pvc))
        return false;
    if (!g->pv != !g->pvc)
        return field_error(pc, obj, path, "persistentVolume and persistentVolumeClaim go together");
    if (!g->ns)
        g->ns = ls_xstrdup("default");
    return true;
}

static bool parse_op_update(const parse_ctx *pc, const cJSON *obj, const char *path, bench_op *op)
{
    op->group.count = 1;   /* upstream's default */
    if (!get_count(pc, obj, "count", path, false, &op->group.count) ||
        !get_count(pc, obj, "updatePerSecond", path, false, &op->per_second) || !op_template(pc, obj, path, NULL, op) ||
        !get_string(pc, obj, "namespace", path, false, &op->group.ns))
        return false;
    const char *kind = cJSON_GetObjectItemCaseSensitive(op->group.tmpl, "kind")->valuestring;
    char p[300];
    snprintf(p, sizeof p, "%.250s.template", path);
    if (strcmp(kind, "Pod") != 0 && strcmp(kind, "Node") != 0)
        return field_error(pc, cJSON_GetObjectItemCaseSensitive(obj, "template"), p,
                           "updateAny updates Pods or Nodes here, got another kind");
    if (!strcmp(kind, "Pod") != !!op->group.ns)
        return field_error(pc, obj, path, "namespace: required for a Pod, not allowed for a Node");
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(obj, "subresources");
    uint32_t n = 0;
    char **names = NULL;
    snprintf(p, sizeof p, "%.250s.subresources", path);
    bool ok = !sub || get_strings(pc, sub, p, &n, &names);
    for (uint32_t i = 0; i < n; i++) {
        if (ok && strcmp(names[i], "resize") != 0)
            ok = field_error(pc, sub, p, "expected [resize] (the only subresource updated here)");
        free(names[i]);
    }
    free(names);
    return ok;
}

static bool parse_op_fields(const parse_ctx *pc, const cJSON *obj, const char *path, bench_op *op)
{
    switch (op->code) {
    case BENCH_OP_CREATE_NODES:
    case BENCH_OP_CREATE_PODS: return parse_op_create(pc, obj, path, op);
    case BENCH_OP_UPDATE_ANY: return parse_op_update(pc, obj, path, op);
    case BENCH_OP_DELETE_PODS:
        if (!get_string(pc, obj, "namespace", path, true, &op->group.ns) ||
            !get_count(pc, obj, "deletePodsPerSecond", path, false, &op->per_second) ||
            !get_bool(pc, obj, "skipWaitToCompletion", path, &op->skip_wait))
            return false;
        return parse_selector(pc, obj, path, &op->sel);
    case BENCH_OP_BARRIER: {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(obj, "stageRequirement");
        char p[300];
        snprintf(p, sizeof p, "%.250s.stageRequirement", path);
        if (r && !(cJSON_IsString(r) && (!strcmp(r->valuestring, "Attempted") || !strcmp(r->valuestring, "Scheduled"))))
            return field_error(pc, r, p, "expected Attempted or Scheduled");
        op->attempted = r && !strcmp(r->valuestring, "Attempted");
        return parse_selector(pc, obj, path, &op->sel);
    }
    case BENCH_OP_START_COLLECTING: return parse_selector(pc, obj, path, &op->sel);
    default: return true;
    }
}

static const char *const op_names[] = {"createNodes", "createPods", "barrier", "updateAny", "deletePods",
                                       "startCollectingMetrics", "stopCollectingMetrics", NULL};
static const char *const *const op_keys[] = {
    (const char *const[]){"opcode", "count", "template", "csiNode", NULL},
    (const char *const[]){"opcode", "count", "namespace", "template", "persistentVolume", "persistentVolumeClaim",
                          "skipWaitToCompletion", NULL},
    (const char *const[]){"opcode", "stageRequirement", "namespaces", "labelSelector", NULL},
    (const char *const[]){"opcode", "count", "namespace", "template", "updatePerSecond", "subresources", NULL},
    (const char *const[]){"opcode", "namespace", "labelSelector", "deletePodsPerSecond", "skipWaitToCompletion",
                          NULL},
    (const char *const[]){"opcode", "name", "namespaces", "labelSelector", NULL},
    (const char *const[]){"opcode", NULL},
};

static bool parse_op(const parse_ctx *pc, const cJSON *obj, const char *path, bench_op *op)
{
    op->where = where_of(pc, obj, path);
    if (!cJSON_IsObject(obj))
        return field_error(pc, obj, path, "expected {opcode: ..., ...}");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "opcode");
    op->code = -1;
    for (int i = 0; op_names[i] && cJSON_IsString(code); i++)
        if (strcmp(code->valuestring, op_names[i]) == 0)
            op->code = i;
    char p[300];
    snprintf(p, sizeof p, "%.250s.opcode", path);
    if (op->code < 0)
        return field_error(pc, code ? code : obj, p,
                           "expected createNodes, createPods, barrier, updateAny, deletePods, "
                           "startCollectingMetrics or stopCollectingMetrics");
    return check_keys(pc, obj, path, op_keys[op->code]) && parse_op_fields(pc, obj, path, op);
}

/* Collecting starts and stops once, in that order. */
static bool check_op_order(const parse_ctx *pc, const cJSON *list, const bench_workload *w)
{
    int starts = 0, stops = 0;
    for (uint32_t i = 0; i < w->ops.len; i++) {
        int code = LS_VEC_AT(&w->ops, bench_op, i).code;
        starts += code == BENCH_OP_START_COLLECTING;
        stops += code == BENCH_OP_STOP_COLLECTING;
        if (stops > starts || starts > 1 || stops > 1)
            return field_error(pc, list, "ops", "startCollectingMetrics, then stopCollectingMetrics, once each");
    }
    if (starts != 1 || stops != 1)
        return field_error(pc, list, "ops", "expected one startCollectingMetrics and one stopCollectingMetrics");
    return true;
}

static bool parse_ops(const parse_ctx *pc, const cJSON *root, const cJSON *list, bench_workload *w)
{
    static const char *const others[] = {"nodes", "initPods", "measurePods", "churn", "namespaces", NULL};
    for (int i = 0; others[i]; i++)
        if (cJSON_GetObjectItemCaseSensitive(root, others[i]))
            return field_error(pc, cJSON_GetObjectItemCaseSensitive(root, others[i]), others[i],
                               "a staged workload (ops) creates everything through its ops");
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
        return field_error(pc, list, "ops", "expected a non-empty list of ops");
    int i = 0;
    for (const cJSON *o = list->child; o; o = o->next, i++) {
        char p[64];
        snprintf(p, sizeof p, "ops[%d]", i);
        if (!parse_op(pc, o, p, ls_vec_push(&w->ops)))
            return false;
    }
    return check_op_order(pc, list, w);
}

static bool parse_body(const parse_ctx *pc, const cJSON *root, bench_workload *w)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    if (ops)
        return parse_ops(pc, root, ops, w);
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(root, "namespaces");
    const cJSON *objects = cJSON_GetObjectItemCaseSensitive(root, "objects");
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(root, "initPods");
    const cJSON *measure = cJSON_GetObjectItemCaseSensitive(root, "measurePods");
    const cJSON *churn = cJSON_GetObjectItemCaseSensitive(root, "churn");
    if (!nodes)
        return field_error(pc, root, "nodes", "required");
    if (!measure)
        return field_error(pc, root, "measurePods", "required");
    if (!parse_groups(pc, nodes, "nodes", true, &w->nodes) || (ns && !parse_namespaces(pc, ns, w)) ||
        (objects && !parse_objects(pc, objects, w)) ||
        (init && !parse_groups(pc, init, "initPods", false, &w->init_pods)) ||
        !parse_groups(pc, measure, "measurePods", false, &w->measure_pods))
        return false;
    if (bench_group_total(&w->measure_pods) == 0)
        return field_error(pc, measure, "measurePods", "expected at least one measured pod");
    w->has_churn = churn != NULL;
    return !churn || parse_churn(pc, churn, &w->churn);
}

bool bench_workload_load(bench_workload *w, const char *path, ls_error *err)
{
    memset(w, 0, sizeof *w);
    ls_vec_init(&w->nodes, sizeof(bench_group));
    ls_vec_init(&w->init_pods, sizeof(bench_group));
    ls_vec_init(&w->measure_pods, sizeof(bench_group));
    ls_vec_init(&w->ops, sizeof(bench_op));
    w->source = ls_xstrdup(path);
    ls_doc_set *doc = ls_doc_load_file(path, err);
    if (!doc)
        return false;
    parse_ctx pc = {doc, err};
    bool ok = true;
    if (ls_doc_count(doc) != 1)
        ok = ls_errorf(err, "%s: expected one document (kind: Workload), got %u", path, ls_doc_count(doc));
    const cJSON *root = ok ? ls_doc_get(doc, 0) : NULL;
    ok = ok && parse_header(&pc, root, w) && parse_body(&pc, root, w);
    ls_doc_free(doc);
    return ok;
}

/* ---- freeing */

static void group_free(bench_group *g)
{
    free(g->ns);
    cJSON_Delete(g->tmpl);
    free(g->where);
    free(g->zone_key);
    ls_strv_free(g->zones, g->n_zones);
    cJSON_Delete(g->csinode);
    cJSON_Delete(g->pv);
    cJSON_Delete(g->pvc);
    free(g->gang_label);
    cJSON_Delete(g->gang);
}

static void groups_free(ls_vec *v)
{
    for (uint32_t i = 0; i < v->len; i++)
        group_free(&LS_VEC_AT(v, bench_group, i));
    ls_vec_free(v);
}

static void ops_free(ls_vec *ops)
{
    for (uint32_t i = 0; i < ops->len; i++) {
        bench_op *op = &LS_VEC_AT(ops, bench_op, i);
        free(op->where);
        group_free(&op->group);
        ls_strv_free(op->sel.namespaces, op->sel.n_namespaces);
        ls_strv_free(op->sel.keys, op->sel.n_labels);
        ls_strv_free(op->sel.values, op->sel.n_labels);
    }
    ls_vec_free(ops);
}

/* What get_templates made: n templates and where each came from. */
static void templates_free(cJSON **templates, char **where, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        cJSON_Delete(templates[i]);
    free(templates);
    ls_strv_free(where, n);
}

void bench_workload_free(bench_workload *w)
{
    ops_free(&w->ops);
    free(w->name);
    free(w->source);
    groups_free(&w->nodes);
    groups_free(&w->init_pods);
    groups_free(&w->measure_pods);
    ls_strv_free(w->namespaces, w->n_namespaces);
    templates_free(w->objects, w->objects_where, w->n_objects);
    templates_free(w->churn.templates, w->churn.where, w->churn.n_templates);
    free(w->churn.ns);
    memset(w, 0, sizeof *w);
}

uint32_t bench_group_total(const ls_vec *groups)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < groups->len; i++)
        n += LS_VEC_AT(groups, bench_group, i).count;
    return n;
}
