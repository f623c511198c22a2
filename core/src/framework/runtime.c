/*
 * runtime.c: the lua_State lifecycle. Creates the state with a counting
 * allocator (memory limit, metrics), sets the module and plugin paths, loads
 * lua/luasched/dispatch.lua, keeps references to its entry points, loads the
 * plugins and builds the profiles, and guards each call with an instruction
 * budget and the wall-clock watchdog so a runaway plugin becomes an Error
 * status for its pod instead of a hung scheduler.
 *
 * Every call into Lua goes through ls_rt_guarded_pcall (instruction budget,
 * the watchdog, per-profile budgets, the crash report on a fatal signal); a
 * call cut off abandons the state and restart() builds it again. The calls
 * into dispatch.lua are in runtime_calls.c, the configuration tools in
 * runtime_config.c; runtime_internal.h is what they share.
 */
#include "framework/runtime_internal.h"
#include "worker/confine.h"
#include "worker/page.h"
#include "framework/paths.h"
#include "luasched/log.h"
#include "framework/watchdog.h"

#include <cjson/cJSON.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { DEFAULT_INSTRUCTION_BUDGET = 200000000 };

enum { DEFAULT_TIMEOUT_MS = 10000 };

/* What the runtime is loading or running, written by dispatch.lua before it
 * runs plugin code outside a cycle (loading a file, init, events, hints), so
 * a call the watchdog cuts off can still be attributed. */
static char note[256];

/* The runtime state whose Lua state `L` is (its allocator's data). */
static ls_rt *state_of(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

static void memory_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    ls_rt_blame_memory(state_of(L), L);
    luaL_error(L, "plugin exceeded the Lua memory limit");
}

/* The running call went past the memory limit: interpreted code stops at its
 * next instruction (the hook), compiled code by the watchdog. */
static void cut_off_for_memory(ls_rt *lua)
{
    if (lua->L)
        lua_sethook(lua->L, memory_hook, LUA_MASKCOUNT, 1);
    if (lua->watchdog)
        ls_watchdog_expire_now(lua->watchdog);
}

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    ls_rt *lua = ud;
    void *p = NULL;
    ls_critical_enter();
    if (nsize == 0) {
        if (ptr) {
            lua->memory -= ls_lua_heap_size(ptr);
            ls_lua_heap_free(&lua->heap, ptr);
        }
    } else {
        size_t old = ptr ? ls_lua_heap_size(ptr) : 0;
        (void)osize;
        size_t after = lua->memory - old + nsize;
        bool over = lua->memory_limit && nsize > old && after > lua->memory_limit;
        /* Over the limit while a call runs: the block is still given (a NULL
         * inside compiled code is not always survivable) and the call is cut
         * off at once, the state rebuilt after it. Outside a call, or past
         * twice the limit, NULL: Lua raises "not enough memory". */
        if (over) {
            if (lua->depth > 0 && !lua->over_memory && lua->L)
                ls_rt_blame_frames(lua, lua->L);   /* before the block moves: the stack is as it was */
            lua->over_memory = true;
            if (lua->depth > 0)
                cut_off_for_memory(lua);
        }
        if (!over || (lua->depth > 0 && after <= 2 * lua->memory_limit)) {
            p = ls_lua_heap_realloc(&lua->heap, ptr, nsize);
            if (p)
                lua->memory = after;
            else if (ls_worker_page_self)
                ls_out_of_memory(nsize);   /* the worker's own limit: it ends, its supervisor says why */
        }
    }
    ls_critical_leave();
    return p;
}

/* Frees every block of a state that cannot be closed normally. */
static void abandon_state(ls_rt *lua)
{
    ls_lua_heap_release(&lua->heap);
    lua->memory = 0;
    lua->L = NULL;
}

/* The budget errors carry no position: the hook may fire in the runtime's own
 * code (a generated loop, right after a long C call such as gsub returned),
 * and luaL_error would name that chunk; the plugin's xpcall handler prefixes
 * the innermost plugin frame's file:line instead. */
static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    ls_rt_blame_frames(state_of(L), L);
    lua_pushliteral(L, "plugin exceeded its instruction budget");
    lua_error(L);
}

/* Resets the instruction count for the next call. The hook stays installed
 * between calls so LuaJIT does not rebuild its dispatch table every time;
 * it is counted by the interpreter only (traces run unhooked: the watchdog
 * covers them). */
static void arm_budget(ls_rt *lua)
{
    lua_sethook(lua->L, budget_hook, LUA_MASKCOUNT, (int)(lua->budget > 0x7fffffff ? 0x7fffffff : lua->budget));
}

/* ---- a signal inside plugin code: never a silent death */

static ls_rt *volatile active_lua;        /* the state of the outermost guarded call */
volatile int ls_rt_active_call = -1;
volatile uint32_t ls_rt_active_profile;

/* A new note in a load-time call is the next plugin's step (its file, its
 * args, its init): the step gets the whole time budget again. A state's
 * build runs every plugin of its profile in one call, and under it the
 * budget was the sum of them: on a loaded machine the rebuild after a cut-off
 * call ran past a short budget while each plugin was well within it, and the
 * state was left unbuilt. A plugin cannot note (the runtime's own FFI), and
 * its code looping does not change the note. */
void ls_lua_note(const char *what)
{
    snprintf(note, sizeof note, "%s", what ? what : "");
    ls_rt *lua = active_lua;
    if (lua && lua->loading && lua->watchdog)
        ls_watchdog_restart_clock(lua->watchdog);
}

bool ls_rt_call_active(void)
{
    return active_lua != NULL;
}

void ls_lua_memory_share_exceeded(double held)
{
    ls_rt *lua = active_lua;
    if (!lua || lua->depth == 0 || !lua->memory_limit)
        return;
    lua->over_memory = true;
    lua->over_share = held > 0 ? (size_t)held : 1;
    cut_off_for_memory(lua);
}

static void say(const char *text)
{
    size_t n = strlen(text);
    while (n) {
        ssize_t w = write(2, text, n);
        if (w <= 0)
            return;
        text += w;
        n -= (size_t)w;
    }
}

/* The outermost guarded call's way out on this thread (NULL outside one). */
static _Thread_local sigjmp_buf *volatile plugin_escape;

/* A fault (SIGSEGV, SIGBUS) raised by the memory access of plugin code that
 * runs outside any critical section (a view kept beyond its call reading
 * memory the cache freed): the call is abandoned like a cut-off one and its
 * state rebuilt. Not a signal sent to the process (kill), nor one inside C
 * that holds a lock or allocates. */
static bool recoverable_fault(int sig, const siginfo_t *info)
{
    return (sig == SIGSEGV || sig == SIGBUS) && info && info->si_code > 0 && plugin_escape &&
           active_lua && !ls_critical_active();
}

/* Prints the plugin, the extension point, the pod and the Lua traceback; then
 * leaves the plugin's call when the fault is recoverable (the caller reports
 * it on the pod and rebuilds the state), else dies of the signal (the
 * default action: exit status 128 + signal). What it calls is not
 * async-signal-safe; the state it reads is abandoned either way, and this is
 * the only chance to say where. */
static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    ls_rt_blame_walk_fault();   /* a fault reading frames for the blame: that walk ends, nothing else */
    static volatile sig_atomic_t reporting;
    ls_rt *lua = active_lua;
    bool recover = recoverable_fault(sig, info);
    if (ls_worker_page_self && !recover && !reporting) {
        /* A worker: the call goes into the shared page first, with stores
         * only; should the report below wait on a lock the fault left held
         * (a traceback allocates), the supervisor ends the worker and says
         * what ran from the page. */
        ls_rt_describe_running();
        ls_worker_page_say_why(sig == SIGSEGV ? "fatal signal SIGSEGV" : sig == SIGBUS ? "fatal signal SIGBUS"
                               : sig == SIGFPE ? "fatal signal SIGFPE" : "fatal signal SIGILL");
    }
    if (reporting) {
        /* a fault while reading the state for the report (a trace's frames
         * are not written back): leave without it */
        reporting = 0;
        if (recover) {
            lua->fault_where[0] = 0;
            lua->fault_signal = sig;
            siglongjmp(*plugin_escape, 1);
        }
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    reporting = 1;
    if (lua && lua->L) {
        char buf[1024];
        int call = ls_rt_active_call >= 0 ? ls_rt_running_ep(lua, ls_rt_active_call) : -1;
        const ls_pod *pod = lua->cycle ? lua->cycle->pod : NULL;
        ls_rt_blame_frames(lua, lua->L);   /* the plugin whose code faulted (another's, in this call's) */
        snprintf(buf, sizeof buf, "luasched: %s signal %d (%s) in plugin code: plugin %s, extension point %s, pod %s/%s\n",
                 recover ? "recovered from" : "fatal", sig, strsignal(sig),
                 call >= 0 ? ls_rt_blamed(lua, ls_rt_running_plugin(lua, call, ls_rt_active_profile)) : note,
                 call >= 0 ? ls_ext_point_name(ls_ext_point_info_of(call)->point) : "(outside a cycle)",
                 pod ? ls_str_get(pod->ns) : "-", pod ? ls_str_get(pod->name) : "-");
        say(buf);
        luaL_traceback(lua->L, lua->L, NULL, 0);
        const char *tb = lua_tostring(lua->L, -1);
        say(tb ? tb : "(no Lua traceback)");
        say("\n");
    }
    if (recover) {
        ls_rt_plugin_frame(lua, lua->fault_where, sizeof lua->fault_where);
        reporting = 0;
        lua->fault_signal = sig;
        siglongjmp(*plugin_escape, 1);
    }
    reporting = 0;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_fatal_handlers(void)
{
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    /* NODEFER: a recovered fault leaves by siglongjmp to a sigsetjmp(.., 0)
     * point, which does not restore the mask: the signal must not stay blocked. */
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* lua_pcall under the instruction budget and the wall-clock watchdog. The
 * outermost guarded call arms the watchdog; a nested one (a queueing hint run
 * from inside a bind, ...) stays under the outer deadline. When the watchdog
 * cuts the call off, the state is abandoned (lua->L NULL) and -1 returned:
 * the caller rebuilds or reports. */

/* The budgets of a call for profile `profile`: the profile's own, else the state's. */
static void profile_budgets(const ls_rt *lua, uint32_t profile, uint64_t *budget, uint64_t *timeout_ms)
{
    *budget = lua->budget;
    *timeout_ms = lua->timeout_ms;
    if (lua->profiles && profile < lua->n_profiles) {
        const ls_profile *p = &lua->profiles[profile];
        if (p->instruction_budget)
            *budget = p->instruction_budget;
        if (p->plugin_timeout_ms)
            *timeout_ms = p->plugin_timeout_ms;
    }
}

/* States entered by a call nested in another state's guarded call (a
 * queueing hint of profile B run from inside profile A's bind): the outer
 * call's watchdog covers them, and when it cuts the outer call off they are
 * abandoned with it (their call was jumped over). */
enum { MAX_NESTED_STATES = 8 };
static ls_rt *nested_states[MAX_NESTED_STATES];
static int n_nested_states;

static int nested_pcall(ls_rt *lua, int nargs, int nresults)
{
    bool entered = lua->depth == 0 && n_nested_states < MAX_NESTED_STATES;
    if (lua->depth == 0 && !entered) {
        lua_pop(lua->L, nargs + 1);
        lua_pushliteral(lua->L, "plugin calls nested too deeply across profiles");
        return LUA_ERRRUN;
    }
    if (entered) {
        nested_states[n_nested_states++] = lua;
        lua_sethook(lua->L, budget_hook, LUA_MASKCOUNT, (int)(lua->budget > 0x7fffffff ? 0x7fffffff : lua->budget));
    }
    lua->depth++;
    int rc = lua_pcall(lua->L, nargs, nresults, 0);
    lua->depth--;
    if (entered)
        n_nested_states--;
    return rc;
}

ls_rt *ls_rt_running_state(void)
{
    return n_nested_states > 0 ? nested_states[n_nested_states - 1] : active_lua;
}

ls_rt *ls_rt_active_state(void)
{
    return active_lua;
}

const char *ls_rt_current_note(void)
{
    return note;
}

static void abandon_nested_states(void)
{
    while (n_nested_states > 0) {
        ls_rt *n = nested_states[--n_nested_states];
        n->depth = 0;
        n->call_profile = NO_PROFILE;
        abandon_state(n);
    }
}

int ls_rt_guarded_pcall(ls_rt *lua, int nargs, int nresults, bool may_interrupt)
{
    lua_State *L = lua->L;
    if (lua->depth > 0 || (active_lua && active_lua != lua))
        return nested_pcall(lua, nargs, nresults);
    sigjmp_buf escape;
    if (sigsetjmp(escape, 0)) {
        plugin_escape = NULL;
        ls_watchdog_disarm(lua->watchdog);
        lua->depth = 0;
        lua->call_profile = NO_PROFILE;
        active_lua = NULL;
        abandon_state(lua);
        abandon_nested_states();
        return -1;
    }
    lua->depth = 1;
    active_lua = lua;
    ls_rt_blame_clear(lua);
    uint64_t budget, timeout_ms;
    profile_budgets(lua, lua->call_profile, &budget, &timeout_ms);
    lua->armed_timeout_ms = timeout_ms;
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, (int)(budget > 0x7fffffff ? 0x7fffffff : budget));
    ls_watchdog_arm(lua->watchdog, L, timeout_ms, may_interrupt, &escape);
    plugin_escape = &escape;
    int rc = lua_pcall(L, nargs, nresults, 0);
    plugin_escape = NULL;
    ls_watchdog_disarm(lua->watchdog);
    lua->depth = 0;
    lua->call_profile = NO_PROFILE;
    active_lua = NULL;
    return rc;
}


static void push_plugin_dirs(lua_State *L, const char *path)
{
    lua_newtable(L);
    int i = 1;
    const char *p = path;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len) {
            lua_pushlstring(L, p, len);
            lua_rawseti(L, -2, i++);
        }
        if (!end)
            break;
        p = end + 1;
    }
}

static int take_ref(lua_State *L, int module_index, const char *name)
{
    lua_getfield(L, module_index, name);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return LUA_NOREF;
    }
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

static bool load_dispatch(ls_rt *lua, ls_error *err)
{
    lua_State *L = lua->L;
    lua_getglobal(L, "require");
    lua_pushstring(L, "luasched.dispatch");
    if (lua_pcall(L, 1, 1, 0) != 0)
        return ls_errorf(err, "loading the Lua runtime: %s", lua_tostring(L, -1));
    int mod = lua_gettop(L);
    for (int ep = 0; ep < LS_EP_HOOK_COUNT; ep++)
        lua->refs[ep] = take_ref(L, mod, ls_ext_point_info_of(ep)->hook);
    lua->ref_hooks = take_ref(L, mod, "hooks");
    lua->ref_build = take_ref(L, mod, "build");
    lua->ref_park = take_ref(L, mod, "park");
    lua->ref_resume = take_ref(L, mod, "resume");
    lua->ref_registrations = take_ref(L, mod, "registrations");
    lua->ref_hint = take_ref(L, mod, "hint");
    lua->ref_filter_one = take_ref(L, mod, "filter_one");
    lua->ref_sign = take_ref(L, mod, "sign");
    lua->ref_rescore_last = take_ref(L, mod, "rescore_last");
    lua->ref_sort_uses_less = take_ref(L, mod, "sort_uses_less");
    lua_getfield(L, mod, "init");
    lua_pushlightuserdata(L, lua->cycle);
    push_plugin_dirs(L, lua->plugin_path);
    push_plugin_dirs(L, ls_paths_plugins());   /* the built-in ones (a file elsewhere shadowing them is refused) */
    if (lua_pcall(L, 3, 0, 0) != 0)
        return ls_errorf(err, "starting the Lua runtime: %s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return true;
}

static bool open_state(ls_rt *lua, ls_error *err)
{
    ls_rt_free_sources(lua);   /* the new state's loader names its files again */
    lua->L = lua_newstate(counting_alloc, lua);
    if (!lua->L)
        return ls_errorf(err, "cannot create a Lua state");
    luaL_openlibs(lua->L);
    /* Ours first, then LuaJIT's own (jit.* modules live there). */
    lua_getglobal(lua->L, "package");
    lua_pushstring(lua->L, lua->lua_path);
    lua_pushliteral(lua->L, ";");
    lua_getfield(lua->L, -3, "path");
    lua_concat(lua->L, 3);
    lua_setfield(lua->L, -2, "path");
    lua_pop(lua->L, 1);
    if (!load_dispatch(lua, err))
        return false;
    arm_budget(lua);
    return true;
}

/* A worker that runs out of memory (its address-space limit, RLIMIT_AS)
 * ends: first the call running and the reason go into the shared page. */
static void worker_out_of_memory(size_t bytes)
{
    char why[200];
    uint64_t limit = ls_worker_memory_limit();
    if (limit)
        snprintf(why, sizeof why, "out of memory: the worker reached its memory limit of %llu bytes (asking for %zu more)",
                 (unsigned long long)limit, bytes);
    else
        snprintf(why, sizeof why, "out of memory (asking for %zu more bytes)", bytes);
    ls_rt_describe_running();
    ls_worker_page_say_why(why);
}

ls_rt *ls_rt_new(ls_cycle *cycle, const ls_lua_options *opt, ls_watchdog *watchdog, ls_error *err)
{
    if (ls_worker_page_self)
        ls_out_of_memory_hook = worker_out_of_memory;
    ls_rt *lua = ls_xcalloc(1, sizeof *lua);
    lua->cycle = cycle;
    ls_lua_heap_init(&lua->heap);
    lua->call_profile = NO_PROFILE;
    lua->memory_limit = opt ? opt->memory_limit : 0;
    lua->budget = opt && opt->instruction_budget ? opt->instruction_budget : DEFAULT_INSTRUCTION_BUDGET;
    lua->timeout_ms = opt && opt->timeout_ms ? opt->timeout_ms : DEFAULT_TIMEOUT_MS;
    lua->lua_path = ls_xstrdup(opt && opt->lua_path ? opt->lua_path : ls_paths_lua());
    /* Given directories come first; the built-in plugins stay reachable after them. */
    const char *builtin = ls_paths_plugins();
    const char *given = opt && opt->plugin_path ? opt->plugin_path : NULL;
    size_t n = strlen(builtin) + (given ? strlen(given) + 1 : 0) + 1;
    lua->plugin_path = ls_xmalloc(n);
    snprintf(lua->plugin_path, n, "%s%s%s", given ? given : "", given ? ":" : "", builtin);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fatal_handlers);
    lua->watchdog = watchdog;
    if (!open_state(lua, err)) {
        ls_rt_free(lua);
        return NULL;
    }
    return lua;
}

void ls_rt_free(ls_rt *lua)
{
    if (!lua)
        return;
    if (lua->L)
        lua_close(lua->L);
    abandon_state(lua);   /* nothing is left after lua_close; this only covers a half-built state */
    free(lua->lua_path);
    free(lua->plugin_path);
    ls_rt_free_places(lua);
    ls_rt_free_sources(lua);
    free(lua);
}

/* A load-time call the watchdog cut off: the error names what was running;
 * a fresh state (without plugins) is opened for what the caller does next. */
bool ls_rt_cut_off(ls_rt *lua, ls_error *err, const char *doing, const char *name)
{
    char what[300];
    snprintf(what, sizeof what, "%s", note);
    ls_error ignored;
    open_state(lua, &ignored);
    char head[300];
    snprintf(head, sizeof head, "%s%s%s", doing, name ? " " : "", name ? name : "");
    if (lua->over_memory) {
        lua->over_memory = false;
        return ls_errorf(err, "%s: %s: exceeded the Lua memory limit of %zu bytes", head, what, lua->memory_limit);
    }
    return ls_errorf(err, "%s: %s: exceeded its time budget of %llu ms", head, what,
                     (unsigned long long)lua->timeout_ms);
}

int ls_rt_load_pcall(ls_rt *lua, int nargs, int nresults)
{
    lua->loading = true;
    int rc = ls_rt_guarded_pcall(lua, nargs, nresults, true);
    lua->loading = false;
    return rc;
}

bool ls_rt_load_call(ls_rt *lua, int nargs, int nresults, const char *doing, const char *name, ls_error *err)
{
    lua_State *L = lua->L;
    int rc = ls_rt_load_pcall(lua, nargs, nresults);
    if (rc < 0)
        return ls_rt_cut_off(lua, err, doing, name);
    if (rc != 0) {
        ls_errorf(err, "%s%s%s: %s", doing, name ? " " : "", name ? name : "", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    if (nresults == 2 && lua_isnil(L, -2)) {   /* dispatch's (nil, message) */
        ls_errorf(err, "%s", lua_tostring(L, -1));
        lua_pop(L, 2);
        return false;
    }
    return true;
}

bool ls_rt_plugin_points(ls_rt *lua, const char *name, uint32_t *points, ls_error *err)
{
    lua_State *L = lua->L;
    if (!L)
        return ls_errorf(err, "loading plugin %s: the Lua state could not be restarted", name);
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_hooks);
    lua_pushstring(L, name);
    if (!ls_rt_load_call(lua, 1, 2, "loading plugin", name, err))
        return false;
    *points = 0;
    size_t n = lua_objlen(L, -2);
    for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, -2, (int)i);
        const char *hook = lua_tostring(L, -1);
        for (int ep = 0; hook && ep < LS_EP_HOOK_COUNT; ep++) {
            const ls_ext_point_info *row = ls_ext_point_info_of(ep);
            if (row->implements && strcmp(hook, row->hook) == 0)
                *points |= 1u << row->point;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
    return true;
}

bool ls_rt_build(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    lua_State *L = lua->L;
    lua->profiles = profiles;
    lua->n_profiles = n;
    if (!L)
        return ls_errorf(err, "building profiles: the Lua state could not be restarted");
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_build);
    ls_rt_push_profiles(L, profiles, n);
    for (uint32_t i = 0; i < n; i++) {   /* the cap of what the profile's plugins intern: its state's limit */
        lua_rawgeti(L, -1, (int)i + 1);
        lua_pushnumber(L, (lua_Number)lua->memory_limit);
        lua_setfield(L, -2, "memory_limit");
        lua_pop(L, 1);
    }
    if (!ls_rt_load_call(lua, 1, 2, "building profiles", NULL, err))
        return false;
    lua_pop(L, 2);
    ls_rt_cache_places(lua);
    return true;
}


static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A fresh state with the same profiles after a call was cut off. When that
 * fails (a plugin that cannot load in its budget right now), there is no
 * state (lua->L NULL): calls fail with a clear message, and ls_rt_usable() tries
 * again at most once a second. */
static bool restart(ls_rt *lua, ls_error *err)
{
    if (lua->L)
        abandon_state(lua);
    if (open_state(lua, err) && ls_rt_build(lua, lua->profiles, lua->n_profiles, err))
        return true;
    if (lua->L)
        abandon_state(lua);
    lua->retry_at_ms = monotonic_ms() + 1000;
    return false;
}

/* Whether there is a state to call into, restarting one when it is time. */
bool ls_rt_usable(ls_rt *lua)
{
    if (lua->L)
        return true;
    if (!lua->profiles || monotonic_ms() < lua->retry_at_ms)
        return false;
    ls_error err;
    if (restart(lua, &err))
        return true;
    ls_log_error("Restarting the Lua state failed", "err", err.msg);
    return false;
}

/* Counts a call of `plugin` at `point` that ended early (a fault is not a
 * budget overrun) and clears what said why. */
static void count_cut_off(ls_rt *lua, const char *plugin, const char *point)
{
    ls_rt_count_fault(lua, plugin, point, !lua->fault_signal, true);
    lua->fault_signal = 0;
    lua->over_memory = false;
    lua->over_share = 0;
}

/* A queue-side call (PreEnqueue, QueueSort, a hint) was cut off: the state
 * is rebuilt with the same profiles, and the failure logged. */
int ls_rt_rebuild_after(ls_rt *lua, const char *what)
{
    char msg[1600], limit[300];
    /* the budget the call ran under (a profile's own, or the state's), the memory limit, or a fault */
    if (lua->fault_signal)
        snprintf(limit, sizeof limit, "raised signal %d (%s)", lua->fault_signal, strsignal(lua->fault_signal));
    else if (lua->over_memory && lua->over_share) {
        char text[280];
        ls_rt_memory_limit_text(lua, text, sizeof text);
        snprintf(limit, sizeof limit, "%s", text + strlen("plugin "));
    } else if (lua->over_memory)
        snprintf(limit, sizeof limit, "exceeded the Lua memory limit of %zu bytes", lua->memory_limit);
    else
        snprintf(limit, sizeof limit, "exceeded its time budget of %llu ms",
                 (unsigned long long)(lua->armed_timeout_ms ? lua->armed_timeout_ms : lua->timeout_ms));
    char ran[300];   /* what ran, noted before the rebuild (which notes its own steps) */
    snprintf(ran, sizeof ran, "%s", note);
    ls_rt_noted_call noted;
    ls_rt_split_note(ran, &noted);
    const char *running = strncmp(ran, "plugin \"", 8) == 0 ? noted.plugin : "?";
    char blamed[128], blame[420];   /* whose code ran, taken before the rebuild's calls clear it */
    snprintf(blamed, sizeof blamed, "%s", ls_rt_blamed(lua, running));
    ls_rt_blame_prefix(lua, running, blame, sizeof blame);
    count_cut_off(lua, blamed, what);
    ls_error err;
    if (!restart(lua, &err))
        snprintf(msg, sizeof msg, "%s: %s: %s%s; restarting the Lua state failed", what, ran, blame, limit);
    else
        snprintf(msg, sizeof msg, "%s: %s: %s%s (the Lua state was restarted)", what, ran, blame, limit);
    ls_log_error("Plugin call cut off", "err", msg);
    lua->cycle->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    lua->cycle->status_code = LS_ERROR;
    lua->cycle->status_plugin = -1;   /* cut off: the runtime's error, no plugin's status */
    return LS_ERROR;
}

/* The watchdog cut a cycle's call off: the state is unusable, so it is freed
 * block by block and built again (same plugins, same profiles). */
int ls_rt_recover(ls_rt *lua, int ep, uint32_t profile)
{
    ep = ls_rt_running_ep(lua, ep);
    const char *running = ls_rt_running_plugin(lua, ep, profile);
    /* whose code ran (another plugin's, in this one's call: its prefix
     * names it and where), taken before the rebuild's calls clear it */
    char blamed[128], blame[420], code_at[256];
    snprintf(blamed, sizeof blamed, "%s", ls_rt_blamed(lua, running));
    snprintf(code_at, sizeof code_at, "%s", lua->blame_where[0] ? lua->blame_where : "?");
    ls_rt_blame_prefix(lua, running, blame, sizeof blame);
    char what[420];
    if (lua->fault_signal)
        snprintf(what, sizeof what, "%s%splugin code raised signal %d (%s): a view used after its call, or memory it cannot read",
                 blame[0] ? "" : lua->fault_where, lua->fault_where[0] && !blame[0] ? ": " : "", lua->fault_signal,
                 strsignal(lua->fault_signal));
    else if (lua->over_memory)
        ls_rt_memory_limit_text(lua, what, sizeof what);
    else {
        uint64_t budget, timeout_ms;
        profile_budgets(lua, profile, &budget, &timeout_ms);
        snprintf(what, sizeof what, "plugin exceeded its time budget of %llu ms", (unsigned long long)timeout_ms);
    }
    count_cut_off(lua, blamed, ls_ext_point_info_of(ep)->name);
    lua->cycle->handle_ep = 0;
    char who[300];
    ls_rt_running_who(lua, ep, profile, who, sizeof who);
    ls_error err;
    char msg[2048];
    bool restarted = restart(lua, &err);
    /* the pod's message and the log name the plugin, its extension point and
     * where its hook is (asked of the rebuilt state: the old one is gone) */
    char where[300], at[340];
    ls_rt_hook_location(lua, ep, running, where, sizeof where);
    ls_rt_running_at(lua, ep, profile, at, sizeof at);
    if (!restarted)
        snprintf(msg, sizeof msg, "%s: %s%s%s; restarting the Lua state failed: %.300s", who, blame, what, at, err.msg);
    else
        snprintf(msg, sizeof msg, "%s: %s%s%s (the Lua state was restarted)", who, blame, what, at);
    /* the log names the plugin whose code ran; when that ran in another's
     * call, that one (calledPlugin) and where its code was (code) too */
    if (blame[0])
        ls_log_error("Plugin call cut off", "plugin", blamed, "extensionPoint", ls_ext_point_info_of(ep)->name, "code",
                     code_at, "calledPlugin", running, "hook",
                     where[0] ? where : "?", "err", msg);
    else
        ls_log_error("Plugin call cut off", "plugin", running, "extensionPoint", ls_ext_point_info_of(ep)->name, "hook",
                     where[0] ? where : "?", "err", msg);
    lua->cycle->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    lua->cycle->status_code = LS_ERROR;
    lua->cycle->state_lost = 1;
    return LS_ERROR;
}

void ls_lua_request_stop(void)
{
    ls_watchdog_request_stop();
}

size_t ls_rt_memory(const ls_rt *lua)
{
    return lua->memory;
}

size_t ls_rt_memory_limit(const ls_rt *lua)
{
    return lua->memory_limit;
}

void ls_rt_set_memory_limit(ls_rt *lua, size_t limit)
{
    lua->memory_limit = limit;
}

uint64_t ls_rt_restarts(const ls_rt *lua)
{
    return lua->restarts;
}

uint64_t ls_rt_budget_overruns(const ls_rt *lua)
{
    return lua->overruns;
}

uint64_t ls_rt_hint_errors(const ls_rt *lua)
{
    return lua->hint_errors;
}
