/*
 * runtime_config.c: the Lua runtime's configuration tools: the profiles as
 * the Lua tables dispatch.build and dispatch.check take, `luasched check`
 * (dispatch.check over the expanded profiles), the plugin args completed with
 * their declared defaults (--write-config-to) and the runtime options read
 * from the configuration's luasched section.
 */
#include "framework/runtime_internal.h"

#include <cjson/cJSON.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* ---- the profiles as Lua tables (dispatch.build and dispatch.check take them) */

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
    lua_newtable(L);   /* overrideBuiltins as a set: name -> true */
    for (uint32_t i = 0; i < p->n_override_builtins; i++) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, ls_str_get(p->override_builtins[i]));
    }
    lua_setfield(L, -2, "override_builtins");
}

void ls_rt_push_profiles(lua_State *L, const ls_profile *profiles, uint32_t n)
{
    lua_newtable(L);
    for (uint32_t i = 0; i < n; i++) {
        push_profile(L, &profiles[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
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

/* Appends the strings of the list at the top of the stack to `out` (copies). */
static void take_strings(lua_State *L, ls_vec *out)
{
    size_t count = lua_objlen(L, -1);
    for (size_t i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, (int)i);
        const char *msg = lua_tostring(L, -1);
        *(char **)ls_vec_push(out) = ls_xstrdup(msg ? msg : "?");
        lua_pop(L, 1);
    }
}

bool ls_rt_check(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_vec *problems, ls_vec *resolved,
                 ls_error *err)
{
    lua_State *L = lua->L;
    if (!push_dispatch_fn(L, "check", err))
        return false;
    ls_rt_push_profiles(L, profiles, n);
    int rc = ls_rt_load_pcall(lua, 1, 2);
    if (rc < 0) {
        ls_error cut;
        ls_rt_cut_off(lua, &cut, "checking plugins", NULL);
        *(char **)ls_vec_push(problems) = ls_xstrdup(cut.msg);
        return true;
    }
    if (rc != 0) {
        ls_errorf(err, "checking plugins: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    if (resolved && lua_istable(L, -1))
        take_strings(L, resolved);
    lua_pop(L, 1);
    take_strings(L, problems);
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

cJSON *ls_rt_completed_args(ls_rt *lua, const ls_profile *profiles, uint32_t n, ls_error *err)
{
    lua_State *L = lua->L;
    if (!L) {
        ls_errorf(err, "completing plugin args: the Lua state could not be restarted");
        return NULL;
    }
    if (!push_dispatch_fn(L, "completed_args", err))
        return NULL;
    lua_newtable(L);   /* the typed-args plugins, completed even when no point runs them */
    for (int i = 0; LS_CONFIG_TYPED_ARGS[i]; i++) {
        lua_pushstring(L, LS_CONFIG_TYPED_ARGS[i]);
        lua_rawseti(L, -2, i + 1);
    }
    if (!ls_rt_load_call(lua, 1, 1, "completing plugin args", NULL, err))
        return NULL;
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
