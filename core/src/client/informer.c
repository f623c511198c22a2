/*
 * informer.c: list + watch of one resource into a local store. See
 * informer.h for the behaviour; this file follows client-go's reflector.
 */
#include "client/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/kutil.h"
#include "client/watch.h"
#include "luasched/log.h"

/* The store is an ls_kmap from "ns/name" (or "name") to the cJSON object. */

static void free_json(void *p)
{
    cJSON_Delete(p);
}

/* ---- the informer ---- */

struct ls_informer {
    ls_kclient *client;
    ls_informer_handlers h;
    char *name;
    char *base_path;       /* "/api/v1/namespaces/ns/pods" */
    char *selectors;       /* "&fieldSelector=...&labelSelector=..." or "" */
    int page_size, min_watch_timeout_s;
    long backoff_initial_ms, backoff_max_ms;
    long poll_ms;           /* > 0: relist at this interval instead of watching */
    bool keep_managed_fields;

    ls_kthread worker;
    atomic_int stop;
    atomic_int synced;

    pthread_mutex_t lock;   /* guards the store against readers on other threads, stats, rv */
    ls_kmap st;
    char rv[128];
    ls_informer_stats stats;

    ls_watch_decoder *dec;
    bool watch_gone;        /* this watch hit a 410 */
    bool watch_error;       /* this watch failed otherwise */
    unsigned long watch_events;
};

static char *dup_opt(const char *s)
{
    return ls_xstrdup(s ? s : "");
}

static char *make_base_path(const ls_informer_options *o)
{
    ls_buf b = {0};
    if (o->group && *o->group)
        ls_buf_addf(&b, "/apis/%s/%s", o->group, o->version);
    else
        ls_buf_addf(&b, "/api/%s", o->version);
    if (o->namespace && *o->namespace)
        ls_buf_addf(&b, "/namespaces/%s", o->namespace);
    ls_buf_addf(&b, "/%s", o->resource);
    return b.data;
}

static char *make_selectors(const ls_informer_options *o)
{
    ls_buf b = {0};
    ls_buf_adds(&b, "");
    if (o->field_selector && *o->field_selector) {
        ls_buf_adds(&b, "&fieldSelector=");
        ls_buf_add_query(&b, o->field_selector);
    }
    if (o->label_selector && *o->label_selector) {
        ls_buf_adds(&b, "&labelSelector=");
        ls_buf_add_query(&b, o->label_selector);
    }
    return b.data;
}

ls_informer *ls_informer_new(ls_kclient *c, const ls_informer_options *opt, const ls_informer_handlers *h,
                             ls_error *err)
{
    if (!c || !opt || !opt->version || !*opt->version || !opt->resource || !*opt->resource) {
        ls_errorf(err, "informer: a client, a version and a resource are required");
        return NULL;
    }
    ls_informer *inf = ls_xcalloc(1, sizeof *inf);
    inf->client = c;
    if (h)
        inf->h = *h;
    inf->name = dup_opt(opt->name && *opt->name ? opt->name : opt->resource);
    inf->base_path = make_base_path(opt);
    inf->selectors = make_selectors(opt);
    inf->page_size = opt->page_size > 0 ? opt->page_size : 500;
    inf->min_watch_timeout_s = opt->min_watch_timeout_s > 0 ? opt->min_watch_timeout_s : 300;
    inf->backoff_initial_ms = opt->backoff_initial_ms > 0 ? opt->backoff_initial_ms : 800;
    inf->backoff_max_ms = opt->backoff_max_ms > 0 ? opt->backoff_max_ms : 30000;
    inf->keep_managed_fields = opt->keep_managed_fields;
    inf->poll_ms = opt->poll_ms > 0 ? opt->poll_ms : 0;
    pthread_mutex_init(&inf->lock, NULL);
    ls_kmap_init(&inf->st);
    inf->dec = ls_watch_decoder_new(0);
    return inf;
}

static void set_error(ls_informer *inf, const char *msg)
{
    pthread_mutex_lock(&inf->lock);
    inf->stats.errors++;
    /* Long messages are cut: the return value is looked at only to say so. */
    if (snprintf(inf->stats.last_error, sizeof inf->stats.last_error, "%s: %s", inf->name, msg) < 0)
        inf->stats.last_error[0] = '\0';
    pthread_mutex_unlock(&inf->lock);
    /* client-go's reflector logs failed lists and watches the same way; a
     * request cancelled because the informer stops is no failure. */
    if (!atomic_load(&inf->stop))
        ls_log_warning("Failed to list or watch", "resource", inf->name, "err", msg);
}

static void set_rv(ls_informer *inf, const char *rv)
{
    if (!rv)
        return;
    pthread_mutex_lock(&inf->lock);
    snprintf(inf->rv, sizeof inf->rv, "%s", rv);
    pthread_mutex_unlock(&inf->lock);
}

/* "ns/name" or "name" into buf; false when the object has no name. */
static bool object_key(const cJSON *obj, char *buf, size_t cap)
{
    const char *name = ls_kutil_meta_str(obj, "name");
    const char *ns = ls_kutil_meta_str(obj, "namespace");
    if (!name || !*name)
        return false;
    if (ns && *ns)
        snprintf(buf, cap, "%s/%s", ns, name);
    else
        snprintf(buf, cap, "%s", name);
    return true;
}

static bool same_rv(const cJSON *a, const cJSON *b)
{
    const char *ra = ls_kutil_meta_str(a, "resourceVersion"), *rb = ls_kutil_meta_str(b, "resourceVersion");
    if (!ra && !rb)
        return cJSON_Compare(a, b, true);   /* metrics.k8s.io objects carry no resourceVersion */
    return ra && rb && strcmp(ra, rb) == 0;
}

static void trim(const ls_informer *inf, cJSON *obj)
{
    if (!inf->keep_managed_fields)
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
}

/* Stores obj (taken) and delivers add or update. */
static void apply_upsert(ls_informer *inf, const char *key, cJSON *obj)
{
    pthread_mutex_lock(&inf->lock);
    cJSON *old = ls_kmap_put(&inf->st, key, obj);
    pthread_mutex_unlock(&inf->lock);
    if (old && inf->h.on_update)
        inf->h.on_update(inf->h.ud, old, obj);
    else if (!old && inf->h.on_add)
        inf->h.on_add(inf->h.ud, obj);
    cJSON_Delete(old);
}

/* Removes key and delivers a delete of final (or of the stored object). */
static void apply_delete(ls_informer *inf, const char *key, const cJSON *final)
{
    pthread_mutex_lock(&inf->lock);
    cJSON *old = ls_kmap_remove(&inf->st, key);
    pthread_mutex_unlock(&inf->lock);
    const cJSON *gone = final ? final : old;
    if (gone && inf->h.on_delete)
        inf->h.on_delete(inf->h.ud, gone);
    cJSON_Delete(old);
}

/* ---- list ---- */

typedef enum { LIST_OK, LIST_GONE, LIST_FAILED } list_result;

/* List items lack kind/apiVersion; give them the list's, so that objects
 * from lists and from watch events look the same to the handlers. */
static void fill_type(cJSON *item, const char *list_kind, const char *api_version)
{
    if (!cJSON_GetObjectItemCaseSensitive(item, "kind") && list_kind) {
        size_t n = strlen(list_kind);
        if (n > 4 && strcmp(list_kind + n - 4, "List") == 0) {
            char kind[256];
            snprintf(kind, sizeof kind, "%.*s", (int)(n - 4), list_kind);
            cJSON_AddStringToObject(item, "kind", kind);
        }
    }
    if (!cJSON_GetObjectItemCaseSensitive(item, "apiVersion") && api_version)
        cJSON_AddStringToObject(item, "apiVersion", api_version);
}

/* Moves the items of one page into fresh. */
static bool take_page(ls_informer *inf, cJSON *page, ls_kmap *fresh)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
    if (items && !cJSON_IsNull(items) && !cJSON_IsArray(items)) {
        set_error(inf, "list: \"items\" is not an array");
        return false;
    }
    const char *kind = ls_kutil_json_str(page, "kind"), *apiv = ls_kutil_json_str(page, "apiVersion");
    while (items && cJSON_GetArraySize(items) > 0) {
        cJSON *item = cJSON_DetachItemFromArray(items, 0);
        char key[512];
        if (!cJSON_IsObject(item) || !object_key(item, key, sizeof key)) {
            cJSON_Delete(item);
            continue;
        }
        fill_type(item, kind, apiv);
        trim(inf, item);
        cJSON_Delete(ls_kmap_put(fresh, key, item));
    }
    return true;
}

static list_result get_page(ls_informer *inf, const char *path, cJSON **page)
{
    ls_kresponse r;
    ls_error e = {{0}};
    ls_krequest req = {.method = "GET", .path = path, .cancel = &inf->stop};
    bool got = ls_kclient_do(inf->client, &req, &r, &e);
    *page = NULL;
    list_result res = LIST_FAILED;
    if (!got) {
        set_error(inf, e.msg);
    } else if (r.status == 410) {
        res = LIST_GONE;
    } else if (r.status != 200) {
        char msg[400];
        ls_kutil_status_message(r.status, r.body, r.len, msg, sizeof msg);
        char line[480];
        snprintf(line, sizeof line, "list: HTTP %ld: %s", r.status, msg);
        set_error(inf, line);
    } else if (!(*page = cJSON_ParseWithLength(r.body, r.len)) || !cJSON_IsObject(*page)) {
        set_error(inf, "list: the answer is not a JSON object");
        cJSON_Delete(*page);
        *page = NULL;
    } else {
        res = LIST_OK;
    }
    ls_kresponse_free(&r);
    return res;
}

/* Lists every page into fresh; *rv gets the collection's resourceVersion. */
static list_result list_all(ls_informer *inf, bool from_cache, ls_kmap *fresh, char *rv, size_t rv_cap)
{
    char *cont = NULL;
    list_result res = LIST_OK;
    do {
        ls_buf path = {0};
        ls_buf_addf(&path, "%s?limit=%d%s", inf->base_path, inf->page_size, inf->selectors);
        if (cont) {
            ls_buf_adds(&path, "&continue=");
            ls_buf_add_query(&path, cont);
        } else if (from_cache) {
            ls_buf_adds(&path, "&resourceVersion=0");   /* the first list may come from the watch cache */
        }
        free(cont);
        cont = NULL;
        cJSON *page;
        res = get_page(inf, path.data, &page);
        ls_buf_free(&path);
        if (res != LIST_OK)
            break;
        const char *prv = ls_kutil_meta_str(page, "resourceVersion");
        snprintf(rv, rv_cap, "%s", prv ? prv : "");
        const char *c = ls_kutil_meta_str(page, "continue");
        if (c && *c)
            cont = ls_xstrdup(c);
        if (!take_page(inf, page, fresh))
            res = LIST_FAILED;
        cJSON_Delete(page);
    } while (res == LIST_OK && cont && !atomic_load(&inf->stop));
    free(cont);
    return res;
}

/* Makes the store equal to fresh (emptied here), delivering the differences:
 * deletes first, then adds and updates. */
static void reconcile(ls_informer *inf, ls_kmap *fresh)
{
    ls_vec gone;
    ls_vec_init(&gone, sizeof(char *));
    for (uint32_t i = 0; i < inf->st.cap; i++)
        for (ls_kmap_entry *e = inf->st.buckets[i]; e; e = e->next)
            if (!ls_kmap_get(fresh, e->key))
                *(char **)ls_vec_push(&gone) = ls_xstrdup(e->key);
    for (uint32_t i = 0; i < gone.len; i++) {
        apply_delete(inf, LS_VEC_AT(&gone, char *, i), NULL);
        free(LS_VEC_AT(&gone, char *, i));
    }
    ls_vec_free(&gone);
    /* In list order, as client-go's Replace delivers: the queue's ties follow it. */
    ls_kmap_entry **in_order = ls_kmap_in_order(fresh);
    for (uint32_t i = 0; i < fresh->len; i++) {
        ls_kmap_entry *e = in_order[i];
        cJSON *cur = ls_kmap_get(&inf->st, e->key);
        cJSON *obj = e->value;
        e->value = NULL;
        if (cur && same_rv(cur, obj))
            cJSON_Delete(obj);   /* unchanged: no event, as a resync without changes */
        else
            apply_upsert(inf, e->key, obj);
    }
    free(in_order);
    ls_kmap_free(fresh, free_json);
}

static list_result list_and_sync(ls_informer *inf, bool from_cache)
{
    ls_kmap fresh;
    ls_kmap_init(&fresh);
    char rv[128] = "";
    list_result res = list_all(inf, from_cache, &fresh, rv, sizeof rv);
    if (res != LIST_OK) {
        ls_kmap_free(&fresh, free_json);
        return res;
    }
    reconcile(inf, &fresh);
    set_rv(inf, rv);
    pthread_mutex_lock(&inf->lock);
    inf->stats.lists++;
    pthread_mutex_unlock(&inf->lock);
    atomic_store(&inf->synced, 1);
    if (inf->h.on_synced)
        inf->h.on_synced(inf->h.ud);
    return LIST_OK;
}

/* ---- watch ---- */

static bool on_event(void *ud, ls_watch_event *ev, ls_error *err)
{
    ls_informer *inf = ud;
    pthread_mutex_lock(&inf->lock);
    inf->stats.events++;
    pthread_mutex_unlock(&inf->lock);
    inf->watch_events++;
    if (ev->type == LS_WATCH_ERROR) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(ev->object, "code");
        const char *msg = ls_kutil_json_str(ev->object, "message");
        if (cJSON_IsNumber(code) && code->valueint == 410) {
            inf->watch_gone = true;
        } else {
            inf->watch_error = true;
            ls_errorf(err, "watch: ERROR event: %s", msg ? msg : "(no message)");
        }
        return false;
    }
    const char *rv = ls_kutil_meta_str(ev->object, "resourceVersion");
    if (ev->type == LS_WATCH_BOOKMARK) {
        set_rv(inf, rv);
        return true;
    }
    char key[512];
    if (!object_key(ev->object, key, sizeof key))
        return true;   /* nothing to key it by: skip rather than abort the watch */
    trim(inf, ev->object);
    if (ev->type == LS_WATCH_DELETED) {
        apply_delete(inf, key, ev->object);
    } else {
        cJSON *obj = ev->object;
        ev->object = NULL;   /* the store takes it */
        apply_upsert(inf, key, obj);
    }
    set_rv(inf, rv);
    return true;
}

static bool on_watch_data(void *ud, const char *data, size_t len)
{
    ls_informer *inf = ud;
    ls_error e = {{0}};
    if (ls_watch_feed(inf->dec, data, len, on_event, inf, &e))
        return true;
    if (!inf->watch_gone) {
        inf->watch_error = true;
        set_error(inf, e.msg);
    }
    return false;   /* a stream we cannot follow is dropped and re-watched */
}

typedef enum { WATCH_ENDED, WATCH_GONE, WATCH_FAILED } watch_result;

static watch_result watch_once(ls_informer *inf)
{
    char rv[128];
    pthread_mutex_lock(&inf->lock);
    snprintf(rv, sizeof rv, "%s", inf->rv);
    inf->stats.watches++;
    pthread_mutex_unlock(&inf->lock);
    int timeout = inf->min_watch_timeout_s + (int)(ls_kutil_rand() % (uint64_t)inf->min_watch_timeout_s);
    ls_buf path = {0};
    ls_buf_addf(&path, "%s?watch=true&allowWatchBookmarks=true&timeoutSeconds=%d%s&resourceVersion=",
                 inf->base_path, timeout, inf->selectors);
    ls_buf_add_query(&path, rv);
    ls_watch_reset(inf->dec);
    inf->watch_gone = inf->watch_error = false;
    inf->watch_events = 0;
    ls_krequest req = {.method = "GET", .path = path.data, .cancel = &inf->stop, .on_data = on_watch_data,
                       .ud = inf, .low_speed_time_s = timeout + 30};
    ls_kresponse r;
    ls_error e = {{0}};
    bool got = ls_kclient_do(inf->client, &req, &r, &e);
    ls_buf_free(&path);
    watch_result res = WATCH_FAILED;
    if (inf->watch_gone || (got && r.status == 410)) {
        res = WATCH_GONE;
    } else if (inf->watch_error) {
        res = WATCH_FAILED;   /* already recorded */
    } else if (!got) {
        if (!r.cancelled)
            set_error(inf, e.msg);
    } else if (r.status < 200 || r.status >= 300) {
        char msg[400], line[480];
        ls_kutil_status_message(r.status, r.body, r.len, msg, sizeof msg);
        snprintf(line, sizeof line, "watch: HTTP %ld: %s", r.status, msg);
        set_error(inf, line);
    } else {
        ls_error fe = {{0}};
        res = ls_watch_finish(inf->dec, on_event, inf, &fe) ? WATCH_ENDED
              : inf->watch_gone                            ? WATCH_GONE
                                                           : WATCH_FAILED;
        if (res == WATCH_FAILED)
            set_error(inf, fe.msg);
    }
    ls_kresponse_free(&r);
    return res;
}

/* ---- the thread ---- */

static void backoff(ls_informer *inf, long *delay)
{
    ls_kutil_sleep_ms(ls_kutil_jitter_ms(*delay, 0.5), &inf->stop);
    *delay = *delay * 2 > inf->backoff_max_ms ? inf->backoff_max_ms : *delay * 2;
}

static void *run(void *arg)
{
    ls_informer *inf = arg;
    long delay = inf->backoff_initial_ms;
    bool need_list = true, first = true;
    while (!atomic_load(&inf->stop)) {
        if (need_list) {
            list_result lr = list_and_sync(inf, first);
            if (lr == LIST_GONE) {
                first = false;   /* an expired continue token: list afresh, consistently */
                continue;
            }
            if (lr != LIST_OK) {
                backoff(inf, &delay);
                continue;
            }
            first = false;
            need_list = false;
            delay = inf->backoff_initial_ms;
        }
        if (inf->poll_ms) {
            ls_kutil_sleep_ms(inf->poll_ms, &inf->stop);
            need_list = true;
            continue;
        }
        int64_t started = ls_kutil_now_ms();
        watch_result wr = watch_once(inf);
        if (atomic_load(&inf->stop))
            break;
        if (wr == WATCH_GONE) {
            ls_log_info(2, "Watch expired (410), relisting", "resource", inf->name);
            pthread_mutex_lock(&inf->lock);
            inf->stats.relists++;
            inf->rv[0] = '\0';
            pthread_mutex_unlock(&inf->lock);
            need_list = true;
        } else if (wr == WATCH_FAILED) {
            backoff(inf, &delay);
        } else {
            ls_log_info(4, "Watch closed, resuming", "resource", inf->name);
            if (inf->watch_events == 0 && ls_kutil_now_ms() - started < 1000)
                backoff(inf, &delay);   /* a server closing watches at once must not be hammered */
            else
                delay = inf->backoff_initial_ms;
        }
    }
    return NULL;
}

bool ls_informer_start(ls_informer *inf, ls_error *err)
{
    ls_buf who = {0};
    ls_buf_addf(&who, "informer %s", inf->name);
    bool ok = ls_kthread_start(&inf->worker, run, inf, who.data, err);
    ls_buf_free(&who);
    return ok;
}

void ls_informer_stop(ls_informer *inf)
{
    ls_kthread_stop(&inf->worker, &inf->stop);
}

void ls_informer_free(ls_informer *inf)
{
    if (!inf)
        return;
    ls_informer_stop(inf);
    ls_kmap_free(&inf->st, free_json);
    ls_watch_decoder_free(inf->dec);
    pthread_mutex_destroy(&inf->lock);
    free(inf->name);
    free(inf->base_path);
    free(inf->selectors);
    free(inf);
}

bool ls_informer_has_synced(ls_informer *inf)
{
    return atomic_load(&inf->synced) != 0;
}

bool ls_informer_wait_synced(ls_informer *inf, long timeout_ms)
{
    int64_t end = ls_kutil_now_ms() + timeout_ms;
    while (!ls_informer_has_synced(inf)) {
        if (ls_kutil_now_ms() >= end)
            return false;
        ls_kutil_sleep_ms(10, NULL);
    }
    return true;
}

cJSON *ls_informer_get(ls_informer *inf, const char *ns, const char *name)
{
    char key[512];
    if (ns && *ns)
        snprintf(key, sizeof key, "%s/%s", ns, name);
    else
        snprintf(key, sizeof key, "%s", name);
    pthread_mutex_lock(&inf->lock);
    cJSON *obj = ls_kmap_get(&inf->st, key);
    cJSON *copy = obj ? cJSON_Duplicate(obj, true) : NULL;
    pthread_mutex_unlock(&inf->lock);
    return copy;
}

bool ls_informer_peek(ls_informer *inf, const char *ns, const char *name, void (*fn)(void *ud, const cJSON *obj),
                      void *ud)
{
    char key[512];
    if (ns && *ns)
        snprintf(key, sizeof key, "%s/%s", ns, name);
    else
        snprintf(key, sizeof key, "%s", name);
    pthread_mutex_lock(&inf->lock);
    const cJSON *obj = ls_kmap_get(&inf->st, key);
    if (obj && fn)
        fn(ud, obj);
    pthread_mutex_unlock(&inf->lock);
    return obj != NULL;
}

void ls_informer_each(ls_informer *inf, void (*fn)(void *ud, const cJSON *obj), void *ud)
{
    pthread_mutex_lock(&inf->lock);
    ls_kmap_entry **in_order = ls_kmap_in_order(&inf->st);
    for (uint32_t i = 0; i < inf->st.len; i++)
        fn(ud, in_order[i]->value);
    free(in_order);
    pthread_mutex_unlock(&inf->lock);
}

uint32_t ls_informer_size(ls_informer *inf)
{
    pthread_mutex_lock(&inf->lock);
    uint32_t n = inf->st.len;
    pthread_mutex_unlock(&inf->lock);
    return n;
}

void ls_informer_get_stats(ls_informer *inf, ls_informer_stats *out)
{
    pthread_mutex_lock(&inf->lock);
    *out = inf->stats;
    snprintf(out->resource_version, sizeof out->resource_version, "%s", inf->rv);
    pthread_mutex_unlock(&inf->lock);
}
