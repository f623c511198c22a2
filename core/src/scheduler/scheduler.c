/*
 * scheduler.c: the scheduler's lifetime. It builds and frees the environment
 * its attempts run in (attempt.h) and the running attempt; the run loop pops
 * pods, runs their attempts (cycle.c), lets the shadow evaluate beside them
 * (shadow.c), issues the preemptions they chose (preemption.c), and in a
 * simulation moves the virtual clock to the next backoff expiry, flush,
 * Permit deadline or timeline change when there is nothing to do. The
 * cluster's events are scheduler_events.c's; the reload, reload.c's.
 */
#include "scheduler/scheduler_internal.h"
#include "scheduler/cycle.h"
#include "scheduler/extender_cycle.h"
#include "scheduler/own_writes.h"
#include "scheduler/preemption.h"
#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- queue callbacks */

static uint64_t virtual_now(void *ud)
{
    return ((ls_scheduler *)ud)->policy.env.clock_ms;
}

static int queue_pre_enqueue(void *ud, const ls_pod *pod, uint32_t profile, ls_str *plugin, uint32_t *status)
{
    ls_scheduler *s = ud;
    if (!s->policy.cfg.profiles[profile].plugins[LS_EP_PRE_ENQUEUE].len)
        return LS_SUCCESS;
    int code = ls_lua_pre_enqueue(s->policy.env.lua, profile, pod);
    if (code != LS_SUCCESS) {
        const ls_vec *list = &s->policy.cfg.profiles[profile].plugins[LS_EP_PRE_ENQUEUE];
        int16_t i = s->policy.attempt.cycle.status_plugin;
        *plugin = i >= 0 && (uint32_t)i < list->len ? LS_VEC_AT(list, ls_plugin_ref, i).name : 0;
        *status = s->policy.attempt.cycle.status;
    }
    return code;
}

static double queue_sort_key(void *ud, const ls_pod *pod, uint32_t profile)
{
    ls_scheduler *s = ud;
    return ls_lua_sort_key(s->policy.env.lua, profile, pod);
}

static bool queue_less(void *ud, const ls_pod *a, const ls_pod *b, uint32_t profile)
{
    return ls_lua_less(((ls_scheduler *)ud)->policy.env.lua, profile, a, b);
}

static int queue_hint(void *ud, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    return ls_lua_hint(((ls_scheduler *)ud)->policy.env.lua, hint, pod, ev);
}

/* ---- construction */

static void build_queue(ls_scheduler *s, const ls_event_registration *regs, uint32_t n_regs)
{
    ls_queue_options qo = {
        .initial_backoff_ms = (uint64_t)s->policy.cfg.pod_initial_backoff_seconds * 1000,
        .max_backoff_ms = (uint64_t)s->policy.cfg.pod_max_backoff_seconds * 1000,
        .max_unschedulable_ms = 5 * 60 * 1000,
    };
    ls_queue_callbacks cb = {.ud = s, .now_ms = virtual_now, .pre_enqueue = queue_pre_enqueue,
                             .sort_key = queue_sort_key, .hint = queue_hint,
                             .less = ls_lua_sort_uses_less(s->policy.env.lua) ? queue_less : NULL};
    s->policy.env.queue = ls_squeue_new(&qo, &cb);
    ls_squeue_set_registrations(s->policy.env.queue, regs, n_regs);
}

/* ---- the environment the attempts run in: the stages' effects that cannot
 * wait for the end of the stage come back here through fx */

static void fx_begin_deferral(void *ud)
{
    ((ls_scheduler *)ud)->defer_events++;
}

static void fx_end_deferral(void *ud)
{
    ((ls_scheduler *)ud)->defer_events--;
}

static void fx_apply_deferred(void *ud)
{
    ls_scheduler_apply_deferred(ud);
}

static void fx_cluster_event(void *ud, const char *resource, uint32_t actions, const char *label, uint8_t type,
                             const void *old_obj, const void *new_obj)
{
    ls_scheduler_cluster_event(ud, resource, actions, label, type, old_obj, new_obj);
}

static void fx_refresh_snapshot(void *ud)
{
    ls_scheduler_refresh_snapshot(ud);
}

/* The cluster side of the policy's environment, owned here. */
static void init_env(ls_scheduler *s)
{
    ls_sched_env *e = &s->policy.env;
    e->src = &s->src;
    e->owner = s;
    e->waiting = &s->waiting;
    e->nominator = &s->nominator;
    e->metrics = &s->metrics;
    ls_vec_init(&e->own_writes, sizeof(ls_own_write));
    e->cache = ls_cache_new();
    e->snapshot = ls_snapshot_new();
    e->objects = ls_object_store_new();
    e->fx = (ls_sched_effects){.ud = s,
                               .begin_deferral = fx_begin_deferral,
                               .end_deferral = fx_end_deferral,
                               .apply_deferred = fx_apply_deferred,
                               .cluster_event = fx_cluster_event,
                               .refresh_snapshot = fx_refresh_snapshot};
}

ls_scheduler *ls_scheduler_new(ls_config *cfg, const ls_sched_options *opt, const ls_sched_source *src,
                               ls_error *err)
{
    ls_scheduler *s = ls_xcalloc(1, sizeof *s);
    ls_policy_init(&s->policy, cfg, opt);
    s->src = *src;
    ls_waiting_pods_init(&s->waiting);
    ls_nominator_init(&s->nominator);
    init_env(s);
    s->policy.attempt.cycle.objects = s->policy.env.objects;
    ls_event_registration *regs;
    uint32_t n_regs;
    if (!ls_policy_load(&s->policy, &regs, &n_regs, err)) {
        ls_scheduler_free(s);
        return NULL;
    }
    build_queue(s, regs, n_regs);
    free(regs);
    return s;
}

void ls_scheduler_free(ls_scheduler *s)
{
    if (!s)
        return;
    ls_shadow_free(s->shadow);
    ls_policy_free(&s->policy);   /* closes the Lua runtime before the objects its plugins saw */
    ls_cache_free(s->policy.env.cache);
    ls_snapshot_free(s->policy.env.snapshot);
    ls_object_store_free(s->policy.env.objects);
    ls_squeue_free(s->policy.env.queue);
    ls_waiting_pods_free(&s->waiting);
    ls_nominator_free(&s->nominator);
    ls_vec_free(&s->policy.env.own_writes);
    free(s);
}

/* ---- the loop */

bool ls_scheduler_schedule_one(ls_scheduler *s)
{
    ls_qpod *qp = ls_squeue_pop(s->policy.env.queue);
    if (!qp)
        return false;
    if (qp->pod->deletion_ns) {
        ls_attempt_skip_deleting(&s->policy.env, &s->policy.attempt, qp);
        return true;
    }
    if (s->metrics.registry)
        s->policy.attempt.attempt_start_ns = ls_sched_metrics_clock_ns();
    s->policy.env.cycles_started++;
    const ls_pod *pod = qp->pod;   /* qp may be gone after its cycle; the pod object is not */
    ls_attempt_schedule_pod(&s->policy.env, &s->policy.attempt, qp);
    if (s->shadow)
        ls_shadow_after_attempt(s->shadow, &s->policy.env, &s->policy.attempt, pod);
    ls_scheduler_apply_deferred(s);
    ls_attempt_issue_preemptions(&s->policy.env, &s->policy.attempt);
    return true;
}

/* The earliest time something timed will happen; false when nothing will. */
static bool next_wakeup(ls_scheduler *s, uint64_t *at)
{
    bool any = false;
    uint64_t t;
    *at = UINT64_MAX;
    if (s->src.next_change_ms && s->src.next_change_ms(s->src.ud, &t) && t < *at) {
        *at = t;
        any = true;
    }
    if (ls_waiting_pods_next_deadline(&s->waiting, &t) && t < *at) {
        *at = t;
        any = true;
    }
    /* Retries only matter while the cluster changed since the pods last tried
     * (or a timeline or waiting pod will change it): otherwise the run is done. */
    if ((any || !ls_squeue_settled(s->policy.env.queue, s->last_change_ms)) && ls_squeue_next_wakeup(s->policy.env.queue, &t) &&
        t < *at) {
        *at = t;
        any = true;
    }
    return any;
}

uint64_t ls_scheduler_run(ls_scheduler *s)
{
    uint64_t n = 0;
    for (;;) {
        while (ls_scheduler_schedule_one(s)) {
            n++;
            ls_attempt_resolve_waiting(&s->policy.env, &s->policy.attempt);
        }
        uint64_t at;
        if (!next_wakeup(s, &at))
            break;
        if (at > s->policy.env.clock_ms)
            s->policy.env.clock_ms = at;
        if (s->src.advance_to)
            s->src.advance_to(s->src.ud, s->policy.env.clock_ms);
        ls_squeue_flush(s->policy.env.queue);
        ls_waiting_pods_expire(&s->waiting, s->policy.env.clock_ms);
        ls_attempt_resolve_waiting(&s->policy.env, &s->policy.attempt);
    }
    return n;
}

/* ---- the real-time loop */

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void advance_clock(ls_scheduler *s, uint64_t now)
{
    if (s->metrics.registry && now >= s->metrics.published_ms + 250) {
        s->metrics.published_ms = now;
        ls_scheduler_publish_metrics(s);
    }
    if (now > s->policy.env.clock_ms)
        s->policy.env.clock_ms = now;
    if (s->src.advance_to)
        s->src.advance_to(s->src.ud, s->policy.env.clock_ms);
    ls_squeue_flush(s->policy.env.queue);
    ls_waiting_pods_expire(&s->waiting, s->policy.env.clock_ms);
    ls_attempt_resolve_waiting(&s->policy.env, &s->policy.attempt);
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t ls_scheduler_run_realtime(ls_scheduler *s, const ls_run_control *ctl)
{
    enum { IDLE_POLL_MS = 20 };
    uint64_t n = 0, start = wall_ms() - s->policy.env.clock_ms;
    while (!(ctl->stop && *ctl->stop)) {
        if (ctl->progress)
            ctl->progress(ctl->progress_ud, monotonic_ms(), ls_squeue_size(s->policy.env.queue));
        bool forced = ctl->reload && *ctl->reload;
        if (forced)
            *ctl->reload = 0;
        ls_scheduler_reload_if_changed(s, forced);
        ls_shadow_reload_if_changed(s->shadow, forced);   /* a shadow without a file is never reloaded */
        advance_clock(s, wall_ms() - start);
        if (ls_scheduler_schedule_one(s)) {
            n++;
            ls_attempt_resolve_waiting(&s->policy.env, &s->policy.attempt);
            continue;
        }
        uint64_t at;
        if (!next_wakeup(s, &at) && !ctl->hold)
            break;
        uint64_t now = wall_ms() - start;
        uint64_t wait = at > now ? at - now : 0;
        if (wait > IDLE_POLL_MS || !next_wakeup(s, &at))
            wait = IDLE_POLL_MS;
        if (s->src.wait) {
            s->src.wait(s->src.ud, wait);
            continue;
        }
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return n;
}

/* ---- metrics */

static void queue_incoming(void *ud, ls_qwhere queue, const char *event)
{
    ls_sched_metrics_incoming(&((ls_scheduler *)ud)->metrics, queue, event);
}

void ls_scheduler_set_metrics(ls_scheduler *s, struct ls_metrics *registry)
{
    ls_sched_metrics_attach(&s->metrics, registry);
    if (s->shadow)
        ls_shadow_attach_metrics(s->shadow, registry);
    ls_squeue_set_incoming(s->policy.env.queue, registry ? queue_incoming : NULL);
    ls_scheduler_publish_metrics(s);
}

static void publish_fault_row(void *ud, const ls_fault_tally_row *row)
{
    ls_sched_metrics_faults(ud, row->profile, row->plugin, row->point, row->overruns, row->restarts);
}

void ls_scheduler_publish_faults(ls_scheduler *s, ls_lua *lua)
{
    if (s->metrics.registry)
        ls_lua_drain_faults(lua, publish_fault_row, &s->metrics);
}

void ls_scheduler_publish_metrics(ls_scheduler *s)
{
    if (!s->metrics.registry)
        return;
    ls_queue_gauges q = ls_scheduler_queue_gauges(s);
    ls_fault_counts f = ls_scheduler_faults(s);
    ls_sched_gauges g = {.active = q.active, .backoff = q.backoff, .unschedulable = q.unschedulable,
                         .gated = q.gated, .nodes = ls_cache_node_count(s->policy.env.cache),
                         .pods = ls_cache_pod_count(s->policy.env.cache), .assumed_pods = ls_cache_assumed_count(s->policy.env.cache),
                         .error_attempts = f.error_attempts, .hint_errors = f.hint_errors};
    ls_sched_metrics_publish(&s->metrics, &g);
    ls_scheduler_publish_faults(s, s->policy.env.lua);
    for (uint32_t i = 0; i < s->policy.cfg.n_profiles; i++)   /* at start and after a reload */
        ls_sched_metrics_profile(&s->metrics, ls_str_get(s->policy.cfg.profiles[i].scheduler_name));
    for (uint32_t i = 0; i < s->policy.cfg.n_profiles && i < ls_lua_state_count(s->policy.env.lua); i++)
        ls_sched_metrics_lua_memory(&s->metrics, ls_str_get(s->policy.cfg.profiles[i].scheduler_name),
                                    ls_lua_profile_memory(s->policy.env.lua, i));
}

/* ---- introspection */

const ls_config *ls_scheduler_config(const ls_scheduler *s)
{
    return &s->policy.cfg;
}

const ls_profile *ls_scheduler_profile(const ls_scheduler *s, uint32_t i)
{
    return i < s->policy.cfg.n_profiles ? &s->policy.cfg.profiles[i] : NULL;
}

const ls_cache *ls_scheduler_cache(const ls_scheduler *s)
{
    return s->policy.env.cache;
}

uint32_t ls_scheduler_custom_resources(const ls_scheduler *s, const char **out, uint32_t cap)
{
    uint32_t n_regs, n = 0;
    const ls_event_registration *regs = ls_squeue_registrations(s->policy.env.queue, &n_regs);
    for (uint32_t i = 0; i < n_regs; i++) {
        const char *name = ls_str_get(regs[i].resource);
        if (!strchr(name, '.'))
            continue;
        bool seen = false;
        for (uint32_t k = 0; k < n && !seen; k++)
            seen = strcmp(out[k], name) == 0;
        if (!seen && n < cap)
            out[n++] = name;
    }
    return n;
}

uint32_t ls_scheduler_custom_uses(const ls_scheduler *s, ls_custom_use *out, uint32_t cap)
{
    uint32_t n_regs, n = 0;
    const ls_event_registration *regs = ls_squeue_registrations(s->policy.env.queue, &n_regs);
    for (uint32_t i = 0; i < n_regs; i++) {
        const char *resource = ls_str_get(regs[i].resource), *plugin = ls_str_get(regs[i].plugin);
        if (!strchr(resource, '.'))
            continue;
        bool seen = false;
        for (uint32_t k = 0; k < n && !seen; k++)
            seen = out[k].profile == regs[i].profile && out[k].plugin == plugin && out[k].resource == resource;
        if (!seen && n < cap)
            out[n++] = (ls_custom_use){regs[i].profile, plugin, resource};
    }
    return n;
}

uint64_t ls_scheduler_cycles(const ls_scheduler *s)
{
    return s->policy.env.cycles_started;
}

uint64_t ls_scheduler_snapshot_epoch(const ls_scheduler *s)
{
    return s->snapshot_epoch;
}

ls_sched_env *ls_scheduler_env(ls_scheduler *s)
{
    return &s->policy.env;
}

ls_attempt_state *ls_scheduler_attempt(ls_scheduler *s)
{
    return &s->policy.attempt;
}

void ls_scheduler_refresh_snapshot(ls_scheduler *s)
{
    ls_cache_update_snapshot(s->policy.env.cache, s->policy.env.snapshot);
    s->snapshot_epoch++;
}

bool ls_scheduler_holds_event_objects(const ls_scheduler *s)
{
    return ls_squeue_in_flight_events(s->policy.env.queue) > 0;
}

uint32_t ls_scheduler_pending(const ls_scheduler *s)
{
    return ls_squeue_size(s->policy.env.queue);
}

uint64_t ls_scheduler_now_ms(const ls_scheduler *s)
{
    return s->policy.env.clock_ms;
}

size_t ls_scheduler_lua_memory(const ls_scheduler *s)
{
    return ls_lua_memory(s->policy.env.lua);
}

ls_pod_queue_state ls_scheduler_pod_state(const ls_scheduler *s, const ls_pod *pod)
{
    ls_pod_queue_state st = {0};
    const ls_qpod *qp = ls_squeue_find(s->policy.env.queue, pod);
    if (!qp)
        return st;
    st.known = true;
    st.gated = qp->gated;
    st.gate_message = qp->gated ? ls_status_get(qp->gate_status)->message : NULL;
    st.pre_enqueue_error = qp->pre_enqueue_errors ? ls_status_get(qp->gate_status)->message : NULL;
    st.attempts = qp->attempts;
    return st;
}

ls_fault_counts ls_scheduler_faults(const ls_scheduler *s)
{
    return (ls_fault_counts){s->policy.env.error_attempts, ls_policy_budget_overruns(&s->policy),
                             ls_policy_restarts(&s->policy), ls_policy_hint_errors(&s->policy)};
}

ls_event_stats ls_scheduler_event_stats(const ls_scheduler *s)
{
    return ls_squeue_event_counts(s->policy.env.queue);
}

uint32_t ls_scheduler_event_stats_by_label(const ls_scheduler *s, ls_event_label_stats *out, uint32_t cap)
{
    uint32_t n = ls_squeue_event_counts_by_label(s->policy.env.queue, out, cap);
    return n < cap ? n : cap;
}

ls_queue_gauges ls_scheduler_queue_gauges(const ls_scheduler *s)
{
    ls_queue_counts c = ls_squeue_counts(s->policy.env.queue);
    return (ls_queue_gauges){c.active, c.backoff, c.unschedulable, c.gated};
}
/* ---- the extenders, for output */

uint32_t ls_scheduler_num_extenders(const ls_scheduler *s)
{
    return ls_extenders_count(s->policy.env.extenders);
}

const char *ls_scheduler_extender_name(const ls_scheduler *s, uint32_t e)
{
    return ls_extenders_name(s->policy.env.extenders, e);
}

const char *ls_scheduler_extender_verdict(const ls_scheduler *s, uint32_t node_index)
{
    return ls_extenders_verdict(s->policy.env.extenders, node_index);
}

bool ls_scheduler_extender_score(const ls_scheduler *s, uint32_t e, uint32_t i, int64_t *raw, int64_t *final)
{
    return ls_extenders_score(s->policy.env.extenders, e, i, raw, final);
}

/* ---- the wrappers of the public API around the stages */

void ls_scheduler_bind_failed(ls_scheduler *s, const ls_pod *pod, const char *message)
{
    ls_attempt_bind_failed(&s->policy.env, &s->policy.attempt, pod, message);
}

void ls_scheduler_forget_assumed(ls_scheduler *s, const ls_pod *pod)
{
    ls_attempt_forget_assumed(&s->policy.env, pod);
}

void ls_scheduler_preemption_failed(ls_scheduler *s, const ls_pod *preemptor, const char *message)
{
    ls_attempt_preemption_failed(&s->policy.env, preemptor, message);
}

/* ---- shadow policies: the candidate's own policy and attempt (shadow.c) */

bool ls_scheduler_set_shadow(ls_scheduler *s, ls_config *cfg, const ls_sched_options *opt, const char *watch_path,
                             ls_error *err)
{
    ls_shadow *sh = ls_shadow_new(cfg, opt, watch_path, s->metrics.registry, err);
    if (!sh)
        return false;
    ls_shadow_free(s->shadow);
    s->shadow = sh;
    return true;
}

uint32_t ls_scheduler_shadow_stats(const ls_scheduler *s, ls_shadow_stats *out, uint32_t cap)
{
    return ls_shadow_stats_of(s->shadow, out, cap);
}
