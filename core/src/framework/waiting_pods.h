/*
 * waiting_pods.h: pods a Permit plugin told to wait. Each waits for every
 * plugin that returned Wait to allow it; one rejection, or one plugin's
 * timeout, rejects it (upstream's waitingPodsMap and WaitOnPermit).
 */
#ifndef LS_WAITING_PODS_H
#define LS_WAITING_PODS_H

#include "luasched/framework.h"

typedef struct ls_waiting_pod {
    const ls_pod *pod;
    uint32_t profile;
    ls_str node;
    uint32_t n_plugins;
    ls_str plugins[LS_MAX_WAITING_PLUGINS];
    uint64_t deadline_ms[LS_MAX_WAITING_PLUGINS];
    uint64_t timeout_ms[LS_MAX_WAITING_PLUGINS];
    bool allowed[LS_MAX_WAITING_PLUGINS];
    uint64_t since_ms;   /* when Permit made it wait (at_pre_bind: when PreBind first did) */
    bool rejected, timed_out;
    bool preempted;          /* rejected by a preemption (an Error status: the pod backs off) */
    bool at_pre_bind;        /* waits in PreBind (VolumeBinding's claims): PreBind runs again when due */
    ls_str rejected_by;
    char message[512];
} ls_waiting_pod;

typedef struct ls_waiting_pods {
    ls_vec items;       /* ls_waiting_pod * in arrival order */
    uint64_t changes;   /* moves with every pod added, allowed, rejected, expired, replaced or taken */
} ls_waiting_pods;

void ls_waiting_pods_init(ls_waiting_pods *w);
void ls_waiting_pods_free(ls_waiting_pods *w);
/* Registers a pod with the cycle's waiting plugins and their timeouts. */
void ls_waiting_pods_add(ls_waiting_pods *w, const ls_pod *pod, uint32_t profile, const ls_cycle *c,
                         uint64_t now_ms);
ls_waiting_pod *ls_waiting_pods_find(ls_waiting_pods *w, uint32_t pod_id);
/* A pod whose PreBind returned Wait: the binding cycle runs again, PreBind
 * first, at the next object change or after poll_ms (upstream polls each second).
 * since_ms: when PreBind first made it wait (kept in since_ms across polls). */
void ls_waiting_pods_add_pre_bind(ls_waiting_pods *w, const ls_pod *pod, uint32_t profile, ls_str node,
                                  uint64_t now_ms, uint64_t poll_ms, uint64_t since_ms);
/* An object changed: every pod waiting in PreBind is due. */
void ls_waiting_pods_poke_pre_bind(ls_waiting_pods *w);
/* The pod's object was replaced by an update. */
void ls_waiting_pods_replace(ls_waiting_pods *w, const ls_pod *old_pod, const ls_pod *new_pod);
bool ls_waiting_pods_allow(ls_waiting_pods *w, uint32_t pod_id, ls_str plugin);
bool ls_waiting_pods_reject(ls_waiting_pods *w, uint32_t pod_id, ls_str plugin, const char *msg);
/* A preemption chose the waiting pod as a victim (upstream's WaitingPod.Preempt
 * and, for a pod waiting in PreBind, PodInPreBind.CancelPod): it is rejected
 * with an Error status instead of being deleted. False when `pod` does not
 * wait (or was already rejected). */
bool ls_waiting_pods_preempt(ls_waiting_pods *w, const ls_pod *pod, ls_str plugin);
/* Rejects the pods whose earliest plugin deadline has passed. */
void ls_waiting_pods_expire(ls_waiting_pods *w, uint64_t now_ms);
/* Earliest deadline among pods still waiting; false when none waits. */
bool ls_waiting_pods_next_deadline(const ls_waiting_pods *w, uint64_t *deadline_ms);
/* Removes and returns a pod that every plugin allowed or one rejected (caller frees). */
ls_waiting_pod *ls_waiting_pods_take_resolved(ls_waiting_pods *w);
uint32_t ls_waiting_pods_count(const ls_waiting_pods *w);
ls_waiting_pod *ls_waiting_pods_at(const ls_waiting_pods *w, uint32_t i);

/* Go's time.Duration formatting for whole milliseconds ("10s", "1m30s", "500ms"). */
void ls_format_duration(uint64_t ms, char *buf, size_t len);

#endif
