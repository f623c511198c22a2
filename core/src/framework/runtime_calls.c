/*
 * runtime_calls.c: the calls C makes into lua/luasched/dispatch.lua once the
 * state is built: one call path (invoke) for a cycle's extension points and
 * hooks, PreEnqueue, the queue sort and the queueing hints, and the plain
 * calls for event registrations, plugin files, parked CycleStates and where a
 * plugin's hook is (for the log of a cut-off call).
 */
#include "framework/runtime_internal.h"
#include "luasched/log.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* ---- the calls into dispatch.lua's entry points */

/* A state holds one profile (runtime_set.c): its index there is 0. */
enum { STATE_PROFILE = 0 };

/* One call of a dispatch.lua function with one result: up to two pointers,
 * after the hint's id for a hint (a state holds one profile: no call names
 * one). A cycle's call (in_cycle) is attributed to its point for the
 * watchdog's and the fatal-signal reports; a queue-side one (PreEnqueue,
 * QueueSort, a hint) is not. */
typedef struct dispatch_call {
    int ep;                   /* LS_EP_* row: the function (its hook's name) and the report's label */
    int ref;                  /* the registry reference of the function */
    bool with_id;             /* the hint's id comes first */
    lua_Integer id;
    const void *ptrs[2];
    int nptrs;
    uint32_t budgets;         /* the profile whose budgets apply; NO_PROFILE: the state's */
    bool in_cycle;
} dispatch_call;

/* A pointer for dispatch.lua's ffi.cast: as a number when it is exact in a
 * double (every user-space address of today's x86-64 and arm64 processes), so
 * that the cast compiles (LuaJIT cannot compile ffi.cast of a light userdata:
 * PreEnqueue and the queue sort ran interpreted); a light userdata otherwise.
 * Only the runtime's own code receives it; plugins get the views it makes. */
static void push_pointer(lua_State *L, const void *p)
{
    if ((uintptr_t)p < (1ull << 53))
        lua_pushnumber(L, (lua_Number)(uintptr_t)p);
    else
        lua_pushlightuserdata(L, (void *)p);
}

/* Pushes and runs the call; returns ls_rt_guarded_pcall's code (-1: cut off) with
 * the result or the error message on the stack (nothing when cut off). */
static int invoke(ls_rt *lua, const dispatch_call *c)
{
    lua_State *L = lua->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
    if (c->with_id)
        lua_pushinteger(L, c->id);
    for (int i = 0; i < c->nptrs; i++)
        push_pointer(L, c->ptrs[i]);
    if (c->in_cycle) {
        lua->cycle->running_plugin = -1;
        lua->cycle->handle_ep = 0;
        lua->over_memory = false;
        lua->over_share = 0;
        ls_rt_active_call = c->ep;
        ls_rt_active_profile = STATE_PROFILE;
    }
    lua->call_profile = c->budgets;
    /* Every call may be interrupted, PreBind/Bind/PostBind too: their calls to
     * the cluster (ls_cycle_bind, ls_cycle_patch_*) are critical sections, so
     * the cut-off waits for the request to finish. Without the signal, a
     * plugin catching the hook's error with pcall, or stuck in C (a pattern
     * that backtracks), held a binding hook - and the scheduler - forever. */
    uint32_t outer_generation = ls_view_generation_enter();
    int rc = ls_rt_guarded_pcall(lua, (c->with_id ? 1 : 0) + c->nptrs, 1, true);
    ls_view_generation_leave(outer_generation);
    if (c->in_cycle)
        ls_rt_active_call = -1;
    return rc;
}

/* The status code of a call that returns one (a cycle's point, PreEnqueue):
 * a failure becomes Error with its message in cycle->status, a cut-off call
 * (or, in a cycle, one past the memory limit: it may keep what it took) a
 * rebuilt state. */
static int invoke_for_status(ls_rt *lua, const dispatch_call *c)
{
    const ls_ext_point_info *row = ls_ext_point_info_of(c->ep);
    if (!ls_rt_usable(lua))
        return ls_rt_failure(lua, row->hook, "the Lua state could not be restarted");
    int rc = invoke(lua, c);
    if (rc < 0 || (c->in_cycle && lua->over_memory))
        return c->in_cycle ? ls_rt_recover(lua, c->ep, STATE_PROFILE) : ls_rt_rebuild_after(lua, row->name);
    lua_State *L = lua->L;
    if (rc != 0) {   /* escaped the dispatcher's protection: the plugin it was running is named */
        bool named = c->in_cycle || strcmp(ls_rt_running_plugin(lua, c->ep, STATE_PROFILE), "?") != 0;
        const char *msg = lua_tostring(L, -1);
        if (!named && msg && strstr(msg, "instruction budget"))
            ls_rt_count_fault(lua, ls_rt_blamed(lua, "?"), row->name, true, false);
        int code = named ? ls_rt_failure_in_call(lua, c->ep, STATE_PROFILE, msg) : ls_rt_failure(lua, row->hook, msg);
        lua_pop(L, 1);
        return code;
    }
    int code = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    /* a budget's error the call's plugin code caught no more: counted once
     * (a cycle a cut-off ended returns that cut-off's Error, counted then,
     * at each later point: it was counted again against "?") */
    const ls_status_info *st = lua->cycle->status_code == LS_ERROR && !lua->cycle->state_lost
                                   ? ls_status_get(lua->cycle->status)
                                   : NULL;
    if (c->in_cycle && st && (strstr(st->message, "instruction budget") || strstr(st->message, "time budget"))) {
        int ep = ls_rt_running_ep(lua, c->ep);   /* against the plugin whose code the budget's hook cut off */
        ls_rt_count_fault(lua, ls_rt_blamed(lua, ls_rt_running_plugin(lua, ep, STATE_PROFILE)),
                          ls_ext_point_info_of(ep)->name, true, false);
    }
    return code;
}

/* A queue-side call's answer (the sort key; less as 1 or 0); `fallback` when
 * there is no state, the call failed or was cut off (the state rebuilt). */
static double invoke_for_value(ls_rt *lua, const dispatch_call *c, double fallback)
{
    if (!lua->L)
        return fallback;
    int rc = invoke(lua, c);
    if (rc < 0) {
        ls_rt_rebuild_after(lua, ls_ext_point_info_of(c->ep)->name);
        return fallback;
    }
    double v = fallback;
    if (rc == 0)
        v = c->ep == LS_EP_LESS ? (double)lua_toboolean(lua->L, -1) : lua_tonumber(lua->L, -1);
    lua_pop(lua->L, 1);
    return v;
}

int ls_rt_run(ls_rt *lua, int ep)
{
    dispatch_call c = {.ep = ep, .ref = lua->refs[ep], .budgets = STATE_PROFILE, .in_cycle = true};
    return invoke_for_status(lua, &c);
}

int ls_rt_filter_one(ls_rt *lua, const ls_node_info *ni)
{
    dispatch_call c = {.ep = LS_EP_FILTER, .ref = lua->ref_filter_one, .ptrs = {ni}, .nptrs = 1,
                       .budgets = STATE_PROFILE, .in_cycle = true};
    return invoke_for_status(lua, &c);
}

char *ls_rt_sign(ls_rt *lua, size_t *len, bool *every_pod)
{
    *len = 0;
    *every_pod = false;
    if (!lua->L || lua->ref_sign == LUA_NOREF || !ls_rt_usable(lua))
        return NULL;
    dispatch_call c = {.ep = LS_EP_PRE_FILTER, .ref = lua->ref_sign, .budgets = STATE_PROFILE,
                       .in_cycle = true};
    int rc = invoke(lua, &c);
    if (rc < 0) {
        ls_rt_rebuild_after(lua, "Sign");
        return NULL;
    }
    char *sig = NULL;
    if (rc == 0 && lua_type(lua->L, -1) == LUA_TSTRING) {
        const char *s = lua_tolstring(lua->L, -1, len);
        sig = ls_xmalloc(*len + 1);
        memcpy(sig, s, *len + 1);
    } else if (rc == 0 && lua_type(lua->L, -1) == LUA_TBOOLEAN) {
        *every_pod = true;
    }
    lua_pop(lua->L, 1);
    return sig;
}

int ls_rt_rescore_last(ls_rt *lua)
{
    dispatch_call c = {.ep = LS_EP_SCORE, .ref = lua->ref_rescore_last, .budgets = STATE_PROFILE,
                       .in_cycle = true};
    return invoke_for_status(lua, &c);
}

int ls_rt_pre_enqueue(ls_rt *lua, const ls_pod *pod)
{
    dispatch_call c = {.ep = LS_EP_PRE_ENQUEUE, .ref = lua->refs[LS_EP_PRE_ENQUEUE], 
                       .ptrs = {pod}, .nptrs = 1, .budgets = STATE_PROFILE};
    return invoke_for_status(lua, &c);
}

double ls_rt_sort_key(ls_rt *lua, const ls_pod *pod)
{
    dispatch_call c = {.ep = LS_EP_QUEUE_SORT, .ref = lua->refs[LS_EP_QUEUE_SORT], 
                       .ptrs = {pod}, .nptrs = 1, .budgets = STATE_PROFILE};
    double key = invoke_for_value(lua, &c, 0);
    return key == key ? key : 0;   /* NaN orders nothing */
}

bool ls_rt_less(ls_rt *lua, const ls_pod *a, const ls_pod *b)
{
    dispatch_call c = {.ep = LS_EP_LESS, .ref = lua->refs[LS_EP_LESS], .ptrs = {a, b},
                       .nptrs = 2, .budgets = STATE_PROFILE};
    return invoke_for_value(lua, &c, 0) != 0;
}

static uint32_t action_bits(lua_State *L, int table)
{
    uint32_t bits = 0;
    size_t n = lua_objlen(L, table);
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, table, (int)i);
        bits |= ls_action_from_name(lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return bits;
}

static const char *string_field(lua_State *L, int table, const char *name)
{
    lua_getfield(L, table, name);
    const char *v = lua_tostring(L, -1);
    lua_pop(L, 1);   /* the string stays alive: it is referenced from the table */
    return v ? v : "";
}

static int int_field(lua_State *L, int table, const char *name)
{
    lua_getfield(L, table, name);
    int v = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
}

bool ls_rt_registrations(ls_rt *lua, ls_event_registration **out, uint32_t *n, ls_error *err)
{
    lua_State *L = lua->L;
    if (!L)
        return ls_errorf(err, "event registrations: the Lua state could not be restarted");
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_registrations);
    if (lua_pcall(L, 0, 1, 0) != 0) {
        ls_errorf(err, "event registrations: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    size_t count = lua_objlen(L, -1);
    ls_event_registration *regs = ls_xcalloc(count + 1, sizeof *regs);
    for (size_t i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, (int)i);
        int t = lua_gettop(L);
        ls_event_registration *r = &regs[i - 1];
        r->profile = (uint32_t)int_field(L, t, "profile");
        r->plugin = ls_intern_cstr(string_field(L, t, "plugin"));
        r->resource = ls_intern_cstr(string_field(L, t, "resource"));
        r->hint = int_field(L, t, "hint");
        lua_getfield(L, t, "actions");
        r->actions = action_bits(L, lua_gettop(L));
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    *out = regs;
    *n = (uint32_t)count;
    return true;
}

int ls_rt_hint(ls_rt *lua, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    if (!lua->L)
        return LS_HINT_QUEUE;
    dispatch_call c = {.ep = -1, .ref = lua->ref_hint, .with_id = true, .id = hint, .ptrs = {pod, ev}, .nptrs = 2,
                       .budgets = STATE_PROFILE};   /* the hint's plugin is of the state's profile */
    bool outermost = lua->depth == 0 && !ls_rt_call_active();
    if (outermost) {
        lua->over_memory = false;
        lua->over_share = 0;
    }
    int rc = invoke(lua, &c);
    lua_State *L = lua->L;
    /* a hint past the memory limit, or past its plugin's share of it, may
     * keep what it took: the state is rebuilt, as after a cut-off (it kept
     * it, and the next built-in to allocate was cut off and blamed) */
    if (rc < 0 || (outermost && lua->over_memory)) {
        if (rc >= 0)
            lua_pop(L, 1);
        ls_rt_rebuild_after(lua, "queueing hint");
        lua->hint_errors++;
        return LS_HINT_QUEUE;
    }
    if (rc != 0) {
        ls_log_error("Queueing hint failed, the pod is queued", "err", lua_tostring(L, -1));
        lua_pop(L, 1);
        lua->hint_errors++;
        return LS_HINT_QUEUE;
    }
    int r = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    /* dispatch.hint answers HINT_FAILED for a hint that raised or returned
     * something else: Queue, as upstream, and counted. */
    if (r == LS_HINT_FAILED)
        lua->hint_errors++;
    return r == LS_HINT_SKIP ? LS_HINT_SKIP : LS_HINT_QUEUE;
}

char **ls_rt_plugin_files(ls_rt *lua, uint32_t *n)
{
    lua_State *L = lua->L;
    *n = 0;
    if (!L)
        return NULL;
    lua_getglobal(L, "require");
    lua_pushstring(L, "luasched.dispatch");
    if (lua_pcall(L, 1, 1, 0) != 0) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_getfield(L, -1, "plugin_files");
    if (lua_pcall(L, 0, 1, 0) != 0) {
        lua_pop(L, 2);
        return NULL;
    }
    size_t count = lua_objlen(L, -1);
    char **files = ls_xcalloc(count + 1, sizeof *files);
    for (size_t i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, (int)i);
        const char *f = lua_tostring(L, -1);
        files[(*n)++] = ls_xstrdup(f ? f : "");
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
    return files;
}

static void call_with_pod_id(ls_rt *lua, int ref, uint32_t pod_id)
{
    if (!lua->L)
        return;
    lua_rawgeti(lua->L, LUA_REGISTRYINDEX, ref);
    lua_pushinteger(lua->L, (lua_Integer)pod_id);
    if (lua_pcall(lua->L, 1, 0, 0) != 0)
        lua_pop(lua->L, 1);
}

void ls_rt_park(ls_rt *lua, uint32_t pod_id)
{
    call_with_pod_id(lua, lua->ref_park, pod_id);
}

void ls_rt_resume(ls_rt *lua, uint32_t pod_id)
{
    call_with_pod_id(lua, lua->ref_resume, pod_id);
}

bool ls_rt_sort_uses_less(ls_rt *lua)
{
    lua_State *L = lua->L;
    if (!L)
        return false;
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_sort_uses_less);
    bool uses = lua_pcall(L, 0, 1, 0) == 0 && lua_toboolean(L, -1);
    lua_pop(L, 1);
    return uses;
}

/* Where plugin `name`'s hook of row `ep` is defined ("file:line"), asked of
 * the rebuilt state (dispatch.hook_location); empty when unknown. */
void ls_rt_hook_location(ls_rt *lua, int ep, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    lua_State *L = lua->L;
    if (!L)
        return;
    int top = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luasched.dispatch");
    if (lua_pcall(L, 1, 1, 0) == 0) {
        lua_getfield(L, -1, "hook_location");
        lua_pushstring(L, name);
        lua_pushstring(L, ls_ext_point_info_of(ep)->hook);
        if (lua_pcall(L, 2, 1, 0) == 0 && lua_isstring(L, -1))
            snprintf(out, size, "%s", lua_tostring(L, -1));
    }
    lua_settop(L, top);
}
