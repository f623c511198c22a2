/*
 * api_watch.c: watch streams. A watcher keeps a cursor (the last
 * resourceVersion it has looked at) and reads the event ring after it; with a
 * selector, a MODIFIED event that moves an object into or out of the selection
 * becomes ADDED or DELETED, as upstream's watch cache does. A cursor that has
 * fallen out of the ring gets one ERROR event carrying a 410 Expired Status,
 * and the stream ends: the client relists.
 */
#include "sim/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 256               /* events written per pull, so a big backlog streams in pieces */
#define BOOKMARK_QUIET_MS 1000

struct ls_api_watch {
    ls_api *api;
    const ls_api_resource *res;
    char *ns;
    api_selector *sel;
    uint64_t cursor;
    bool initial;               /* send the current state first */
    bool bookmarks;
    bool table;                 /* objects as one-row Tables */
    char *include_object;
    bool end_bookmark;          /* watch-list: mark the end of the initial events */
    bool ended;
    cJSON *error;               /* an ERROR event to send, then end */
    uint64_t deadline_ms;       /* 0 = none */
    uint64_t last_write_ms;
    uint32_t drop_after, sent;  /* fault injection: end after this many events */
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void write_event(ls_buf *out, const char *type, const cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    ls_buf_addf(out, "{\"type\":\"%s\",\"object\":", type);
    ls_buf_adds(out, text);
    ls_buf_adds(out, "}\n");
    free(text);
}

/* An object event, as a one-row Table when kubectl asked for tables. */
static void write_obj(const ls_api_watch *w, ls_buf *out, const char *type, const cJSON *obj)
{
    if (!w->table) {
        write_event(out, type, obj);
        return;
    }
    cJSON *t = api_table(w->res, obj, w->include_object);
    write_event(out, type, t);
    cJSON_Delete(t);
}

static cJSON *too_old(uint64_t asked, uint64_t oldest)
{
    char msg[128];
    snprintf(msg, sizeof msg, "too old resource version: %llu (%llu)", (unsigned long long)asked,
             (unsigned long long)oldest + 1);
    return ls_api_status(410, "Expired", msg);
}

static bool in_scope(const ls_api_watch *w, const cJSON *obj)
{
    if (w->ns && w->res->namespaced) {
        const char *ns = ls_json_text(obj, "metadata", "namespace");
        if (!ns || strcmp(ns, w->ns) != 0)
            return false;
    }
    return api_selector_match(w->sel, obj);
}

ls_api_watch *ls_api_watch_start(ls_api *a, const ls_api_resource *r, const char *ns, const ls_api_list_opts *o,
                                 int *code, cJSON **out)
{
    char msg[600];
    api_selector *sel = api_selector_parse(r, o->label_selector, o->field_selector, msg, sizeof msg);
    if (!sel) {
        *code = api_fail(out, 400, "BadRequest", msg);
        return NULL;
    }
    ls_api_watch *w = ls_xcalloc(1, sizeof *w);
    w->api = a;
    w->res = r;
    w->ns = ns ? ls_xstrdup(ns) : NULL;
    w->sel = sel;
    w->bookmarks = o->bookmarks;
    w->table = o->table;
    w->include_object = o->include_object ? ls_xstrdup(o->include_object) : NULL;
    w->last_write_ms = now_ms();
    if (o->timeout_seconds)
        w->deadline_ms = w->last_write_ms + (uint64_t)o->timeout_seconds * 1000;
    const char *rv = o->resource_version;
    pthread_mutex_lock(&a->mu);
    w->drop_after = a->faults.watch_drop;
    if (a->faults.gone > 0 && api_rand(a) < a->faults.gone) {
        a->injected[API_FAULT_GONE]++;
        w->error = ls_api_status(410, "Expired", "too old resource version: injected fault");
    } else if (o->send_initial_events || !rv || !*rv || strcmp(rv, "0") == 0) {
        w->initial = true;
        w->end_bookmark = o->send_initial_events && o->bookmarks;
        w->cursor = a->rv;
    } else {
        char *end;
        w->cursor = strtoull(rv, &end, 10);
        if (*end) {
            snprintf(msg, sizeof msg, "invalid resource version: %s", rv);
            w->error = ls_api_status(400, "BadRequest", msg);
        } else if (w->cursor < api_oldest_rv(a)) {
            w->error = too_old(w->cursor, api_oldest_rv(a));
        }
    }
    pthread_mutex_unlock(&a->mu);
    *code = 200;
    *out = NULL;
    return w;
}

/* ADDED for every object in scope: the start of a watch from "" or "0". */
static void send_initial(ls_api_watch *w, ls_buf *out)
{
    api_coll *c = api_coll_of(w->api, w->res);
    w->cursor = w->api->rv;   /* the snapshot is now: changes made since the watch began are in it */
    for (uint32_t i = 0; i < c->len && !(w->drop_after && w->sent >= w->drop_after); i++)
        if (in_scope(w, c->items[i]->obj)) {
            write_obj(w, out, "ADDED", c->items[i]->obj);
            w->sent++;
        }
    w->initial = false;
}

/* One ring event as this watcher sees it; false when it sees nothing. */
static bool send_event(ls_api_watch *w, const api_event *e, ls_buf *out)
{
    if (e->res != w->res)
        return false;
    bool now = in_scope(w, e->obj);
    if (e->type != API_MODIFIED || !e->prev) {
        if (!now)
            return false;
        write_obj(w, out, e->type == API_ADDED ? "ADDED" : "DELETED", e->obj);
        return true;
    }
    bool before = in_scope(w, e->prev);
    if (now) {
        write_obj(w, out, before ? "MODIFIED" : "ADDED", e->obj);
        return true;
    }
    if (!before)
        return false;
    /* Left the selection: DELETED with the last state that matched, at the new version. */
    cJSON *gone = cJSON_Duplicate(e->prev, 1);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(gone, "metadata");
    cJSON_ReplaceItemInObjectCaseSensitive(meta, "resourceVersion",
                                           cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
                                                               cJSON_GetObjectItemCaseSensitive(e->obj, "metadata"),
                                                               "resourceVersion"),
                                                           1));
    write_obj(w, out, "DELETED", gone);
    cJSON_Delete(gone);
    return true;
}

/* Reads the ring after the cursor; false when the cursor fell out of it. */
static bool send_backlog(ls_api_watch *w, ls_buf *out)
{
    ls_api *a = w->api;
    if (w->cursor < a->rv && w->cursor < api_oldest_rv(a)) {
        w->error = too_old(w->cursor, api_oldest_rv(a));
        return false;
    }
    uint32_t n = 0;
    while (w->cursor < a->rv && n < BATCH && !(w->drop_after && w->sent >= w->drop_after)) {
        const api_event *e = api_event_at_rv(a, w->cursor + 1);
        w->cursor++;
        if (e && send_event(w, e, out)) {
            n++;
            w->sent++;
        }
    }
    return true;
}

static void send_bookmark(ls_api_watch *w, ls_buf *out, bool initial_end)
{
    char gv[128], rv[32];
    api_group_version(w->res, gv, sizeof gv);
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)w->cursor);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", w->res->kind);
    cJSON_AddStringToObject(o, "apiVersion", gv);
    cJSON *meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "resourceVersion", rv);
    if (initial_end)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), "k8s.io/initial-events-end", "true");
    write_event(out, "BOOKMARK", o);
    cJSON_Delete(o);
}

static void wait_changed(ls_api_watch *w, uint64_t until_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    uint64_t wait = until_ms > now ? until_ms - now : 0;
    if (wait > 250)
        wait = 250;   /* short waits: the producer also polls the HTTP server's stop flag */
    ts.tv_sec += (time_t)(wait / 1000);
    ts.tv_nsec += (long)(wait % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&w->api->changed, &w->api->mu, &ts);
}

/* Under the lock: one pull; false when the stream is over. */
static bool next_locked(ls_api_watch *w, ls_buf *out, const volatile bool *stopping)
{
    ls_api *a = w->api;
    for (;;) {
        if (w->ended || a->stopping || (stopping && *stopping))
            return false;
        if (w->error) {
            write_event(out, "ERROR", w->error);
            w->ended = true;
            return false;
        }
        if (w->drop_after && w->sent >= w->drop_after) {
            a->injected[API_FAULT_DROP]++;
            w->ended = true;
            return false;
        }
        size_t before = out->len;
        if (w->initial) {
            send_initial(w, out);
            if (w->end_bookmark)
                send_bookmark(w, out, true);
        }
        if (!send_backlog(w, out))
            continue;   /* writes the ERROR */
        uint64_t now = now_ms();
        if (out->len > before) {
            w->last_write_ms = now;
            return true;
        }
        if (w->deadline_ms && now >= w->deadline_ms)
            return false;
        if (w->bookmarks && now >= w->last_write_ms + BOOKMARK_QUIET_MS) {
            send_bookmark(w, out, false);
            w->last_write_ms = now;
            return true;
        }
        uint64_t until = w->bookmarks ? w->last_write_ms + BOOKMARK_QUIET_MS : now + 1000;
        if (w->deadline_ms && w->deadline_ms < until)
            until = w->deadline_ms;
        wait_changed(w, until);
    }
}

bool ls_api_watch_next(ls_api_watch *w, ls_buf *out, const volatile bool *stopping)
{
    pthread_mutex_lock(&w->api->mu);
    bool more = next_locked(w, out, stopping);
    pthread_mutex_unlock(&w->api->mu);
    return more;
}

void ls_api_watch_free(ls_api_watch *w)
{
    if (!w)
        return;
    api_selector_free(w->sel);
    cJSON_Delete(w->error);
    free(w->include_object);
    free(w->ns);
    free(w);
}
