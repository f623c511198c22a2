/*
 * queue.h: the active queue: a binary heap ordered by the queue-sort
 * plugin's numeric key (higher first), then by the pod's timestamp, then by
 * arrival. Pods are referred to by their table id so the heap holds no
 * pointers that could dangle.
 */
#ifndef LS_QUEUE_H
#define LS_QUEUE_H

#include "luasched/model.h"

typedef struct ls_queue_item {
    uint32_t pod_id;
    double key;
    int64_t timestamp_ns;
    uint64_t seq;
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
bool ls_queue_remove(ls_queue *q, uint32_t pod_id);
uint32_t ls_queue_len(const ls_queue *q);

#endif
