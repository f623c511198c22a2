/*
 * unschedulable_pods.c: see unschedulable_pods.h. Every membership is a slot
 * index kept in the pod, so adding and removing a pod cost the number of
 * buckets it is filed under, whatever the number of pods.
 */
#include "queue/unschedulable_pods.h"

#include <stdlib.h>

void ls_unsched_init(ls_unsched_set *u)
{
    ls_vec_init(&u->pods, sizeof(ls_qpod *));
    ls_vec_init(&u->buckets, sizeof(ls_plugin_bucket));
    u->oldest_known = false;
    u->pass = 0;
    u->n_gated = 0;
}

static void free_buckets(ls_unsched_set *u)
{
    for (uint32_t i = 0; i < u->buckets.len; i++) {
        ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, i);
        ls_vec_free(&b->interests);
        ls_vec_free(&b->pods);
    }
    u->buckets.len = 0;
}

void ls_unsched_free(ls_unsched_set *u)
{
    free_buckets(u);
    ls_vec_free(&u->buckets);
    ls_vec_free(&u->pods);
}

static int32_t bucket_index(const ls_unsched_set *u, uint32_t profile, ls_str plugin)
{
    for (uint32_t i = 0; i < u->buckets.len; i++) {
        const ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, i);
        if (b->profile == profile && b->plugin == plugin)
            return (int32_t)i;
    }
    return -1;
}

/* ---- filing one pod */

static void file_in(ls_unsched_set *u, ls_qpod *qp, ls_str plugin, uint32_t cap)
{
    int32_t bi = bucket_index(u, qp->profile, plugin);
    if (bi < 0 || qp->n_buckets >= cap)
        return;
    for (uint32_t k = 0; k < qp->n_buckets; k++)
        if (qp->buckets[k].bucket == (uint32_t)bi)
            return;   /* both a rejector and pending */
    ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, bi);
    qp->buckets[qp->n_buckets++] = (ls_bucket_slot){(uint32_t)bi, b->pods.len};
    *(ls_qpod **)ls_vec_push(&b->pods) = qp;
}

static void file_pod(ls_unsched_set *u, ls_qpod *qp)
{
    qp->n_buckets = 0;
    uint32_t cap = qp->n_rejectors + qp->n_pending;
    if (!cap || !u->buckets.len)
        return;   /* a gated pod is filed under the PreEnqueue plugin that gated it */
    qp->buckets = ls_xmalloc(cap * sizeof *qp->buckets);
    for (uint32_t i = 0; i < qp->n_rejectors; i++)
        file_in(u, qp, qp->rejectors[i], cap);
    for (uint32_t i = 0; i < qp->n_pending; i++)
        file_in(u, qp, qp->pending[i], cap);
}

/* Takes the pod at `pos` out of bucket bi: the bucket's last pod takes its slot. */
static void unfile_from(ls_unsched_set *u, uint32_t bi, uint32_t pos)
{
    ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, bi);
    ls_qpod *last = LS_VEC_AT(&b->pods, ls_qpod *, b->pods.len - 1);
    LS_VEC_AT(&b->pods, ls_qpod *, pos) = last;
    b->pods.len--;
    for (uint32_t k = 0; k < last->n_buckets; k++)
        if (last->buckets[k].bucket == bi)
            last->buckets[k].pos = pos;
}

static void unfile_pod(ls_unsched_set *u, ls_qpod *qp)
{
    for (uint32_t k = 0; k < qp->n_buckets; k++)
        unfile_from(u, qp->buckets[k].bucket, qp->buckets[k].pos);
    qp->n_buckets = 0;
    free(qp->buckets);
    qp->buckets = NULL;
}

/* ---- buckets */

void ls_unsched_set_registrations(ls_unsched_set *u, const ls_event_registration *regs, uint32_t n)
{
    free_buckets(u);   /* the members' slots are rebuilt by the refile below */
    for (uint32_t i = 0; i < n; i++) {
        int32_t bi = bucket_index(u, regs[i].profile, regs[i].plugin);
        if (bi < 0) {
            ls_plugin_bucket *b = ls_vec_push(&u->buckets);
            b->profile = regs[i].profile;
            b->plugin = regs[i].plugin;
            ls_vec_init(&b->interests, sizeof(ls_event_registration));
            ls_vec_init(&b->pods, sizeof(ls_qpod *));
            bi = (int32_t)u->buckets.len - 1;
        }
        ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, bi);
        *(ls_event_registration *)ls_vec_push(&b->interests) = regs[i];
    }
    ls_unsched_refile(u);
}

void ls_unsched_refile(ls_unsched_set *u)
{
    for (uint32_t i = 0; i < u->buckets.len; i++)
        LS_VEC_AT(&u->buckets, ls_plugin_bucket, i).pods.len = 0;
    for (uint32_t i = 0; i < u->pods.len; i++) {
        ls_qpod *qp = LS_VEC_AT(&u->pods, ls_qpod *, i);
        free(qp->buckets);
        qp->buckets = NULL;
        file_pod(u, qp);
    }
}

/* ---- membership */

void ls_unsched_add(ls_unsched_set *u, ls_qpod *qp)
{
    qp->unsched_pos = u->pods.len;
    *(ls_qpod **)ls_vec_push(&u->pods) = qp;
    qp->filed_gated = qp->gated;
    u->n_gated += qp->gated;
    file_pod(u, qp);
    if (u->oldest_known && qp->timestamp_ms < u->oldest_ms)
        u->oldest_ms = qp->timestamp_ms;
}

void ls_unsched_remove(ls_unsched_set *u, ls_qpod *qp)
{
    unfile_pod(u, qp);
    u->n_gated -= qp->filed_gated;
    ls_qpod *last = LS_VEC_AT(&u->pods, ls_qpod *, u->pods.len - 1);
    LS_VEC_AT(&u->pods, ls_qpod *, qp->unsched_pos) = last;
    last->unsched_pos = qp->unsched_pos;
    u->pods.len--;
    if (u->oldest_known && qp->timestamp_ms == u->oldest_ms)
        u->oldest_known = false;   /* found again on the next question */
}

uint32_t ls_unsched_len(const ls_unsched_set *u)
{
    return u->pods.len;
}

uint32_t ls_unsched_gated(const ls_unsched_set *u)
{
    return u->n_gated;
}

ls_qpod *ls_unsched_at(const ls_unsched_set *u, uint32_t i)
{
    return LS_VEC_AT(&u->pods, ls_qpod *, i);
}

bool ls_unsched_oldest(ls_unsched_set *u, uint64_t *ms)
{
    if (!u->pods.len)
        return false;
    if (!u->oldest_known) {
        uint64_t best = UINT64_MAX;
        for (uint32_t i = 0; i < u->pods.len; i++) {
            uint64_t t = LS_VEC_AT(&u->pods, ls_qpod *, i)->timestamp_ms;
            best = t < best ? t : best;
        }
        u->oldest_ms = best;
        u->oldest_known = true;
    }
    *ms = u->oldest_ms;
    return true;
}

/* ---- events */

static bool bucket_concerned(const ls_plugin_bucket *b, const ls_cluster_event *ev)
{
    for (uint32_t i = 0; i < b->interests.len; i++) {
        const ls_event_registration *r = &LS_VEC_AT(&b->interests, ls_event_registration, i);
        if (ls_event_matches(r->resource, r->actions, ev))
            return true;
    }
    return false;
}

static void collect_once(ls_unsched_set *u, ls_qpod *qp, ls_vec *out)
{
    if (qp->visit == u->pass)
        return;
    qp->visit = u->pass;
    *(ls_qpod **)ls_vec_push(out) = qp;
}

void ls_unsched_collect(ls_unsched_set *u, const ls_cluster_event *ev, bool wildcard, ls_vec *out)
{
    u->pass++;
    if (wildcard) {
        for (uint32_t i = 0; i < u->pods.len; i++) {
            ls_qpod *qp = LS_VEC_AT(&u->pods, ls_qpod *, i);
            if (!qp->gated)
                collect_once(u, qp, out);
        }
        return;
    }
    for (uint32_t i = 0; i < u->buckets.len; i++) {
        ls_plugin_bucket *b = &LS_VEC_AT(&u->buckets, ls_plugin_bucket, i);
        if (!b->pods.len || !bucket_concerned(b, ev))
            continue;
        for (uint32_t k = 0; k < b->pods.len; k++)
            collect_once(u, LS_VEC_AT(&b->pods, ls_qpod *, k), out);
    }
}
