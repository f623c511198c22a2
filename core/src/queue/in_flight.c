/*
 * in_flight.c: see in_flight.h. The list is a vector used as a queue:
 * entries are appended at the end and pruned from the front, and a pod's
 * entry is found from its absolute number, so starting, recording and
 * finishing cost O(1) (amortized), whatever the number of queued pods.
 */
#include "queue/in_flight.h"

#include <string.h>

enum { IN_FLIGHT_EVENT, IN_FLIGHT_POD, IN_FLIGHT_DONE };

void ls_in_flight_init(ls_in_flight *f)
{
    ls_vec_init(&f->entries, sizeof(ls_in_flight_entry));
    f->head = 0;
    f->base = 0;
    f->n_pods = f->n_events = 0;
}

void ls_in_flight_free(ls_in_flight *f)
{
    ls_vec_free(&f->entries);
}

static ls_in_flight_entry *entry(const ls_in_flight *f, uint64_t absolute)
{
    return &LS_VEC_AT(&f->entries, ls_in_flight_entry, absolute - f->base);
}

void ls_in_flight_start(ls_in_flight *f, ls_qpod *qp)
{
    if (qp->in_flight_mark)
        ls_in_flight_done(f, qp);   /* popped twice without an end: the old attempt is over */
    qp->in_flight_mark = f->base + f->entries.len + 1;
    ls_in_flight_entry *e = ls_vec_push(&f->entries);
    e->kind = IN_FLIGHT_POD;
    f->n_pods++;
}

bool ls_in_flight_any(const ls_in_flight *f)
{
    return f->n_pods > 0;
}

void ls_in_flight_event(ls_in_flight *f, const ls_cluster_event *ev)
{
    if (!f->n_pods)
        return;
    ls_in_flight_entry *e = ls_vec_push(&f->entries);
    e->kind = IN_FLIGHT_EVENT;
    e->ev = *ev;
    f->n_events++;
}

/* Entries before the oldest pod still in flight concern nobody. */
static void prune(ls_in_flight *f)
{
    while (f->head < f->entries.len) {
        ls_in_flight_entry *e = &LS_VEC_AT(&f->entries, ls_in_flight_entry, f->head);
        if (e->kind == IN_FLIGHT_POD)
            break;
        if (e->kind == IN_FLIGHT_EVENT)
            f->n_events--;
        f->head++;
    }
    if (f->head == f->entries.len) {
        f->base += f->entries.len;
        f->entries.len = f->head = 0;
    } else if (f->head >= 256 && f->head * 2 >= f->entries.len) {
        uint32_t live = f->entries.len - f->head;
        memmove(f->entries.data, &LS_VEC_AT(&f->entries, ls_in_flight_entry, f->head), live * sizeof(ls_in_flight_entry));
        f->base += f->head;
        f->entries.len = live;
        f->head = 0;
    }
}

void ls_in_flight_done(ls_in_flight *f, ls_qpod *qp)
{
    if (!qp->in_flight_mark)
        return;
    entry(f, qp->in_flight_mark - 1)->kind = IN_FLIGHT_DONE;
    qp->in_flight_mark = 0;
    f->n_pods--;
    prune(f);
}

const ls_cluster_event *ls_in_flight_next_event(const ls_in_flight *f, const ls_qpod *qp, uint64_t *cursor)
{
    if (!qp->in_flight_mark)
        return NULL;
    if (*cursor == 0)
        *cursor = qp->in_flight_mark;   /* the absolute number after the pod's own entry */
    while (*cursor < f->base + f->entries.len) {
        const ls_in_flight_entry *e = entry(f, (*cursor)++);
        if (e->kind == IN_FLIGHT_EVENT)
            return &e->ev;
    }
    return NULL;
}

uint32_t ls_in_flight_event_count(const ls_in_flight *f)
{
    return f->n_events;
}
