/*
 * scheduler_events.c: the cluster's events, as the source delivers them.
 * They update the cache and the object store and become ClusterEvents that
 * move unschedulable pods (queueing hints); during a plugin's FFI call they
 * wait and are applied when it returns.
 */
#include "scheduler/scheduler_internal.h"
#include "scheduler/own_writes.h"
#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* origin_pod: the id + 1 of the pod whose attempt caused the event, or 0. */
static void cluster_event_of(ls_scheduler *s, const char *resource, uint32_t actions, const char *label, uint8_t type,
                             const void *old_obj, const void *new_obj, uint32_t origin_pod)
{
    s->last_change_ms = s->policy.env.clock_ms;
    if (!actions) {
        ls_squeue_note_event(s->policy.env.queue, label);   /* nothing a plugin can register changed */
        return;
    }
    ls_cluster_event ev = {.resource = ls_intern_cstr(resource), .actions = actions, .label = label,
                           .object_type = type, .old_obj = old_obj, .new_obj = new_obj, .origin_pod = origin_pod};
    ls_squeue_move_all(s->policy.env.queue, &ev);
}

void ls_scheduler_cluster_event(ls_scheduler *s, const char *resource, uint32_t actions, const char *label,
                                uint8_t type, const void *old_obj, const void *new_obj)
{
    cluster_event_of(s, resource, actions, label, type, old_obj, new_obj, 0);
}

static void apply_node_add(ls_scheduler *s, const ls_node *node)
{
    ls_cache_add_node(s->policy.env.cache, node);
    ls_scheduler_cluster_event(s, "Node", LS_ACT_ADD, "NodeAdd", LS_OBJ_NODE, NULL, node);
}

static void apply_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node)
{
    ls_cache_update_node(s->policy.env.cache, old_node, new_node);
    ls_scheduler_cluster_event(s, "Node", ls_node_update_actions(old_node, new_node), "NodeUpdate", LS_OBJ_NODE, old_node,
                  new_node);
}

static void apply_node_delete(ls_scheduler *s, const ls_node *node)
{
    ls_cache_remove_node(s->policy.env.cache, node);
    ls_scheduler_cluster_event(s, "Node", LS_ACT_DELETE, "NodeDelete", LS_OBJ_NODE, node, NULL);
}

static void log_cache_error(const ls_error *err)
{
    ls_log_error("Scheduler cache", "err", err->msg);
}

static void apply_pod_add(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (pod->node_name) {
        if (!ls_cache_add_pod(s->policy.env.cache, pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_ADD, "AssignedPodAdd", LS_OBJ_POD, NULL, pod);
        return;
    }
    int32_t profile = ls_config_profile_index(&s->policy.cfg, pod->scheduler_name);
    if (profile < 0) {
        /* Not ours: another scheduler's pod, left alone. */
        if (ls_log_enabled(5)) {
            char who[600];
            ls_log_kobj(who, sizeof who, ls_str_get(pod->ns), ls_str_get(pod->name));
            ls_log_info(5, "Pod is not for this scheduler: no profile for its schedulerName", "pod", who,
                        "schedulerName", ls_str_get(pod->scheduler_name));
        }
        return;
    }
    s->last_change_ms = s->policy.env.clock_ms;
    /* status.nominatedNodeName counts for Filter from the pod's arrival, gated
     * or not: v1.37 stores a pod's nomination before PreEnqueue runs (#139057),
     * so a gated pod holds its room against lower-priority pods. */
    if (pod->nominated_node_name)
        ls_nominator_add(&s->nominator, pod, pod->nominated_node_name);
    ls_squeue_add(s->policy.env.queue, pod, (uint32_t)profile);
}

/* An assigned pod appeared or changed: the cache follows (an assumed pod is
 * confirmed), and pods waiting on other pods may now fit. */
static void assigned_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_error err;
    bool known = ls_cache_pod_node(s->policy.env.cache, new_pod) && !ls_cache_is_assumed(s->policy.env.cache, new_pod);
    if (known && old_pod != new_pod) {
        if (!ls_cache_update_pod(s->policy.env.cache, old_pod, new_pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", ls_pod_update_actions(old_pod, new_pod) & ~LS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                      "AssignedPodUpdate", LS_OBJ_POD, old_pod, new_pod);
        return;
    }
    if (!known && !ls_cache_add_pod(s->policy.env.cache, new_pod, &err))
        log_cache_error(&err);
    ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_ADD, "AssignedPodAdd", LS_OBJ_POD, NULL, new_pod);
}

static void apply_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    if (new_pod->node_name) {
        ls_qpod *qp = ls_squeue_find(s->policy.env.queue, old_pod);
        /* Bound by someone else while queued: no longer ours to schedule. Our own
         * binding's pod is in flight and leaves the queue when its cycle ends. */
        if (qp && qp->where != LS_Q_IN_FLIGHT)
            ls_squeue_delete(s->policy.env.queue, old_pod);
        ls_nominator_delete(&s->nominator, old_pod);
        assigned_pod_update(s, old_pod, new_pod);
        return;
    }
    s->last_change_ms = s->policy.env.clock_ms;
    if (ls_squeue_find(s->policy.env.queue, old_pod))   /* only our pods are nominated */
        ls_nominator_update(&s->nominator, old_pod, new_pod);
    ls_squeue_update(s->policy.env.queue, old_pod, new_pod);
    /* Its nomination moved or went: the room it held on the old node is free,
     * as if a pod there was deleted (upstream's AssignedPodDelete for oldPod). */
    if (old_pod->nominated_node_name && old_pod->nominated_node_name != new_pod->nominated_node_name)
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, old_pod, NULL);
    /* A pod being bound (assumed, or waiting on Permit) may be updated before
     * its binding shows (a status patch): whoever holds it takes the new object,
     * so the source can free the old one. */
    ls_cache_replace_assumed(s->policy.env.cache, old_pod, new_pod);
    ls_waiting_pods_replace(&s->waiting, old_pod, new_pod);
}

static void apply_pod_delete(ls_scheduler *s, const ls_pod *pod)
{
    ls_error err;
    if (ls_cache_pod_node(s->policy.env.cache, pod) && !ls_cache_is_assumed(s->policy.env.cache, pod)) {
        if (!ls_cache_remove_pod(s->policy.env.cache, pod, &err))
            log_cache_error(&err);
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
        return;
    }
    ls_waiting_pods_reject(&s->waiting, pod->id, 0, "pod was deleted while waiting at Permit");
    /* A nominated pod held room on its node for lower-priority pods: its
     * deletion frees it, as upstream's AssignedPodDelete for such a pod. */
    bool held_room = pod->nominated_node_name || ls_nominator_node_of(&s->nominator, pod);
    ls_nominator_delete(&s->nominator, pod);
    ls_qpod *qp = ls_squeue_find(s->policy.env.queue, pod);
    if (qp && qp->where != LS_Q_IN_FLIGHT)
        ls_squeue_delete(s->policy.env.queue, pod);
    s->last_change_ms = s->policy.env.clock_ms;
    if (held_room)
        ls_scheduler_cluster_event(s, "AssignedPod", LS_ACT_DELETE, "AssignedPodDelete", LS_OBJ_POD, pod, NULL);
}

static void apply_object_add(ls_scheduler *s, const ls_object *obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_put(s->policy.env.objects, obj);
    cluster_event_of(s, ls_str_get(obj->kind), LS_ACT_ADD, "ObjectAdd", LS_OBJ_OTHER, NULL, obj,
                     ls_own_writes_take(&s->policy.env.own_writes, obj));
}

static void apply_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_put(s->policy.env.objects, new_obj);
    cluster_event_of(s, ls_str_get(new_obj->kind), LS_ACT_UPDATE, "ObjectUpdate", LS_OBJ_OTHER, old_obj, new_obj,
                     ls_own_writes_take(&s->policy.env.own_writes, new_obj));
}

static void apply_object_delete(ls_scheduler *s, const ls_object *obj)
{
    ls_waiting_pods_poke_pre_bind(&s->waiting);
    ls_object_store_remove(s->policy.env.objects, obj);
    ls_scheduler_cluster_event(s, ls_str_get(obj->kind), LS_ACT_DELETE, "ObjectDelete", LS_OBJ_OTHER, obj, NULL);
}

/* ---- deferred events
 *
 * A binding or a preemption is asked for by a plugin from Lua (through the
 * FFI); the source answers with events (the pod's update, the victim's
 * delete) that run queueing hints and PreEnqueue, i.e. Lua again. LuaJIT does
 * not allow re-entering the state from a C function called by compiled code,
 * so events that arrive during such a call are kept and applied when it
 * returns. */

static bool defer(ls_scheduler *s, event_kind kind, const void *old_obj, const void *new_obj)
{
    if (!s->defer_events)
        return false;
    deferred_event *e = ls_vec_push(&s->policy.env.deferred);
    e->kind = kind;
    e->old_obj = old_obj;
    e->new_obj = new_obj;
    return true;
}

/* Activation found again by id: the pod may have left the queue meanwhile. */
static void apply_activate(ls_scheduler *s, uint32_t pod_id)
{
    const ls_pod probe = {.id = pod_id};
    const ls_qpod *qp = ls_squeue_find(s->policy.env.queue, &probe);
    if (qp)
        ls_squeue_activate(s->policy.env.queue, qp->pod);
}

static void apply(ls_scheduler *s, const deferred_event *e)
{
    switch (e->kind) {
    case EV_ACTIVATE: apply_activate(s, e->pod_id); break;
    case EV_NODE_ADD: apply_node_add(s, e->new_obj); break;
    case EV_NODE_UPDATE: apply_node_update(s, e->old_obj, e->new_obj); break;
    case EV_NODE_DELETE: apply_node_delete(s, e->old_obj); break;
    case EV_POD_ADD: apply_pod_add(s, e->new_obj); break;
    case EV_POD_UPDATE: apply_pod_update(s, e->old_obj, e->new_obj); break;
    case EV_POD_DELETE: apply_pod_delete(s, e->old_obj); break;
    case EV_OBJECT_ADD: apply_object_add(s, e->new_obj); break;
    case EV_OBJECT_UPDATE: apply_object_update(s, e->old_obj, e->new_obj); break;
    case EV_OBJECT_DELETE: apply_object_delete(s, e->old_obj); break;
    }
}

void ls_scheduler_apply_deferred(ls_scheduler *s)
{
    for (uint32_t i = 0; i < s->policy.env.deferred.len; i++) {
        deferred_event e = LS_VEC_AT(&s->policy.env.deferred, deferred_event, i);
        apply(s, &e);
    }
    s->policy.env.deferred.len = 0;
}

void ls_scheduler_on_node_add(ls_scheduler *s, const ls_node *node)
{
    if (!defer(s, EV_NODE_ADD, NULL, node))
        apply_node_add(s, node);
}

void ls_scheduler_on_node_update(ls_scheduler *s, const ls_node *old_node, const ls_node *new_node)
{
    if (!defer(s, EV_NODE_UPDATE, old_node, new_node))
        apply_node_update(s, old_node, new_node);
}

void ls_scheduler_on_node_delete(ls_scheduler *s, const ls_node *node)
{
    if (!defer(s, EV_NODE_DELETE, node, NULL))
        apply_node_delete(s, node);
}

void ls_scheduler_on_pod_add(ls_scheduler *s, const ls_pod *pod)
{
    if (!defer(s, EV_POD_ADD, NULL, pod))
        apply_pod_add(s, pod);
}

void ls_scheduler_on_pod_update(ls_scheduler *s, const ls_pod *old_pod, const ls_pod *new_pod)
{
    if (!defer(s, EV_POD_UPDATE, old_pod, new_pod))
        apply_pod_update(s, old_pod, new_pod);
}

void ls_scheduler_on_pod_delete(ls_scheduler *s, const ls_pod *pod)
{
    if (!defer(s, EV_POD_DELETE, pod, NULL))
        apply_pod_delete(s, pod);
}

/* A deferred object event still updates the store at once: a plugin that
 * wrote through the API (VolumeBinding's PreBind) reads the answer of the
 * embedded cluster's controllers in the same call; the queue hears of it when
 * the deferred event is applied (putting the same object again is a no-op). */
void ls_scheduler_on_object_add(ls_scheduler *s, const ls_object *obj)
{
    if (defer(s, EV_OBJECT_ADD, NULL, obj))
        ls_object_store_put(s->policy.env.objects, obj);
    else
        apply_object_add(s, obj);
}

void ls_scheduler_on_object_update(ls_scheduler *s, const ls_object *old_obj, const ls_object *new_obj)
{
    if (defer(s, EV_OBJECT_UPDATE, old_obj, new_obj))
        ls_object_store_put(s->policy.env.objects, new_obj);
    else
        apply_object_update(s, old_obj, new_obj);
}

void ls_scheduler_on_object_delete(ls_scheduler *s, const ls_object *obj)
{
    if (defer(s, EV_OBJECT_DELETE, obj, NULL))
        ls_object_store_remove(s->policy.env.objects, obj);
    else
        apply_object_delete(s, obj);
}

