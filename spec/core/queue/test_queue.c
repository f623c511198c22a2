/*
 * test_queue.c: the scheduling queue (core/src/queue/scheduling_queue.c)
 * against the reference, section 3: activeQ order, backoff per attempt,
 * AddUnschedulableIfNotPresent (Error -> the error backoff heap, rejected ->
 * unschedulable, the events received during the attempt replayed through the
 * rejectors' hints), v1.37's 1 s backoff ordering windows and PopFromBackoffQ,
 * the 1 s and 30 s flushes and the wakeups they imply, event matching in
 * MoveAllToActiveOrBackoffQueue,
 * queueing hints (Queue / QueueSkip, a Pending plugin's Queue -> activeQ at
 * once), PreEnqueue gating, Activate, updates and deletes of queued pods,
 * rekeying after a reload (ls_squeue_rekey), the gauges and ls_squeue_settled.
 *
 * The queue is driven directly with fake callbacks: the clock is a variable
 * the test sets (`clock_ms`), PreEnqueue gates pods whose name starts with
 * "gated" while they still carry schedulingGates (as the SchedulingGates
 * plugin would), the sort key is the pod's priority (PrioritySort), and hint
 * ids index a table of QUEUE / SKIP answers. Every expected value is worked
 * out by hand in a comment.
 */
#include "queue/scheduling_queue.h"

#include <stdlib.h>

#include "test.h"

/* ---- fakes */

static uint64_t clock_ms;
static int pre_enqueue_calls;
static int hint_calls;
static int hint_result[8];                 /* hint id -> LS_HINT_QUEUE / LS_HINT_SKIP */
static const ls_cluster_event *last_hint_event;   /* the pointer the queue passed ... */
static ls_cluster_event last_event;                /* ... and a copy (it may live on the queue's stack) */
static bool have_last_event;
static const ls_pod *last_hint_pod;
static int last_hint_id;
static uint32_t gate_status;

static uint64_t fake_now(void *ud)
{
    (void)ud;
    return clock_ms;
}

static bool runtime_broken;   /* PreEnqueue cannot run for pods named "broken*" (no Lua state) */

/* Gates pods named "gated*" that still have scheduling gates; fails without
 * a plugin (the runtime's error) for "broken*" while runtime_broken. */
static int fake_pre_enqueue(void *ud, const ls_pod *pod, uint32_t profile, ls_str *plugin, uint32_t *status)
{
    (void)ud;
    (void)profile;
    pre_enqueue_calls++;
    if (runtime_broken && strncmp(ls_str_get(pod->name), "broken", 6) == 0) {
        *plugin = 0;
        *status = gate_status;
        return LS_ERROR;
    }
    if (strncmp(ls_str_get(pod->name), "gated", 5) == 0 && pod->n_scheduling_gates > 0) {
        *plugin = ls_intern_cstr("SchedulingGates");
        *status = gate_status;
        return LS_UNRESOLVABLE;
    }
    return LS_SUCCESS;
}

static bool sort_inverted;   /* a different queue-sort plugin, for ls_squeue_rekey */

static double fake_sort_key(void *ud, const ls_pod *pod, uint32_t profile)
{
    (void)ud;
    (void)profile;
    return sort_inverted ? -pod->priority : pod->priority;
}

static int fake_hint(void *ud, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    (void)ud;
    hint_calls++;
    last_hint_id = hint;
    last_hint_pod = pod;
    last_hint_event = ev;
    last_event = *ev;
    have_last_event = true;
    return hint_result[hint];
}

static const ls_queue_callbacks CALLBACKS = {
    .ud = NULL, .now_ms = fake_now, .pre_enqueue = fake_pre_enqueue, .sort_key = fake_sort_key, .hint = fake_hint,
};

/* The defaults: podInitialBackoffSeconds 1, podMaxBackoffSeconds 10,
 * podMaxInUnschedulablePodsDuration 5 min (reference 3.2, 3.3). */
static const ls_queue_options DEFAULTS = {
    .initial_backoff_ms = 1000, .max_backoff_ms = 10000, .max_unschedulable_ms = 5 * 60 * 1000,
};

/* A queue created at `t` (the flush ticks are counted from its creation). */
static ls_squeue *new_queue_at(uint64_t t)
{
    clock_ms = t;
    pre_enqueue_calls = hint_calls = 0;
    last_hint_event = NULL;
    have_last_event = false;
    last_hint_pod = NULL;
    last_hint_id = -1;
    for (size_t i = 0; i < sizeof hint_result / sizeof hint_result[0]; i++)
        hint_result[i] = LS_HINT_QUEUE;
    return ls_squeue_new(&DEFAULTS, &CALLBACKS);
}

/* ---- pods */

/* Every parsed pod, released at the end (the queue only borrows them). */
static const ls_pod *parsed[256];
static int n_parsed;

static const ls_pod *parse_pod(const char *yaml)
{
    ls_error err = {{0}};
    const ls_pod *p = ls_pod_parse(yaml, strlen(yaml), "test-pod", &err);
    if (!p || n_parsed == (int)(sizeof parsed / sizeof parsed[0])) {
        fprintf(stderr, "pod parse failed: %s\n", p ? "too many pods" : err.msg);
        abort();
    }
    parsed[n_parsed++] = p;
    return p;
}

/* The queue keys pods by their table id, which a parsed pod leaves at 0: each
 * test pod gets its own id (a new version of a pod keeps its id). */
static uint32_t next_id = 1;

static ls_pod *mutable_pod(const ls_pod *p)
{
    return (ls_pod *)(uintptr_t)p;
}

/* A pod `name` with priority `prio` and `extra` spec members (flow YAML, may be ""). */
static const ls_pod *pod_with(const char *name, int prio, const char *labels, const char *extra, uint32_t id)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: %s, namespace: default, uid: uid-%s, labels: {%s}}\n"
             "spec: {priority: %d, containers: [{name: c, image: app, resources: {requests: {cpu: 500m}}}]%s%s}\n",
             name, name, labels, prio, extra[0] ? ", " : "", extra);
    const ls_pod *p = parse_pod(yaml);
    mutable_pod(p)->id = id ? id : next_id++;
    return p;
}

static const ls_pod *pod(const char *name, int prio)
{
    return pod_with(name, prio, "", "", 0);
}

/* ---- helpers */

static ls_str S(const char *s)
{
    return ls_intern_cstr(s);
}

static ls_qwhere where(ls_squeue *q, const ls_pod *p)
{
    ls_qpod *qp = ls_squeue_find(q, p);
    return qp ? qp->where : LS_Q_NONE;
}

static const char *popped_name(ls_squeue *q)
{
    ls_qpod *qp = ls_squeue_pop(q);
    return qp ? ls_str_get(qp->pod->name) : "(empty)";
}

/* Pops `p` (it must be the head of activeQ) and fails it at the current time:
 * rejected by `rejector` (Unschedulable), pending on `pending` (Pending), or,
 * with both NULL, an Error. Returns the queued pod. */
static ls_qpod *fail(ls_squeue *q, const ls_pod *p, const char *rejector, const char *pending)
{
    ls_qpod *qp = ls_squeue_pop(q);
    CHECK(qp != NULL && qp->pod == p);
    if (!qp || qp->pod != p) {
        fprintf(stderr, "fail(): expected %s at the head of activeQ\n", ls_str_get(p->name));
        exit(1);
    }
    if (rejector)
        qp->rejectors[qp->n_rejectors++] = S(rejector);
    if (pending)
        qp->pending[qp->n_pending++] = S(pending);
    ls_squeue_add_unschedulable(q, qp);
    return qp;
}

/* Adds `p` and fails it at once (see fail()). */
static ls_qpod *add_and_fail(ls_squeue *q, const ls_pod *p, const char *rejector, const char *pending)
{
    ls_squeue_add(q, p, 0);
    return fail(q, p, rejector, pending);
}

static ls_event_registration reg(uint32_t profile, const char *plugin, const char *resource, uint32_t actions,
                                 int hint)
{
    return (ls_event_registration){.profile = profile, .plugin = S(plugin), .resource = S(resource),
                                   .actions = actions, .hint = hint};
}

static ls_cluster_event event(const char *resource, uint32_t actions, const char *label)
{
    return (ls_cluster_event){.resource = S(resource), .actions = actions, .label = label};
}

/* Runs the flushes at every 1 s tick from `from` to `to` (both ticks). */
static void tick_until(ls_squeue *q, uint64_t from, uint64_t to)
{
    for (uint64_t t = from; t <= to; t += 1000) {
        clock_ms = t;
        ls_squeue_flush(q);
    }
}

/* ---- 3.1 activeQ order: PrioritySort Less = higher priority, then the
 * earlier Timestamp; our third key is arrival (seq) */

static void test_active_order(void)
{
    ls_squeue *q = new_queue_at(0);
    const ls_pod *low = pod("low", 0), *high0 = pod("high-at-0", 10);
    const ls_pod *high5a = pod("high-at-5-first", 10), *high5b = pod("high-at-5-second", 10);
    const ls_pod *mid = pod("mid", 5);
    ls_squeue_add(q, low, 0);         /* t=0, prio 0 */
    ls_squeue_add(q, high0, 0);       /* t=0, prio 10 */
    clock_ms = 5000;
    ls_squeue_add(q, high5a, 0);      /* t=5 s, prio 10, added before ... */
    ls_squeue_add(q, high5b, 0);      /* ... this one: same priority and timestamp, later seq */
    ls_squeue_add(q, mid, 0);         /* t=5 s, prio 5 */
    CHECK_INT(ls_squeue_counts(q).active, 5);
    /* prio 10 first (t=0 before t=5 s, then arrival), then 5, then 0 */
    CHECK_STR(popped_name(q), "high-at-0");
    CHECK_STR(popped_name(q), "high-at-5-first");
    CHECK_STR(popped_name(q), "high-at-5-second");
    CHECK_STR(popped_name(q), "mid");
    CHECK_STR(popped_name(q), "low");
    CHECK_STR(popped_name(q), "(empty)");
    /* adding a pod the queue already holds does nothing */
    ls_squeue_add(q, low, 0);
    CHECK_INT(ls_squeue_size(q), 5);
    CHECK_INT(ls_squeue_counts(q).in_flight, 5);
    ls_squeue_free(q);

    /* a pod's own arrival order (pod->seq, as the cluster loader numbers the
     * manifests) breaks the tie when set, whatever the order of the adds */
    q = new_queue_at(0);
    const ls_pod *second = pod("second-in-file", 0), *first = pod("first-in-file", 0);
    mutable_pod(second)->seq = 2;
    mutable_pod(first)->seq = 1;
    ls_squeue_add(q, second, 0);
    ls_squeue_add(q, first, 0);
    CHECK_STR(popped_name(q), "first-in-file");
    CHECK_STR(popped_name(q), "second-in-file");
    ls_squeue_free(q);
}

/* ---- pop: attempts, the cycle counter, cleared rejectors */

static void test_pop(void)
{
    ls_squeue *q = new_queue_at(0);
    const ls_pod *a = pod("a", 0), *b = pod("b", 0);
    ls_squeue_add(q, a, 0);
    ls_squeue_add(q, b, 0);
    clock_ms = 700;
    ls_qpod *qa = ls_squeue_pop(q);
    CHECK(qa && qa->pod == a);
    CHECK_INT(qa->attempts, 1);
    CHECK_INT(qa->scheduling_cycle, 1);
    CHECK_INT(qa->initial_attempt_ms, 700);
    CHECK_INT(qa->where, LS_Q_IN_FLIGHT);
    ls_qpod *qb = ls_squeue_pop(q);
    CHECK_INT(qb->scheduling_cycle, 2);   /* one cycle per pop, whichever pod */
    /* a rejected pod comes back; its next pop counts a second attempt and
     * clears the rejector plugins of the previous cycle */
    qa->rejectors[qa->n_rejectors++] = S("NodeResourcesFit");
    qa->pending[qa->n_pending++] = S("Gang");
    ls_squeue_add_unschedulable(q, qa);
    ls_squeue_activate(q, a);
    clock_ms = 900;
    qa = ls_squeue_pop(q);
    CHECK(qa && qa->pod == a);
    CHECK_INT(qa->attempts, 2);
    CHECK_INT(qa->scheduling_cycle, 3);
    CHECK_INT(qa->initial_attempt_ms, 700);   /* the first attempt's time stays */
    CHECK_INT(qa->n_rejectors, 0);
    CHECK_INT(qa->n_pending, 0);
    /* done: the pod leaves the queue */
    ls_squeue_done(q, qa);
    CHECK(ls_squeue_find(q, a) == NULL);
    CHECK_INT(ls_squeue_size(q), 1);
    ls_squeue_free(q);
}

/* ---- 3.2 backoff: initial x 2^(attempts-1), capped at max */

static uint64_t backoff_for(const ls_queue_options *opt, uint32_t attempts)
{
    clock_ms = 0;
    ls_squeue *q = ls_squeue_new(opt, &CALLBACKS);
    ls_qpod qp = {.attempts = attempts};
    uint64_t d = ls_squeue_backoff_ms(q, &qp);
    ls_squeue_free(q);
    return d;
}

static void test_backoff_durations(void)
{
    /* defaults 1 s / 10 s: 1, 2, 4, 8, then 16 > 10 -> 10, and 10 from then on */
    CHECK_INT(backoff_for(&DEFAULTS, 1), 1000);
    CHECK_INT(backoff_for(&DEFAULTS, 2), 2000);
    CHECK_INT(backoff_for(&DEFAULTS, 3), 4000);
    CHECK_INT(backoff_for(&DEFAULTS, 4), 8000);
    CHECK_INT(backoff_for(&DEFAULTS, 5), 10000);
    CHECK_INT(backoff_for(&DEFAULTS, 6), 10000);
    CHECK_INT(backoff_for(&DEFAULTS, 100), 10000);   /* no overflow however many attempts */
    /* custom 3 s / 20 s: 3, 6, 12, then 24 > 20 -> 20 */
    ls_queue_options custom = {.initial_backoff_ms = 3000, .max_backoff_ms = 20000,
                               .max_unschedulable_ms = 300000};
    CHECK_INT(backoff_for(&custom, 1), 3000);
    CHECK_INT(backoff_for(&custom, 2), 6000);
    CHECK_INT(backoff_for(&custom, 3), 12000);
    CHECK_INT(backoff_for(&custom, 4), 20000);
    CHECK_INT(backoff_for(&custom, 5), 20000);
    /* max a power-of-two multiple of initial: 2 s / 16 s reaches 16 exactly */
    ls_queue_options pow2 = {.initial_backoff_ms = 2000, .max_backoff_ms = 16000, .max_unschedulable_ms = 300000};
    CHECK_INT(backoff_for(&pow2, 4), 16000);   /* 2 * 2^3 */
    CHECK_INT(backoff_for(&pow2, 5), 16000);
    /* initial == max: always max */
    ls_queue_options flat = {.initial_backoff_ms = 5000, .max_backoff_ms = 5000, .max_unschedulable_ms = 300000};
    CHECK_INT(backoff_for(&flat, 1), 5000);
    CHECK_INT(backoff_for(&flat, 3), 5000);

    /* the same through the queue: a pod failing with Error on its 1st, 2nd,
     * 3rd attempt at t=10 s backs off until 11 s, 12 s, 14 s; isPodBackingoff
     * is "end after now", so at the end itself it no longer backs off */
    ls_squeue *q = new_queue_at(10000);
    const ls_pod *p = pod("p", 0);
    ls_squeue_add(q, p, 0);
    uint64_t expected_end[] = {11000, 12000, 14000};
    for (int attempt = 0; attempt < 3; attempt++) {
        clock_ms = 10000;
        ls_qpod *qp = fail(q, p, NULL, NULL);
        CHECK_INT(qp->attempts, attempt + 1);
        CHECK_INT(qp->timestamp_ms, 10000);
        CHECK_INT(qp->timestamp_ms + ls_squeue_backoff_ms(q, qp), expected_end[attempt]);
        CHECK_INT(qp->where, LS_Q_BACKOFF);
        /* Activate skips the rest of the backoff (ForceActivate), for the next round */
        CHECK(ls_squeue_activate(q, p));
    }
    ls_squeue_free(q);
}

/* ---- 3.4 AddUnschedulableIfNotPresent */

static void test_add_unschedulable(void)
{
    ls_squeue *q = new_queue_at(0);
    const ls_pod *err_pod = pod("error", 0), *rej = pod("rejected", 0), *pend = pod("pending", 0);

    /* no rejector plugins (Error) -> backoffQ, Timestamp refreshed to now */
    ls_squeue_add(q, err_pod, 0);
    clock_ms = 2500;
    ls_qpod *qe = fail(q, err_pod, NULL, NULL);
    CHECK_INT(qe->where, LS_Q_BACKOFF);
    CHECK_INT(qe->timestamp_ms, 2500);

    /* rejected by a plugin, no event during its attempt -> unschedulablePods */
    ls_qpod *qr = add_and_fail(q, rej, "NodeResourcesFit", NULL);
    CHECK_INT(qr->where, LS_Q_UNSCHEDULABLE);
    CHECK_INT(qr->timestamp_ms, 2500);
    CHECK(!qr->gated);

    /* a Pending plugin counts as a rejector too -> unschedulablePods */
    ls_qpod *qp = add_and_fail(q, pend, NULL, "Gang");
    CHECK_INT(qp->where, LS_Q_UNSCHEDULABLE);

    ls_queue_counts c = ls_squeue_counts(q);
    CHECK_INT(c.active, 0);
    CHECK_INT(c.backoff, 1);
    CHECK_INT(c.unschedulable, 2);
    CHECK_INT(c.gated, 0);
    CHECK_INT(c.in_flight, 0);
    ls_squeue_free(q);
}

/* In-flight events (upstream since queueing hints became the default): a
 * pod that fails replays the events received since it was popped through the
 * hints of its rejector plugins; Skip from all of them -> unschedulablePods,
 * Queue -> backoffQ (activeQ if no longer backing off), Queue from a Pending
 * plugin -> activeQ at once. Registrations: Fit registered Node/Add (no hint:
 * Queue), Picky registered Node/Add with hint 1, Gang registered Node/Add. */
static void test_in_flight_events(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {reg(0, "Fit", "Node", LS_ACT_ADD, 0), reg(0, "Picky", "Node", LS_ACT_ADD, 1),
                                    reg(0, "Gang", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, regs, 3);
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_cluster_event pvc_add = event("PersistentVolumeClaim", LS_ACT_ADD, "PvcAdd");

    /* a: a node is added while it is in flight, Fit rejected it -> the replay
     * says Queue; failed at 0 on attempt 1, backing off -> backoffQ */
    const ls_pod *a = pod("a", 0);
    ls_squeue_add(q, a, 0);
    ls_qpod *qa = ls_squeue_pop(q);
    ls_squeue_move_all(q, &node_add);
    qa->rejectors[qa->n_rejectors++] = S("Fit");
    ls_squeue_add_unschedulable(q, qa);
    CHECK_INT(where(q, a), LS_Q_BACKOFF);

    /* b: popped after that event and none during its attempt -> unschedulablePods */
    const ls_pod *b = pod("b", 5);   /* priority 5: ahead of a in backoffQ's pops below */
    ls_qpod *qb = add_and_fail(q, b, "Fit", NULL);
    CHECK_INT(qb->where, LS_Q_UNSCHEDULABLE);

    /* c: an event no plugin registered arrives in flight: not recorded ->
     * unschedulablePods (and b is not moved by it) */
    const ls_pod *c = pod("c", 9);
    ls_squeue_add(q, c, 0);
    ls_qpod *qc = ls_squeue_pop(q);
    CHECK(qc && qc->pod == c);
    ls_squeue_move_all(q, &pvc_add);
    qc->rejectors[qc->n_rejectors++] = S("Fit");
    ls_squeue_add_unschedulable(q, qc);
    CHECK_INT(where(q, c), LS_Q_UNSCHEDULABLE);
    CHECK_INT(where(q, b), LS_Q_UNSCHEDULABLE);

    /* d: an event registered only by plugins that did not reject it: the old
     * move-request rule sent it to backoffQ; the replay asks Silent, which
     * registered nothing -> unschedulablePods */
    const ls_pod *d = pod("d", 9);
    ls_squeue_add(q, d, 0);
    ls_qpod *qd = ls_squeue_pop(q);
    ls_squeue_move_all(q, &node_add);   /* moves b and c (Fit) to backoffQ */
    CHECK_INT(where(q, b), LS_Q_BACKOFF);
    qd->rejectors[qd->n_rejectors++] = S("Silent");
    ls_squeue_add_unschedulable(q, qd);
    CHECK_INT(where(q, d), LS_Q_UNSCHEDULABLE);

    /* e: Picky's hint answers Skip for the event -> unschedulablePods; the
     * replay called the hint with e and the recorded event */
    const ls_pod *e = pod("e", 9);
    ls_squeue_add(q, e, 0);
    ls_qpod *qe = ls_squeue_pop(q);
    CHECK(qe && qe->pod == e);
    ls_squeue_move_all(q, &node_add);
    hint_result[1] = LS_HINT_SKIP;
    hint_calls = 0;
    qe->rejectors[qe->n_rejectors++] = S("Picky");
    ls_squeue_add_unschedulable(q, qe);
    CHECK_INT(where(q, e), LS_Q_UNSCHEDULABLE);
    CHECK_INT(hint_calls, 1);
    CHECK(last_hint_pod == e);
    CHECK_STR(last_event.label, "NodeAdd");

    /* f: Gang is Pending for it and registered the event -> activeQ at once */
    const ls_pod *f = pod("f", 9);
    ls_squeue_add(q, f, 0);
    ls_qpod *qf = ls_squeue_pop(q);
    ls_squeue_move_all(q, &node_add);
    qf->pending[qf->n_pending++] = S("Gang");
    ls_squeue_add_unschedulable(q, qf);
    CHECK_INT(where(q, f), LS_Q_ACTIVE);

    /* g, h: two pods in flight at once (g waiting at Permit, say). An event
     * during both; h finishes first, rejected by Fit -> backoffQ. An event
     * after h is done is still g's: g is popped before it. g fails rejected by
     * Picky (hint now Queue) -> backoffQ through the second event as well. */
    hint_result[1] = LS_HINT_QUEUE;
    const ls_pod *g = pod("g", 20), *h = pod("h", 19);
    ls_squeue_add(q, g, 0);
    ls_squeue_add(q, h, 0);
    ls_qpod *qg = ls_squeue_pop(q), *qh = ls_squeue_pop(q);
    CHECK(qg->pod == g && qh->pod == h);
    ls_squeue_move_all(q, &node_add);
    qh->rejectors[qh->n_rejectors++] = S("Fit");
    ls_squeue_add_unschedulable(q, qh);
    CHECK_INT(where(q, h), LS_Q_BACKOFF);
    qg->rejectors[qg->n_rejectors++] = S("Picky");
    ls_squeue_add_unschedulable(q, qg);
    CHECK_INT(where(q, g), LS_Q_BACKOFF);

    /* i: popped after every earlier pod is done: the earlier events are gone */
    const ls_pod *i = pod("i", 30);
    ls_squeue_add(q, i, 0);
    ls_qpod *qi = fail(q, i, "Fit", NULL);
    CHECK_INT(qi->where, LS_Q_UNSCHEDULABLE);

    /* j: an update of the pod itself during its attempt is one of its events
     * (UnscheduledPodUpdate): a label change, Labels registered Pod/UpdatePodLabel */
    ls_event_registration more[] = {reg(0, "Labels", "Pod", LS_ACT_UPDATE_POD_LABEL, 0)};
    ls_squeue_set_registrations(q, more, 1);
    uint32_t j_id = next_id++;
    const ls_pod *j = pod_with("j", 40, "", "", j_id), *j2 = pod_with("j", 40, "app: x", "", j_id);
    ls_squeue_add(q, j, 0);
    ls_qpod *qj = ls_squeue_pop(q);
    CHECK(qj && qj->pod == j);
    ls_squeue_update(q, j, j2);
    CHECK(qj->pod == j2);
    qj->rejectors[qj->n_rejectors++] = S("Labels");
    ls_squeue_add_unschedulable(q, qj);
    CHECK_INT(where(q, j2), LS_Q_BACKOFF);
    ls_squeue_free(q);
}

/* The in-flight list keeps events only while a pod that was in flight when
 * they came is still in flight: it does not grow with the events of a busy
 * cluster, and a long attempt (a pod at Permit) holds exactly its own. */
/* An event a pod's own attempt caused (a plugin wrote an object while
 * scheduling it: ls_cluster_event.origin_pod) is no news for that pod, in
 * flight or waiting; every other pod sees it as any other event. */
static void test_own_events(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {reg(0, "Fit", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, regs, 1);
    const ls_pod *waiting = pod("waiting", 0), *maker = pod("maker", 5);
    add_and_fail(q, waiting, "Fit", NULL);
    CHECK_INT(where(q, waiting), LS_Q_UNSCHEDULABLE);

    /* maker's attempt causes an event while it is in flight: waiting moves,
     * maker, rejected by a plugin the event would wake, does not */
    ls_squeue_add(q, maker, 0);
    ls_qpod *qm = ls_squeue_pop(q);
    CHECK(qm && qm->pod == maker);
    ls_cluster_event made = event("Node", LS_ACT_ADD, "NodeAdd");
    made.origin_pod = maker->id + 1;
    ls_squeue_move_all(q, &made);
    CHECK(where(q, waiting) != LS_Q_UNSCHEDULABLE);
    qm->rejectors[qm->n_rejectors++] = S("Fit");
    ls_squeue_add_unschedulable(q, qm);
    CHECK_INT(where(q, maker), LS_Q_UNSCHEDULABLE);

    /* its own event arriving later (a live cluster's watch) leaves it there;
     * anyone else's moves it */
    ls_squeue_move_all(q, &made);
    CHECK_INT(where(q, maker), LS_Q_UNSCHEDULABLE);
    ls_cluster_event other = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_squeue_move_all(q, &other);
    CHECK(where(q, maker) != LS_Q_UNSCHEDULABLE);
    ls_squeue_free(q);
}

static void test_in_flight_pruning(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {reg(0, "Fit", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, regs, 1);
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    /* no pod in flight: events are not kept */
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(ls_squeue_in_flight_events(q), 0);
    /* 100 attempts (the same pod object added again after each), 3 events
     * during each, each pod done (bound): nothing kept */
    const ls_pod *busy = pod("busy", 0);
    for (int i = 0; i < 100; i++) {
        ls_squeue_add(q, busy, 0);
        ls_qpod *qp = ls_squeue_pop(q);
        for (int k = 0; k < 3; k++)
            ls_squeue_move_all(q, &node_add);
        CHECK_INT(ls_squeue_in_flight_events(q), 3);
        ls_squeue_done(q, qp);
        CHECK_INT(ls_squeue_in_flight_events(q), 0);
    }
    /* long (in flight from the start) and short ones after it: the events since
     * long's pop stay until long is done, whatever the short ones do */
    const ls_pod *lp = pod("long", 9);
    ls_squeue_add(q, lp, 0);
    ls_qpod *ql = ls_squeue_pop(q);
    const ls_pod *short_pod = pod("short", 0);
    for (int i = 0; i < 10; i++) {
        ls_squeue_add(q, short_pod, 0);
        ls_qpod *qp = ls_squeue_pop(q);
        ls_squeue_move_all(q, &node_add);
        ls_squeue_done(q, qp);
    }
    CHECK_INT(ls_squeue_in_flight_events(q), 10);
    /* long fails, rejected by Fit: the 10 kept events say Queue -> backoffQ */
    ql->rejectors[ql->n_rejectors++] = S("Fit");
    ls_squeue_add_unschedulable(q, ql);
    CHECK_INT(where(q, lp), LS_Q_BACKOFF);
    CHECK_INT(ls_squeue_in_flight_events(q), 0);
    /* a pod deleted while in flight lets go of its events too */
    const ls_pod *gone = pod("gone", 0);
    ls_squeue_add(q, gone, 0);
    CHECK(ls_squeue_pop(q) != NULL);   /* "long" is in backoffQ; "gone" is popped first (activeQ) */
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(ls_squeue_in_flight_events(q), 1);
    ls_squeue_delete(q, gone);
    CHECK_INT(ls_squeue_in_flight_events(q), 0);
    ls_squeue_free(q);
}

/* Unschedulable pods are filed under their rejectors' plugin buckets: new
 * registrations (a reload) file them again, so an event reaches exactly the
 * pods whose rejectors now register it. */
static void test_refile_on_new_registrations(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration before[] = {reg(0, "A", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, before, 1);
    const ls_pod *a = pod("a", 0), *b = pod("b", 0);
    add_and_fail(q, a, "A", NULL);
    add_and_fail(q, b, "B", NULL);
    /* now B registers Node/Add and A registers only Node/Delete */
    ls_event_registration after[] = {reg(0, "A", "Node", LS_ACT_DELETE, 0), reg(0, "B", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, after, 2);
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(where(q, a), LS_Q_UNSCHEDULABLE);
    CHECK_INT(where(q, b), LS_Q_BACKOFF);
    ls_event_stats n = ls_squeue_event_counts(q);
    CHECK_INT(n.events, 1);
    CHECK_INT(n.registered, 1);
    CHECK_INT(n.visited, 1);   /* b only: a's bucket (A) did not register Node/Add */
    CHECK_INT(n.requeued, 1);
    ls_cluster_event node_delete = event("Node", LS_ACT_DELETE, "NodeDelete");
    ls_squeue_move_all(q, &node_delete);
    CHECK_INT(where(q, a), LS_Q_BACKOFF);
    /* an event nobody registered: counted, no pod visited */
    ls_cluster_event pv = event("PersistentVolume", LS_ACT_ADD, "PvAdd");
    ls_squeue_move_all(q, &pv);
    n = ls_squeue_event_counts(q);
    CHECK_INT(n.events, 3);
    CHECK_INT(n.registered, 2);
    CHECK_INT(n.visited, 2);
    /* the same per label, in the order the labels came */
    ls_event_label_stats by[LS_SQUEUE_EVENT_LABELS];
    CHECK_INT(ls_squeue_event_counts_by_label(q, by, LS_SQUEUE_EVENT_LABELS), 3);
    CHECK_STR(by[0].label, "NodeAdd");
    CHECK_INT(by[0].stats.events, 1);
    CHECK_INT(by[0].stats.visited, 1);
    CHECK_INT(by[0].stats.requeued, 1);
    CHECK_STR(by[1].label, "NodeDelete");
    CHECK_INT(by[1].stats.registered, 1);
    CHECK_INT(by[1].stats.requeued, 1);   /* a */
    CHECK_STR(by[2].label, "PvAdd");
    CHECK_INT(by[2].stats.events, 1);
    CHECK_INT(by[2].stats.registered, 0);
    CHECK_INT(by[2].stats.visited, 0);
    ls_squeue_free(q);
}

/* PopFromBackoffQ (v1.37, on by default): with activeQ empty, Pop takes the
 * head of the backoff heap before its backoff ends; never the error heap's.
 * The backoff heap orders by window, then as activeQ (priority, then time). */
static void test_pop_from_backoff(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {reg(0, "Fit", "Node", LS_ACT_ADD, 0)};
    ls_squeue_set_registrations(q, regs, 1);
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    /* mid fails at 0.1 s, priority 5 (backoff until 1.1 s: window 1 s); low at
     * 0.2 s, priority 0 (until 1.2 s: window 1 s); high at 0.7 s, priority 9
     * (until 1.7 s: window 1 s); late at 1.0 s, priority 99 (until 2.0 s:
     * window 2 s). All rejected by Fit and moved to backoffQ by a node added
     * at 1.05 s (all still backing off: their windows are not before 1 s). */
    const ls_pod *low = pod("low", 0), *high = pod("high", 9), *mid = pod("mid", 5), *late = pod("late", 99);
    const ls_pod *err = pod("err", 100);
    clock_ms = 100;
    add_and_fail(q, mid, "Fit", NULL);
    clock_ms = 200;
    add_and_fail(q, low, "Fit", NULL);
    clock_ms = 700;
    add_and_fail(q, high, "Fit", NULL);
    clock_ms = 1000;
    add_and_fail(q, late, "Fit", NULL);
    add_and_fail(q, err, NULL, NULL);   /* an Error: the error heap, window 2 s */
    clock_ms = 1050;
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(ls_squeue_counts(q).backoff, 5);
    CHECK_INT(ls_squeue_counts(q).active, 0);
    /* window 1 s first, by priority: high, mid, low; then window 2 s: late.
     * The Error pod (higher priority still) is never popped early. */
    CHECK_STR(popped_name(q), "high");
    CHECK_STR(popped_name(q), "mid");
    CHECK_STR(popped_name(q), "low");
    CHECK_STR(popped_name(q), "late");
    CHECK_STR(popped_name(q), "(empty)");
    CHECK_INT(where(q, err), LS_Q_BACKOFF);
    /* an active pod goes first even when backoffQ holds a higher priority */
    ls_qpod *ql = ls_squeue_find(q, late);
    ql->rejectors[ql->n_rejectors++] = S("Fit");
    ls_squeue_move_all(q, &node_add);   /* late is in flight: not moved; event recorded */
    ls_squeue_add_unschedulable(q, ql); /* replay: Queue -> backoffQ (until 2.05 s) */
    CHECK_INT(where(q, late), LS_Q_BACKOFF);
    const ls_pod *fresh = pod("fresh", 0);
    ls_squeue_add(q, fresh, 0);
    CHECK_STR(popped_name(q), "fresh");
    CHECK_STR(popped_name(q), "late");
    /* the Error pod leaves its heap at the flush after its window (2 s): 3 s */
    tick_until(q, 2000, 2000);
    CHECK_INT(where(q, err), LS_Q_BACKOFF);
    tick_until(q, 3000, 3000);
    CHECK_INT(where(q, err), LS_Q_ACTIVE);
    ls_squeue_free(q);
}

/* ---- 3.3 flushes on the test clock */

static void test_backoff_flush(void)
{
    /* queue created at t=0: backoff flush ticks at 1 s, 2 s, 3 s, ... (the
     * window boundaries) */
    ls_squeue *q = new_queue_at(0);
    const ls_pod *p = pod("p", 0);
    uint64_t at = 0;
    CHECK(!ls_squeue_next_wakeup(q, &at));   /* nothing waits on time */
    ls_squeue_add(q, p, 0);
    CHECK(!ls_squeue_next_wakeup(q, &at));   /* an active pod does not either */
    clock_ms = 1000;
    ls_squeue_flush(q);                      /* tick at 1 s: nothing to do */
    /* Error at 1.3 s on attempt 1: backoff 1 s ends at 2.3 s, truncated to its
     * window: 2 s; backing off while the current window is not after it, so
     * until 3 s */
    clock_ms = 1300;
    fail(q, p, NULL, NULL);
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    /* the first tick at which the window is after 2 s: 3 s */
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 3000);
    clock_ms = 2000;
    ls_squeue_flush(q);                      /* 2 s tick: the expiry's own window */
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 3000);
    clock_ms = 2500;
    ls_squeue_flush(q);                      /* between ticks: no flush runs */
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    clock_ms = 3000;
    ls_squeue_flush(q);                      /* 3 s tick: backoff over -> activeQ */
    CHECK_INT(where(q, p), LS_Q_ACTIVE);
    CHECK(!ls_squeue_next_wakeup(q, &at));
    ls_squeue_free(q);

    /* the ticks are aligned to the windows whatever the queue's start: created
     * at 0.4 s, it ticks at 1 s, 2 s, ...; after a late flush at 7.9 s the next
     * is 8 s. An Error at 7.9 s (backoff until 8.9 s, window 8 s) moves at 9 s. */
    q = new_queue_at(400);
    p = pod("late", 0);
    ls_squeue_add(q, p, 0);
    clock_ms = 7900;
    ls_squeue_flush(q);
    fail(q, p, NULL, NULL);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 9000);
    clock_ms = 8400;
    ls_squeue_flush(q);
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    clock_ms = 8999;
    ls_squeue_flush(q);
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    clock_ms = 9000;
    ls_squeue_flush(q);
    CHECK_INT(where(q, p), LS_Q_ACTIVE);
    ls_squeue_free(q);

    /* the backoff heaps are ordered by window: the wakeup is the tick after
     * the earliest expiry's window. x fails at 0 on its 1st attempt (ends 1 s,
     * done at 2 s), y on its 4th at 0 (8 s backoff, ends 8 s, done at 9 s);
     * both are Errors (the error heap). */
    q = new_queue_at(0);
    const ls_pod *x = pod("x", 0), *y = pod("y", 1);
    ls_squeue_add(q, y, 0);
    for (int i = 0; i < 3; i++) {
        fail(q, y, NULL, NULL);
        ls_squeue_activate(q, y);
    }
    fail(q, y, NULL, NULL);
    CHECK_INT(ls_squeue_find(q, y)->attempts, 4);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 9000);
    add_and_fail(q, x, NULL, NULL);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 2000);
    tick_until(q, 1000, 8000);
    CHECK_INT(where(q, x), LS_Q_ACTIVE);
    CHECK_INT(where(q, y), LS_Q_BACKOFF);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 9000);
    tick_until(q, 9000, 9000);
    CHECK_INT(where(q, y), LS_Q_ACTIVE);
    ls_squeue_free(q);
}

static void test_unschedulable_flush(void)
{
    /* flush every 30 s from the queue's creation (t=0) of the pods whose
     * now - Timestamp > 5 min, strictly: a pod failing at t=0 is not taken at
     * 300 s (300 - 0 = 300, not more) but at the next tick, 330 s */
    ls_squeue *q = new_queue_at(0);
    const ls_pod *p0 = pod("fails-at-0", 0), *p10 = pod("fails-at-10", 0), *p30 = pod("fails-at-30", 0);
    add_and_fail(q, p0, "NodeResourcesFit", NULL);
    uint64_t at = 0;
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 330000);
    /* failing at 10 s: due after 310 s, first tick 330 s; at 30 s: due after
     * 330 s, so not at the 330 s tick (330 - 30 = 300), at 360 s */
    clock_ms = 10000;
    add_and_fail(q, p10, "NodeResourcesFit", NULL);
    clock_ms = 30000;
    ls_squeue_flush(q);   /* the 30 s tick (also runs the 1 s flush): nothing is due */
    add_and_fail(q, p30, "NodeResourcesFit", NULL);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 330000);
    for (uint64_t t = 60000; t <= 300000; t += 30000) {
        clock_ms = t;
        ls_squeue_flush(q);
    }
    CHECK_INT(where(q, p0), LS_Q_UNSCHEDULABLE);   /* 300 s: exactly 5 min, not more */
    CHECK_INT(where(q, p10), LS_Q_UNSCHEDULABLE);
    CHECK_INT(where(q, p30), LS_Q_UNSCHEDULABLE);
    clock_ms = 329999;
    ls_squeue_flush(q);                            /* not a 30 s tick */
    CHECK_INT(where(q, p0), LS_Q_UNSCHEDULABLE);
    clock_ms = 330000;
    ls_squeue_flush(q);
    /* UnschedulableTimeout is the wildcard event: queue after backoff, and the
     * 1 s backoff ended long ago -> activeQ */
    CHECK_INT(where(q, p0), LS_Q_ACTIVE);
    CHECK_INT(where(q, p10), LS_Q_ACTIVE);
    CHECK_INT(where(q, p30), LS_Q_UNSCHEDULABLE);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 360000);
    clock_ms = 360000;
    ls_squeue_flush(q);
    CHECK_INT(where(q, p30), LS_Q_ACTIVE);
    CHECK(!ls_squeue_next_wakeup(q, &at));
    ls_squeue_free(q);

    /* both kinds waiting: the wakeup is the earlier. A rejected pod at 0 (330 s)
     * and an Error at 100 s (backoff until 101 s, its window over at 102 s) -> 102 s */
    q = new_queue_at(0);
    const ls_pod *r = pod("r", 0), *e = pod("e", 0);
    add_and_fail(q, r, "NodeResourcesFit", NULL);
    clock_ms = 100000;
    add_and_fail(q, e, NULL, NULL);
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 102000);
    ls_squeue_free(q);
}

/* ---- 3.5 MoveAllToActiveOrBackoffQueue: which registrations match */

enum { P_WILD, P_FIT, P_LABEL, P_PODDEL, P_PROFILE1, P_NOREG, N_MATCH_PODS };

static const char *const MATCH_NAMES[N_MATCH_PODS] = {"wild", "fit", "label", "poddel", "profile1", "noreg"};

/* One queue per event, every pod rejected at t=0 by its own plugin:
 *   wild     by Wild          (no events table: "*" / All)
 *   fit      by Fit           (Node / Add|UpdateNodeAllocatable in profile 0;
 *                              Pod / Delete in profile 1 - not this pod's profile)
 *   label    by Labels        (Node / UpdateNodeLabel)
 *   poddel   by PodWatcher    (Pod / Delete)
 *   profile1 by Fit, profile 1 (only Fit's profile-1 registration counts: Pod / Delete)
 *   noreg    by Silent        (no registration at all; Other registered Node / All but
 *                              did not reject it)
 * Returns a bitmask of the pods the event moved. */
static unsigned moved_by(ls_cluster_event ev, uint64_t event_at, ls_qwhere *moved_to)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {
        reg(0, "Wild", "*", LS_ACT_ALL, 0),
        reg(0, "Fit", "Node", LS_ACT_ADD | LS_ACT_UPDATE_NODE_ALLOCATABLE, 0),
        reg(0, "Labels", "Node", LS_ACT_UPDATE_NODE_LABEL, 0),
        reg(0, "PodWatcher", "Pod", LS_ACT_DELETE, 0),
        reg(1, "Fit", "Pod", LS_ACT_DELETE, 0),
        reg(0, "Other", "Node", LS_ACT_ALL, 0),
    };
    ls_squeue_set_registrations(q, regs, sizeof regs / sizeof regs[0]);
    static const char *const rejector[N_MATCH_PODS] = {"Wild", "Fit", "Labels", "PodWatcher", "Fit", "Silent"};
    const ls_pod *pods[N_MATCH_PODS];
    for (int i = 0; i < N_MATCH_PODS; i++) {
        pods[i] = pod(MATCH_NAMES[i], 0);
        ls_squeue_add(q, pods[i], i == P_PROFILE1 ? 1 : 0);
        fail(q, pods[i], rejector[i], NULL);
    }
    clock_ms = event_at;
    ls_squeue_move_all(q, &ev);
    unsigned moved = 0;
    for (int i = 0; i < N_MATCH_PODS; i++) {
        ls_qwhere w = where(q, pods[i]);
        if (w != LS_Q_UNSCHEDULABLE) {
            moved |= 1u << i;
            if (moved_to)
                *moved_to = w;
        }
    }
    ls_squeue_free(q);
    return moved;
}

#define BIT(i) (1u << (i))

static void test_move_all_matching(void)
{
    ls_qwhere to = LS_Q_NONE;
    /* Node/Add: Wild (wildcard), Fit (Node, Add bit); not Labels (no common
     * action bit), not PodWatcher (resource), not the profile-1 pod (Fit's
     * Node/Add is profile 0's), not noreg (Other's Node/All is not its rejector) */
    CHECK_INT(moved_by(event("Node", LS_ACT_ADD, "NodeAdd"), 500, NULL), BIT(P_WILD) | BIT(P_FIT));
    /* a node update whose labels and taints changed: UpdateNodeLabel & the
     * event's bits != 0 -> Labels; Fit registered Add|Allocatable: no common bit */
    CHECK_INT(moved_by(event("Node", LS_ACT_UPDATE_NODE_LABEL | LS_ACT_UPDATE_NODE_TAINT, "NodeUpdate"), 500, NULL),
              BIT(P_WILD) | BIT(P_LABEL));
    /* allocatable only: Fit (profile 0) */
    CHECK_INT(moved_by(event("Node", LS_ACT_UPDATE_NODE_ALLOCATABLE, "NodeUpdate"), 500, NULL),
              BIT(P_WILD) | BIT(P_FIT));
    /* Pod/Delete: PodWatcher, and the profile-1 pod through Fit's profile-1
     * registration; not the profile-0 Fit pod */
    CHECK_INT(moved_by(event("Pod", LS_ACT_DELETE, "AssignedPodDelete"), 500, NULL),
              BIT(P_WILD) | BIT(P_PODDEL) | BIT(P_PROFILE1));
    /* Pod/Add: only the wildcard registration */
    CHECK_INT(moved_by(event("Pod", LS_ACT_ADD, "AssignedPodAdd"), 500, NULL), BIT(P_WILD));
    /* another resource, any action: only the wildcard */
    CHECK_INT(moved_by(event("PersistentVolume", LS_ACT_ADD, "PvAdd"), 500, NULL), BIT(P_WILD));
    /* a custom resource */
    CHECK_INT(moved_by(event("noderesourcetopologies.v1alpha2.topology.node.k8s.io", LS_ACT_UPDATE, "ObjectUpdate"),
                       500, NULL),
              BIT(P_WILD));
    /* the wildcard event (UnschedulableTimeout) moves every pod with rejectors */
    CHECK_INT(moved_by(event("*", LS_ACT_ALL, "UnschedulableTimeout"), 500, NULL), BIT(N_MATCH_PODS) - 1);

    /* where the moved pod goes: queue after backoff. Failed at 0 on attempt 1:
     * backoff until 1 s, window 1 s: backing off while the current window is
     * not after it ("not before" in upstream's isPodBackingoff). At 0.5 s and
     * 1.999 s -> backoffQ; at 2 s -> activeQ */
    CHECK_INT(moved_by(event("Pod", LS_ACT_ADD, "AssignedPodAdd"), 500, &to), BIT(P_WILD));
    CHECK_INT(to, LS_Q_BACKOFF);
    CHECK_INT(moved_by(event("Pod", LS_ACT_ADD, "AssignedPodAdd"), 1999, &to), BIT(P_WILD));
    CHECK_INT(to, LS_Q_BACKOFF);
    CHECK_INT(moved_by(event("Pod", LS_ACT_ADD, "AssignedPodAdd"), 2000, &to), BIT(P_WILD));
    CHECK_INT(to, LS_Q_ACTIVE);

    /* pods in activeQ, backoffQ or in flight are not candidates */
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {reg(0, "Wild", "*", LS_ACT_ALL, 0)};
    ls_squeue_set_registrations(q, regs, 1);
    const ls_pod *act = pod("active", 0), *boff = pod("backoff", 1), *fly = pod("flying", 2);
    ls_squeue_add(q, act, 0);
    ls_squeue_add(q, boff, 0);
    ls_squeue_add(q, fly, 0);
    ls_qpod *qf = ls_squeue_pop(q);            /* flying (priority 2) */
    CHECK(qf && qf->pod == fly);
    fail(q, boff, NULL, NULL);                 /* backoff (priority 1): Error -> backoffQ */
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(where(q, act), LS_Q_ACTIVE);
    CHECK_INT(where(q, boff), LS_Q_BACKOFF);
    CHECK_INT(where(q, fly), LS_Q_IN_FLIGHT);
    CHECK_INT(hint_calls, 0);
    ls_squeue_free(q);
}

/* ---- 3.5 queueing hints */

static void test_hints(void)
{
    /* Fit registered Node/Add with hint 1 and Node/Delete with hint 2 */
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {
        reg(0, "Fit", "Node", LS_ACT_ADD, 1),
        reg(0, "Fit", "Node", LS_ACT_DELETE, 2),
        reg(0, "Gang", "Pod", LS_ACT_ADD, 3),
        reg(0, "Plain", "Node", LS_ACT_ADD, 0),   /* hint 0: always Queue, no call */
    };
    ls_squeue_set_registrations(q, regs, sizeof regs / sizeof regs[0]);
    hint_result[1] = LS_HINT_SKIP;
    hint_result[2] = LS_HINT_QUEUE;
    hint_result[3] = LS_HINT_QUEUE;
    const ls_pod *p = pod("p", 0);
    add_and_fail(q, p, "Fit", NULL);
    clock_ms = 5000;   /* backoff (1 s) over: a Queue goes straight to activeQ */

    /* QueueSkip: the pod stays; the hint saw the pod and the event */
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(where(q, p), LS_Q_UNSCHEDULABLE);
    CHECK_INT(hint_calls, 1);
    CHECK_INT(last_hint_id, 1);
    CHECK(last_hint_pod == p);
    CHECK(last_hint_event == &node_add);
    /* Queue: the pod moves */
    ls_cluster_event node_delete = event("Node", LS_ACT_DELETE, "NodeDelete");
    ls_squeue_move_all(q, &node_delete);
    CHECK_INT(hint_calls, 2);
    CHECK_INT(last_hint_id, 2);
    CHECK_INT(where(q, p), LS_Q_ACTIVE);
    ls_squeue_free(q);

    /* isPodWorthRequeuing, case by case, on pods failed at t=0 (clock at 0.5 s:
     * still backing off, so queueAfterBackoff -> backoffQ and queueImmediately
     * -> activeQ can be told apart) */
    q = new_queue_at(0);
    ls_squeue_set_registrations(q, regs, sizeof regs / sizeof regs[0]);
    hint_result[1] = LS_HINT_SKIP;
    hint_result[3] = LS_HINT_QUEUE;
    const ls_pod *unsched = pod("unsched", 0), *pending = pod("pending", 0), *both = pod("both", 0);
    const ls_pod *error = pod("error", 0);
    ls_qpod *qu = add_and_fail(q, unsched, "Gang", NULL);
    ls_qpod *qp = add_and_fail(q, pending, NULL, "Gang");
    ls_qpod *qb = add_and_fail(q, both, "Fit", "Gang");
    ls_qpod *qe = add_and_fail(q, error, NULL, NULL);
    clock_ms = 500;
    ls_cluster_event pod_add = event("Pod", LS_ACT_ADD, "AssignedPodAdd");
    /* Queue from an Unschedulable plugin -> after backoff */
    CHECK_INT(ls_squeue_worth_requeuing(q, qu, &pod_add), LS_REQUEUE_AFTER_BACKOFF);
    /* Queue from a Pending plugin -> immediately */
    CHECK_INT(ls_squeue_worth_requeuing(q, qp, &pod_add), LS_REQUEUE_IMMEDIATELY);
    /* rejected by Fit and pending on Gang: Fit's Node/Add hint says Skip, but
     * Pod/Add only concerns Gang: immediately */
    CHECK_INT(ls_squeue_worth_requeuing(q, qb, &pod_add), LS_REQUEUE_IMMEDIATELY);
    /* Node/Add for `both`: Fit says Skip (hint 1); Plain is not its rejector -> skip */
    int calls = hint_calls;
    CHECK_INT(ls_squeue_worth_requeuing(q, qb, &node_add), LS_REQUEUE_SKIP);
    CHECK_INT(hint_calls, calls + 1);
    /* Fit says Queue: after backoff, but with a Pending plugin the loop goes on
     * looking for an immediate Queue; none (Gang registered Pod/Add only) */
    hint_result[1] = LS_HINT_QUEUE;
    CHECK_INT(ls_squeue_worth_requeuing(q, qb, &node_add), LS_REQUEUE_AFTER_BACKOFF);
    /* the pending pod's hint says Skip -> skip */
    hint_result[3] = LS_HINT_SKIP;
    CHECK_INT(ls_squeue_worth_requeuing(q, qp, &pod_add), LS_REQUEUE_SKIP);
    hint_result[3] = LS_HINT_QUEUE;
    /* no rejector plugins -> after backoff, whatever the event; the wildcard
     * event -> after backoff without asking any hint */
    calls = hint_calls;
    CHECK_INT(ls_squeue_worth_requeuing(q, qe, &node_add), LS_REQUEUE_AFTER_BACKOFF);
    ls_cluster_event timeout = event("*", LS_ACT_ALL, "UnschedulableTimeout");
    CHECK_INT(ls_squeue_worth_requeuing(q, qu, &timeout), LS_REQUEUE_AFTER_BACKOFF);
    CHECK_INT(hint_calls, calls);

    /* through move_all at 0.5 s: the Pending plugin's Queue puts `pending` and
     * `both` in activeQ although they back off until 1 s (LS_REQUEUE_IMMEDIATELY);
     * `unsched` goes to backoffQ */
    ls_squeue_move_all(q, &pod_add);
    CHECK_INT(where(q, pending), LS_Q_ACTIVE);
    CHECK_INT(where(q, both), LS_Q_ACTIVE);
    CHECK_INT(where(q, unsched), LS_Q_BACKOFF);
    CHECK_INT(where(q, error), LS_Q_BACKOFF);
    ls_squeue_free(q);

    /* both plugins registered the same event, the Unschedulable one first: its
     * Queue does not end the search while there are Pending plugins, so the
     * Pending plugin's Queue that follows wins (queueImmediately); if that one
     * says Skip, the first Queue stands (queueAfterBackoff) */
    q = new_queue_at(0);
    ls_event_registration same[] = {
        reg(0, "Fit", "Node", LS_ACT_ADD, 0),
        reg(0, "Gang", "Node", LS_ACT_ADD, 4),
    };
    ls_squeue_set_registrations(q, same, 2);
    ls_qpod *qm = add_and_fail(q, pod("mixed", 0), "Fit", "Gang");
    hint_result[4] = LS_HINT_QUEUE;
    CHECK_INT(ls_squeue_worth_requeuing(q, qm, &node_add), LS_REQUEUE_IMMEDIATELY);
    hint_result[4] = LS_HINT_SKIP;
    CHECK_INT(ls_squeue_worth_requeuing(q, qm, &node_add), LS_REQUEUE_AFTER_BACKOFF);
    /* without the Pending plugin, the first Queue returns at once: Gang's hint
     * is not even asked */
    ls_qpod *qf = add_and_fail(q, pod("fit-only", 0), "Fit", NULL);
    int before = hint_calls;
    CHECK_INT(ls_squeue_worth_requeuing(q, qf, &node_add), LS_REQUEUE_AFTER_BACKOFF);
    CHECK_INT(hint_calls, before);
    ls_squeue_free(q);

    /* a hint of 0 means "always Queue" and the callback is not called */
    q = new_queue_at(0);
    ls_squeue_set_registrations(q, regs, sizeof regs / sizeof regs[0]);
    const ls_pod *plain = pod("plain", 0);
    add_and_fail(q, plain, "Plain", NULL);
    clock_ms = 2000;
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(hint_calls, 0);
    CHECK_INT(where(q, plain), LS_Q_ACTIVE);
    ls_squeue_free(q);
}

/* ---- PreEnqueue gating */

static void test_gated(void)
{
    ls_squeue *q = new_queue_at(0);
    /* SchedulingGates' events, as upstream registers them */
    ls_event_registration regs[] = {
        reg(0, "SchedulingGates", "Pod", LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, 0)};
    ls_squeue_set_registrations(q, regs, 1);
    gate_status = 42;
    uint32_t id = next_id++;
    const ls_pod *gated = pod_with("gated-a", 0, "app: x", "schedulingGates: [{name: example.com/a}]", id);
    ls_squeue_add(q, gated, 0);
    ls_qpod *qg = ls_squeue_find(q, gated);
    CHECK_INT(pre_enqueue_calls, 1);
    CHECK_INT(qg->where, LS_Q_UNSCHEDULABLE);
    CHECK(qg->gated);
    CHECK_INT(qg->gated_by, S("SchedulingGates"));
    CHECK_INT(qg->gate_status, 42);
    CHECK_INT(qg->attempts, 0);
    ls_queue_counts c = ls_squeue_counts(q);
    CHECK_INT(c.gated, 1);
    CHECK_INT(c.unschedulable, 0);
    CHECK(ls_squeue_pop(q) == NULL);

    /* MoveAll: an event the gating plugin did not register leaves the pod
     * alone (PreEnqueue not re-run); one it registered runs PreEnqueue again
     * (upstream requeues a gated pod on its gating plugin's events), which
     * gates it again while the gate is there. */
    ls_cluster_event node_add = event("Node", LS_ACT_ADD, "NodeAdd");
    ls_squeue_move_all(q, &node_add);
    CHECK_INT(qg->where, LS_Q_UNSCHEDULABLE);
    CHECK(qg->gated);
    CHECK_INT(pre_enqueue_calls, 1);
    ls_cluster_event eliminated = event("Pod", LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "UpdatePod");
    ls_squeue_move_all(q, &eliminated);
    CHECK_INT(pre_enqueue_calls, 2);
    CHECK(qg->gated);
    CHECK_INT(qg->where, LS_Q_UNSCHEDULABLE);
    ls_cluster_event timeout = event("*", LS_ACT_ALL, "UnschedulableTimeout");
    ls_squeue_move_all(q, &timeout);
    CHECK(qg->gated);

    /* the 5-minute flush leaves a pod that is still gated where it is */
    for (uint64_t t = 30000; t <= 360000; t += 30000) {
        clock_ms = t;
        ls_squeue_flush(q);
    }
    CHECK(qg->gated);
    CHECK_INT(qg->where, LS_Q_UNSCHEDULABLE);

    /* an update that keeps the gates (a label change): still gated */
    const ls_pod *relabelled = pod_with("gated-a", 0, "app: y", "schedulingGates: [{name: example.com/a}]", id);
    ls_squeue_update(q, gated, relabelled);
    CHECK(qg->gated);
    CHECK_INT(ls_squeue_counts(q).gated, 1);
    CHECK(ls_squeue_pop(q) == NULL);

    /* an update removing the gates: PreEnqueue passes -> activeQ */
    const ls_pod *released = pod_with("gated-a", 0, "app: y", "", id);
    ls_squeue_update(q, relabelled, released);
    CHECK(!qg->gated);
    CHECK_INT(qg->where, LS_Q_ACTIVE);
    CHECK(qg->pod == released);
    c = ls_squeue_counts(q);
    CHECK_INT(c.gated, 0);
    CHECK_INT(c.active, 1);
    ls_qpod *popped = ls_squeue_pop(q);
    CHECK(popped == qg);
    CHECK_INT(popped->attempts, 1);   /* the gated time counts no attempt */
    ls_squeue_free(q);

    /* a gated pod never backs off, and Activate cannot bypass PreEnqueue */
    q = new_queue_at(0);
    const ls_pod *g2 = pod_with("gated-b", 0, "", "schedulingGates: [{name: a}, {name: b}]", 0);
    ls_squeue_add(q, g2, 0);
    CHECK(!ls_squeue_activate(q, g2));
    CHECK(ls_squeue_find(q, g2)->gated);
    CHECK_INT(ls_squeue_counts(q).active, 0);
    ls_squeue_free(q);
}

/* ---- Activate (ForceActivate) */

/* PreEnqueue that could not run (the runtime failed: no Lua state, the call
 * cut off) is no plugin's verdict: the pod is not gated under nothing, it
 * backs off as after an error and PreEnqueue runs again when the backoff
 * ends, each failure doubling the wait (1 s, 2 s, ...). */
static void test_pre_enqueue_runtime_error(void)
{
    ls_squeue *q = new_queue_at(0);
    runtime_broken = true;
    clock_ms = 300;
    const ls_pod *p = pod("broken-a", 0);
    ls_squeue_add(q, p, 0);
    ls_qpod *qp = ls_squeue_find(q, p);
    CHECK_INT(pre_enqueue_calls, 1);
    CHECK(!qp->gated);
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    CHECK(qp->error_backoff);
    CHECK_INT(qp->pre_enqueue_errors, 1);
    CHECK_INT(qp->attempts, 0);
    CHECK_INT(ls_squeue_counts(q).gated, 0);
    /* 0.3 s + 1 s = 1.3 s, window 1 s: over once the window is after it (2 s) */
    uint64_t at = 0;
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 2000);
    /* like a pod that failed with an error: settled until the cluster changes */
    CHECK(ls_squeue_settled(q, 300));
    CHECK(!ls_squeue_settled(q, 301));
    clock_ms = 2000;
    ls_squeue_flush(q);
    CHECK_INT(pre_enqueue_calls, 2);            /* tried again: still failing */
    CHECK_INT(where(q, p), LS_Q_BACKOFF);
    CHECK_INT(qp->pre_enqueue_errors, 2);
    /* 2 s + 2 s = 4 s: over at the 5 s tick */
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 5000);
    runtime_broken = false;
    clock_ms = 4000;
    ls_squeue_flush(q);
    CHECK_INT(pre_enqueue_calls, 2);
    clock_ms = 5000;
    ls_squeue_flush(q);
    CHECK_INT(pre_enqueue_calls, 3);
    CHECK_INT(where(q, p), LS_Q_ACTIVE);
    CHECK_INT(qp->pre_enqueue_errors, 0);
    CHECK(ls_squeue_pop(q) == qp);
    CHECK_INT(qp->attempts, 1);
    ls_squeue_done(q, qp);
    ls_squeue_free(q);
}

static void test_activate(void)
{
    ls_squeue *q = new_queue_at(0);
    const ls_pod *u = pod("unsched", 0), *b = pod("backoff", 0), *a = pod("active", 0), *f = pod("flying", 5);
    const ls_pod *stranger = pod("stranger", 0);
    add_and_fail(q, u, "NodeResourcesFit", NULL);
    add_and_fail(q, b, NULL, NULL);
    ls_squeue_add(q, f, 0);
    ls_squeue_pop(q);                 /* flying is in flight */
    ls_squeue_add(q, a, 0);
    /* unschedulable -> activeQ at once; backoffQ -> activeQ before the backoff ends */
    CHECK(ls_squeue_activate(q, u));
    CHECK_INT(where(q, u), LS_Q_ACTIVE);
    CHECK(ls_squeue_activate(q, b));
    CHECK_INT(where(q, b), LS_Q_ACTIVE);
    uint64_t at;
    CHECK(!ls_squeue_next_wakeup(q, &at));   /* nothing left in backoffQ */
    /* already active, in flight, unknown: nothing to do */
    CHECK(!ls_squeue_activate(q, a));
    CHECK(!ls_squeue_activate(q, f));
    CHECK(!ls_squeue_activate(q, stranger));
    CHECK_INT(where(q, f), LS_Q_IN_FLIGHT);
    ls_queue_counts c = ls_squeue_counts(q);
    CHECK_INT(c.active, 3);
    CHECK_INT(c.in_flight, 1);
    ls_squeue_free(q);
}

/* ---- updates and deletes of queued pods */

static void test_update_delete(void)
{
    ls_squeue *q = new_queue_at(0);
    ls_event_registration regs[] = {
        reg(0, "Labels", "Pod", LS_ACT_UPDATE_POD_LABEL, 1),
        reg(0, "Fit", "Pod", LS_ACT_UPDATE_POD_SCALE_DOWN, 0),
    };
    ls_squeue_set_registrations(q, regs, 2);

    /* an active pod's update re-sorts it: low (prio 0) raised to 100 pops first */
    uint32_t low_id = next_id++;
    const ls_pod *low = pod_with("low", 0, "", "", low_id), *high = pod("high", 50);
    ls_squeue_add(q, low, 0);
    ls_squeue_add(q, high, 0);
    const ls_pod *low2 = pod_with("low", 100, "", "", low_id);
    ls_squeue_update(q, low, low2);
    CHECK_INT(where(q, low2), LS_Q_ACTIVE);
    ls_qpod *first = ls_squeue_pop(q);
    CHECK(first && first->pod == low2);
    CHECK_INT(first->sort_key, 100);
    ls_squeue_done(q, first);
    ls_squeue_done(q, ls_squeue_pop(q));
    CHECK_INT(ls_squeue_size(q), 0);

    /* a pod in backoffQ stays there with the same expiry (Timestamp kept) */
    uint32_t boff_id = next_id++;
    const ls_pod *boff = pod_with("boff", 0, "", "", boff_id);
    clock_ms = 100;
    ls_qpod *qb = add_and_fail(q, boff, NULL, NULL);   /* backoff until 1.1 s */
    clock_ms = 600;
    const ls_pod *boff2 = pod_with("boff", 0, "v: '2'", "", boff_id);
    ls_squeue_update(q, boff, boff2);
    CHECK_INT(qb->where, LS_Q_BACKOFF);
    CHECK_INT(qb->timestamp_ms, 100);
    CHECK(qb->pod == boff2);
    uint64_t at;
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 2000);   /* first tick (1 s, 2 s, ...) at or after 1.1 s */

    /* an unschedulable pod: its update is an UnscheduledPodUpdate event with
     * PodSchedulingPropertiesChange's actions, for that pod only */
    uint32_t u_id = next_id++;
    const ls_pod *u = pod_with("u", 0, "app: a", "", u_id);
    clock_ms = 1000;
    ls_qpod *qu = add_and_fail(q, u, "Labels", NULL);   /* backoff until 2 s */
    /* the same pod again (a status-only update, e.g. our PodScheduled=False
     * patch): not an event, only the object is taken */
    hint_result[1] = LS_HINT_QUEUE;
    const ls_pod *u1 = pod_with("u", 0, "app: a", "", u_id);
    ls_squeue_update(q, u, u1);
    CHECK_INT(hint_calls, 0);
    CHECK_INT(qu->where, LS_Q_UNSCHEDULABLE);
    CHECK(qu->pod == u1);
    /* a change no fine-grained action names (priority here): UpdatePodOther,
     * which a registration for UpdatePodLabel does not match: no hint asked */
    const ls_pod *u2 = pod_with("u", 7, "app: a", "", u_id);
    ls_squeue_update(q, u1, u2);
    CHECK_INT(hint_calls, 0);
    CHECK_INT(qu->where, LS_Q_UNSCHEDULABLE);
    CHECK(qu->pod == u2);
    /* a label change, hint Queue, at 1.5 s: the event is the pod's own
     * (TargetPod); after backoff -> backoffQ */
    clock_ms = 1500;
    const ls_pod *u3 = pod_with("u", 7, "app: b", "", u_id);
    ls_squeue_update(q, u2, u3);
    CHECK_INT(hint_calls, 1);
    CHECK(have_last_event);
    CHECK_INT(last_event.actions, LS_ACT_UPDATE_POD_LABEL);
    CHECK_STR(last_event.label, "UnscheduledPodUpdate");
    CHECK(last_event.resource == S("TargetPod"));
    CHECK_INT(last_event.object_type, LS_OBJ_POD);
    CHECK(last_event.old_obj == u2 && last_event.new_obj == u3);
    CHECK_INT(qu->where, LS_Q_BACKOFF);

    /* a scale-down is Fit's event (no hint): a pod rejected by Fit moves */
    uint32_t s_id = next_id++;
    const ls_pod *s = pod_with("s", 0, "", "", s_id);
    clock_ms = 10000;
    ls_qpod *qs = add_and_fail(q, s, "Fit", NULL);
    clock_ms = 12000;
    char smaller[256];
    snprintf(smaller, sizeof smaller, "metadata: {name: s, namespace: default, uid: uid-s}\n"
                                      "spec: {containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]}\n");
    const ls_pod *s2 = parse_pod(smaller);
    mutable_pod(s2)->id = s_id;
    ls_squeue_update(q, s, s2);
    CHECK_INT(qs->where, LS_Q_ACTIVE);   /* backoff ended at 11 s */
    /* a label change for Fit's pod: no match, it stays */
    /* (t has priority 1 so that it, not s, is the head of activeQ) */
    uint32_t t_id = next_id++;
    const ls_pod *t = pod_with("t", 1, "", "", t_id);
    ls_qpod *qt = add_and_fail(q, t, "Fit", NULL);
    hint_calls = 0;
    ls_squeue_update(q, t, pod_with("t", 1, "k: v", "", t_id));
    CHECK_INT(qt->where, LS_Q_UNSCHEDULABLE);
    CHECK_INT(hint_calls, 0);

    /* updating a pod the queue does not hold does nothing */
    const ls_pod *ghost = pod("ghost", 0);
    uint32_t size = ls_squeue_size(q);
    ls_squeue_update(q, ghost, ghost);
    CHECK_INT(ls_squeue_size(q), size);

    /* deletes: from activeQ (s), backoffQ (boff, u), unschedulable (t) */
    ls_queue_counts c = ls_squeue_counts(q);
    CHECK_INT(c.active, 1);
    CHECK_INT(c.backoff, 2);
    CHECK_INT(c.unschedulable, 1);
    ls_squeue_delete(q, s2);
    CHECK(ls_squeue_find(q, s2) == NULL);
    CHECK_INT(ls_squeue_counts(q).active, 0);
    ls_squeue_delete(q, boff2);
    ls_squeue_delete(q, u3);
    /* only t left, rejected at 12 s: due after 312 s, the 30 s tick after that is 330 s */
    CHECK(ls_squeue_next_wakeup(q, &at));
    CHECK_INT(at, 330000);
    ls_squeue_delete(q, t);
    CHECK(!ls_squeue_next_wakeup(q, &at));
    ls_squeue_delete(q, ghost);   /* unknown: nothing */
    CHECK_INT(ls_squeue_size(q), 0);
    c = ls_squeue_counts(q);
    CHECK_INT(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0);
    ls_squeue_free(q);
}

/* ---- rekey (a reload brought another queue-sort plugin) */

static void test_rekey(void)
{
    ls_squeue *q = new_queue_at(0);
    const ls_pod *one = pod("one", 1), *two = pod("two", 2), *three = pod("three", 3), *bo = pod("bo", 9);
    ls_squeue_add(q, bo, 0);
    fail(q, bo, NULL, NULL);   /* in backoffQ until 1 s */
    ls_squeue_add(q, one, 0);
    ls_squeue_add(q, two, 0);
    ls_squeue_add(q, three, 0);
    /* the new sort key is -priority: lowest priority first from now on */
    sort_inverted = true;
    ls_squeue_rekey(q);
    CHECK_INT(ls_squeue_find(q, bo)->sort_key, -9);
    CHECK_INT(where(q, bo), LS_Q_BACKOFF);   /* still ordered by backoff expiry */
    CHECK_STR(popped_name(q), "one");
    CHECK_STR(popped_name(q), "two");
    CHECK_STR(popped_name(q), "three");
    CHECK_STR(popped_name(q), "(empty)");
    sort_inverted = false;
    ls_squeue_free(q);
}

/* ---- gauges and settled */

static void test_counts_and_settled(void)
{
    ls_squeue *q = new_queue_at(0);
    CHECK(ls_squeue_settled(q, 0));   /* nothing held */
    const ls_pod *a = pod("a", 9), *b = pod("b", 8), *c = pod("c", 7), *d = pod("d", 6);
    const ls_pod *g = pod_with("gated-x", 0, "", "schedulingGates: [{name: x}]", 0);
    ls_squeue_add(q, a, 0);
    ls_squeue_add(q, b, 0);
    ls_squeue_add(q, c, 0);
    ls_squeue_add(q, d, 0);
    ls_squeue_add(q, g, 0);
    ls_queue_counts n = ls_squeue_counts(q);
    CHECK_INT(n.active, 4);
    CHECK_INT(n.gated, 1);
    CHECK(!ls_squeue_settled(q, 0));   /* active pods */
    clock_ms = 2000;
    fail(q, a, "NodeResourcesFit", NULL);   /* unschedulable, failed at 2 s */
    fail(q, b, NULL, NULL);                 /* backoff, failed at 2 s */
    ls_qpod *qc = ls_squeue_pop(q);         /* in flight */
    CHECK(qc && qc->pod == c);
    n = ls_squeue_counts(q);
    CHECK_INT(n.active, 1);
    CHECK_INT(n.backoff, 1);
    CHECK_INT(n.unschedulable, 1);
    CHECK_INT(n.gated, 1);
    CHECK_INT(n.in_flight, 1);
    CHECK_INT(ls_squeue_size(q), 5);
    CHECK(!ls_squeue_settled(q, 0));   /* d still active */
    fail(q, d, "NodeResourcesFit", NULL);
    /* every held pod failed at 2 s, is gated or in flight: settled for a
     * cluster last changed at or before 2 s, not for a change after */
    CHECK(ls_squeue_settled(q, 0));
    CHECK(ls_squeue_settled(q, 2000));
    CHECK(!ls_squeue_settled(q, 2001));
    /* the size and iteration see every held pod once */
    int seen = 0;
    for (uint32_t i = 0; i < ls_squeue_size(q); i++)
        seen += ls_squeue_at(q, i) != NULL;
    CHECK_INT(seen, 5);
    CHECK(ls_squeue_at(q, 5) == NULL);
    ls_squeue_free(q);
}

int main(void)
{
    test_active_order();
    test_pop();
    test_backoff_durations();
    test_add_unschedulable();
    test_in_flight_events();
    test_own_events();
    test_pop_from_backoff();
    test_in_flight_pruning();
    test_refile_on_new_registrations();
    test_backoff_flush();
    test_unschedulable_flush();
    test_move_all_matching();
    test_hints();
    test_gated();
    test_pre_enqueue_runtime_error();
    test_activate();
    test_update_delete();
    test_rekey();
    test_counts_and_settled();
    for (int i = 0; i < n_parsed; i++)
        ls_pod_release(parsed[i]);
    TEST_MAIN_END();
}
