/*
 * bench_ops.c: a staged workload (`ops:`), upstream's scheduler_perf
 * workloadTemplate run in the bench cluster on the wall clock. The ops run
 * in order from the source's advance hook (between scheduling cycles):
 *
 *  - createNodes / createPods make `count` objects from the template, whose
 *    strings may use upstream's text/template forms {{ .Index }},
 *    {{ .Count }}, {{ div .Index N }} and {{ mod .Index N }} (an object with
 *    a fixed metadata.name keeps the rendered name, a generateName gets the
 *    bench's counter). createPods waits until its pods are bound unless
 *    skipWaitToCompletion.
 *  - barrier waits until every pod of the earlier createPods ops that the
 *    selector takes (namespaces, labelSelector on the template's labels) is
 *    bound, or with stageRequirement Attempted, has been tried once (or was
 *    created with scheduling gates: PodScheduled=False from the API server).
 *  - updateAny replaces object i (the template rendered with Index i) with
 *    the rendered template, `updatePerSecond` a second (upstream's ticker: the
 *    first after one interval), as upstream's Update + UpdateStatus do; a
 *    pod keeps its binding and its queue position.
 *  - deletePods deletes the pods of the namespace that the labelSelector
 *    takes, `deletePodsPerSecond` a second; in the background with
 *    skipWaitToCompletion.
 *  - start/stopCollectingMetrics bound the measurement: the pods created in
 *    between that the collector's selector takes are the measured ones.
 *
 * A barrier that nothing can satisfy any more (no pod active or backing off,
 * no paced op pending) or no progress for 30 s ends the run (the stall is
 * reported, the pods left count as unschedulable).
 */
#include "cli/bench_internal.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OPS_STALL_SECONDS 30.0

/* Per createPods op: how its pods are doing. Deleted pods count as settled. */
typedef struct op_pods {
    uint32_t created, bound, attempted;
} op_pods;

/* An updateAny or deletePods op running at its rate. */
typedef struct paced_op {
    uint32_t op;
    uint32_t done, total;
    uint64_t next_at_ms, interval_ms;
    ls_vec targets;            /* deletePods: pod indexes chosen when the op starts */
} paced_op;

typedef struct bench_ops_state {
    uint32_t next;             /* the next op to start */
    int32_t waiting;           /* the op whose completion holds the next back, or -1 */
    op_pods *pods;             /* per op */
    ls_vec paced;              /* paced_op */
    ls_map pod_names;          /* intern("ns/name") -> pod index + 1 */
    ls_vec retired_pods, retired_nodes;   /* replaced objects, kept until the cluster is freed */
    int32_t collector;         /* the startCollectingMetrics op, or -1 */
    bool collecting, done;
    double collect_start, collect_end, cpu_start, cpu_end, last_progress;
    ls_event_stats e0, e1;
    ls_event_label_stats l0[BENCH_EVENT_LABELS], l1[BENCH_EVENT_LABELS];
    uint32_t n0, n1;
    char stall[400];
    ls_error err;
    bool failed;
} bench_ops_state;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const bench_op *op_at(const bench_cluster *c, uint32_t i)
{
    return &LS_VEC_AT(&c->w->ops, bench_op, i);
}

/* ---- templates: upstream's {{ ... }} forms in strings */

static bool render_expr(const char *expr, size_t len, uint32_t index, uint32_t count, uint32_t *out)
{
    char buf[64], fn[8];
    unsigned long n;
    if (len >= sizeof buf)
        return false;
    memcpy(buf, expr, len);
    buf[len] = 0;
    char var[16];
    int used = 0;
    if (sscanf(buf, " .%15[A-Za-z] %n", var, &used) == 1 && buf[used] == 0) {
        if (strcmp(var, "Index") && strcmp(var, "Count"))
            return false;
        *out = strcmp(var, "Index") == 0 ? index : count;
        return true;
    }
    if (sscanf(buf, " %7[A-Za-z] .Index %lu %n", fn, &n, &used) == 2 && buf[used] == 0 && n > 0 &&
        (!strcmp(fn, "div") || !strcmp(fn, "mod") || !strcmp(fn, "Mod"))) {
        *out = strcmp(fn, "div") == 0 ? index / (uint32_t)n : index % (uint32_t)n;
        return true;
    }
    return false;
}

/* A rendered value made of digits only becomes a number, as upstream's
 * template-then-YAML reading turns `hostPort: 8{{ mod .Index 12 }}` into 80. */
static void number_if_digits(cJSON *v, const char *text)
{
    size_t n = strspn(text, "0123456789");
    if (n == 0 || text[n] || n > 9)
        return;
    double d = strtod(text, NULL);
    cJSON_free(v->valuestring);
    v->valuestring = NULL;
    v->type = cJSON_Number;
    cJSON_SetNumberValue(v, d);
}

static bool render_string(cJSON *v, uint32_t index, uint32_t count, const char *where, ls_error *err)
{
    const char *s = v->valuestring;
    if (!strstr(s, "{{"))
        return true;
    char out[1024];
    size_t o = 0;
    while (*s && o < sizeof out - 16) {
        const char *open = strstr(s, "{{"), *close = open ? strstr(open, "}}") : NULL;
        uint32_t value;
        if (!open) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", s);
            break;
        }
        if (!close || !render_expr(open + 2, (size_t)(close - open - 2), index, count, &value))
            return ls_errorf(err, "%s: \"%s\": expected {{ .Index }}, {{ .Count }}, {{ div .Index N }} or "
                                  "{{ mod .Index N }}", where, v->valuestring);
        o += (size_t)snprintf(out + o, sizeof out - o, "%.*s%u", (int)(open - s), s, value);
        s = close + 2;
    }
    cJSON_SetValuestring(v, out);
    number_if_digits(v, out);
    return true;
}

static bool render_walk(cJSON *j, uint32_t index, uint32_t count, const char *where, ls_error *err)
{
    if (cJSON_IsString(j))
        return render_string(j, index, count, where, err);
    for (cJSON *c = j->child; c; c = c->next)
        if (!render_walk(c, index, count, where, err))
            return false;
    return true;
}

/* A copy of the op's template for object `index`; NULL (with err) on a bad form. */
static cJSON *render(const bench_op *op, uint32_t index, ls_error *err)
{
    cJSON *copy = cJSON_Duplicate(op->group.tmpl, 1);
    if (!render_walk(copy, index, op->group.count, op->where, err)) {
        cJSON_Delete(copy);
        return NULL;
    }
    return copy;
}

static bool has_generate_name(const cJSON *tmpl)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"),
                                                           "generateName"));
}

static const char *fixed_name(const cJSON *tmpl)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), "name");
    return cJSON_IsString(n) ? n->valuestring : NULL;
}

/* ---- selectors */

static bool labels_match(const bench_selector *sel, const cJSON *tmpl)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"),
                                                           "labels");
    for (uint32_t i = 0; i < sel->n_labels; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, sel->keys[i]);
        if (!cJSON_IsString(v) || strcmp(v->valuestring, sel->values[i]) != 0)
            return false;
    }
    return true;
}

static bool namespace_match(const bench_selector *sel, const char *ns)
{
    for (uint32_t i = 0; i < sel->n_namespaces; i++)
        if (strcmp(sel->namespaces[i], ns) == 0)
            return true;
    return sel->n_namespaces == 0;
}

/* The pods of createPods op `g` are taken by the selector. */
static bool group_selected(const bench_selector *sel, const bench_op *g)
{
    return g->code == BENCH_OP_CREATE_PODS && namespace_match(sel, g->group.ns) && labels_match(sel, g->group.tmpl);
}

/* ---- pod bookkeeping */

static void pod_name_key(const char *ns, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ns, name);
}

static void settle_deleted(bench_cluster *c, bench_pod *bp)
{
    if (!bp->op)
        return;
    op_pods *k = &c->ops->pods[bp->op - 1];
    if (bp->state != BENCH_POD_BOUND)
        k->bound++;
    if (!bp->attempted)
        k->attempted++;
    bp->attempted = true;
}

void bench_ops_on_attempt(bench_cluster *c, bench_pod *bp, bool bound)
{
    if (!c->ops || !bp->op)
        return;
    op_pods *k = &c->ops->pods[bp->op - 1];
    if (!bp->attempted)
        k->attempted++;
    bp->attempted = true;
    if (bound)
        k->bound++;
    c->ops->last_progress = ls_cli_now();
}

/* ---- createNodes / createPods */

static bool run_create_nodes(bench_cluster *c, const bench_op *op, ls_error *err)
{
    for (uint32_t k = 0; k < op->group.count; k++) {
        cJSON *t = render(op, k, err);
        if (!t)
            return false;
        ls_node_obj *n = bench_make_node(c, t, op->where, !has_generate_name(t), NULL, NULL, err);
        cJSON_Delete(t);
        if (!n)
            return false;
        bench_add_node(c, n);
        c->counts.nodes++;
        if (op->group.csinode && !bench_create_csinode(c, &op->group, n->node.name, err))
            return false;
    }
    return true;
}

/* upstream's createPods with volume templates (CreatePodWithPersistentVolume):
 * claim "pvc-<k>" in the op's namespace, bound to volume "<namespace>-pv-<k>"
 * (cluster-wide, hence the namespace), whose CSI volumeHandle is its name. */
static bool op_pod_volumes(bench_cluster *c, const bench_op *op, cJSON *pod, uint32_t k, ls_error *err)
{
    char pv_name[300], pvc_name[64];
    snprintf(pvc_name, sizeof pvc_name, "pvc-%u", k);
    snprintf(pv_name, sizeof pv_name, "%s-pv-%u", op->group.ns, k);
    return bench_create_pod_volumes(c, &op->group, pod, pv_name, pvc_name, err);
}

/* The k-th pod of the op: the rendered template, named by its fixed name or
 * generateName + the bench's counter; with a volume and claim when the op has
 * templates for them. */
static ls_pod_obj *op_pod(bench_cluster *c, const bench_op *op, uint32_t k, ls_error *err)
{
    cJSON *t = render(op, k, err);
    if (!t)
        return NULL;
    if (op->group.pv && !op_pod_volumes(c, op, t, k, err)) {
        cJSON_Delete(t);
        return NULL;
    }
    ls_pod_obj *p;
    if (!has_generate_name(t) && fixed_name(t)) {
        bench_set_name(t, fixed_name(t), op->group.ns);
        ls_decode_ctx ctx = {op->where, NULL, NULL};
        p = ls_pod_decode(t, &ctx, err);
    } else {
        p = bench_make_pod(c, t, op->where, op->group.ns, err);
    }
    cJSON_Delete(t);
    return p;
}

static bool run_create_pods(bench_cluster *c, uint32_t i, const bench_op *op, ls_error *err)
{
    bench_ops_state *st = c->ops;
    if (!bench_create_namespace(c, op->group.ns, err))
        return false;
    bool measured = st->collecting && group_selected(&op_at(c, (uint32_t)st->collector)->sel, op);
    for (uint32_t k = 0; k < op->group.count; k++) {
        ls_pod_obj *p = op_pod(c, op, k, err);
        if (!p)
            return false;
        char key[600];
        pod_name_key(op->group.ns, ls_str_get(p->pod.name), key, sizeof key);
        if (ls_map_get(&st->pod_names, ls_intern_cstr(key))) {
            ls_pod_obj_free(p);
            return ls_errorf(err, "%s: pod %s appears twice in the cluster", op->where, key);
        }
        bench_pod *bp = bench_push_pod(c, p, measured ? BENCH_ROLE_MEASURED : BENCH_ROLE_INIT);
        bp->op = i + 1;
        ls_map_put(&st->pod_names, ls_intern_cstr(key), (void *)(uintptr_t)c->pods.len);
        st->pods[i].created++;
        c->counts.measured += measured;
        bench_add_pod(c, bp);
        if (p->pod.n_scheduling_gates) {
            /* The API server creates a pod with scheduling gates with
             * PodScheduled=False (SchedulingGated), which upstream's barrier
             * counts as attempted. */
            bp->attempted = true;
            st->pods[i].attempted++;
        }
    }
    return true;
}

/* ---- updateAny / deletePods */

static bool update_node(bench_cluster *c, const bench_op *op, cJSON *t, ls_error *err)
{
    const char *name = fixed_name(t);
    uintptr_t at = name ? (uintptr_t)ls_map_get(&c->node_names, ls_intern_cstr(name)) : 0;
    if (!at)
        return ls_errorf(err, "%s: updateAny: nodes \"%s\" not found", op->where, name ? name : "?");
    bench_node *bn = &LS_VEC_AT(&c->nodes, bench_node, at - 1);
    ls_decode_ctx ctx = {op->where, NULL, NULL};
    ls_node_obj *n = ls_node_decode(t, &ctx, err);
    if (!n)
        return false;
    n->node.id = bn->obj->node.id;
    ls_node_obj *old = bn->obj;
    *(ls_node_obj **)ls_vec_push(&c->ops->retired_nodes) = old;
    bn->obj = n;
    ls_scheduler_on_node_update(c->sched, &old->node, &n->node);
    return true;
}

static bool update_pod(bench_cluster *c, const bench_op *op, cJSON *t, ls_error *err)
{
    const char *name = fixed_name(t);
    char key[600];
    pod_name_key(op->group.ns, name ? name : "?", key, sizeof key);
    uintptr_t at = name ? (uintptr_t)ls_map_get(&c->ops->pod_names, ls_intern_cstr(key)) : 0;
    bench_pod *bp = at ? &LS_VEC_AT(&c->pods, bench_pod, at - 1) : NULL;
    if (!bp || bp->state == BENCH_POD_DELETED)
        return ls_errorf(err, "%s: updateAny: pods \"%s\" not found", op->where, key);
    bench_set_name(t, name, op->group.ns);
    ls_decode_ctx ctx = {op->where, NULL, NULL};
    ls_pod_obj *p = ls_pod_decode(t, &ctx, err);
    if (!p)
        return false;
    ls_pod_obj *old = bp->obj;
    p->pod.id = old->pod.id;
    p->pod.seq = old->pod.seq;
    p->pod.node_name = old->pod.node_name;   /* the binding stays, as the API server keeps it */
    *(ls_pod_obj **)ls_vec_push(&c->ops->retired_pods) = old;
    bp->obj = p;
    ls_scheduler_on_pod_update(c->sched, &old->pod, &p->pod);
    return true;
}

static bool update_one(bench_cluster *c, const bench_op *op, uint32_t k, ls_error *err)
{
    cJSON *t = render(op, k, err);
    if (!t)
        return false;
    bool is_pod = strcmp(cJSON_GetObjectItemCaseSensitive(t, "kind")->valuestring, "Pod") == 0;
    bool ok = is_pod ? update_pod(c, op, t, err) : update_node(c, op, t, err);
    cJSON_Delete(t);
    c->counts.updates += ok;
    return ok;
}

static void delete_one(bench_cluster *c, uint32_t pod)
{
    bench_pod *bp = &LS_VEC_AT(&c->pods, bench_pod, pod);
    if (bp->state == BENCH_POD_DELETED)
        return;
    settle_deleted(c, bp);
    bench_delete_pod(c, bp);
    c->counts.deletes++;
}

/* deletePods: the namespace's pods the selector takes, in creation order. */
static void choose_victims(bench_cluster *c, const bench_op *op, ls_vec *out)
{
    for (uint32_t i = 0; i < c->pods.len; i++) {
        const bench_pod *bp = &LS_VEC_AT(&c->pods, bench_pod, i);
        if (!bp->op || bp->state == BENCH_POD_DELETED)
            continue;
        const bench_op *g = op_at(c, bp->op - 1);
        if (strcmp(g->group.ns, op->group.ns) == 0 && labels_match(&op->sel, g->group.tmpl))
            *(uint32_t *)ls_vec_push(out) = i;
    }
}

static bool paced_step(bench_cluster *c, paced_op *po, ls_error *err)
{
    const bench_op *op = op_at(c, po->op);
    uint32_t k = po->done++;
    if (op->code == BENCH_OP_UPDATE_ANY)
        return update_one(c, op, k, err);
    delete_one(c, LS_VEC_AT(&po->targets, uint32_t, k));
    return true;
}

static void start_paced(bench_cluster *c, uint32_t i, const bench_op *op, uint64_t now_ms)
{
    paced_op *po = ls_vec_push(&c->ops->paced);
    memset(po, 0, sizeof *po);
    po->op = i;
    ls_vec_init(&po->targets, sizeof(uint32_t));
    if (op->code == BENCH_OP_DELETE_PODS)
        choose_victims(c, op, &po->targets);
    po->total = op->code == BENCH_OP_DELETE_PODS ? po->targets.len : op->group.count;
    po->interval_ms = op->per_second ? 1000u / op->per_second : 0;
    po->next_at_ms = now_ms + po->interval_ms;
}

/* Runs every step due; drops finished ops. */
static bool run_paced(bench_cluster *c, uint64_t now_ms, ls_error *err)
{
    ls_vec *v = &c->ops->paced;
    for (uint32_t i = 0; i < v->len;) {
        paced_op *po = &LS_VEC_AT(v, paced_op, i);
        while (po->done < po->total && now_ms >= po->next_at_ms) {
            if (!paced_step(c, po, err))
                return false;
            po->next_at_ms += po->interval_ms;
            c->ops->last_progress = ls_cli_now();
        }
        if (po->done < po->total) {
            i++;
            continue;
        }
        ls_vec_free(&po->targets);
        memmove(po, po + 1, (v->len - i - 1) * sizeof *po);
        v->len--;
    }
    return true;
}

static bool paced_running(const bench_cluster *c, uint32_t op)
{
    for (uint32_t i = 0; i < c->ops->paced.len; i++)
        if (LS_VEC_AT(&c->ops->paced, paced_op, i).op == op)
            return true;
    return false;
}

/* ---- collecting */

static void start_collecting(bench_cluster *c, uint32_t i)
{
    bench_ops_state *st = c->ops;
    st->collector = (int32_t)i;
    st->collecting = true;
    st->e0 = ls_scheduler_event_stats(c->sched);
    st->n0 = ls_scheduler_event_stats_by_label(c->sched, st->l0, BENCH_EVENT_LABELS);
    st->cpu_start = cpu_now();
    st->collect_start = ls_cli_now();
    bench_cluster_start_measuring(c, st->collect_start);
}

static void stop_collecting(bench_cluster *c)
{
    bench_ops_state *st = c->ops;
    st->collecting = false;
    st->e1 = ls_scheduler_event_stats(c->sched);
    st->n1 = ls_scheduler_event_stats_by_label(c->sched, st->l1, BENCH_EVENT_LABELS);
    st->cpu_end = cpu_now();
    st->collect_end = bench_cluster_stop_measuring(c, ls_cli_now());
}

/* ---- the op sequence */

/* Whether op `i` (createPods, barrier, updateAny, deletePods) is complete. */
static bool op_complete(const bench_cluster *c, uint32_t i)
{
    const bench_op *op = op_at(c, i);
    if (op->code == BENCH_OP_UPDATE_ANY || op->code == BENCH_OP_DELETE_PODS)
        return !paced_running(c, i);
    if (op->code == BENCH_OP_CREATE_PODS)
        return c->ops->pods[i].bound >= c->ops->pods[i].created;
    for (uint32_t j = 0; j < i; j++) {
        const op_pods *k = &c->ops->pods[j];
        if (group_selected(&op->sel, op_at(c, j)) && (op->attempted ? k->attempted : k->bound) < k->created)
            return false;
    }
    return true;
}

/* Starts op i; true when the next op may start right away. */
static bool start_op(bench_cluster *c, uint32_t i, uint64_t now_ms, ls_error *err, bool *ok)
{
    const bench_op *op = op_at(c, i);
    *ok = true;
    switch (op->code) {
    case BENCH_OP_CREATE_NODES: *ok = run_create_nodes(c, op, err); return *ok;
    case BENCH_OP_CREATE_PODS: *ok = run_create_pods(c, i, op, err); return *ok && op->skip_wait;
    case BENCH_OP_BARRIER: return false;
    case BENCH_OP_UPDATE_ANY:
    case BENCH_OP_DELETE_PODS:
        start_paced(c, i, op, now_ms);
        *ok = run_paced(c, now_ms, err);
        return *ok && op->code == BENCH_OP_DELETE_PODS && op->skip_wait;
    case BENCH_OP_START_COLLECTING: start_collecting(c, i); return true;
    default: stop_collecting(c); return true;
    }
}

/* Starts ops until one must complete first. */
static void advance_ops(bench_cluster *c, uint64_t now_ms)
{
    bench_ops_state *st = c->ops;
    for (;;) {
        if (st->waiting >= 0 && !op_complete(c, (uint32_t)st->waiting))
            return;
        st->waiting = -1;
        if (st->next >= c->w->ops.len) {
            st->done = true;
            c->stop = 1;
            return;
        }
        uint32_t i = st->next++;
        bool ok, go_on = start_op(c, i, now_ms, &st->err, &ok);
        if (!ok) {
            st->failed = true;
            c->stop = 1;
            return;
        }
        st->last_progress = ls_cli_now();
        if (!go_on)
            st->waiting = (int32_t)i;
    }
}

static void check_stall(bench_cluster *c)
{
    bench_ops_state *st = c->ops;
    double now = ls_cli_now();
    ls_queue_gauges g = ls_scheduler_queue_gauges(c->sched);
    const char *why = NULL;
    if (now - st->last_progress > OPS_STALL_SECONDS)
        why = "no progress for 30 s";
    else if (g.active == 0 && g.backoff == 0 && st->paced.len == 0)
        why = "no pod is active or backing off and no op is pending";
    if (!why)
        return;
    snprintf(st->stall, sizeof st->stall, "%s: waiting on %s: %s", why, op_at(c, (uint32_t)st->waiting)->where,
             "its pods cannot all be scheduled");
    if (st->collecting)
        stop_collecting(c);
    c->stop = 1;
}

void bench_ops_advance(bench_cluster *c, uint64_t now_ms)
{
    bench_ops_state *st = c->ops;
    if (st->done || st->failed || st->stall[0])
        return;
    if (!run_paced(c, now_ms, &st->err)) {
        st->failed = true;
        c->stop = 1;
        return;
    }
    advance_ops(c, now_ms);
    if (!c->stop && st->waiting >= 0)
        check_stall(c);
}

bool bench_ops_next_change(bench_cluster *c, uint64_t *at_ms)
{
    bench_ops_state *st = c->ops;
    if (st->done || st->failed || st->stall[0])
        return false;
    bool any = false;
    *at_ms = UINT64_MAX;
    for (uint32_t i = 0; i < st->paced.len; i++) {
        const paced_op *po = &LS_VEC_AT(&st->paced, paced_op, i);
        if (po->next_at_ms < *at_ms)
            *at_ms = po->next_at_ms;
        any = true;
    }
    if (st->waiting >= 0 && op_complete(c, (uint32_t)st->waiting)) {
        *at_ms = 0;   /* the next op can start now */
        any = true;
    }
    return any;
}

/* Renders every template once (index 0), so that a bad form fails before the run. */
static bool check_templates(const bench_workload *w, ls_error *err)
{
    for (uint32_t i = 0; i < w->ops.len; i++) {
        const bench_op *op = &LS_VEC_AT(&w->ops, bench_op, i);
        if (!op->group.tmpl)
            continue;
        cJSON *t = render(op, 0, err);
        if (!t)
            return false;
        cJSON_Delete(t);
    }
    return true;
}

bool bench_cluster_run_ops(bench_cluster *c, ls_scheduler *s, ls_error *err)
{
    if (!check_templates(c->w, err))
        return false;
    bench_ops_state *st = ls_xcalloc(1, sizeof *st);
    c->ops = st;
    c->sched = s;
    st->waiting = -1;
    st->collector = -1;
    st->pods = ls_xcalloc(c->w->ops.len, sizeof *st->pods);
    ls_vec_init(&st->paced, sizeof(paced_op));
    ls_vec_init(&st->retired_pods, sizeof(ls_pod_obj *));
    ls_vec_init(&st->retired_nodes, sizeof(ls_node_obj *));
    ls_map_init(&st->pod_names);
    st->last_progress = ls_cli_now();
    advance_ops(c, ls_scheduler_now_ms(s));
    ls_run_control ctl = {.stop = bench_cluster_stop_flag(c), .reload = NULL, .hold = true};
    if (!st->failed && !st->done)
        ls_scheduler_run_realtime(s, &ctl);
    if (st->collecting)
        stop_collecting(c);
    if (st->failed)
        *err = st->err;
    return !st->failed;
}

void bench_ops_free(bench_cluster *c)
{
    bench_ops_state *st = c->ops;
    if (!st)
        return;
    for (uint32_t i = 0; i < st->paced.len; i++)
        ls_vec_free(&LS_VEC_AT(&st->paced, paced_op, i).targets);
    ls_vec_free(&st->paced);
    for (uint32_t i = 0; i < st->retired_pods.len; i++)
        ls_pod_obj_free(LS_VEC_AT(&st->retired_pods, ls_pod_obj *, i));
    for (uint32_t i = 0; i < st->retired_nodes.len; i++)
        ls_node_obj_free(LS_VEC_AT(&st->retired_nodes, ls_node_obj *, i));
    ls_vec_free(&st->retired_pods);
    ls_vec_free(&st->retired_nodes);
    ls_map_free(&st->pod_names);
    free(st->pods);
    free(st);
    c->ops = NULL;
}

const char *bench_cluster_stall(const bench_cluster *c)
{
    return c->ops && c->ops->stall[0] ? c->ops->stall : NULL;
}

ls_event_stats bench_cluster_collected_events(const bench_cluster *c)
{
    const bench_ops_state *st = c->ops;
    return (ls_event_stats){st->e1.events - st->e0.events, st->e1.registered - st->e0.registered,
                            st->e1.visited - st->e0.visited, st->e1.requeued - st->e0.requeued};
}

double bench_cluster_collected_seconds(const bench_cluster *c, double *cpu_seconds)
{
    *cpu_seconds = c->ops->cpu_end - c->ops->cpu_start;
    return c->ops->collect_end - c->ops->collect_start;
}

uint32_t bench_cluster_collected_labels(const bench_cluster *c, int at, ls_event_label_stats *out, uint32_t cap)
{
    const bench_ops_state *st = c->ops;
    uint32_t n = at ? st->n1 : st->n0;
    for (uint32_t i = 0; i < n && i < cap; i++)
        out[i] = at ? st->l1[i] : st->l0[i];
    return n < cap ? n : cap;
}
