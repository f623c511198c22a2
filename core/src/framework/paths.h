/*
 * paths.h: where the Lua half of the runtime and the built-in plugins are
 * found, for a build that runs in place and for an installed copy alike.
 */
#ifndef LS_LUA_PATHS_H
#define LS_LUA_PATHS_H

/* package.path entries for lua/luasched/ and the generated cdefs:
 * $LUASCHED_LUA_PATH, else the installed share directory, else the source tree. */
const char *ls_paths_lua(void);
/* The built-in plugin directory: $LUASCHED_PLUGIN_PATH, else the installed
 * share directory's plugins/, else the source tree's plugins/. */
const char *ls_paths_plugins(void);
/* The installed share directory (PREFIX/share/luasched), or NULL when the
 * library runs from its build tree. */
const char *ls_paths_data_dir(void);
/* The file the library was loaded from (for `luasched test`, which hands it to
 * a separate LuaJIT through $LUASCHED_LIB), or NULL if unknown. */
const char *ls_paths_library(void);

#endif
