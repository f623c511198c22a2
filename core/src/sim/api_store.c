/*
 * api_store.c: the API server's object store. One mutex guards everything;
 * every change takes the next value of one global resourceVersion counter and
 * appends one event to a bounded ring, so the ring's resourceVersions are
 * consecutive and a watch finds its starting point by subtraction.
 * Collections are arrays sorted by "namespace/name", the order etcd lists in,
 * which also makes continue tokens a plain "after this key". Admission
 * (api_admission.c) and binding (api_bind.c) work on the same store.
 */
#include "sim/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_HISTORY 10000
#define MAX_NAME 253           /* upstream's limit for object names (DNS subdomain) */

/* ---- small JSON helpers */

void api_set_item(cJSON *obj, const char *key, cJSON *item)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddItemToObject(obj, key, item);
}

void api_set_rv(cJSON *obj, uint64_t rv)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)rv);
    ls_json_set_string(ls_json_child_object(obj, "metadata"), "resourceVersion", buf);
}

void api_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double api_rand(ls_api *a)
{
    return (double)(splitmix(&a->rng) >> 11) * 0x1.0p-53;
}

/* ---- statuses */

cJSON *ls_api_status(int code, const char *reason, const char *message)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "Status");
    cJSON_AddStringToObject(s, "apiVersion", "v1");
    cJSON_AddObjectToObject(s, "metadata");
    cJSON_AddStringToObject(s, "status", code < 300 ? "Success" : "Failure");
    if (message)
        cJSON_AddStringToObject(s, "message", message);
    if (reason)
        cJSON_AddStringToObject(s, "reason", reason);
    cJSON_AddNumberToObject(s, "code", code);
    return s;
}

int api_fail(cJSON **out, int code, const char *reason, const char *message)
{
    *out = ls_api_status(code, reason, message);
    return code;
}

/* Status details (name, group, kind) as upstream fills them in. */
int api_fail_named(cJSON **out, int code, const char *reason, const ls_api_resource *r, const char *name,
                      const char *message)
{
    api_fail(out, code, reason, message);
    cJSON *d = cJSON_AddObjectToObject(*out, "details");
    cJSON_AddStringToObject(d, "name", name);
    if (*r->group)
        cJSON_AddStringToObject(d, "group", r->group);
    cJSON_AddStringToObject(d, "kind", r->plural);
    return code;
}

const char *api_qualified(const ls_api_resource *r, char *buf, size_t len)
{
    if (*r->group)
        snprintf(buf, len, "%s.%s", r->plural, r->group);
    else
        snprintf(buf, len, "%s", r->plural);
    return buf;
}

int api_not_found(cJSON **out, const ls_api_resource *r, const char *name)
{
    char msg[600], q[128];
    snprintf(msg, sizeof msg, "%s \"%s\" not found", api_qualified(r, q, sizeof q), name);
    return api_fail_named(out, 404, "NotFound", r, name, msg);
}

static int conflict_modified(cJSON **out, const ls_api_resource *r, const char *name)
{
    char msg[700], q[128];
    snprintf(msg, sizeof msg,
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes "
             "to the latest version and try again",
             api_qualified(r, q, sizeof q), name);
    return api_fail_named(out, 409, "Conflict", r, name, msg);
}

/* ---- collections */

api_coll *api_coll_of(ls_api *a, const ls_api_resource *r)
{
    return &a->colls[api_resource_index(r)];
}

static void key_of(const ls_api_resource *r, const char *ns, const char *name, char *buf, size_t len)
{
    if (r->namespaced)
        snprintf(buf, len, "%s/%s", ns ? ns : "", name);
    else
        snprintf(buf, len, "%s", name);
}

/* Binary search: the index of key, or where it would go (and *found false). */
static uint32_t coll_search(const api_coll *c, const char *key, bool *found)
{
    uint32_t lo = 0, hi = c->len;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->items[mid]->key, key);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

api_obj *api_coll_find(const api_coll *c, const char *key)
{
    bool found;
    uint32_t i = coll_search(c, key, &found);
    return found ? c->items[i] : NULL;
}

static api_obj *coll_insert(api_coll *c, const char *key, cJSON *obj)
{
    bool found;
    uint32_t i = coll_search(c, key, &found);
    if (c->len == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->items = ls_xrealloc(c->items, c->cap * sizeof *c->items);
    }
    memmove(c->items + i + 1, c->items + i, (c->len - i) * sizeof *c->items);
    api_obj *o = ls_xcalloc(1, sizeof *o);
    o->key = ls_xstrdup(key);
    o->obj = obj;
    c->items[i] = o;
    c->len++;
    return o;
}

static void coll_remove(api_coll *c, api_obj *o)
{
    bool found;
    uint32_t i = coll_search(c, o->key, &found);
    if (!found)
        return;
    memmove(c->items + i, c->items + i + 1, (c->len - i - 1) * sizeof *c->items);
    c->len--;
    free(o->key);
    cJSON_Delete(o->obj);
    free(o);
}

/* ---- the event ring */

static void event_release(api_event *e)
{
    cJSON_Delete(e->obj);
    cJSON_Delete(e->prev);
    memset(e, 0, sizeof *e);
}

void api_emit(ls_api *a, int type, const ls_api_resource *r, const cJSON *obj, const cJSON *prev)
{
    uint32_t slot;
    if (a->ring_len < a->ring_cap) {
        slot = (a->ring_head + a->ring_len++) % a->ring_cap;
    } else {
        slot = a->ring_head;
        a->ring_head = (a->ring_head + 1) % a->ring_cap;
        event_release(&a->ring[slot]);
    }
    a->ring[slot] = (api_event){.rv = a->rv, .type = type, .res = r, .obj = cJSON_Duplicate(obj, 1),
                                .prev = prev ? cJSON_Duplicate(prev, 1) : NULL};
    pthread_cond_broadcast(&a->changed);
}

uint64_t api_oldest_rv(const ls_api *a)
{
    return a->ring_len ? a->ring[a->ring_head].rv - 1 : a->rv;
}

const api_event *api_event_at_rv(const ls_api *a, uint64_t rv)
{
    if (!a->ring_len)
        return NULL;
    uint64_t first = a->ring[a->ring_head].rv;
    if (rv < first || rv >= first + a->ring_len)
        return NULL;
    return &a->ring[(a->ring_head + (rv - first)) % a->ring_cap];
}

/* ---- lifecycle */

static const char *const default_namespaces[] = {"default", "kube-node-lease", "kube-public", "kube-system"};

static int create_locked(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, bool from_file,
                         cJSON **out);

ls_api *ls_api_new(uint32_t history, uint64_t seed)
{
    ls_api *a = ls_xcalloc(1, sizeof *a);
    pthread_mutex_init(&a->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->changed, &ca);
    pthread_condattr_destroy(&ca);
    a->colls = ls_xcalloc(api_max_resources(), sizeof *a->colls);   /* room for custom resources loaded later */
    a->ring_cap = history ? history : DEFAULT_HISTORY;
    a->ring = ls_xcalloc(a->ring_cap, sizeof *a->ring);
    ls_vec_init(&a->records, sizeof(ls_api_record));
    ls_vec_init(&a->claims, sizeof(api_claim_record));
    a->rng = seed;
    a->uid_seq = seed * 0x9e3779b97f4a7c15ULL + 1;
    const ls_api_resource *nsr = ls_api_resource_find("", "v1", "namespaces");
    for (size_t i = 0; i < sizeof default_namespaces / sizeof default_namespaces[0]; i++) {
        cJSON *o = cJSON_CreateObject(), *res = NULL;
        cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "metadata"), "name", default_namespaces[i]);
        create_locked(a, nsr, NULL, o, true, &res);
        cJSON_Delete(res);
    }
    return a;
}

void ls_api_free(ls_api *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        api_coll *c = &a->colls[i];
        for (uint32_t j = 0; j < c->len; j++) {
            free(c->items[j]->key);
            cJSON_Delete(c->items[j]->obj);
            free(c->items[j]);
        }
        free(c->items);
    }
    free(a->colls);
    for (uint32_t i = 0; i < a->ring_len; i++)
        event_release(&a->ring[(a->ring_head + i) % a->ring_cap]);
    free(a->ring);
    ls_vec_free(&a->records);
    ls_arena_free(&a->record_text);
    api_volumes_free(a);
    pthread_cond_destroy(&a->changed);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

void ls_api_set_faults(ls_api *a, const ls_api_faults *f)
{
    pthread_mutex_lock(&a->mu);
    a->faults = *f;
    pthread_mutex_unlock(&a->mu);
}

void ls_api_stop_watches(ls_api *a)
{
    pthread_mutex_lock(&a->mu);
    a->stopping = true;
    pthread_cond_broadcast(&a->changed);
    pthread_mutex_unlock(&a->mu);
}

uint32_t ls_api_num_records(const ls_api *a)
{
    return a->records.len;
}

const ls_api_record *ls_api_record_at(const ls_api *a, uint32_t i)
{
    return i < a->records.len ? &LS_VEC_AT(&a->records, ls_api_record, i) : NULL;
}

static void make_uid(ls_api *a, char *buf, size_t len)
{
    uint64_t x = splitmix(&a->uid_seq), y = splitmix(&a->uid_seq);
    snprintf(buf, len, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(x >> 32), (unsigned)(x >> 16) & 0xffff,
             (unsigned)x & 0xfff, (unsigned)(y >> 48) & 0xfff, (unsigned long long)(y & 0xffffffffffffULL));
}

/* ---- create */

static void random_suffix(ls_api *a, char *buf)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t x = splitmix(&a->uid_seq);
    for (int i = 0; i < 5; i++, x /= 27)
        buf[i] = alphabet[x % 27];
    buf[5] = '\0';
}

/* kind/apiVersion of the body, when given, must be the resource's. */
static int check_type(const ls_api_resource *r, cJSON *obj, cJSON **out)
{
    char gv[128], msg[400];
    api_group_version(r, gv, sizeof gv);
    const char *av = ls_json_text(obj, "apiVersion", NULL), *kind = ls_json_text(obj, "kind", NULL);
    if (av && strcmp(av, gv) != 0) {
        snprintf(msg, sizeof msg, "the API version in the data (%s) does not match the expected API version (%s)",
                 av, gv);
        return api_fail(out, 400, "BadRequest", msg);
    }
    if (kind && strcmp(kind, r->kind) != 0) {
        snprintf(msg, sizeof msg, "%s in version \"%s\" cannot be handled as a %s: the kind in the data does not "
                 "match the expected kind", kind, r->version, r->kind);
        return api_fail(out, 400, "BadRequest", msg);
    }
    ls_json_set_string(obj, "apiVersion", gv);
    ls_json_set_string(obj, "kind", r->kind);
    return 0;
}

/* Name (or generateName), namespace; 0 or the failure code. */
static int check_identity(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *meta, char *name,
                          size_t len, cJSON **out)
{
    const char *n = ls_json_text(meta, "name", NULL), *gen = ls_json_text(meta, "generateName", NULL);
    char msg[600];
    /* Upstream's rules for names in a path segment, and its length limit: a
     * longer name was cut short in name and in the key (so the object could
     * not be read back, and long names sharing a start collided), one with a
     * '/' could never be addressed. */
    size_t full = n && *n ? strlen(n) : gen && !n ? strlen(gen) + 5 : 0;
    const char *bad = full > MAX_NAME ? "must be no more than 253 characters"
                    : (n && *n ? strchr(n, '/') : gen && !n ? strchr(gen, '/') : NULL) ? "may not contain '/'"
                                                                                      : NULL;
    if (bad) {
        snprintf(msg, sizeof msg, "%s \"%.200s\" is invalid: metadata.name: Invalid value: \"%.200s\": %s", r->kind,
                 n && *n ? n : gen, n && *n ? n : gen, bad);
        return api_fail(out, 422, "Invalid", msg);
    }
    if (!n && gen) {
        char sfx[6];
        random_suffix(a, sfx);
        snprintf(name, len, "%s%s", gen, sfx);
        ls_json_set_string(meta, "name", name);
    } else if (n && *n) {
        snprintf(name, len, "%s", n);
    } else {
        snprintf(msg, sizeof msg, "%s \"\" is invalid: metadata.name: Required value: name or generateName is required",
                 r->kind);
        return api_fail(out, 422, "Invalid", msg);
    }
    if (!r->namespaced) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
        return 0;
    }
    const char *body_ns = ls_json_text(meta, "namespace", NULL);
    if (body_ns && ns && strcmp(body_ns, ns) != 0)
        return api_fail(out, 400, "BadRequest",
                        "the namespace of the provided object does not match the namespace sent on the request");
    char chosen[256];   /* copied first: set_str frees the member body_ns points into */
    snprintf(chosen, sizeof chosen, "%s", ns ? ns : body_ns ? body_ns : "default");
    ls_json_set_string(meta, "namespace", chosen);
    const char *the_ns = ls_json_text(meta, "namespace", NULL);
    if (!api_coll_find(api_coll_of(a, ls_api_resource_find("", "v1", "namespaces")), the_ns)) {
        snprintf(msg, sizeof msg, "namespaces \"%s\" not found", the_ns);
        return api_fail_named(out, 404, "NotFound", ls_api_resource_find("", "v1", "namespaces"), the_ns, msg);
    }
    return 0;
}

static int create_locked(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, bool from_file,
                         cJSON **out)
{
    char name[512], key[1100], msg[700], q[128];
    int code;
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return api_fail(out, 400, "BadRequest", "the body of the request is not a JSON object");
    }
    cJSON *meta = ls_json_child_object(obj, "metadata");
    if ((code = check_type(r, obj, out)) || (code = check_identity(a, r, ns, meta, name, sizeof name, out))) {
        cJSON_Delete(obj);
        return code;
    }
    key_of(r, ls_json_text(meta, "namespace", NULL), name, key, sizeof key);
    api_coll *c = api_coll_of(a, r);
    if (api_coll_find(c, key)) {
        cJSON_Delete(obj);
        snprintf(msg, sizeof msg, "%s \"%s\" already exists", api_qualified(r, q, sizeof q), name);
        return api_fail_named(out, 409, "AlreadyExists", r, name, msg);
    }
    if ((code = api_admit(a, r, obj, name, out))) {
        cJSON_Delete(obj);
        return code;
    }
    char uid[64], ts[32];
    make_uid(a, uid, sizeof uid);
    ls_json_set_string(meta, "uid", uid);
    if (!from_file || !ls_json_text(meta, "creationTimestamp", NULL)) {
        api_now(ts, sizeof ts);
        ls_json_set_string(meta, "creationTimestamp", ts);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionTimestamp");
    api_set_rv(obj, ++a->rv);
    api_obj *o = coll_insert(c, key, obj);
    if (strcmp(r->kind, "Pod") == 0)
        api_record_add(a, o, ls_json_text(meta, "namespace", NULL), name);
    api_emit(a, API_ADDED, r, obj, NULL);
    if (api_is_event(r)) {
        const char *reason = ls_json_text(obj, "reason", NULL);
        a->scheduled_events += reason && strcmp(reason, "Scheduled") == 0;
        api_events_mirror(a, r, obj);
    }
    *out = cJSON_Duplicate(obj, 1);
    return 201;
}

bool api_store_put_locked(ls_api *a, const ls_api_resource *r, const cJSON *obj)
{
    const char *ns = r->namespaced ? ls_json_text(obj, "metadata", "namespace") : NULL;
    const char *name = ls_json_text(obj, "metadata", "name");
    api_obj *o = name ? api_lookup(a, r, ns ? ns : "default", name) : NULL;
    if (!o) {
        cJSON *out = NULL;
        int code = create_locked(a, r, ns ? ns : (r->namespaced ? "default" : NULL), cJSON_Duplicate(obj, 1), false,
                                 &out);
        cJSON_Delete(out);
        return code == 201;
    }
    cJSON *old = o->obj, *next = cJSON_Duplicate(obj, 1);
    if (cJSON_Compare(next, old, 1)) {
        cJSON_Delete(next);
        return true;
    }
    api_set_rv(next, ++a->rv);
    o->obj = next;
    api_emit(a, API_MODIFIED, r, next, old);
    cJSON_Delete(old);
    return true;
}

int ls_api_create(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, cJSON **out)
{
    return api_create(a, r, ns, obj, false, out);
}

int api_create(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, bool from_file, cJSON **out)
{
    pthread_mutex_lock(&a->mu);
    int code = create_locked(a, r, ns, obj, from_file, out);
    pthread_mutex_unlock(&a->mu);
    return code;
}

/* ---- get */

api_obj *api_lookup(ls_api *a, const ls_api_resource *r, const char *ns, const char *name)
{
    char key[1100];
    key_of(r, ns, name, key, sizeof key);
    return api_coll_find(api_coll_of(a, r), key);
}

int ls_api_get(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, cJSON **out)
{
    pthread_mutex_lock(&a->mu);
    api_obj *o = api_lookup(a, r, ns, name);
    int code = o ? 200 : api_not_found(out, r, name);
    if (o)
        *out = cJSON_Duplicate(o->obj, 1);
    pthread_mutex_unlock(&a->mu);
    return code;
}

/* ---- update and patch share the commit */

static bool same_field(const cJSON *a, const cJSON *b, const char *f1, const char *f2)
{
    const char *x = ls_json_text(a, f1, f2), *y = ls_json_text(b, f1, f2);
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

/* Puts the stored object's identity back on next, keeps the parts the
 * request may not change, and stores it as a new version (no new version
 * when nothing changed, as upstream). Consumes next. */
static int commit_update(ls_api *a, const ls_api_resource *r, api_obj *o, cJSON *next, bool status_only,
                         cJSON **out)
{
    cJSON *old = o->obj;
    const char *name = ls_json_text(old, "metadata", "name");
    if (status_only) {
        cJSON *status = cJSON_DetachItemFromObjectCaseSensitive(next, "status");
        cJSON_Delete(next);
        next = cJSON_Duplicate(old, 1);
        api_set_item(next, "status", status ? status : cJSON_CreateObject());
    } else if (r->subresources && api_resource_has_sub(r, "status")) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(old, "status");
        if (st)
            api_set_item(next, "status", cJSON_Duplicate(st, 1));
        else
            cJSON_DeleteItemFromObjectCaseSensitive(next, "status");
    }
    char too_long[400];
    if (!ls_api_annotations_fit(next, r->kind, name, too_long, sizeof too_long)) {
        cJSON_Delete(next);
        return api_fail_named(out, 422, "Invalid", r, name, too_long);
    }
    int invalid;
    if (strcmp(r->kind, "Pod") == 0 && !status_only && (invalid = api_validate_pod(next, name, out))) {
        cJSON_Delete(next);
        return invalid;
    }
    if (strcmp(r->kind, "Pod") == 0 && !same_field(old, next, "spec", "nodeName")) {
        char msg[700];
        snprintf(msg, sizeof msg, "Pod \"%s\" is invalid: spec.nodeName: Forbidden: pod updates may not change "
                 "spec.nodeName (bind through the binding subresource)", name);
        cJSON_Delete(next);
        return api_fail_named(out, 422, "Invalid", r, name, msg);
    }
    cJSON *meta = ls_json_child_object(next, "metadata");
    cJSON *old_meta = cJSON_GetObjectItemCaseSensitive(old, "metadata");
    static const char *const kept[] = {"name", "namespace", "uid", "creationTimestamp", "resourceVersion"};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(old_meta, kept[i]);
        if (v)
            api_set_item(meta, kept[i], cJSON_Duplicate(v, 1));
    }
    ls_json_set_string(next, "apiVersion", ls_json_text(old, "apiVersion", NULL));
    ls_json_set_string(next, "kind", r->kind);
    if (cJSON_Compare(next, old, 1)) {
        cJSON_Delete(next);
        *out = cJSON_Duplicate(old, 1);
        return 200;
    }
    api_set_rv(next, ++a->rv);
    o->obj = next;
    api_emit(a, API_MODIFIED, r, next, old);
    cJSON_Delete(old);
    if (api_is_event(r))
        api_events_mirror(a, r, next);
    *out = cJSON_Duplicate(next, 1);
    return 200;
}

int ls_api_update(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, cJSON *obj,
                  bool status_only, cJSON **out)
{
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return api_fail(out, 400, "BadRequest", "the body of the request is not a JSON object");
    }
    int code;
    if ((code = check_type(r, obj, out))) {
        cJSON_Delete(obj);
        return code;
    }
    const char *body_name = ls_json_text(obj, "metadata", "name");
    if (body_name && strcmp(body_name, name) != 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "the name of the object (%s) does not match the name on the URL (%s)", body_name,
                 name);
        cJSON_Delete(obj);
        return api_fail(out, 400, "BadRequest", msg);
    }
    pthread_mutex_lock(&a->mu);
    api_obj *o = api_lookup(a, r, ns, name);
    const char *want = ls_json_text(obj, "metadata", "resourceVersion");
    if (!o) {
        code = api_not_found(out, r, name);
        cJSON_Delete(obj);
    } else if (want && *want && strcmp(want, ls_json_text(o->obj, "metadata", "resourceVersion")) != 0) {
        code = conflict_modified(out, r, name);
        cJSON_Delete(obj);
    } else {
        code = commit_update(a, r, o, obj, status_only, out);
    }
    pthread_mutex_unlock(&a->mu);
    return code;
}

static bool patch_kind(const char *content_type, bool *strategic)
{
    if (!content_type)
        return false;
    if (strncmp(content_type, "application/merge-patch+json", 28) == 0) {
        *strategic = false;
        return true;
    }
    if (strncmp(content_type, "application/strategic-merge-patch+json", 38) == 0) {
        *strategic = true;
        return true;
    }
    return false;
}

int ls_api_patch(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, const char *content_type,
                 const cJSON *patch, bool status_only, cJSON **out)
{
    bool strategic;
    if (!patch_kind(content_type, &strategic)) {
        char msg[300];
        snprintf(msg, sizeof msg, "the body of the request was in an unknown format - accepted media types include: "
                 "application/merge-patch+json, application/strategic-merge-patch+json");
        return api_fail(out, 415, "UnsupportedMediaType", msg);
    }
    if (!cJSON_IsObject(patch))
        return api_fail(out, 400, "BadRequest", "the patch is not a JSON object");
    pthread_mutex_lock(&a->mu);
    api_obj *o = api_lookup(a, r, ns, name);
    const char *want = ls_json_text(patch, "metadata", "resourceVersion");
    int code;
    if (!o) {
        code = api_not_found(out, r, name);
    } else if (want && *want && strcmp(want, ls_json_text(o->obj, "metadata", "resourceVersion")) != 0) {
        code = conflict_modified(out, r, name);
    } else {
        cJSON *next = cJSON_Duplicate(o->obj, 1);
        api_patch_apply(next, patch, strategic);
        code = commit_update(a, r, o, next, status_only, out);
    }
    pthread_mutex_unlock(&a->mu);
    return code;
}

/* ---- delete */

static void drop_locked(ls_api *a, const ls_api_resource *r, api_obj *o)
{
    if (o->record)
        LS_VEC_AT(&a->records, ls_api_record, o->record - 1).deleted = true;
    api_set_rv(o->obj, ++a->rv);
    api_emit(a, API_DELETED, r, o->obj, NULL);
    coll_remove(api_coll_of(a, r), o);
}

static void remove_locked(ls_api *a, const ls_api_resource *r, api_obj *o)
{
    if (api_is_event(r)) {
        /* the twin goes too; the names are copied before o is freed */
        const char *n = ls_json_text(o->obj, "metadata", "namespace"), *m = ls_json_text(o->obj, "metadata", "name");
        char ns[300], name[600];
        snprintf(ns, sizeof ns, "%s", n ? n : "");
        snprintf(name, sizeof name, "%s", m ? m : "");
        drop_locked(a, r, o);
        api_events_unmirror(a, r, ns, name);
        return;
    }
    drop_locked(a, r, o);
}

void api_store_put(ls_api *a, const ls_api_resource *r, cJSON *obj)
{
    char key[1100];
    key_of(r, ls_json_text(obj, "metadata", "namespace"), ls_json_text(obj, "metadata", "name"), key, sizeof key);
    api_set_rv(obj, ++a->rv);
    api_obj *o = api_coll_find(api_coll_of(a, r), key);
    if (!o) {
        coll_insert(api_coll_of(a, r), key, obj);
        api_emit(a, API_ADDED, r, obj, NULL);
        return;
    }
    cJSON *old = o->obj;
    o->obj = obj;
    api_emit(a, API_MODIFIED, r, obj, old);
    cJSON_Delete(old);
}

void api_store_drop(ls_api *a, const ls_api_resource *r, const char *ns, const char *name)
{
    api_obj *o = api_lookup(a, r, ns, name);
    if (o)
        drop_locked(a, r, o);
}

/* Upstream's namespace controller empties a deleted namespace in the
 * background; here it happens at once, each object with its DELETED event. */
static void empty_namespace(ls_api *a, const char *ns)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/", ns);
    size_t plen = strlen(prefix);
    for (uint32_t i = 0; i < api_num_resources(); i++) {
        const ls_api_resource *r = api_resource_at(i);
        api_coll *c = api_coll_of(a, r);
        bool found;
        uint32_t at = r->namespaced ? coll_search(c, prefix, &found) : c->len;
        while (at < c->len && strncmp(c->items[at]->key, prefix, plen) == 0)
            remove_locked(a, r, c->items[at]);
    }
}

int ls_api_delete(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, const char *uid,
                  cJSON **out)
{
    pthread_mutex_lock(&a->mu);
    api_obj *o = api_lookup(a, r, ns, name);
    int code = 200;
    const char *have = o ? ls_json_text(o->obj, "metadata", "uid") : NULL;
    if (!o) {
        code = api_not_found(out, r, name);
    } else if (uid && *uid && (!have || strcmp(uid, have) != 0)) {
        char msg[800], q[128];
        snprintf(msg, sizeof msg, "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in "
                 "precondition: %s, UID in object meta: %s",
                 api_qualified(r, q, sizeof q), name, uid, have ? have : "");
        code = api_fail_named(out, 409, "Conflict", r, name, msg);
    } else {
        *out = cJSON_Duplicate(o->obj, 1);
        remove_locked(a, r, o);
        if (strcmp(r->kind, "Namespace") == 0)
            empty_namespace(a, name);
    }
    pthread_mutex_unlock(&a->mu);
    return code;
}

