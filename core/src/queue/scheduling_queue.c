/*
 * scheduling_queue.c: see scheduling_queue.h. Follows upstream's
 * PriorityQueue with queueing hints: a failed pod goes to the unschedulable
 * pods unless a move request happened during its cycle (then backoffQ); a
 * cluster event moves the unschedulable pods whose rejector plugins registered
 * it (and whose hints say Queue); flushes move pods whose backoff ended and
 * pods left unschedulable for too long.
 */
#include "queue/scheduling_queue.h"
#include "luasched/map.h"
#include "queue/queue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BACKOFF_FLUSH_MS = 1000, UNSCHEDULABLE_FLUSH_MS = 30000 };

struct ls_squeue {
    ls_queue_options opt;
    ls_queue_callbacks cb;
    ls_map by_id;                 /* pod id + 1 -> ls_qpod */
    ls_vec all;                   /* ls_qpod *, for iteration */
    ls_queue active, backoff;
    ls_event_registration *regs;
    uint32_t n_regs;
    uint64_t scheduling_cycle, move_request_cycle;
    uint64_t next_backoff_flush_ms, next_unschedulable_flush_ms;
    uint64_t seq;
    ls_str wildcard;
    const char *moving_for;       /* the event label of the move in progress (metrics only) */
};

static uint64_t now(const ls_squeue *q)
{
    return q->cb.now_ms(q->cb.ud);
}

/* activeQ order through the plugin's less(a, b) (PrioritySort-style plugins
 * that give no numeric key). */
static int compare_with_less(void *ud, const ls_queue_item *a, const ls_queue_item *b)
{
    ls_squeue *q = ud;
    const ls_qpod *x = ls_map_get(&q->by_id, a->pod_id + 1), *y = ls_map_get(&q->by_id, b->pod_id + 1);
    if (!x || !y)
        return 0;
    if (q->cb.less(q->cb.ud, x->pod, y->pod, x->profile))
        return -1;
    if (q->cb.less(q->cb.ud, y->pod, x->pod, y->profile))
        return 1;
    return 0;
}

ls_squeue *ls_squeue_new(const ls_queue_options *opt, const ls_queue_callbacks *cb)
{
    ls_squeue *q = ls_xcalloc(1, sizeof *q);
    q->opt = *opt;
    q->cb = *cb;
    ls_map_init(&q->by_id);
    ls_vec_init(&q->all, sizeof(ls_qpod *));
    ls_queue_init(&q->active);
    ls_queue_init(&q->backoff);
    if (q->cb.less) {
        q->active.cmp = compare_with_less;
        q->active.cmp_ud = q;
    }
    q->wildcard = ls_intern_cstr("*");
    uint64_t t = now(q);
    q->next_backoff_flush_ms = t + BACKOFF_FLUSH_MS;
    q->next_unschedulable_flush_ms = t + UNSCHEDULABLE_FLUSH_MS;
    return q;
}

void ls_squeue_free(ls_squeue *q)
{
    if (!q)
        return;
    for (uint32_t i = 0; i < q->all.len; i++)
        free(LS_VEC_AT(&q->all, ls_qpod *, i));
    ls_vec_free(&q->all);
    ls_map_free(&q->by_id);
    ls_queue_free(&q->active);
    ls_queue_free(&q->backoff);
    free(q->regs);
    free(q);
}

const ls_event_registration *ls_squeue_registrations(const ls_squeue *q, uint32_t *n)
{
    *n = q->n_regs;
    return q->regs;
}

void ls_squeue_set_incoming(ls_squeue *q, void (*incoming)(void *ud, ls_qwhere queue, const char *event))
{
    q->cb.incoming = incoming;
}

void ls_squeue_set_registrations(ls_squeue *q, const ls_event_registration *regs, uint32_t n)
{
    free(q->regs);
    q->regs = n ? ls_xmalloc(n * sizeof *regs) : NULL;
    if (n)
        memcpy(q->regs, regs, n * sizeof *regs);
    q->n_regs = n;
}

/* ---- where a pod is */

static void take_out(ls_squeue *q, ls_qpod *qp)
{
    if (qp->where == LS_Q_ACTIVE)
        ls_queue_remove(&q->active, qp->pod->id);
    else if (qp->where == LS_Q_BACKOFF)
        ls_queue_remove(&q->backoff, qp->pod->id);
    qp->where = LS_Q_NONE;
}

uint64_t ls_squeue_backoff_ms(const ls_squeue *q, const ls_qpod *qp)
{
    uint64_t d = q->opt.initial_backoff_ms;
    for (uint32_t i = 1; i < qp->attempts; i++) {
        if (d > q->opt.max_backoff_ms - d) {
            d = q->opt.max_backoff_ms;
            break;
        }
        d *= 2;
    }
    return d < q->opt.max_backoff_ms ? d : q->opt.max_backoff_ms;
}

static uint64_t backoff_expiry(const ls_squeue *q, const ls_qpod *qp)
{
    return qp->timestamp_ms + ls_squeue_backoff_ms(q, qp);
}

static bool backing_off(const ls_squeue *q, const ls_qpod *qp)
{
    return !qp->gated && qp->attempts > 0 && backoff_expiry(q, qp) > now(q);
}

static void count_incoming(ls_squeue *q, ls_qwhere where)
{
    if (q->cb.incoming && q->moving_for)
        q->cb.incoming(q->cb.ud, where, q->moving_for);
}

static void to_active(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    count_incoming(q, LS_Q_ACTIVE);
    ls_queue_item item = {.pod_id = qp->pod->id, .key = qp->sort_key, .timestamp_ns = (int64_t)qp->timestamp_ms,
                          .seq = qp->seq};
    ls_queue_push(&q->active, item);
    qp->where = LS_Q_ACTIVE;
}

static void to_backoff(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    count_incoming(q, LS_Q_BACKOFF);
    /* Earliest expiry first: the heap puts the higher key first. */
    ls_queue_item item = {.pod_id = qp->pod->id, .key = -(double)backoff_expiry(q, qp),
                          .timestamp_ns = (int64_t)qp->timestamp_ms, .seq = qp->seq};
    ls_queue_push(&q->backoff, item);
    qp->where = LS_Q_BACKOFF;
}

static void to_unschedulable(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    count_incoming(q, LS_Q_UNSCHEDULABLE);
    qp->where = LS_Q_UNSCHEDULABLE;
}

/* PreEnqueue, then activeQ; a rejection gates the pod among the unschedulable. */
static void enqueue_active(ls_squeue *q, ls_qpod *qp)
{
    ls_str plugin = 0;
    uint32_t status = 0;
    int code = q->cb.pre_enqueue ? q->cb.pre_enqueue(q->cb.ud, qp->pod, qp->profile, &plugin, &status)
                                 : LS_SUCCESS;
    if (code != LS_SUCCESS) {
        qp->gated = true;
        qp->gated_by = plugin;
        qp->gate_status = status;
        qp->n_rejectors = 0;
        if (plugin)
            qp->rejectors[qp->n_rejectors++] = plugin;
        to_unschedulable(q, qp);
        return;
    }
    qp->gated = false;
    to_active(q, qp);
}

/* backoffQ if still backing off, else activeQ. */
static void requeue(ls_squeue *q, ls_qpod *qp, ls_requeue how)
{
    if (how == LS_REQUEUE_AFTER_BACKOFF && backing_off(q, qp))
        to_backoff(q, qp);
    else
        enqueue_active(q, qp);
}

/* ---- adding, updating, deleting */

void ls_squeue_add(ls_squeue *q, const ls_pod *pod, uint32_t profile)
{
    if (ls_map_get(&q->by_id, pod->id + 1))
        return;
    ls_qpod *qp = ls_xcalloc(1, sizeof *qp);
    qp->pod = pod;
    qp->profile = profile;
    qp->timestamp_ms = now(q);
    qp->sort_key = q->cb.sort_key ? q->cb.sort_key(q->cb.ud, pod, profile) : 0;
    qp->seq = pod->seq ? pod->seq : ++q->seq;
    ls_map_put(&q->by_id, pod->id + 1, qp);
    *(ls_qpod **)ls_vec_push(&q->all) = qp;
    q->moving_for = "PodAdd";
    enqueue_active(q, qp);
    q->moving_for = NULL;
}

ls_qpod *ls_squeue_find(const ls_squeue *q, const ls_pod *pod)
{
    return ls_map_get(&q->by_id, pod->id + 1);
}

static bool has_plugin(const ls_str *list, uint32_t n, ls_str plugin)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == plugin)
            return true;
    return false;
}

void ls_squeue_update(ls_squeue *q, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_qpod *qp = ls_map_get(&q->by_id, old_pod->id + 1);
    if (!qp)
        return;
    qp->pod = new_pod;
    if (qp->where == LS_Q_ACTIVE || qp->where == LS_Q_BACKOFF) {
        /* Re-sorted with the new object; PreEnqueue runs again for activeQ. */
        qp->sort_key = q->cb.sort_key ? q->cb.sort_key(q->cb.ud, new_pod, qp->profile) : 0;
        if (qp->where == LS_Q_ACTIVE)
            enqueue_active(q, qp);
        else
            to_backoff(q, qp);
        return;
    }
    if (qp->where != LS_Q_UNSCHEDULABLE)
        return;
    if (qp->gated) {
        enqueue_active(q, qp);   /* the update may have removed the gates */
        return;
    }
    ls_cluster_event ev = {.resource = ls_intern_cstr("Pod"), .actions = ls_pod_update_actions(old_pod, new_pod),
                           .label = "UnscheduledPodUpdate", .object_type = LS_OBJ_POD,
                           .old_obj = old_pod, .new_obj = new_pod};
    ls_requeue how = ls_squeue_worth_requeuing(q, qp, &ev);
    q->moving_for = ev.label;
    if (how != LS_REQUEUE_SKIP)
        requeue(q, qp, how);
    q->moving_for = NULL;
}

static void forget(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    ls_map_remove(&q->by_id, qp->pod->id + 1);
    for (uint32_t i = 0; i < q->all.len; i++) {
        if (LS_VEC_AT(&q->all, ls_qpod *, i) != qp)
            continue;
        LS_VEC_AT(&q->all, ls_qpod *, i) = LS_VEC_AT(&q->all, ls_qpod *, q->all.len - 1);
        q->all.len--;
        break;
    }
    free(qp);
}

void ls_squeue_delete(ls_squeue *q, const ls_pod *pod)
{
    ls_qpod *qp = ls_map_get(&q->by_id, pod->id + 1);
    if (qp)
        forget(q, qp);
}

/* ---- the cycle */

ls_qpod *ls_squeue_pop(ls_squeue *q)
{
    ls_queue_item item;
    while (ls_queue_pop(&q->active, &item)) {
        ls_qpod *qp = ls_map_get(&q->by_id, item.pod_id + 1);
        if (!qp)
            continue;
        qp->where = LS_Q_IN_FLIGHT;
        qp->attempts++;
        if (qp->attempts == 1)
            qp->initial_attempt_ms = now(q);
        qp->scheduling_cycle = ++q->scheduling_cycle;
        qp->n_rejectors = qp->n_pending = 0;
        return qp;
    }
    return NULL;
}

void ls_squeue_done(ls_squeue *q, ls_qpod *qp)
{
    forget(q, qp);
}

void ls_squeue_add_unschedulable(ls_squeue *q, ls_qpod *qp)
{
    qp->timestamp_ms = now(q);
    q->moving_for = "ScheduleAttemptFailure";
    /* An Error (no rejector) always backs off; so does a pod whose cycle saw a
     * move request, since the event may have helped it. */
    if (qp->n_rejectors + qp->n_pending == 0 || q->move_request_cycle >= qp->scheduling_cycle)
        to_backoff(q, qp);
    else
        to_unschedulable(q, qp);
    q->moving_for = NULL;
}

/* ---- events */

ls_requeue ls_squeue_worth_requeuing(ls_squeue *q, const ls_qpod *qp, const ls_cluster_event *ev)
{
    if (qp->n_rejectors + qp->n_pending == 0)
        return LS_REQUEUE_AFTER_BACKOFF;
    if (ev->resource == q->wildcard && ev->actions == LS_ACT_ALL)
        return LS_REQUEUE_AFTER_BACKOFF;
    bool queue = false;
    for (uint32_t i = 0; i < q->n_regs; i++) {
        const ls_event_registration *r = &q->regs[i];
        if (r->profile != qp->profile)
            continue;
        bool pending = has_plugin(qp->pending, qp->n_pending, r->plugin);
        if (!pending && !has_plugin(qp->rejectors, qp->n_rejectors, r->plugin))
            continue;
        if (!ls_event_matches(r->resource, r->actions, ev))
            continue;
        int hint = r->hint && q->cb.hint ? q->cb.hint(q->cb.ud, r->hint, qp->pod, ev) : LS_HINT_QUEUE;
        if (hint != LS_HINT_QUEUE)
            continue;
        if (pending)
            return LS_REQUEUE_IMMEDIATELY;
        queue = true;
        if (qp->n_pending == 0)
            return LS_REQUEUE_AFTER_BACKOFF;
    }
    return queue ? LS_REQUEUE_AFTER_BACKOFF : LS_REQUEUE_SKIP;
}

static bool anyone_registered(const ls_squeue *q, const ls_cluster_event *ev)
{
    if (ev->resource == q->wildcard)
        return true;
    for (uint32_t i = 0; i < q->n_regs; i++)
        if (ls_event_matches(q->regs[i].resource, q->regs[i].actions, ev))
            return true;
    return false;
}

void ls_squeue_move_all(ls_squeue *q, const ls_cluster_event *ev)
{
    if (!anyone_registered(q, ev))
        return;
    /* Collect first: requeueing reorders q->all. */
    uint32_t n = 0;
    ls_qpod **candidates = ls_xmalloc((q->all.len + 1) * sizeof *candidates);
    for (uint32_t i = 0; i < q->all.len; i++) {
        ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        if (qp->where == LS_Q_UNSCHEDULABLE)
            candidates[n++] = qp;
    }
    for (uint32_t i = 0; i < n; i++) {
        /* A pod PreEnqueue gated is worth retrying on the gating plugin's
         * events (its rejector); PreEnqueue then decides again. */
        ls_requeue how = ls_squeue_worth_requeuing(q, candidates[i], ev);
        q->moving_for = ev->label;
        if (how != LS_REQUEUE_SKIP && candidates[i]->gated)
            enqueue_active(q, candidates[i]);
        else if (how != LS_REQUEUE_SKIP)
            requeue(q, candidates[i], how);
        q->moving_for = NULL;
    }
    free(candidates);
    q->move_request_cycle = q->scheduling_cycle;
}

bool ls_squeue_activate(ls_squeue *q, const ls_pod *pod)
{
    ls_qpod *qp = ls_map_get(&q->by_id, pod->id + 1);
    if (!qp || (qp->where != LS_Q_UNSCHEDULABLE && qp->where != LS_Q_BACKOFF))
        return false;
    /* PreEnqueue still applies: a pod it rejects stays gated (upstream's
     * activate reports false when addToActiveQ did not add the pod). */
    q->moving_for = "ForceActivate";
    enqueue_active(q, qp);
    q->moving_for = NULL;
    return qp->where == LS_Q_ACTIVE;
}

/* ---- periodic flushes */

static void flush_backoff_completed(ls_squeue *q)
{
    uint64_t t = now(q);
    ls_queue_item item;
    while (q->backoff.len && -q->backoff.heap[0].key <= (double)t) {
        ls_queue_pop(&q->backoff, &item);
        ls_qpod *qp = ls_map_get(&q->by_id, item.pod_id + 1);
        if (qp) {
            qp->where = LS_Q_NONE;
            q->moving_for = "BackoffComplete";
            enqueue_active(q, qp);
            q->moving_for = NULL;
        }
    }
}

static void flush_unschedulable_leftover(ls_squeue *q)
{
    uint64_t t = now(q);
    ls_cluster_event timeout = {.resource = q->wildcard, .actions = LS_ACT_ALL, .label = "UnschedulableTimeout"};
    uint32_t n = 0;
    ls_qpod **due = ls_xmalloc((q->all.len + 1) * sizeof *due);
    for (uint32_t i = 0; i < q->all.len; i++) {
        ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        if (qp->where == LS_Q_UNSCHEDULABLE && t - qp->timestamp_ms > q->opt.max_unschedulable_ms)
            due[n++] = qp;
    }
    for (uint32_t i = 0; i < n; i++) {
        ls_requeue how = due[i]->gated ? LS_REQUEUE_IMMEDIATELY : ls_squeue_worth_requeuing(q, due[i], &timeout);
        q->moving_for = timeout.label;
        if (due[i]->gated)
            enqueue_active(q, due[i]);   /* PreEnqueue decides again */
        else
            requeue(q, due[i], how);
        q->moving_for = NULL;
    }
    free(due);
}

void ls_squeue_flush(ls_squeue *q)
{
    uint64_t t = now(q);
    if (t >= q->next_backoff_flush_ms) {
        flush_backoff_completed(q);
        q->next_backoff_flush_ms = t - (t - q->next_backoff_flush_ms) % BACKOFF_FLUSH_MS + BACKOFF_FLUSH_MS;
    }
    if (t >= q->next_unschedulable_flush_ms) {
        flush_unschedulable_leftover(q);
        q->next_unschedulable_flush_ms =
            t - (t - q->next_unschedulable_flush_ms) % UNSCHEDULABLE_FLUSH_MS + UNSCHEDULABLE_FLUSH_MS;
    }
}

/* The first tick of a period `every`, counted from `next`, at or after `at`. */
static uint64_t tick_at_or_after(uint64_t next, uint64_t every, uint64_t at)
{
    if (at <= next)
        return next;
    return next + (at - next + every - 1) / every * every;
}

bool ls_squeue_next_wakeup(const ls_squeue *q, uint64_t *at_ms)
{
    bool any = false;
    uint64_t best = UINT64_MAX;
    if (q->backoff.len) {
        uint64_t expiry = (uint64_t)(-q->backoff.heap[0].key);
        best = tick_at_or_after(q->next_backoff_flush_ms, BACKOFF_FLUSH_MS, expiry);
        any = true;
    }
    for (uint32_t i = 0; i < q->all.len; i++) {
        const ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        if (qp->where != LS_Q_UNSCHEDULABLE)
            continue;
        /* Strictly more than the limit, as upstream compares with After. */
        uint64_t due = tick_at_or_after(q->next_unschedulable_flush_ms, UNSCHEDULABLE_FLUSH_MS,
                                        qp->timestamp_ms + q->opt.max_unschedulable_ms + 1);
        if (due < best)
            best = due;
        any = true;
    }
    if (any)
        *at_ms = best;
    return any;
}

void ls_squeue_rekey(ls_squeue *q)
{
    for (uint32_t i = 0; i < q->all.len; i++) {
        ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        qp->sort_key = q->cb.sort_key ? q->cb.sort_key(q->cb.ud, qp->pod, qp->profile) : 0;
        if (qp->where == LS_Q_ACTIVE)
            to_active(q, qp);   /* out and back in: the heap takes the new key */
    }
}

bool ls_squeue_settled(const ls_squeue *q, uint64_t since_ms)
{
    for (uint32_t i = 0; i < q->all.len; i++) {
        const ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        if (qp->where == LS_Q_ACTIVE || qp->where == LS_Q_NONE)
            return false;
        if (qp->where == LS_Q_IN_FLIGHT || qp->gated)
            continue;
        if (qp->attempts == 0 || qp->timestamp_ms < since_ms)
            return false;
        /* Backing off because its cycle saw a move request (preemption deleting
         * victims, a pod bound meanwhile): the retry may succeed. */
        if (qp->where == LS_Q_BACKOFF && q->move_request_cycle >= qp->scheduling_cycle && qp->n_rejectors)
            return false;
    }
    return true;
}

ls_queue_counts ls_squeue_counts(const ls_squeue *q)
{
    ls_queue_counts c = {0};
    for (uint32_t i = 0; i < q->all.len; i++) {
        const ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        switch (qp->where) {
        case LS_Q_ACTIVE: c.active++; break;
        case LS_Q_BACKOFF: c.backoff++; break;
        case LS_Q_UNSCHEDULABLE:
            if (qp->gated)
                c.gated++;
            else
                c.unschedulable++;
            break;
        case LS_Q_IN_FLIGHT: c.in_flight++; break;
        case LS_Q_NONE: break;
        }
    }
    return c;
}

uint32_t ls_squeue_size(const ls_squeue *q)
{
    return q->all.len;
}

ls_qpod *ls_squeue_at(const ls_squeue *q, uint32_t i)
{
    return i < q->all.len ? LS_VEC_AT(&q->all, ls_qpod *, i) : NULL;
}
