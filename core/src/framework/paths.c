/*
 * paths.c: locates the runtime's Lua files and the built-in plugins without
 * environment variables. An installed library sits in PREFIX/lib/luasched/ and
 * its data in PREFIX/share/luasched/ (LS_INSTALL_DATA_REL is the relative path
 * between the two, set by the install rules), so the copy is found next to the
 * library wherever the prefix is (a .deb, a container image, a --prefix tree).
 * A library in its build tree has no such directory and uses the source tree.
 */
#include "framework/paths.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LS_INSTALL_DATA_REL
#define LS_INSTALL_DATA_REL "../../share/luasched"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char library[PATH_MAX];
static char data_dir[PATH_MAX];
static char lua_path[2 * PATH_MAX + 32];
static char plugin_dir[2 * PATH_MAX + 48];   /* DIR:DIR/policies */

static bool file_exists(const char *path)
{
    return access(path, R_OK) == 0;
}

/* PREFIX/share/luasched when the library is an installed copy, else "". */
static void find_data_dir(void)
{
    Dl_info info;
    if (!dladdr((void *)&ls_paths_lua, &info) || !info.dli_fname)
        return;
    char resolved[PATH_MAX];
    if (!realpath(info.dli_fname, resolved))
        return;
    snprintf(library, sizeof library, "%s", resolved);
    char *slash = strrchr(resolved, '/');
    if (!slash)
        return;
    *slash = '\0';
    char candidate[PATH_MAX + 64], probe[PATH_MAX + 128];
    snprintf(candidate, sizeof candidate, "%s/%s", resolved, LS_INSTALL_DATA_REL);
    snprintf(probe, sizeof probe, "%s/lua/luasched/dispatch.lua", candidate);
    if (file_exists(probe) && realpath(candidate, data_dir))
        return;
    data_dir[0] = '\0';
}

static void resolve(void)
{
    find_data_dir();
    if (data_dir[0]) {
        snprintf(lua_path, sizeof lua_path, "%s/lua/?.lua", data_dir);
        snprintf(plugin_dir, sizeof plugin_dir, "%s/plugins:%s/plugins/policies", data_dir, data_dir);
    } else {
        snprintf(lua_path, sizeof lua_path, "%s/?.lua;%s/?.lua", LS_LUA_DIR, LS_GEN_LUA_DIR);
        snprintf(plugin_dir, sizeof plugin_dir, "%s:%s/policies", LS_DEFAULT_PLUGIN_PATH, LS_DEFAULT_PLUGIN_PATH);
    }
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *ls_paths_lua(void)
{
    pthread_once(&once, resolve);
    return env_or("LUASCHED_LUA_PATH", lua_path);
}

const char *ls_paths_plugins(void)
{
    pthread_once(&once, resolve);
    return env_or("LUASCHED_PLUGIN_PATH", plugin_dir);
}

const char *ls_paths_data_dir(void)
{
    pthread_once(&once, resolve);
    return data_dir[0] ? data_dir : NULL;
}

const char *ls_paths_library(void)
{
    pthread_once(&once, resolve);
    return library[0] ? library : NULL;
}
