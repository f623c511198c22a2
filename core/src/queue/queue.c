/*
 * queue.c: the active queue's heap (see queue.h).
 */
#include "queue/queue.h"

#include <stdlib.h>

void ls_queue_init(ls_queue *q)
{
    q->heap = NULL;
    q->len = q->cap = 0;
    q->cmp = NULL;
    q->cmp_ud = NULL;
}

void ls_queue_free(ls_queue *q)
{
    free(q->heap);
    q->heap = NULL;
    q->len = q->cap = 0;
}

/* The leading value, then PrioritySort's Less: higher key first, then the
 * earlier timestamp, then arrival. */
static bool before(const ls_queue *q, const ls_queue_item *a, const ls_queue_item *b)
{
    if (a->first != b->first)
        return a->first < b->first;
    if (q->cmp) {
        int c = q->cmp(q->cmp_ud, a, b);
        if (c)
            return c < 0;
    } else if (a->key != b->key)
        return a->key > b->key;
    if (a->timestamp_ns != b->timestamp_ns)
        return a->timestamp_ns < b->timestamp_ns;
    return a->seq < b->seq;
}

static void place(ls_queue *q, uint32_t i)
{
    if (q->heap[i].slot)
        *q->heap[i].slot = i;
}

static void swap(ls_queue *q, uint32_t i, uint32_t j)
{
    ls_queue_item t = q->heap[i];
    q->heap[i] = q->heap[j];
    q->heap[j] = t;
    place(q, i);
    place(q, j);
}

static void sift_up(ls_queue *q, uint32_t i)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!before(q, &q->heap[i], &q->heap[parent]))
            break;
        swap(q, i, parent);
        i = parent;
    }
}

static void sift_down(ls_queue *q, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < q->len && before(q, &q->heap[l], &q->heap[best]))
            best = l;
        if (r < q->len && before(q, &q->heap[r], &q->heap[best]))
            best = r;
        if (best == i)
            return;
        swap(q, i, best);
        i = best;
    }
}

void ls_queue_push(ls_queue *q, ls_queue_item item)
{
    if (q->len == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 64;
        q->heap = ls_xrealloc(q->heap, q->cap * sizeof *q->heap);
    }
    q->heap[q->len] = item;
    place(q, q->len);
    sift_up(q, q->len++);
}

bool ls_queue_pop(ls_queue *q, ls_queue_item *out)
{
    if (!q->len)
        return false;
    *out = q->heap[0];
    ls_queue_remove_at(q, 0);
    return true;
}

void ls_queue_remove_at(ls_queue *q, uint32_t i)
{
    if (i >= q->len)
        return;
    q->heap[i] = q->heap[--q->len];
    if (i < q->len) {
        place(q, i);
        sift_up(q, i);
        sift_down(q, i);
    }
}

const ls_queue_item *ls_queue_peek(const ls_queue *q)
{
    return q->len ? &q->heap[0] : NULL;
}

bool ls_queue_remove(ls_queue *q, uint32_t pod_id)
{
    for (uint32_t i = 0; i < q->len; i++) {
        if (q->heap[i].pod_id != pod_id)
            continue;
        ls_queue_remove_at(q, i);
        return true;
    }
    return false;
}

uint32_t ls_queue_len(const ls_queue *q)
{
    return q->len;
}
