/*
 * kcluster.h: a real cluster as the scheduler's source, in `run`'s worker
 * process (docs/architecture.md section 1, docs/plugins/worker.md).
 *
 * The supervisor's informers send every object as JSON over the channel; a
 * reader thread decodes it (off the scheduling thread) and queues it; the
 * scheduling thread drains the queue between cycles and calls the
 * scheduler's event handlers, keeping the current object of every pod, node
 * and other kind so updates and deletes hand the scheduler the object it
 * knows. Replaced objects are freed once the scheduler can no longer point at
 * them. Bindings, events and status patches leave as messages the supervisor
 * checks and performs; a refused binding comes back to the scheduling thread.
 */
#ifndef LS_CLIENT_KCLUSTER_H
#define LS_CLIENT_KCLUSTER_H

#include "luasched/scheduler.h"

#include <signal.h>

typedef struct ls_metrics ls_metrics;
typedef struct cJSON cJSON;

typedef struct ls_kcluster ls_kcluster;

/* The cluster as the supervisor sends it over the channel fd (taken). */
ls_kcluster *ls_kcluster_new_linked(int fd, ls_error *err);
/* Tells the supervisor the completed configuration and what to watch. */
bool ls_kcluster_hello(ls_kcluster *kc, const char *configz, bool node_metrics, bool pod_metrics,
                       const char *const *custom, uint32_t n);
/* The completed configuration after a successful hot reload, for /configz. */
bool ls_kcluster_send_configz(ls_kcluster *kc, const char *configz);
/* Until the supervisor has sent the whole state; false when it is gone or
 * *stop was set (which is also set when the supervisor goes later). */
bool ls_kcluster_wait_fed(ls_kcluster *kc, volatile sig_atomic_t *stop);
/* An extender call through the supervisor (ls_extender_set_transport's fn; ud: the kcluster). */
cJSON *ls_kcluster_extender_call(void *kc, const char *url, const char *verb, const char *body, char **msg);
/* The metrics the supervisor's /metrics asks for. */
void ls_kcluster_serve_metrics(ls_kcluster *kc, ls_metrics *m);
/* What-if questions (the supervisor's /whatif): fn is called on the channel's
 * reader thread; the scheduling thread answers with ls_kcluster_whatif_answer
 * between two cycles. ls_kcluster_wake ends the scheduling loop's idle wait. */
void ls_kcluster_serve_whatif(ls_kcluster *kc, void (*fn)(void *ud, const char *id, const char *question), void *ud);
bool ls_kcluster_whatif_answer(ls_kcluster *kc, const char *id, int status, const char *answer);
void ls_kcluster_wake(ls_kcluster *kc);
/* The source to build the scheduler with; events reach the scheduler once
 * attached, nodes before pods. */
ls_sched_source ls_kcluster_source(ls_kcluster *kc);
void ls_kcluster_attach(ls_kcluster *kc, ls_scheduler *s);
/* How many events (objects, nodes, pods, binding and preemption outcomes)
 * the scheduling thread has applied to the scheduler; the scheduling thread's. */
uint64_t ls_kcluster_applied(const ls_kcluster *kc);
void ls_kcluster_free(ls_kcluster *kc);

#endif
