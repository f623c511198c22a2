/*
 * queue.h: the heaps of the scheduling queue: a binary heap ordered by an
 * optional leading value (lower first: the backoff window), then the
 * queue-sort plugin's numeric key (higher first) or its `less`, then by the
 * pod's timestamp, then by arrival. Pods are referred to by their table id;
 * each item may name a slot that the heap keeps equal to the item's position,
 * so that a pod leaves the heap in O(log n) without a search.
 */
#ifndef LS_QUEUE_H
#define LS_QUEUE_H

#include "luasched/model.h"

typedef struct ls_queue_item {
    uint32_t pod_id;
    int64_t first;            /* compared first, lower first (0 when unused) */
    double key;
    int64_t timestamp_ns;
    uint64_t seq;
    uint32_t *slot;           /* optional: kept equal to the item's heap index */
} ls_queue_item;

/* An optional order from a plugin's `less`: < 0 when a goes first, > 0 when b
 * does, 0 to fall back to timestamp and arrival. */
typedef int (*ls_queue_cmp)(void *ud, const ls_queue_item *a, const ls_queue_item *b);

typedef struct ls_queue {
    ls_queue_item *heap;
    uint32_t len, cap;
    ls_queue_cmp cmp;
    void *cmp_ud;
} ls_queue;

void ls_queue_init(ls_queue *q);
void ls_queue_free(ls_queue *q);
void ls_queue_push(ls_queue *q, ls_queue_item item);
bool ls_queue_pop(ls_queue *q, ls_queue_item *out);
bool ls_queue_remove(ls_queue *q, uint32_t pod_id);          /* by search: O(n) */
void ls_queue_remove_at(ls_queue *q, uint32_t index);          /* by slot: O(log n) */
const ls_queue_item *ls_queue_peek(const ls_queue *q);         /* NULL when empty */
uint32_t ls_queue_len(const ls_queue *q);

#endif
