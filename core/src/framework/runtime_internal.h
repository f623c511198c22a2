/*
 * runtime_internal.h: what the three files of the Lua runtime share: the
 * state's private struct and the calls that guard, rebuild and report.
 * runtime.c owns the lua_State (allocator, budgets, watchdog, fatal signals,
 * loading and rebuilding); runtime_calls.c makes the calls into dispatch.lua;
 * runtime_config.c holds the configuration tools (check, completed args).
 */
#ifndef LS_FRAMEWORK_RUNTIME_INTERNAL_H
#define LS_FRAMEWORK_RUNTIME_INTERNAL_H

#include "framework/runtime.h"
#include "framework/watchdog.h"

#include <lua.h>

/* Every block the state allocates is on a list, so a state abandoned by the
 * watchdog (cut off in the middle of JIT code, no longer safe to lua_close)
 * can still be freed block by block. */
typedef struct block {
    struct block *prev, *next;
    size_t size;
    size_t pad;                      /* keeps the payload 16-byte aligned */
} block;

struct ls_lua {
    lua_State *L;
    ls_cycle *cycle;
    int refs[LS_EP_HOOK_COUNT];      /* dispatch.lua's function of each row's hook name (or LUA_NOREF) */
    int ref_hooks, ref_build, ref_park, ref_resume;
    int ref_registrations, ref_hint, ref_filter_one, ref_sort_uses_less;
    block blocks;                    /* sentinel of the block list */
    size_t memory, memory_limit;
    uint64_t budget, timeout_ms;
    uint64_t armed_timeout_ms;   /* the time budget of the last outermost call (the profile's or the state's) */
    uint64_t overruns, restarts, hint_errors;
    bool over_memory;                /* the allocator refused a block during the current call */
    ls_watchdog *watchdog;
    char *lua_path, *plugin_path;
    const ls_profile *profiles;      /* what build() was given, for a rebuild */
    uint32_t n_profiles;
    int depth;                       /* guarded calls in progress (a hint inside a bind, ...) */
    uint64_t retry_at_ms;            /* no state: when ls_rt_usable() may try to build one again */
    uint32_t call_profile;           /* the profile of the call being made (its budgets) */
};

enum { NO_PROFILE = 0x7fffffff };   /* a call outside a profile's cycle: the state's budgets */

/* The cycle's call running (its LS_EP_* row, -1 outside one) and its
 * profile, for the fatal-signal report. */
extern volatile int ls_rt_active_call;
extern volatile uint32_t ls_rt_active_profile;

/* lua_pcall under the instruction budget and the wall-clock watchdog; -1 when
 * the watchdog cut the call off (the state abandoned, lua->L NULL). */
int ls_rt_guarded_pcall(ls_lua *lua, int nargs, int nresults, bool may_interrupt);
/* Whether there is a state to call into, restarting one when it is time. */
bool ls_rt_usable(ls_lua *lua);
/* A queue-side call was cut off: the state rebuilt, the failure logged;
 * LS_ERROR with the message in cycle->status. */
int ls_rt_rebuild_after(ls_lua *lua, const char *what);
/* LS_ERROR with "what: msg" in cycle->status. */
int ls_rt_failure(ls_lua *lua, const char *what, const char *msg);
/* A cycle's call (row ep) was cut off or went past the memory limit: the
 * state rebuilt; LS_ERROR worded as upstream words that point's errors. */
int ls_rt_recover(ls_lua *lua, int ep, uint32_t profile);
/* A load-time call was cut off: false with err naming what was running. */
bool ls_rt_cut_off(ls_lua *lua, ls_error *err, const char *doing, const char *name);
/* A load-time call (plugin hooks, build, completed args) of the function and
 * nargs arguments on the stack: true with its nresults results on the stack;
 * false with err as "doing [name]: message" (a cut-off call: what was
 * running and the budget it exceeded; with two results, a nil first one: the
 * second as the message). */
bool ls_rt_load_call(ls_lua *lua, int nargs, int nresults, const char *doing, const char *name, ls_error *err);
/* Pushes the profiles as dispatch.build and dispatch.check take them. */
void ls_rt_push_profiles(lua_State *L, const ls_profile *profiles, uint32_t n);

#endif
