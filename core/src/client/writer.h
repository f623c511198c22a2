/*
 * writer.h: the scheduler's writes to the API server, asynchronously
 * (internal): bindings, events, pod status patches, preemption of victims.
 *
 * Jobs go into two FIFOs served by a few worker threads: events and pod
 * status patches first, then bindings and preemptions (and two workers for
 * the first alone). Every job ends with exactly one call of its completion
 * callback, on a worker thread (or on the thread calling ls_writer_drain for
 * jobs failed there). A job submitted once the drain's deadline has passed
 * is refused (the submit returns false and the callback is never called).
 *
 * Requests go through ls_kclient, which retries connection errors, 5xx and
 * 429. A binding is a POST and so might be sent twice: a 409 after a retried
 * POST can mean our first attempt bound the pod. It is reported as a
 * conflict all the same (never re-sent), with the attempt count, so the
 * scheduler forgets the assumed pod and lets the informer tell it the truth.
 */
#ifndef LS_CLIENT_WRITER_H
#define LS_CLIENT_WRITER_H

#include <stdbool.h>

#include "client/http.h"
#include "luasched/base.h"

typedef struct ls_writer ls_writer;

typedef enum ls_write_kind {
    LS_WRITE_BIND,
    LS_WRITE_EVENT,
    LS_WRITE_POD_STATUS,
    LS_WRITE_PREEMPT,
    LS_WRITE_OBJECT_PATCH,
} ls_write_kind;

typedef enum ls_write_outcome {
    LS_WRITE_OK,          /* 2xx (for PREEMPT: also when the victim was already gone) */
    LS_WRITE_CONFLICT,    /* 409: already bound / changed under us */
    LS_WRITE_NOT_FOUND,   /* 404: the pod is gone */
    LS_WRITE_FAILED,      /* another status, or no answer after the retries */
    LS_WRITE_CANCELLED,   /* dropped by ls_writer_drain before or while it ran */
} ls_write_outcome;

typedef struct ls_write_result {
    ls_write_kind kind;
    ls_write_outcome outcome;
    long status;          /* HTTP status of the last request; 0 when none */
    int attempts;         /* HTTP attempts of the last request */
    const char *message;  /* the Status message, or the transport error; "" on success */
    const char *ns, *name;/* the pod */
} ls_write_result;

/* Called once per job; r and its strings are valid during the call only. */
typedef void (*ls_write_done_fn)(void *ud, const ls_write_result *r);

typedef struct ls_writer_options {
    int workers;                       /* 0: 4 */
    const char *reporting_controller;  /* events' reportingController; NULL: "default-scheduler" */
    const char *reporting_instance;    /* NULL: "<controller>-<hostname>", as client-go */
    bool no_event_series;              /* true: every event is a new Event object */
    ls_kclient *events_client;         /* events go through it (own rate limit); NULL: the main client */
} ls_writer_options;

ls_writer *ls_writer_new(ls_kclient *c, const ls_writer_options *opt, ls_error *err);
/* A graceful stop: lets the queued and in-flight jobs finish (and the jobs
 * their callbacks submit, such as a binding's Scheduled event) for up to
 * timeout_ms; then cancels the requests in flight, fails what is still
 * queued with LS_WRITE_CANCELLED (counted in cut_at_stop), refuses later
 * submits and joins the workers. True when everything was sent in time. */
bool ls_writer_drain(ls_writer *w, long timeout_ms);
/* Drains (with a 5 s limit) if needed and frees. */
void ls_writer_free(ls_writer *w);

/* POST /api/v1/namespaces/NS/pods/NAME/binding (v1 Binding to node). */
bool ls_writer_bind(ls_writer *w, const char *ns, const char *name, const char *uid, const char *node,
                    ls_write_done_fn done, void *ud);

/* An events.k8s.io/v1 Event regarding a pod.
 *
 * Repeats are folded into a series as client-go's events broadcaster does:
 * events with the same type, action, reason, reporting controller/instance,
 * regarding pod and related pod (the note is NOT part of the key) within 6 minutes of
 * the last one make one Event: the first is created, the second PATCHes
 * series {count: 2, lastObservedTime}, later ones only count, and the count
 * is written again by the first repeat 30 minutes after the last write (the
 * upstream heartbeat, done lazily). A series PATCH that finds the Event gone
 * (404) creates it again. Counted-only repeats complete with LS_WRITE_OK,
 * status 0 and the message "counted in the event series". */
typedef struct ls_event_spec {
    const char *ns, *name, *uid;   /* the pod (regarding) */
    const char *type;              /* "Normal" | "Warning" */
    const char *reason;            /* "Scheduled", "FailedScheduling", "Preempted" */
    const char *action;            /* "Binding", "Scheduling", "Preempting" */
    const char *note;              /* cut to 1024 bytes with " ..." as upstream */
    const char *reporting_controller; /* NULL: the writer's (a profile's schedulerName) */
    const char *resource_version;  /* of the pod, optional (regarding.resourceVersion, part of the key) */
    const char *related_ns, *related_name, *related_uid;   /* optional: the related pod (a preemptor) */
} ls_event_spec;
bool ls_writer_record_event(ls_writer *w, const ls_event_spec *ev, ls_write_done_fn done, void *ud);
/* The upstream note of a successful binding: "Successfully assigned NS/NAME to NODE". */
void ls_writer_scheduled_note(const char *ns, const char *name, const char *node, char *out, size_t cap);
/* The upstream note on a victim: "Preempted by pod PREEMPTOR_UID on node NODE". */
void ls_writer_preempted_note(const char *preemptor_uid, const char *node, char *out, size_t cap);

/* Pod status patch (strategic merge on .../pods/NAME/status). Upstream sends
 * one only when something changes: compare with the informer's copy first.
 * The condition carries lastTransitionTime = now. */
typedef enum ls_nominate_mode {
    LS_NOMINATE_KEEP,   /* leave status.nominatedNodeName alone */
    LS_NOMINATE_SET,    /* set it to node */
    LS_NOMINATE_CLEAR,  /* remove it (null) */
} ls_nominate_mode;
typedef struct ls_pod_status_patch {
    const char *condition_reason;  /* NULL: no condition; else PodScheduled=False with this reason
                                      ("Unschedulable" | "SchedulerError") */
    const char *condition_message;
    ls_nominate_mode nominate;
    const char *node;              /* for LS_NOMINATE_SET */
} ls_pod_status_patch;
bool ls_writer_patch_pod_status(ls_writer *w, const char *ns, const char *name, const ls_pod_status_patch *p,
                                ls_write_done_fn done, void *ud);
/* Shorthands of the above. */
bool ls_writer_set_pod_condition(ls_writer *w, const char *ns, const char *name, const char *reason,
                                 const char *message, ls_write_done_fn done, void *ud);
bool ls_writer_set_nominated_node(ls_writer *w, const char *ns, const char *name, const char *node_or_null,
                                  ls_write_done_fn done, void *ud);

/* Preempts a victim: status patch adding DisruptionTarget=True (reason
 * PreemptionByScheduler, message NULL: "<controller>: preempting to
 * accommodate a higher priority pod"), then DELETE with preconditions.uid.
 * A 404 from either step means the victim is already gone: LS_WRITE_OK. */
bool ls_writer_preempt_victim(ls_writer *w, const char *ns, const char *name, const char *uid,
                              const char *message, ls_write_done_fn done, void *ud);

/* A JSON merge patch on another object (VolumeBinding's PreBind: a PersistentVolume's
 * claimRef, a claim's selected-node annotation). `path` is the object's API path; ns and
 * name are reported back in the result. */
bool ls_writer_patch_object(ls_writer *w, const char *path, const char *ns, const char *name,
                            const char *merge_patch, ls_write_done_fn done, void *ud);

typedef struct ls_writer_stats {
    unsigned long queued;      /* waiting now */
    unsigned long done;        /* completed (any outcome) */
    unsigned long failed;      /* outcome not OK */
    unsigned long cut_at_stop; /* still queued when the drain's deadline passed */
} ls_writer_stats;
void ls_writer_get_stats(ls_writer *w, ls_writer_stats *out);

#endif
