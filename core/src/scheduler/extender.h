/*
 * extender.h: HTTP scheduler extenders (upstream's HTTPExtender and the
 * scheduler's calls into it), over the project's libcurl client.
 *
 * Built from the configuration's `extenders:` (ignorable ones last, as
 * upstream's buildExtenders). Each call POSTs upstream's JSON wire format
 * (k8s.io/kube-scheduler/extender/v1: ExtenderArgs, ExtenderFilterResult,
 * HostPriorityList, ExtenderPreemptionArgs/Result, ExtenderBindingArgs/Result)
 * to urlPrefix + "/" + verb, once per pod per extension point, and applies the
 * answer with upstream's semantics (findNodesThatPassExtenders,
 * prioritizeNodes, the preemption Evaluator's callExtenders, extendersBinding).
 */
#ifndef LS_FRAMEWORK_EXTENDER_H
#define LS_FRAMEWORK_EXTENDER_H

#include "luasched/config.h"
#include "queue/scheduling_queue.h"

typedef struct ls_extenders ls_extenders;

/* upstream's constants: MaxExtenderPriority, DefaultExtenderTimeout, and the
 * name put in UnschedulablePlugins when an extender rejected nodes. */
enum { LS_MAX_EXTENDER_PRIORITY = 10, LS_DEFAULT_EXTENDER_TIMEOUT_MS = 5000 };
#define LS_EXTENDER_NAME "Extender"

/* NULL with *err unset when the configuration has no extenders; NULL with
 * *err set when a client cannot be made (a TLS file that cannot be read). */
ls_extenders *ls_extenders_new(const ls_config *cfg, ls_error *err);
void ls_extenders_free(ls_extenders *x);

/* In a worker (docs/plugins/worker.md): every extender call goes through fn
 * (url: the extender's urlPrefix without its trailing '/'; the result as
 * ls_extender_send's), and no client or TLS file is read here. Set before
 * any ls_extenders_new. */
typedef struct cJSON cJSON;
typedef cJSON *(*ls_extender_transport_fn)(void *ud, const char *url, const char *verb, const char *body, char **msg);
void ls_extender_set_transport(ls_extender_transport_fn fn, void *ud);
/* The supervisor's side: the call of one configured extender (by urlPrefix)
 * with one of its configured verbs, else NULL and *msg. */
cJSON *ls_extenders_send_to(const ls_extenders *x, const char *url, const char *verb, const char *body, char **msg);

bool ls_extenders_have_filter(const ls_extenders *x);
bool ls_extenders_have_prioritizer(const ls_extenders *x);

/* What NodeResourcesFit skips (managedResources with ignoredByScheduler):
 * written into each profile's NodeResourcesFit args as ignoredResources, as
 * upstream's buildExtenders does, before the plugins are built. */
void ls_extenders_apply_ignored_resources(const ls_config *cfg, ls_profile *profiles, uint32_t n_profiles);

/* A queueing registration per profile for the "Extender" rejector: any
 * cluster event requeues a pod an extender rejected (extenders have no
 * events of their own). Appended to *regs (realloc'd). */
void ls_extenders_registrations(const ls_extenders *x, uint32_t n_profiles, ls_event_registration **regs,
                                uint32_t *n);

/* A new cycle over num_all_nodes nodes: what the extenders say is recorded
 * for output when `trace` (ls_extenders_verdict, ls_extenders_score). */
void ls_extenders_begin_cycle(ls_extenders *x, uint32_t num_all_nodes, bool trace);
const char *ls_extenders_verdict(const ls_extenders *x, uint32_t node_index);
bool ls_extenders_score(const ls_extenders *x, uint32_t e, uint32_t i, int64_t *raw, int64_t *final);
const char *ls_extenders_name(const ls_extenders *x, uint32_t e);

/* findNodesThatPassExtenders over cycle->feasible[0..num_feasible): the list
 * shrinks in place, nodes named in FailedNodes / FailedAndUnresolvableNodes
 * get that status in cycle->node_status. *rejected is set when some node was
 * filtered out. False with *msg (caller frees) on the error of an extender
 * that is not ignorable. */
bool ls_extenders_filter(ls_extenders *x, ls_cycle *cycle, bool *rejected, char **msg);

/* Adds score * weight * (MaxNodeScore / MaxExtenderPriority) of every
 * interested prioritizing extender to totals[i] of cycle->feasible[i]; a
 * failing extender gives no score (upstream ignores prioritize errors). */
void ls_extenders_prioritize(ls_extenders *x, const ls_cycle *cycle, int64_t *totals);

/* extendersBinding: 0 when no binder is interested in the pod (the Bind
 * plugins run), 1 when an extender bound it, -1 when it failed (*msg set,
 * caller frees). */
int ls_extenders_bind(ls_extenders *x, const ls_pod *pod, ls_str node, char **msg);

/* Preemption (called through the cycle functions of framework.h). */
uint32_t ls_extenders_preempters(const ls_extenders *x, const ls_pod *pod);
void ls_extenders_candidates_reset(ls_extenders *x);
void ls_extenders_candidate_add(ls_extenders *x, ls_str node, int64_t pdb_violations);
void ls_extenders_victim_add(ls_extenders *x, const ls_pod *victim);
int ls_extenders_process_preemption(ls_extenders *x, const ls_cycle *cycle, char **msg);
ls_str ls_extenders_candidate(const ls_extenders *x, uint32_t i, int64_t *pdb_violations, uint32_t *n_victims);
const ls_pod *ls_extenders_victim(const ls_extenders *x, uint32_t i, uint32_t k);

#endif
