/*
 * kcluster.h: a real cluster as the scheduler's source (docs/architecture.md section 1:
 * the informers, event handlers and writes of `luasched run`).
 *
 * Informer threads decode what they receive (off the scheduling thread) and
 * queue it; the scheduling thread drains the queue between cycles and calls
 * the scheduler's event handlers, keeping the current object of every pod,
 * node and other kind so updates and deletes hand the scheduler the object it
 * knows. Replaced objects are freed once the scheduler can no longer point at
 * them. Bindings, events and status patches go out asynchronously through the
 * writer; a refused binding comes back to the scheduling thread.
 */
#ifndef LS_CLIENT_KCLUSTER_H
#define LS_CLIENT_KCLUSTER_H

#include "client/http.h"
#include "luasched/scheduler.h"

#include <signal.h>

typedef struct ls_metrics ls_metrics;
typedef struct cJSON cJSON;

typedef struct ls_kcluster ls_kcluster;

/* A kind watched besides pods and nodes (namespaces, services, the volume kinds...). */
typedef struct ls_kind_spec {
    const char *group, *version, *resource, *kind;
} ls_kind_spec;
const ls_kind_spec *ls_kcluster_object_kinds(size_t *n);

typedef struct ls_kcluster_options {
    const char *reporting_controller;   /* events' reportingController ("default-scheduler") */
    const char *reporting_instance;     /* events' reportingInstance (the leader identity) */
    int writer_threads;                 /* 0: 8 */
    ls_kclient *events_client;          /* events through it (kube-scheduler's own event client); NULL: client */
} ls_kcluster_options;

ls_kcluster *ls_kcluster_new(ls_kclient *client, const ls_kcluster_options *opt, ls_error *err);
/* Also list metrics.k8s.io/v1beta1 NodeMetrics and/or PodMetrics every
 * interval_ms (the metrics API has no watch): they reach the scheduler as
 * objects of kind "NodeMetrics" / "PodMetrics" (added, updated when their
 * content changes, deleted when gone). Before ls_kcluster_start. */
bool ls_kcluster_poll_metrics(ls_kcluster *kc, bool nodes, bool pods, long interval_ms, ls_error *err);
/* Also watch a custom resource a plugin registered for ("plural.version.group");
 * before ls_kcluster_start. */
bool ls_kcluster_watch_custom(ls_kcluster *kc, const char *resource, ls_error *err);
/* Starts an informer per kind: pods (not terminal), nodes, namespaces,
 * services, replication controllers, replica sets, stateful sets, pod
 * disruption budgets and the custom resources. */
bool ls_kcluster_start(ls_kcluster *kc, ls_error *err);
bool ls_kcluster_synced(ls_kcluster *kc);
/* Waits until every informer has delivered its first list; false when *stop
 * was set first. */
bool ls_kcluster_wait_synced(ls_kcluster *kc, volatile sig_atomic_t *stop);
/* The source to build the scheduler with; events reach the scheduler once
 * attached, nodes before pods. */
ls_sched_source ls_kcluster_source(ls_kcluster *kc);
void ls_kcluster_attach(ls_kcluster *kc, ls_scheduler *s);
/* Stops the informers, then lets the queued and in-flight writes (bindings,
 * their events, status patches) finish for at most timeout_ms; what is left
 * then is dropped and logged. True when nothing was dropped. Call before
 * freeing the scheduler. */
bool ls_kcluster_stop(ls_kcluster *kc, long timeout_ms);
void ls_kcluster_free(ls_kcluster *kc);

/* In a worker (docs/plugins/worker.md): the cluster as the supervisor sends
 * it over the channel fd (taken): objects decoded here as an informer's
 * would be, writes sent back as messages. No client, informers nor writer. */
ls_kcluster *ls_kcluster_new_linked(int fd, ls_error *err);
/* Tells the supervisor the completed configuration and what to watch. */
bool ls_kcluster_hello(ls_kcluster *kc, const char *configz, bool node_metrics, bool pod_metrics,
                       const char *const *custom, uint32_t n);
/* Until the supervisor has sent the whole state; false when it is gone or
 * *stop was set (which is also set when the supervisor goes later). */
bool ls_kcluster_wait_fed(ls_kcluster *kc, volatile sig_atomic_t *stop);
/* An extender call through the supervisor (ls_extender_set_transport's fn; ud: the kcluster). */
cJSON *ls_kcluster_extender_call(void *kc, const char *url, const char *verb, const char *body, char **msg);
/* The metrics the supervisor's /metrics asks for. */
void ls_kcluster_serve_metrics(ls_kcluster *kc, ls_metrics *m);

#endif
