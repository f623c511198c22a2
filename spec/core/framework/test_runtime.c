/*
 * test_runtime.c: the Lua runtime (core/src/framework/runtime.c) driven from
 * C with tiny plugins written to a temporary directory: which extension
 * points a plugin's hooks put it at (multiPoint), the queue-side calls
 * (PreEnqueue, the sort key, less), a cycle's calls (Reserve's rejection,
 * Unreserve that cannot fail, PreBind's error worded as upstream words it),
 * event registrations of the rejecting points only, a profile's own time
 * budget cutting a runaway plugin off and the state rebuilt for the next call
 * (counted against that plugin, its point and profile: the metrics' labels),
 * one plugin's code looping in another plugin's call (a metamethod on its
 * CycleState entry) counted against the plugin whose code ran, and the
 * extension-point table both sides read (extension_points.h).
 */
#include "framework/runtime.h"
#include "luasched/framework.h"
#include "luasched/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static const char TINY[] =
    "local ls = require('luasched')\n"
    "local P = ls.plugin('Tiny')\n"
    "function P:pre_enqueue(pod) return ls.unschedulable('tiny says no') end\n"
    "function P:sort_key(pod) return pod.priority * 2 end\n"
    "function P:less(a, b) return a.priority < b.priority end\n"
    "function P:reserve(state, pod, node) return ls.unschedulable('no room') end\n"
    "function P:unreserve(state, pod, node) error('unreserve cannot fail') end\n"
    "function P:pre_bind(state, pod, node)\n"
    "  error('boom')\n"
    "end\n"
    "P.events = { { resource = 'Node', action = 'Add' } }\n"
    "return P\n";

/* Hooks that only extend a point: defining them puts a plugin nowhere. */
static const char ONLY_EXTENSIONS[] =
    "local ls = require('luasched')\n"
    "local P = ls.plugin('OnlyExtensions')\n"
    "function P:unreserve() end\n"
    "function P:add_pod() end\n"
    "function P:normalize_score() end\n"
    "function P:pre_bind_pre_flight() end\n"
    "return P\n";

static const char LOOPER[] =
    "local ls = require('luasched')\n"
    "local P = ls.plugin('Looper')\n"
    "function P:reserve()\n"
    "  local n = 0\n"
    "  while true do n = n + 1 end\n"
    "end\n"
    "return P\n";

/* Host keeps its entry in the CycleState; Intruder (line 5) makes reading
 * a missing field of it loop: Host's Reserve (line 6) runs Intruder's code. */
static const char HOST[] =
    "local ls = require('luasched')\n"
    "local P = ls.plugin('Host')\n"
    "function P:pre_filter(state, pod) state.Host = {} end\n"
    "function P:reserve(state, pod, node)\n"
    "  local entry = state.Host\n"
    "  return entry.missing and ls.unschedulable('never') or nil\n"
    "end\n"
    "return P\n";

static const char INTRUDER[] =
    "local ls = require('luasched')\n"
    "local P = ls.plugin('Intruder')\n"
    "function P:pre_filter(state, pod)\n"
    "  setmetatable(state.Host, { __index = function()\n"
    "    while true do end\n"
    "  end })\n"
    "end\n"
    "return P\n";

static char dir[] = "/tmp/ls_test_runtime_XXXXXX";

static void write_plugin(const char *file, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static void remove_plugins(void)
{
    static const char *const files[] = {"tiny.lua", "only_extensions.lua", "looper.lua", "host.lua", "intruder.lua"};
    char path[256];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static const ls_pod *parse_pod(const char *name, int priority)
{
    char text[300];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
             "\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
             name, priority);
    ls_error err;
    const ls_pod *pod = ls_pod_parse(text, strlen(text), name, &err);
    CHECK(pod != NULL);
    return pod;
}

static void add_plugin(ls_profile *p, int ep, const char *name)
{
    ls_plugin_ref *ref = ls_vec_push(&p->plugins[ep]);
    ref->name = ls_intern_cstr(name);
}

static void init_profile(ls_profile *p, const char *name)
{
    memset(p, 0, sizeof *p);
    p->scheduler_name = ls_intern_cstr(name);
    p->percentage_of_nodes_to_score = -1;
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        ls_vec_init(&p->plugins[ep], sizeof(ls_plugin_ref));
}

static void free_profile(ls_profile *p)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        ls_vec_free(&p->plugins[ep]);
}

static void test_extension_point_table(void)
{
    /* Upstream's names, config keys (KubeSchedulerConfiguration v1 Plugins)
     * and metrics labels; the Lua hooks are the plugin contract's. */
    const ls_ext_point_info *pre_filter = ls_ext_point_info_of(LS_EP_PRE_FILTER);
    CHECK_STR(pre_filter->name, "PreFilter");
    CHECK_STR(pre_filter->hook, "pre_filter");
    CHECK_STR(pre_filter->config_key, "preFilter");
    CHECK_INT(pre_filter->point, LS_EP_PRE_FILTER);
    CHECK_INT(pre_filter->rejects, 1);
    CHECK_INT(ls_ext_point_info_of(LS_EP_SCORE)->rejects, 0);
    const ls_ext_point_info *unreserve = ls_ext_point_info_of(LS_EP_UNRESERVE);
    CHECK_STR(unreserve->name, "Unreserve");
    CHECK_STR(unreserve->hook, "unreserve");
    CHECK(unreserve->config_key == NULL);
    CHECK_INT(unreserve->point, LS_EP_RESERVE);
    CHECK_INT(unreserve->implements, 0);
    CHECK_STR(ls_ext_point_info_of(LS_EP_NORMALIZE_SCORE)->name, "ScoreExtensionNormalize");
    CHECK_INT(ls_ext_point_info_of(LS_EP_NORMALIZE_SCORE)->point, LS_EP_SCORE);
    CHECK_STR(ls_ext_point_info_of(LS_EP_PRE_BIND_PRE_FLIGHT)->name, "PreBindPreFlight");
    CHECK_INT(ls_ext_point_info_of(LS_EP_LESS)->point, LS_EP_QUEUE_SORT);
    CHECK_INT(ls_ext_point_info_of(LS_EP_LESS)->implements, 1);
    CHECK(ls_ext_point_info_of(LS_EP_HOOK_COUNT) == NULL);
    CHECK(ls_ext_point_info_of(-1) == NULL);
    int rejecting = 0;
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        rejecting += ls_ext_point_info_of(ep)->rejects;
    CHECK_INT(rejecting, 5);   /* PreEnqueue, PreFilter, Filter, Reserve, Permit */
}

static void test_plugin_points(ls_lua *lua)
{
    uint32_t points = 0;
    ls_error err;
    CHECK(ls_lua_plugin_points(lua, "Tiny", &points, &err));
    CHECK_INT(points, (1u << LS_EP_PRE_ENQUEUE) | (1u << LS_EP_QUEUE_SORT) | (1u << LS_EP_RESERVE) |
                          (1u << LS_EP_PRE_BIND));
    points = 123;
    CHECK(ls_lua_plugin_points(lua, "OnlyExtensions", &points, &err));
    CHECK_INT(points, 0);
    CHECK(!ls_lua_plugin_points(lua, "NoSuchPlugin", &points, &err));
    CHECK_CONTAINS(err.msg, "NoSuchPlugin");
}

static void test_queue_side(ls_lua *lua, ls_cycle *cycle, const ls_pod *p7, const ls_pod *p9)
{
    CHECK_INT(ls_lua_pre_enqueue(lua, 0, p7), LS_UNSCHEDULABLE);
    CHECK_CONTAINS(ls_status_message(cycle->status), "tiny says no");
    CHECK(ls_lua_sort_key(lua, 0, p7) == 14.0);
    CHECK(ls_lua_sort_key(lua, 0, p9) == 18.0);
    CHECK(ls_lua_less(lua, 0, p7, p9));
    CHECK(!ls_lua_less(lua, 0, p9, p7));
}

static void test_cycle_calls(ls_lua *lua, ls_cycle *cycle, const ls_pod *p7)
{
    cycle->pod = p7;
    CHECK_INT(ls_lua_run(lua, LS_EP_RESERVE, 0), LS_UNSCHEDULABLE);
    CHECK_CONTAINS(ls_status_message(cycle->status), "no room");
    /* Unreserve's errors are logged, never a failure (upstream: no status). */
    CHECK_INT(ls_lua_run(lua, LS_EP_UNRESERVE, 0), LS_SUCCESS);
    CHECK_INT(ls_lua_run(lua, LS_EP_PRE_BIND, 0), LS_ERROR);
    CHECK_CONTAINS(ls_status_message(cycle->status), "running PreBind plugin \"Tiny\"");
    CHECK_CONTAINS(ls_status_message(cycle->status), "tiny.lua:9: boom");
    /* No PreBind plugin of Tiny's has pre_bind_pre_flight: it has work. */
    CHECK_INT(ls_lua_run(lua, LS_EP_PRE_BIND_PRE_FLIGHT, 0), LS_SUCCESS);
}

static void test_registrations(ls_lua *lua)
{
    ls_event_registration *regs = NULL;
    uint32_t n = 0;
    ls_error err;
    CHECK(ls_lua_registrations(lua, &regs, &n, &err));
    bool tiny = false, looper = false;
    for (uint32_t i = 0; i < n; i++) {
        const char *plugin = ls_str_get(regs[i].plugin);
        if (strcmp(plugin, "Tiny") == 0) {
            tiny = true;
            CHECK_INT(regs[i].profile, 0);
            CHECK_STR(ls_str_get(regs[i].resource), "Node");
            CHECK_INT(regs[i].actions, ls_action_from_name("Add"));
        } else if (strcmp(plugin, "Looper") == 0) {
            looper = true;   /* no events table: every event, as upstream's default */
            CHECK_INT(regs[i].profile, 1);
            CHECK_STR(ls_str_get(regs[i].resource), "*");
        }
    }
    CHECK(tiny);
    CHECK(looper);
    free(regs);
}

static ls_fault_tally_row fault_row;
static int fault_rows;
static void keep_fault_row(void *ud, const ls_fault_tally_row *row)
{
    (void)ud;
    fault_row = *row;
    fault_rows++;
}

static void test_runaway_plugin(ls_lua *lua, ls_cycle *cycle)
{
    CHECK_INT(ls_lua_restarts(lua), 0);
    CHECK_INT(ls_lua_run(lua, LS_EP_RESERVE, 1), LS_ERROR);
    char expected[400];
    snprintf(expected, sizeof expected, "running Reserve plugin \"Looper\": plugin exceeded its time budget of 300 ms "
             "in reserve at %s/looper.lua:3 (the Lua state was restarted)", dir);
    CHECK_CONTAINS(ls_status_message(cycle->status), expected);
    CHECK_INT(ls_lua_restarts(lua), 1);
    CHECK_INT(ls_lua_budget_overruns(lua), 1);
    /* counted against the plugin whose code ran, its point and profile (the
     * metrics' labels), once: a drain empties the tally */
    fault_rows = 0;
    ls_lua_drain_faults(lua, keep_fault_row, NULL);
    CHECK_INT(fault_rows, 1);
    CHECK_STR(fault_row.profile, "looper-scheduler");
    CHECK_STR(fault_row.plugin, "Looper");
    CHECK_STR(fault_row.point, "Reserve");
    CHECK_INT(fault_row.overruns, 1);
    CHECK_INT(fault_row.restarts, 1);
    ls_lua_drain_faults(lua, keep_fault_row, NULL);
    CHECK_INT(fault_rows, 1);
    /* The cycle cut off runs no later point: its CycleState went with the
     * state (the pod's Error stays the cut-off's) */
    CHECK_INT(ls_lua_run(lua, LS_EP_RESERVE, 0), LS_ERROR);
    CHECK_CONTAINS(ls_status_message(cycle->status), expected);
    /* The next cycle's rebuilt state has every profile's plugins again. */
    cycle->state_lost = 0;
    CHECK_INT(ls_lua_run(lua, LS_EP_RESERVE, 0), LS_UNSCHEDULABLE);
    CHECK_CONTAINS(ls_status_message(cycle->status), "no room");
}

/* A cut-off is counted against the plugin whose code ran (the metrics'
 * plugin label), not the one whose hook was called. */
static void test_code_of_another_plugin(ls_lua *lua, ls_cycle *cycle, const ls_pod *pod)
{
    cycle->pod = pod;
    cycle->state_lost = 0;
    CHECK_INT(ls_lua_run(lua, LS_EP_PRE_FILTER, 2), LS_SUCCESS);
    CHECK_INT(ls_lua_run(lua, LS_EP_RESERVE, 2), LS_ERROR);
    char expected[600];
    snprintf(expected, sizeof expected, "running Reserve plugin \"Host\": plugin \"Intruder\" (%s/intruder.lua:5, "
             "its code run in Host's call): plugin exceeded its time budget of 300 ms in reserve at %s/host.lua:4 "
             "(the Lua state was restarted)", dir, dir);
    CHECK_STR(ls_status_message(cycle->status), expected);
    fault_rows = 0;
    ls_lua_drain_faults(lua, keep_fault_row, NULL);
    CHECK_INT(fault_rows, 1);
    CHECK_STR(fault_row.profile, "host-scheduler");
    CHECK_STR(fault_row.plugin, "Intruder");
    CHECK_STR(fault_row.point, "Reserve");
    CHECK_INT(fault_row.overruns, 1);
    CHECK_INT(fault_row.restarts, 1);
}

int main(void)
{
    test_extension_point_table();
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_plugin("tiny.lua", TINY);
    write_plugin("only_extensions.lua", ONLY_EXTENSIONS);
    write_plugin("looper.lua", LOOPER);
    write_plugin("host.lua", HOST);
    write_plugin("intruder.lua", INTRUDER);

    ls_cycle cycle;
    memset(&cycle, 0, sizeof cycle);
    ls_lua_options opt = {.lua_path = LS_SPEC_DIR "/../lua/?.lua;" LS_GEN_DIR "/?.lua", .plugin_path = dir};
    ls_error err;
    ls_lua *lua = ls_lua_new(&cycle, &opt, &err);
    CHECK(lua != NULL);
    if (!lua) {
        fprintf(stderr, "%s\n", err.msg);
        remove_plugins();
        TEST_MAIN_END();
    }
    test_plugin_points(lua);

    ls_profile profiles[3];
    init_profile(&profiles[0], "tiny-scheduler");
    add_plugin(&profiles[0], LS_EP_PRE_ENQUEUE, "Tiny");
    add_plugin(&profiles[0], LS_EP_QUEUE_SORT, "Tiny");
    add_plugin(&profiles[0], LS_EP_RESERVE, "Tiny");
    add_plugin(&profiles[0], LS_EP_PRE_BIND, "Tiny");
    init_profile(&profiles[1], "looper-scheduler");
    add_plugin(&profiles[1], LS_EP_RESERVE, "Looper");
    profiles[1].plugin_timeout_ms = 300;
    init_profile(&profiles[2], "host-scheduler");
    add_plugin(&profiles[2], LS_EP_PRE_FILTER, "Host");
    add_plugin(&profiles[2], LS_EP_PRE_FILTER, "Intruder");
    add_plugin(&profiles[2], LS_EP_RESERVE, "Host");
    profiles[2].plugin_timeout_ms = 300;
    CHECK(ls_lua_build(lua, profiles, 3, &err));

    const ls_pod *p7 = parse_pod("p7", 7), *p9 = parse_pod("p9", 9);
    test_queue_side(lua, &cycle, p7, p9);
    test_cycle_calls(lua, &cycle, p7);
    test_registrations(lua);
    test_runaway_plugin(lua, &cycle);
    test_code_of_another_plugin(lua, &cycle, p7);

    ls_lua_free(lua);
    ls_pod_release(p7);
    ls_pod_release(p9);
    free_profile(&profiles[0]);
    free_profile(&profiles[1]);
    free_profile(&profiles[2]);
    remove_plugins();
    ls_status_reset();
    TEST_MAIN_END();
}
