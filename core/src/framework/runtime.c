/*
 * runtime.c: the lua_State lifecycle. Creates the state with a counting
 * allocator (memory limit, metrics), sets the module and plugin paths, loads
 * lua/luasched/dispatch.lua, keeps references to its entry points, and runs
 * each call under an instruction budget so a runaway plugin becomes an Error
 * status for its pod instead of a hung scheduler.
 *
 * Every call into Lua goes through guarded_pcall (instruction budget, the
 * watchdog, per-profile budgets, the crash report on a fatal signal); a call
 * cut off abandons the state and restart() builds it again. Over 800 lines
 * because every entry point, the allocator and the restart share the state's
 * private struct: splitting them means an internal header for it (to do).
 */
#include "framework/runtime.h"
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
    uint64_t overruns, restarts, hint_errors;
    bool over_memory;                /* the allocator refused a block during the current call */
    ls_watchdog *watchdog;
    char *lua_path, *plugin_path;
    const ls_profile *profiles;      /* what build() was given, for a rebuild */
    uint32_t n_profiles;
    int depth;                       /* guarded calls in progress (a hint inside a bind, ...) */
    uint64_t retry_at_ms;            /* no state: when usable() may try to build one again */
    uint32_t call_profile;           /* the profile of the call being made (its budgets) */
};

/* What the runtime is loading or running, written by dispatch.lua before it
 * runs plugin code outside a cycle (loading a file, init, events, hints), so
 * a call the watchdog cuts off can still be attributed. */
static char note[256];

void ls_lua_note(const char *what)
{
    snprintf(note, sizeof note, "%s", what ? what : "");
}

static void block_link(ls_lua *lua, block *b)
{
    b->prev = &lua->blocks;
    b->next = lua->blocks.next;
    lua->blocks.next->prev = b;
    lua->blocks.next = b;
}

static void block_unlink(block *b)
{
    b->prev->next = b->next;
    b->next->prev = b->prev;
}

static void *tracked_realloc(ls_lua *lua, void *ptr, size_t nsize)
{
    block *old = ptr ? (block *)ptr - 1 : NULL;
    if (old)
        block_unlink(old);
    block *b = realloc(old, sizeof *b + nsize);
    if (!b) {
        if (old)
            block_link(lua, old);
        return NULL;
    }
    b->size = nsize;
    block_link(lua, b);
    return b + 1;
}

static void memory_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "plugin exceeded the Lua memory limit");
}

/* The running call went past the memory limit: interpreted code stops at its
 * next instruction (the hook), compiled code by the watchdog. */
static void cut_off_for_memory(ls_lua *lua)
{
    if (lua->L)
        lua_sethook(lua->L, memory_hook, LUA_MASKCOUNT, 1);
    if (lua->watchdog)
        ls_watchdog_expire_now(lua->watchdog);
}

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    ls_lua *lua = ud;
    void *p = NULL;
    ls_critical_enter();
    if (nsize == 0) {
        if (ptr) {
            block *b = (block *)ptr - 1;
            block_unlink(b);
            lua->memory -= b->size;
            free(b);
        }
    } else {
        size_t old = ptr ? ((block *)ptr - 1)->size : 0;
        (void)osize;
        size_t after = lua->memory - old + nsize;
        bool over = lua->memory_limit && nsize > old && after > lua->memory_limit;
        /* Over the limit while a call runs: the block is still given (a NULL
         * inside compiled code is not always survivable) and the call is cut
         * off at once, the state rebuilt after it. Outside a call, or past
         * twice the limit, NULL: Lua raises "not enough memory". */
        if (over) {
            lua->over_memory = true;
            if (lua->depth > 0)
                cut_off_for_memory(lua);
        }
        if (!over || (lua->depth > 0 && after <= 2 * lua->memory_limit)) {
            p = tracked_realloc(lua, ptr, nsize);
            if (p)
                lua->memory = after;
        }
    }
    ls_critical_leave();
    return p;
}

/* Frees every block of a state that cannot be closed normally. */
static void abandon_state(ls_lua *lua)
{
    block *b = lua->blocks.next;
    while (b != &lua->blocks) {
        block *next = b->next;
        free(b);
        b = next;
    }
    lua->blocks.next = lua->blocks.prev = &lua->blocks;
    lua->memory = 0;
    lua->L = NULL;
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    luaL_error(L, "plugin exceeded its instruction budget");
}

/* Resets the instruction count for the next call. The hook stays installed
 * between calls so LuaJIT does not rebuild its dispatch table every time;
 * it is counted by the interpreter only (traces run unhooked: the watchdog
 * covers them). */
static void arm_budget(ls_lua *lua)
{
    lua_sethook(lua->L, budget_hook, LUA_MASKCOUNT, (int)(lua->budget > 0x7fffffff ? 0x7fffffff : lua->budget));
}

/* ---- a signal inside plugin code: never a silent death */

static ls_lua *volatile active_lua;        /* the state of the outermost guarded call */
static volatile int active_call = -1;      /* its LS_EP_* row, -1 outside a cycle's call */
static volatile uint32_t active_profile;
static const char *running_plugin(const ls_lua *lua, int ep, uint32_t profile);

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

/* Prints the plugin, the extension point, the pod and the Lua traceback, then
 * dies of the signal (the default action: exit status 128 + signal). What it
 * calls is not async-signal-safe; the process is lost anyway and this is the
 * only chance to say where. */
static void on_fatal_signal(int sig)
{
    ls_lua *lua = active_lua;
    if (lua && lua->L) {
        char buf[1024];
        int call = active_call;
        const ls_pod *pod = lua->cycle ? lua->cycle->pod : NULL;
        snprintf(buf, sizeof buf, "luasched: fatal signal %d (%s) in plugin code: plugin %s, extension point %s, pod %s/%s\n",
                 sig, strsignal(sig), call >= 0 ? running_plugin(lua, call, active_profile) : note,
                 call >= 0 ? ls_ext_point_name(ls_ext_point_info_of(call)->point) : "(outside a cycle)",
                 pod ? ls_str_get(pod->ns) : "-", pod ? ls_str_get(pod->name) : "-");
        say(buf);
        luaL_traceback(lua->L, lua->L, NULL, 0);
        const char *tb = lua_tostring(lua->L, -1);
        say(tb ? tb : "(no Lua traceback)");
        say("\n");
    }
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
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
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
enum { NO_PROFILE = 0x7fffffff };   /* a call outside a profile's cycle: the state's budgets */

/* The budgets of a call for profile `profile`: the profile's own, else the state's. */
static void profile_budgets(const ls_lua *lua, uint32_t profile, uint64_t *budget, uint64_t *timeout_ms)
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

static int guarded_pcall(ls_lua *lua, int nargs, int nresults, bool may_interrupt)
{
    lua_State *L = lua->L;
    if (lua->depth > 0) {
        lua->depth++;
        int rc = lua_pcall(L, nargs, nresults, 0);
        lua->depth--;
        return rc;
    }
    sigjmp_buf escape;
    if (sigsetjmp(escape, 0)) {
        ls_watchdog_disarm(lua->watchdog);
        lua->depth = 0;
        lua->call_profile = NO_PROFILE;
        active_lua = NULL;
        abandon_state(lua);
        return -1;
    }
    lua->depth = 1;
    active_lua = lua;
    uint64_t budget, timeout_ms;
    profile_budgets(lua, lua->call_profile, &budget, &timeout_ms);
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, (int)(budget > 0x7fffffff ? 0x7fffffff : budget));
    ls_watchdog_arm(lua->watchdog, L, timeout_ms, may_interrupt, &escape);
    int rc = lua_pcall(L, nargs, nresults, 0);
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

static bool load_dispatch(ls_lua *lua, ls_error *err)
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
    lua->ref_sort_uses_less = take_ref(L, mod, "sort_uses_less");
    lua_getfield(L, mod, "init");
    lua_pushlightuserdata(L, lua->cycle);
    push_plugin_dirs(L, lua->plugin_path);
    if (lua_pcall(L, 2, 0, 0) != 0)
        return ls_errorf(err, "starting the Lua runtime: %s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return true;
}

static bool open_state(ls_lua *lua, ls_error *err)
{
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

ls_lua *ls_lua_new(ls_cycle *cycle, const ls_lua_options *opt, ls_error *err)
{
    ls_lua *lua = ls_xcalloc(1, sizeof *lua);
    lua->cycle = cycle;
    lua->blocks.next = lua->blocks.prev = &lua->blocks;
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
    lua->watchdog = ls_watchdog_new();
    if (!lua->watchdog) {
        ls_errorf(err, "cannot start the Lua watchdog thread");
        ls_lua_free(lua);
        return NULL;
    }
    if (!open_state(lua, err)) {
        ls_lua_free(lua);
        return NULL;
    }
    return lua;
}

void ls_lua_free(ls_lua *lua)
{
    if (!lua)
        return;
    ls_watchdog_free(lua->watchdog);
    if (lua->L)
        lua_close(lua->L);
    abandon_state(lua);   /* nothing is left after lua_close; this only covers a half-built state */
    free(lua->lua_path);
    free(lua->plugin_path);
    free(lua);
}

/* A load-time call the watchdog cut off: the error names what was running;
 * a fresh state (without plugins) is opened for what the caller does next. */
static bool cut_off(ls_lua *lua, ls_error *err, const char *doing, const char *name)
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

bool ls_lua_plugin_points(ls_lua *lua, const char *name, uint32_t *points, ls_error *err)
{
    lua_State *L = lua->L;
    if (!L)
        return ls_errorf(err, "loading plugin %s: the Lua state could not be restarted", name);
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_hooks);
    lua_pushstring(L, name);
    int rc = guarded_pcall(lua, 1, 2, true);
    if (rc < 0)
        return cut_off(lua, err, "loading plugin", name);
    if (rc != 0) {
        ls_errorf(err, "loading plugin %s: %s", name, lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    if (lua_isnil(L, -2)) {
        ls_errorf(err, "%s", lua_tostring(L, -1));
        lua_pop(L, 2);
        return false;
    }
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

/* Plugin args arrive as cJSON (from the config file) and become Lua tables. */
static void push_json(lua_State *L, const cJSON *j)
{
    if (cJSON_IsObject(j)) {
        lua_newtable(L);
        for (const cJSON *c = j->child; c; c = c->next) {
            push_json(L, c);
            lua_setfield(L, -2, c->string);
        }
    } else if (cJSON_IsArray(j)) {
        lua_newtable(L);
        int i = 1;
        for (const cJSON *c = j->child; c; c = c->next) {
            push_json(L, c);
            lua_rawseti(L, -2, i++);
        }
    } else if (cJSON_IsString(j)) {
        lua_pushstring(L, j->valuestring);
    } else if (cJSON_IsNumber(j)) {
        lua_pushnumber(L, j->valuedouble);
    } else if (cJSON_IsBool(j)) {
        lua_pushboolean(L, cJSON_IsTrue(j));
    } else {
        lua_pushnil(L);
    }
}

static void push_profile(lua_State *L, const ls_profile *p)
{
    lua_newtable(L);
    lua_pushstring(L, ls_str_get(p->scheduler_name));
    lua_setfield(L, -2, "name");
    lua_newtable(L);
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        if (!p->plugins[ep].len)
            continue;
        lua_newtable(L);
        for (uint32_t i = 0; i < p->plugins[ep].len; i++) {
            lua_pushstring(L, ls_str_get(LS_VEC_AT(&p->plugins[ep], ls_plugin_ref, i).name));
            lua_rawseti(L, -2, (int)i + 1);
        }
        lua_setfield(L, -2, ls_ext_point_hook(ep));
    }
    lua_setfield(L, -2, "points");
    push_json(L, p->plugin_args);
    lua_setfield(L, -2, "args");
    push_json(L, p->plugin_args_at);
    lua_setfield(L, -2, "args_at");
}

bool ls_lua_build(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    lua_State *L = lua->L;
    lua->profiles = profiles;
    lua->n_profiles = n;
    if (!L)
        return ls_errorf(err, "building profiles: the Lua state could not be restarted");
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_build);
    lua_newtable(L);
    for (uint32_t i = 0; i < n; i++) {
        push_profile(L, &profiles[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
    int rc = guarded_pcall(lua, 1, 2, true);
    if (rc < 0)
        return cut_off(lua, err, "building profiles", NULL);
    if (rc != 0) {
        ls_errorf(err, "building profiles: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    if (lua_isnil(L, -2)) {
        ls_errorf(err, "%s", lua_tostring(L, -1));
        lua_pop(L, 2);
        return false;
    }
    lua_pop(L, 2);
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
 * state (lua->L NULL): calls fail with a clear message, and usable() tries
 * again at most once a second. */
static bool restart(ls_lua *lua, ls_error *err)
{
    if (lua->L)
        abandon_state(lua);
    if (open_state(lua, err) && ls_lua_build(lua, lua->profiles, lua->n_profiles, err))
        return true;
    if (lua->L)
        abandon_state(lua);
    lua->retry_at_ms = monotonic_ms() + 1000;
    return false;
}

/* Whether there is a state to call into, restarting one when it is time. */
static bool usable(ls_lua *lua)
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

/* A queue-side call (PreEnqueue, QueueSort, a hint) was cut off: the state
 * is rebuilt with the same profiles, and the failure logged. */
static int rebuild_after(ls_lua *lua, const char *what)
{
    char msg[400];
    lua->overruns++;
    lua->restarts++;
    ls_error err;
    if (!restart(lua, &err))
        snprintf(msg, sizeof msg, "%s: %s: exceeded its time budget; restarting the Lua state failed", what, note);
    else
        snprintf(msg, sizeof msg, "%s: %s: exceeded its time budget of %llu ms (the Lua state was restarted)", what,
                 note, (unsigned long long)lua->timeout_ms);
    ls_log_error("Plugin call cut off", "err", msg);
    lua->cycle->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    lua->cycle->status_code = LS_ERROR;
    return LS_ERROR;
}

static int runtime_failure(ls_lua *lua, const char *what, const char *msg)
{
    char buf[1024];
    if (msg && strstr(msg, "instruction budget"))
        lua->overruns++;
    int n = snprintf(buf, sizeof buf, "%s: %s", what, msg ? msg : "unknown error");
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    lua->cycle->status = ls_status_register(LS_ERROR, buf, (size_t)n);
    lua->cycle->status_code = LS_ERROR;
    return LS_ERROR;
}

/* The plugin the dispatcher said was running when the call was cut off. */
static const char *running_plugin(const ls_lua *lua, int ep, uint32_t profile)
{
    if (!lua->profiles || profile >= lua->n_profiles)
        return "?";
    const ls_vec *list = &lua->profiles[profile].plugins[ls_ext_point_info_of(ep)->point];
    int16_t i = lua->cycle->running_plugin;
    return i >= 0 && (uint32_t)i < list->len ? ls_str_get(LS_VEC_AT(list, ls_plugin_ref, i).name) : "?";
}

/* The watchdog cut a cycle's call off: the state is unusable, so it is freed
 * block by block and built again (same plugins, same profiles). */
static int recover(ls_lua *lua, int ep, uint32_t profile)
{
    char what[160];
    if (lua->over_memory)
        snprintf(what, sizeof what, "plugin exceeded the Lua memory limit of %zu bytes", lua->memory_limit);
    else {
        uint64_t budget, timeout_ms;
        profile_budgets(lua, profile, &budget, &timeout_ms);
        snprintf(what, sizeof what, "plugin exceeded its time budget of %llu ms", (unsigned long long)timeout_ms);
    }
    lua->over_memory = false;
    lua->overruns++;
    lua->restarts++;
    char who[300];
    int point = ls_ext_point_info_of(ep)->point;
    /* Worded as upstream words errors of that extension point. */
    if (point == LS_EP_FILTER)
        snprintf(who, sizeof who, "running \"%s\" filter plugin", running_plugin(lua, ep, profile));
    else
        snprintf(who, sizeof who, "running %s plugin \"%s\"", ls_ext_point_name(point), running_plugin(lua, ep, profile));
    ls_error err;
    char msg[900];
    if (!restart(lua, &err))
        snprintf(msg, sizeof msg, "%s: %s; restarting the Lua state failed: %.300s", who, what, err.msg);
    else
        snprintf(msg, sizeof msg, "%s: %s (the Lua state was restarted)", who, what);
    lua->cycle->status = ls_status_register(LS_ERROR, msg, strlen(msg));
    lua->cycle->status_code = LS_ERROR;
    return LS_ERROR;
}

/* ---- the calls into dispatch.lua's entry points */

/* One call of a dispatch.lua function with one result: an integer (the
 * profile; the hint's id for a hint) and up to two pointers. A cycle's call
 * (in_cycle) is attributed to its point for the watchdog's and the
 * fatal-signal reports; a queue-side one (PreEnqueue, QueueSort, a hint) is
 * not. */
typedef struct dispatch_call {
    int ep;                   /* LS_EP_* row: the function (its hook's name) and the report's label */
    int ref;                  /* the registry reference of the function */
    lua_Integer first;
    const void *ptrs[2];
    int nptrs;
    uint32_t budgets;         /* the profile whose budgets apply; NO_PROFILE: the state's */
    bool in_cycle;
} dispatch_call;

/* Pushes and runs the call; returns guarded_pcall's code (-1: cut off) with
 * the result or the error message on the stack (nothing when cut off). */
static int invoke(ls_lua *lua, const dispatch_call *c)
{
    lua_State *L = lua->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
    lua_pushinteger(L, c->first);
    for (int i = 0; i < c->nptrs; i++)
        lua_pushlightuserdata(L, (void *)c->ptrs[i]);
    bool talks_to_cluster = c->ep == LS_EP_PRE_BIND || c->ep == LS_EP_BIND || c->ep == LS_EP_POST_BIND;
    if (c->in_cycle) {
        lua->cycle->running_plugin = -1;
        lua->over_memory = false;
        active_call = c->ep;
        active_profile = (uint32_t)c->first;
    }
    lua->call_profile = c->budgets;
    int rc = guarded_pcall(lua, 1 + c->nptrs, 1, !talks_to_cluster);
    if (c->in_cycle)
        active_call = -1;
    return rc;
}

/* The status code of a call that returns one (a cycle's point, PreEnqueue):
 * a failure becomes Error with its message in cycle->status, a cut-off call
 * (or, in a cycle, one past the memory limit: it may keep what it took) a
 * rebuilt state. */
static int invoke_for_status(ls_lua *lua, const dispatch_call *c)
{
    const ls_ext_point_info *row = ls_ext_point_info_of(c->ep);
    if (!usable(lua))
        return runtime_failure(lua, row->hook, "the Lua state could not be restarted");
    int rc = invoke(lua, c);
    if (rc < 0 || (c->in_cycle && lua->over_memory))
        return c->in_cycle ? recover(lua, c->ep, (uint32_t)c->first) : rebuild_after(lua, row->name);
    lua_State *L = lua->L;
    if (rc != 0) {
        int code = runtime_failure(lua, row->hook, lua_tostring(L, -1));
        lua_pop(L, 1);
        return code;
    }
    int code = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    const ls_status_info *st = lua->cycle->status_code == LS_ERROR ? ls_status_get(lua->cycle->status) : NULL;
    if (c->in_cycle && st && (strstr(st->message, "instruction budget") || strstr(st->message, "time budget")))
        lua->overruns++;
    return code;
}

/* A queue-side call's answer (the sort key; less as 1 or 0); `fallback` when
 * there is no state, the call failed or was cut off (the state rebuilt). */
static double invoke_for_value(ls_lua *lua, const dispatch_call *c, double fallback)
{
    if (!lua->L)
        return fallback;
    int rc = invoke(lua, c);
    if (rc < 0) {
        rebuild_after(lua, ls_ext_point_info_of(c->ep)->name);
        return fallback;
    }
    double v = fallback;
    if (rc == 0)
        v = c->ep == LS_EP_LESS ? (double)lua_toboolean(lua->L, -1) : lua_tonumber(lua->L, -1);
    lua_pop(lua->L, 1);
    return v;
}

int ls_lua_run(ls_lua *lua, int ep, uint32_t profile)
{
    dispatch_call c = {.ep = ep, .ref = lua->refs[ep], .first = profile, .budgets = profile, .in_cycle = true};
    return invoke_for_status(lua, &c);
}

int ls_lua_filter_one(ls_lua *lua, uint32_t profile, const ls_node_info *ni)
{
    dispatch_call c = {.ep = LS_EP_FILTER, .ref = lua->ref_filter_one, .first = profile, .ptrs = {ni}, .nptrs = 1,
                       .budgets = profile, .in_cycle = true};
    return invoke_for_status(lua, &c);
}

int ls_lua_pre_enqueue(ls_lua *lua, uint32_t profile, const ls_pod *pod)
{
    dispatch_call c = {.ep = LS_EP_PRE_ENQUEUE, .ref = lua->refs[LS_EP_PRE_ENQUEUE], .first = profile,
                       .ptrs = {pod}, .nptrs = 1, .budgets = profile};
    return invoke_for_status(lua, &c);
}

double ls_lua_sort_key(ls_lua *lua, uint32_t profile, const ls_pod *pod)
{
    dispatch_call c = {.ep = LS_EP_QUEUE_SORT, .ref = lua->refs[LS_EP_QUEUE_SORT], .first = profile,
                       .ptrs = {pod}, .nptrs = 1, .budgets = profile};
    double key = invoke_for_value(lua, &c, 0);
    return key == key ? key : 0;   /* NaN orders nothing */
}

bool ls_lua_less(ls_lua *lua, uint32_t profile, const ls_pod *a, const ls_pod *b)
{
    dispatch_call c = {.ep = LS_EP_LESS, .ref = lua->refs[LS_EP_LESS], .first = profile, .ptrs = {a, b},
                       .nptrs = 2, .budgets = profile};
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

bool ls_lua_registrations(ls_lua *lua, ls_event_registration **out, uint32_t *n, ls_error *err)
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

int ls_lua_hint(ls_lua *lua, int hint, const ls_pod *pod, const ls_cluster_event *ev)
{
    if (!lua->L)
        return LS_HINT_QUEUE;
    dispatch_call c = {.ep = -1, .ref = lua->ref_hint, .first = hint, .ptrs = {pod, ev}, .nptrs = 2,
                       .budgets = NO_PROFILE};
    int rc = invoke(lua, &c);
    lua_State *L = lua->L;
    if (rc < 0) {
        rebuild_after(lua, "queueing hint");
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

char **ls_lua_plugin_files(ls_lua *lua, uint32_t *n)
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

static void call_with_pod_id(ls_lua *lua, int ref, uint32_t pod_id)
{
    if (!lua->L)
        return;
    lua_rawgeti(lua->L, LUA_REGISTRYINDEX, ref);
    lua_pushinteger(lua->L, (lua_Integer)pod_id);
    if (lua_pcall(lua->L, 1, 0, 0) != 0)
        lua_pop(lua->L, 1);
}

void ls_lua_park(ls_lua *lua, uint32_t pod_id)
{
    call_with_pod_id(lua, lua->ref_park, pod_id);
}

void ls_lua_resume(ls_lua *lua, uint32_t pod_id)
{
    call_with_pod_id(lua, lua->ref_resume, pod_id);
}

bool ls_lua_sort_uses_less(ls_lua *lua)
{
    lua_State *L = lua->L;
    if (!L)
        return false;
    lua_rawgeti(L, LUA_REGISTRYINDEX, lua->ref_sort_uses_less);
    bool uses = lua_pcall(L, 0, 1, 0) == 0 && lua_toboolean(L, -1);
    lua_pop(L, 1);
    return uses;
}

void ls_lua_request_stop(void)
{
    ls_watchdog_request_stop();
}

size_t ls_lua_memory(const ls_lua *lua)
{
    return lua->memory;
}

uint64_t ls_lua_restarts(const ls_lua *lua)
{
    return lua->restarts;
}

uint64_t ls_lua_budget_overruns(const ls_lua *lua)
{
    return lua->overruns;
}

uint64_t ls_lua_hint_errors(const ls_lua *lua)
{
    return lua->hint_errors;
}

/* ---- configuration tools: check, completed args, options */

/* Pushes dispatch's function `name`; false (nothing pushed) if it fails. */
static bool push_dispatch_fn(lua_State *L, const char *name, ls_error *err)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, "luasched.dispatch");
    if (lua_pcall(L, 1, 1, 0) != 0) {
        ls_errorf(err, "loading the Lua runtime: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    return true;
}

static void push_profiles(lua_State *L, const ls_profile *profiles, uint32_t n)
{
    lua_newtable(L);
    for (uint32_t i = 0; i < n; i++) {
        push_profile(L, &profiles[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
}

bool ls_lua_check(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_vec *problems, ls_error *err)
{
    lua_State *L = lua->L;
    if (!push_dispatch_fn(L, "check", err))
        return false;
    push_profiles(L, profiles, n);
    int rc = guarded_pcall(lua, 1, 1, true);
    if (rc < 0) {
        ls_error cut;
        cut_off(lua, &cut, "checking plugins", NULL);
        *(char **)ls_vec_push(problems) = ls_xstrdup(cut.msg);
        return true;
    }
    if (rc != 0) {
        ls_errorf(err, "checking plugins: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    size_t count = lua_objlen(L, -1);
    for (size_t i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, (int)i);
        const char *msg = lua_tostring(L, -1);
        *(char **)ls_vec_push(problems) = ls_xstrdup(msg ? msg : "?");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return true;
}

static cJSON *lua_to_json(lua_State *L, int idx, const cJSON *hint, int depth);

static int compare_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A table with keys 1..n only is a list; an empty one is whatever the given
 * args had there, else a list below the top (the plugins' empty defaults are
 * lists) and an object at the top. Object keys come out sorted. */
static cJSON *table_to_json(lua_State *L, int idx, const cJSON *hint, int depth)
{
    size_t len = lua_objlen(L, idx), keys = 0;
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        keys++;
    bool list = len > 0 && keys == len;
    if (keys == 0)
        list = hint ? cJSON_IsArray(hint) : depth > 0;
    if (list) {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 1; i <= len; i++) {
            lua_rawgeti(L, idx, (int)i);
            cJSON_AddItemToArray(a, lua_to_json(L, lua_gettop(L), cJSON_GetArrayItem(hint, (int)i - 1), depth + 1));
            lua_pop(L, 1);
        }
        return a;
    }
    const char **names = ls_xcalloc(keys + 1, sizeof *names);
    size_t n = 0;
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
        if (lua_type(L, -2) == LUA_TSTRING)
            names[n++] = lua_tostring(L, -2);   /* kept alive by the table */
    qsort(names, n, sizeof *names, compare_cstr);
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        lua_getfield(L, idx, names[i]);
        cJSON_AddItemToObject(o, names[i],
                              lua_to_json(L, lua_gettop(L), cJSON_GetObjectItemCaseSensitive(hint, names[i]), depth + 1));
        lua_pop(L, 1);
    }
    free(names);
    return o;
}

static cJSON *lua_to_json(lua_State *L, int idx, const cJSON *hint, int depth)
{
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: return cJSON_CreateNumber(lua_tonumber(L, idx));
    case LUA_TSTRING: return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TTABLE: return depth < 32 ? table_to_json(L, idx, hint, depth) : cJSON_CreateNull();
    default: return cJSON_CreateNull();
    }
}

cJSON *ls_lua_completed_args(ls_lua *lua, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    lua_State *L = lua->L;
    if (!L) {
        ls_errorf(err, "completing plugin args: the Lua state could not be restarted");
        return NULL;
    }
    if (!push_dispatch_fn(L, "completed_args", err))
        return NULL;
    int rc = guarded_pcall(lua, 0, 1, true);
    if (rc < 0) {
        cut_off(lua, err, "completing plugin args", NULL);
        return NULL;
    }
    if (rc != 0) {
        ls_errorf(err, "completing plugin args: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return NULL;
    }
    int all = lua_gettop(L);
    cJSON *out = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        lua_rawgeti(L, all, (int)i + 1);
        cJSON *prof = lua_istable(L, -1) ? lua_to_json(L, lua_gettop(L), profiles[i].plugin_args, 0)
                                         : cJSON_CreateObject();
        /* each plugin's args are an object even when empty */
        for (cJSON *c = prof->child; c; c = c->next)
            if (cJSON_IsArray(c) && !c->child)
                c->type = cJSON_Object;
        cJSON_AddItemToArray(out, prof);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return out;
}

void ls_lua_options_from_config(ls_lua_options *opt, const ls_config *cfg)
{
    const ls_luasched_config *lc = &cfg->luasched;
    if (!opt->plugin_path)
        opt->plugin_path = lc->plugin_dirs;
    if (!opt->timeout_ms)
        opt->timeout_ms = lc->plugin_timeout_ms;
    if (!opt->instruction_budget)
        opt->instruction_budget = lc->instruction_budget;
    if (!opt->memory_limit)
        opt->memory_limit = (size_t)lc->memory_limit_bytes;
}
