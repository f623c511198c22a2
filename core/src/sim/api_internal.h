/*
 * api_internal.h: what the API server's modules share (store, selectors,
 * patches, watch, HTTP front end). See apiserver.h for the model.
 */
#ifndef LS_SIM_API_INTERNAL_H
#define LS_SIM_API_INTERNAL_H

#include "model/doc.h"
#include "sim/apiserver.h"

#include <pthread.h>

enum { API_ADDED, API_MODIFIED, API_DELETED };

typedef struct api_obj {
    char *key;                 /* "ns/name", or "name" for cluster-scoped kinds: the list order */
    cJSON *obj;
    uint32_t record;           /* pods: index into records + 1 */
} api_obj;

typedef struct api_coll {
    api_obj **items;           /* sorted by key */
    uint32_t len, cap;
} api_coll;

typedef struct api_event {
    uint64_t rv;
    int type;
    const ls_api_resource *res;
    cJSON *obj;                /* the state after the change (before it, for DELETED) */
    cJSON *prev;               /* MODIFIED: the state before, for selector transitions */
} api_event;

/* Kinds of injected faults, counted so tests can tell a fault really happened. */
enum { API_FAULT_ERROR, API_FAULT_THROTTLE, API_FAULT_GONE, API_FAULT_DROP, API_FAULT_KINDS };

struct ls_api {
    pthread_mutex_t mu;
    pthread_cond_t changed;    /* broadcast on every event and on stop */
    uint64_t rv;               /* last resourceVersion given out */
    api_coll *colls;           /* one per entry of the resource table */
    api_event *ring;
    uint32_t ring_cap, ring_len, ring_head;   /* head: the oldest event */
    ls_vec records;            /* ls_api_record */
    ls_vec claims;             /* api_claim_record: claims the PV controller bound */
    ls_arena record_text;      /* the records' strings and the claims' names: they live as long as the store */
    ls_api_faults faults;
    uint64_t injected[API_FAULT_KINDS];   /* faults injected so far, by kind (for the record) */
    uint64_t rng, uid_seq;
    bool stopping;
    /* For the record: Scheduled events created so far, and how many existed
     * when the latest binding was accepted (do events keep up?). */
    uint64_t scheduled_events, scheduled_events_at_last_bind, bindings;
    int serve_as;              /* --serve-as: the v1.<minor> release pretended; 0: the current one */
};

/* custom.c: custom resources registered from cluster files (process-wide). */
enum { API_MAX_CUSTOM = 64 };
uint32_t api_custom_count(void);
const ls_api_resource *api_custom_at(uint32_t i);
/* The resource a custom object's kind and apiVersion name, registered on
 * first sight; NULL for a core or built-in group (or, with err, when full). */
const ls_api_resource *api_custom_register(const cJSON *obj, ls_error *err);

/* resources.c: the fixed table, then the custom resources. */
uint32_t api_num_resources(void);
uint32_t api_max_resources(void);   /* what a store allocates collections for */
const ls_api_resource *api_resource_at(uint32_t i);
uint32_t api_resource_index(const ls_api_resource *r);
/* Whether the release v1.<serve_as> served the group version (0: the
 * current release, which serves every resource of the table). */
bool api_served_in(const char *group, const char *version, int serve_as);
/* /version's fields as the release v1.<serve_as> reports them (0: unchanged). */
void api_version_serve_as(cJSON *version, int serve_as);
cJSON *api_discovery_core(void);                     /* /api */
cJSON *api_discovery_groups(int serve_as);           /* /apis */
/* /api/v1, /apis/G/V: NULL for an unknown group version (or one the release
 * serve_as did not serve). */
cJSON *api_discovery_resources(const char *group, const char *version, int serve_as);
/* "v1", "apps/v1" */
void api_group_version(const ls_api_resource *r, char *buf, size_t len);
/* /openapi/v3 and /openapi/v3/api/v1, /openapi/v3/apis/G/V (NULL: unknown). */
cJSON *api_openapi_root(int serve_as);
cJSON *api_openapi_group(const char *path, int serve_as);
bool api_resource_has_sub(const ls_api_resource *r, const char *sub);
/* Does the comma-separated list (NULL: empty) hold the word? */
bool api_list_has(const char *list, const char *word);
/* metrics.k8s.io: get and list only (writes come from cluster files). */
bool api_resource_read_only(const ls_api_resource *r);

/* select.c: label and field selectors. */
typedef struct api_selector api_selector;
/* NULL with *msg (static or in msgbuf) on a parse error; an empty or NULL
 * text gives a selector that matches everything. */
api_selector *api_selector_parse(const ls_api_resource *r, const char *labels, const char *fields, char *msgbuf,
                                 size_t msglen);
bool api_selector_match(const api_selector *s, const cJSON *obj);
void api_selector_free(api_selector *s);

/* patch.c: merge patch (strategic = false) and the strategic merge patch
 * subset we serve (lists merged by key, $patch, $setElementOrder ignored).
 * Applies patch onto target in place. */
void api_patch_apply(cJSON *target, const cJSON *patch, bool strategic);

/* store.c */
void api_set_item(cJSON *obj, const char *key, cJSON *item);
void api_set_rv(cJSON *obj, uint64_t rv);
void api_now(char *buf, size_t len);                     /* RFC 3339, UTC, seconds */
/* "pods", "leases.coordination.k8s.io": how messages name a resource. */
const char *api_qualified(const ls_api_resource *r, char *buf, size_t len);
/* A Status with details {name, group, kind}. */
int api_fail_named(cJSON **out, int code, const char *reason, const ls_api_resource *r, const char *name,
                   const char *message);
api_obj *api_coll_find(const api_coll *c, const char *key);
/* Under the lock: the stored object, or NULL. */
api_obj *api_lookup(ls_api *a, const ls_api_resource *r, const char *ns, const char *name);

/* admission.c: defaults and Priority admission of a new object; 0 or the
 * failure code with *out a Status. */
int api_admit(ls_api *a, const ls_api_resource *r, cJSON *obj, const char *name, cJSON **out);

/* validate.c: upstream's pod validation; 0, or 422 (400 for a quantity that
 * does not parse) with *out the Status naming every field. */
int api_validate_pod(const cJSON *pod, const char *name, cJSON **out);
/* store.c: a controller's write (under the lock): the object's new version, status
 * included, or a new object; false when the create is refused. */
bool api_store_put_locked(ls_api *a, const ls_api_resource *r, const cJSON *obj);

/* volumes.c: the PV and ephemeral-volume controllers (pv_controller.h) after a
 * successful write of `r` (takes the lock); the claims they bound. */
typedef struct api_claim_record {
    char *ns, *name, *volume, *selected_node;
    uint32_t binds;            /* times the claim became Bound: must end 0 or 1 */
} api_claim_record;
void api_volumes_after_write(ls_api *a, const ls_api_resource *r, const cJSON *obj);
/* Under the lock: the record's claim lines (false when a claim was bound twice), its JSON. */
bool api_volumes_print(ls_api *a, FILE *out);
cJSON *api_volumes_json(ls_api *a, bool *ok);
void api_volumes_free(ls_api *a);

/* record.c: a new pod's record (under the lock). */
void api_record_add(ls_api *a, api_obj *o, const char *ns, const char *name);
/* ls_api_create; from_file keeps the manifest's creationTimestamp (queue order). */
int api_create(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, bool from_file, cJSON **out);
/* Under the lock: emit the event into the ring (copies obj / prev). */
void api_emit(ls_api *a, int type, const ls_api_resource *r, const cJSON *obj, const cJSON *prev);
/* Under the lock: the oldest rv a watch may start after. */
uint64_t api_oldest_rv(const ls_api *a);
const api_event *api_event_at_rv(const ls_api *a, uint64_t rv);
api_coll *api_coll_of(ls_api *a, const ls_api_resource *r);
double api_rand(ls_api *a);                  /* [0, 1), under the lock */
int api_fail(cJSON **out, int code, const char *reason, const char *message);
/* "pods \"web-0\" not found" style messages. */
int api_not_found(cJSON **out, const ls_api_resource *r, const char *name);

/* store.c, for the events twin: under the lock, stores obj (taken) under
 * its metadata's namespace/name, new or replacing, with a resourceVersion
 * and its watch event (no admission, no mirroring); drop removes one. */
void api_store_put(ls_api *a, const ls_api_resource *r, cJSON *obj);
void api_store_drop(ls_api *a, const ls_api_resource *r, const char *ns, const char *name);

/* events.c: one Event served in both groups (see api_events.c). Under the lock. */
bool api_is_event(const ls_api_resource *r);
void api_events_mirror(ls_api *a, const ls_api_resource *r, const cJSON *stored);
void api_events_unmirror(ls_api *a, const ls_api_resource *r, const char *ns, const char *name);

/* table.c: kubectl's Table rendering of a list (consumes nothing). */
cJSON *api_table(const ls_api_resource *r, const cJSON *list, const char *include_object);

#endif
