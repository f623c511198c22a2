/*
 * extension_points.c: the rows of the extension-point table (the X-macro
 * lists of luasched/extension_points.h: names as the config, the metrics and
 * the Lua hooks spell them) and upstream's rule for how many feasible nodes a
 * cycle looks for.
 */
#include "luasched/framework.h"

#include <string.h>

#define POINT_ROW(id, name, hook, key, rejects, allowed, chain) \
    [LS_EP_##id] = {name, hook, key, LS_EP_##id, 1, rejects, allowed, chain},
#define HOOK_ROW(id, name, hook, point, implements, allowed, chain) \
    [LS_EP_##id] = {name, hook, NULL, LS_EP_##point, implements, 0, allowed, chain},
static const ls_ext_point_info rows[LS_EP_HOOK_COUNT] = {
    LS_EXTENSION_POINTS(POINT_ROW)
    LS_EXTENSION_HOOKS(HOOK_ROW)
};
#undef POINT_ROW
#undef HOOK_ROW

_Static_assert((int)LS_EP_NORMALIZE_SCORE == (int)LS_EP_COUNT, "sampled NormalizeScore durations are filed at LS_EP_COUNT");

const ls_ext_point_info *ls_ext_point_info_of(int ep)
{
    return ep >= 0 && ep < LS_EP_HOOK_COUNT ? &rows[ep] : NULL;
}

const char *ls_ext_point_name(int ep)
{
    return ep >= 0 && ep < LS_EP_COUNT ? rows[ep].name : "?";
}

const char *ls_ext_point_hook(int ep)
{
    return ep >= 0 && ep < LS_EP_COUNT ? rows[ep].hook : "?";
}

int ls_ext_point_from_config_key(const char *key)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        if (strcmp(rows[ep].config_key, key) == 0)
            return ep;
    return -1;
}

uint32_t ls_num_feasible_nodes_to_find(int32_t percentage, uint32_t num_all_nodes, bool has_scoring)
{
    enum { min_feasible_nodes_to_find = 100, min_feasible_nodes_percentage_to_find = 5 };
    if (!has_scoring)
        return 1;
    if (num_all_nodes < min_feasible_nodes_to_find)
        return num_all_nodes;
    int64_t pct = percentage;
    if (pct <= 0) {
        pct = 50 - (int64_t)num_all_nodes / 125;
        if (pct < min_feasible_nodes_percentage_to_find)
            pct = min_feasible_nodes_percentage_to_find;
    }
    int64_t n = (int64_t)num_all_nodes * pct / 100;
    if (n < min_feasible_nodes_to_find)
        return min_feasible_nodes_to_find;
    return (uint32_t)n;
}

_Static_assert(LS_ALLOW_UNSCHEDULABLE == 1 << LS_UNSCHEDULABLE && LS_ALLOW_UNRESOLVABLE == 1 << LS_UNRESOLVABLE &&
                   LS_ALLOW_WAIT == 1 << LS_WAIT && LS_ALLOW_SKIP == 1 << LS_SKIP && LS_ALLOW_PENDING == 1 << LS_PENDING,
               "a row's allowed codes are bits 1 << LS_<code>");
