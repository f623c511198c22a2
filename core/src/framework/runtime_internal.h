/*
 * runtime_internal.h: what the four files of the Lua runtime share: one Lua
 * state's private struct (ls_rt) and the calls that guard, rebuild and
 * report. runtime.c owns a lua_State (allocator, budgets, watchdog, fatal
 * signals, loading and rebuilding); runtime_calls.c makes the calls into
 * dispatch.lua; runtime_config.c holds the configuration tools (check,
 * completed args); runtime_set.c is the public ls_lua: one state per profile
 * (each with its own memory limit), and the calls routed to the profile's.
 */
#ifndef LS_FRAMEWORK_RUNTIME_INTERNAL_H
#define LS_FRAMEWORK_RUNTIME_INTERNAL_H

#include "framework/runtime.h"
#include "framework/fault_tally.h"
#include "framework/lua_heap.h"
#include "framework/watchdog.h"

#include <lua.h>


typedef struct ls_rt ls_rt;

struct ls_rt {
    lua_State *L;
    ls_cycle *cycle;
    int refs[LS_EP_HOOK_COUNT];      /* dispatch.lua's function of each row's hook name (or LUA_NOREF) */
    int ref_hooks, ref_build, ref_park, ref_resume;
    int ref_registrations, ref_hint, ref_filter_one, ref_sort_uses_less;
    int ref_sign, ref_rescore_last;  /* dispatch.sign, dispatch.rescore_last (OpportunisticBatching) */
    ls_lua_heap heap;                /* every block of the state, so a state abandoned by the watchdog (cut
                                      * off in JIT code, no longer safe to lua_close) is still freed */
    size_t memory, memory_limit;
    int fault_signal;                /* a recovered fault ended the last call (its signal), 0 otherwise */
    char fault_where[256];           /* the innermost plugin frame's file:line at the fault, or empty */
    uint64_t budget, timeout_ms;
    uint64_t armed_timeout_ms;   /* the time budget of the last outermost call (the profile's or the state's) */
    uint64_t overruns, restarts, hint_errors;
    bool over_memory;                /* the allocator refused a block during the current call */
    size_t over_share;               /* bytes a plugin's call left held past its share (0: none) */
    ls_watchdog *watchdog;           /* the set's, shared by its states (borrowed) */
    ls_fault_tally *tally;           /* the set's: cut-offs and rebuilds by plugin (borrowed, may be NULL) */
    char *lua_path, *plugin_path;
    const ls_profile *profiles;      /* what build() was given, for a rebuild */
    uint32_t n_profiles;
    int depth;                       /* guarded calls in progress (a hint inside a bind, ...) */
    uint64_t retry_at_ms;            /* no state: when ls_rt_usable() may try to build one again */
    uint32_t call_profile;           /* the profile of the call being made (its budgets) */
    bool loading;                    /* in a load-time call: each noted plugin step gets the time budget */
    struct ls_rt_place *places;      /* "hook at file:line" of every plugin of every row, made at build
                                      * (runtime_blame.c): the watchdog and a fatal signal read them, never Lua */
    size_t n_places;
    struct ls_rt_source *sources;    /* the chunk name of every plugin file loaded -> its plugin (loader.lua) */
    size_t n_sources;
    char blame_plugin[128];          /* the plugin whose code ran at the call's last cut-off (the innermost
                                      * frame of a plugin's file), "" when unknown (runtime_blame.c) */
    char blame_where[256];           /* that frame's file:line */
};

enum { NO_PROFILE = 0x7fffffff };

/* runtime_blame.c: the places of the built profiles' hooks, kept for the
 * worker's page (made with Lua at build, read without it), and the place of
 * the plugin running call `ep` of `profile` ("" when unknown). */
void ls_rt_cache_places(ls_rt *lua);
void ls_rt_free_places(ls_rt *lua);
const char *ls_rt_running_place(const ls_rt *lua, int ep, uint32_t profile);

/* view_generation.c: a call into Lua enters a new view generation (the outer
 * one returned) and leaves it, giving the outer one back. */
uint32_t ls_view_generation_enter(void);
void ls_view_generation_leave(uint32_t outer);   /* a call outside a profile's cycle: the state's budgets */

/* The cycle's call running (its LS_EP_* row, -1 outside one) and its
 * profile, for the fatal-signal report. */
extern volatile int ls_rt_active_call;
extern volatile uint32_t ls_rt_active_profile;

/* lua_pcall under the instruction budget and the wall-clock watchdog; -1 when
 * the watchdog cut the call off (the state abandoned, lua->L NULL). */
int ls_rt_guarded_pcall(ls_rt *lua, int nargs, int nresults, bool may_interrupt);
/* The call running now into the worker's shared page (worker/page.h); async-signal-safe. */
void ls_rt_describe_running(void);
/* The watchdog's signal found the call inside C: whose code ran, when it is
 * another plugin's than the call's, into the worker's page beside the call
 * (ls_worker_page_blame); reads and stores only. */
void ls_rt_describe_blame(void);
/* Whether there is a state to call into, restarting one when it is time. */
bool ls_rt_usable(ls_rt *lua);
/* Whether a guarded call of any state is running (a call made now is nested in it). */
bool ls_rt_call_active(void);
/* A queue-side call was cut off: the state rebuilt, the failure logged;
 * LS_ERROR with the message in cycle->status. */
int ls_rt_rebuild_after(ls_rt *lua, const char *what);
/* runtime_blame.c: one budget overrun and/or one rebuilt state, counted in
 * the state's totals and against plugin `plugin` at extension point `point`
 * of the state's profile in the set's tally ("?" when unknown). */
void ls_rt_count_fault(ls_rt *lua, const char *plugin, const char *point, bool overrun, bool restart);
/* LS_ERROR with "what: msg" in cycle->status. */
int ls_rt_failure(ls_rt *lua, const char *what, const char *msg);
/* A cycle's call (row ep) was cut off or went past the memory limit: the
 * state rebuilt; LS_ERROR worded as upstream words that point's errors. */
int ls_rt_recover(ls_rt *lua, int ep, uint32_t profile);
/* runtime_blame.c: an error that escaped the dispatcher during a cycle's
 * call (an Error naming the plugin running, its point and its hook's
 * file:line); the plugin running at row ep of a profile ("?" when unknown);
 * "running <point> plugin \"<name>\"" in upstream's words; " in <hook> at
 * file:line" of its hook, asked of the state as it is now ("" when unknown). */
int ls_rt_failure_in_call(ls_rt *lua, int ep, uint32_t profile, const char *msg);
int ls_rt_running_ep(const ls_rt *lua, int ep);
const char *ls_rt_running_plugin(const ls_rt *lua, int ep, uint32_t profile);
/* What a call past the memory limit is told: the limit, or the share of it a
 * plugin that is not built-in may hold after its call (runtime_blame.c). */
void ls_rt_memory_limit_text(const ls_rt *lua, char *out, size_t cap);
/* runtime_blame.c: whose code ran. The loader names the plugin of every
 * file it loads (ls_lua_plugin_source); at a cut-off (the watchdog's hook
 * or signal, the memory limit, a fault) the innermost frame of a plugin's
 * file on the state's Lua stack is recorded as the call's blame (files of
 * the runtime, generated loops and a module two plugins share are walked
 * past); a call that finds none keeps the blame it had. Reads and stores
 * only, a fault while reading frames ends the walk: safe in the signal
 * handler and the allocator. ls_rt_blame_clear at a call's start. */
void ls_rt_add_source(ls_rt *lua, const char *source, const char *plugin);
void ls_rt_free_sources(ls_rt *lua);
void ls_rt_blame_clear(ls_rt *lua);
void ls_rt_blame_frames(ls_rt *lua, lua_State *L);
/* The same for a call past the memory limit: only the first walk (at the
 * block that crossed it) counts, and none for a plugin past its share. */
void ls_rt_blame_memory(ls_rt *lua, lua_State *L);
/* For the fatal-signal handler: a fault while ls_rt_blame_frames reads the
 * frames leaves the walk (does not return then). */
void ls_rt_blame_walk_fault(void);
/* The plugin a cut-off or error of a call running `running` is counted
 * against: the blame when there is one, else `running`. */
const char *ls_rt_blamed(const ls_rt *lua, const char *running);
/* 'plugin "Probe" (FILE:LINE, its code run in Other's call): ' when the code
 * that ran is another plugin's than `running`, else "". */
void ls_rt_blame_prefix(const ls_rt *lua, const char *running, char *out, size_t cap);
/* The watchdog's cut-off (its hook, its signal): the blame of the state whose
 * call runs now. */
void ls_rt_blame_running(void);
/* runtime_blame.c: the innermost frame of a file that is not the runtime's
 * ("path:line", "" when none): where a recovered fault was. */
void ls_rt_plugin_frame(ls_rt *lua, char *out, size_t size);
/* runtime.c: the state of the outermost guarded call (NULL outside one); the
 * state whose code runs now (a nested one's, else that); what the runtime
 * noted last (ls_lua_note). Reads only: the signal handlers use them. */
ls_rt *ls_rt_active_state(void);
ls_rt *ls_rt_running_state(void);
const char *ls_rt_current_note(void);
/* A note of the runtime's ('plugin "X" (queueing hint at FILE:LINE)') as the
 * plugin's name, its point and where it runs; a note that names no plugin is
 * the plugin field whole, the point "(outside a cycle)". Signal-safe. */
typedef struct ls_rt_noted_call {
    char plugin[128], point[32], where[256];
} ls_rt_noted_call;
void ls_rt_split_note(const char *text, ls_rt_noted_call *out);
void ls_rt_running_who(const ls_rt *lua, int ep, uint32_t profile, char *who, size_t cap);
void ls_rt_running_at(ls_rt *lua, int ep, uint32_t profile, char *at, size_t cap);
/* ls_rt_guarded_pcall for a load-time call (loading, checking, building
 * plugins): each plugin step the runtime notes gets the whole time budget. */
int ls_rt_load_pcall(ls_rt *lua, int nargs, int nresults);
/* A load-time call was cut off: false with err naming what was running. */
bool ls_rt_cut_off(ls_rt *lua, ls_error *err, const char *doing, const char *name);
/* A load-time call (plugin hooks, build, completed args) of the function and
 * nargs arguments on the stack: true with its nresults results on the stack;
 * false with err as "doing [name]: message" (a cut-off call: what was
 * running and the budget it exceeded; with two results, a nil first one: the
 * second as the message). */
bool ls_rt_load_call(ls_rt *lua, int nargs, int nresults, const char *doing, const char *name, ls_error *err);
/* Pushes the profiles as dispatch.build and dispatch.check take them. */
void ls_rt_push_profiles(lua_State *L, const ls_profile *profiles, uint32_t n);
/* Where plugin `name`'s hook of row `ep` is defined ("file:line", asked of
 * dispatch.lua), empty when unknown (runtime_calls.c). */
void ls_rt_hook_location(ls_rt *lua, int ep, const char *name, char *out, size_t size);

/* ---- one state: what runtime_set.c routes to (as ls_lua_* in runtime.h;
 * a state is built with one profile, so the calls of a cycle or the queue
 * name none) */

/* A state with dispatch.lua loaded and no profile; `memory_limit` its own. */
ls_rt *ls_rt_new(ls_cycle *cycle, const ls_lua_options *opt, ls_watchdog *watchdog, ls_error *err);
void ls_rt_free(ls_rt *lua);
bool ls_rt_plugin_points(ls_rt *lua, const char *name, uint32_t *points, ls_error *err);
bool ls_rt_build(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_error *err);
int ls_rt_run(ls_rt *lua, int ep);
int ls_rt_pre_enqueue(ls_rt *lua, const ls_pod *pod);
int ls_rt_filter_one(ls_rt *lua, const ls_node_info *ni);
char *ls_rt_sign(ls_rt *lua, size_t *len, bool *every_pod);
int ls_rt_rescore_last(ls_rt *lua);
double ls_rt_sort_key(ls_rt *lua, const ls_pod *pod);
bool ls_rt_sort_uses_less(ls_rt *lua);
bool ls_rt_less(ls_rt *lua, const ls_pod *a, const ls_pod *b);
bool ls_rt_registrations(ls_rt *lua, ls_event_registration **out, uint32_t *n, ls_error *err);
int ls_rt_hint(ls_rt *lua, int hint, const ls_pod *pod, const ls_cluster_event *ev);
char **ls_rt_plugin_files(ls_rt *lua, uint32_t *n);
bool ls_rt_check(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_vec *problems, ls_vec *resolved,
                 ls_error *err);
struct cJSON *ls_rt_completed_args(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_error *err);
void ls_rt_park(ls_rt *lua, uint32_t pod_id);
void ls_rt_resume(ls_rt *lua, uint32_t pod_id);
size_t ls_rt_memory(const ls_rt *lua);
size_t ls_rt_memory_limit(const ls_rt *lua);
void ls_rt_set_memory_limit(ls_rt *lua, size_t limit);
uint64_t ls_rt_budget_overruns(const ls_rt *lua);
uint64_t ls_rt_restarts(const ls_rt *lua);
uint64_t ls_rt_hint_errors(const ls_rt *lua);

#endif
