/*
 * kcluster_link.h: the worker's end of the channel to its supervisor
 * (internal to kcluster.c; docs/plugins/worker.md). The reader thread turns
 * the supervisor's messages into the cluster's events (decoded by kcluster,
 * as an informer's would be) and write outcomes; the writes the scheduler
 * wants leave as messages that the supervisor validates and performs.
 */
#ifndef LS_CLIENT_KCLUSTER_LINK_H
#define LS_CLIENT_KCLUSTER_LINK_H

#include "client/writer.h"
#include "luasched/base.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>

typedef struct kc_link kc_link;
typedef struct ls_metrics ls_metrics;

/* What the reader hands kcluster (called on the reader thread). */
typedef struct kc_link_sink {
    void *ud;
    /* verb: 'a'dd, 'u'pdate, 'd'elete; feed: "pod", "node" or "object" */
    void (*object)(void *ud, char verb, const char *feed, const char *kind, const cJSON *json);
    void (*bind_result)(void *ud, const char *uid, bool ok, const char *message);
    void (*preempt_failed)(void *ud, const char *preemptor_uid, const char *message);
} kc_link_sink;

kc_link *kc_link_new(int fd, const kc_link_sink *sink);
/* Stops the reader (the channel is shut down) and frees. */
void kc_link_free(kc_link *l);
/* Metrics rendered for the supervisor's /metrics (may be NULL). */
void kc_link_set_metrics(kc_link *l, ls_metrics *m);
/* What-if questions from the supervisor's /whatif (called on the reader
 * thread with the request id and the question; the answer goes back with
 * kc_link_whatif_answer). Without one, questions are answered 503. */
typedef void (*kc_link_whatif_fn)(void *ud, const char *id, const char *question);
void kc_link_set_whatif(kc_link *l, kc_link_whatif_fn fn, void *ud);
bool kc_link_whatif_answer(kc_link *l, const char *id, int status, const char *answer);
/* Waits until the supervisor has sent the whole state (true), the channel
 * closed, or *stop (false). */
bool kc_link_wait_synced(kc_link *l, volatile sig_atomic_t *stop);
/* Set when the supervisor is gone: the worker stops. */
void kc_link_on_gone(kc_link *l, volatile sig_atomic_t *stop);
bool kc_link_hello(kc_link *l, const char *configz, const char *wants, const char *const *custom, uint32_t n);
/* The completed configuration after a successful hot reload (the supervisor's /configz). */
bool kc_link_configz(kc_link *l, const char *configz);
bool kc_link_bind(kc_link *l, const char *ns, const char *name, const char *uid, const char *node,
                  const char *scheduler_name);
bool kc_link_event(kc_link *l, const ls_event_spec *ev);
bool kc_link_pod_status(kc_link *l, const char *ns, const char *name, const ls_pod_status_patch *p);
bool kc_link_preempt(kc_link *l, const char *ns, const char *name, const char *uid, const char *message,
                     const char *preemptor_uid);
bool kc_link_patch_object(kc_link *l, const char *kind, const char *ns, const char *name, const char *patch);
/* Synchronous: the supervisor's answer (false with its message in err). */
bool kc_link_patch_status(kc_link *l, const char *kind, const char *ns, const char *name, const char *patch,
                          ls_error *err);

/* Synchronous: the supervisor creates a pod's special ResourceClaim (DRA's
 * extended resources) and answers with the created object (*created,
 * malloc'd JSON text), or false with its message in err. */
bool kc_link_create_claim(kc_link *l, const char *ns, const char *claim, char **created, ls_error *err);

/* An extender call made by the supervisor (scheduler/extender.h's transport). */
cJSON *kc_link_extender(kc_link *l, const char *url, const char *verb, const char *body, char **msg);

#endif
