/*
 * log_limit.c: at most one log line per key (a plugin's name) per window, so
 * a plugin failing on every pod cannot flood the log; the line that is
 * written next says how many were held back.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log_limit.h"
#include "luasched/base.h"

enum { MAX_KEYS = 256 };   /* past this, keys share one entry (the last) */

typedef struct entry {
    char *key;
    double last;       /* when its last line was written */
    uint64_t held;     /* lines held back since */
    bool written;
} entry;

struct ls_log_limiter {
    double window;
    entry entries[MAX_KEYS];
    uint32_t n;
};

ls_log_limiter *ls_log_limiter_new(double window_seconds)
{
    ls_log_limiter *l = ls_xcalloc(1, sizeof *l);
    l->window = window_seconds;
    return l;
}

void ls_log_limiter_free(ls_log_limiter *l)
{
    if (!l)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        free(l->entries[i].key);
    free(l);
}

static entry *entry_of(ls_log_limiter *l, const char *key)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->entries[i].key, key) == 0)
            return &l->entries[i];
    if (l->n == MAX_KEYS)
        return &l->entries[MAX_KEYS - 1];
    entry *e = &l->entries[l->n++];
    e->key = ls_xstrdup(key);
    return e;
}

bool ls_log_limiter_allow(ls_log_limiter *l, const char *key, double now, uint64_t *suppressed)
{
    entry *e = entry_of(l, key ? key : "");
    if (e->written && now - e->last < l->window) {
        e->held++;
        return false;
    }
    *suppressed = e->held;
    e->held = 0;
    e->last = now;
    e->written = true;
    return true;
}
