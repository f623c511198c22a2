/*
 * runtime.h: the Lua runtime: one lua_State per profile, each with that
 * profile's plugins loaded and its own memory limit, and the calls C makes
 * into lua/luasched/dispatch.lua (one per extension point per pod), routed to
 * the profile's state (runtime_set.c).
 */
#ifndef LS_FRAMEWORK_RUNTIME_H
#define LS_FRAMEWORK_RUNTIME_H

#include "luasched/config.h"
#include "luasched/events.h"
#include "luasched/framework.h"
#include "framework/fault_tally.h"
#include "queue/scheduling_queue.h"

typedef struct ls_lua ls_lua;

typedef struct ls_lua_options {
    const char *lua_path;          /* package.path for lua/ (NULL: built-in default or $LUASCHED_LUA_PATH) */
    const char *plugin_path;       /* ':'-separated plugin dirs (NULL: $LUASCHED_PLUGIN_PATH or plugins/) */
    uint64_t instruction_budget;   /* per call, interpreted instructions; 0 = default */
    uint64_t timeout_ms;           /* per call, wall clock; 0 = default (10 s) */
    size_t memory_limit;           /* bytes per state (a profile's own limit replaces it); 0 = unlimited */
} ls_lua_options;

ls_lua *ls_lua_new(ls_cycle *cycle, const ls_lua_options *opt, ls_error *err);
void ls_lua_free(ls_lua *lua);

/* Bit (1 << ep) for every extension point whose hook the plugin defines. */
bool ls_lua_plugin_points(ls_lua *lua, const char *name, uint32_t *points, ls_error *err);
/* Instantiates every profile's plugins, each profile in a new state of its
 * own; on success the previous states (and the loader state the plugin
 * hooks were read in) are freed. */
bool ls_lua_build(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_error *err);

/* Runs one extension point or hook of a cycle (LS_EP_*: dispatch.lua's
 * function of the row's hook name) for the cycle's pod; returns the status
 * code and leaves the status in cycle->status. */
int ls_lua_run(ls_lua *lua, int ep, uint32_t profile);
int ls_lua_pre_enqueue(ls_lua *lua, uint32_t profile, const ls_pod *pod);
/* Filter (with nominated pods) on one node: the nominated-node fast path. */
int ls_lua_filter_one(ls_lua *lua, uint32_t profile, const ls_node_info *ni);
/* The running cycle's pod's signature in `profile` (OpportunisticBatching):
 * a malloc'd string the caller frees, its length in *len; NULL when the pod
 * is unsignable there (or the call failed), *every_pod set when no pod of the
 * profile is signable (a plugin without `sign`, default spread constraints). */
char *ls_lua_sign(ls_lua *lua, uint32_t profile, size_t *len, bool *every_pod);
/* PreScore and Score of the cycle's last feasible node, the others' raw scores
 * in cycle->scores, then NormalizeScore over all (OpportunisticBatching's
 * re-scoring): a status code, LS_PENDING when PreScore failed. */
int ls_lua_rescore_last(ls_lua *lua, uint32_t profile);
double ls_lua_sort_key(ls_lua *lua, uint32_t profile, const ls_pod *pod);
/* The queue-sort plugin orders with less(a, b) (no numeric sort_key). */
bool ls_lua_sort_uses_less(ls_lua *lua);
bool ls_lua_less(ls_lua *lua, uint32_t profile, const ls_pod *a, const ls_pod *b);
/* Every profile's event registrations (from the plugins' events tables);
 * the caller frees *out. */
bool ls_lua_registrations(ls_lua *lua, ls_event_registration **out, uint32_t *n, ls_error *err);
/* Runs a queueing hint; LS_HINT_QUEUE or LS_HINT_SKIP. */
int ls_lua_hint(ls_lua *lua, int hint, const ls_pod *pod, const ls_cluster_event *ev);

/* The files of every loaded plugin (caller frees the array and strings). */
char **ls_lua_plugin_files(ls_lua *lua, uint32_t *n);

/* `luasched check`: runs dispatch's M.check on the expanded profiles (every
 * plugin loaded and initialized with its args, its events table and hooks
 * checked); each problem is appended to *problems (char *, "profile NAME:
 * what"), and the file each enabled plugin resolves to to *resolved (char *,
 * "profile NAME: plugin P: FILE (built-in)"; NULL: not wanted). False only
 * when the check itself could not run. */
bool ls_lua_check(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_vec *problems, ls_vec *resolved,
                  ls_error *err);
/* After ls_lua_build: per profile (a cJSON array the caller deletes), an
 * object plugin name -> args completed with the plugin's declared defaults
 * (dispatch's M.completed_args), for --write-config-to. The profiles' given
 * args tell whether an empty table is {} or []. */
struct cJSON *ls_lua_completed_args(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_error *err);
/* Fills what *opt leaves unset (NULL / 0) from the configuration's luasched
 * section: plugin path, timeout, instruction budget, memory limit. The plugin
 * path stays owned by cfg (ls_lua_new copies it). */
void ls_lua_options_from_config(ls_lua_options *opt, const ls_config *cfg);

/* Keeps / restores a waiting pod's CycleState (in its profile's state)
 * across its wait (Permit). */
void ls_lua_park(ls_lua *lua, uint32_t profile, uint32_t pod_id);
void ls_lua_resume(ls_lua *lua, uint32_t profile, uint32_t pod_id);
/* Bytes held by every state; by profile `profile`'s state, and its limit. */
size_t ls_lua_memory(const ls_lua *lua);
uint32_t ls_lua_state_count(const ls_lua *lua);
size_t ls_lua_profile_memory(const ls_lua *lua, uint32_t profile);
size_t ls_lua_profile_memory_limit(const ls_lua *lua, uint32_t profile);
/* SIGTERM / SIGINT: the plugin call running now (and any later one) is cut
 * off by the watchdog. Async-signal-safe. */
void ls_lua_request_stop(void);
uint64_t ls_lua_budget_overruns(const ls_lua *lua);
/* The budget overruns and rebuilt states counted since the last drain, by
 * profile, plugin and extension point (fault_tally.h), handed to fn. */
void ls_lua_drain_faults(ls_lua *lua, ls_fault_tally_fn fn, void *ud);
uint64_t ls_lua_restarts(const ls_lua *lua);
/* Queueing hints that raised or returned something else than Queue/Skip. */
uint64_t ls_lua_hint_errors(const ls_lua *lua);

#endif
