/*
 * bench_cluster.c: the cluster a workload runs in (see bench.h). Objects are
 * built from the workload's templates: a copy of the template gets its name
 * (generateName + a counter), its namespace and, for nodes, the hostname
 * label and the round-robin zone label, and is decoded as the embedded
 * cluster decodes a manifest. Objects are kept until the cluster is freed,
 * because the scheduler's snapshot may still point at deleted ones.
 * The cluster's state is in bench_internal.h, shared with bench_ops.c (a
 * staged workload's ops), which uses the object builders here.
 *
 * The source side: bindings set spec.nodeName and come back as the pod's
 * update (as the informer would deliver them); preemption deletes the
 * victim. Both happen inside a plugin's call into C (ls_cycle_bind,
 * ls_cycle_preempt), possibly from a JIT-compiled trace, where calling back
 * into the Lua state is not safe (a cluster event may run PreEnqueue or a
 * queueing hint), so their events are held back and delivered from C after
 * the attempt (flush_events). The churn operation (bench_churn.c) runs on
 * the scheduler's clock through next_change_ms / advance_to. The attempt observer counts
 * outcomes, takes the throughput samples and stops the run once every
 * measured pod is bound.
 */
#include "cli/bench_internal.h"
#include "cli/cli.h"
#include "luasched/map.h"
#include "model/doc.h"
#include "sim/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No measured pod bound for this long (wall clock): the measurement ends
 * with the rest counted unschedulable. */
#define BENCH_STALL_SECONDS 30.0
/* How often (wall clock) the queue is checked for pods that can still move. */
#define BENCH_IDLE_CHECK_SECONDS 0.02
/* The last, partial sampling window counts when it lasts at least this long
 * (or when there is no full window at all). */
#define BENCH_MIN_PARTIAL_WINDOW 0.5

bench_cluster *bench_cluster_new(const bench_workload *w)
{
    bench_cluster *c = ls_xcalloc(1, sizeof *c);
    c->w = w;
    ls_vec_init(&c->pods, sizeof(bench_pod));
    ls_vec_init(&c->nodes, sizeof(bench_node));
    ls_vec_init(&c->objects, sizeof(bench_object));
    ls_vec_init(&c->held, sizeof(held_event));
    ls_vec_init(&c->sampler.samples, sizeof(double));
    ls_map_init(&c->node_names);
    if (w->has_churn && w->churn.mode == BENCH_CHURN_RECREATE)
        c->slots = ls_xcalloc((size_t)w->churn.number * w->churn.n_templates, sizeof *c->slots);
    return c;
}

void bench_cluster_free(bench_cluster *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->pods.len; i++)
        ls_pod_obj_free(LS_VEC_AT(&c->pods, bench_pod, i).obj);
    for (uint32_t i = 0; i < c->nodes.len; i++)
        ls_node_obj_free(LS_VEC_AT(&c->nodes, bench_node, i).obj);
    for (uint32_t i = 0; i < c->objects.len; i++)
        ls_object_obj_free(LS_VEC_AT(&c->objects, bench_object, i).obj);
    ls_vec_free(&c->pods);
    ls_vec_free(&c->nodes);
    ls_vec_free(&c->objects);
    ls_vec_free(&c->held);
    ls_vec_free(&c->sampler.samples);
    ls_map_free(&c->node_names);
    free(c->slots);
    bench_ops_free(c);
    free(c);
}

/* ---- templates: names, namespaces, labels */

static void set_string(cJSON *obj, const char *key, const char *value)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(v))
        cJSON_SetValuestring(v, value);
    else {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        cJSON_AddStringToObject(obj, key, value);
    }
}

/* The n-th object of a template: generateName + n; a fixed name is used as
 * is when the template makes a single object. */
void bench_object_name(const cJSON *tmpl, const char *fallback, uint32_t n, bool single, char *buf, size_t len)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generateName");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    if (cJSON_IsString(name) && !cJSON_IsString(gen) && single)
        snprintf(buf, len, "%s", name->valuestring);
    else if (cJSON_IsString(name) && !cJSON_IsString(gen))
        snprintf(buf, len, "%s-%05u", name->valuestring, n);
    else
        snprintf(buf, len, "%s%05u", cJSON_IsString(gen) ? gen->valuestring : fallback, n);
}

void bench_set_name(cJSON *tmpl, const char *name, const char *ns)
{
    cJSON *meta = ls_json_child_object(tmpl, "metadata");
    set_string(meta, "name", name);
    if (ns && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(meta, "namespace")))
        cJSON_AddStringToObject(meta, "namespace", ns);
    else if (ns)
        set_string(meta, "namespace", ns);
}

void bench_set_label(cJSON *tmpl, const char *key, const char *value)
{
    set_string(ls_json_child_object(ls_json_child_object(tmpl, "metadata"), "labels"), key, value);
}

ls_decode_ctx bench_decode_ctx(const char *where)
{
    return (ls_decode_ctx){where, NULL, NULL};
}

/* ---- nodes */

void bench_add_node(bench_cluster *c, ls_node_obj *n)
{
    n->node.id = c->nodes.len;
    bench_node *bn = ls_vec_push(&c->nodes);
    bn->obj = n;
    ls_map_put(&c->node_names, n->node.name, (void *)(uintptr_t)c->nodes.len);
    ls_scheduler_on_node_add(c->sched, &n->node);
}

/* Decodes the next node of a template (name, hostname label, zone). */
ls_node_obj *bench_make_node(bench_cluster *c, cJSON *tmpl, const char *where, bool single, const char *zone_key,
                              const char *zone, ls_error *err)
{
    char name[256];
    bench_object_name(tmpl, "node-", c->node_counter++, single, name, sizeof name);
    bench_set_name(tmpl, name, NULL);
    bench_set_label(tmpl, "kubernetes.io/hostname", name);
    if (zone_key)
        bench_set_label(tmpl, zone_key, zone);
    ls_decode_ctx ctx = bench_decode_ctx(where);
    ls_node_obj *n = ls_node_decode(tmpl, &ctx, err);
    if (n && ls_map_get(&c->node_names, n->node.name)) {
        ls_errorf(err, "%s: node %s appears twice in the cluster", where, name);
        ls_node_obj_free(n);
        return NULL;
    }
    return n;
}


/* The node's CSINode from the group's template (upstream's csiNodeAllocatable
 * and migratedPlugins): named after the node, each driver's nodeID the node's name. */
bool bench_create_csinode(bench_cluster *c, const bench_group *g, ls_str node, ls_error *err)
{
    const char *name = ls_str_get(node);
    bench_set_name(g->csinode, name, NULL);
    cJSON *drivers = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g->csinode, "spec"), "drivers");
    cJSON *d;
    cJSON_ArrayForEach(d, drivers)
        if (cJSON_IsObject(d))
            set_string(d, "nodeID", name);
    ls_object_obj *o = bench_decode_object(g->csinode, g->where, err);
    if (!o)
        return false;
    bench_add_object(c, o);
    return true;
}

static bool create_node_group(bench_cluster *c, const bench_group *g, ls_error *err)
{
    for (uint32_t i = 0; i < g->count; i++) {
        const char *zone = g->n_zones ? g->zones[i % g->n_zones] : NULL;
        ls_node_obj *n = bench_make_node(c, g->tmpl, g->where, g->count == 1, g->zone_key, zone, err);
        if (!n)
            return false;
        bench_add_node(c, n);
        if (g->csinode && !bench_create_csinode(c, g, n->node.name, err))
            return false;
    }
    return true;
}

/* ---- other objects (Namespaces, Services, ...) */

ls_object_obj *bench_decode_object(cJSON *json, const char *where, ls_error *err)
{
    ls_decode_ctx ctx = bench_decode_ctx(where);
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
    if (!cJSON_IsString(kind) || !ls_object_kind_known(kind->valuestring)) {
        ls_errorf(err, "%s: kind %s: not a kind the scheduler reads (Pod, Node, Namespace, Service, ...)", where,
                  cJSON_IsString(kind) ? kind->valuestring : "?");
        return NULL;
    }
    return ls_object_decode(json, &ctx, err);
}

void bench_add_object(bench_cluster *c, ls_object_obj *o)
{
    bench_object *bo = ls_vec_push(&c->objects);
    bo->obj = o;
    ls_scheduler_on_object_add(c->sched, &o->obj);
}

/* A Namespace as the API server makes it (with kubernetes.io/metadata.name). */
bool bench_create_namespace(bench_cluster *c, const char *name, ls_error *err)
{
    for (uint32_t i = 0; i < c->objects.len; i++) {
        const ls_object *o = &LS_VEC_AT(&c->objects, bench_object, i).obj->obj;
        if (strcmp(ls_str_get(o->kind), "Namespace") == 0 && strcmp(ls_str_get(o->name), name) == 0)
            return true;
    }
    cJSON *json = cJSON_CreateObject();
    cJSON_AddStringToObject(json, "apiVersion", "v1");
    cJSON_AddStringToObject(json, "kind", "Namespace");
    bench_set_name(json, name, NULL);
    bench_set_label(json, "kubernetes.io/metadata.name", name);
    ls_object_obj *o = bench_decode_object(json, "<namespace>", err);
    cJSON_Delete(json);
    if (!o)
        return false;
    bench_add_object(c, o);
    return true;
}

/* The workload's namespaces, then every namespace its pods and churn use. */
static bool create_namespaces(bench_cluster *c, ls_error *err)
{
    const bench_workload *w = c->w;
    for (uint32_t i = 0; i < w->n_namespaces; i++)
        if (!bench_create_namespace(c, w->namespaces[i], err))
            return false;
    const ls_vec *lists[] = {&w->init_pods, &w->measure_pods};
    for (int l = 0; l < 2; l++)
        for (uint32_t i = 0; i < lists[l]->len; i++)
            if (!bench_create_namespace(c, LS_VEC_AT(lists[l], bench_group, i).ns, err))
                return false;
    return !w->has_churn || bench_create_namespace(c, w->churn.ns, err);
}

/* The workload's objects: kinds the scheduler reads, and custom resources
 * (registered as plural.version.group, as the embedded cluster names them). */
static bool create_objects(bench_cluster *c, ls_error *err)
{
    const bench_workload *w = c->w;
    for (uint32_t i = 0; i < w->n_objects; i++) {
        ls_str custom = ls_cluster_custom_resource_name(w->objects[i]);
        ls_object_obj *o;
        if (custom) {
            ls_decode_ctx ctx = bench_decode_ctx(w->objects_where[i]);
            o = ls_object_decode(w->objects[i], &ctx, err);
            if (o)
                o->obj.kind = custom;
        } else {
            o = bench_decode_object(w->objects[i], w->objects_where[i], err);
        }
        if (!o)
            return false;
        bench_add_object(c, o);
    }
    return true;
}

bool bench_cluster_create_nodes(bench_cluster *c, ls_scheduler *s, ls_error *err)
{
    c->sched = s;
    for (uint32_t i = 0; i < c->w->nodes.len; i++)
        if (!create_node_group(c, &LS_VEC_AT(&c->w->nodes, bench_group, i), err))
            return false;
    return create_namespaces(c, err) && create_objects(c, err);
}

/* ---- pods */

/* scheduler_perf's createPods with volume templates: per pod a PersistentVolume
 * ("<pod>-pv", its CSI volumeHandle or AWS volumeID the same name) and a claim
 * ("<pod>-pvc") bound to each other, and the pod's volume using the claim. */
bool bench_create_pod_volumes(bench_cluster *c, const bench_group *g, cJSON *pod, const char *pv_name,
                              const char *pvc_name, ls_error *err)
{
    cJSON *pv = cJSON_Duplicate(g->pv, 1), *pvc = cJSON_Duplicate(g->pvc, 1);
    bench_set_name(pv, pv_name, NULL);
    cJSON *spec = ls_json_child_object(pv, "spec");
    cJSON *csi = cJSON_GetObjectItemCaseSensitive(spec, "csi");
    cJSON *ebs = cJSON_GetObjectItemCaseSensitive(spec, "awsElasticBlockStore");
    if (cJSON_IsObject(csi))
        set_string(csi, "volumeHandle", pv_name);
    if (cJSON_IsObject(ebs))
        set_string(ebs, "volumeID", pv_name);
    cJSON *ref = ls_json_child_object(spec, "claimRef");
    set_string(ref, "namespace", g->ns);
    set_string(ref, "name", pvc_name);
    set_string(ls_json_child_object(pv, "status"), "phase", "Bound");
    bench_set_name(pvc, pvc_name, g->ns);
    set_string(ls_json_child_object(pvc, "spec"), "volumeName", pv_name);
    set_string(ls_json_child_object(pvc, "status"), "phase", "Bound");
    ls_object_obj *pv_obj = bench_decode_object(pv, g->where, err);
    ls_object_obj *pvc_obj = pv_obj ? bench_decode_object(pvc, g->where, err) : NULL;
    cJSON_Delete(pv);
    cJSON_Delete(pvc);
    if (!pvc_obj) {
        ls_object_obj_free(pv_obj);
        return false;
    }
    bench_add_object(c, pv_obj);
    bench_add_object(c, pvc_obj);
    cJSON *vols = cJSON_CreateArray(), *vol = cJSON_CreateObject();
    cJSON_AddStringToObject(vol, "name", "vol");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(vol, "persistentVolumeClaim"), "claimName", pvc_name);
    cJSON_AddItemToArray(vols, vol);
    cJSON *pspec = ls_json_child_object(pod, "spec");
    cJSON_DeleteItemFromObjectCaseSensitive(pspec, "volumes");
    cJSON_AddItemToObject(pspec, "volumes", vols);
    return true;
}

ls_pod_obj *bench_make_pod(bench_cluster *c, cJSON *tmpl, const char *where, const char *ns, ls_error *err)
{
    char name[256];
    bench_object_name(tmpl, "pod-", c->pod_counter++, false, name, sizeof name);
    bench_set_name(tmpl, name, ns);
    ls_decode_ctx ctx = bench_decode_ctx(where);
    return ls_pod_decode(tmpl, &ctx, err);
}

/* Pod k of a group with gangs: the first of every gang_size pods creates the
 * group object (a PodGroup custom resource, named after its generateName and
 * a counter), and every pod names the current group in the label or in
 * spec.schedulingGroup.podGroupName. */
static bool join_gang(bench_cluster *c, const bench_group *g, uint32_t k, ls_error *err)
{
    if (k % g->gang_size == 0) {
        bench_object_name(g->gang, "gang-", c->gang_counter++, false, c->gang_name, sizeof c->gang_name);
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(g->gang, "kind");
        const cJSON *api = cJSON_GetObjectItemCaseSensitive(g->gang, "apiVersion");
        char custom[400];
        if (!cJSON_IsString(kind) || !cJSON_IsString(api) ||
            !ls_custom_resource_name(kind->valuestring, api->valuestring, custom, sizeof custom))
            return ls_errorf(err, "%s: gang.template: expected a custom resource (apiVersion group.domain/version)",
                             g->where);
        cJSON *json = cJSON_Duplicate(g->gang, 1);
        bench_set_name(json, c->gang_name, g->ns);
        ls_decode_ctx ctx = bench_decode_ctx(g->where);
        ls_object_obj *o = ls_object_decode(json, &ctx, err);
        cJSON_Delete(json);
        if (!o)
            return false;
        o->obj.kind = ls_intern_cstr(custom);
        bench_add_object(c, o);
    }
    if (g->gang_label)
        bench_set_label(g->tmpl, g->gang_label, c->gang_name);
    else
        set_string(ls_json_child_object(ls_json_child_object(g->tmpl, "spec"), "schedulingGroup"), "podGroupName",
                   c->gang_name);
    return true;
}

/* The next pod of a group, with its volume and claim when the group has templates for them. */
ls_pod_obj *bench_make_group_pod(bench_cluster *c, const bench_group *g, uint32_t k, ls_error *err)
{
    if (g->gang && !join_gang(c, g, k, err))
        return NULL;
    if (g->pv) {
        char name[256];
        bench_object_name(g->tmpl, "pod-", c->pod_counter, false, name, sizeof name);
        char pv_name[300], pvc_name[300];
        snprintf(pv_name, sizeof pv_name, "%s-pv", name);
        snprintf(pvc_name, sizeof pvc_name, "%s-pvc", name);
        if (!bench_create_pod_volumes(c, g, g->tmpl, pv_name, pvc_name, err))
            return NULL;
    }
    return bench_make_pod(c, g->tmpl, g->where, g->ns, err);
}

bench_pod *bench_push_pod(bench_cluster *c, ls_pod_obj *p, int role)
{
    p->pod.id = c->pods.len;
    bench_pod *bp = ls_vec_push(&c->pods);
    bp->obj = p;
    bp->role = (uint8_t)role;
    bp->state = BENCH_POD_PENDING;
    return bp;
}

void bench_add_pod(bench_cluster *c, bench_pod *bp)
{
    bp->added = true;
    bp->obj->pod.seq = ++c->next_seq;
    ls_scheduler_on_pod_add(c->sched, &bp->obj->pod);
}

bool bench_cluster_decode_pods(bench_cluster *c, const ls_vec *groups, int role, ls_error *err)
{
    for (uint32_t i = 0; i < groups->len; i++) {
        const bench_group *g = &LS_VEC_AT(groups, bench_group, i);
        for (uint32_t k = 0; k < g->count; k++) {
            ls_pod_obj *p = bench_make_group_pod(c, g, k, err);
            if (!p)
                return false;
            if (p->pod.node_name) {
                ls_pod_obj_free(p);
                return ls_errorf(err, "%s: spec.nodeName: the bench schedules its pods; remove the field", g->where);
            }
            bench_push_pod(c, p, role);
        }
    }
    return true;
}

void bench_cluster_add_pods(bench_cluster *c, int role)
{
    for (uint32_t i = 0; i < c->pods.len; i++) {
        bench_pod *bp = &LS_VEC_AT(&c->pods, bench_pod, i);
        if (bp->role == role && !bp->added)
            bench_add_pod(c, bp);
    }
}

void bench_delete_pod(bench_cluster *c, bench_pod *bp)
{
    if (bp->state == BENCH_POD_DELETED)
        return;
    bp->state = BENCH_POD_DELETED;
    ls_scheduler_on_pod_delete(c->sched, &bp->obj->pod);
}

/* ---- the source */

static bench_pod *pod_of(bench_cluster *c, const ls_pod *pod)
{
    if (pod->id >= c->pods.len)
        return NULL;
    bench_pod *bp = &LS_VEC_AT(&c->pods, bench_pod, pod->id);
    return &bp->obj->pod == pod ? bp : NULL;
}

static void hold_event(bench_cluster *c, int kind, const ls_pod *pod)
{
    held_event *ev = ls_vec_push(&c->held);
    ev->kind = (uint8_t)kind;
    ev->pod = pod->id;
}

/* Delivers the events held back during the attempt, in order. */
static void flush_events(bench_cluster *c)
{
    for (uint32_t i = 0; i < c->held.len; i++) {
        held_event ev = LS_VEC_AT(&c->held, held_event, i);
        const ls_pod *pod = &LS_VEC_AT(&c->pods, bench_pod, ev.pod).obj->pod;
        if (ev.kind == EV_POD_UPDATE)
            ls_scheduler_on_pod_update(c->sched, pod, pod);
        else
            ls_scheduler_on_pod_delete(c->sched, pod);
    }
    c->held.len = 0;
}

static bool bench_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    bench_cluster *c = ud;
    bench_pod *bp = pod_of(c, pod);
    if (!bp || bp->state == BENCH_POD_DELETED)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(pod->name));
    if (bp->obj->pod.node_name)
        return ls_errorf(err, "pod %s is already assigned to node \"%s\"", ls_str_get(pod->name),
                         ls_str_get(bp->obj->pod.node_name));
    if (!ls_map_get(&c->node_names, node))
        return ls_errorf(err, "nodes \"%s\" not found", ls_str_get(node));
    bp->obj->pod.node_name = node;
    bp->state = BENCH_POD_BOUND;
    hold_event(c, EV_POD_UPDATE, pod);
    return true;
}

static bool bench_preempt(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node, const char *message,
                          ls_error *err)
{
    (void)preemptor, (void)node, (void)message;
    bench_cluster *c = ud;
    bench_pod *bp = pod_of(c, victim);
    if (!bp || bp->state == BENCH_POD_DELETED)
        return ls_errorf(err, "pods \"%s\" not found", ls_str_get(victim->name));
    c->counts.preempted++;
    bp->state = BENCH_POD_DELETED;
    hold_event(c, EV_POD_DELETE, victim);
    return true;
}

static void count_bound(bench_cluster *c, const bench_pod *bp, double now)
{
    if (bp->role == BENCH_ROLE_INIT) {
        c->counts.init_bound++;
    } else if (bp->role == BENCH_ROLE_CHURN) {
        c->counts.churn_bound++;
    } else {
        c->counts.measured_bound++;
        c->last_progress = now;
        if (!c->ops && c->counts.measured_bound == c->counts.measured) {
            c->end_time = now;
            c->stop = 1;
        }
    }
}

static void bench_on_attempt(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    (void)cycle, (void)s;
    bench_cluster *c = ud;
    flush_events(c);
    bench_pod *bp = pod_of(c, a->pod);
    if (!bp)
        return;
    double now = c->measuring ? ls_cli_now() : 0;
    if (c->measuring)
        c->counts.attempts++;
    bench_ops_on_attempt(c, bp, a->node != 0);
    if (a->node)
        count_bound(c, bp, now);
    else if (bp->state == BENCH_POD_PENDING)
        bp->state = BENCH_POD_FAILED;
    if (c->measuring)
        bench_sampler_tick(&c->sampler, now, c->counts.measured_bound);
}

static bool bench_next_change(void *ud, uint64_t *at_ms)
{
    bench_cluster *c = ud;
    if (c->ops)
        return bench_ops_next_change(c, at_ms);
    if (!c->measuring || !c->churning || c->stop)
        return false;
    *at_ms = c->next_tick_ms;
    return true;
}

/* No pod is active or backing off and no churn is coming: the pods left
 * wait for an event that will not happen (the run loop runs with `hold`, so
 * this decides when it ends). */
static bool nothing_can_move(bench_cluster *c, double now)
{
    c->last_idle_check = now;
    ls_queue_gauges g = ls_scheduler_queue_gauges(c->sched);
    return g.active == 0 && g.backoff == 0 && !c->churning;
}

static void bench_advance(void *ud, uint64_t now_ms)
{
    bench_cluster *c = ud;
    flush_events(c);
    if (c->ops) {
        if (c->measuring)
            bench_sampler_tick(&c->sampler, ls_cli_now(), c->counts.measured_bound);
        bench_ops_advance(c, now_ms);
        return;
    }
    if (!c->measuring)
        return;
    while (c->churning && !c->stop && now_ms >= c->next_tick_ms) {
        bench_churn_tick(c);
        c->next_tick_ms += c->w->churn.interval_ms;
    }
    double now = ls_cli_now();
    bench_sampler_tick(&c->sampler, now, c->counts.measured_bound);
    if (now - c->last_progress > BENCH_STALL_SECONDS || (now - c->last_idle_check > BENCH_IDLE_CHECK_SECONDS &&
                                                          nothing_can_move(c, now)))
        c->stop = 1;
}

ls_sched_source bench_cluster_source(bench_cluster *c)
{
    return (ls_sched_source){.ud = c, .bind = bench_bind, .on_attempt = bench_on_attempt,
                             .next_change_ms = bench_next_change, .advance_to = bench_advance,
                             .preempt = bench_preempt};
}

/* ---- the measurement */

void bench_cluster_start_measuring(bench_cluster *c, double now)
{
    c->measuring = true;
    c->stop = 0;
    c->end_time = 0;
    c->last_progress = c->last_idle_check = now;
    c->counts.measured = 0;
    for (uint32_t i = 0; i < c->pods.len; i++)
        c->counts.measured += LS_VEC_AT(&c->pods, bench_pod, i).role == BENCH_ROLE_MEASURED;
    c->sampler.start = c->sampler.last_time = now;
    c->sampler.next_tick = now + 1.0;
    c->sampler.last_count = 0;
    c->sampler.skipped = 0;
    c->churning = c->w->has_churn;
    c->next_tick_ms = ls_scheduler_now_ms(c->sched) + (c->w->has_churn ? c->w->churn.interval_ms : 0);
}

static void sampler_push(bench_sampler *sm, double rate, uint32_t times)
{
    for (uint32_t k = 0; k < times; k++)
        *(double *)ls_vec_push(&sm->samples) = rate;
}

double bench_cluster_stop_measuring(bench_cluster *c, double now)
{
    double end = c->end_time > 0 ? c->end_time : now;
    bench_sampler *sm = &c->sampler;
    bench_sampler_tick(sm, end, c->counts.measured_bound);
    uint32_t fresh = c->counts.measured_bound - sm->last_count;
    double window = end - sm->last_time;
    if (fresh && window > 0 && (window >= BENCH_MIN_PARTIAL_WINDOW || sm->samples.len == 0))
        sampler_push(sm, (double)fresh / window, sm->skipped + 1);
    c->measuring = false;
    c->churning = false;
    for (uint32_t i = 0; i < c->pods.len; i++) {
        const bench_pod *bp = &LS_VEC_AT(&c->pods, bench_pod, i);
        c->counts.measured_failed += bp->role == BENCH_ROLE_MEASURED && bp->state == BENCH_POD_FAILED;
        c->counts.init_failed += bp->role == BENCH_ROLE_INIT && bp->state == BENCH_POD_FAILED;
    }
    return end;
}

/* Every window boundary passed since the last call: the pods scheduled
 * since the last sample over the time since it, recorded once per window
 * (upstream's throughputCollector keeps windows without progress pending
 * and then spreads the next rate over them). Unlike upstream, the first
 * window is kept: the measured pods are created before the clock starts,
 * so sampling and pod creation do not start independently. */
void bench_sampler_tick(bench_sampler *sm, double now, uint32_t count)
{
    if (now < sm->next_tick)
        return;
    uint32_t windows = (uint32_t)((now - sm->next_tick) / 1.0) + 1;
    sm->next_tick += windows;
    uint32_t fresh = count - sm->last_count;
    if (fresh == 0) {
        sm->skipped += windows;
        return;
    }
    sampler_push(sm, (double)fresh / (now - sm->last_time), sm->skipped + windows);
    sm->last_count = count;
    sm->last_time = now;
    sm->skipped = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_sampler_percentile(const bench_sampler *sm, int p)
{
    uint32_t n = sm->samples.len;
    if (!n)
        return 0;
    double *sorted = ls_xmalloc(n * sizeof *sorted);
    memcpy(sorted, sm->samples.data, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    uint32_t rank = (n * (uint32_t)p + 99) / 100;
    double v = sorted[rank ? rank - 1 : 0];
    free(sorted);
    return v;
}

/* ---- introspection */

volatile sig_atomic_t *bench_cluster_stop_flag(bench_cluster *c)
{
    return &c->stop;
}

bench_counts bench_cluster_counts(const bench_cluster *c)
{
    return c->counts;
}

const bench_sampler *bench_cluster_sampler(const bench_cluster *c)
{
    return &c->sampler;
}
