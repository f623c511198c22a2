/*
 * fault_tally.h: the plugin calls cut off (budget overruns) and the Lua
 * states rebuilt, by profile, plugin and extension point, kept until the
 * scheduler hands them to its metrics (luasched_plugin_budget_overruns_total
 * and luasched_lua_restarts_total carry those labels). A set of Lua states
 * owns one; its states add to it. Rows are the distinct (profile, plugin,
 * point) triples seen since the last drain: bounded by the configuration,
 * and by LS_FAULT_TALLY_ROWS whatever happens (past it, one row "?").
 */
#ifndef LS_FRAMEWORK_FAULT_TALLY_H
#define LS_FRAMEWORK_FAULT_TALLY_H

#include <stdint.h>

enum { LS_FAULT_TALLY_ROWS = 1024 };

typedef struct ls_fault_tally_row {
    char profile[64], plugin[64], point[32];
    uint64_t overruns, restarts;
} ls_fault_tally_row;

typedef struct ls_fault_tally {
    ls_fault_tally_row *rows;
    uint32_t n, cap;
} ls_fault_tally;

/* Counts `overruns` and `restarts` against the triple (NULL or "" reads "?"). */
void ls_fault_tally_add(ls_fault_tally *t, const char *profile, const char *plugin, const char *point,
                        uint64_t overruns, uint64_t restarts);
typedef void (*ls_fault_tally_fn)(void *ud, const ls_fault_tally_row *row);
/* Hands every row to fn, then empties the tally (its memory kept). */
void ls_fault_tally_drain(ls_fault_tally *t, ls_fault_tally_fn fn, void *ud);
void ls_fault_tally_free(ls_fault_tally *t);

#endif
