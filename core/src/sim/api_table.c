/*
 * api_table.c: server-side printing for kubectl (meta.k8s.io/v1 Table), asked
 * for with "Accept: application/json;as=Table;v=v1;g=meta.k8s.io". Pods,
 * nodes and events get kubectl's usual columns; every other kind NAME and AGE.
 */
#include "sim/api_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void column(cJSON *cols, const char *name, const char *type, const char *format, int priority)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "format", format);
    cJSON_AddStringToObject(c, "description", "");
    cJSON_AddNumberToObject(c, "priority", priority);
    cJSON_AddItemToArray(cols, c);
}

/* kubectl's human durations since a time stamp: 45s, 5m30s, 3h, 2d4h, 40d. */
static void since(const char *ts, char *buf, size_t len)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) {
        snprintf(buf, len, "<unknown>");
        return;
    }
    long long s = (long long)(time(NULL) - timegm(&tm));
    if (s < 0)
        s = 0;
    long long m = s / 60, h = s / 3600, d = s / 86400;
    if (s < 120)
        snprintf(buf, len, "%llds", s);
    else if (m < 10 && s % 60)
        snprintf(buf, len, "%lldm%llds", m, s % 60);
    else if (m < 10)
        snprintf(buf, len, "%lldm", m);
    else if (h < 3)
        snprintf(buf, len, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(buf, len, "%lldh%lldm", h, m % 60);
    else if (h < 8)
        snprintf(buf, len, "%lldh", h);
    else if (h < 48)
        snprintf(buf, len, "%lldh", h);
    else if (h < 192 && h % 24)
        snprintf(buf, len, "%lldd%lldh", d, h % 24);
    else
        snprintf(buf, len, "%lldd", d);
}

static void age(const cJSON *obj, char *buf, size_t len)
{
    since(ls_json_text(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "creationTimestamp", NULL), buf, len);
}

/* A field of an Event under its core/v1 name, else its events.k8s.io/v1 one
 * (both groups print the same columns, as the API server's event printer). */
static const cJSON *event_field(const cJSON *ev, const char *core, const char *events)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, core);
    return v && !cJSON_IsNull(v) ? v : cJSON_GetObjectItemCaseSensitive(ev, events);
}

static const char *event_str(const cJSON *ev, const char *core, const char *events)
{
    const cJSON *v = event_field(ev, core, events);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Upstream's printEvent: Last Seen, Type, Reason, Object, Subobject, Source,
 * Message, First Seen, Count, Name. */
static void event_cells(const cJSON *ev, cJSON *cells)
{
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(ev, "series");
    const char *first = event_str(ev, "firstTimestamp", "deprecatedFirstTimestamp");
    const char *last = ls_json_text(series, "lastObservedTime", NULL);
    if (!last)
        last = event_str(ev, "lastTimestamp", "deprecatedLastTimestamp");
    const char *event_time = ls_json_text(ev, "eventTime", NULL);
    char last_seen[32], first_seen[32], object[600], source[600], count[32];
    since(last ? last : event_time, last_seen, sizeof last_seen);
    since(first ? first : event_time, first_seen, sizeof first_seen);
    const cJSON *ref = event_field(ev, "involvedObject", "regarding");
    const char *kind = ls_json_text(ref, "kind", NULL), *name = ls_json_text(ref, "name", NULL);
    snprintf(object, sizeof object, "%s/%s", kind ? kind : "", name ? name : "");
    for (char *p = object; *p && *p != '/'; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    const char *component = ls_json_text(ev, "source", "component");
    const char *controller = event_str(ev, "reportingComponent", "reportingController");
    const char *instance = ls_json_text(ev, "reportingInstance", NULL);
    snprintf(source, sizeof source, "%s%s%s", component ? component : controller ? controller : "",
             instance && *instance ? ", " : "", instance ? instance : "");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(series, "count");
    if (!cJSON_IsNumber(n))
        n = event_field(ev, "count", "deprecatedCount");
    snprintf(count, sizeof count, "%d", cJSON_IsNumber(n) ? n->valueint : 1);
    const char *type = ls_json_text(ev, "type", NULL), *reason = ls_json_text(ev, "reason", NULL);
    const char *path = ls_json_text(ref, "fieldPath", NULL), *message = event_str(ev, "message", "note");
    const char *ev_name = ls_json_text(ev, "metadata", "name");
    const char *values[] = {last_seen, type, reason, object, path, source, message, first_seen, count, ev_name};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        cJSON_AddItemToArray(cells, cJSON_CreateString(values[i] ? values[i] : ""));
}

static void event_columns(cJSON *cols)
{
    static const struct { const char *name; int priority; } names[] = {
        {"Last Seen", 0}, {"Type", 0}, {"Reason", 0}, {"Object", 0}, {"Subobject", 1}, {"Source", 1},
        {"Message", 0}, {"First Seen", 1}, {"Count", 1}, {"Name", 1},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        column(cols, names[i].name, "string", i == 9 ? "name" : "", names[i].priority);
}

static void pod_cells(const cJSON *pod, cJSON *cells, const char *agebuf)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");
    int total = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(spec, "containers")), ready = 0;
    double restarts = 0;   /* summed as doubles and capped: the counts are whatever clients wrote */
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItemCaseSensitive(status, "containerStatuses"))
    {
        ready += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "ready"));
        double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cs, "restartCount"));
        if (n >= 1)   /* false for NaN, as for absent counts */
            restarts += n < INT_MAX ? (double)(int)n : (double)INT_MAX;
    }
    if (restarts > INT_MAX)
        restarts = INT_MAX;
    char rd[32];
    snprintf(rd, sizeof rd, "%d/%d", ready, total);
    const char *phase = ls_json_text(status, "phase", NULL), *node = ls_json_text(spec, "nodeName", NULL);
    cJSON_AddItemToArray(cells, cJSON_CreateString(rd));
    cJSON_AddItemToArray(cells, cJSON_CreateString(phase ? phase : "Pending"));
    cJSON_AddItemToArray(cells, cJSON_CreateNumber(restarts));
    cJSON_AddItemToArray(cells, cJSON_CreateString(agebuf));
    cJSON_AddItemToArray(cells, cJSON_CreateString(node ? node : "<none>"));
}

static void node_cells(const cJSON *node, cJSON *cells, const char *agebuf)
{
    const char *ready = "Unknown";
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"),
                                                           "conditions"))
    {
        const char *t = ls_json_text(c, "type", NULL), *s = ls_json_text(c, "status", NULL);
        if (t && s && strcmp(t, "Ready") == 0)
            ready = strcmp(s, "True") == 0 ? "Ready" : "NotReady";
    }
    char st[64], roles[256] = "";
    bool cordoned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"),
                                                                  "unschedulable"));
    snprintf(st, sizeof st, "%s%s", ready, cordoned ? ",SchedulingDisabled" : "");
    const cJSON *l;
    static const char prefix[] = "node-role.kubernetes.io/";
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"),
                                                           "labels"))
    {
        if (l->string && strncmp(l->string, prefix, sizeof prefix - 1) == 0 && strlen(roles) + strlen(l->string) < sizeof roles - 2)
            snprintf(roles + strlen(roles), sizeof roles - strlen(roles), "%s%s", *roles ? "," : "",
                     l->string + sizeof prefix - 1);
    }
    const char *version = ls_json_text(cJSON_GetObjectItemCaseSensitive(node, "status"), "nodeInfo", "kubeletVersion");
    cJSON_AddItemToArray(cells, cJSON_CreateString(st));
    cJSON_AddItemToArray(cells, cJSON_CreateString(*roles ? roles : "<none>"));
    cJSON_AddItemToArray(cells, cJSON_CreateString(agebuf));
    cJSON_AddItemToArray(cells, cJSON_CreateString(version ? version : ""));
}

static cJSON *row_object(const cJSON *obj, const char *include)
{
    if (include && strcmp(include, "None") == 0)
        return NULL;
    if (include && strcmp(include, "Object") == 0)
        return cJSON_Duplicate(obj, 1);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "kind", "PartialObjectMetadata");
    cJSON_AddStringToObject(m, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddItemToObject(m, "metadata", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), 1));
    return m;
}

cJSON *api_table(const ls_api_resource *r, const cJSON *list, const char *include_object)
{
    bool pods = strcmp(r->kind, "Pod") == 0, nodes = strcmp(r->kind, "Node") == 0, events = api_is_event(r);
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddItemToObject(t, "metadata", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(list, "metadata"), 1));
    cJSON *cols = cJSON_AddArrayToObject(t, "columnDefinitions");
    if (events)
        event_columns(cols);
    else
        column(cols, "Name", "string", "name", 0);
    if (pods) {
        column(cols, "Ready", "string", "", 0);
        column(cols, "Status", "string", "", 0);
        column(cols, "Restarts", "integer", "", 0);
        column(cols, "Age", "string", "", 0);
        column(cols, "Node", "string", "", 0);
    } else if (nodes) {
        column(cols, "Status", "string", "", 0);
        column(cols, "Roles", "string", "", 0);
        column(cols, "Age", "string", "", 0);
        column(cols, "Version", "string", "", 0);
    } else if (!events) {
        column(cols, "Age", "string", "", 0);
    }
    cJSON *rows = cJSON_AddArrayToObject(t, "rows");
    const cJSON *obj;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    cJSON *single = NULL;
    if (!cJSON_IsArray(items)) {   /* a single object (GET by name) */
        single = cJSON_CreateArray();
        cJSON_AddItemReferenceToArray(single, (cJSON *)list);
        items = single;
        cJSON_ReplaceItemInObjectCaseSensitive(t, "metadata", cJSON_CreateObject());
    }
    cJSON_ArrayForEach(obj, items)
    {
        char agebuf[32];
        age(obj, agebuf, sizeof agebuf);
        cJSON *row = cJSON_CreateObject(), *cells = cJSON_AddArrayToObject(row, "cells");
        const char *name = ls_json_text(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name", NULL);
        if (!events)
            cJSON_AddItemToArray(cells, cJSON_CreateString(name ? name : ""));
        if (events)
            event_cells(obj, cells);
        else if (pods)
            pod_cells(obj, cells, agebuf);
        else if (nodes)
            node_cells(obj, cells, agebuf);
        else
            cJSON_AddItemToArray(cells, cJSON_CreateString(agebuf));
        cJSON *ro = row_object(obj, include_object);
        if (ro)
            cJSON_AddItemToObject(row, "object", ro);
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_Delete(single);
    return t;
}
