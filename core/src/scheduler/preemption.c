/*
 * preemption.c: asynchronous preemption, as upstream's SchedulerAsyncPreemption
 * (beta, on by default since v1.33). DefaultPreemption's PostFilter only
 * chooses the victims (ls_cycle_preempt records them); their deletions are
 * issued after the scheduling cycle, outside it, so the cycle and the pods
 * behind it are not held up by API calls. While they are being issued the
 * preemptor is "preempting": DefaultPreemption's PreEnqueue keeps it out of
 * activeQ and it starts no second preemption. As upstream, it stops
 * preempting before the last deletion is issued, so that the last victim's
 * deletion event can move it. A deletion that fails stops the rest, clears
 * the preemptor's nomination (the room it would have had is not coming) and
 * moves it to activeQ (upstream's Activate after a failed preemption
 * goroutine). In a simulation everything happens at the cycle's virtual time,
 * in victim order: runs stay deterministic.
 *
 * A victim that is not bound yet, waiting in Permit or in PreBind, is not
 * deleted (upstream v1.36+, #135719 and #135502): it is rejected in memory
 * with an Error status ("waiting on permit for pod: preempted", or "preempted
 * by <plugin>" for PreBind), so its binding cycle fails, the room it held is
 * given back at once (AssignedPodDelete, as upstream's binding-cycle error
 * handling moves the pods) and it backs off instead of waiting in
 * unschedulablePods. No deletion event follows such a victim, so the
 * preemptor is activated once it is gone (upstream's explicit Activate).
 */
#include "scheduler/preemption.h"
#include "scheduler/cycle.h"
#include "scheduler/plugin_services.h"
#include "luasched/log.h"

#include <stdio.h>
#include <string.h>

static bool is_preempting(const ls_sched_env *e, const ls_pod *pod)
{
    return ls_map_get(&e->preempting, pod->id + 1) != NULL;
}

bool ls_cycle_preempting(const ls_cycle *cycle, const ls_pod *pod)
{
    const ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    return e && pod && e->preempting.len && is_preempting(e, pod);
}

static void stop_preempting(ls_sched_env *e, const ls_pod *pod)
{
    if (!ls_map_remove(&e->preempting, pod->id + 1))
        return;
    /* Rejected by PreEnqueue meanwhile: PreEnqueue decides again now. */
    ls_qpod *qp = ls_squeue_find(e->queue, pod);
    if (qp && qp->gated)
        ls_squeue_activate(e->queue, pod);
}

int ls_cycle_preempt(const ls_cycle *cycle, const ls_pod *victim, ls_str node, char *errbuf, size_t errlen)
{
    ls_attempt_state *a = cycle ? cycle->owner : NULL;
    ls_sched_env *e = a ? a->env : NULL;
    if (!e || !e->src->preempt) {
        snprintf(errbuf, errlen, "no cluster is attached to evict pod %s/%s", ls_str_get(victim->ns),
                 ls_str_get(victim->name));
        return -1;
    }
    if (!ls_env_plugin_write(e, errbuf, errlen))
        return -1;
    ls_critical_enter();
    if (a->preemptor && (a->preemptor != cycle->pod || a->preempt_node != node)) {
        ls_critical_leave();
        snprintf(errbuf, errlen, "pod %s/%s: victims on another node were already chosen in this cycle",
                 ls_str_get(cycle->pod->name), ls_str_get(victim->name));
        return -1;
    }
    a->preemptor = cycle->pod;
    a->preempt_node = node;
    const ls_vec *post = &e->cfg->profiles[cycle->profile].plugins[LS_EP_POST_FILTER];
    a->preempt_plugin = cycle->running_plugin >= 0 && (uint32_t)cycle->running_plugin < post->len
                            ? LS_VEC_AT(post, ls_plugin_ref, cycle->running_plugin).name
                            : ls_intern_cstr("DefaultPreemption");
    ls_map_put(&e->preempting, cycle->pod->id + 1, (void *)1);
    *(const ls_pod **)ls_vec_push(&a->victims) = victim;
    ls_critical_leave();
    return 0;
}

/* The victim's DisruptionTarget condition and delete, through the source. */
static bool issue_deletion(ls_sched_env *e, const ls_pod *preemptor, const ls_pod *victim, ls_str node,
                           ls_error *err)
{
    int32_t profile = ls_config_profile_index(e->cfg, preemptor->scheduler_name);
    const char *who = profile >= 0 ? ls_str_get(e->cfg->profiles[profile].scheduler_name) : "default-scheduler";
    char message[300];
    snprintf(message, sizeof message, "%s: preempting to accommodate a higher priority pod", who);
    return e->src->preempt(e->src->ud, victim, preemptor, node, message, err);
}

void ls_attempt_preemption_failed(ls_sched_env *e, const ls_pod *preemptor, const char *message)
{
    char who[600];
    snprintf(who, sizeof who, "%s/%s", ls_str_get(preemptor->ns), ls_str_get(preemptor->name));
    ls_log_error("Error occurred during async preemption", "pod", who, "err", message);
    stop_preempting(e, preemptor);
    bool nominated = ls_nominator_node_of(e->nominator, preemptor) || preemptor->nominated_node_name;
    ls_nominator_delete(e->nominator, preemptor);
    if (nominated && e->src->clear_nomination)
        e->src->clear_nomination(e->src->ud, preemptor);
    ls_squeue_activate(e->queue, preemptor);
}

void ls_attempt_issue_preemptions(ls_sched_env *e, ls_attempt_state *a)
{
    const ls_pod *preemptor = a->preemptor;
    if (!preemptor)
        return;
    ls_str node = a->preempt_node;
    uint32_t n = a->victims.len;
    /* The list is the attempt's record too: copied, since the deletions'
     * events may start nothing that reuses it, but keep it intact anyway. */
    const ls_pod *const *victims = a->victims.data;
    a->preemptor = NULL;
    a->preempt_node = 0;
    bool in_memory = false;
    for (uint32_t i = 0; i < n; i++) {
        if (i == n - 1)
            stop_preempting(e, preemptor);
        if (ls_waiting_pods_preempt(e->waiting, victims[i], a->preempt_plugin)) {
            in_memory = true;
            continue;
        }
        ls_error err;
        if (!issue_deletion(e, preemptor, victims[i], node, &err)) {
            ls_attempt_preemption_failed(e, preemptor, err.msg);
            return;
        }
    }
    stop_preempting(e, preemptor);
    if (!in_memory)
        return;
    ls_attempt_resolve_waiting(e, a);   /* the rejected victims give their room back */
    ls_squeue_activate(e->queue, preemptor);
}
