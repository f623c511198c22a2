/*
 * in_flight.h: the pods being scheduled (popped, not yet done) and the
 * cluster events received meanwhile, in one ordered list (upstream's
 * inFlightPods and inFlightEvents). A pod whose attempt fails replays the
 * events that follow its own entry through its rejectors' queueing hints.
 * Events are kept only while some pod is in flight, and an event goes as
 * soon as every pod that was in flight when it came is done.
 */
#ifndef LS_IN_FLIGHT_H
#define LS_IN_FLIGHT_H

#include "queue/scheduling_queue.h"

typedef struct ls_in_flight_entry {
    ls_cluster_event ev;          /* for an event */
    uint8_t kind;                 /* IN_FLIGHT_EVENT, IN_FLIGHT_POD, IN_FLIGHT_DONE */
} ls_in_flight_entry;

typedef struct ls_in_flight {
    ls_vec entries;               /* ls_in_flight_entry; the live ones from `head` */
    uint32_t head;
    uint64_t base;                /* absolute number of entries[0] */
    uint32_t n_pods, n_events;
} ls_in_flight;

void ls_in_flight_init(ls_in_flight *f);
void ls_in_flight_free(ls_in_flight *f);
/* The pod was popped: events from now on are its in-flight events. */
void ls_in_flight_start(ls_in_flight *f, ls_qpod *qp);
/* The attempt is over (bound, failed and requeued, or dropped). */
void ls_in_flight_done(ls_in_flight *f, ls_qpod *qp);
bool ls_in_flight_any(const ls_in_flight *f);
/* Records an event received while pods are in flight (no-op when none is). */
void ls_in_flight_event(ls_in_flight *f, const ls_cluster_event *ev);
/* The events received since qp was popped, in order: call with *cursor = 0
 * first; NULL when there are no more. False from the start if qp is not in
 * flight. */
const ls_cluster_event *ls_in_flight_next_event(const ls_in_flight *f, const ls_qpod *qp, uint64_t *cursor);
uint32_t ls_in_flight_event_count(const ls_in_flight *f);

#endif
