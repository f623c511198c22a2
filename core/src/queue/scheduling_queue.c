/*
 * scheduling_queue.c: see scheduling_queue.h. Follows upstream v1.37's
 * PriorityQueue (queueing hints, PopFromBackoffQ): a failed pod replays the
 * events received during its attempt through its rejectors' hints (Queue ->
 * backoffQ or activeQ, else the unschedulable pods; an Error -> the error
 * backoff heap); a cluster event visits only the unschedulable pods filed
 * under the plugins that registered it (unschedulable_pods.c) and moves those
 * whose hints say Queue; Pop takes backoffQ's head when activeQ is empty;
 * flushes, on the 1 s window boundaries, move pods whose backoff ended, and
 * every 30 s pods left unschedulable for too long. Every operation costs what
 * it touches, not the number of queued pods (the flushes and the wildcard
 * event excepted, as upstream).
 */
#include "queue/scheduling_queue.h"
#include "luasched/feature_gates.h"
#include "luasched/map.h"
#include "queue/in_flight.h"
#include "queue/queue.h"
#include "queue/unschedulable_pods.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BACKOFF_WINDOW_MS is upstream's backoffQOrderingWindowDuration: backoff
 * expiries are truncated to 1 s windows, pods of one window are ordered as in
 * activeQ, and the backoff flush runs on the window boundaries. */
enum { BACKOFF_WINDOW_MS = 1000, UNSCHEDULABLE_FLUSH_MS = 30000 };

struct ls_squeue {
    ls_queue_options opt;
    ls_queue_callbacks cb;
    ls_map by_id;                 /* pod id + 1 -> ls_qpod */
    ls_vec all;                   /* ls_qpod *, for iteration (qp->all_pos) */
    ls_queue active, backoff;     /* backoff: pods rejected by plugins (podBackoffQ) */
    ls_queue error_backoff;       /* pods whose attempt failed with an error (podErrorBackoffQ) */
    ls_unsched_set unsched;       /* unschedulable and gated pods, filed by rejector plugin */
    ls_in_flight in_flight;       /* popped pods and the events received meanwhile */
    ls_vec scratch;               /* ls_qpod *: the pods one event concerns */
    uint32_t n_where[LS_Q_IN_FLIGHT + 1];   /* pods per ls_qwhere */
    ls_event_stats event_counts;
    ls_event_label_stats by_label[LS_SQUEUE_EVENT_LABELS];   /* the same, per event label */
    uint32_t n_labels;
    uint64_t version;             /* bumped whenever a pod moves, comes or goes */
    uint64_t settled_version, settled_since;
    bool settled;                 /* ls_squeue_settled's last answer, for that version and since */
    ls_event_registration *regs;
    uint32_t n_regs;
    uint64_t scheduling_cycle;
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
    ls_queue_init(&q->error_backoff);
    ls_unsched_init(&q->unsched);
    ls_in_flight_init(&q->in_flight);
    ls_vec_init(&q->scratch, sizeof(ls_qpod *));
    if (q->cb.less) {
        q->active.cmp = q->backoff.cmp = compare_with_less;
        q->active.cmp_ud = q->backoff.cmp_ud = q;
    }
    q->wildcard = ls_intern_cstr("*");
    uint64_t t = now(q);
    q->next_backoff_flush_ms = t - t % BACKOFF_WINDOW_MS + BACKOFF_WINDOW_MS;
    q->next_unschedulable_flush_ms = t + UNSCHEDULABLE_FLUSH_MS;
    return q;
}

void ls_squeue_free(ls_squeue *q)
{
    if (!q)
        return;
    for (uint32_t i = 0; i < q->all.len; i++) {
        free(LS_VEC_AT(&q->all, ls_qpod *, i)->buckets);
        free(LS_VEC_AT(&q->all, ls_qpod *, i));
    }
    ls_vec_free(&q->all);
    ls_map_free(&q->by_id);
    ls_queue_free(&q->active);
    ls_queue_free(&q->backoff);
    ls_queue_free(&q->error_backoff);
    ls_unsched_free(&q->unsched);
    ls_in_flight_free(&q->in_flight);
    ls_vec_free(&q->scratch);
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
    ls_unsched_set_registrations(&q->unsched, regs, n);
}

/* ---- where a pod is */

static void set_where(ls_squeue *q, ls_qpod *qp, ls_qwhere where)
{
    q->n_where[qp->where]--;
    q->n_where[where]++;
    qp->where = where;
    q->version++;
}

static void take_out(ls_squeue *q, ls_qpod *qp)
{
    if (qp->where == LS_Q_ACTIVE)
        ls_queue_remove_at(&q->active, qp->heap_pos);
    else if (qp->where == LS_Q_BACKOFF)
        ls_queue_remove_at(qp->error_backoff ? &q->error_backoff : &q->backoff, qp->heap_pos);
    else if (qp->where == LS_Q_UNSCHEDULABLE)
        ls_unsched_remove(&q->unsched, qp);
    set_where(q, qp, LS_Q_NONE);
}

uint64_t ls_squeue_backoff_ms(const ls_squeue *q, const ls_qpod *qp)
{
    uint64_t d = q->opt.initial_backoff_ms;
    for (uint32_t i = 1; i < qp->attempts + qp->pre_enqueue_errors; i++) {
        if (d > q->opt.max_backoff_ms - d) {
            d = q->opt.max_backoff_ms;
            break;
        }
        d *= 2;
    }
    return d < q->opt.max_backoff_ms ? d : q->opt.max_backoff_ms;
}

static uint64_t window_of(uint64_t ms)
{
    return ms - ms % BACKOFF_WINDOW_MS;
}

/* SchedulerPopFromBackoffQ (on in v1.37) brings the 1 s windows too; with
 * --feature-gates SchedulerPopFromBackoffQ=false the backoff ends at its
 * exact time and a pod backing off is never popped early (v1.32). */
static bool windowed(void)
{
    return ls_feature_enabled(LS_FG_SchedulerPopFromBackoffQ);
}

/* The end of the backoff, truncated to its window (upstream's getBackoffTime). */
static uint64_t backoff_expiry(const ls_squeue *q, const ls_qpod *qp)
{
    uint64_t end = qp->timestamp_ms + ls_squeue_backoff_ms(q, qp);
    return windowed() ? window_of(end) : end;
}

/* Still backing off while the expiry's window is not before the current one
 * (upstream's isPodBackingoff with PopFromBackoffQ; without it, while the
 * expiry is after now). */
static bool backing_off(const ls_squeue *q, const ls_qpod *qp)
{
    if (qp->gated || qp->attempts == 0)
        return false;
    return windowed() ? backoff_expiry(q, qp) >= window_of(now(q)) : backoff_expiry(q, qp) > now(q);
}

/* Whether a backoff heap's head with this expiry has completed. */
static bool backoff_done(const ls_squeue *q, int64_t expiry)
{
    return windowed() ? expiry < (int64_t)window_of(now(q)) : expiry <= (int64_t)now(q);
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
                          .seq = qp->seq, .slot = &qp->heap_pos};
    ls_queue_push(&q->active, item);
    set_where(q, qp, LS_Q_ACTIVE);
}

/* Earliest window first; within a window, the backoff heap orders pods as
 * activeQ does and the error heap by time and arrival. A pod without rejector
 * plugins failed with an error: the error heap, which Pop does not take early. */
static void to_backoff(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    count_incoming(q, LS_Q_BACKOFF);
    qp->error_backoff = qp->n_rejectors + qp->n_pending == 0;
    ls_queue_item item = {.pod_id = qp->pod->id, .first = (int64_t)backoff_expiry(q, qp),
                          .key = qp->error_backoff ? 0 : qp->sort_key, .timestamp_ns = (int64_t)qp->timestamp_ms,
                          .seq = qp->seq, .slot = &qp->heap_pos};
    ls_queue_push(qp->error_backoff ? &q->error_backoff : &q->backoff, item);
    set_where(q, qp, LS_Q_BACKOFF);
}

static void to_unschedulable(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    count_incoming(q, LS_Q_UNSCHEDULABLE);
    set_where(q, qp, LS_Q_UNSCHEDULABLE);
    ls_unsched_add(&q->unsched, qp);
}

/* PreEnqueue could not run: the runtime failed (its Lua state could not be
 * rebuilt, the call was cut off), no plugin decided. Gating the pod would
 * file it under no plugin, where nothing but the five-minute flush moves it:
 * it backs off as after an error instead, and PreEnqueue runs again when the
 * backoff ends. */
static void back_off_from_pre_enqueue(ls_squeue *q, ls_qpod *qp, uint32_t status)
{
    qp->gated = false;
    qp->gate_status = status;
    qp->pre_enqueue_errors++;
    qp->n_rejectors = qp->n_pending = 0;   /* no plugin: the error heap */
    qp->timestamp_ms = now(q);
    to_backoff(q, qp);
}

/* PreEnqueue, then activeQ; a plugin's rejection gates the pod among the
 * unschedulable, filed under that plugin (upstream's runPreEnqueuePlugins). */
static void enqueue_active(ls_squeue *q, ls_qpod *qp)
{
    ls_str plugin = 0;
    uint32_t status = 0;
    int code = q->cb.pre_enqueue ? q->cb.pre_enqueue(q->cb.ud, qp->pod, qp->profile, &plugin, &status)
                                 : LS_SUCCESS;
    if (code == LS_ERROR && !plugin) {
        back_off_from_pre_enqueue(q, qp, status);
        return;
    }
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
    qp->pre_enqueue_errors = 0;
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
    qp->all_pos = q->all.len;
    q->n_where[LS_Q_NONE]++;
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

static ls_event_stats *label_counts(ls_squeue *q, const char *label);
static bool anyone_registered(const ls_squeue *q, const ls_cluster_event *ev);

/* An unschedulable or gated pod's own update counts as an event that visits
 * that pod alone (upstream's metrics count it among the queue's events). */
static void count_own_update(ls_squeue *q, const ls_cluster_event *ev, bool requeued)
{
    ls_event_stats *per = label_counts(q, ev->label);
    bool registered = ev->actions && anyone_registered(q, ev);
    q->event_counts.events++;
    per->events++;
    q->event_counts.registered += registered;
    per->registered += registered;
    q->event_counts.visited += registered;
    per->visited += registered;
    q->event_counts.requeued += requeued;
    per->requeued += requeued;
}

void ls_squeue_update(ls_squeue *q, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_qpod *qp = ls_map_get(&q->by_id, old_pod->id + 1);
    if (!qp)
        return;
    qp->pod = new_pod;
    if (qp->where == LS_Q_IN_FLIGHT) {
        /* Its own update during its attempt: replayed if the attempt fails. */
        ls_cluster_event ev = {.resource = ls_intern_cstr("Pod"), .actions = ls_pod_update_actions(old_pod, new_pod),
                               .label = "UnscheduledPodUpdate", .object_type = LS_OBJ_POD,
                               .old_obj = old_pod, .new_obj = new_pod};
        ls_in_flight_event(&q->in_flight, &ev);
        return;
    }
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
    ls_cluster_event ev = {.resource = ls_intern_cstr("TargetPod"), .actions = ls_pod_update_actions(old_pod, new_pod),
                           .label = "UnscheduledPodUpdate", .object_type = LS_OBJ_POD,
                           .old_obj = old_pod, .new_obj = new_pod};
    if (qp->gated) {
        count_own_update(q, &ev, 1);
        enqueue_active(q, qp);   /* the update may have removed the gates */
        return;
    }
    if (!ev.actions)
        return;   /* only its status changed (e.g. our own PodScheduled=False): not an event */
    ls_requeue how = ls_squeue_worth_requeuing(q, qp, &ev);
    count_own_update(q, &ev, how != LS_REQUEUE_SKIP);
    q->moving_for = ev.label;
    if (how != LS_REQUEUE_SKIP)
        requeue(q, qp, how);
    q->moving_for = NULL;
}

static void forget(ls_squeue *q, ls_qpod *qp)
{
    take_out(q, qp);
    ls_in_flight_done(&q->in_flight, qp);
    ls_map_remove(&q->by_id, qp->pod->id + 1);
    q->n_where[LS_Q_NONE]--;
    q->version++;
    ls_qpod *last = LS_VEC_AT(&q->all, ls_qpod *, q->all.len - 1);
    LS_VEC_AT(&q->all, ls_qpod *, qp->all_pos) = last;
    last->all_pos = qp->all_pos;
    q->all.len--;
    free(qp);
}

void ls_squeue_delete(ls_squeue *q, const ls_pod *pod)
{
    ls_qpod *qp = ls_map_get(&q->by_id, pod->id + 1);
    if (qp)
        forget(q, qp);
}

/* ---- the cycle */

/* activeQ's head; when activeQ is empty, the backoff heap's head even if its
 * backoff has not ended (PopFromBackoffQ), never the error heap's. With
 * --feature-gates SchedulerPopFromBackoffQ=false, only activeQ's (v1.32):
 * a backing-off pod waits for the flush. */
static bool pop_item(ls_squeue *q, ls_queue_item *item)
{
    if (ls_queue_pop(&q->active, item))
        return true;
    if (!ls_feature_enabled(LS_FG_SchedulerPopFromBackoffQ) || !ls_queue_pop(&q->backoff, item))
        return false;
    if (q->cb.incoming)
        q->cb.incoming(q->cb.ud, LS_Q_ACTIVE, "PopFromBackoffQ");
    return true;
}

ls_qpod *ls_squeue_pop(ls_squeue *q)
{
    ls_queue_item item;
    while (pop_item(q, &item)) {
        ls_qpod *qp = ls_map_get(&q->by_id, item.pod_id + 1);
        if (!qp)
            continue;
        set_where(q, qp, LS_Q_IN_FLIGHT);
        qp->retry_error = false;
        qp->attempts++;
        if (qp->attempts == 1)
            qp->initial_attempt_ms = now(q);
        qp->scheduling_cycle = ++q->scheduling_cycle;
        qp->n_rejectors = qp->n_pending = 0;
        ls_in_flight_start(&q->in_flight, qp);
        return qp;
    }
    return NULL;
}

void ls_squeue_done(ls_squeue *q, ls_qpod *qp)
{
    forget(q, qp);
}

/* Whether the event came of the pod's own attempt (an object a plugin
 * created or patched while scheduling it): no news for that pod, which would
 * otherwise be retried for ever by a plugin writing in every call (attacker
 * round 4); other pods see the event as any other. */
static bool caused_by(const ls_cluster_event *ev, const ls_qpod *qp)
{
    return ev->origin_pod && ev->origin_pod == qp->pod->id + 1;
}

/* What the events received during the pod's attempt say (upstream's
 * determineSchedulingHintForInFlightPod): each goes through the queueing
 * hints of the plugins that rejected the pod, as a live event would. */
static ls_requeue in_flight_strategy(ls_squeue *q, const ls_qpod *qp)
{
    if (qp->n_rejectors + qp->n_pending == 0 || !qp->in_flight_mark)
        return LS_REQUEUE_AFTER_BACKOFF;   /* an error, or a pod that was not popped */
    ls_requeue best = LS_REQUEUE_SKIP;
    uint64_t cursor = 0;
    const ls_cluster_event *ev;
    while ((ev = ls_in_flight_next_event(&q->in_flight, qp, &cursor))) {
        if (caused_by(ev, qp))
            continue;
        ls_requeue how = ls_squeue_worth_requeuing(q, qp, ev);
        if (how == LS_REQUEUE_IMMEDIATELY)
            return how;
        if (how == LS_REQUEUE_AFTER_BACKOFF) {
            best = how;
            if (qp->n_pending == 0)
                return best;   /* only a pending plugin could make it Immediately */
        }
    }
    return best;
}

void ls_squeue_add_unschedulable(ls_squeue *q, ls_qpod *qp)
{
    qp->timestamp_ms = now(q);
    q->moving_for = "ScheduleAttemptFailure";
    ls_requeue how = in_flight_strategy(q, qp);
    ls_in_flight_done(&q->in_flight, qp);
    if (how == LS_REQUEUE_SKIP)
        to_unschedulable(q, qp);
    else
        requeue(q, qp, how);
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

/* The label's counts; labels past the table's size share its last entry ("other"). */
static ls_event_stats *label_counts(ls_squeue *q, const char *label)
{
    for (uint32_t i = 0; i < q->n_labels; i++)
        if (q->by_label[i].label == label || strcmp(q->by_label[i].label, label) == 0)
            return &q->by_label[i].stats;
    if (q->n_labels == LS_SQUEUE_EVENT_LABELS)
        return &q->by_label[LS_SQUEUE_EVENT_LABELS - 1].stats;
    q->by_label[q->n_labels].label = q->n_labels == LS_SQUEUE_EVENT_LABELS - 1 ? "other" : label;
    return &q->by_label[q->n_labels++].stats;
}

void ls_squeue_note_event(ls_squeue *q, const char *label)
{
    q->event_counts.events++;
    label_counts(q, label)->events++;
}

ls_event_stats ls_squeue_event_counts(const ls_squeue *q)
{
    return q->event_counts;
}

uint32_t ls_squeue_event_counts_by_label(const ls_squeue *q, ls_event_label_stats *out, uint32_t cap)
{
    for (uint32_t i = 0; i < q->n_labels && i < cap; i++)
        out[i] = q->by_label[i];
    return q->n_labels;
}

void ls_squeue_move_all(ls_squeue *q, const ls_cluster_event *ev)
{
    ls_event_stats *per = label_counts(q, ev->label ? ev->label : "?");
    q->event_counts.events++;
    per->events++;
    if (!anyone_registered(q, ev))
        return;
    q->event_counts.registered++;
    per->registered++;
    /* Collect first: requeueing changes the buckets. A nested move (a hint
     * cannot cause one, but PreEnqueue is Lua too) gets its own list. */
    ls_vec mine = q->scratch;
    ls_vec_init(&q->scratch, sizeof(ls_qpod *));
    mine.len = 0;
    ls_unsched_collect(&q->unsched, ev, ev->resource == q->wildcard, &mine);
    q->event_counts.visited += mine.len;
    per->visited += mine.len;
    for (uint32_t i = 0; i < mine.len; i++) {
        ls_qpod *qp = LS_VEC_AT(&mine, ls_qpod *, i);
        ls_requeue how = caused_by(ev, qp) ? LS_REQUEUE_SKIP : ls_squeue_worth_requeuing(q, qp, ev);
        q->moving_for = ev->label;
        if (how != LS_REQUEUE_SKIP) {
            /* A pod PreEnqueue gated is filed under the gating plugin: its
             * events try PreEnqueue again (a DynamicResources claim appeared). */
            if (qp->gated)
                enqueue_active(q, qp);
            else
                requeue(q, qp, how);
            q->event_counts.requeued++;
            per->requeued++;
        }
        q->moving_for = NULL;
    }
    ls_vec_free(&q->scratch);
    q->scratch = mine;
    ls_in_flight_event(&q->in_flight, ev);
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

static void flush_heap(ls_squeue *q, ls_queue *heap)
{
    const ls_queue_item *head;
    ls_queue_item item;
    while ((head = ls_queue_peek(heap)) && backoff_done(q, head->first)) {
        ls_queue_pop(heap, &item);
        ls_qpod *qp = ls_map_get(&q->by_id, item.pod_id + 1);
        if (qp) {
            set_where(q, qp, LS_Q_NONE);
            q->moving_for = "BackoffComplete";
            enqueue_active(q, qp);
            q->moving_for = NULL;
        }
    }
}

static void flush_backoff_completed(ls_squeue *q)
{
    flush_heap(q, &q->backoff);
    flush_heap(q, &q->error_backoff);
}

static void flush_unschedulable_leftover(ls_squeue *q)
{
    uint64_t t = now(q);
    ls_cluster_event timeout = {.resource = q->wildcard, .actions = LS_ACT_ALL, .label = "UnschedulableTimeout"};
    uint32_t n = 0;
    ls_qpod **due = ls_xmalloc((ls_unsched_len(&q->unsched) + 1) * sizeof *due);
    for (uint32_t i = 0; i < ls_unsched_len(&q->unsched); i++) {
        ls_qpod *qp = ls_unsched_at(&q->unsched, i);
        if (t - qp->timestamp_ms > q->opt.max_unschedulable_ms)
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
        q->next_backoff_flush_ms = window_of(t) + BACKOFF_WINDOW_MS;   /* on the window boundaries */
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

bool ls_squeue_next_wakeup(ls_squeue *q, uint64_t *at_ms)
{
    bool any = false;
    uint64_t best = UINT64_MAX;
    const ls_queue *heaps[2] = {&q->backoff, &q->error_backoff};
    for (int i = 0; i < 2; i++) {
        const ls_queue_item *head = ls_queue_peek(heaps[i]);
        if (!head)
            continue;
        /* Done once the current window is past the expiry's window. */
        uint64_t done = tick_at_or_after(q->next_backoff_flush_ms, BACKOFF_WINDOW_MS,
                                         (uint64_t)head->first + (windowed() ? BACKOFF_WINDOW_MS : 0));
        best = done < best ? done : best;
        any = true;
    }
    uint64_t oldest;
    if (ls_unsched_oldest(&q->unsched, &oldest)) {
        /* Strictly more than the limit, as upstream compares with After. */
        uint64_t due = tick_at_or_after(q->next_unschedulable_flush_ms, UNSCHEDULABLE_FLUSH_MS,
                                        oldest + q->opt.max_unschedulable_ms + 1);
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
        else if (qp->where == LS_Q_BACKOFF && !qp->error_backoff)
            to_backoff(q, qp);  /* ordered as activeQ within a window */
    }
    ls_unsched_refile(&q->unsched);   /* profiles may have been renumbered */
}

static bool settled_scan(const ls_squeue *q, uint64_t since_ms)
{
    if (q->n_where[LS_Q_ACTIVE] || q->n_where[LS_Q_NONE])
        return false;
    for (uint32_t i = 0; i < q->all.len; i++) {
        const ls_qpod *qp = LS_VEC_AT(&q->all, ls_qpod *, i);
        if (qp->where == LS_Q_ACTIVE || qp->where == LS_Q_NONE)
            return false;
        if (qp->where == LS_Q_IN_FLIGHT || qp->gated)
            continue;
        /* Never attempted: not settled, unless PreEnqueue could not run for it
         * (it backs off as an error does, and like one waits for a change). */
        if ((qp->attempts == 0 && !qp->pre_enqueue_errors) || qp->timestamp_ms < since_ms)
            return false;
        /* Backing off because an event during its attempt may have helped
         * (preemption deleting victims, a pod bound meanwhile): the retry may succeed. */
        if (qp->where == LS_Q_BACKOFF && (!qp->error_backoff || qp->retry_error))
            return false;
    }
    return true;
}

/* The answer only changes when a pod moves or `since` does: an idle loop
 * asking again and again costs nothing whatever the number of pods. */
bool ls_squeue_settled(ls_squeue *q, uint64_t since_ms)
{
    if (q->settled_version != q->version + 1 || q->settled_since != since_ms) {
        q->settled = settled_scan(q, since_ms);
        q->settled_version = q->version + 1;   /* + 1: version 0 is never "known" */
        q->settled_since = since_ms;
    }
    return q->settled;
}

ls_queue_counts ls_squeue_counts(const ls_squeue *q)
{
    uint32_t gated = ls_unsched_gated(&q->unsched);
    return (ls_queue_counts){.active = q->n_where[LS_Q_ACTIVE], .backoff = q->n_where[LS_Q_BACKOFF],
                             .unschedulable = q->n_where[LS_Q_UNSCHEDULABLE] - gated, .gated = gated,
                             .in_flight = q->n_where[LS_Q_IN_FLIGHT]};
}

uint32_t ls_squeue_in_flight_events(const ls_squeue *q)
{
    return ls_in_flight_event_count(&q->in_flight);
}

uint32_t ls_squeue_size(const ls_squeue *q)
{
    return q->all.len;
}

ls_qpod *ls_squeue_at(const ls_squeue *q, uint32_t i)
{
    return i < q->all.len ? LS_VEC_AT(&q->all, ls_qpod *, i) : NULL;
}
