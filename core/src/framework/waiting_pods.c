/*
 * waiting_pods.c: see waiting_pods.h.
 */
#include "framework/waiting_pods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_waiting_pods_init(ls_waiting_pods *w)
{
    ls_vec_init(&w->items, sizeof(ls_waiting_pod *));
}

void ls_waiting_pods_free(ls_waiting_pods *w)
{
    for (uint32_t i = 0; i < w->items.len; i++)
        free(LS_VEC_AT(&w->items, ls_waiting_pod *, i));
    ls_vec_free(&w->items);
}

void ls_waiting_pods_add(ls_waiting_pods *w, const ls_pod *pod, uint32_t profile, const ls_cycle *c,
                         uint64_t now_ms)
{
    ls_waiting_pod *wp = ls_xcalloc(1, sizeof *wp);
    wp->pod = pod;
    wp->profile = profile;
    wp->node = c->selected_node;
    wp->since_ms = now_ms;
    wp->n_plugins = c->num_waiting_plugins;
    for (uint32_t i = 0; i < wp->n_plugins; i++) {
        wp->plugins[i] = c->waiting_plugins[i];
        wp->timeout_ms[i] = (uint64_t)c->waiting_timeout_ms[i];
        wp->deadline_ms[i] = now_ms + wp->timeout_ms[i];
    }
    *(ls_waiting_pod **)ls_vec_push(&w->items) = wp;
    w->changes++;
}

void ls_waiting_pods_add_pre_bind(ls_waiting_pods *w, const ls_pod *pod, uint32_t profile, ls_str node,
                                  uint64_t now_ms, uint64_t poll_ms, uint64_t since_ms)
{
    ls_waiting_pod *wp = ls_xcalloc(1, sizeof *wp);
    wp->since_ms = since_ms;
    wp->pod = pod;
    wp->profile = profile;
    wp->node = node;
    wp->at_pre_bind = true;
    wp->n_plugins = 1;
    wp->plugins[0] = ls_intern_cstr("PreBind");
    wp->timeout_ms[0] = poll_ms;
    wp->deadline_ms[0] = now_ms + poll_ms;
    *(ls_waiting_pod **)ls_vec_push(&w->items) = wp;
    w->changes++;
}

void ls_waiting_pods_poke_pre_bind(ls_waiting_pods *w)
{
    for (uint32_t i = 0; i < w->items.len; i++) {
        ls_waiting_pod *wp = LS_VEC_AT(&w->items, ls_waiting_pod *, i);
        if (wp->at_pre_bind) {
            wp->allowed[0] = true;
            w->changes++;
        }
    }
}

ls_waiting_pod *ls_waiting_pods_find(ls_waiting_pods *w, uint32_t pod_id)
{
    for (uint32_t i = 0; i < w->items.len; i++) {
        ls_waiting_pod *wp = LS_VEC_AT(&w->items, ls_waiting_pod *, i);
        if (wp->pod->id == pod_id)
            return wp;
    }
    return NULL;
}

bool ls_waiting_pods_allow(ls_waiting_pods *w, uint32_t pod_id, ls_str plugin)
{
    ls_waiting_pod *wp = ls_waiting_pods_find(w, pod_id);
    if (!wp || wp->rejected)
        return false;
    for (uint32_t i = 0; i < wp->n_plugins; i++)
        if (wp->plugins[i] == plugin)
            wp->allowed[i] = true;
    w->changes++;
    return true;
}

bool ls_waiting_pods_reject(ls_waiting_pods *w, uint32_t pod_id, ls_str plugin, const char *msg)
{
    ls_waiting_pod *wp = ls_waiting_pods_find(w, pod_id);
    if (!wp || wp->rejected)
        return false;
    wp->rejected = true;
    wp->rejected_by = plugin;
    w->changes++;
    snprintf(wp->message, sizeof wp->message, "%s", msg);
    return true;
}

bool ls_waiting_pods_preempt(ls_waiting_pods *w, const ls_pod *pod, ls_str plugin)
{
    ls_waiting_pod *wp = ls_waiting_pods_find(w, pod->id);
    if (!wp || wp->pod != pod || wp->rejected)
        return false;
    wp->rejected = wp->preempted = true;
    wp->rejected_by = plugin;
    w->changes++;
    /* Permit: WaitOnPermit's error for the Error status Preempt sends
     * ("preempted"); PreBind: the cause CancelPod gives the binding. */
    if (wp->at_pre_bind)
        snprintf(wp->message, sizeof wp->message, "preempted by %s", ls_str_get(plugin));
    else
        snprintf(wp->message, sizeof wp->message, "waiting on permit for pod: preempted");
    return true;
}

void ls_format_duration(uint64_t ms, char *buf, size_t len)
{
    if (ms == 0) {
        snprintf(buf, len, "0s");
    } else if (ms < 1000) {
        snprintf(buf, len, "%llums", (unsigned long long)ms);
    } else {
        uint64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
        char secs[32];
        if (frac) {
            snprintf(secs, sizeof secs, "%llu.%03llu", (unsigned long long)s, (unsigned long long)frac);
            size_t n = strlen(secs);
            while (secs[n - 1] == '0')
                secs[--n] = '\0';
        } else {
            snprintf(secs, sizeof secs, "%llu", (unsigned long long)s);
        }
        if (h)
            snprintf(buf, len, "%lluh%llum%ss", (unsigned long long)h, (unsigned long long)m, secs);
        else if (m)
            snprintf(buf, len, "%llum%ss", (unsigned long long)m, secs);
        else
            snprintf(buf, len, "%ss", secs);
    }
}

void ls_waiting_pods_expire(ls_waiting_pods *w, uint64_t now_ms)
{
    for (uint32_t i = 0; i < w->items.len; i++) {
        ls_waiting_pod *wp = LS_VEC_AT(&w->items, ls_waiting_pod *, i);
        if (wp->rejected)
            continue;
        int first = -1;
        for (uint32_t k = 0; k < wp->n_plugins; k++)
            if (!wp->allowed[k] && wp->deadline_ms[k] <= now_ms &&
                (first < 0 || wp->deadline_ms[k] < wp->deadline_ms[first]))
                first = (int)k;
        if (first < 0)
            continue;
        w->changes++;
        if (wp->at_pre_bind) {   /* the poll is due: PreBind decides, not a timeout */
            wp->allowed[first] = true;
            continue;
        }
        char dur[64];
        ls_format_duration(wp->timeout_ms[first], dur, sizeof dur);
        wp->rejected = wp->timed_out = true;
        wp->rejected_by = wp->plugins[first];
        snprintf(wp->message, sizeof wp->message, "rejected due to timeout after waiting %s at plugin %s", dur,
                 ls_str_get(wp->plugins[first]));
    }
}

bool ls_waiting_pods_next_deadline(const ls_waiting_pods *w, uint64_t *deadline_ms)
{
    bool any = false;
    for (uint32_t i = 0; i < w->items.len; i++) {
        const ls_waiting_pod *wp = LS_VEC_AT(&w->items, ls_waiting_pod *, i);
        for (uint32_t k = 0; !wp->rejected && k < wp->n_plugins; k++) {
            if (wp->allowed[k] || (any && wp->deadline_ms[k] >= *deadline_ms))
                continue;
            *deadline_ms = wp->deadline_ms[k];
            any = true;
        }
    }
    return any;
}

static bool resolved(const ls_waiting_pod *wp)
{
    if (wp->rejected)
        return true;
    for (uint32_t k = 0; k < wp->n_plugins; k++)
        if (!wp->allowed[k])
            return false;
    return true;
}

ls_waiting_pod *ls_waiting_pods_take_resolved(ls_waiting_pods *w)
{
    for (uint32_t i = 0; i < w->items.len; i++) {
        ls_waiting_pod *wp = LS_VEC_AT(&w->items, ls_waiting_pod *, i);
        if (!resolved(wp))
            continue;
        memmove(&LS_VEC_AT(&w->items, ls_waiting_pod *, i), &LS_VEC_AT(&w->items, ls_waiting_pod *, i + 1),
                (w->items.len - i - 1) * sizeof(ls_waiting_pod *));
        w->items.len--;
        w->changes++;
        return wp;
    }
    return NULL;
}

uint32_t ls_waiting_pods_count(const ls_waiting_pods *w)
{
    return w->items.len;
}

ls_waiting_pod *ls_waiting_pods_at(const ls_waiting_pods *w, uint32_t i)
{
    return i < w->items.len ? LS_VEC_AT(&w->items, ls_waiting_pod *, i) : NULL;
}

void ls_waiting_pods_replace(ls_waiting_pods *w, const ls_pod *old_pod, const ls_pod *new_pod)
{
    ls_waiting_pod *wp = ls_waiting_pods_find(w, old_pod->id);
    if (wp && wp->pod == old_pod) {
        wp->pod = new_pod;
        w->changes++;
    }
}
