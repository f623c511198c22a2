/*
 * cluster.c: the embedded cluster (see cluster.h). Objects are decoded once
 * at load; PriorityClass admission (priority value and preemptionPolicy from
 * the class, globalDefault) is applied as the API server would; bindings set
 * spec.nodeName and are fed back to the scheduler as the pod's update event.
 */
#include "sim/cluster.h"
#include "luasched/map.h"
#include "model/doc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

typedef struct priority_class {
    ls_str name;
    int32_t value;
    bool global_default;
    bool has_policy;
    uint8_t policy;
} priority_class;

typedef struct skipped_kind {
    char *kind;
    uint32_t count;
} skipped_kind;

typedef struct pending_admission {
    uint32_t pod;              /* index in pods */
    bool has_policy;           /* spec.preemptionPolicy was written */
    char *source;              /* file:line for errors */
} pending_admission;

struct ls_cluster {
    ls_vec pods;               /* ls_sim_pod */
    ls_vec nodes;              /* ls_node_obj * */
    ls_vec classes;            /* priority_class */
    ls_vec skipped;            /* skipped_kind */
    ls_vec admissions;         /* pending_admission */
    ls_vec objects;            /* ls_object_obj *: Namespaces, Services, ..., PDBs */
    ls_map pod_keys;           /* interned "ns/name" -> index + 1 */
    ls_map node_names;         /* name -> index + 1 */
    ls_scheduler *sched;
    ls_attempt_observer observer;
    void *observer_ud;
    bool admitted;
};

ls_cluster *ls_cluster_new(void)
{
    ls_cluster *c = ls_xcalloc(1, sizeof *c);
    ls_vec_init(&c->pods, sizeof(ls_sim_pod));
    ls_vec_init(&c->nodes, sizeof(ls_node_obj *));
    ls_vec_init(&c->classes, sizeof(priority_class));
    ls_vec_init(&c->skipped, sizeof(skipped_kind));
    ls_vec_init(&c->admissions, sizeof(pending_admission));
    ls_vec_init(&c->objects, sizeof(ls_object_obj *));
    ls_map_init(&c->pod_keys);
    ls_map_init(&c->node_names);
    return c;
}

void ls_cluster_free(ls_cluster *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *p = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        ls_pod_obj_free(p->obj);
        free(p->message);
    }
    for (uint32_t i = 0; i < c->nodes.len; i++)
        ls_node_obj_free(LS_VEC_AT(&c->nodes, ls_node_obj *, i));
    for (uint32_t i = 0; i < c->skipped.len; i++)
        free(LS_VEC_AT(&c->skipped, skipped_kind, i).kind);
    for (uint32_t i = 0; i < c->admissions.len; i++)
        free(LS_VEC_AT(&c->admissions, pending_admission, i).source);
    ls_vec_free(&c->pods);
    ls_vec_free(&c->nodes);
    ls_vec_free(&c->classes);
    ls_vec_free(&c->skipped);
    ls_vec_free(&c->admissions);
    for (uint32_t i = 0; i < c->objects.len; i++)
        ls_object_obj_free(LS_VEC_AT(&c->objects, ls_object_obj *, i));
    ls_vec_free(&c->objects);
    ls_map_free(&c->pod_keys);
    ls_map_free(&c->node_names);
    free(c);
}

/* ---- loading */

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
    for (uint32_t i = 0; i < c->skipped.len; i++) {
        const skipped_kind *s = &LS_VEC_AT(&c->skipped, skipped_kind, i);
        fprintf(out, "notice: skipped %u %s object%s (not used by the scheduler)\n", s->count, s->kind,
                s->count == 1 ? "" : "s");
    }
}

static bool where_error(ls_error *err, const ls_doc_set *doc, const cJSON *item, const char *fmt, const char *arg)
{
    int line = ls_doc_line(doc, item);
    char what[900];
    snprintf(what, sizeof what, fmt, arg);
    if (line)
        return ls_errorf(err, "%s:%d: %s", ls_doc_source(doc), line, what);
    return ls_errorf(err, "%s: %s", ls_doc_source(doc), what);
}

static bool add_pod(ls_cluster *c, const ls_doc_set *doc, const cJSON *obj, ls_error *err)
{
    ls_decode_ctx ctx = {ls_doc_source(doc), ls_doc_line_of, (void *)doc};
    ls_pod_obj *p = ls_pod_decode(obj, &ctx, err);
    if (!p)
        return false;
    char key[520];
    snprintf(key, sizeof key, "%.255s/%.255s", ls_str_get(p->pod.ns), ls_str_get(p->pod.name));
    ls_str key_id = ls_intern_cstr(key);
    if (ls_map_get(&c->pod_keys, key_id)) {
        ls_pod_obj_free(p);
        return where_error(err, doc, obj, "pod %s appears twice in the cluster", key);
    }
    uint32_t index = c->pods.len;
    p->pod.id = index;
    p->pod.seq = index + 1;
    ls_sim_pod *sp = ls_vec_push(&c->pods);
    sp->obj = p;
    sp->outcome = p->pod.node_name ? LS_POD_RUNNING : LS_POD_PENDING;
    ls_map_put(&c->pod_keys, key_id, (void *)(uintptr_t)(index + 1));
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    pending_admission *adm = ls_vec_push(&c->admissions);
    adm->pod = index;
    adm->has_policy = cJSON_GetObjectItemCaseSensitive(spec, "preemptionPolicy") != NULL;
    char src[600];
    int line = ls_doc_line(doc, obj);
    snprintf(src, sizeof src, "%s:%d", ls_doc_source(doc), line);
    adm->source = ls_xstrdup(src);
    return true;
}

static bool add_node(ls_cluster *c, const ls_doc_set *doc, const cJSON *obj, ls_error *err)
{
    ls_decode_ctx ctx = {ls_doc_source(doc), ls_doc_line_of, (void *)doc};
    ls_node_obj *n = ls_node_decode(obj, &ctx, err);
    if (!n)
        return false;
    if (ls_map_get(&c->node_names, n->node.name)) {
        char name[300];
        snprintf(name, sizeof name, "%s", ls_str_get(n->node.name));
        ls_node_obj_free(n);
        return where_error(err, doc, obj, "node %s appears twice in the cluster", name);
    }
    n->node.id = c->nodes.len;
    *(ls_node_obj **)ls_vec_push(&c->nodes) = n;
    ls_map_put(&c->node_names, n->node.name, (void *)(uintptr_t)c->nodes.len);
    return true;
}

static bool add_priority_class(ls_cluster *c, const ls_doc_set *doc, const cJSON *obj, ls_error *err)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
    if (!cJSON_IsString(name))
        return where_error(err, doc, obj, "PriorityClass%s: metadata.name: expected a string", "");
    if (!cJSON_IsNumber(value) || value->valuedouble != (double)(int32_t)value->valuedouble)
        return where_error(err, doc, value ? value : obj, "PriorityClass %s: value: expected a 32-bit integer",
                           name->valuestring);
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
            return where_error(err, doc, policy,
                               "PriorityClass %s: preemptionPolicy: expected PreemptLowerPriority or Never",
                               name->valuestring);
    }
    return true;
}

static bool add_object(ls_cluster *c, const ls_doc_set *doc, const cJSON *obj, ls_error *err)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (!cJSON_IsString(kind))
        return where_error(err, doc, obj, "expected a Kubernetes object with a \"kind\"%s", "");
    if (strcmp(kind->valuestring, "Pod") == 0)
        return add_pod(c, doc, obj, err);
    if (strcmp(kind->valuestring, "Node") == 0)
        return add_node(c, doc, obj, err);
    if (strcmp(kind->valuestring, "PriorityClass") == 0)
        return add_priority_class(c, doc, obj, err);
    if (ls_object_kind_known(kind->valuestring)) {
        ls_decode_ctx ctx = {ls_doc_source(doc), ls_doc_line_of, (void *)doc};
        ls_object_obj *o = ls_object_decode(obj, &ctx, err);
        if (!o)
            return false;
        *(ls_object_obj **)ls_vec_push(&c->objects) = o;
        return true;
    }
    note_skipped(c, kind->valuestring);
    return true;
}

bool ls_cluster_load_file(ls_cluster *c, const char *path, ls_error *err)
{
    ls_doc_set *doc = ls_doc_load_file(path, err);
    if (!doc)
        return false;
    bool ok = true;
    for (uint32_t i = 0; ok && i < ls_doc_count(doc); i++)
        ok = add_object(c, doc, ls_doc_get(doc, i), err);
    ls_doc_free(doc);
    return ok;
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

static bool admit(ls_cluster *c, ls_error *err)
{
    for (uint32_t i = 0; i < c->admissions.len; i++) {
        const pending_admission *adm = &LS_VEC_AT(&c->admissions, pending_admission, i);
        ls_pod *pod = &LS_VEC_AT(&c->pods, ls_sim_pod, adm->pod).obj->pod;
        if (pod->has_priority)
            continue;
        const priority_class *pc = pod->priority_class_name ? find_class(c, pod->priority_class_name, false)
                                                            : find_class(c, 0, true);
        if (pod->priority_class_name && !pc)
            return ls_errorf(err, "%s: pod %s/%s: no PriorityClass with name %s was found", adm->source,
                             ls_str_get(pod->ns), ls_str_get(pod->name), ls_str_get(pod->priority_class_name));
        if (!pc)
            continue;
        pod->priority = pc->value;
        pod->has_priority = 1;
        if (!adm->has_policy && pc->has_policy)
            pod->preemption_policy = pc->policy;
    }
    c->admitted = true;
    return true;
}

/* ---- the scheduler's source */

static bool cluster_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    ls_cluster *c = ud;
    if (pod->id >= c->pods.len || &LS_VEC_AT(&c->pods, ls_sim_pod, pod->id).obj->pod != pod)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(pod->name));
    ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, pod->id);
    if (sp->obj->pod.node_name)
        return ls_errorf(err, "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned "
                              "to node \"%s\"",
                         ls_str_get(pod->name), ls_str_get(pod->name), ls_str_get(sp->obj->pod.node_name));
    if (!ls_map_get(&c->node_names, node))
        return ls_errorf(err, "nodes \"%s\" not found", ls_str_get(node));
    sp->obj->pod.node_name = node;
    sp->outcome = LS_POD_BOUND;
    sp->node = node;
    sp->binds++;
    /* The API server's update, as the informer would deliver it. */
    ls_scheduler_on_pod_update(c->sched, &sp->obj->pod, &sp->obj->pod);
    return true;
}

static void cluster_on_attempt(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    ls_cluster *c = ud;
    ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, a->pod->id);
    sp->attempts++;
    sp->last_attempt_ms = a->time_ms;
    if (a->node)
        sp->bound_at_ms = a->time_ms;
    if (!a->node) {
        sp->outcome = LS_POD_UNSCHEDULABLE;
        free(sp->message);
        sp->message = ls_xstrdup(a->message ? a->message : "");
    }
    if (c->observer)
        c->observer(c->observer_ud, a, cycle, s);
}

ls_sched_source ls_cluster_source(ls_cluster *c, ls_attempt_observer observer, void *observer_ud)
{
    c->observer = observer;
    c->observer_ud = observer_ud;
    return (ls_sched_source){.ud = c, .bind = cluster_bind, .on_attempt = cluster_on_attempt};
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
        }
    }
}

void ls_cluster_start(ls_cluster *c, ls_scheduler *s)
{
    c->sched = s;
    for (uint32_t i = 0; i < c->objects.len; i++)
        ls_scheduler_on_object_add(s, &LS_VEC_AT(&c->objects, ls_object_obj *, i)->obj);
    for (uint32_t i = 0; i < c->nodes.len; i++)
        ls_scheduler_on_node_add(s, &LS_VEC_AT(&c->nodes, ls_node_obj *, i)->node);
    for (uint32_t i = 0; i < c->pods.len; i++) {
        ls_sim_pod *sp = &LS_VEC_AT(&c->pods, ls_sim_pod, i);
        if (sp->outcome == LS_POD_RUNNING)
            ls_scheduler_on_pod_add(s, &sp->obj->pod);
    }
    add_pending_pods(c, s);
}

bool ls_cluster_admit(ls_cluster *c, ls_error *err)
{
    return c->admitted || admit(c, err);
}

uint32_t ls_cluster_num_pods(const ls_cluster *c)
{
    return c->pods.len;
}

uint32_t ls_cluster_num_nodes(const ls_cluster *c)
{
    return c->nodes.len;
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
        if (sp->outcome == LS_POD_BOUND && !ls_map_get(&c->node_names, sp->node))
            return ls_errorf(err, "pod %s/%s is bound to a missing node %s", ls_str_get(pod->ns),
                             ls_str_get(pod->name), ls_str_get(sp->node));
        if (sp->outcome == LS_POD_PENDING)
            return ls_errorf(err, "pod %s/%s was lost: never bound and no reason recorded", ls_str_get(pod->ns),
                             ls_str_get(pod->name));
        if (sp->outcome == LS_POD_UNSCHEDULABLE && (!sp->message || !sp->message[0]))
            return ls_errorf(err, "pod %s/%s is pending without a recorded reason", ls_str_get(pod->ns),
                             ls_str_get(pod->name));
    }
    return true;
}
