/*
 * scheduling_queue.h: upstream's PriorityQueue: activeQ (ordered by the
 * queue-sort plugin), backoffQ (ordered by 1 s backoff windows, then as
 * activeQ) and the error backoff heap (by window), the unschedulable pods
 * (rejected or gated) that wait for a cluster event that may help them, or
 * for the periodic flush, and the pods in flight with the events received
 * meanwhile. Time comes from a clock callback, so a simulation runs backoff
 * and flushes on virtual time.
 */
#ifndef LS_SCHEDULING_QUEUE_H
#define LS_SCHEDULING_QUEUE_H

#include "luasched/events.h"
#include "luasched/framework.h"

enum { LS_MAX_REJECTORS = 16 };

typedef enum ls_qwhere { LS_Q_NONE, LS_Q_ACTIVE, LS_Q_BACKOFF, LS_Q_UNSCHEDULABLE, LS_Q_IN_FLIGHT } ls_qwhere;

/* QueuedPodInfo. */
typedef struct ls_qpod {
    const ls_pod *pod;
    uint32_t profile;
    uint64_t timestamp_ms;          /* when added or re-added; sort ties and backoff start */
    uint64_t initial_attempt_ms;
    uint32_t attempts;
    uint64_t scheduling_cycle;      /* the cycle that popped it */
    uint32_t n_rejectors, n_pending;
    ls_str rejectors[LS_MAX_REJECTORS];   /* UnschedulablePlugins */
    ls_str pending[LS_MAX_REJECTORS];     /* PendingPlugins */
    bool gated;
    ls_str gated_by;
    uint32_t gate_status;           /* the PreEnqueue status that holds the pod (gated), or the
                                       runtime's error it backs off from (pre_enqueue_errors) */
    uint32_t pre_enqueue_errors;    /* PreEnqueue could not run (the runtime failed, no plugin's
                                       verdict) since it last passed: it backs off as after an
                                       error, each failure doubling the wait */
    ls_qwhere where;
    double sort_key;
    uint64_t seq;
    /* Bookkeeping of the queue's own structures (not for callers). */
    uint32_t all_pos;               /* index in the queue's list of every pod */
    uint32_t heap_pos;              /* index in the heap that holds it */
    uint32_t unsched_pos;           /* index in the unschedulable set */
    uint32_t n_buckets;             /* plugin buckets it is filed under while unschedulable */
    struct ls_bucket_slot *buckets; /* n_buckets (bucket, index in it), owned */
    bool filed_gated;               /* counted as gated by the unschedulable set */
    bool error_backoff;             /* in the error backoff heap (no rejector plugin) */
    bool retry_error;               /* its error says nothing about the cluster (a preemption
                                       rejected it while it waited): a run is not settled
                                       before it is retried; cleared when popped */
    uint64_t visit;                 /* last event pass that collected it */
    uint64_t in_flight_mark;        /* its entry in the in-flight list, + 1 (0: none) */
} ls_qpod;

typedef enum ls_requeue { LS_REQUEUE_SKIP, LS_REQUEUE_AFTER_BACKOFF, LS_REQUEUE_IMMEDIATELY } ls_requeue;

/* A plugin's interest in an event (EventsToRegister); hint 0 = always Queue. */
typedef struct ls_event_registration {
    uint32_t profile;               /* only pods of this profile are concerned */
    ls_str plugin;
    ls_str resource;
    uint32_t actions;
    int hint;                       /* opaque to the queue: passed back to the hint callback */
} ls_event_registration;

typedef struct ls_queue_callbacks {
    void *ud;
    uint64_t (*now_ms)(void *ud);
    /* PreEnqueue: LS_SUCCESS, or the code with *plugin and *status set. */
    int (*pre_enqueue)(void *ud, const ls_pod *pod, uint32_t profile, ls_str *plugin, uint32_t *status);
    double (*sort_key)(void *ud, const ls_pod *pod, uint32_t profile);
    /* When set, the queue-sort plugin's `less` orders activeQ instead of the key. */
    bool (*less)(void *ud, const ls_pod *a, const ls_pod *b, uint32_t profile);
    /* A queueing hint: LS_HINT_QUEUE or LS_HINT_SKIP (an error counts as Queue). */
    int (*hint)(void *ud, int hint, const ls_pod *pod, const ls_cluster_event *ev);
    /* Optional: a pod entered a queue because of `event` (upstream's label:
     * PodAdd, ScheduleAttemptFailure, BackoffComplete, ForceActivate,
     * UnschedulableTimeout, or a cluster event's), for
     * scheduler_queue_incoming_pods_total. */
    void (*incoming)(void *ud, ls_qwhere queue, const char *event);
} ls_queue_callbacks;

typedef struct ls_queue_options {
    uint64_t initial_backoff_ms;    /* podInitialBackoffSeconds (1 s) */
    uint64_t max_backoff_ms;        /* podMaxBackoffSeconds (10 s) */
    uint64_t max_unschedulable_ms;  /* podMaxInUnschedulablePodsDuration (5 min) */
} ls_queue_options;

typedef struct ls_squeue ls_squeue;

ls_squeue *ls_squeue_new(const ls_queue_options *opt, const ls_queue_callbacks *cb);
void ls_squeue_free(ls_squeue *q);
/* Replaces the event registrations (a profile reload rebuilds them). */
const ls_event_registration *ls_squeue_registrations(const ls_squeue *q, uint32_t *n);
void ls_squeue_set_incoming(ls_squeue *q, void (*incoming)(void *ud, ls_qwhere queue, const char *event));
void ls_squeue_set_registrations(ls_squeue *q, const ls_event_registration *regs, uint32_t n);

/* A new unscheduled pod (PodAdd): PreEnqueue, then activeQ or the gate. */
void ls_squeue_add(ls_squeue *q, const ls_pod *pod, uint32_t profile);
/* The pod object changed while queued (or in flight). */
void ls_squeue_update(ls_squeue *q, const ls_pod *old_pod, const ls_pod *new_pod);
void ls_squeue_delete(ls_squeue *q, const ls_pod *pod);
ls_qpod *ls_squeue_find(const ls_squeue *q, const ls_pod *pod);

/* Pops the head of activeQ (NULL when empty): attempts++, the cycle counter
 * moves on, the pod is in flight until done or added back. */
ls_qpod *ls_squeue_pop(ls_squeue *q);
/* The pod left the queue for good (bound, or no longer ours). */
void ls_squeue_done(ls_squeue *q, ls_qpod *qp);
/* AddUnschedulableIfNotPresent for a pod whose cycle failed; rejectors are
 * already in qp (none for an Error). */
void ls_squeue_add_unschedulable(ls_squeue *q, ls_qpod *qp);
/* MoveAllToActiveOrBackoffQueue. */
void ls_squeue_move_all(ls_squeue *q, const ls_cluster_event *ev);
/* Moves a pending pod straight to activeQ (ForceActivate), PreEnqueue
 * permitting; true when it is now in activeQ. */
bool ls_squeue_activate(ls_squeue *q, const ls_pod *pod);
/* The periodic flushes due by now: backoff completed (every 1 s) and
 * unschedulable leftovers (every 30 s). */
void ls_squeue_flush(ls_squeue *q);
/* The next time a flush can change something; false when nothing waits on time. */
bool ls_squeue_next_wakeup(ls_squeue *q, uint64_t *at_ms);

/* Recomputes every active pod's sort key (a new queue-sort plugin after a reload). */
void ls_squeue_rekey(ls_squeue *q);

/* True when every held pod is gated, or failed its last attempt at or after
 * `since_ms` (so it has seen the cluster as it is), and none is active. */
bool ls_squeue_settled(ls_squeue *q, uint64_t since_ms);

/* isPodWorthRequeuing (exposed for tests). */
ls_requeue ls_squeue_worth_requeuing(ls_squeue *q, const ls_qpod *qp, const ls_cluster_event *ev);
uint64_t ls_squeue_backoff_ms(const ls_squeue *q, const ls_qpod *qp);

typedef struct ls_queue_counts {
    uint32_t active, backoff, unschedulable, gated, in_flight;
} ls_queue_counts;
ls_queue_counts ls_squeue_counts(const ls_squeue *q);
/* What cluster events cost (luasched/events.h's ls_event_stats). */
ls_event_stats ls_squeue_event_counts(const ls_squeue *q);
/* The same counts per event label ("NodeUpdate", "AssignedPodAdd", ...), in
 * the order the labels first came; returns how many labels (at most cap
 * filled). Labels are the emitters' static strings. */
#define LS_SQUEUE_EVENT_LABELS 24
uint32_t ls_squeue_event_counts_by_label(const ls_squeue *q, ls_event_label_stats *out, uint32_t cap);
/* An event that changed nothing any plugin can register (a node heartbeat):
 * counted, nothing else. */
void ls_squeue_note_event(ls_squeue *q, const char *label);
/* Events kept for pods in flight (their objects must stay alive). */
uint32_t ls_squeue_in_flight_events(const ls_squeue *q);
/* Every pod the queue holds, for invariant checks (iteration by index). */
uint32_t ls_squeue_size(const ls_squeue *q);
ls_qpod *ls_squeue_at(const ls_squeue *q, uint32_t i);

#endif
