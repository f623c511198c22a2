/*
 * test_apiserver.c: the served cluster's store driven directly (CRUD,
 * admission, selectors, pagination, watch history and 410, strategic merge
 * patch, binding conflicts and the record).
 */
#include "sim/apiserver.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const ls_api_resource *pods_r(void)
{
    return ls_api_resource_find("", "v1", "pods");
}

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    if (!o)
        fprintf(stderr, "bad test JSON: %s\n", json);
    return o;
}

/* A pod body: the test's JSON with one container when it gives none
 * (spec.containers is required). */
static cJSON *pod_body(const char *json)
{
    cJSON *o = parse(json);
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
    if (!spec)
        spec = cJSON_AddObjectToObject(o, "spec");
    if (!cJSON_GetObjectItemCaseSensitive(spec, "containers"))
        cJSON_AddItemToObject(spec, "containers", parse("[{\"name\":\"c\",\"image\":\"app\"}]"));
    return o;
}

static int create(ls_api *a, const ls_api_resource *r, const char *ns, const char *json)
{
    cJSON *out = NULL;
    int code = ls_api_create(a, r, ns, strcmp(r->kind, "Pod") == 0 ? pod_body(json) : parse(json), &out);
    cJSON_Delete(out);
    return code;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* "a,b,c": the names of a list's items. */
static void names(const cJSON *list, char *buf, size_t len)
{
    buf[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", str_at(it, "metadata", "name"));
    }
}

static void test_create_get_errors(void)
{
    ls_api *a = ls_api_new(0, 1);
    cJSON *out = NULL;
    CHECK_INT(ls_api_create(a, pods_r(), "default", pod_body("{\"metadata\":{\"generateName\":\"web-\"}}"), &out),
              201);
    const char *name = str_at(out, "metadata", "name");
    CHECK(name && strncmp(name, "web-", 4) == 0 && strlen(name) == 9);
    CHECK(str_at(out, "metadata", "uid") && strlen(str_at(out, "metadata", "uid")) == 36);
    CHECK(str_at(out, "metadata", "creationTimestamp"));
    CHECK_STR(str_at(out, "spec", "schedulerName"), "default-scheduler");
    CHECK_STR(str_at(out, "spec", "preemptionPolicy"), "PreemptLowerPriority");
    CHECK_STR(str_at(out, "status", "phase"), "Pending");
    CHECK_STR(str_at(out, "kind", NULL), "Pod");
    cJSON_Delete(out);

    CHECK_INT(create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"p\"}}"), 201);
    /* No namespace on the path: the body's. */
    CHECK_INT(ls_api_create(a, pods_r(), NULL, pod_body("{\"metadata\":{\"name\":\"q\",\"namespace\":\"kube-system\"}}"),
                            &out),
              201);
    CHECK_STR(str_at(out, "metadata", "namespace"), "kube-system");
    cJSON_Delete(out);
    CHECK_INT(ls_api_create(a, pods_r(), "default", pod_body("{\"metadata\":{\"name\":\"p\"}}"), &out), 409);
    CHECK_STR(str_at(out, "reason", NULL), "AlreadyExists");
    CHECK_STR(str_at(out, "message", NULL), "pods \"p\" already exists");
    cJSON_Delete(out);
    CHECK_INT(ls_api_get(a, pods_r(), "default", "web-0", &out), 404);
    CHECK_STR(str_at(out, "kind", NULL), "Status");
    CHECK_STR(str_at(out, "status", NULL), "Failure");
    CHECK_STR(str_at(out, "message", NULL), "pods \"web-0\" not found");
    cJSON_Delete(out);
    CHECK_INT(ls_api_create(a, pods_r(), "nowhere", pod_body("{\"metadata\":{\"name\":\"p\"}}"), &out), 404);
    CHECK_STR(str_at(out, "message", NULL), "namespaces \"nowhere\" not found");
    cJSON_Delete(out);
    CHECK_INT(ls_api_create(a, pods_r(), "default", pod_body("{\"kind\":\"Node\",\"metadata\":{\"name\":\"q\"}}"), &out),
              400);
    cJSON_Delete(out);
    const ls_api_resource *leases = ls_api_resource_find("coordination.k8s.io", "v1", "leases");
    CHECK_INT(ls_api_get(a, leases, "kube-system", "kube-scheduler", &out), 404);
    CHECK_STR(str_at(out, "message", NULL), "leases.coordination.k8s.io \"kube-scheduler\" not found");
    cJSON_Delete(out);
    ls_api_free(a);
}

static void test_priority_admission(void)
{
    ls_api *a = ls_api_new(0, 1);
    const ls_api_resource *pc = ls_api_resource_find("scheduling.k8s.io", "v1", "priorityclasses");
    CHECK_INT(create(a, pc, NULL, "{\"metadata\":{\"name\":\"low\"},\"value\":10,\"globalDefault\":true}"), 201);
    CHECK_INT(create(a, pc, NULL, "{\"metadata\":{\"name\":\"high\"},\"value\":1000,\"preemptionPolicy\":\"Never\"}"),
              201);
    cJSON *out = NULL;
    ls_api_create(a, pods_r(), "default", pod_body("{\"metadata\":{\"name\":\"d\"}}"), &out);
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "priority")->valuedouble, 10);
    CHECK_STR(str_at(out, "spec", "priorityClassName"), "low");
    cJSON_Delete(out);
    ls_api_create(a, pods_r(), "default",
                  pod_body("{\"metadata\":{\"name\":\"h\"},\"spec\":{\"priorityClassName\":\"high\"}}"), &out);
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "priority")->valuedouble, 1000);
    CHECK_STR(str_at(out, "spec", "preemptionPolicy"), "Never");
    cJSON_Delete(out);
    CHECK_INT(ls_api_create(a, pods_r(), "default",
                            pod_body("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"nope\"}}"), &out),
              403);
    CHECK_STR(str_at(out, "message", NULL), "pods \"x\" is forbidden: no PriorityClass with name nope was found");
    cJSON_Delete(out);
    ls_api_free(a);
}

static void add_labelled_pods(ls_api *a)
{
    static const char *const pods[] = {
        "{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\",\"tier\":\"front\"}}}",
        "{\"metadata\":{\"name\":\"b\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"n1\"}}",
        "{\"metadata\":{\"name\":\"c\",\"labels\":{\"app\":\"db\",\"tier\":\"back\"}}}",
        "{\"metadata\":{\"name\":\"d\"}}",
        "{\"metadata\":{\"name\":\"e\",\"labels\":{\"app\":\"cache\"}},\"status\":{\"phase\":\"Succeeded\"}}",
    };
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++)
        create(a, pods_r(), "default", pods[i]);
}

static void check_list(ls_api *a, const char *labels, const char *fields, const char *expected)
{
    ls_api_list_opts o = {.label_selector = labels, .field_selector = fields};
    cJSON *out = NULL;
    char buf[256];
    CHECK_INT(ls_api_list(a, pods_r(), "default", &o, &out), 200);
    names(out, buf, sizeof buf);
    CHECK_STR(buf, expected);
    cJSON_Delete(out);
}

static void test_selectors(void)
{
    ls_api *a = ls_api_new(0, 1);
    add_labelled_pods(a);
    check_list(a, "app=web", NULL, "a,b");
    check_list(a, "app==web,tier", NULL, "a");
    check_list(a, "app!=web", NULL, "c,d,e");
    check_list(a, "app in (db, cache)", NULL, "c,e");
    check_list(a, "app notin (web),tier", NULL, "c");
    check_list(a, "!tier", NULL, "b,d,e");
    check_list(a, NULL, "spec.nodeName=", "a,c,d,e");
    check_list(a, NULL, "spec.nodeName!=", "b");
    check_list(a, NULL, "spec.nodeName==n1", "b");
    check_list(a, "app", "status.phase!=Succeeded,status.phase!=Failed,metadata.name!=a", "b,c");
    ls_api_list_opts bad = {.field_selector = "spec.nope=x"};
    cJSON *out = NULL;
    CHECK_INT(ls_api_list(a, pods_r(), NULL, &bad, &out), 400);
    CHECK_STR(str_at(out, "message", NULL), "field label not supported: spec.nope");
    cJSON_Delete(out);
    bad = (ls_api_list_opts){.label_selector = "app in (x"};
    CHECK_INT(ls_api_list(a, pods_r(), NULL, &bad, &out), 400);
    cJSON_Delete(out);
    ls_api_free(a);
}

static void test_pagination(void)
{
    ls_api *a = ls_api_new(8, 1);
    add_labelled_pods(a);
    ls_api_list_opts o = {.limit = 2};
    cJSON *out = NULL;
    char buf[64], all[256] = "";
    const char *first_rv = NULL;
    char tok[512] = "";
    for (int page = 0; page < 3; page++) {
        o.continue_token = *tok ? tok : NULL;
        CHECK_INT(ls_api_list(a, pods_r(), NULL, &o, &out), 200);
        names(out, buf, sizeof buf);
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s[%s]", page ? " " : "", buf);
        const char *c = str_at(cJSON_GetObjectItem(out, "metadata"), "continue", NULL);
        snprintf(tok, sizeof tok, "%s", c ? c : "");
        if (!first_rv)
            first_rv = strdup(str_at(out, "metadata", "resourceVersion"));
        else
            CHECK_STR(str_at(out, "metadata", "resourceVersion"), first_rv);
        cJSON_Delete(out);
    }
    CHECK_STR(all, "[a,b] [c,d] [e]");
    CHECK_STR(tok, "");
    free((void *)first_rv);

    /* A token whose resourceVersion has left the 8-event history: 410. */
    o = (ls_api_list_opts){.limit = 2};
    ls_api_list(a, pods_r(), NULL, &o, &out);
    snprintf(tok, sizeof tok, "%s", str_at(cJSON_GetObjectItem(out, "metadata"), "continue", NULL));
    cJSON_Delete(out);
    for (int i = 0; i < 9; i++) {
        char json[64];
        snprintf(json, sizeof json, "{\"metadata\":{\"name\":\"z%d\"}}", i);
        create(a, pods_r(), "default", json);
    }
    o.continue_token = tok;
    CHECK_INT(ls_api_list(a, pods_r(), NULL, &o, &out), 410);
    CHECK_STR(str_at(out, "reason", NULL), "Expired");
    cJSON_Delete(out);
    o.continue_token = "garbage!";
    CHECK_INT(ls_api_list(a, pods_r(), NULL, &o, &out), 410);
    cJSON_Delete(out);
    ls_api_free(a);
}

/* The events of one pull, as "TYPE name" lines. */
static void pull(ls_api_watch *w, char *buf, size_t len, bool *more)
{
    ls_buf b = {0};
    *more = ls_api_watch_next(w, &b, NULL);
    buf[0] = '\0';
    for (char *line = b.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = '\0';
        cJSON *ev = cJSON_Parse(line);
        const cJSON *obj = cJSON_GetObjectItem(ev, "object");
        const char *name = str_at(obj, "metadata", "name");
        if (!name)
            name = str_at(obj, "reason", NULL);
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s %s", buf[0] ? "\n" : "", str_at(ev, "type", NULL),
                 name ? name : str_at(obj, "metadata", "resourceVersion"));
        cJSON_Delete(ev);
    }
    ls_buf_free(&b);
}

static void test_watch(void)
{
    ls_api *a = ls_api_new(8, 1);
    add_labelled_pods(a);
    char buf[1024];
    bool more;
    int code;
    cJSON *out = NULL;

    /* From "0": the current state first, then changes. */
    ls_api_list_opts o = {.resource_version = "0", .label_selector = "app=web", .timeout_seconds = 5};
    ls_api_watch *w = ls_api_watch_start(a, pods_r(), "default", &o, &code, &out);
    pull(w, buf, sizeof buf, &more);
    CHECK_STR(buf, "ADDED a\nADDED b");
    CHECK(more);
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"f\",\"labels\":{\"app\":\"web\"}}}");
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"g\"}}");
    cJSON *relabel = parse("{\"metadata\":{\"labels\":{\"app\":\"api\"}}}");
    ls_api_patch(a, pods_r(), "default", "a", "application/merge-patch+json", relabel, false, &out);
    cJSON_Delete(relabel);
    cJSON_Delete(out);
    pull(w, buf, sizeof buf, &more);
    /* a leaves the selection: DELETED; f is new; g never matched. */
    CHECK_STR(buf, "ADDED f\nDELETED a");
    ls_api_delete(a, pods_r(), "default", "f", NULL, &out);
    cJSON_Delete(out);
    pull(w, buf, sizeof buf, &more);
    CHECK_STR(buf, "DELETED f");
    ls_api_watch_free(w);

    /* A change between the start of a watch from "0" and its first pull is
     * in the snapshot, and not sent again. */
    o = (ls_api_list_opts){.resource_version = "0", .field_selector = "metadata.name=late"};
    w = ls_api_watch_start(a, pods_r(), NULL, &o, &code, &out);
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"late\"}}");
    pull(w, buf, sizeof buf, &more);
    CHECK_STR(buf, "ADDED late");
    ls_api_watch_free(w);

    /* watch-list: the current state, then a BOOKMARK marking its end. */
    o = (ls_api_list_opts){.send_initial_events = true, .bookmarks = true, .label_selector = "app=db"};
    w = ls_api_watch_start(a, pods_r(), NULL, &o, &code, &out);
    pull(w, buf, sizeof buf, &more);
    CHECK_CONTAINS(buf, "ADDED c\nBOOKMARK ");
    ls_api_watch_free(w);

    /* From a resourceVersion that fell out of the 8-event ring: ERROR 410 and the end. */
    o = (ls_api_list_opts){.resource_version = "1"};
    w = ls_api_watch_start(a, pods_r(), NULL, &o, &code, &out);
    pull(w, buf, sizeof buf, &more);
    CHECK_STR(buf, "ERROR Expired");
    CHECK(!more);
    ls_api_watch_free(w);

    /* Bookmarks when quiet, then the timeout ends the stream. */
    cJSON *l = NULL;
    ls_api_list_opts lo = {0};
    ls_api_list(a, pods_r(), NULL, &lo, &l);
    char rv[32];
    snprintf(rv, sizeof rv, "%s", str_at(cJSON_GetObjectItem(l, "metadata"), "resourceVersion", NULL));
    cJSON_Delete(l);
    o = (ls_api_list_opts){.resource_version = rv, .bookmarks = true, .timeout_seconds = 2};
    w = ls_api_watch_start(a, pods_r(), NULL, &o, &code, &out);
    pull(w, buf, sizeof buf, &more);
    char want[64];
    snprintf(want, sizeof want, "BOOKMARK %s", rv);
    CHECK_STR(buf, want);
    CHECK(more);
    pull(w, buf, sizeof buf, &more);   /* a second bookmark at ~2 s or the end */
    if (more)
        pull(w, buf, sizeof buf, &more);
    CHECK(!more);
    ls_api_watch_free(w);

    /* watch-drop: the stream ends after N events. */
    ls_api_faults f = {.watch_drop = 2};
    ls_api_set_faults(a, &f);
    o = (ls_api_list_opts){.resource_version = "0"};
    w = ls_api_watch_start(a, pods_r(), NULL, &o, &code, &out);
    pull(w, buf, sizeof buf, &more);
    CHECK(more);
    pull(w, buf, sizeof buf, &more);
    CHECK(!more);
    ls_api_watch_free(w);
    ls_api_free(a);
}

static void test_patch_update_delete(void)
{
    ls_api *a = ls_api_new(0, 1);
    create(a, pods_r(), "default",
           "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\"},"
           "{\"name\":\"b\",\"image\":\"y:1\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
           "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}");
    cJSON *out = NULL, *patch = parse(
        "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Ready\"},{\"type\":\"PodScheduled\"}],"
        "\"conditions\":[{\"type\":\"PodScheduled\",\"message\":\"0/3 nodes are available\"},"
        "{\"type\":\"Initialized\",\"status\":\"True\"}],\"nominatedNodeName\":\"n2\"}}");
    CHECK_INT(ls_api_patch(a, pods_r(), "default", "p", "application/strategic-merge-patch+json", patch, true, &out),
              200);
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "status"), "conditions"));
    CHECK_STR(text, "[{\"type\":\"Ready\",\"status\":\"False\"},{\"type\":\"PodScheduled\",\"status\":\"False\","
                    "\"reason\":\"Unschedulable\",\"message\":\"0/3 nodes are available\"},{\"type\":\"Initialized\","
                    "\"status\":\"True\"}]");
    free(text);
    CHECK_STR(str_at(out, "status", "nominatedNodeName"), "n2");
    cJSON_Delete(out);
    cJSON_Delete(patch);

    /* containers by name, $patch: delete; the status subresource ignores spec. */
    patch = parse("{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"y:2\"},"
                  "{\"name\":\"a\",\"$patch\":\"delete\"}]}}");
    ls_api_patch(a, pods_r(), "default", "p", "application/strategic-merge-patch+json", patch, false, &out);
    text = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "containers"));
    CHECK_STR(text, "[{\"name\":\"b\",\"image\":\"y:2\"}]");
    free(text);
    const char *rv_before = str_at(out, "metadata", "resourceVersion");
    char rv[32];
    snprintf(rv, sizeof rv, "%s", rv_before);
    cJSON_Delete(out);
    /* A merge patch replaces lists. */
    cJSON_Delete(patch);
    patch = parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    ls_api_patch(a, pods_r(), "default", "p", "application/merge-patch+json", patch, true, &out);
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "status"), "conditions")), 1);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    /* The same patch again changes nothing: no new resourceVersion. */
    patch = parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    ls_api_patch(a, pods_r(), "default", "p", "application/merge-patch+json", patch, true, &out);
    char rv2[32];
    snprintf(rv2, sizeof rv2, "%s", str_at(out, "metadata", "resourceVersion"));
    cJSON_Delete(out);
    ls_api_patch(a, pods_r(), "default", "p", "application/merge-patch+json", patch, true, &out);
    CHECK_STR(str_at(out, "metadata", "resourceVersion"), rv2);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    CHECK_INT(ls_api_patch(a, pods_r(), "default", "p", "application/json-patch+json", NULL, false, &out), 415);
    cJSON_Delete(out);

    /* PUT with a stale resourceVersion: 409 with the upstream message. */
    cJSON *stale = parse("{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"1\"}}");
    CHECK_INT(ls_api_update(a, pods_r(), "default", "p", stale, false, &out), 409);
    CHECK_STR(str_at(out, "message", NULL), "Operation cannot be fulfilled on pods \"p\": the object has been "
                                            "modified; please apply your changes to the latest version and try again");
    cJSON_Delete(out);
    char json[300];
    snprintf(json, sizeof json,
             "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"%s\",\"labels\":{\"x\":\"y\"}},"
             "\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"y:2\"}]}}", rv2);
    CHECK_INT(ls_api_update(a, pods_r(), "default", "p", parse(json), false, &out), 200);
    CHECK_STR(str_at(cJSON_GetObjectItem(out, "metadata"), "labels", "x"), "y");
    CHECK(cJSON_GetObjectItem(out, "status") != NULL);   /* kept: status goes through its subresource */
    cJSON_Delete(out);

    /* DELETE with a wrong uid precondition, then for real. */
    CHECK_INT(ls_api_delete(a, pods_r(), "default", "p", "wrong-uid", &out), 409);
    CHECK_CONTAINS(str_at(out, "message", NULL), "Precondition failed: UID in precondition: wrong-uid");
    cJSON_Delete(out);
    CHECK_INT(ls_api_delete(a, pods_r(), "default", "p", NULL, &out), 200);
    cJSON_Delete(out);
    CHECK_INT(ls_api_delete(a, pods_r(), "default", "p", NULL, &out), 404);
    cJSON_Delete(out);
    ls_api_free(a);
}

static void test_namespace_delete(void)
{
    ls_api *a = ls_api_new(0, 1);
    const ls_api_resource *nsr = ls_api_resource_find("", "v1", "namespaces");
    CHECK_INT(create(a, nsr, NULL, "{\"metadata\":{\"name\":\"team\"}}"), 201);
    CHECK_INT(create(a, pods_r(), "team", "{\"metadata\":{\"name\":\"p1\"}}"), 201);
    CHECK_INT(create(a, pods_r(), "team", "{\"metadata\":{\"name\":\"p2\"}}"), 201);
    CHECK_INT(create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"keep\"}}"), 201);
    cJSON *out = NULL;
    CHECK_INT(ls_api_delete(a, nsr, NULL, "team", NULL, &out), 200);
    CHECK_STR(str_at(out, "kind", NULL), "Namespace");
    cJSON_Delete(out);
    ls_api_list_opts o = {0};
    char buf[128];
    ls_api_list(a, pods_r(), NULL, &o, &out);
    names(out, buf, sizeof buf);
    CHECK_STR(buf, "keep");
    cJSON_Delete(out);
    CHECK(ls_api_record_at(a, 0)->deleted && ls_api_record_at(a, 1)->deleted && !ls_api_record_at(a, 2)->deleted);
    CHECK_INT(create(a, pods_r(), "team", "{\"metadata\":{\"name\":\"p3\"}}"), 404);
    ls_api_free(a);
}

static int bind_pod(ls_api *a, const char *pod, const char *node)
{
    char json[256];
    snprintf(json, sizeof json, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
             "\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}", pod, node);
    cJSON *b = parse(json), *out = NULL;
    int code = ls_api_bind(a, "default", pod, b, &out);
    cJSON_Delete(b);
    cJSON_Delete(out);
    return code;
}

static void test_binding(void)
{
    ls_api *a = ls_api_new(0, 1);
    create(a, ls_api_resource_find("", "v1", "nodes"), NULL, "{\"metadata\":{\"name\":\"n1\"}}");
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"web-0\"}}");
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"web-1\"}}");
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"run\"},\"spec\":{\"nodeName\":\"n1\"}}");
    CHECK_INT(bind_pod(a, "web-0", "n1"), 201);
    cJSON *out = NULL;
    cJSON *b = parse("{\"target\":{\"name\":\"n2\"}}");
    CHECK_INT(ls_api_bind(a, "default", "web-0", b, &out), 409);
    CHECK_STR(str_at(out, "message", NULL),
              "Operation cannot be fulfilled on pods/binding \"web-0\": pod web-0 is already assigned to node \"n1\"");
    CHECK_STR(str_at(out, "reason", NULL), "Conflict");
    cJSON_Delete(out);
    CHECK_INT(ls_api_bind(a, "default", "ghost", b, &out), 404);
    CHECK_STR(str_at(out, "message", NULL), "pods \"ghost\" not found");
    cJSON_Delete(out);
    cJSON_Delete(b);
    ls_api_get(a, pods_r(), "default", "web-0", &out);
    CHECK_STR(str_at(out, "spec", "nodeName"), "n1");
    cJSON_Delete(out);

    CHECK_INT(ls_api_num_records(a), 3);
    const ls_api_record *r0 = ls_api_record_at(a, 0), *r2 = ls_api_record_at(a, 2);
    CHECK_INT(r0->binds, 1);
    CHECK_INT(r0->refused, 1);
    CHECK_STR(r0->node, "n1");
    CHECK_STR(r0->refused_node, "n2");
    CHECK(r2->running);
    FILE *devnull = fopen("/dev/null", "w");
    CHECK(!ls_api_print_record(a, devnull));   /* the refused double binding */
    ls_api_free(a);

    /* A clean record passes; a binding to a missing node does not. */
    a = ls_api_new(0, 1);
    create(a, ls_api_resource_find("", "v1", "nodes"), NULL, "{\"metadata\":{\"name\":\"n1\"}}");
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"web-0\"}}");
    CHECK(ls_api_print_record(a, devnull));
    CHECK_INT(bind_pod(a, "web-0", "n1"), 201);
    CHECK(ls_api_print_record(a, devnull));
    create(a, pods_r(), "default", "{\"metadata\":{\"name\":\"web-1\"}}");
    CHECK_INT(bind_pod(a, "web-1", "n9"), 201);
    CHECK(ls_api_record_at(a, 1)->missing_node);
    CHECK(!ls_api_print_record(a, devnull));
    fclose(devnull);
    ls_api_free(a);
}

static void test_load_file(void)
{
    ls_api *a = ls_api_new(0, 1);
    ls_error err;
    CHECK(ls_api_load_file(a, LS_SPEC_DIR "/../examples/demo-cluster.yaml", &err));
    cJSON *out = NULL;
    ls_api_list_opts o = {0};
    ls_api_list(a, ls_api_resource_find("", "v1", "nodes"), NULL, &o, &out);
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(out, "items")), 6);
    cJSON_Delete(out);
    CHECK_INT(ls_api_get(a, pods_r(), "shop", "checkout", &out), 200);
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "priority")->valuedouble, 1000);
    cJSON_Delete(out);
    ls_api_free(a);
}

/* Upstream's pod validation on create and update: 422 with the field. */
static int create_msg(ls_api *a, const char *json, char *msg, size_t len, char *field, size_t flen)
{
    cJSON *out = NULL;
    int code = ls_api_create(a, pods_r(), "default", parse(json), &out);
    snprintf(msg, len, "%s", str_at(out, "message", NULL) ? str_at(out, "message", NULL) : "");
    const cJSON *causes = cJSON_GetObjectItem(cJSON_GetObjectItem(out, "details"), "causes");
    const char *f = str_at(cJSON_GetArrayItem(causes, 0), "field", NULL);
    snprintf(field, flen, "%s", f ? f : "");
    cJSON_Delete(out);
    return code;
}

#define POD_WITH(name, res) \
    "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"app\"," \
    "\"resources\":" res "}]}}"

static void test_pod_validation(void)
{
    ls_api *a = ls_api_new(0, 1);
    char msg[1200], field[200];
    CHECK_INT(create_msg(a, "{\"metadata\":{\"name\":\"nc\"},\"spec\":{}}", msg, sizeof msg, field, sizeof field), 422);
    CHECK_STR(msg, "Pod \"nc\" is invalid: spec.containers: Required value");
    CHECK_STR(field, "spec.containers");
    CHECK_INT(create_msg(a, POD_WITH("neg", "{\"requests\":{\"cpu\":\"-1\"}}"), msg, sizeof msg, field, sizeof field),
              422);
    CHECK_STR(msg, "Pod \"neg\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": "
                   "must be greater than or equal to 0");
    CHECK_STR(field, "spec.containers[0].resources.requests[cpu]");
    CHECK_INT(create_msg(a, POD_WITH("big", "{\"requests\":{\"cpu\":\"1e400\"}}"), msg, sizeof msg, field, sizeof field),
              422);
    CHECK_STR(field, "spec.containers[0].resources.requests[cpu]");
    CHECK_INT(create_msg(a, POD_WITH("ei", "{\"limits\":{\"memory\":\"9999999999999Ei\"}}"), msg, sizeof msg, field,
                         sizeof field),
              422);
    CHECK_STR(field, "spec.containers[0].resources.limits[memory]");
    CHECK_INT(create_msg(a, POD_WITH("junk", "{\"requests\":{\"cpu\":\"lots\"}}"), msg, sizeof msg, field, sizeof field),
              400);
    CHECK_STR(msg, "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression "
                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    CHECK_INT(create_msg(a, POD_WITH("over", "{\"requests\":{\"cpu\":\"2\"},\"limits\":{\"cpu\":\"1\"}}"), msg,
                         sizeof msg, field, sizeof field),
              422);
    CHECK_STR(msg, "Pod \"over\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be "
                   "less than or equal to cpu limit of 1");
    CHECK_INT(create_msg(a, "{\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":{\"containers\":[{\"name\":\"\"}]}}", msg,
                         sizeof msg, field, sizeof field),
              422);
    CHECK_STR(field, "metadata.name");
    CHECK_CONTAINS(msg, "Pod \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC "
                        "1123 subdomain must consist of");
    CHECK_CONTAINS(msg, ", spec.containers[0].name: Required value, spec.containers[0].image: Required value]");
    /* nothing was stored; a valid pod is; an update that breaks it is refused */
    cJSON *out = NULL;
    CHECK_INT(ls_api_get(a, pods_r(), "default", "neg", &out), 404);
    cJSON_Delete(out);
    CHECK_INT(create(a, pods_r(), "default", POD_WITH("ok", "{\"requests\":{\"cpu\":\"500m\"}}")), 201);
    CHECK_INT(ls_api_update(a, pods_r(), "default", "ok", parse(POD_WITH("ok", "{\"requests\":{\"cpu\":\"-2\"}}")),
                            false, &out),
              422);
    CHECK_STR(str_at(out, "message", NULL), "Pod \"ok\" is invalid: spec.containers[0].resources.requests[cpu]: "
                                            "Invalid value: \"-2\": must be greater than or equal to 0");
    cJSON_Delete(out);
    ls_api_free(a);
}

int main(void)
{
    test_create_get_errors();
    test_priority_admission();
    test_selectors();
    test_pagination();
    test_watch();
    test_patch_update_delete();
    test_namespace_delete();
    test_binding();
    test_load_file();
    test_pod_validation();
    ls_intern_reset();
    TEST_MAIN_END();
}
