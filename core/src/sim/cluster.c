/*
 * cluster.c: the embedded cluster (see cluster.h). Objects are decoded once
 * at load; PriorityClass admission (priority value and preemptionPolicy from
 * the class, globalDefault) is applied as the API server would; bindings set
 * spec.nodeName and come back to the scheduler as the pod's update event; a
 * timeline's steps create, update, patch and delete objects on the virtual
 * clock. Replaced objects are kept until the cluster is freed, because the
 * scheduler's snapshot may still point at them. A pod's name and UID are
 * each one pod's: a duplicate is refused with both places named.
 *
 * Over 800 lines: loading, admission, the timeline's object changes and the
 * scheduler source share the pod table and its indexes (names, UIDs) that
 * they must keep consistent; split, each would reach into the others. The PV
 * controller's view of the cluster (pv_controller.h: get, each, put over the
 * same objects) is here too: it needs the cluster's own lookups and
 * replace/add paths, so that its writes are events like a timeline's.
 */
#include "sim/cluster.h"
#include "sim/apiserver.h"
#include "luasched/map.h"
#include "sim/cluster_input.h"
#include "model/doc.h"
#include "sim/pv_controller.h"
#include "sim/timeline.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct priority_class {
    ls_str name;
    int32_t value;
    bool global_default;
    bool has_policy;
    uint8_t policy;
} priority_class;

/* What the live scheduler did with a pod of a recording (luasched record). */
typedef struct reference_binding {
    ls_str pod;                /* interned "namespace/name" */
    ls_str node;
} reference_binding;

typedef struct skipped_kind {
    char *kind;
    uint32_t count;
} skipped_kind;

typedef struct sim_node {
    ls_node_obj *obj;
    cJSON *json;               /* kept for timeline patches */
    bool deleted;
} sim_node;

struct ls_cluster {
    ls_vec pods;               /* ls_sim_pod, index = pod id */
    ls_vec nodes;              /* sim_node */
    ls_vec classes;            /* priority_class */
    ls_vec skipped;            /* skipped_kind */
    ls_vec objects;            /* ls_object_obj *: Namespaces, Services, ..., custom resources */
    ls_vec retired_pods, retired_nodes, retired_objects;
    ls_map pod_keys;           /* interned "ns/name" -> index + 1 */
    ls_map pod_uids;           /* interned metadata.uid -> index + 1 (a UID is one pod's) */
    ls_map node_names;         /* name -> index + 1 */
    ls_timeline timeline;
    bool keep_json;            /* a timeline may patch objects */
    ls_scheduler *sched;
    ls_attempt_observer observer;
    void *observer_ud;
    bool admitted;
    char *warning;             /* the first timeline step that could not be applied */
    uint32_t generated;        /* names made from generateName by a plugin's create */
    uint64_t plugin_created;   /* bytes of JSON plugins created (capped: cluster_create_object) */
    uint32_t kept_call;        /* the plugin call (view generation) kept_in_call counts */
    uint64_t kept_in_call;     /* bytes of the versions that call's writes replaced (plugin_keeps) */
    ls_vec input_warnings;     /* char *: what the files' Pods and Nodes say wrong (cluster_input.c) */
    ls_vec load_errors;        /* char *: every error of the last load, up to MAX_LOAD_ERRORS */
    bool strict;               /* input warnings are errors */
    uint64_t now_ms;           /* the virtual time the timeline has been played to */
    ls_vec reference;          /* reference_binding: a recording's Bindings document */
    char *not_recorded;        /* its notRecorded list, "KIND: reason; ..." (NULL: none) */
    void (*on_advance)(void *ud, uint64_t now_ms);
    void *on_advance_ud;
    ls_provision_fault provision_fault;
};

ls_cluster *ls_cluster_new(void)
{
    ls_cluster *c = ls_xcalloc(1, sizeof *c);
    ls_vec_init(&c->pods, sizeof(ls_sim_pod));
    ls_vec_init(&c->nodes, sizeof(sim_node));
    ls_vec_init(&c->classes, sizeof(priority_class));
    ls_vec_init(&c->skipped, sizeof(skipped_kind));
    ls_vec_init(&c->input_warnings, sizeof(char *));
    ls_vec_init(&c->load_errors, sizeof(char *));
    ls_vec_init(&c->objects, sizeof(ls_object_obj *));
    ls_vec_init(&c->retired_pods, sizeof(ls_pod_obj *));
    ls_vec_init(&c->retired_nodes, sizeof(ls_node_obj *));
    ls_vec_init(&c->retired_objects, sizeof(ls_object_obj *));
    ls_map_init(&c->pod_keys);
    ls_vec_init(&c->reference, sizeof(reference_binding));
    ls_map_init(&c->pod_uids);
    ls_map_init(&c->node_names);
    ls_timeline_init(&c->timeline);
    return c;
}

static void free_ptr_vec(ls_vec *v, void (*f)(void *))
{
    for (uint32_t i = 0; i < v->len; i++)
        f(LS_VEC_AT(v, void *, i));
    ls_vec_free(v);
}

static void pod_obj_free(void *p) { ls_pod_obj_free(p); }
static void node_obj_free(void *p) { ls_node_obj_free(p); }
static void object_obj_free(void *p) { ls_object_obj_free(p); }

void ls_cluster_free(ls_cluster *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *p = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        ls_pod_obj_free(p->obj);
        free(p->message);
        cJSON_Delete(p->json);
    }
    for (uint32_t i = 0; i < c->nodes.len; i++) {
        sim_node *n = &LS_VEC_AT(&c->nodes, sim_node, i);
        ls_node_obj_free(n->obj);
        cJSON_Delete(n->json);
    }
    for (uint32_t i = 0; i < c->skipped.len; i++)
        free(LS_VEC_AT(&c->skipped, skipped_kind, i).kind);
    ls_vec_free(&c->pods);
    ls_vec_free(&c->nodes);
    ls_vec_free(&c->classes);
    ls_vec_free(&c->skipped);
    ls_vec_free(&c->reference);
    free(c->not_recorded);
    free_ptr_vec(&c->objects, object_obj_free);
    free_ptr_vec(&c->retired_pods, pod_obj_free);
    free_ptr_vec(&c->retired_nodes, node_obj_free);
    free_ptr_vec(&c->retired_objects, object_obj_free);
    ls_map_free(&c->pod_keys);
    ls_map_free(&c->pod_uids);
    ls_map_free(&c->node_names);
    ls_timeline_free(&c->timeline);
    free(c->warning);
    free_ptr_vec(&c->input_warnings, free);
    free_ptr_vec(&c->load_errors, free);
    free(c);
}

/* ---- notices and errors */

static void note_skipped(ls_cluster *c, const char *kind)
{
    for (uint32_t i = 0; i < c->skipped.len; i++) {
        skipped_kind *s = &LS_VEC_AT(&c->skipped, skipped_kind, i);
        if (strcmp(s->kind, kind) == 0) {
            s->count++;
            return;
        }
    }
    skipped_kind *s = ls_vec_push(&c->skipped);
    s->kind = ls_xstrdup(kind);
    s->count = 1;
}

void ls_cluster_print_notices(const ls_cluster *c, FILE *out)
{
    for (uint32_t i = 0; i < c->input_warnings.len; i++)
        fprintf(out, "warning: %s\n", LS_VEC_AT(&c->input_warnings, char *, i));
    for (uint32_t i = 0; i < c->skipped.len; i++) {
        const skipped_kind *s = &LS_VEC_AT(&c->skipped, skipped_kind, i);
        fprintf(out, "notice: skipped %u %s object%s (not used by the scheduler)\n", s->count, s->kind,
                s->count == 1 ? "" : "s");
    }
}

const char *ls_cluster_warning(const ls_cluster *c)
{
    return c->warning;
}

void ls_cluster_set_strict(ls_cluster *c, bool strict)
{
    c->strict = strict;
}

uint32_t ls_cluster_num_input_warnings(const ls_cluster *c)
{
    return c->input_warnings.len;
}

uint32_t ls_cluster_num_load_errors(const ls_cluster *c)
{
    return c->load_errors.len;
}

const char *ls_cluster_load_error(const ls_cluster *c, uint32_t i)
{
    return i < c->load_errors.len ? LS_VEC_AT(&c->load_errors, char *, i) : NULL;
}

static bool where_error(ls_error *err, const char *where, const char *fmt, const char *arg)
{
    char what[900];
    snprintf(what, sizeof what, fmt, arg);
    return ls_errorf(err, "%s: %s", where, what);
}

/* "file.yaml:12" for an object of a document, or the step's place. */
static void where_of(const ls_doc_set *doc, const cJSON *obj, const char *fallback, char *buf, size_t len)
{
    if (doc)
        snprintf(buf, len, "%s:%d", ls_doc_source(doc), ls_doc_line(doc, obj));
    else
        snprintf(buf, len, "%s", fallback ? fallback : "<timeline>");
}

/* ---- lookups */

static ls_str pod_key(ls_str ns, ls_str name)
{
    char key[520];
    snprintf(key, sizeof key, "%.255s/%.255s", ls_str_get(ns), ls_str_get(name));
    return ls_intern_cstr(key);
}

static ls_sim_pod *find_pod(ls_cluster *c, ls_str ns, ls_str name)
{
    uintptr_t i = (uintptr_t)ls_map_get(&c->pod_keys, pod_key(ns, name));
    return i ? &LS_VEC_AT(&c->pods, ls_sim_pod, i - 1) : NULL;
}

static sim_node *find_node(ls_cluster *c, ls_str name)
{
    uintptr_t i = (uintptr_t)ls_map_get(&c->node_names, name);
    return i ? &LS_VEC_AT(&c->nodes, sim_node, i - 1) : NULL;
}

static int find_object(const ls_cluster *c, ls_str kind, ls_str ns, ls_str name)
{
    for (uint32_t i = 0; i < c->objects.len; i++) {
        const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
        if (o->kind == kind && o->ns == ns && o->name == name)
            return (int)i;
    }
    return -1;
}

/* ---- admission: priority from PriorityClass, as the Priority admission plugin */

static const priority_class *find_class(const ls_cluster *c, ls_str name, bool global_default)
{
    for (uint32_t i = 0; i < c->classes.len; i++) {
        const priority_class *pc = &LS_VEC_AT(&c->classes, priority_class, i);
        if (global_default ? pc->global_default : pc->name == name)
            return pc;
    }
    return NULL;
}

static bool admit_pod(const ls_cluster *c, ls_sim_pod *sp, ls_error *err)
{
    ls_pod *pod = &sp->obj->pod;
    if (pod->has_priority)
        return true;
    const priority_class *pc = pod->priority_class_name ? find_class(c, pod->priority_class_name, false)
                                                        : find_class(c, 0, true);
    if (pod->priority_class_name && !pc)
        return ls_errorf(err, "%s: pod %s/%s: no PriorityClass with name %s was found", sp->where,
                         ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->priority_class_name));
    if (!pc)
        return true;
    pod->priority = pc->value;
    pod->has_priority = 1;
    if (!sp->has_policy && pc->has_policy)
        pod->preemption_policy = pc->policy;
    return true;
}

bool ls_cluster_admit(ls_cluster *c, ls_error *err)
{
    if (c->admitted)
        return true;
    for (uint32_t i = 0; i < c->pods.len; i++)
        if (!admit_pod(c, &LS_VEC_AT(&c->pods, ls_sim_pod, i), err))
            return false;
    c->admitted = true;
    return true;
}

/* ---- decoding one object of any kind */

static ls_pod_obj *decode_pod(const cJSON *obj, const ls_doc_set *doc, const char *where, ls_error *err)
{
    ls_decode_ctx ctx = {doc ? ls_doc_source(doc) : where, doc ? ls_doc_line_of : NULL, (void *)doc};
    return ls_pod_decode(obj, &ctx, err);
}

static ls_node_obj *decode_node(const cJSON *obj, const ls_doc_set *doc, const char *where, ls_error *err)
{
    ls_decode_ctx ctx = {doc ? ls_doc_source(doc) : where, doc ? ls_doc_line_of : NULL, (void *)doc};
    return ls_node_decode(obj, &ctx, err);
}

/* A custom resource's registered name: plural.version.group (0 for a kind
 * that is not a custom resource). */
ls_str ls_cluster_custom_resource_name(const cJSON *obj)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
    char name[700];
    if (!cJSON_IsString(kind) || !cJSON_IsString(api) ||
        !ls_custom_resource_name(kind->valuestring, api->valuestring, name, sizeof name))
        return 0;
    return ls_intern_cstr(name);
}

static ls_object_obj *decode_object(const cJSON *obj, const ls_doc_set *doc, const char *where, ls_str custom,
                                    ls_error *err)
{
    ls_decode_ctx ctx = {doc ? ls_doc_source(doc) : where, doc ? ls_doc_line_of : NULL, (void *)doc};
    ls_object_obj *o = ls_object_decode(obj, &ctx, err);
    if (o && custom)
        o->obj.kind = custom;
    return o;
}

/* ---- adding objects (at load, and by timeline steps) */

/* The pod is gone from the cluster: its name and UID may be used again. */
static void forget_pod(ls_cluster *c, const ls_pod *pod)
{
    ls_map_remove(&c->pod_keys, pod_key(pod->ns, pod->name));
    if (pod->uid && (uintptr_t)ls_map_get(&c->pod_uids, pod->uid) == pod->id + 1)
        ls_map_remove(&c->pod_uids, pod->uid);
}

/* A UID names one object: a dump with two pods sharing one is refused (the
 * second would collide in the scheduler's cache), naming both places. */
static bool check_uid(ls_cluster *c, const ls_pod *pod, const char *where, ls_error *err)
{
    uintptr_t other = pod->uid ? (uintptr_t)ls_map_get(&c->pod_uids, pod->uid) : 0;
    if (!other)
        return true;
    const ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, other - 1);
    return ls_errorf(err, "%s: pod %s/%s: metadata.uid: Duplicate value: \"%s\" (already the uid of pod %s/%s at %s)",
                     where, ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->uid),
                     ls_str_get(sp->obj->pod.ns), ls_str_get(sp->obj->pod.name), sp->where);
}
static bool create_ephemeral_claims(ls_cluster *c, const cJSON *pod, ls_error *err);

static bool add_pod(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, const char *where, ls_error *err)
{
    ls_pod_obj *p = decode_pod(obj, doc, where, err);
    if (!p)
        return false;
    ls_str key = pod_key(p->pod.ns, p->pod.name);
    if (ls_map_get(&c->pod_keys, key)) {
        char w[600];
        where_of(doc, obj, where, w, sizeof w);
        ls_pod_obj_free(p);
        return where_error(err, w, "pod %s appears twice in the cluster", ls_str_get(key));
    }
    char here[600];
    where_of(doc, obj, where, here, sizeof here);
    if (!check_uid(c, &p->pod, here, err)) {
        ls_pod_obj_free(p);
        return false;
    }
    uint32_t index = c->pods.len;
    p->pod.id = index;
    ls_sim_pod *sp = ls_vec_push(&c->pods);
    sp->obj = p;
    sp->outcome = p->pod.node_name ? LS_POD_RUNNING : LS_POD_PENDING;
    sp->created_at_ms = c->now_ms;
    sp->json = c->keep_json ? cJSON_Duplicate(obj, 1) : NULL;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    sp->has_policy = cJSON_GetObjectItemCaseSensitive(spec, "preemptionPolicy") != NULL;
    where_of(doc, obj, where, sp->where, sizeof sp->where);
    ls_map_put(&c->pod_keys, key, (void *)(uintptr_t)(index + 1));
    if (p->pod.uid)
        ls_map_put(&c->pod_uids, p->pod.uid, (void *)(uintptr_t)(index + 1));
    if (c->admitted && !admit_pod(c, sp, err)) {
        /* Rejected as the API server rejects the create: the pod never existed
         * (left in the table, it would be reported lost). */
        forget_pod(c, &p->pod);
        cJSON_Delete(sp->json);
        ls_pod_obj_free(p);
        c->pods.len--;
        return false;
    }
    if (!create_ephemeral_claims(c, obj, err))
        return false;
    if (c->sched) {
        p->pod.seq = index + 1;
        if (!p->pod.node_name && ls_config_profile_index(ls_scheduler_config(c->sched), p->pod.scheduler_name) < 0)
            sp->outcome = LS_POD_NOT_OURS;
        ls_scheduler_on_pod_add(c->sched, &p->pod);
    }
    return true;
}

static bool add_node(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, const char *where, ls_error *err)
{
    ls_node_obj *n = decode_node(obj, doc, where, err);
    if (!n)
        return false;
    if (find_node(c, n->node.name)) {
        char w[600], name[300];
        where_of(doc, obj, where, w, sizeof w);
        snprintf(name, sizeof name, "%s", ls_str_get(n->node.name));
        ls_node_obj_free(n);
        return where_error(err, w, "node %s appears twice in the cluster", name);
    }
    n->node.id = c->nodes.len;
    sim_node *sn = ls_vec_push(&c->nodes);
    sn->obj = n;
    sn->json = cJSON_Duplicate(obj, 1);
    ls_map_put(&c->node_names, n->node.name, (void *)(uintptr_t)c->nodes.len);
    if (c->sched)
        ls_scheduler_on_node_add(c->sched, &n->node);
    return true;
}

static bool add_priority_class(ls_cluster *c, const cJSON *obj, const char *where, ls_error *err)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
    if (!cJSON_IsString(name))
        return where_error(err, where, "PriorityClass%s: metadata.name: expected a string", "");
    if (!cJSON_IsNumber(value) || value->valuedouble != (double)(int32_t)value->valuedouble)
        return where_error(err, where, "PriorityClass %s: value: expected a 32-bit integer", name->valuestring);
    priority_class *pc = ls_vec_push(&c->classes);
    pc->name = ls_intern_cstr(name->valuestring);
    pc->value = (int32_t)value->valuedouble;
    pc->global_default = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, "globalDefault"));
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(obj, "preemptionPolicy");
    if (cJSON_IsString(policy)) {
        pc->has_policy = true;
        if (strcmp(policy->valuestring, "Never") == 0)
            pc->policy = LS_PREEMPT_NEVER;
        else if (strcmp(policy->valuestring, "PreemptLowerPriority") == 0)
            pc->policy = LS_PREEMPT_LOWER_PRIORITY;
        else
            return where_error(err, where, "PriorityClass %s: preemptionPolicy: expected PreemptLowerPriority or Never",
                               name->valuestring);
    }
    return true;
}

static bool add_other(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, const char *where, ls_str custom,
                      ls_error *err)
{
    ls_object_obj *o = decode_object(obj, doc, where, custom, err);
    if (!o)
        return false;
    *(ls_object_obj **)ls_vec_push(&c->objects) = o;
    if (c->sched)
        ls_scheduler_on_object_add(c->sched, &o->obj);
    return true;
}

static bool add_any(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, const char *where, ls_error *err)
{
    char w[600];
    where_of(doc, obj, where, w, sizeof w);
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (!cJSON_IsString(kind))
        return where_error(err, w, "expected a Kubernetes object with a \"kind\"%s", "");
    if (strcmp(kind->valuestring, "Pod") == 0)
        return add_pod(c, obj, doc, where, err);
    if (strcmp(kind->valuestring, "Node") == 0)
        return add_node(c, obj, doc, where, err);
    if (strcmp(kind->valuestring, "PriorityClass") == 0)
        return add_priority_class(c, obj, w, err);
    if (ls_object_kind_known(kind->valuestring))
        return add_other(c, obj, doc, where, 0, err);
    ls_str custom = ls_cluster_custom_resource_name(obj);
    if (custom)
        return add_other(c, obj, doc, where, custom, err);
    note_skipped(c, kind->valuestring);
    return true;
}

/* ---- a recording's reference outcome */

static bool is_bindings_document(const cJSON *obj)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
    return cJSON_IsString(kind) && strcmp(kind->valuestring, "Bindings") == 0 && cJSON_IsString(api) &&
           strncmp(api->valuestring, "luasched.io/", 12) == 0;
}

/*   notRecorded: [{kind: NodeMetrics, reason: ...}, ...]  (optional) */
static bool add_not_recorded(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, ls_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, "notRecorded"), *e;
    cJSON_ArrayForEach(e, list) {
        const char *kind = ls_json_text(e, "kind", NULL), *reason = ls_json_text(e, "reason", NULL);
        if (!kind || !reason) {
            char w[600];
            where_of(doc, e, NULL, w, sizeof w);
            return where_error(err, w, "notRecorded: expected {kind: KIND, reason: TEXT}%s", "");
        }
        size_t old = c->not_recorded ? strlen(c->not_recorded) : 0;
        c->not_recorded = ls_xrealloc(c->not_recorded, old + strlen(kind) + strlen(reason) + 5);
        sprintf(c->not_recorded + old, "%s%s: %s", old ? "; " : "", kind, reason);
    }
    return true;
}

const char *ls_cluster_not_recorded(const ls_cluster *c)
{
    return c->not_recorded;
}

/*   kind: Bindings
 *   bindings: [{pod: NAMESPACE/NAME, node: NODE, at: 12.5s}, ...]  */
static bool add_bindings(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, ls_error *err)
{
    char w[600];
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, "bindings"), *b;
    where_of(doc, list ? list : obj, NULL, w, sizeof w);
    if (!cJSON_IsArray(list))
        return where_error(err, w, "bindings: expected a list of {pod: NAMESPACE/NAME, node: NODE}%s", "");
    cJSON_ArrayForEach(b, list) {
        const cJSON *pod = cJSON_GetObjectItemCaseSensitive(b, "pod");
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(b, "node");
        if (!cJSON_IsString(pod) || !strchr(pod->valuestring, '/') || !cJSON_IsString(node) || !node->valuestring[0]) {
            where_of(doc, b, NULL, w, sizeof w);
            return where_error(err, w, "bindings: expected {pod: NAMESPACE/NAME, node: NODE}%s", "");
        }
        reference_binding *r = ls_vec_push(&c->reference);
        r->pod = ls_intern_cstr(pod->valuestring);
        r->node = ls_intern_cstr(node->valuestring);
    }
    return add_not_recorded(c, obj, doc, err);
}

bool ls_cluster_agreement(const ls_cluster *c, uint32_t *same, uint32_t *total)
{
    *same = *total = 0;
    if (c->reference.len == 0)
        return false;
    ls_map ref;   /* "ns/name" -> reference node */
    ls_map_init(&ref);
    for (uint32_t i = 0; i < c->reference.len; i++) {
        const reference_binding *r = &LS_VEC_AT(&c->reference, reference_binding, i);
        ls_map_put(&ref, r->pod, (void *)(uintptr_t)r->node);
    }
    /* Every pod the run had, deleted ones too: a pod the recording saw bound
     * and later deleted was bound (or not) in the replay before its deletion. */
    for (uint32_t i = 0; i < c->pods.len; i++) {
        const ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        ls_str node = (ls_str)(uintptr_t)ls_map_get(&ref, pod_key(sp->obj->pod.ns, sp->obj->pod.name));
        if (!node)
            continue;
        (*total)++;
        *same += sp->binds > 0 && sp->node == node;
    }
    ls_map_free(&ref);
    return true;
}

static bool load_docs(ls_cluster *c, ls_doc_set *doc, ls_error *err);

bool ls_cluster_load_file(ls_cluster *c, const char *path, ls_error *err)
{
    ls_doc_set *doc = ls_doc_load_file(path, err);
    return doc && load_docs(c, doc, err);
}

bool ls_cluster_load_text(ls_cluster *c, const char *text, size_t len, const char *source, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, len, source, err);
    return doc && load_docs(c, doc, err);
}

/* A file's errors are reported together, up to this many. */
enum { MAX_LOAD_ERRORS = 20 };

static void note_load_error(ls_cluster *c, const char *msg)
{
    *(char **)ls_vec_push(&c->load_errors) = ls_xstrdup(msg);
}

/* One document: its input warnings (errors with --strict), then the object. */
static bool load_doc(ls_cluster *c, const cJSON *obj, ls_doc_set *doc, ls_error *err)
{
    if (ls_timeline_is_document(obj))
        return ls_timeline_add(&c->timeline, doc, obj, err);
    if (is_bindings_document(obj))
        return add_bindings(c, obj, doc, err);
    uint32_t before = c->input_warnings.len;
    ls_cluster_input_warnings(&c->input_warnings, obj, doc);
    if (c->strict && c->input_warnings.len > before) {
        /* --strict: each warning is an error of the file (and the object is not added) */
        for (uint32_t k = before; k + 1 < c->input_warnings.len; k++) {
            ls_error strict;
            ls_errorf(&strict, "%s (--strict)", LS_VEC_AT(&c->input_warnings, char *, k));
            note_load_error(c, strict.msg);
        }
        ls_errorf(err, "%s (--strict)", LS_VEC_AT(&c->input_warnings, char *, c->input_warnings.len - 1));
        for (uint32_t k = before; k < c->input_warnings.len; k++)
            free(LS_VEC_AT(&c->input_warnings, char *, k));
        c->input_warnings.len = before;
        return false;
    }
    return add_any(c, obj, doc, NULL, err);
}

/* Every document is loaded even after an error, so that all the errors of a
 * file (up to MAX_LOAD_ERRORS) are reported at once; *err holds the first,
 * with how many more there are. */
static bool load_docs(ls_cluster *c, ls_doc_set *doc, ls_error *err)
{
    for (uint32_t i = 0; i < ls_doc_count(doc); i++)
        c->keep_json = c->keep_json || ls_timeline_is_document(ls_doc_get(doc, i));
    uint32_t first = c->load_errors.len;
    for (uint32_t i = 0; i < ls_doc_count(doc) && c->load_errors.len - first < MAX_LOAD_ERRORS; i++) {
        ls_error e;
        if (!load_doc(c, ls_doc_get(doc, i), doc, &e))
            note_load_error(c, e.msg);
    }
    ls_timeline_seal(&c->timeline);
    uint32_t n = c->load_errors.len - first;
    if (n == 1)
        ls_errorf(err, "%s", LS_VEC_AT(&c->load_errors, char *, first));
    else if (n > 1)
        ls_errorf(err, "%s (and %u more error%s in %s)", LS_VEC_AT(&c->load_errors, char *, first), n - 1,
                  n == 2 ? "" : "s", ls_doc_source(doc));
    ls_doc_free(doc);
    return n == 0;
}

/* ---- timeline steps */

typedef struct target {
    ls_str kind, ns, name;
    const char *kind_text;
} target;

static target target_of(const cJSON *body)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(body, "kind");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(body, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    target t = {0};
    t.kind_text = cJSON_IsString(kind) ? kind->valuestring : "";
    t.kind = ls_intern_cstr(t.kind_text);
    t.name = cJSON_IsString(name) ? ls_intern_cstr(name->valuestring) : 0;
    bool cluster_scoped = strcmp(t.kind_text, "Node") == 0 || ls_object_kind_cluster_scoped(t.kind_text);
    t.ns = cluster_scoped ? 0 : ls_intern_cstr(cJSON_IsString(ns) ? ns->valuestring : "default");
    ls_str custom = ls_cluster_custom_resource_name(body);
    if (custom)
        t.kind = custom;
    return t;
}

static bool replace_pod(ls_cluster *c, ls_sim_pod *sp, const cJSON *json, const char *where, ls_error *err)
{
    ls_pod_obj *p = decode_pod(json, NULL, where, err);
    if (!p)
        return false;
    ls_pod_obj *old = sp->obj;
    p->pod.id = old->pod.id;
    p->pod.seq = old->pod.seq;
    if (!p->pod.node_name && old->pod.node_name)
        p->pod.node_name = old->pod.node_name;   /* a binding is not undone by an update */
    if (p->pod.uid != old->pod.uid) {
        forget_pod(c, &old->pod);
        ls_map_put(&c->pod_keys, pod_key(p->pod.ns, p->pod.name), (void *)(uintptr_t)(p->pod.id + 1));
        if (p->pod.uid)
            ls_map_put(&c->pod_uids, p->pod.uid, (void *)(uintptr_t)(p->pod.id + 1));
    }
    sp->obj = p;
    admit_pod(c, sp, err);
    *(ls_pod_obj **)ls_vec_push(&c->retired_pods) = old;
    ls_scheduler_on_pod_update(c->sched, &old->pod, &p->pod);
    return true;
}

static bool replace_node(ls_cluster *c, sim_node *sn, const cJSON *json, const char *where, ls_error *err)
{
    ls_node_obj *n = decode_node(json, NULL, where, err);
    if (!n)
        return false;
    ls_node_obj *old = sn->obj;
    n->node.id = old->node.id;
    sn->obj = n;
    *(ls_node_obj **)ls_vec_push(&c->retired_nodes) = old;
    ls_scheduler_on_node_update(c->sched, &old->node, &n->node);
    return true;
}

/* metadata.resourceVersion + 1 (an object without one gets "1"). */
static void bump_resource_version(cJSON *json)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(json, "metadata");
    if (!cJSON_IsObject(meta))
        return;
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    long long n = cJSON_IsString(rv) ? strtoll(rv->valuestring, NULL, 10) : 0;
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", n + 1);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_AddStringToObject(meta, "resourceVersion", buf);
}

static bool replace_object(ls_cluster *c, int i, const cJSON *json, const char *where, ls_error *err)
{
    ls_object_obj *old = LS_VEC_AT(&c->objects, ls_object_obj *, i);
    ls_object_obj *o = decode_object(json, NULL, where, ls_cluster_custom_resource_name(json), err);
    if (!o)
        return false;
    LS_VEC_AT(&c->objects, ls_object_obj *, i) = o;
    *(ls_object_obj **)ls_vec_push(&c->retired_objects) = old;
    if (c->sched)
        ls_scheduler_on_object_update(c->sched, &old->obj, &o->obj);
    return true;
}

const ls_object *ls_cluster_find_object(const ls_cluster *c, const char *kind, const char *ns, const char *name)
{
    /* Looked up, not interned: a string never interned names no object (and a
     * metric's lookups do not grow the table). */
    ls_str k = ls_intern_lookup(kind, strlen(kind)), n = ls_intern_lookup(name, strlen(name));
    ls_str space = ns && *ns ? ls_intern_lookup(ns, strlen(ns)) : 0;
    if (!k || !n || (ns && *ns && !space))
        return NULL;
    int i = find_object(c, k, space, n);
    return i < 0 ? NULL : &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
}

/* ---- the PV controller's view of the cluster (pv_controller.h) */

static cJSON *pv_get(void *ud, const char *kind, const char *ns, const char *name)
{
    ls_cluster *c = ud;
    if (!name)
        return NULL;
    if (strcmp(kind, "Node") == 0) {
        sim_node *sn = find_node(c, ls_intern_cstr(name));
        return sn ? cJSON_Duplicate(sn->json, 1) : NULL;
    }
    int i = find_object(c, ls_intern_cstr(kind), ns ? ls_intern_cstr(ns) : 0, ls_intern_cstr(name));
    if (i < 0)
        return NULL;
    const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
    return cJSON_ParseWithLength(o->json, o->json_len);
}

static void pv_each(void *ud, const char *kind, bool (*fn)(void *fud, const cJSON *obj), void *fud)
{
    ls_cluster *c = ud;
    ls_str k = ls_intern_cstr(kind);
    for (uint32_t i = 0; i < c->objects.len; i++) {
        const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
        if (o->kind != k)
            continue;
        cJSON *json = cJSON_ParseWithLength(o->json, o->json_len);
        bool more = fn(fud, json);
        cJSON_Delete(json);
        if (!more)
            return;
    }
}

static bool add_other(ls_cluster *c, const cJSON *obj, const ls_doc_set *doc, const char *where, ls_str custom,
                      ls_error *err);

static bool pv_put(void *ud, const char *kind, const cJSON *obj, ls_error *err)
{
    ls_cluster *c = ud;
    target t = target_of(obj);
    int i = find_object(c, ls_intern_cstr(kind), t.ns, t.name);
    return i >= 0 ? replace_object(c, i, obj, "<PersistentVolume controller>", err)
                  : add_other(c, obj, NULL, "<PersistentVolume controller>", 0, err);
}

static ls_pv_ops pv_ops(ls_cluster *c)
{
    return (ls_pv_ops){.ud = c, .get = pv_get, .each = pv_each, .put = pv_put, .fault = c->provision_fault};
}

static bool create_ephemeral_claims(ls_cluster *c, const cJSON *pod, ls_error *err)
{
    ls_pv_ops ops = pv_ops(c);
    return ls_pv_create_ephemeral_claims(&ops, pod, err);
}

/* The PV controller's pass after a change to the storage objects. */
static void sync_volumes(ls_cluster *c)
{
    ls_pv_ops ops = pv_ops(c);
    ls_error err;
    if (!ls_pv_sync_all(&ops, &err)) {
        fprintf(stderr, "luasched simulate: warning: PersistentVolume controller: %s\n", err.msg);
        if (!c->warning)
            c->warning = ls_xstrdup(err.msg);
    }
}

void ls_cluster_set_provision_fault(ls_cluster *c, ls_provision_fault fault)
{
    c->provision_fault = fault;
}

/* The API server's limits on a stored object: its annotations (the served
 * API's rule, api_validate.c), the whole object at most etcd's request limit
 * of 1.5 MiB. A plugin patching one object again and again grew it, and the
 * process, without bound (1.3 GB in 20 s with a 64 MiB Lua limit: attacker
 * round 3). */
enum { API_OBJECT_MAX = 3 * 512 * 1024 };

static bool within_api_limits(const cJSON *json, ls_str kind, ls_str name, ls_error *err)
{
    char msg[400];
    if (!ls_api_annotations_fit(json, ls_str_get(kind), ls_str_get(name), msg, sizeof msg))
        return ls_errorf(err, "%s", msg);
    char *text = cJSON_PrintUnformatted(json);
    size_t len = text ? strlen(text) : 0;
    free(text);
    if (len > API_OBJECT_MAX)
        return ls_errorf(err, "etcdserver: request is too large");
    return true;
}

/* A plugin's API write (VolumeBinding's PreBind): the merge patch, then the
 * PV controller's answer, as the API server and kube-controller-manager would. */
static bool keep_version(cJSON **kept, cJSON *json, bool applied);

/* A plugin's patch of a pod (DynamicResources' status.extendedResourceClaimStatus). */
static bool patch_pod(ls_cluster *c, ls_str ns, ls_str name, const char *patch, ls_error *err)
{
    ls_sim_pod *sp = find_pod(c, ns, name);
    if (!sp || sp->outcome == LS_POD_DELETED)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(name));
    cJSON *body = cJSON_Parse(patch);
    if (!body)
        return ls_errorf(err, "the patch of pod %s is not valid JSON", ls_str_get(name));
    if (!sp->json) {
        /* Without a Timeline the cluster keeps no pod JSON (nothing could
         * change it), only the decoded pod, which holds none of the status a
         * plugin writes (status.extendedResourceClaimStatus): the write is
         * accepted and nothing the scheduler reads changes. */
        cJSON_Delete(body);
        return true;
    }
    cJSON *json = cJSON_Duplicate(sp->json, 1);
    ls_json_merge_patch(json, body);
    cJSON_Delete(body);
    return keep_version(&sp->json, json, replace_pod(c, sp, json, "<api>", err));
}
/* A plugin's write keeps the version it replaces until the cluster is freed
 * (the scheduler's snapshot may still point at it): the bytes one plugin call
 * makes the cluster keep so are capped, so that repeated patches of one large
 * object cannot grow C memory without bound (attacker round 3: 2000 patches
 * of a 200 KiB PersistentVolume in one PreBind kept 400 MiB). */
enum { PLUGIN_KEPT_PER_CALL = 16 << 20 };

static bool plugin_keeps(ls_cluster *c, const ls_object *replaced, ls_error *err)
{
    uint32_t call = *ls_view_generation();
    if (call != c->kept_call) {
        c->kept_call = call;
        c->kept_in_call = 0;
    }
    uint64_t bytes = (uint64_t)replaced->json_len + sizeof(ls_object_obj);
    if (c->kept_in_call + bytes > PLUGIN_KEPT_PER_CALL)
        return ls_errorf(err, "updating %s %s: this plugin call's writes replaced %llu bytes of objects, which the "
                              "cluster keeps until the simulation ends (at most %d MiB per call); write each object "
                              "once per call",
                         ls_str_get(replaced->kind), ls_str_get(replaced->name),
                         (unsigned long long)c->kept_in_call, PLUGIN_KEPT_PER_CALL >> 20);
    c->kept_in_call += bytes;
    return true;
}

static bool cluster_patch_object(void *ud, ls_str kind, ls_str ns, ls_str name, const char *patch, ls_error *err)
{
    ls_cluster *c = ud;
    if (strcmp(ls_str_get(kind), "Pod") == 0)
        return patch_pod(c, ns, name, patch, err);
    /* run's rule (kcluster.c): besides a pod's status (DynamicResources),
     * only volumes are written; a plugin's Namespace patch changed every
     * profile's namespaceSelector answers in simulate (attacker round 3) */
    const char *k = ls_str_get(kind);
    if (strcmp(k, "PersistentVolume") != 0 && strcmp(k, "PersistentVolumeClaim") != 0)
        return ls_errorf(err, "updating %s %s: only PersistentVolumes and claims are written", k, ls_str_get(name));
    int i = find_object(c, kind, ns, name);
    if (i < 0)
        return ls_errorf(err, "%s \"%s\" not found", ls_str_get(kind), ls_str_get(name));
    cJSON *body = cJSON_Parse(patch);
    if (!body)
        return ls_errorf(err, "the patch of %s %s is not valid JSON", ls_str_get(kind), ls_str_get(name));
    const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
    if (!plugin_keeps(c, o, err)) {
        cJSON_Delete(body);
        return false;
    }
    cJSON *json = cJSON_ParseWithLength(o->json, o->json_len);
    ls_json_merge_patch(json, body);
    bool ok = within_api_limits(json, kind, name, err) && replace_object(c, i, json, "<api>", err);
    cJSON_Delete(json);
    cJSON_Delete(body);
    if (ok)
        sync_volumes(c);
    return ok;
}

/* The current JSON of an object with a patch applied (caller frees), or the
 * replacement as given for an update. */
static cJSON *next_version(const cJSON *current, const ls_step *st)
{
    if (st->op == LS_STEP_UPDATE || !current)
        return cJSON_Duplicate(st->body, 1);
    cJSON *json = cJSON_Duplicate(current, 1);
    ls_json_merge_patch(json, st->body);
    return json;
}

/* The new version replaces the kept one when it was applied, else is dropped. */
static bool keep_version(cJSON **kept, cJSON *json, bool applied)
{
    cJSON_Delete(applied ? *kept : json);
    if (applied)
        *kept = json;
    return applied;
}

static bool change_pod(ls_cluster *c, const ls_step *st, const target *t, ls_error *err)
{
    ls_sim_pod *sp = find_pod(c, t->ns, t->name);
    if (!sp)
        return ls_errorf(err, "%s: Timeline: pod %s/%s not found", st->where, ls_str_get(t->ns), ls_str_get(t->name));
    cJSON *json = next_version(sp->json, st);
    return keep_version(&sp->json, json, replace_pod(c, sp, json, st->where, err));
}

static bool change_node(ls_cluster *c, const ls_step *st, const target *t, ls_error *err)
{
    sim_node *sn = find_node(c, t->name);
    if (!sn)
        return ls_errorf(err, "%s: Timeline: node %s not found", st->where, ls_str_get(t->name));
    cJSON *json = next_version(sn->json, st);
    return keep_version(&sn->json, json, replace_node(c, sn, json, st->where, err));
}

static bool change_object(ls_cluster *c, const ls_step *st, const target *t, ls_error *err)
{
    int i = find_object(c, t->kind, t->ns, t->name);
    if (i < 0)
        return ls_errorf(err, "%s: Timeline: %s %s not found", st->where, t->kind_text, ls_str_get(t->name));
    const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
    cJSON *current = cJSON_ParseWithLength(o->json, o->json_len);
    cJSON *json = next_version(current, st);
    bool ok = replace_object(c, i, json, st->where, err);
    cJSON_Delete(current);
    cJSON_Delete(json);
    return ok;
}

static bool delete_target(ls_cluster *c, const ls_step *st, const target *t, ls_error *err)
{
    if (strcmp(t->kind_text, "Pod") == 0) {
        ls_sim_pod *sp = find_pod(c, t->ns, t->name);
        if (!sp)
            return ls_errorf(err, "%s: Timeline: pod %s/%s not found", st->where, ls_str_get(t->ns),
                             ls_str_get(t->name));
        forget_pod(c, &sp->obj->pod);
        sp->outcome = LS_POD_DELETED;
        ls_scheduler_on_pod_delete(c->sched, &sp->obj->pod);
        return true;
    }
    if (strcmp(t->kind_text, "Node") == 0) {
        sim_node *sn = find_node(c, t->name);
        if (!sn)
            return ls_errorf(err, "%s: Timeline: node %s not found", st->where, ls_str_get(t->name));
        ls_map_remove(&c->node_names, t->name);
        sn->deleted = true;
        ls_scheduler_on_node_delete(c->sched, &sn->obj->node);
        return true;
    }
    int i = find_object(c, t->kind, t->ns, t->name);
    if (i < 0)
        return ls_errorf(err, "%s: Timeline: %s %s not found", st->where, t->kind_text, ls_str_get(t->name));
    ls_object_obj *o = LS_VEC_AT(&c->objects, ls_object_obj *, i);
    LS_VEC_AT(&c->objects, ls_object_obj *, i) = LS_VEC_AT(&c->objects, ls_object_obj *, c->objects.len - 1);
    c->objects.len--;
    *(ls_object_obj **)ls_vec_push(&c->retired_objects) = o;
    ls_scheduler_on_object_delete(c->sched, &o->obj);
    return true;
}

static bool apply_step(ls_cluster *c, const ls_step *st, ls_error *err)
{
    target t = target_of(st->body);
    if (st->op == LS_STEP_CREATE)
        return add_any(c, st->body, NULL, st->where, err);
    if (st->op == LS_STEP_DELETE)
        return delete_target(c, st, &t, err);
    if (strcmp(t.kind_text, "Pod") == 0)
        return change_pod(c, st, &t, err);
    if (strcmp(t.kind_text, "Node") == 0)
        return change_node(c, st, &t, err);
    return change_object(c, st, &t, err);
}

static bool cluster_next_change(void *ud, uint64_t *at_ms)
{
    return ls_timeline_next_time(&((ls_cluster *)ud)->timeline, at_ms);
}

static void cluster_advance(void *ud, uint64_t now_ms)
{
    ls_cluster *c = ud;
    const ls_step *st;
    if (c->on_advance)
        c->on_advance(c->on_advance_ud, now_ms);
    c->now_ms = now_ms;
    bool any = false;
    while ((st = ls_timeline_next_due(&c->timeline, now_ms))) {
        ls_error err;
        if (!apply_step(c, st, &err)) {
            fprintf(stderr, "luasched simulate: warning: %s (step skipped)\n", err.msg);
            if (!c->warning)
                c->warning = ls_xstrdup(err.msg);
        }
        any = true;
    }
    if (any)
        sync_volumes(c);
}

/* ---- the scheduler's source */

static bool cluster_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    ls_cluster *c = ud;
    if (pod->id >= c->pods.len || &LS_VEC_AT(&c->pods, ls_sim_pod, pod->id).obj->pod != pod ||
        LS_VEC_AT(&c->pods, ls_sim_pod, pod->id).outcome == LS_POD_DELETED)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(pod->name));
    ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, pod->id);
    if (sp->obj->pod.node_name)
        return ls_errorf(err, "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned "
                              "to node \"%s\"",
                         ls_str_get(pod->name), ls_str_get(pod->name), ls_str_get(sp->obj->pod.node_name));
    if (!find_node(c, node))
        return ls_errorf(err, "nodes \"%s\" not found", ls_str_get(node));
    sp->obj->pod.node_name = node;
    if (sp->json) {
        cJSON *spec = cJSON_GetObjectItemCaseSensitive(sp->json, "spec");
        if (spec) {
            cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
            cJSON_AddStringToObject(spec, "nodeName", ls_str_get(node));
        }
    }
    sp->outcome = LS_POD_BOUND;
    sp->node = node;
    sp->binds++;
    /* The API server's update, as the informer would deliver it. */
    ls_scheduler_on_pod_update(c->sched, &sp->obj->pod, &sp->obj->pod);
    return true;
}

/* A plugin's create (DynamicResources' claim for extended resources): a
 * name from generateName gets a suffix of 5 characters, as the API server's
 * (here a counter, so that a simulation is repeatable). */
/* What plugins may create in the embedded cluster: ResourceClaims (what
 * DynamicResources makes for a pod's extended resources), each within the
 * API server's request limit, and PLUGIN_CREATED_CAP bytes in all. A plugin
 * created Pods and Nodes (a 64-CPU node no real cluster has, a pod taking a
 * node's CPU) and grew the cluster by 1 MiB per call without bound
 * (attacker round 4). */
enum { PLUGIN_OBJECT_MAX = 3 * 1024 * 1024 };
#define PLUGIN_CREATED_CAP (256ull * 1024 * 1024)

static bool plugin_may_create(const ls_cluster *c, const cJSON *obj, size_t len, ls_error *err)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const char *k = cJSON_IsString(kind) ? kind->valuestring : "(no kind)";
    if (strcmp(k, "ResourceClaim") != 0)
        return ls_errorf(err, "creating a %.64s: plugins create ResourceClaims only", k);
    if (len > PLUGIN_OBJECT_MAX)
        return ls_errorf(err, "creating a ResourceClaim of %zu bytes: the API server takes at most %d", len,
                         PLUGIN_OBJECT_MAX);
    if (c->plugin_created + len > PLUGIN_CREATED_CAP)
        return ls_errorf(err, "creating a ResourceClaim: plugins created %llu MiB of objects already, the "
                         "embedded cluster's cap", (unsigned long long)(PLUGIN_CREATED_CAP >> 20));
    return true;
}

/* The API server's limit of a name (an RFC 1123 subdomain: 253 characters,
 * as simulate --serve's store refuses it). A longer one was created and its
 * name handed back cut to the caller's buffer: the plugin's own write was
 * then news for its pod (own_writes.c noted another name), the pod retried
 * and the claim created again in every attempt, and the simulation did not
 * end (attacker round 5). */
enum { MAX_OBJECT_NAME = 253 };

static bool plugin_name_fits(const char *name, size_t name_cap, ls_error *err)
{
    size_t n = strlen(name);
    if (n <= MAX_OBJECT_NAME && n < name_cap && !strchr(name, '/'))
        return true;
    return ls_errorf(err, "ResourceClaim \"%.200s\" is invalid: metadata.name: Invalid value: \"%.200s\": %s", name,
                     name, strchr(name, '/') ? "may not contain '/'" : "must be no more than 253 characters");
}

static bool cluster_create_object(void *ud, const char *json, char *name_out, size_t name_cap, ls_error *err)
{
    ls_cluster *c = ud;
    size_t len = strlen(json);
    if (len > PLUGIN_OBJECT_MAX)   /* before parsing it */
        return ls_errorf(err, "creating an object of %zu bytes: the API server takes at most %d", len,
                         PLUGIN_OBJECT_MAX);
    cJSON *obj = cJSON_Parse(json);
    if (!obj)
        return ls_errorf(err, "the object to create is not valid JSON");
    if (!plugin_may_create(c, obj, len, err)) {
        cJSON_Delete(obj);
        return false;
    }
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generateName");
    if (!cJSON_IsString(name) && cJSON_IsString(gen) && cJSON_IsObject(meta)) {
        static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";   /* the API server's */
        char made[300];
        uint32_t n = ++c->generated;
        char suffix[6];
        for (int i = 4; i >= 0; i--) {
            suffix[i] = alphabet[n % 27];
            n /= 27;
        }
        suffix[5] = '\0';
        snprintf(made, sizeof made, "%s%s", gen->valuestring, suffix);
        cJSON_AddStringToObject(meta, "name", made);
        name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    }
    if (!cJSON_IsString(name)) {
        cJSON_Delete(obj);
        return ls_errorf(err, "the object to create has no metadata.name or generateName");
    }
    if (!plugin_name_fits(name->valuestring, name_cap, err)) {
        cJSON_Delete(obj);
        return false;
    }
    snprintf(name_out, name_cap, "%s", name->valuestring);
    bool ok = add_any(c, obj, NULL, "<api>", err);
    cJSON_Delete(obj);
    if (ok) {
        c->plugin_created += len;
        sync_volumes(c);
    }
    return ok;
}

/* Fault hook for tests of failed preemption: the first deletion of a pod
 * labelled luasched.io/fault=refuse-delete-once is refused, as an API server
 * refuses a DELETE it cannot honour (a webhook, a 500). */
static bool refuse_delete_once(ls_sim_pod *sp)
{
    static ls_str key, value;
    if (!key) {
        key = ls_intern_cstr("luasched.io/fault");
        value = ls_intern_cstr("refuse-delete-once");
    }
    if (sp->refused_delete || ls_labels_get(&sp->obj->pod.labels, key) != value)
        return false;
    sp->refused_delete = true;
    return true;
}

/* The API server's side of preemption: the DisruptionTarget condition, then the delete. */
static bool cluster_preempt(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node, const char *message,
                            ls_error *err)
{
    ls_cluster *c = ud;
    if (victim->id >= c->pods.len || &LS_VEC_AT(&c->pods, ls_sim_pod, victim->id).obj->pod != victim)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(victim->name));
    ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, victim->id);
    if (sp->outcome == LS_POD_DELETED || sp->outcome == LS_POD_PREEMPTED)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(victim->name));
    if (refuse_delete_once(sp))
        return ls_errorf(err, "Internal error occurred: deleting pod \"%s\": refused by the fault hook "
                              "(label luasched.io/fault=refuse-delete-once)", ls_str_get(victim->name));
    char record[900];
    snprintf(record, sizeof record,
             "DisruptionTarget=True (PreemptionByScheduler): %s; Preempted by pod %s/%s on node %s", message,
             ls_str_get(preemptor->ns), ls_str_get(preemptor->name), ls_str_get(node));
    free(sp->message);
    sp->message = ls_xstrdup(record);
    sp->outcome = LS_POD_PREEMPTED;
    forget_pod(c, &sp->obj->pod);
    ls_scheduler_on_pod_delete(c->sched, victim);
    return true;
}

static void cluster_on_attempt(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    ls_cluster *c = ud;
    ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, a->pod->id);
    sp->attempts++;
    sp->last_attempt_ms = a->time_ms;
    if (a->node) {
        sp->bound_at_ms = a->time_ms;
    } else if (sp->outcome != LS_POD_DELETED && sp->outcome != LS_POD_PREEMPTED) {
        sp->outcome = LS_POD_UNSCHEDULABLE;
        free(sp->message);
        sp->message = ls_xstrdup(a->message ? a->message : "");
    }
    if (c->observer)
        c->observer(c->observer_ud, a, cycle, s);
}

/* An HTTP extender bound the pod: the embedded cluster is the API server it
 * would have posted the binding to, so the binding is applied here. */
static void cluster_extender_bound(void *ud, const ls_pod *pod, ls_str node)
{
    ls_error err;
    if (!cluster_bind(ud, pod, node, &err))
        fprintf(stderr, "luasched simulate: the binding of an extender was refused: %s\n", err.msg);
}

/* An attempt waits at Permit: only the observer wants to know (explain). */
static void cluster_on_permit_wait(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    ls_cluster *c = ud;
    if (c->observer)
        c->observer(c->observer_ud, a, cycle, s);
}

/* The API server's side of a status merge patch (a ResourceClaim's
 * allocation): the new version replaces the object and comes back as its
 * update event. A resourceVersion in the patch's metadata must match. */
static bool cluster_patch_status(void *ud, const ls_object *obj, const char *merge_patch, ls_error *err)
{
    ls_cluster *c = ud;
    int i = find_object(c, obj->kind, obj->ns, obj->name);
    if (i < 0)
        return ls_errorf(err, "%s \"%s\" not found", ls_str_get(obj->kind), ls_str_get(obj->name));
    const ls_object *cur = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
    if (!plugin_keeps(c, cur, err))
        return false;
    cJSON *patch = cJSON_Parse(merge_patch);
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(patch);
        return ls_errorf(err, "status patch of %s: not a JSON object", ls_str_get(obj->name));
    }
    cJSON *json = cJSON_ParseWithLength(cur->json, cur->json_len);
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(patch, "metadata"),
                                                         "resourceVersion");
    const cJSON *have = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "metadata"),
                                                         "resourceVersion");
    bool ok;
    if (cJSON_IsString(want) && (!cJSON_IsString(have) || strcmp(want->valuestring, have->valuestring) != 0)) {
        ok = ls_errorf(err, "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
                            "apply your changes to the latest version and try again",
                       ls_str_get(obj->kind), ls_str_get(obj->name));
    } else {
        /* Only the status (and the version check) is the subresource's. */
        cJSON *status = cJSON_GetObjectItemCaseSensitive(patch, "status");
        cJSON *only = cJSON_CreateObject();
        if (status)
            cJSON_AddItemToObject(only, "status", cJSON_Duplicate(status, 1));
        ls_json_merge_patch(json, only);
        cJSON_Delete(only);
        bump_resource_version(json);
        ok = replace_object(c, i, json, "status patch", err);
    }
    cJSON_Delete(json);
    cJSON_Delete(patch);
    return ok;
}

ls_sched_source ls_cluster_source(ls_cluster *c, ls_attempt_observer observer, void *observer_ud)
{
    c->observer = observer;
    c->observer_ud = observer_ud;
    return (ls_sched_source){.ud = c, .bind = cluster_bind, .on_attempt = cluster_on_attempt,
                             .on_permit_wait = cluster_on_permit_wait,
                             .next_change_ms = cluster_next_change, .advance_to = cluster_advance,
                             .preempt = cluster_preempt, .extender_bound = cluster_extender_bound,
                             .patch_status = cluster_patch_status, .patch_object = cluster_patch_object,
                             .create_object = cluster_create_object};
}

static int by_creation(const void *a, const void *b)
{
    const ls_sim_pod *x = *(ls_sim_pod *const *)a, *y = *(ls_sim_pod *const *)b;
    int64_t cx = x->obj->pod.creation_ns, cy = y->obj->pod.creation_ns;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return x->obj->pod.id < y->obj->pod.id ? -1 : 1;
}

/* Pending pods enter the queue in creation order (file order for equal or
 * absent timestamps): that order breaks ties between equal priorities. */
static void add_pending_pods(ls_cluster *c, ls_scheduler *s)
{
    ls_sim_pod **order = ls_xmalloc((c->pods.len + 1) * sizeof *order);
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        if (sp->outcome != LS_POD_RUNNING)
            order[n++] = sp;
    }
    qsort(order, n, sizeof *order, by_creation);
    for (uint32_t i = 0; i < n; i++) {
        ls_sim_pod *sp = order[i];
        sp->obj->pod.seq = i + 1;
        if (ls_config_profile_index(ls_scheduler_config(s), sp->obj->pod.scheduler_name) < 0)
            sp->outcome = LS_POD_NOT_OURS;
        ls_scheduler_on_pod_add(s, &sp->obj->pod);
    }
    free(order);
}

void ls_cluster_start(ls_cluster *c, ls_scheduler *s)
{
    sync_volumes(c);   /* Immediate claims are bound before the scheduler starts, as a running controller has */
    for (uint32_t i = 0; i < c->objects.len; i++)
        ls_scheduler_on_object_add(s, &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj);
    for (uint32_t i = 0; i < c->nodes.len; i++)
        ls_scheduler_on_node_add(s, &LS_VEC_AT(&c->nodes, sim_node, i).obj->node);
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        if (sp->outcome == LS_POD_RUNNING)
            ls_scheduler_on_pod_add(s, &sp->obj->pod);
    }
    add_pending_pods(c, s);
    c->sched = s;
}

void ls_cluster_finish(ls_cluster *c, const ls_scheduler *s)
{
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        if (sp->outcome != LS_POD_PENDING && sp->outcome != LS_POD_UNSCHEDULABLE)
            continue;
        ls_pod_queue_state st = ls_scheduler_pod_state(s, &sp->obj->pod);
        if (st.known && st.gated) {
            sp->outcome = LS_POD_GATED;
            free(sp->message);
            sp->message = ls_xstrdup(st.gate_message ? st.gate_message : "gated");
        } else if (st.known && st.pre_enqueue_error) {
            sp->outcome = LS_POD_UNSCHEDULABLE;   /* pending, backing off: PreEnqueue could not run */
            free(sp->message);
            sp->message = ls_xstrdup(st.pre_enqueue_error);
        }
    }
}

cJSON *ls_cluster_claims_json(const ls_cluster *c)
{
    cJSON *claims = cJSON_CreateArray();
    ls_str kind = ls_intern_cstr("PersistentVolumeClaim");
    for (uint32_t i = 0; i < c->objects.len; i++) {
        const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
        if (o->kind != kind)
            continue;
        cJSON *pvc = cJSON_ParseWithLength(o->json, o->json_len);
        const char *phase = ls_json_text(pvc, "status", "phase"), *volume = ls_json_text(pvc, "spec", "volumeName");
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pvc, "metadata"),
                                                            "annotations");
        const char *node = ls_json_text(ann, "volume.kubernetes.io/selected-node", NULL);
        cJSON *rec = cJSON_CreateObject();
        cJSON_AddStringToObject(rec, "namespace", ls_str_get(o->ns));
        cJSON_AddStringToObject(rec, "name", ls_str_get(o->name));
        cJSON_AddStringToObject(rec, "phase", phase ? phase : "Pending");
        if (volume)
            cJSON_AddStringToObject(rec, "volumeName", volume);
        if (node)
            cJSON_AddStringToObject(rec, "selectedNode", node);
        cJSON_AddItemToArray(claims, rec);
        cJSON_Delete(pvc);
    }
    return claims;
}

/* One DRA claim's allocation in the output's form: its devices
 * ("driver/pool/device", with the capacity a share consumed) and the pods it
 * is reserved for. */
static cJSON *resource_claim_record(const ls_object *o, const cJSON *claim)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(claim, "status");
    const cJSON *allocation = cJSON_GetObjectItemCaseSensitive(status, "allocation");
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "namespace", ls_str_get(o->ns));
    cJSON_AddStringToObject(rec, "name", ls_str_get(o->name));
    cJSON *devices = cJSON_AddArrayToObject(rec, "devices");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(allocation, "devices"), "results");
    const cJSON *r;
    cJSON_ArrayForEach(r, results)
    {
        const char *driver = ls_json_text(r, "driver", NULL), *pool = ls_json_text(r, "pool", NULL),
                   *device = ls_json_text(r, "device", NULL);
        cJSON *d = cJSON_CreateObject();
        char key[768];
        snprintf(key, sizeof key, "%s/%s/%s", driver ? driver : "", pool ? pool : "", device ? device : "");
        cJSON_AddStringToObject(d, "device", key);
        const cJSON *consumed = cJSON_GetObjectItemCaseSensitive(r, "consumedCapacity");
        if (cJSON_IsObject(consumed))
            cJSON_AddItemToObject(d, "consumedCapacity", cJSON_Duplicate(consumed, 1));
        cJSON_AddItemToArray(devices, d);
    }
    cJSON *reserved = cJSON_AddArrayToObject(rec, "reservedFor");
    const cJSON *consumer;
    cJSON_ArrayForEach(consumer, cJSON_GetObjectItemCaseSensitive(status, "reservedFor"))
    {
        const char *name = ls_json_text(consumer, "name", NULL);
        if (name)
            cJSON_AddItemToArray(reserved, cJSON_CreateString(name));
    }
    return rec;
}

cJSON *ls_cluster_resource_claims_json(const ls_cluster *c)
{
    cJSON *claims = cJSON_CreateArray();
    ls_str kind = ls_intern_cstr("resourceclaims.v1.resource.k8s.io");
    for (uint32_t i = 0; i < c->objects.len; i++) {
        const ls_object *o = &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj;
        if (o->kind != kind)
            continue;
        cJSON *claim = cJSON_ParseWithLength(o->json, o->json_len);
        const cJSON *allocation =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "status"), "allocation");
        if (cJSON_IsObject(allocation))
            cJSON_AddItemToArray(claims, resource_claim_record(o, claim));
        cJSON_Delete(claim);
    }
    return claims;
}

bool ls_cluster_has_timeline(const ls_cluster *c)
{
    return ls_timeline_len(&c->timeline) > 0;
}

uint32_t ls_cluster_num_pods(const ls_cluster *c)
{
    return c->pods.len;
}

uint32_t ls_cluster_num_nodes(const ls_cluster *c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->nodes.len; i++)
        n += !LS_VEC_AT(&c->nodes, sim_node, i).deleted;
    return n;
}

void ls_cluster_on_advance(ls_cluster *c, void (*fn)(void *ud, uint64_t now_ms), void *ud)
{
    c->on_advance = fn;
    c->on_advance_ud = ud;
}

uint32_t ls_cluster_node_slots(const ls_cluster *c)
{
    return c->nodes.len;
}

const ls_node *ls_cluster_node(const ls_cluster *c, uint32_t i)
{
    if (i >= c->nodes.len || LS_VEC_AT(&c->nodes, sim_node, i).deleted)
        return NULL;
    return &LS_VEC_AT(&c->nodes, sim_node, i).obj->node;
}

bool ls_cluster_timeline_end(const ls_cluster *c, uint64_t *at_ms)
{
    uint32_t n = ls_timeline_len(&c->timeline);
    if (n == 0)
        return false;
    *at_ms = LS_VEC_AT(&c->timeline.steps, ls_step, n - 1).at_ms;
    return true;
}

const ls_sim_pod *ls_cluster_pod(const ls_cluster *c, uint32_t i)
{
    return i < c->pods.len ? &LS_VEC_AT(&c->pods, ls_sim_pod, i) : NULL;
}

bool ls_cluster_check(const ls_cluster *c, ls_error *err)
{
    for (uint32_t i = 0; i < c->pods.len; i++) {
        const ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        const ls_pod *pod = &sp->obj->pod;
        if (sp->binds > 1)
            return ls_errorf(err, "pod %s/%s was bound %u times", ls_str_get(pod->ns), ls_str_get(pod->name),
                             sp->binds);
        if (sp->outcome == LS_POD_BOUND && !ls_map_get(&c->node_names, sp->node)) {
            /* Allowed only when the node was deleted after the binding. */
            bool existed = false;
            for (uint32_t k = 0; k < c->nodes.len; k++)
                existed = existed || LS_VEC_AT(&c->nodes, sim_node, k).obj->node.name == sp->node;
            if (!existed)
                return ls_errorf(err, "pod %s/%s is bound to a missing node %s", ls_str_get(pod->ns),
                                 ls_str_get(pod->name), ls_str_get(sp->node));
        }
        if (sp->outcome == LS_POD_PENDING)
            return ls_errorf(err, "pod %s/%s was lost: never bound and no reason recorded", ls_str_get(pod->ns),
                             ls_str_get(pod->name));
        if (sp->outcome == LS_POD_UNSCHEDULABLE && (!sp->message || !sp->message[0]))
            return ls_errorf(err, "pod %s/%s is pending without a recorded reason", ls_str_get(pod->ns),
                             ls_str_get(pod->name));
    }
    return true;
}
