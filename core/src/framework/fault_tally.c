/*
 * fault_tally.c: cut-offs and rebuilt states counted by profile, plugin and
 * extension point until the metrics take them (fault_tally.h).
 */
#include "framework/fault_tally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *or_unknown(const char *s)
{
    return s && s[0] ? s : "?";
}

static ls_fault_tally_row *find(ls_fault_tally *t, const char *profile, const char *plugin, const char *point)
{
    for (uint32_t i = 0; i < t->n; i++) {
        ls_fault_tally_row *r = &t->rows[i];
        if (strcmp(r->profile, profile) == 0 && strcmp(r->plugin, plugin) == 0 && strcmp(r->point, point) == 0)
            return r;
    }
    return NULL;
}

/* A new row for the triple; NULL when no memory is left. */
static ls_fault_tally_row *append(ls_fault_tally *t, const char *profile, const char *plugin, const char *point)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 8;
        ls_fault_tally_row *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows)
            return NULL;
        t->rows = rows;
        t->cap = cap;
    }
    ls_fault_tally_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->profile, sizeof r->profile, "%s", profile);
    snprintf(r->plugin, sizeof r->plugin, "%s", plugin);
    snprintf(r->point, sizeof r->point, "%s", point);
    return r;
}

void ls_fault_tally_add(ls_fault_tally *t, const char *profile, const char *plugin, const char *point,
                        uint64_t overruns, uint64_t restarts)
{
    profile = or_unknown(profile);
    plugin = or_unknown(plugin);
    point = or_unknown(point);
    ls_fault_tally_row *r = find(t, profile, plugin, point);
    if (!r && t->n >= LS_FAULT_TALLY_ROWS - 1) {   /* at the bound: the one row of no one's */
        profile = plugin = point = "?";
        r = find(t, profile, plugin, point);
    }
    if (!r)
        r = append(t, profile, plugin, point);
    if (!r)
        return;
    r->overruns += overruns;
    r->restarts += restarts;
}

void ls_fault_tally_drain(ls_fault_tally *t, ls_fault_tally_fn fn, void *ud)
{
    for (uint32_t i = 0; i < t->n; i++)
        fn(ud, &t->rows[i]);
    t->n = 0;
}

void ls_fault_tally_free(ls_fault_tally *t)
{
    free(t->rows);
    *t = (ls_fault_tally){0};
}
