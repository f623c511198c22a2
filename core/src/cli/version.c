/*
 * version.c: `luasched version`: the release, the commit it was built from,
 * the LuaJIT that runs the plugins (asked of LuaJIT itself, so an installed
 * copy reports the library it loaded) and the plugin ABI.
 */
#include "cli/cli.h"
#include "framework/paths.h"
#include "ls_version.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

/* jit.version of a fresh state, e.g. "LuaJIT 2.1.0-beta3". */
static void luajit_version(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    lua_State *L = luaL_newstate();
    if (!L)
        return;
    luaL_openlibs(L);
    lua_getglobal(L, "jit");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "version");
        if (lua_isstring(L, -1))
            snprintf(out, n, "%s", lua_tostring(L, -1));
    }
    lua_close(L);
}

int ls_cli_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: luasched version\n\nprints the version, the commit, the LuaJIT version, the plugin ABI\n"
               "and where the Lua runtime and the built-in plugins are read from\n");
        return LS_EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "\"luasched version\" does not take any arguments, got \"%s\"\n", argv[1]);
        return LS_EXIT_USAGE;
    }
    char jit[128];
    luajit_version(jit, sizeof jit);
    printf("luasched %s\n", LS_VERSION);
    printf("commit: %s\n", LS_COMMIT);
    printf("luajit: %s\n", jit);
    printf("plugin ABI: %d\n", LS_ABI_VERSION);
    printf("plugins: %s\n", ls_paths_plugins());
    return LS_EXIT_OK;
}
