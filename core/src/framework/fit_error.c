/*
 * fit_error.c: the "0/N nodes are available: ..." message. Each reason of
 * each rejected node is counted; nodes outside a PreFilter restriction count
 * with the restriction's status; entries "<count> <reason>" are sorted as
 * strings (so "10 x" sorts before "2 y", as upstream's sort.Strings does).
 */
#include "framework/fit_error.h"
#include "luasched/map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reason_count {
    const char *reason;
    uint64_t count;
} reason_count;

typedef struct histogram {
    ls_map index;        /* interned reason -> slot + 1 */
    reason_count *items;
    uint32_t len, cap;
} histogram;

static void histogram_add(histogram *h, const char *reason, uint64_t count)
{
    ls_str key = ls_intern_cstr(reason);
    uintptr_t slot = (uintptr_t)ls_map_get(&h->index, key);
    if (slot) {
        h->items[slot - 1].count += count;
        return;
    }
    if (h->len == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 8;
        h->items = ls_xrealloc(h->items, h->cap * sizeof *h->items);
    }
    h->items[h->len] = (reason_count){reason, count};
    ls_map_put(&h->index, key, (void *)(uintptr_t)(++h->len));
}

static void histogram_add_status(histogram *h, uint32_t status_id, uint64_t count)
{
    const ls_status_info *st = ls_status_get(status_id);
    for (uint32_t r = 0; r < st->n_reasons; r++)
        histogram_add(h, st->reasons[r], count);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *histogram_render(histogram *h, uint32_t num_all_nodes)
{
    char **entries = ls_xcalloc(h->len + 1, sizeof *entries);
    size_t total = 64;
    for (uint32_t i = 0; i < h->len; i++) {
        size_t n = strlen(h->items[i].reason) + 24;
        entries[i] = ls_xmalloc(n);
        snprintf(entries[i], n, "%llu %s", (unsigned long long)h->items[i].count, h->items[i].reason);
        total += n + 2;
    }
    qsort(entries, h->len, sizeof *entries, compare_strings);
    char *out = ls_xmalloc(total);
    size_t len = (size_t)snprintf(out, total, "0/%u nodes are available:", num_all_nodes);
    for (uint32_t i = 0; i < h->len; i++) {
        len += (size_t)snprintf(out + len, total - len, "%s %s", i ? "," : "", entries[i]);
        free(entries[i]);
    }
    /* upstream appends " <entries>." only when there is at least one entry */
    if (h->len)
        snprintf(out + len, total - len, ".");
    free(entries);
    return out;
}

char *ls_fit_error_prefilter(const ls_cycle *c, const char *prefilter_msg)
{
    size_t n = strlen(prefilter_msg) + 64;
    char *out = ls_xmalloc(n);
    snprintf(out, n, "0/%u nodes are available: %s.", c->num_all_nodes, prefilter_msg);
    return out;
}

char *ls_fit_error_filter(const ls_cycle *c)
{
    histogram h = {0};
    ls_map_init(&h.index);
    uint32_t explicit_nodes = 0;
    for (uint32_t i = 0; i < c->num_processed; i++) {
        const ls_node_info *ni = c->candidates[(c->start + i) % c->num_candidates];
        const ls_node_status *st = &c->node_status[ni->index];
        if (st->code == LS_SUCCESS)
            continue;
        histogram_add_status(&h, st->status, 1);
        explicit_nodes++;
    }
    if (c->prefilter_absent_status && c->num_all_nodes > explicit_nodes)
        histogram_add_status(&h, c->prefilter_absent_status, c->num_all_nodes - explicit_nodes);
    char *out = histogram_render(&h, c->num_all_nodes);
    free(h.items);
    ls_map_free(&h.index);
    return out;
}

char *ls_fit_error_single(uint32_t status_id)
{
    histogram h = {0};
    ls_map_init(&h.index);
    histogram_add_status(&h, status_id, 1);
    char *out = histogram_render(&h, 1);
    free(h.items);
    ls_map_free(&h.index);
    return out;
}
