/*
 * batch.c: OpportunisticBatching (KEP-5598; beta, on by default in upstream
 * v1.37), as upstream's pkg/scheduler/framework/runtime/batch.go of v1.37
 * (with the re-scoring of #140289).
 *
 * One state per profile: the signature of the pod that filled it, the other
 * feasible nodes of that pod's cycle with their total scores (ties: a random
 * key, higher first, as upstream's heap), when it was filled; and the last
 * cycle (its number in the queue's count, the chosen node, success). The
 * list is kept unsorted: a pop scans for the best (upstream's heap order).
 *
 * GetNodeHint, after PreFilter passed: the pod is signed (every PreFilter,
 * Filter, PreScore and Score plugin's `sign`, luasched.sign); no hint unless
 * the state is not empty, the cycle number is the last one + 1 (else flush
 * "pod_skipped"), the last cycle succeeded ("pod_failed"), the pod has no
 * nominated node ("pod_nominated"), the signature is the state's
 * ("pod_incompatible") and the state is under 500 ms old ("expired"). Then
 * the last chosen node must be in the snapshot ("node_missing"); its Filter
 * is run for this pod: if it is not rejected (it still fits, or an Error),
 * v1.37 re-scores it: PreScore and Score, normalized together with the
 * cached nodes, the list's totals replaced (the re-scored node's random
 * key is 0: it comes after the cached nodes it ties with). The head of the
 * list is popped: the hint, which the cycle filters alone (as a nominated
 * node) and which, if it passes, is the host without scoring.
 *
 * StoreScheduleResults, once the host is chosen (before Reserve): the last
 * cycle is recorded as succeeded; if the hint was the host, the state stays
 * (hint_used); otherwise (hint_not_used when a hint was given) a signed pod
 * with other feasible nodes fills the state, else it is dropped ("empty_list"
 * with one feasible node, "pod_not_batchable" without a signature).
 *
 * Version: the batch.go read is the one with #140289's re-scoring and the
 * "pod_nominated" flush; that it is the v1.37 tag's exact text is not
 * verified (a later one adds store-result metrics and a configurable age).
 * Time is the scheduler's clock: wall-clock in `luasched run`, the virtual
 * clock in a simulation (pods scheduled at one instant never expire a batch,
 * where upstream's real scheduling takes time).
 *
 * Deviations (said): a cached node gone from the snapshot is left out of the
 * re-scored list (upstream keeps its cached scores and may hint it; its
 * filter then fails); PreScore and Score failures of the re-scoring are told
 * apart, a NormalizeScore failure counts as "rescore_error" (upstream:
 * "normalize_error"); the Filter run on the last chosen node counts
 * the nominated pods (upstream's RunFilterPlugins does not); the duration histograms
 * (scheduler_get_node_hint_duration_seconds and the like) are not kept.
 */
#include "scheduler/batch.h"
#include "luasched/feature_gates.h"
#include "scheduler/attempt.h"
#include "luasched/log.h"

#include <stdlib.h>
#include <string.h>

typedef struct batch_node {
    ls_str name;
    int64_t total;
    uint64_t key;       /* upstream's Randomizer: the tie-break, higher first */
} batch_node;

typedef struct batch_state {
    char *signature;    /* NULL: no state */
    size_t sig_len;
    batch_node *nodes;  /* the list from `head` on, in no order (pop_best) */
    int64_t *raw;       /* raw[i * n_plugins + p]: node i's raw score of Score plugin p */
    uint32_t n_plugins;
    uint32_t head, len, cap;
    uint64_t created_ms;
    uint64_t last_cycle;
    ls_str last_chosen;
    bool last_succeeded;
    bool never_signable;   /* no pod of the profile is signable: not asked again */
} batch_state;

struct ls_batches {
    batch_state *profiles;
    uint32_t n;
    char *pending_sig;  /* the running pod's signature, kept for the store */
    size_t pending_len;
};

/* What one profile's state owns: its signature, node list and raw scores. */
static void release_state(batch_state *st)
{
    free(st->signature);
    free(st->nodes);
    free(st->raw);
}

void ls_batches_free(ls_batches *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        release_state(&b->profiles[i]);
    free(b->profiles);
    free(b->pending_sig);
    free(b);
}

static batch_state *state_of(ls_sched_env *e, uint32_t profile)
{
    if (!e->batches)
        e->batches = ls_xcalloc(1, sizeof *e->batches);
    ls_batches *b = e->batches;
    if (profile >= b->n) {
        b->profiles = ls_xrealloc(b->profiles, (profile + 1) * sizeof *b->profiles);
        memset(b->profiles + b->n, 0, (profile + 1 - b->n) * sizeof *b->profiles);
        b->n = profile + 1;
    }
    return &b->profiles[profile];
}

static const char *profile_name(const ls_sched_env *e, uint32_t profile)
{
    return ls_str_get(e->cfg->profiles[profile].scheduler_name);
}

static void flushed(ls_sched_env *e, uint32_t profile, const char *reason)
{
    ls_sched_metrics_batch(e->metrics, LS_BATCH_METRIC_FLUSH, profile_name(e, profile), reason);
}

static void drop_state(batch_state *st)
{
    free(st->signature);
    st->signature = NULL;
    st->head = st->len = 0;
}

static bool state_empty(const batch_state *st)
{
    return !st->signature || st->head >= st->len;
}

/* x before y: the higher total; ties: the higher random key. */
static bool better(const batch_node *x, const batch_node *y)
{
    return x->total > y->total || (x->total == y->total && x->key > y->key);
}

/* The best node of the list (upstream's heap Pop): found by one scan and
 * taken from the front; the rest need no order until the next pop. */
static void move_node(batch_state *st, uint32_t to, uint32_t from)
{
    st->nodes[to] = st->nodes[from];
    memmove(st->raw + (size_t)to * st->n_plugins, st->raw + (size_t)from * st->n_plugins,
            st->n_plugins * sizeof *st->raw);
}

static ls_str pop_best(batch_state *st)
{
    uint32_t best = st->head;
    for (uint32_t i = st->head + 1; i < st->len; i++)
        if (better(&st->nodes[i], &st->nodes[best]))
            best = i;
    ls_str name = st->nodes[best].name;
    move_node(st, best, st->head++);   /* the head's entry fills the hole */
    return name;
}

static void reserve_nodes(batch_state *st, uint32_t n, uint32_t n_plugins)
{
    if (n > st->cap || n_plugins != st->n_plugins) {
        st->cap = n > st->cap ? n : st->cap;
        st->n_plugins = n_plugins;
        st->nodes = ls_xrealloc(st->nodes, st->cap * sizeof *st->nodes);
        st->raw = ls_xrealloc(st->raw, (size_t)st->cap * (n_plugins ? n_plugins : 1) * sizeof *st->raw);
    }
}

static uint64_t random_key(ls_attempt_state *a)
{
    /* rand.Int() is non-negative: 0 stays below every cached key */
    return (ls_cycle_random(&a->cycle) >> 1) | 1;
}

/* batchStateCompatible. */
static bool compatible(ls_sched_env *e, ls_qpod *qp, batch_state *st, const char *sig, size_t sig_len)
{
    if (state_empty(st))
        return false;
    const char *reason = NULL;
    if (qp->scheduling_cycle != st->last_cycle + 1)
        reason = LS_BATCH_FLUSH_POD_SKIPPED;
    else if (!st->last_succeeded)
        reason = LS_BATCH_FLUSH_POD_FAILED;
    else if (ls_nominator_node_of(e->nominator, qp->pod) || qp->pod->nominated_node_name)
        reason = LS_BATCH_FLUSH_POD_NOMINATED;
    else if (!sig || sig_len != st->sig_len || memcmp(sig, st->signature, sig_len) != 0)
        reason = LS_BATCH_FLUSH_POD_INCOMPATIBLE;
    else if (e->clock_ms > st->created_ms + LS_BATCH_MAX_AGE_MS)
        reason = LS_BATCH_FLUSH_EXPIRED;
    if (reason)
        flushed(e, qp->profile, reason);
    return reason == NULL;
}

/* The Filter run on the last chosen node leaves no trace in the cycle's
 * diagnosis: its status slot and the status are put back. */
static int filter_quietly(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, const ls_node_info *ni)
{
    ls_cycle *c = &a->cycle;
    uint32_t status = c->status;
    uint8_t status_code = c->status_code;
    int code = ls_lua_filter_one(e->lua, qp->profile, ni);
    c->node_status[ni->index] = (ls_node_status){.status = 0, .plugin = -1, .code = 0};
    if (c->trace && c->filter_trace && c->num_filter_plugins)
        memset(c->filter_trace + (size_t)ni->index * c->num_filter_plugins, 0,
               c->num_filter_plugins * sizeof *c->filter_trace);
    c->status = status;
    c->status_code = status_code;
    return code;
}

/* rescoreHintedNode: PreScore and Score for the last chosen node alone, then
 * NormalizeScore over it and the cached nodes (their raw scores as stored),
 * the totals and raw scores replaced; the node joins the list with random
 * key 0. */
static bool rescore(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, batch_state *st, const ls_node_info *last)
{
    ls_cycle *c = &a->cycle;
    ls_sched_metrics_batch(e->metrics, LS_BATCH_METRIC_RESCORE, profile_name(e, qp->profile), NULL);
    uint32_t np = st->n_plugins;
    if (np != c->num_score_plugins) {   /* a profile whose plugins changed (not after a reload) */
        flushed(e, qp->profile, LS_BATCH_FLUSH_RESCORE_ERROR);
        return false;
    }
    uint32_t n = 0;
    for (uint32_t i = st->head; i < st->len; i++) {
        const ls_node_info *ni = ls_snapshot_find(e->snapshot, st->nodes[i].name);
        if (ni && ni != last) {
            move_node(st, n, i);
            c->feasible[n++] = ni;
        }
    }
    reserve_nodes(st, n + 1, np);
    c->feasible[n] = last;
    st->nodes[n] = (batch_node){.name = last->node->name, .key = 0};
    c->num_feasible = ++n;
    for (uint32_t p = 0; p < np; p++)
        for (uint32_t i = 0; i + 1 < n; i++)
            c->scores[p * n + i] = st->raw[(size_t)i * np + p];
    st->head = 0;
    st->len = n;
    c->keep_raw_scores = 1;
    int code = ls_lua_rescore_last(e->lua, qp->profile);
    bool ok = code == LS_SUCCESS && ls_attempt_total_scores(e, a, qp);
    c->num_feasible = 0;
    if (!ok) {
        flushed(e, qp->profile, code == LS_PENDING ? LS_BATCH_FLUSH_PRESCORE_ERROR : LS_BATCH_FLUSH_RESCORE_ERROR);
        c->status = 0;
        c->status_code = LS_SUCCESS;
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        st->nodes[i].total = a->totals[i];
        for (uint32_t p = 0; p < np; p++)
            st->raw[(size_t)i * np + p] = c->raw_scores[p * n + i];
    }
    return true;
}

/* refreshHintCandidates. */
static bool refresh(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, batch_state *st)
{
    const ls_node_info *last = st->last_chosen ? ls_snapshot_find(e->snapshot, st->last_chosen) : NULL;
    if (!last) {
        flushed(e, qp->profile, LS_BATCH_FLUSH_NODE_MISSING);
        return false;
    }
    int code = filter_quietly(e, a, qp, last);
    if (code != LS_UNSCHEDULABLE && code != LS_UNRESOLVABLE)
        return rescore(e, a, qp, st, last);
    return true;
}

static void forget_signature(ls_sched_env *e)
{
    if (e->batches) {
        free(e->batches->pending_sig);
        e->batches->pending_sig = NULL;
    }
}

bool ls_batch_enter(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str *hint_out)
{
    *hint_out = 0;
    if (!ls_feature_enabled(LS_FG_OpportunisticBatching))   /* --feature-gates: no batching at all */
        return true;
    batch_state *st = state_of(e, qp->profile);
    ls_batches *b = e->batches;
    free(b->pending_sig);
    b->pending_sig = NULL;
    if (!st->never_signable) {
        a->cycle.status = 0;
        a->cycle.status_code = LS_SUCCESS;
        b->pending_sig = ls_lua_sign(e->lua, qp->profile, &b->pending_len, &st->never_signable);
        /* a sign hook cut off rebuilt the state mid-cycle: the cycle ends as
         * that plugin's Error (cycle->status), not as the next plugin's */
        if (!b->pending_sig && a->cycle.status_code == LS_ERROR) {
            forget_signature(e);
            return false;
        }
    }
    /* a signed pod's raw scores are kept for the state it may fill */
    a->cycle.keep_raw_scores = b->pending_sig != NULL;
    ls_str hint = 0;
    if (compatible(e, qp, st, b->pending_sig, b->pending_len) && refresh(e, a, qp, st) && !state_empty(st))
        hint = pop_best(st);
    if (!hint)
        ls_sched_metrics_batch(e->metrics, LS_BATCH_METRIC_ATTEMPT, profile_name(e, qp->profile), "no_hint");
    *hint_out = hint;
    return true;
}

/* The feasible nodes but the host, with their totals and raw scores: the
 * state for the next pod. */
static void fill_state(ls_sched_env *e, ls_attempt_state *a, batch_state *st, ls_str chosen)
{
    const ls_cycle *c = &a->cycle;
    uint32_t nf = c->num_feasible, np = c->num_score_plugins;
    reserve_nodes(st, nf, np);
    uint32_t n = 0;
    for (uint32_t i = 0; i < nf; i++) {
        if (c->feasible[i]->node->name == chosen)
            continue;
        st->nodes[n] = (batch_node){.name = c->feasible[i]->node->name, .total = a->totals[i], .key = random_key(a)};
        for (uint32_t p = 0; p < np; p++)
            st->raw[(size_t)n * np + p] = c->raw_scores[p * nf + i];
        n++;
    }
    st->head = 0;
    st->len = n;
    st->created_ms = e->clock_ms;
}

void ls_batch_exit(ls_sched_env *e, ls_attempt_state *a, ls_qpod *qp, ls_str hint, ls_str chosen)
{
    if (!chosen) {
        forget_signature(e);
        return;
    }
    if (!ls_feature_enabled(LS_FG_OpportunisticBatching))
        return;
    batch_state *st = state_of(e, qp->profile);
    ls_batches *b = e->batches;
    const char *profile = profile_name(e, qp->profile);
    st->last_cycle = qp->scheduling_cycle;
    st->last_chosen = chosen;
    st->last_succeeded = true;
    if (hint && hint == chosen) {
        ls_sched_metrics_batch(e->metrics, LS_BATCH_METRIC_ATTEMPT, profile, "hint_used");
        forget_signature(e);
        return;
    }
    if (hint)
        ls_sched_metrics_batch(e->metrics, LS_BATCH_METRIC_ATTEMPT, profile, "hint_not_used");
    if (b->pending_sig && a->cycle.num_feasible > 1) {
        free(st->signature);
        st->signature = b->pending_sig;
        st->sig_len = b->pending_len;
        b->pending_sig = NULL;
        fill_state(e, a, st, chosen);
        return;
    }
    flushed(e, qp->profile, a->cycle.num_feasible > 1 ? LS_BATCH_FLUSH_POD_NOT_BATCHABLE : LS_BATCH_FLUSH_EMPTY_LIST);
    drop_state(st);
    forget_signature(e);
}
