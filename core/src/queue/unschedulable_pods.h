/*
 * unschedulable_pods.h: the pods that wait for a cluster event (upstream's
 * unschedulablePods), filed by the plugins that rejected them, so that an
 * event visits only the pods whose rejector plugins registered it instead of
 * every queued pod. A bucket is one (profile, plugin) pair that registered
 * events; a pod rejected by a plugin that registered nothing is in no bucket
 * and only the periodic flush (or a wildcard event) moves it.
 */
#ifndef LS_UNSCHEDULABLE_PODS_H
#define LS_UNSCHEDULABLE_PODS_H

#include "queue/scheduling_queue.h"

typedef struct ls_bucket_slot {
    uint32_t bucket, pos;
} ls_bucket_slot;

typedef struct ls_plugin_bucket {
    uint32_t profile;
    ls_str plugin;
    ls_vec interests;   /* ls_event_registration copies of this plugin's registrations */
    ls_vec pods;        /* ls_qpod * filed here; the pod's slot names the index */
} ls_plugin_bucket;

typedef struct ls_unsched_set {
    ls_vec pods;                  /* ls_qpod *: every unschedulable pod, gated ones too */
    ls_vec buckets;               /* ls_plugin_bucket */
    uint64_t oldest_ms;           /* earliest timestamp among the pods, when known */
    bool oldest_known;
    uint64_t pass;                /* event passes, to collect a pod once per event */
    uint32_t n_gated;
} ls_unsched_set;

void ls_unsched_init(ls_unsched_set *u);
void ls_unsched_free(ls_unsched_set *u);
/* Rebuilds the buckets from the registrations and files every member again. */
void ls_unsched_set_registrations(ls_unsched_set *u, const ls_event_registration *regs, uint32_t n);
/* Files every member again (their profiles changed). */
void ls_unsched_refile(ls_unsched_set *u);
void ls_unsched_add(ls_unsched_set *u, ls_qpod *qp);
void ls_unsched_remove(ls_unsched_set *u, ls_qpod *qp);
uint32_t ls_unsched_len(const ls_unsched_set *u);
uint32_t ls_unsched_gated(const ls_unsched_set *u);
ls_qpod *ls_unsched_at(const ls_unsched_set *u, uint32_t i);
/* Appends to `out` (ls_qpod *) every non-gated pod filed under a plugin that
 * registered an event matching `ev` (every non-gated pod for a wildcard event),
 * each once. The cost is the number of pods in the matching buckets. */
void ls_unsched_collect(ls_unsched_set *u, const ls_cluster_event *ev, bool wildcard, ls_vec *out);
/* The earliest timestamp of a member; false when the set is empty. */
bool ls_unsched_oldest(ls_unsched_set *u, uint64_t *ms);

#endif
