/*
 * informer.h: list+watch of one resource kind, kept in a local store
 * (internal). The equivalent of a client-go reflector + indexer + handlers.
 *
 * On its own thread an informer lists the resource (pages of `limit`,
 * following metadata.continue), delivers the objects, then watches from the
 * list's resourceVersion with bookmarks and a random timeoutSeconds in
 * [min_watch_timeout_s, 2 × min_watch_timeout_s). Watch events are applied to
 * the store (keyed "namespace/name", or "name" for cluster-scoped kinds) and
 * delivered as add / update(old, new) / delete. A stream that ends is
 * re-watched from the last resourceVersion; a 410 (an ERROR event or an HTTP
 * status: the version is too old) starts a fresh list that is reconciled with
 * the store: deletes for objects gone, updates for objects whose
 * resourceVersion changed, adds for new ones. Failures back off exponentially
 * with jitter (800 ms to 30 s by default, as client-go).
 *
 * Handlers run on the informer thread, one at a time, in event order. The
 * objects they get are owned by the informer and valid only during the call:
 * copy (cJSON_Duplicate) or decode what must be kept. The object handed to
 * on_delete is the final state from the DELETED event, or the last known
 * state when the deletion was only noticed by a relist.
 */
#ifndef LS_CLIENT_INFORMER_H
#define LS_CLIENT_INFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "client/http.h"
#include "luasched/base.h"

typedef struct ls_informer ls_informer;

typedef struct ls_informer_handlers {
    void (*on_add)(void *ud, const cJSON *obj);
    void (*on_update)(void *ud, const cJSON *old_obj, const cJSON *new_obj);
    void (*on_delete)(void *ud, const cJSON *obj);
    /* Optional: after each full list has been delivered (the first one makes
     * ls_informer_has_synced true). */
    void (*on_synced)(void *ud);
    void *ud;
} ls_informer_handlers;

typedef struct ls_informer_options {
    const char *group;            /* "" or NULL: the core group (/api/v1) */
    const char *version;          /* "v1" */
    const char *resource;         /* plural: "pods", "nodes", "leases", a CRD's plural */
    const char *namespace;        /* NULL/"": all namespaces (or a cluster-scoped kind) */
    const char *field_selector;   /* e.g. "status.phase!=Succeeded,status.phase!=Failed"; NULL: none */
    const char *label_selector;   /* NULL: none */
    const char *name;             /* for logs and errors; NULL: the resource */
    int page_size;                /* list limit; 0: 500 */
    int min_watch_timeout_s;      /* 0: 300 */
    long backoff_initial_ms;      /* 0: 800 */
    long backoff_max_ms;          /* 0: 30000 */
    long poll_ms;                 /* 0: list, then watch. > 0: never watch; list every poll_ms and
                                     deliver the differences (for APIs without watch, such as
                                     metrics.k8s.io); objects without a resourceVersion are
                                     compared whole */
    bool keep_managed_fields;     /* false: metadata.managedFields is dropped before objects are
                                     stored and delivered (kube-scheduler trims it too: it is large
                                     and no scheduling decision reads it) */
} ls_informer_options;

/* The client must outlive the informer. Strings in opt are copied. */
ls_informer *ls_informer_new(ls_kclient *c, const ls_informer_options *opt, const ls_informer_handlers *h,
                             ls_error *err);
/* Starts the thread (once). */
bool ls_informer_start(ls_informer *inf, ls_error *err);
/* Stops the thread and joins it; an in-progress request is cancelled, so this
 * returns within about 100 ms plus the running handler's time. Idempotent.
 * Never from a handler (it would join its own thread). */
void ls_informer_stop(ls_informer *inf);
/* Stops if needed and frees the store. */
void ls_informer_free(ls_informer *inf);

/* True once the first full list has been delivered to the handlers. */
bool ls_informer_has_synced(ls_informer *inf);
/* Waits up to timeout_ms for has_synced; false on timeout. */
bool ls_informer_wait_synced(ls_informer *inf, long timeout_ms);

/* A copy of the stored object "ns/name" (ns NULL for cluster-scoped), or
 * NULL. The caller cJSON_Deletes it. Safe from any thread. */
cJSON *ls_informer_get(ls_informer *inf, const char *ns, const char *name);
/* Whether "ns/name" is stored; when it is and fn is given, fn reads it under
 * the store's lock (no copy; fn must not keep it nor call the informer). */
bool ls_informer_peek(ls_informer *inf, const char *ns, const char *name, void (*fn)(void *ud, const cJSON *obj),
                      void *ud);
/* Calls fn on every stored object in the order they were stored (a list's
 * order), under the store's lock (so no handler
 * runs meanwhile; fn must not call back into the informer). */
void ls_informer_each(ls_informer *inf, void (*fn)(void *ud, const cJSON *obj), void *ud);
/* Number of stored objects. Safe from any thread. */
uint32_t ls_informer_size(ls_informer *inf);

typedef struct ls_informer_stats {
    unsigned long lists;          /* full lists done (first one included) */
    unsigned long relists;        /* lists forced by a 410 */
    unsigned long watches;        /* watch requests made */
    unsigned long events;         /* watch events applied (bookmarks included) */
    unsigned long errors;         /* failed lists/watches */
    char resource_version[128];   /* the last one seen */
    char last_error[512];         /* "" when none yet */
} ls_informer_stats;
void ls_informer_get_stats(ls_informer *inf, ls_informer_stats *out);

#endif
