/*
 * api_events.c: one Event, served in both groups. The API server keeps a
 * single events storage and converts on the way out, so an Event written
 * through events.k8s.io/v1 is listed, got and watched through core/v1 too
 * (`kubectl describe pod`, `kubectl get events`), and the reverse. Here each
 * write through one group stores the converted twin in the other group's
 * collection (same name, namespace, uid and creationTimestamp; its own
 * resourceVersion). The field mapping is upstream's events conversion
 * (pkg/apis/events/v1/conversion.go): regarding <-> involvedObject,
 * note <-> message, reportingController <-> reportingComponent,
 * deprecatedSource <-> source, deprecatedFirstTimestamp/LastTimestamp/Count
 * <-> firstTimestamp/lastTimestamp/count; the other fields keep their names.
 */
#include "sim/api_internal.h"

#include <string.h>

/* Fields with the same name and meaning in both groups. */
static const char *const SHARED[] = {"metadata", "eventTime", "series", "reportingInstance", "action", "reason",
                                     "related", "type", NULL};

/* core/v1 name <-> events.k8s.io/v1 name */
static const char *const RENAMED[][2] = {
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"reportingComponent", "reportingController"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
};
#define N_RENAMED (sizeof RENAMED / sizeof RENAMED[0])

static bool is_core(const ls_api_resource *r)
{
    return r->group[0] == '\0';
}

bool api_is_event(const ls_api_resource *r)
{
    return strcmp(r->kind, "Event") == 0;
}

static void copy_field(cJSON *to, const cJSON *from, const char *from_key, const char *to_key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, from_key);
    if (v)
        cJSON_AddItemToObject(to, to_key, cJSON_Duplicate(v, 1));
}

/* The Event as the other group serves it. */
static cJSON *convert(const cJSON *ev, bool from_core)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "apiVersion", from_core ? "events.k8s.io/v1" : "v1");
    cJSON_AddStringToObject(out, "kind", "Event");
    for (int i = 0; SHARED[i]; i++)
        copy_field(out, ev, SHARED[i], SHARED[i]);
    for (size_t i = 0; i < N_RENAMED; i++)
        copy_field(out, ev, RENAMED[i][from_core ? 0 : 1], RENAMED[i][from_core ? 1 : 0]);
    if (!from_core) {
        /* core/v1 Event's source and timestamps are values, not pointers:
         * an event written through events.k8s.io shows them empty. */
        if (!cJSON_GetObjectItemCaseSensitive(out, "source"))
            cJSON_AddObjectToObject(out, "source");
        if (!cJSON_GetObjectItemCaseSensitive(out, "firstTimestamp"))
            cJSON_AddNullToObject(out, "firstTimestamp");
        if (!cJSON_GetObjectItemCaseSensitive(out, "lastTimestamp"))
            cJSON_AddNullToObject(out, "lastTimestamp");
    }
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(out, "metadata");
    if (cJSON_IsObject(meta))
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    return out;
}

static const ls_api_resource *twin_resource(const ls_api_resource *r)
{
    return is_core(r) ? ls_api_resource_find("events.k8s.io", "v1", "events")
                      : ls_api_resource_find("", "v1", "events");
}

void api_events_mirror(ls_api *a, const ls_api_resource *r, const cJSON *stored)
{
    const ls_api_resource *twin = twin_resource(r);
    if (twin)
        api_store_put(a, twin, convert(stored, is_core(r)));
}

void api_events_unmirror(ls_api *a, const ls_api_resource *r, const char *ns, const char *name)
{
    const ls_api_resource *twin = twin_resource(r);
    if (twin)
        api_store_drop(a, twin, ns, name);
}
