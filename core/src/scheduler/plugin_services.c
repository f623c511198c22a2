/*
 * plugin_services.c: the services C offers to the plugins through the FFI
 * (the ls_cycle_* functions of luasched/framework.h), beside the handle they
 * serve: a plugin holds the running ls_cycle, whose owner is the attempt
 * (attempt.h) and, through it, the environment (the cluster source, waiting
 * pods, nominator, queue, clock). Writes a plugin asks for are capped per call
 * (LS_MAX_PLUGIN_WRITES); events the source delivers meanwhile are deferred.
 * In the test kit the owner is NULL and the services answer "no cluster";
 * a shadow's environment (policy.h) has no source, queue, waiting pods or
 * metrics, and nominations only while it evaluates: the same answers.
 */
#include "scheduler/plugin_services.h"
#include "scheduler/own_writes.h"
#include "luasched/log.h"
#include "luasched/feature_gates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_cycle_prefilter_reserve(ls_cycle *cycle, uint32_t n)
{
    ls_critical_enter();
    if (n > cycle->prefilter_cap) {
        cycle->prefilter_cap = n;
        cycle->prefilter_nodes = ls_xrealloc(cycle->prefilter_nodes, n * sizeof *cycle->prefilter_nodes);
    }
    ls_critical_leave();
}

static int bind_locked(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen);

int ls_cycle_bind(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen)
{
    if (!cycle) {
        snprintf(errbuf, errlen, "no scheduling cycle is running");
        return -1;
    }
    ls_critical_enter();
    int rc = bind_locked(cycle, node_name, errbuf, errlen);
    ls_critical_leave();
    return rc;
}

static int bind_locked(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen)
{
    ls_attempt_state *a = (ls_attempt_state *)cycle->owner;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->src || !e->src->bind) {
        snprintf(errbuf, errlen, "no cluster is attached to bind pod %s/%s", ls_str_get(cycle->pod->ns),
                 ls_str_get(cycle->pod->name));
        return -1;
    }
    ls_error err;
    ls_env_begin_deferral(e);
    bool bound = e->src->bind(e->src->ud, cycle->pod, node_name, &err);
    ls_env_end_deferral(e);
    if (!bound) {
        snprintf(errbuf, errlen, "%s", err.msg);
        return -1;
    }
    a->bound_in_bind = true;
    return 0;
}

bool ls_env_plugin_write(ls_sched_env *e, char *errbuf, size_t errlen)
{
    uint32_t call = *ls_view_generation();
    if (call != e->writes_generation) {
        e->writes_generation = call;
        e->writes_in_call = 0;
    }
    if (e->writes_in_call >= LS_MAX_PLUGIN_WRITES) {
        snprintf(errbuf, errlen, "more than %d API writes and evictions in one plugin call", LS_MAX_PLUGIN_WRITES);
        return false;
    }
    e->writes_in_call++;
    return true;
}

/* Starts an API write of a plugin: counts it against the call's cap
 * (ls_env_plugin_write), then enters the critical section with the source's
 * events deferred. false: over the cap, errbuf says so. */
static bool write_begin(ls_sched_env *e, char *errbuf, size_t errlen)
{
    if (!ls_env_plugin_write(e, errbuf, errlen))
        return false;
    ls_critical_enter();
    ls_env_begin_deferral(e);
    return true;
}

/* Ends the write write_begin started: 0 when the source's call succeeded,
 * else -1 with its error in errbuf. An object a plugin that is not built-in
 * wrote (`name` not 0; `ns` 0 for any namespace) is noted as the cycle's
 * pod's own write: its event is no news for that pod (own_writes.h). A
 * built-in's writes stay news, as upstream's: DynamicResources' PostFilter
 * deallocates a claim so that the claim's update requeues the pod. */
static int write_end(ls_sched_env *e, const ls_cycle *cycle, ls_str ns, ls_str name, bool ok, const ls_error *err,
                     char *errbuf, size_t errlen)
{
    if (ok && name && cycle->pod && cycle->writer_not_builtin)
        ls_own_writes_note(&e->own_writes, ns, name, cycle->pod->id);
    ls_env_end_deferral(e);
    ls_critical_leave();
    if (!ok) {
        snprintf(errbuf, errlen, "%s", err->msg);
        return -1;
    }
    return 0;
}

int ls_cycle_patch_status(const ls_cycle *cycle, const ls_object *obj, const char *merge_patch, char *errbuf,
                          size_t errlen)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->src || !e->src->patch_status) {
        snprintf(errbuf, errlen, "no cluster is attached to write the status of %s %s", ls_str_get(obj->kind),
                 ls_str_get(obj->name));
        return -1;
    }
    if (!write_begin(e, errbuf, errlen))
        return -1;
    ls_error err;
    bool ok = e->src->patch_status(e->src->ud, obj, merge_patch, &err);
    return write_end(e, cycle, obj->ns, obj->name, ok, &err, errbuf, errlen);
}

void ls_cycle_plugin_durations(const ls_cycle *cycle, int ep, uint32_t index, uint8_t code, uint64_t count,
                               double seconds, const uint64_t *buckets)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    const ls_ext_point_info *row = ls_ext_point_info_of(ep);
    if (!e || !e->metrics || !e->metrics->registry || !row || !count)
        return;
    const ls_vec *list = &e->cfg->profiles[cycle->profile].plugins[row->point];
    if (index >= list->len)
        return;
    const char *labels[] = {ls_str_get(LS_VEC_AT(list, ls_plugin_ref, index).name), row->name, ls_code_name(code)};
    ls_metrics_observe_bucketed(e->metrics->plugin_execution, labels, buckets, count, seconds);
}

uint64_t ls_cycle_now_ms(const ls_cycle *cycle)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e ? e->clock_ms : 0;
}

int ls_cycle_patch_object(const ls_cycle *cycle, ls_str kind, ls_str ns, ls_str name, const char *patch,
                          char *errbuf, size_t errlen)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->src || !e->src->patch_object) {
        snprintf(errbuf, errlen, "no cluster is attached to update %s %s", ls_str_get(kind), ls_str_get(name));
        return -1;
    }
    if (!write_begin(e, errbuf, errlen))
        return -1;
    ls_error err;
    bool ok = e->src->patch_object(e->src->ud, kind, ns, name, patch, &err);
    /* a pod's patch comes back as a pod event, not an object's */
    return write_end(e, cycle, ns, kind == ls_intern_cstr("Pod") ? 0 : name, ok, &err, errbuf, errlen);
}

int ls_cycle_create_object(const ls_cycle *cycle, const char *json, char *name_out, size_t name_cap, char *errbuf,
                           size_t errlen)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->src || !e->src->create_object) {
        snprintf(errbuf, errlen, "no cluster is attached to create objects in");
        return -1;
    }
    if (!write_begin(e, errbuf, errlen))
        return -1;
    ls_error err;
    bool ok = e->src->create_object(e->src->ud, json, name_out, name_cap, &err);
    return write_end(e, cycle, 0, ok ? ls_intern_cstr(name_out) : 0, ok, &err, errbuf, errlen);
}

/* The waiting pods a plugin sees are its own profile's (profile: its
 * schedulerName): a plugin of one profile neither lists, allows nor rejects
 * the pods waiting in another profile's Permit. */
static bool waits_in_profile(const ls_sched_env *e, const ls_waiting_pod *wp, ls_str profile)
{
    return wp && wp->profile < e->cfg->n_profiles && e->cfg->profiles[wp->profile].scheduler_name == profile;
}

static ls_waiting_pod *own_waiting_pod(const ls_cycle *cycle, ls_str profile, uint32_t pod_id)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    ls_waiting_pod *wp = e && e->waiting ? ls_waiting_pods_find(e->waiting, pod_id) : NULL;
    return waits_in_profile(e, wp, profile) ? wp : NULL;
}

uint32_t ls_cycle_num_waiting(const ls_cycle *cycle, ls_str profile)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    uint32_t n = 0, total = e && e->waiting ? ls_waiting_pods_count(e->waiting) : 0;
    for (uint32_t i = 0; i < total; i++)
        n += waits_in_profile(e, ls_waiting_pods_at(e->waiting, i), profile);
    return n;
}

const ls_pod *ls_cycle_waiting_pod(const ls_cycle *cycle, ls_str profile, uint32_t i)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    uint32_t total = e && e->waiting ? ls_waiting_pods_count(e->waiting) : 0;
    for (uint32_t k = 0; k < total; k++) {
        const ls_waiting_pod *wp = ls_waiting_pods_at(e->waiting, k);
        if (waits_in_profile(e, wp, profile) && i-- == 0)
            return wp->pod;
    }
    return NULL;
}

bool ls_cycle_allow_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return own_waiting_pod(cycle, profile, pod_id) && ls_waiting_pods_allow(e->waiting, pod_id, plugin);
}

bool ls_cycle_reject_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin, const char *msg)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return own_waiting_pod(cycle, profile, pod_id) && ls_waiting_pods_reject(e->waiting, pod_id, plugin, msg);
}


/* ---- nominated pods and preemption, for plugins */

uint32_t ls_cycle_nominated_total(const ls_cycle *cycle)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e && e->nominator ? ls_nominator_total(e->nominator) : 0;
}

uint32_t ls_cycle_nominated_count(const ls_cycle *cycle, ls_str node)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e && e->nominator ? ls_nominator_count(e->nominator, node) : 0;
}

uint32_t ls_cycle_nominated_nodes(const ls_cycle *cycle, ls_str *out, uint32_t cap)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->nominator)
        return 0;
    const ls_map *by_pod = &e->nominator->by_pod;
    uint32_t n = 0;
    for (uint32_t i = 0; i < by_pod->cap; i++) {
        if (!by_pod->slots[i].key)
            continue;
        if (n < cap)
            out[n] = (ls_str)(uintptr_t)by_pod->slots[i].value;
        n++;
    }
    return n;
}

const ls_pod *ls_cycle_nominated_pod(const ls_cycle *cycle, ls_str node, uint32_t i)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e && e->nominator ? ls_nominator_at(e->nominator, node, i) : NULL;
}

ls_str ls_cycle_nomination_of(const ls_cycle *cycle, const ls_pod *pod)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e && e->nominator ? ls_nominator_node_of(e->nominator, pod) : 0;
}

void ls_cycle_clear_nomination(const ls_cycle *cycle, const ls_pod *pod)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->nominator)
        return;
    bool had = ls_nominator_node_of(e->nominator, pod) || pod->nominated_node_name;
    ls_nominator_delete(e->nominator, pod);
    if (had && e->src && e->src->clear_nomination)
        e->src->clear_nomination(e->src->ud, pod);
}

uint64_t ls_cycle_random(const ls_cycle *cycle)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e ? ls_random_next(&e->rng) : 0;
}

/* Deferred to the end of the running hook's cycle (upstream applies its
 * pods-to-activate after the scheduling cycle): activating runs PreEnqueue,
 * Lua, which must not be entered from inside a plugin's FFI call. */
/* A pending pod a plugin may read or move: its own profile's (profile: the
 * caller's schedulerName), as waiting pods are (a plugin of one profile read
 * and activated another's pending pods: attacker round 3). */
static bool queued_in_profile(const ls_sched_env *e, const ls_qpod *qp, ls_str profile)
{
    return qp && qp->profile < e->cfg->n_profiles && e->cfg->profiles[qp->profile].scheduler_name == profile;
}

bool ls_cycle_activate(const ls_cycle *cycle, ls_str profile, const ls_pod *pod)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    const ls_qpod *qp = e && e->queue ? ls_squeue_find(e->queue, pod) : NULL;
    if (!queued_in_profile(e, qp, profile) || (qp->where != LS_Q_UNSCHEDULABLE && qp->where != LS_Q_BACKOFF))
        return false;
    /* once per pod until applied: a plugin activating in a loop grew this
     * queue without bound (2 GB with a 64 MiB Lua limit) */
    for (uint32_t i = 0; i < e->deferred.len; i++) {
        const deferred_event *d = &LS_VEC_AT(&e->deferred, deferred_event, i);
        if (d->kind == EV_ACTIVATE && d->pod_id == pod->id)
            return true;
    }
    deferred_event *ev = ls_vec_push(&e->deferred);
    *ev = (deferred_event){.kind = EV_ACTIVATE, .pod_id = pod->id};
    return true;
}

const ls_pod *ls_cycle_queued_pod(const ls_cycle *cycle, ls_str profile, uint32_t pod_id)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    const ls_pod probe = {.id = pod_id};   /* the queue finds a pod by its id */
    const ls_qpod *qp = e && e->queue ? ls_squeue_find(e->queue, &probe) : NULL;
    return queued_in_profile(e, qp, profile) ? qp->pod : NULL;
}

