/*
 * runtime_blame.c: who ran, for the message of a failed or cut-off call: the
 * plugin the dispatcher said was running, its extension point in upstream's
 * words, and where its hook is (file:line); and whose code ran (the
 * innermost frame of a plugin's file at a cut-off), when another plugin's
 * code ran in that plugin's call. The pod's Error and the log line
 * of a cut-off (runtime.c's ls_rt_recover) and of an error that escaped the
 * dispatcher are worded here, and the call running is described in the
 * worker's page.
 */
#include "framework/runtime_internal.h"
#include "luasched/base.h"
#include "worker/page.h"

#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_rt_count_fault(ls_rt *lua, const char *plugin, const char *point, bool overrun, bool restart)
{
    lua->overruns += overrun;
    lua->restarts += restart;
    if (lua->tally && (overrun || restart))
        ls_fault_tally_add(lua->tally, lua->profiles ? ls_str_get(lua->profiles[0].scheduler_name) : NULL, plugin,
                           point, overrun, restart);
}

int ls_rt_failure(ls_rt *lua, const char *what, const char *msg)
{
    char buf[1024];
    int n = what ? snprintf(buf, sizeof buf, "%s: %s", what, msg ? msg : "unknown error")
                 : snprintf(buf, sizeof buf, "%s", msg ? msg : "unknown error");
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    lua->cycle->status = ls_status_register(LS_ERROR, buf, (size_t)n);
    lua->cycle->status_code = LS_ERROR;
    lua->cycle->status_plugin = -1;   /* the runtime's error, no plugin's status */
    return LS_ERROR;
}

/* The point whose plugin runs inside call `ep`: a handle's (a PostFilter's
 * dry run running the Filter or RemovePod plugins) when one runs, else `ep`
 * (a Filter plugin looping in DefaultPreemption's dry run was reported as
 * `running PostFilter plugin "?"`: attacker round 3). */
int ls_rt_running_ep(const ls_rt *lua, int ep)
{
    int nested = lua->cycle ? lua->cycle->handle_ep : 0;
    return nested > 0 && nested <= LS_EP_HOOK_COUNT ? nested - 1 : ep;
}

/* The plugin the dispatcher said was running when the call was cut off. */
const char *ls_rt_running_plugin(const ls_rt *lua, int ep, uint32_t profile)
{
    if (!lua->profiles || profile >= lua->n_profiles)
        return "?";
    const ls_vec *list = &lua->profiles[profile].plugins[ls_ext_point_info_of(ep)->point];
    int16_t i = lua->cycle->running_plugin;
    return i >= 0 && (uint32_t)i < list->len ? ls_str_get(LS_VEC_AT(list, ls_plugin_ref, i).name) : "?";
}

/* "running <point> plugin \"<name>\"", worded as upstream words errors of
 * that extension point; a hook that is a point of its own to plugin authors
 * (Unreserve, PreBindPreFlight, a dry run's AddPod/RemovePod, CloneState) by its own name,
 * not its point's. */
void ls_rt_running_who(const ls_rt *lua, int ep, uint32_t profile, char *who, size_t cap)
{
    int point = ls_ext_point_info_of(ep)->point;
    const char *name = ls_rt_running_plugin(lua, ep, profile);
    if (ep == LS_EP_UNRESERVE || ep == LS_EP_PRE_BIND_PRE_FLIGHT || ep == LS_EP_ADD_POD || ep == LS_EP_REMOVE_POD ||
        ep == LS_EP_CLONE_STATE)
        snprintf(who, cap, "running %s plugin \"%s\"", ls_ext_point_info_of(ep)->name, name);
    else if (point == LS_EP_FILTER)
        snprintf(who, cap, "running \"%s\" filter plugin", name);
    else
        snprintf(who, cap, "running %s plugin \"%s\"", ls_ext_point_name(point), name);
}

/* " in <hook> at file:line" of the plugin running (asked of the state as it
 * is now: after a rebuild, the new one), or "" when unknown. */
void ls_rt_running_at(ls_rt *lua, int ep, uint32_t profile, char *at, size_t cap)
{
    char where[300];
    ls_rt_hook_location(lua, ep, ls_rt_running_plugin(lua, ep, profile), where, sizeof where);
    at[0] = '\0';
    if (where[0])
        snprintf(at, cap, " in %s at %s", ls_ext_point_info_of(ep)->hook, where);
}

/* An error that escaped the dispatcher's own protection during a cycle's
 * call (raised between or around the plugin's calls: a C stack overflow in a
 * callback, the budget's hook firing in the dispatcher): an Error of the
 * plugin that was running, with its point and hook's file:line. */
int ls_rt_failure_in_call(ls_rt *lua, int ep, uint32_t profile, const char *msg)
{
    ep = ls_rt_running_ep(lua, ep);
    const char *running = ls_rt_running_plugin(lua, ep, profile);
    /* a budget's hook is a cut-off: whose code it cut off (the blame); any
     * other error escaped with its frames unwound: the plugin running */
    bool cut_off = msg && strstr(msg, " budget");
    if (cut_off && strstr(msg, "instruction budget"))
        ls_rt_count_fault(lua, ls_rt_blamed(lua, running), ls_ext_point_info_of(ep)->name, true, false);
    char who[300], at[340], blame[420] = "", text[1200];
    ls_rt_running_who(lua, ep, profile, who, sizeof who);
    ls_rt_running_at(lua, ep, profile, at, sizeof at);
    if (cut_off)
        ls_rt_blame_prefix(lua, running, blame, sizeof blame);
    snprintf(text, sizeof text, "%s: %s%s%s", who, blame, msg ? msg : "unknown error", at);
    return ls_rt_failure(lua, NULL, text);
}

/* One plugin's hook of one row of one profile, and where it is. */
struct ls_rt_place {
    uint32_t profile;
    int16_t ep, index;
    char at[240];   /* "filter at /path/plugin.lua:4" */
};

void ls_rt_free_places(ls_rt *lua)
{
    free(lua->places);
    lua->places = NULL;
    lua->n_places = 0;
}

void ls_rt_cache_places(ls_rt *lua)
{
    size_t n = 0;
    for (uint32_t p = 0; p < lua->n_profiles; p++)
        for (int ep = 0; ep < LS_EP_HOOK_COUNT; ep++)
            n += lua->profiles[p].plugins[ls_ext_point_info_of(ep)->point].len;
    struct ls_rt_place *places = n ? calloc(n, sizeof *places) : NULL;
    size_t k = 0;
    for (uint32_t p = 0; places && p < lua->n_profiles; p++) {
        for (int ep = 0; ep < LS_EP_HOOK_COUNT; ep++) {
            const ls_vec *list = &lua->profiles[p].plugins[ls_ext_point_info_of(ep)->point];
            for (uint32_t i = 0; i < list->len && i < INT16_MAX; i++) {
                char where[200];
                ls_rt_hook_location(lua, ep, ls_str_get(LS_VEC_AT(list, ls_plugin_ref, i).name), where, sizeof where);
                if (!where[0])
                    continue;
                struct ls_rt_place *pl = &places[k++];
                pl->profile = p;
                pl->ep = (int16_t)ep;
                pl->index = (int16_t)i;
                snprintf(pl->at, sizeof pl->at, "%s at %s", ls_ext_point_info_of(ep)->hook, where);
            }
        }
    }
    /* the new table first: a reader (the watchdog's thread) never sees a freed one */
    struct ls_rt_place *old = lua->places;
    lua->places = places;
    lua->n_places = k;
    free(old);
}

/* Reads and compares only (the watchdog's thread, a fatal signal handler). */
const char *ls_rt_running_place(const ls_rt *lua, int ep, uint32_t profile)
{
    int16_t i = lua->cycle ? lua->cycle->running_plugin : -1;
    for (size_t k = 0; k < lua->n_places; k++) {
        const struct ls_rt_place *pl = &lua->places[k];
        if (pl->profile == profile && pl->ep == ep && pl->index == i)
            return pl->at;
    }
    return "";
}

/* What a call past the memory limit is told: the limit, or the share of it
 * a plugin that is not built-in may hold after its call. */
void ls_rt_memory_limit_text(const ls_rt *lua, char *out, size_t cap)
{
    if (lua->over_share)
        snprintf(out, cap,
                 "plugin left its Lua state holding %zu bytes, past the %zu its plugins may hold of the Lua memory "
                 "limit of %zu bytes (the last eighth is kept for the built-in plugins)",
                 lua->over_share, lua->memory_limit - lua->memory_limit / 8, lua->memory_limit);
    else
        snprintf(out, cap, "plugin exceeded the Lua memory limit of %zu bytes", lua->memory_limit);
}

/* A note ('plugin "X" (queueing hint at FILE:LINE)', 'plugin "X"
 * (pre_enqueue at FILE:LINE)', 'plugin "X" (loading its file)') as the
 * plugin's name, its point and where it runs, for the worker's page and the
 * fatal report. The whole note went in the plugin's place, and the point was
 * "(outside a cycle)": a queueing hint stuck in C ended the worker as
 * `running (outside a cycle) plugin "plugin "Probe" (queueing hint at ...)"`
 * (attacker round 5). Signal-safe: loops over the text, no libc. */
static size_t text_copy(char *dst, size_t cap, const char *src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i] && i + 1 < cap; i++)
        dst[i] = src[i];
    dst[i] = 0;
    return i;
}

static bool starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return false;
    return true;
}

/* The extension point a noted step names (the queue-side hooks, a hint). */
static const char *noted_point(const char *step)
{
    static const struct { const char *step, *point; } points[] = {
        {"queueing hint at ", "QueueingHint"}, {"pre_enqueue at ", "PreEnqueue"}, {"sort_key at ", "QueueSort"},
        {"less at ", "QueueSort"},             {"sign at ", "Sign"},
    };
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
        if (starts_with(step, points[i].step))
            return points[i].point;
    return "(outside a cycle)";
}

void ls_rt_split_note(const char *text, ls_rt_noted_call *out)
{
    static const char prefix[] = "plugin \"";
    out->plugin[0] = out->where[0] = 0;
    text_copy(out->point, sizeof out->point, "(outside a cycle)", sizeof out->point);
    if (!starts_with(text, prefix)) {
        text_copy(out->plugin, sizeof out->plugin, text, sizeof out->plugin);
        return;
    }
    const char *name = text + sizeof prefix - 1, *end = name;
    while (*end && *end != '"')
        end++;
    text_copy(out->plugin, sizeof out->plugin, name, (size_t)(end - name));
    if (!*end || end[1] != ' ' || end[2] != '(')
        return;
    const char *step = end + 3;
    size_t n = 0;
    while (step[n])
        n++;
    if (n && step[n - 1] == ')')
        n--;
    text_copy(out->where, sizeof out->where, step, n);
    text_copy(out->point, sizeof out->point, noted_point(step), sizeof out->point);
}

/* ---- whose code ran: the innermost frame of a plugin's file */

/* A plugin file's chunk name ("@path") and its plugin; "" for a module that
 * more than one plugin requires (its frames name no one). */
struct ls_rt_source {
    char *source, *plugin;
};

static void free_source_list(struct ls_rt_source *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(list[i].source);
        free(list[i].plugin);
    }
    free(list);
}

void ls_rt_free_sources(ls_rt *lua)
{
    struct ls_rt_source *old = lua->sources;
    size_t n = lua->n_sources;
    lua->n_sources = 0;
    atomic_signal_fence(memory_order_seq_cst);   /* a walk in a signal handler reads no entry past this */
    lua->sources = NULL;
    free_source_list(old, n);
}

/* The plugin of a chunk name: NULL when it is no plugin's file. */
static const char *source_plugin(const ls_rt *lua, const char *source)
{
    for (size_t i = 0; i < lua->n_sources; i++)
        if (strcmp(lua->sources[i].source, source) == 0)
            return lua->sources[i].plugin;
    return NULL;
}

/* A critical section: the watchdog's jump waits for it, so a walk (in the
 * signal handler) never reads a list half made. The new list is published
 * before the old one is freed. */
void ls_rt_add_source(ls_rt *lua, const char *source, const char *plugin)
{
    if (!lua || !source || !plugin)
        return;
    ls_critical_enter();
    for (size_t i = 0; i < lua->n_sources; i++) {
        struct ls_rt_source *s = &lua->sources[i];
        if (strcmp(s->source, source) == 0) {
            if (s->plugin[0] && strcmp(s->plugin, plugin) != 0)
                s->plugin[0] = '\0';   /* a second plugin requires it: shared */
            ls_critical_leave();
            return;
        }
    }
    size_t n = lua->n_sources;
    struct ls_rt_source *list = ls_xcalloc(n + 1, sizeof *list);
    if (n)
        memcpy(list, lua->sources, n * sizeof *list);
    list[n].source = ls_xstrdup(source);
    list[n].plugin = ls_xstrdup(plugin);
    struct ls_rt_source *old = lua->sources;
    lua->sources = list;
    atomic_signal_fence(memory_order_seq_cst);   /* the list before its length, for a walk in a signal handler */
    lua->n_sources = n + 1;
    free(old);   /* the strings moved to the new list */
    ls_critical_leave();
}

void ls_rt_blame_clear(ls_rt *lua)
{
    lua->blame_plugin[0] = lua->blame_where[0] = '\0';
}

/* "file:line" without stdio (the signal handler). */
static void frame_place(const char *file, int line, char *out, size_t cap)
{
    size_t n = text_copy(out, cap, file, cap);
    char digits[16];
    int k = 0;
    unsigned v = line > 0 ? (unsigned)line : 0;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < (int)sizeof digits);
    if (n + 1 + (size_t)k + 1 > cap)
        return;
    out[n++] = ':';
    while (k)
        out[n++] = digits[--k];
    out[n] = '\0';
}

/* The walk's way out when reading a frame faults (in a trace, the frames
 * LuaJIT has not written back). */
static _Thread_local sigjmp_buf *volatile walk_escape;

void ls_rt_blame_walk_fault(void)
{
    sigjmp_buf *escape = walk_escape;
    if (escape) {
        walk_escape = NULL;
        siglongjmp(*escape, 1);
    }
}

enum { MAX_BLAME_LEVELS = 250 };

void ls_rt_blame_frames(ls_rt *lua, lua_State *L)
{
    if (!lua || !L || !lua->n_sources)
        return;
    sigjmp_buf here;
    if (sigsetjmp(here, 0)) {
        walk_escape = NULL;
        return;
    }
    walk_escape = &here;
    lua_Debug ar;
    for (int level = 0; level < MAX_BLAME_LEVELS && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || !ar.source)
            continue;
        const char *plugin = source_plugin(lua, ar.source);
        if (!plugin || !plugin[0])
            continue;   /* the runtime's files, generated loops, a shared module */
        text_copy(lua->blame_plugin, sizeof lua->blame_plugin, plugin, sizeof lua->blame_plugin);
        frame_place(ar.short_src, ar.currentline, lua->blame_where, sizeof lua->blame_where);
        break;
    }
    walk_escape = NULL;
}

/* A call past the memory limit: the walk at the block that crossed it (the
 * allocator's) is whose code took it; the hook and the signal after it are
 * later, wherever the code went on. A plugin past its share of the limit is
 * the one whose call just ended (profiles.lua checks after each hook): no
 * walk names another. */
void ls_rt_blame_memory(ls_rt *lua, lua_State *L)
{
    if (lua && !lua->over_share && !lua->blame_plugin[0])
        ls_rt_blame_frames(lua, L);
}

const char *ls_rt_blamed(const ls_rt *lua, const char *running)
{
    return lua->blame_plugin[0] && !lua->over_share ? lua->blame_plugin : running;
}

void ls_rt_blame_prefix(const ls_rt *lua, const char *running, char *out, size_t cap)
{
    out[0] = '\0';
    if (!lua->blame_plugin[0] || lua->over_share || (running && strcmp(running, lua->blame_plugin) == 0))
        return;
    snprintf(out, cap, "plugin \"%s\" (%s, its code run in %s's call): ", lua->blame_plugin, lua->blame_where,
             running && strcmp(running, "?") != 0 ? running : "another plugin");
}

/* ---- the state running now: the worker's page and the watchdog's reports */

/* The loader names the plugin of a file it loads (loader.lua; a module by
 * the plugin that requires it): whose code a frame of that file is. */
void ls_lua_plugin_source(const char *source, const char *plugin)
{
    ls_rt_add_source(ls_rt_running_state(), source, plugin);
}

void ls_rt_blame_running(void)
{
    ls_rt *lua = ls_rt_running_state();
    if (lua && lua->over_memory)
        ls_rt_blame_memory(lua, lua->L);
    else if (lua && lua->L)
        ls_rt_blame_frames(lua, lua->L);
}

/* The innermost frame of a plugin's file ("path:line"): a file chunk that is
 * not one of the runtime's modules (generated loops are "=..." chunks). */
void ls_rt_plugin_frame(ls_rt *lua, char *out, size_t size)
{
    out[0] = 0;
    lua_Debug ar;
    size_t rl = lua->lua_path ? strcspn(lua->lua_path, "?;") : 0;   /* the runtime's directory */
    for (int level = 0; lua_getstack(lua->L, level, &ar); level++) {
        if (!lua_getinfo(lua->L, "Sl", &ar) || ar.source[0] != '@' || ar.currentline <= 0)
            continue;
        const char *file = ar.source + 1;
        if (rl && strncmp(file, lua->lua_path, rl) == 0)
            continue;
        snprintf(out, size, "%s:%d", file, ar.currentline);
        return;
    }
}

/* The call running now, into the worker's shared page (from the watchdog's
 * thread when the call overruns its budget, from the fatal signal handler):
 * reads of the state and stores, nothing that allocates or locks. */
void ls_rt_describe_running(void)
{
    ls_rt *lua = ls_rt_active_state();
    if (!lua || !ls_worker_page_self)
        return;
    int call = ls_rt_active_call >= 0 ? ls_rt_running_ep(lua, ls_rt_active_call) : -1;
    uint32_t profile = ls_rt_active_profile;
    const ls_pod *pod = lua->cycle ? lua->cycle->pod : NULL;
    const char *name = lua->profiles && profile < lua->n_profiles ? ls_str_get(lua->profiles[profile].scheduler_name)
                                                                   : "";
    if (call >= 0) {
        ls_worker_page_describe(name, ls_rt_running_plugin(lua, call, profile),
                                ls_ext_point_name(ls_ext_point_info_of(call)->point), pod ? ls_str_get(pod->ns) : NULL,
                                pod ? ls_str_get(pod->name) : NULL, ls_rt_running_place(lua, call, profile));
        return;
    }
    static ls_rt_noted_call noted;   /* one describer at a time: the watchdog's thread or the signal handler */
    ls_rt_split_note(ls_rt_current_note(), &noted);
    ls_worker_page_describe(name, noted.plugin, noted.point, pod ? ls_str_get(pod->ns) : NULL,
                            pod ? ls_str_get(pod->name) : NULL, noted.where);
}

void ls_rt_describe_blame(void)
{
    ls_rt *lua = ls_rt_active_state();
    if (!lua || !ls_worker_page_self || ls_rt_active_call < 0)
        return;   /* a call outside a cycle is described by its note */
    ls_rt_blame_running();
    if (ls_rt_running_state() != lua)
        return;   /* a nested state's frames: not the described call's */
    int call = ls_rt_running_ep(lua, ls_rt_active_call);
    const char *running = ls_rt_running_plugin(lua, call, ls_rt_active_profile);
    const char *blamed = ls_rt_blamed(lua, running);
    if (strcmp(blamed, running) != 0)
        ls_worker_page_blame(blamed, lua->blame_where);
}
