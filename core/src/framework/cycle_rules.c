/*
 * cycle_rules.c: the rules of one scheduling cycle that C applies between the
 * extension points Lua runs: which nodes Filter examines (PreFilter's
 * node-name restriction), whether Score runs at all, the weighted totals with
 * their range check, and the host chosen among the best totals. The scheduler
 * (scheduler/cycle.c) and the plugin author's kit (lua/luasched/testing.lua,
 * through the FFI) both call these, so a spec runs the same rules as a
 * scheduler.
 */
#include <stdio.h>
#include <string.h>

#include "luasched/framework.h"

uint64_t ls_random_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t ls_cycle_select_candidates(ls_cycle *c, const ls_node_info **buf)
{
    if (!c->prefilter_restricts) {
        c->candidates = c->all_nodes;
        c->num_candidates = c->num_all_nodes;
        return c->num_candidates;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->num_all_nodes; i++) {
        const ls_node_info *ni = c->all_nodes[i];
        for (uint32_t k = 0; k < c->num_prefilter_nodes; k++) {
            if (c->prefilter_nodes[k] == ni->node->name) {
                buf[n++] = ni;
                break;
            }
        }
    }
    c->candidates = buf;
    c->num_candidates = n;
    return n;
}

void ls_cycle_prepare_filter(ls_cycle *c, const ls_node_info **buf, int32_t percentage, bool scoring,
                             uint32_t next_start_index)
{
    ls_cycle_select_candidates(c, buf);
    c->num_to_find = ls_num_feasible_nodes_to_find(percentage, c->num_candidates, scoring);
    c->start = c->num_candidates ? next_start_index % c->num_candidates : 0;
    c->num_feasible = c->num_processed = 0;
    if (c->trace && c->filter_trace && c->num_filter_plugins)
        memset(c->filter_trace, 0, (size_t)c->num_all_nodes * c->num_filter_plugins * sizeof *c->filter_trace);
}

uint32_t ls_cycle_advance_start(const ls_cycle *c, uint32_t next_start_index)
{
    return c->num_all_nodes ? (next_start_index + c->num_processed) % c->num_all_nodes : next_start_index;
}

bool ls_cycle_wants_scores(const ls_cycle *c)
{
    return c->num_feasible != 1;
}

_Static_assert(LS_MIN_NODE_SCORE == 0, "ls_cycle_total_scores's range test assumes a lowest score of 0");

/* An out-of-range score of the plugin `ref` names it in an Error status. */
static bool check_row(ls_cycle *c, const ls_plugin_ref *ref, const int64_t *row, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = row[i];
        if (v < LS_MIN_NODE_SCORE || v > LS_MAX_NODE_SCORE) {
            char msg[400];
            int len = snprintf(msg, sizeof msg,
                               "applying score defaultWeights on Score plugins: "
                               "plugin \"%s\" returns an invalid score %lld, it should in the range of "
                               "[%d, %d] after normalizing",
                               ls_str_get(ref->name), (long long)v, LS_MIN_NODE_SCORE, LS_MAX_NODE_SCORE);
            if (len >= (int)sizeof msg)
                len = (int)sizeof msg - 1;   /* a very long plugin name: truncated, not over-read */
            c->status = ls_status_register(LS_ERROR, msg, (size_t)len);
            c->status_code = LS_ERROR;
            return false;
        }
    }
    return true;
}

bool ls_cycle_total_scores(ls_cycle *c, const ls_plugin_ref *refs, uint32_t num_plugins, bool has_extenders,
                           int64_t *totals_out)
{
    uint32_t n = c->num_feasible;
    uint64_t *restrict totals = (uint64_t *)totals_out;
    for (uint32_t i = 0; i < n; i++)
        totals[i] = num_plugins || has_extenders ? 0 : 1;
    for (uint32_t p = 0; p < num_plugins; p++) {
        if (c->score_skipped && c->score_skipped[p])
            continue;   /* PreScore said Skip: the plugin gave no scores (its row is not written) */
        const int64_t *restrict row = &c->scores[(size_t)p * n];
        uint64_t weight = (uint64_t)refs[p].weight;
        /* One pass without a branch per score, in unsigned arithmetic so
         * that an out-of-range score wraps instead of overflowing; the scores
         * are checked one by one only when one is out of range (the totals
         * are then not used). */
        uint64_t out_of_range = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)row[i];
            out_of_range |= v > (uint64_t)LS_MAX_NODE_SCORE;   /* LS_MIN_NODE_SCORE is 0: a negative one wraps above */
            totals[i] += v * weight;
        }
        if (out_of_range && !check_row(c, &refs[p], row, n))
            return false;
    }
    return true;
}

const ls_node_info *ls_cycle_select_host(const ls_cycle *c, const int64_t *totals, uint64_t *rng)
{
    const ls_node_info *best = c->feasible[0];
    int64_t best_score = totals[0];
    uint64_t ties = 1;
    for (uint32_t i = 1; i < c->num_feasible; i++) {
        if (totals[i] > best_score) {
            best = c->feasible[i];
            best_score = totals[i];
            ties = 1;
        } else if (totals[i] == best_score && ls_random_next(rng) % ++ties == 0) {
            best = c->feasible[i];
        }
    }
    return best;
}
