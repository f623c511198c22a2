/*
 * paths.c: locates the runtime's Lua files and the built-in plugins without
 * environment variables. An installed library sits in PREFIX/lib/luasched/ and
 * its data in PREFIX/share/luasched/ (LS_INSTALL_DATA_REL is the relative path
 * between the two, set by the install rules), so the copy is found next to the
 * library wherever the prefix is (a .deb, a container image, a --prefix tree).
 * A library in its build tree has no such directory and uses the source tree.
 */
#include "framework/paths.h"
#include "luasched/base.h"
#include "luasched/framework.h"

#include <dirent.h>
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

/* ---- "did you mean" for a plugin that is not found */

/* "prefer_labeled" -> "PreferLabeled": the name a plugin file's stem stands
 * for ("prefer-labeled" too: a dash is taken for the underscore meant). */
static void camel_of_stem(const char *stem, size_t len, char *out, size_t cap)
{
    size_t j = 0;
    bool up = true;
    for (size_t i = 0; i < len && j + 1 < cap; i++) {
        if (stem[i] == '_' || stem[i] == '-') {
            up = true;
            continue;
        }
        out[j++] = up && stem[i] >= 'a' && stem[i] <= 'z' ? (char)(stem[i] - 'a' + 'A') : stem[i];
        up = false;
    }
    out[j] = '\0';
}

enum { MAX_SUGGESTED = 512 };

/* The plugin names of the *.lua files in one directory, appended to names. */
/* The next directory of a colon-separated list at *p, into dir (false at the
 * list's end). One too long for dir comes out as "", which no opendir finds. */
static bool next_listed_dir(const char **p, char *dir, size_t cap)
{
    if (!*p || !**p)
        return false;
    const char *end = strchr(*p, ':');
    size_t len = end ? (size_t)(end - *p) : strlen(*p);
    if (len < cap) {
        memcpy(dir, *p, len);
        dir[len] = '\0';
    } else {
        dir[0] = '\0';
    }
    *p = end ? end + 1 : *p + len;
    return true;
}

static void add_dir_names(const char *dir, char (*names)[128], size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && *n < MAX_SUGGESTED) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".lua") == 0 && e->d_name[0] != '.')
            camel_of_stem(e->d_name, len - 4, names[(*n)++], sizeof names[0]);
    }
    closedir(d);
}

bool ls_plugin_name_suggestion(const char *name, const char *dirs, char *out, size_t cap)
{
    char (*names)[128] = ls_xcalloc(MAX_SUGGESTED, sizeof *names);
    size_t n = 0;
    char dir[PATH_MAX];
    for (const char *p = dirs; next_listed_dir(&p, dir, sizeof dir);)
        add_dir_names(dir, names, &n);
    const char **list = ls_xcalloc(n + 1, sizeof *list);
    for (size_t i = 0; i < n; i++)
        list[i] = names[i];
    const char *hit = ls_did_you_mean(name, list, n);
    if (hit)
        snprintf(out, cap, "%s", hit);
    free(list);
    free(names);
    return hit != NULL;
}

/* ---- a plugin file named for the plugin, but not as the loader spells it */

/* Whether directory `dir` holds a *.lua file other than `want` whose stem
 * stands for plugin `name` (prefer-gold.lua, PreferGold.lua for PreferGold):
 * its file name into out. */
static bool misnamed_in(const char *dir, const char *name, const char *want, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char camel[128];
        if (len <= 4 || strcmp(e->d_name + len - 4, ".lua") != 0 || strcmp(e->d_name, want) == 0)
            continue;
        camel_of_stem(e->d_name, len - 4, camel, sizeof camel);
        if (strcasecmp(camel, name) == 0) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            found = true;
        }
    }
    closedir(d);
    return found;
}

bool ls_plugin_file_misnamed(const char *name, const char *dirs, const char *want, char *out, size_t cap)
{
    char dir[PATH_MAX];
    for (const char *p = dirs; next_listed_dir(&p, dir, sizeof dir);)
        if (misnamed_in(dir, name, want, out, cap))
            return true;
    return false;
}
