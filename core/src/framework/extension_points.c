/*
 * extension_points.c: names of the extension points (as the config, the
 * metrics and the Lua hooks spell them) and upstream's rule for how many
 * feasible nodes a cycle looks for.
 */
#include "luasched/framework.h"

#include <string.h>

static const struct {
    const char *name, *hook, *config_key;
} points[LS_EP_COUNT] = {
    [LS_EP_PRE_ENQUEUE] = {"PreEnqueue", "pre_enqueue", "preEnqueue"},
    [LS_EP_QUEUE_SORT] = {"QueueSort", "sort_key", "queueSort"},
    [LS_EP_PRE_FILTER] = {"PreFilter", "pre_filter", "preFilter"},
    [LS_EP_FILTER] = {"Filter", "filter", "filter"},
    [LS_EP_POST_FILTER] = {"PostFilter", "post_filter", "postFilter"},
    [LS_EP_PRE_SCORE] = {"PreScore", "pre_score", "preScore"},
    [LS_EP_SCORE] = {"Score", "score", "score"},
    [LS_EP_RESERVE] = {"Reserve", "reserve", "reserve"},
    [LS_EP_PERMIT] = {"Permit", "permit", "permit"},
    [LS_EP_PRE_BIND] = {"PreBind", "pre_bind", "preBind"},
    [LS_EP_BIND] = {"Bind", "bind", "bind"},
    [LS_EP_POST_BIND] = {"PostBind", "post_bind", "postBind"},
};

const char *ls_ext_point_name(int ep)
{
    return ep >= 0 && ep < LS_EP_COUNT ? points[ep].name : "?";
}

const char *ls_ext_point_hook(int ep)
{
    return ep >= 0 && ep < LS_EP_COUNT ? points[ep].hook : "?";
}

int ls_ext_point_from_config_key(const char *key)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        if (strcmp(points[ep].config_key, key) == 0)
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
