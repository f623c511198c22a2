/*
 * test.c: `luasched test [SPEC...]`: runs a plugin author's busted specs in
 * this process's LuaJIT, with the plugin kit (luasched.testing, the runtime's
 * Lua modules) on package.path and libluasched already loaded, so neither
 * LUA_PATH nor LUASCHED_LIB has to be set, from a build tree or an installed
 * package alike. Arguments go to busted unchanged (specs, directories, -o ...);
 * with none busted runs ./spec. busted's exit status is the command's.
 */
#include "cli/cli.h"
#include "framework/paths.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

static const char FIX_BUSTED[] =
    "install busted for Lua 5.1/LuaJIT: `apt-get install lua-busted` (Debian, Ubuntu) or "
    "`luarocks --lua-version 5.1 install busted`";

static const char RUNNER[] = "require('busted.runner')({ standalone = false })";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: luasched test [SPEC|DIR...] [busted flags]\n"
            "\n"
            "runs busted specs with the plugin kit on the path: require(\"luasched.testing\")\n"
            "and require(\"luasched\") work without LUA_PATH or LUASCHED_LIB; the built-in plugins\n"
            "are found as `luasched run` finds them. With no SPEC busted runs ./spec. Flags after\n"
            "the specs are busted's (`luasched test -- --help` lists them).\n");
}

/* package.path = the kit's directories, then ./?.lua and LuaJIT's default. */
static void set_paths(lua_State *L)
{
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s;./?.lua;./?/init.lua;", ls_paths_lua());
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
}

/* The global `arg` busted's runner reads: arg[0] the program, arg[1..] the flags. */
static void set_args(lua_State *L, int argc, char **argv)
{
    lua_createtable(L, argc, 1);
    lua_pushliteral(L, "luasched test");
    lua_rawseti(L, -2, 0);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (n == 0 && strcmp(argv[i], "--") == 0)
            continue;
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, ++n);
    }
    lua_setglobal(L, "arg");
}

/* require("busted.runner"), naming the fix when it is missing. */
static bool load_busted(lua_State *L)
{
    lua_getglobal(L, "require");
    lua_pushliteral(L, "busted.runner");
    if (lua_pcall(L, 1, 1, 0) == 0)
        return true;
    const char *msg = lua_tostring(L, -1);
    bool missing = msg && strstr(msg, "module 'busted.runner' not found");
    if (missing)
        fprintf(stderr, "luasched test: the busted library is not installed (module 'busted.runner' not found); %s\n",
                FIX_BUSTED);
    else
        fprintf(stderr, "luasched test: loading busted failed: %s\n", msg ? msg : "(no message)");
    return false;
}

int ls_cli_test(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return LS_EXIT_OK;
    }
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "luasched test: cannot create a Lua state\n");
        return LS_EXIT_FAILURE;
    }
    luaL_openlibs(L);
    set_paths(L);
    set_args(L, argc, argv);
    if (!load_busted(L)) {
        lua_close(L);
        return LS_EXIT_FAILURE;
    }
    lua_pop(L, 1);
    /* The runner reads its caller's frame: call it from a chunk, as /usr/bin/busted does.
     * It ends with os.exit(status); an error before that is ours to report. */
    int rc = LS_EXIT_OK;
    if (luaL_loadbuffer(L, RUNNER, sizeof RUNNER - 1, "=luasched test") != 0 || lua_pcall(L, 0, 0, 0) != 0) {
        fprintf(stderr, "luasched test: %s\n", lua_tostring(L, -1));
        rc = LS_EXIT_FAILURE;
    }
    lua_close(L);
    return rc;
}
