/*
 * compare_lua.c: metrics written in Lua for `luasched compare`
 * (`--metric NAME=FILE.lua`; docs/policy-lab/metrics.md). A metric is a
 * function of the cluster at a point of the replay: the file returns a
 * function that receives the metric state's own copy of the cluster (its
 * nodes with labels, allocatable and requested resources, and their pods with
 * annotations, labels and requests, in arrival order; a pod's table and a
 * node's labels and allocatable are made once and shared by the calls) and
 * returns a number, or nil for "no value here". It is called at each percent of arrived
 * workload (GPU milli on a GPU trace, else pods created), as the GPU
 * allocation is, and reported as mean and spread over seeds.
 *
 * The code runs in a Lua state of its own, in the supervised, confined
 * process that runs the policies' plugin code: the plugin sandbox's
 * environment (lua/luasched/sandbox.lua; `require` reaches only plain modules
 * on the metrics and plugin directories), an instruction budget and the
 * wall-clock watchdog per call, and a memory limit. An error names the metric,
 * and the file and line.
 *
 * The built-in metrics, first in every report: gpuFragmentedMilli and
 * gpuFragmentationRatio (plugins/metrics/), loaded on a GPU trace only
 * (--no-builtin-metrics leaves them out). The reports of the metrics are in compare_lua_report.c.
 */
#include "cli/cli.h"
#include "cli/compare.h"
#include "framework/lua_heap.h"
#include "framework/paths.h"
#include "framework/watchdog.h"
#include "luasched/cache.h"
#include "luasched/objects.h"
#include "luasched/scheduler.h"
#include "sim/cluster.h"

#include <cjson/cJSON.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define GPU_RESOURCE "alibabacloud.com/gpu-milli"

enum {
    METRIC_BUDGET = 200000000,                  /* instructions per call, the plugins' default */
    METRIC_TIMEOUT_MS = 10000,                  /* wall clock per call, unless the policy's configuration says */
};
#define METRIC_MEMORY ((size_t)512 << 20)       /* bytes of the state */

static const char *const BUILTIN_NAME[CMP_BUILTIN_METRICS] = {"gpuFragmentedMilli", "gpuFragmentationRatio"};
static const char *const BUILTIN_FILE[CMP_BUILTIN_METRICS] = {"gpu_fragmented_milli.lua",
                                                               "gpu_fragmentation_ratio.lua"};

struct cmp_lua {
    lua_State *L;
    ls_lua_heap heap;
    size_t memory;
    ls_watchdog *watchdog;
    int ref[CMP_MAX_METRICS];   /* the metric's function; LUA_NOREF: not loaded (a GPU one off a GPU trace) */
    const char *name[CMP_MAX_METRICS], *file[CMP_MAX_METRICS];
    uint32_t n;
    /* what has arrived */
    uint32_t seen;
    double arrived, total;      /* GPU milli (GPU trace) or pods */
    bool by_gpu;
    const cJSON *plugin_args;   /* the policy's first profile's: plugin name -> args */
    uint64_t timeout_ms;        /* wall clock per call */
    int next_percent;
    bool started;               /* the run's series are initialized */
    uint32_t sample;
    int pod_cache;              /* registry ref: pod address -> {seq, the pod's table}; Node address ->
                                 * {name id, name, labels, allocatable} */
};

/* ---- the metric list */

bool cmp_lua_is_builtin(const cmp_report *rep, uint32_t k)
{
    for (uint32_t i = 0; i < CMP_BUILTIN_METRICS; i++)
        if (rep->metric_name[k] == BUILTIN_NAME[i] || strcmp(rep->metric_name[k], BUILTIN_NAME[i]) == 0)
            return true;
    return false;
}

static bool valid_name(const char *s, size_t len)
{
    if (len == 0 || len > 63)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-' || s[i] == '.'))
            return false;
    return true;
}

void cmp_lua_add_builtin(cmp_report *rep)
{
    for (uint32_t i = 0; i < CMP_BUILTIN_METRICS; i++) {
        rep->metric_name[rep->n_metrics] = BUILTIN_NAME[i];
        rep->metric_file[rep->n_metrics++] = BUILTIN_FILE[i];
    }
}

bool cmp_lua_add(cmp_report *rep, char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq || !valid_name(arg, (size_t)(eq - arg)) || !eq[1]) {
        fprintf(stderr, "luasched compare: --metric: expected NAME=FILE.lua (NAME: letters, digits, '_', '-', '.'), "
                        "got \"%s\"\n", arg);
        return false;
    }
    size_t len = (size_t)(eq - arg);
    for (uint32_t i = 0; i < CMP_BUILTIN_METRICS; i++)
        if (strlen(BUILTIN_NAME[i]) == len && strncmp(BUILTIN_NAME[i], arg, len) == 0) {
            fprintf(stderr, "luasched compare: --metric: the name %.*s is a built-in metric's\n", (int)len, arg);
            return false;
        }
    for (uint32_t i = 0; i < rep->n_metrics; i++)
        if (strlen(rep->metric_name[i]) == len && strncmp(rep->metric_name[i], arg, len) == 0) {
            fprintf(stderr, "luasched compare: --metric: the name %.*s is given twice\n", (int)len, arg);
            return false;
        }
    if (rep->n_metrics == CMP_MAX_METRICS) {
        fprintf(stderr, "luasched compare: --metric: at most %d metrics of your own, got another (\"%s\")\n",
                CMP_MAX_METRICS - CMP_BUILTIN_METRICS, arg);
        return false;
    }
    *eq = '\0';   /* the name and the file stay in the argument */
    rep->metric_name[rep->n_metrics] = arg;
    rep->metric_file[rep->n_metrics++] = eq + 1;
    return true;
}

/* ---- the state */

static void *metric_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    cmp_lua *m = ud;
    (void)osize;
    if (nsize == 0) {
        if (ptr) {
            m->memory -= ls_lua_heap_size(ptr);
            ls_lua_heap_free(&m->heap, ptr);
        }
        return NULL;
    }
    size_t old = ptr ? ls_lua_heap_size(ptr) : 0;
    if (nsize > old && m->memory - old + nsize > METRIC_MEMORY)
        return NULL;   /* Lua raises "not enough memory" in the metric */
    void *p = ls_lua_heap_realloc(&m->heap, ptr, nsize);
    if (p)
        m->memory = m->memory - old + nsize;
    return p;
}

/* The loader, run with the full libraries before any metric code: the
 * sandbox's environment for every metric file and module, a require that
 * loads plain Lua files from the directories given (each once). */
static const char BOOT[] =
    "local lua_path, dirs = ...\n"
    "package.path = lua_path\n"
    "local sandbox = require('luasched.sandbox')\n"
    "sandbox.lock_strings()\n"
    "local modules, loading = {}, {}\n"
    "local function find(name)\n"
    "  for _, d in ipairs(dirs) do\n"
    "    local path = d .. '/' .. name .. '.lua'\n"
    "    local f = io.open(path, 'r')\n"
    "    if f then f:close() return path end\n"
    "  end\n"
    "end\n"
    "local load_in\n"
    "local function req(name)\n"
    "  if type(name) ~= 'string' or not name:match('^[%w_]+$') then\n"
    "    error('require: expected a module name (letters, digits, _), got ' .. tostring(name), 2)\n"
    "  end\n"
    "  local v = modules[name]\n"
    "  if v == loading then error('require: ' .. name .. ' requires itself (through the modules it requires)', 2) end\n"
    "  if v ~= nil then return v end\n"
    "  local path = find(name)\n"
    "  if not path then error('require: no module ' .. name .. '.lua in ' .. table.concat(dirs, ':'), 2) end\n"
    "  modules[name] = loading\n"
    "  v = load_in(path)(name)\n"
    "  if v == nil then v = true end\n"
    "  modules[name] = v\n"
    "  return v\n"
    "end\n"
    "load_in = function(path)\n"
    "  local chunk, err = loadfile(path)\n"
    "  if not chunk then error(err, 0) end\n"
    "  return setfenv(chunk, sandbox.new_env(req, '@' .. path))\n"
    "end\n"
    "return function(path)\n"
    "  local fn = load_in(path)()\n"
    "  if type(fn) ~= 'function' then\n"
    "    error(path .. ': expected the file to return a function(cluster) that returns a number, got ' .. type(fn), 0)\n"
    "  end\n"
    "  return fn\n"
    "end\n";

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    luaL_where(L, 1);
    lua_pushliteral(L, "metric exceeded its instruction budget");
    lua_concat(L, 2);
    lua_error(L);
}

/* Calls the function under the budget and the watchdog: 0, or a Lua error
 * code with the message on the stack, or -1 when the watchdog cut it off (the
 * state is then unusable: m->L is NULL). */
static int guarded_pcall(cmp_lua *m, int nargs, int nresults)
{
    sigjmp_buf escape;
    if (sigsetjmp(escape, 0)) {
        ls_watchdog_disarm(m->watchdog);
        ls_lua_heap_release(&m->heap);
        m->memory = 0;
        m->L = NULL;
        return -1;
    }
    lua_sethook(m->L, budget_hook, LUA_MASKCOUNT, METRIC_BUDGET);
    ls_watchdog_arm(m->watchdog, m->L, m->timeout_ms, true, &escape);
    int rc = lua_pcall(m->L, nargs, nresults, 0);
    ls_watchdog_disarm(m->watchdog);
    lua_sethook(m->L, NULL, 0, 0);
    return rc;
}

/* require's folders: each metric file's own, then each plugin directory's
 * metrics/ and the directory itself (--plugin-path's, then the built-in ones). */
static void push_dirs(lua_State *L, const cmp_lua *m, const char *plugin_path)
{
    lua_newtable(L);
    int i = 1;
    char buf[4096];
    for (uint32_t k = 0; k < m->n; k++) {
        const char *slash = strrchr(m->file[k], '/');
        snprintf(buf, sizeof buf, "%.*s", slash ? (int)(slash - m->file[k]) : 1, slash ? m->file[k] : ".");
        lua_pushstring(L, buf);
        lua_rawseti(L, -2, i++);
    }
    const char *lists[2] = {plugin_path, ls_paths_plugins()};
    for (int l = 0; l < 2; l++) {
        for (const char *p = lists[l]; p && *p;) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len) {
                snprintf(buf, sizeof buf, "%.*s/metrics", (int)len, p);
                lua_pushstring(L, buf);
                lua_rawseti(L, -2, i++);
                lua_pushlstring(L, p, len);
                lua_rawseti(L, -2, i++);
            }
            p = end ? end + 1 : p + len;
        }
    }
}

/* A built-in metric's file: the first plugin directory's metrics/. */
static void builtin_path(const char *base, char *out, size_t len)
{
    const char *dirs = ls_paths_plugins();
    const char *colon = strchr(dirs, ':');
    snprintf(out, len, "%.*s/metrics/%s", colon ? (int)(colon - dirs) : (int)strlen(dirs), dirs, base);
}

static bool load_one(cmp_lua *m, uint32_t k, ls_error *err)
{
    lua_State *L = m->L;
    lua_pushvalue(L, 1);   /* the loader */
    lua_pushstring(L, m->file[k]);
    int rc = guarded_pcall(m, 1, 1);
    if (rc != 0) {
        const char *msg = rc < 0 ? "cut off by the watchdog" : lua_tostring(L, -1);
        ls_errorf(err, "metric %s (%s): %s", m->name[k], m->file[k], msg ? msg : "(an error that is not a string)");
        if (rc > 0)
            lua_pop(L, 1);
        return false;
    }
    m->ref[k] = luaL_ref(L, LUA_REGISTRYINDEX);
    return true;
}

cmp_lua *cmp_lua_open(const cmp_report *rep, bool gpu_trace, const struct cJSON *plugin_args, const char *plugin_path,
                      uint64_t timeout_ms, ls_error *err)
{
    cmp_lua *m = ls_xcalloc(1, sizeof *m);
    m->plugin_args = plugin_args;
    m->timeout_ms = timeout_ms ? timeout_ms : METRIC_TIMEOUT_MS;
    ls_lua_heap_init(&m->heap);
    m->n = rep->n_metrics;
    m->next_percent = 0;
    for (uint32_t k = 0; k < CMP_MAX_METRICS; k++)
        m->ref[k] = LUA_NOREF;
    static char builtin[CMP_BUILTIN_METRICS][4096];
    for (uint32_t k = 0; k < m->n; k++) {
        m->name[k] = rep->metric_name[k];
        m->file[k] = rep->metric_file[k];
        if (cmp_lua_is_builtin(rep, k)) {
            builtin_path(rep->metric_file[k], builtin[k], sizeof builtin[k]);
            m->file[k] = builtin[k];
        }
    }
    m->L = lua_newstate(metric_alloc, m);
    m->watchdog = ls_watchdog_new();
    if (!m->L || !m->watchdog) {
        ls_errorf(err, "the metrics' Lua state could not be created");
        cmp_lua_close(m);
        return NULL;
    }
    lua_State *L = m->L;
    luaL_openlibs(L);
    if (luaL_loadbuffer(L, BOOT, sizeof BOOT - 1, "=luasched compare metrics") != 0) {
        ls_errorf(err, "the metrics' loader: %s", lua_tostring(L, -1));
        cmp_lua_close(m);
        return NULL;
    }
    lua_pushstring(L, ls_paths_lua());
    push_dirs(L, m, plugin_path);
    if (lua_pcall(L, 2, 1, 0) != 0) {
        ls_errorf(err, "the metrics' loader: %s", lua_tostring(L, -1));
        cmp_lua_close(m);
        return NULL;
    }
    for (uint32_t k = 0; k < m->n; k++) {
        if (cmp_lua_is_builtin(rep, k) && !gpu_trace)
            continue;
        if (!load_one(m, k, err)) {
            cmp_lua_close(m);
            return NULL;
        }
    }
    lua_settop(L, 0);   /* the loader: every metric is loaded */
    lua_newtable(L);
    m->pod_cache = luaL_ref(L, LUA_REGISTRYINDEX);
    return m;
}

void cmp_lua_close(cmp_lua *m)
{
    if (!m)
        return;
    if (m->L)
        lua_close(m->L);
    ls_lua_heap_release(&m->heap);
    if (m->watchdog)
        ls_watchdog_free(m->watchdog);
    free(m);
}

/* ---- the cluster's copy */

static void push_resources(lua_State *L, const ls_resources *r)
{
    lua_createtable(L, 0, 4);
    uint32_t n = ls_resource_count();
    for (uint32_t i = 0; i < n && i < LS_MAX_RESOURCES; i++) {
        if (r->v[i] == 0 && i != LS_RES_CPU && i != LS_RES_MEMORY)
            continue;
        lua_pushnumber(L, (lua_Number)r->v[i]);
        lua_setfield(L, -2, ls_resource_name(i));
    }
}

static void push_labels(lua_State *L, const ls_labels *labels)
{
    lua_createtable(L, 0, (int)labels->n);
    for (uint32_t i = 0; i < labels->n; i++) {
        lua_pushstring(L, ls_str_get(labels->items[i].value));
        lua_setfield(L, -2, ls_str_get(labels->items[i].key));
    }
}

static int by_seq(const void *a, const void *b)
{
    const ls_pod *x = *(const ls_pod *const *)a, *y = *(const ls_pod *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void push_pod(lua_State *L, const ls_pod *pod)
{
    lua_createtable(L, 0, 5);
    lua_pushstring(L, ls_str_get(pod->ns));
    lua_setfield(L, -2, "namespace");
    lua_pushstring(L, ls_str_get(pod->name));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, pod->uid ? ls_str_get(pod->uid) : "");
    lua_setfield(L, -2, "uid");
    push_labels(L, &pod->labels);
    lua_setfield(L, -2, "labels");
    push_labels(L, &pod->annotations);
    lua_setfield(L, -2, "annotations");
    push_resources(L, &pod->requests);
    lua_setfield(L, -2, "requests");
}

/* The pod's table, made once per pod (by address, checked by its arrival
 * number: an address a deleted pod freed may hold another pod). `cache` is
 * the stack index of the cache. */
static void push_pod_cached(lua_State *L, int cache, const ls_pod *pod)
{
    lua_pushlightuserdata(L, (void *)pod);
    lua_rawget(L, cache);
    if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, 1);
        bool same = (uint64_t)lua_tonumber(L, -1) == pod->seq;
        lua_pop(L, 1);
        if (same) {
            lua_rawgeti(L, -1, 2);
            lua_remove(L, -2);
            return;
        }
    }
    lua_pop(L, 1);
    push_pod(L, pod);
    lua_pushlightuserdata(L, (void *)pod);
    lua_createtable(L, 2, 0);
    lua_pushnumber(L, (lua_Number)pod->seq);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, 2);
    lua_rawset(L, cache);
}

/* Sets the node's name, labels and allocatable on the table at the top: made
 * once per Node object (by address, checked by its name) in the cache at
 * `cache`, as a pod's table is. */
static void set_node_fixed(lua_State *L, int cache, const ls_node_info *ni)
{
    lua_pushlightuserdata(L, (void *)ni->node);
    lua_rawget(L, cache);
    bool hit = false;
    if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, 1);
        hit = (ls_str)lua_tonumber(L, -1) == ni->node->name;
        lua_pop(L, 1);
    }
    if (!hit) {
        lua_pop(L, 1);
        lua_createtable(L, 4, 0);
        lua_pushnumber(L, (lua_Number)ni->node->name);
        lua_rawseti(L, -2, 1);
        lua_pushstring(L, ls_str_get(ni->node->name));
        lua_rawseti(L, -2, 2);
        push_labels(L, &ni->node->labels);
        lua_rawseti(L, -2, 3);
        push_resources(L, &ni->allocatable);
        lua_rawseti(L, -2, 4);
        lua_pushlightuserdata(L, (void *)ni->node);
        lua_pushvalue(L, -2);
        lua_rawset(L, cache);
    }
    static const char *const FIELD[] = {"name", "labels", "allocatable"};
    for (int i = 0; i < 3; i++) {
        lua_rawgeti(L, -1, i + 2);
        lua_setfield(L, -3, FIELD[i]);
    }
    lua_pop(L, 1);
}

static void push_node(lua_State *L, int cache, const ls_node_info *ni, const ls_pod **order)
{
    lua_createtable(L, 0, 6);
    set_node_fixed(L, cache, ni);
    lua_pushnumber(L, (lua_Number)ni->generation);
    lua_setfield(L, -2, "generation");
    push_resources(L, &ni->requested);
    lua_setfield(L, -2, "requested");
    for (uint32_t i = 0; i < ni->num_pods; i++)
        order[i] = ni->pods[i];
    qsort(order, ni->num_pods, sizeof *order, by_seq);
    lua_createtable(L, (int)ni->num_pods, 0);
    for (uint32_t i = 0; i < ni->num_pods; i++) {
        push_pod_cached(L, cache, order[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
    lua_setfield(L, -2, "pods");
}

static void push_json(lua_State *L, const cJSON *j)
{
    if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        lua_newtable(L);
        int i = 1;
        for (const cJSON *c = j->child; c; c = c->next) {
            push_json(L, c);
            if (cJSON_IsArray(j))
                lua_rawseti(L, -2, i++);
            else
                lua_setfield(L, -2, c->string);
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

/* cluster.object(kind, namespace, name): an object of the trace as a table
 * (its JSON), or nil. kind: "Namespace", ..., or "plural.version.group". */
static int object_fn(lua_State *L)
{
    const ls_cluster *c = lua_touserdata(L, lua_upvalueindex(1));
    const char *kind = luaL_checkstring(L, 1);
    const char *ns = luaL_optstring(L, 2, NULL);
    const char *name = luaL_checkstring(L, 3);
    const ls_object *o = ls_cluster_find_object(c, kind, ns, name);
    cJSON *j = o ? cJSON_ParseWithLength(o->json, o->json_len) : NULL;
    if (!j) {
        lua_pushnil(L);
        return 1;
    }
    push_json(L, j);
    cJSON_Delete(j);
    return 1;
}

/* cluster.pluginArgs(name): the args of a plugin in the policy's
 * configuration (its first profile's pluginConfig, as written), or nil. */
static int plugin_args_fn(lua_State *L)
{
    const cJSON *args = lua_touserdata(L, lua_upvalueindex(1));
    const char *name = luaL_checkstring(L, 1);
    const cJSON *a = args ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;
    if (a)
        push_json(L, a);
    else
        lua_pushnil(L);
    return 1;
}

static void push_cluster(cmp_lua *m, const ls_cluster *c, const ls_scheduler *s, int percent)
{
    lua_State *L = m->L;
    const ls_cache *cache = ls_scheduler_cache(s);
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, percent);
    lua_setfield(L, -2, "arrived");
    lua_pushinteger(L, ++m->sample);
    lua_setfield(L, -2, "sample");
    lua_pushnumber(L, (lua_Number)ls_scheduler_now_ms(s) / 1000.0);
    lua_setfield(L, -2, "time");
    lua_pushlightuserdata(L, (void *)c);
    lua_pushcclosure(L, object_fn, 1);
    lua_setfield(L, -2, "object");
    lua_pushlightuserdata(L, (void *)m->plugin_args);
    lua_pushcclosure(L, plugin_args_fn, 1);
    lua_setfield(L, -2, "pluginArgs");
    uint32_t slots = ls_cluster_node_slots(c), max_pods = 0;
    for (uint32_t i = 0; i < slots; i++) {
        const ls_node *n = ls_cluster_node(c, i);
        const ls_node_info *ni = n ? ls_cache_node_info(cache, n->name) : NULL;
        if (ni && ni->num_pods > max_pods)
            max_pods = ni->num_pods;
    }
    const ls_pod **order = ls_xcalloc(max_pods + 1, sizeof *order);
    lua_rawgeti(L, LUA_REGISTRYINDEX, m->pod_cache);
    int pods_at = lua_gettop(L);
    lua_createtable(L, (int)slots, 0);
    int k = 1;
    for (uint32_t i = 0; i < slots; i++) {
        const ls_node *n = ls_cluster_node(c, i);
        const ls_node_info *ni = n ? ls_cache_node_info(cache, n->name) : NULL;
        if (!ni)
            continue;
        push_node(L, pods_at, ni, order);
        lua_rawseti(L, -2, k++);
    }
    lua_remove(L, pods_at);
    lua_setfield(L, -2, "nodes");
    free(order);
}

/* ---- sampling */

static bool sample(cmp_lua *m, const ls_cluster *c, const ls_scheduler *s, int from, int to, cmp_run *run,
                   ls_error *err)
{
    bool any = false;
    for (uint32_t k = 0; k < m->n; k++)
        any = any || m->ref[k] != LUA_NOREF;
    if (!any || !m->L)
        return true;
    lua_State *L = m->L;
    push_cluster(m, c, s, to);
    int view = lua_gettop(L);
    for (uint32_t k = 0; k < m->n; k++) {
        if (m->ref[k] == LUA_NOREF)
            continue;
        lua_rawgeti(L, LUA_REGISTRYINDEX, m->ref[k]);
        lua_pushvalue(L, view);
        int rc = guarded_pcall(m, 1, 1);
        if (rc != 0) {
            char cut[96];
            snprintf(cut, sizeof cut, "cut off after its time budget (%llu ms a call)",
                     (unsigned long long)m->timeout_ms);
            const char *msg = rc < 0 ? cut : lua_tostring(L, -1);
            ls_errorf(err, "metric %s (%s) at %d%% arrived: %s", m->name[k], m->file[k], to,
                      msg ? msg : "(an error that is not a string)");
            if (rc > 0)
                lua_settop(L, 0);
            return false;
        }
        double v = NAN;
        if (lua_type(L, -1) == LUA_TNUMBER) {
            v = lua_tonumber(L, -1);
        } else if (!lua_isnil(L, -1)) {
            ls_errorf(err, "metric %s (%s) at %d%% arrived: expected a number or nil, got a %s", m->name[k],
                      m->file[k], to, luaL_typename(L, -1));
            lua_settop(L, 0);
            return false;
        }
        lua_pop(L, 1);
        for (int p = from; p <= to; p++)
            run->metric[k][p] = v;
    }
    lua_settop(L, 0);
    /* The copy is garbage now: collected while it is young keeps the state small. */
    lua_gc(L, LUA_GCSTEP, 0);
    return true;
}

static void count_arrivals(cmp_lua *m, const ls_cluster *c, uint64_t now_ms, bool all)
{
    int slot = ls_resource_index(GPU_RESOURCE);
    uint32_t n = ls_cluster_num_pods(c);
    while (m->seen < n) {
        const ls_sim_pod *sp = ls_cluster_pod(c, m->seen);
        if (!all && sp->created_at_ms >= now_ms)
            break;
        m->arrived += m->by_gpu ? (double)sp->obj->pod.requests.v[slot] : 1.0;
        m->seen++;
    }
}

static void start(cmp_lua *m, const ls_cluster *c, cmp_run *run)
{
    for (uint32_t k = 0; k < CMP_MAX_METRICS; k++)
        for (int p = 0; p <= CMP_ARRIVED_MAX; p++)
            run->metric[k][p] = NAN;
    int slot = ls_resource_index(GPU_RESOURCE);
    double gpu = 0;
    for (uint32_t i = 0; slot >= 0 && i < ls_cluster_node_slots(c); i++) {
        const ls_node *n = ls_cluster_node(c, i);
        if (n)
            gpu += (double)n->allocatable.v[slot];
    }
    m->by_gpu = gpu > 0;
    m->total = m->by_gpu ? gpu : (double)ls_cluster_num_pods(c);
    m->next_percent = 0;
    m->started = true;
}

bool cmp_lua_advance(cmp_lua *m, const ls_cluster *c, const ls_scheduler *s, uint64_t now_ms, bool all, cmp_run *run,
                     ls_error *err)
{
    if (!m)
        return true;
    if (!m->started)
        start(m, c, run);
    if (m->total <= 0)
        return true;
    count_arrivals(m, c, now_ms, all);
    double pct = 100.0 * m->arrived / m->total;
    /* Crossed percents (floor); the end of the trace counts as its nearest one. */
    int reached = all ? (int)lround(pct) : (int)floor(pct + 1e-9);
    if (reached > CMP_ARRIVED_MAX)
        reached = CMP_ARRIVED_MAX;
    if (m->next_percent > reached)
        return true;
    double cpu0 = ls_cli_cpu_now();
    bool ok = sample(m, c, s, m->next_percent, reached, run, err);
    run->metric_cpu_seconds += ls_cli_cpu_now() - cpu0;
    m->next_percent = reached + 1;
    return ok;
}
