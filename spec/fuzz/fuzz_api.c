/*
 * fuzz_api.c: the served Kubernetes API (sim/apiserver.c and the store in
 * sim/api_*.c) through its request handler, with requests built without a
 * connection (server/http.h: conn_ NULL, query parsed by ls_http_query).
 *
 * Every input gets a fresh store (ls_api_new, a 16-event history so that old
 * resourceVersions expire) holding the objects of SEED_OBJECTS below, and a
 * server with the bearer token "fuzz-token". The input may start with lines
 * "fault: SPEC" (--fault values, ls_api_parse_fault; latency is ignored),
 * then holds one or more requests separated by a line "===". A request is:
 *
 *   byte 0        the method: 'G' GET, 'P' POST, 'U' PUT, 'A' PATCH,
 *                 'D' DELETE, any other byte picks one by its value (% 5);
 *                 with the high bit set the request carries no token (or a
 *                 wrong one when bit 6 is also set), so auth is fuzzed too
 *   rest of line  the path, e.g. "/api/v1/namespaces/default/pods"
 *   line 2        the raw query string, e.g. "labelSelector=app%3Dweb&limit=1"
 *   line 3        Content-Type (empty: no header)
 *   line 4        Accept (empty: no header)
 *   the rest      the body
 *
 * Checks: no crash, leak or sanitizer report; every answer has a status
 * (100..599) and a content type, and a JSON answer's body parses; an
 * object just created can be read back at its canonical path; a list holds
 * at most limit items, all of the path's namespace. A watch is
 * pulled once (a watchdog thread stops the store's watches if that pull waits
 * more than a few milliseconds) and then released without further pulls.
 * With FUZZ_API_VERBOSE set in the environment, each request and the start of
 * its answer are printed (to see what a corpus file does).
 */
#include "fuzz_common.h"

#include <pthread.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "sim/apiserver.h"

#define TOKEN "fuzz-token"
#define MAX_REQUESTS 8
#define WATCHDOG_MS 5
#define HISTORY 16        /* the seed objects make 12 events: a few writes push the first out */

static const char SEED_OBJECTS[] =
    "["
    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":\"high\"},"
    "\"value\":1000},"
    "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-a\",\"labels\":{\"team\":\"a\"}}},"
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\",\"labels\":{\"zone\":\"z1\","
    "\"kubernetes.io/hostname\":\"node-1\"}},\"spec\":{},\"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\","
    "\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-2\",\"labels\":{\"zone\":\"z2\"}},"
    "\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":\"110\"}}},"
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\",\"namespace\":\"default\","
    "\"labels\":{\"app\":\"web\",\"tier\":\"front\"}},\"spec\":{\"schedulerName\":\"default-scheduler\","
    "\"priorityClassName\":\"high\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\","
    "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]}},"
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"default\","
    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\","
    "\"image\":\"nginx\"}]},\"status\":{\"phase\":\"Running\"}},"
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"db-0\",\"namespace\":\"team-a\","
    "\"labels\":{\"app\":\"db\"}},\"spec\":{\"containers\":[{\"name\":\"db\",\"image\":\"postgres\"}],"
    "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]}},"
    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":\"kube-scheduler\","
    "\"namespace\":\"kube-system\"},\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15}}"
    "]";

static cJSON *seed_objects;
static bool verbose;   /* FUZZ_API_VERBOSE set: print each request and the start of its answer */

/* ---- the watchdog: ends a watch pull that waits */

static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cv = PTHREAD_COND_INITIALIZER;
static ls_api *wd_api;          /* set while a pull is under way */
static uint64_t wd_gen;

static void *watchdog(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd_mu);
    for (;;) {
        while (!wd_api)
            pthread_cond_wait(&wd_cv, &wd_mu);
        uint64_t gen = wd_gen;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += WATCHDOG_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (wd_api && wd_gen == gen && rc == 0)
            rc = pthread_cond_timedwait(&wd_cv, &wd_mu, &ts);
        if (wd_api && wd_gen == gen) {
            /* Still in the same pull: it waits for events. The puller takes
             * wd_mu only after the pull, so holding it here cannot deadlock. */
            ls_api_stop_watches(wd_api);
            while (wd_api && wd_gen == gen)
                pthread_cond_wait(&wd_cv, &wd_mu);
        }
    }
    return NULL;
}

static void pull_once(ls_api *a, ls_http_response *rs)
{
    pthread_mutex_lock(&wd_mu);
    wd_api = a;
    wd_gen++;
    pthread_cond_broadcast(&wd_cv);
    pthread_mutex_unlock(&wd_mu);
    ls_buf out = {0};
    static const volatile bool not_stopping = false;
    rs->producer(rs->producer_ud, &out, &not_stopping);
    pthread_mutex_lock(&wd_mu);
    wd_api = NULL;
    pthread_cond_broadcast(&wd_cv);
    pthread_mutex_unlock(&wd_mu);
    /* Newline-delimited watch events, each a JSON object. */
    for (char *line = out.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        FUZZ_CHECK(nl, "a watch event without its newline: %s", line);
        cJSON *ev = cJSON_ParseWithLength(line, (size_t)(nl - line));
        FUZZ_CHECK(cJSON_IsObject(ev), "a watch event that is not a JSON object: %.*s", (int)(nl - line), line);
        cJSON_Delete(ev);
    }
    ls_buf_free(&out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    verbose = getenv("FUZZ_API_VERBOSE") != NULL;
    seed_objects = cJSON_Parse(SEED_OBJECTS);
    if (!cJSON_IsArray(seed_objects))
        abort();
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL) != 0)
        abort();
    pthread_detach(t);
    return 0;
}

static ls_api *new_store(void)
{
    ls_api *a = ls_api_new(HISTORY, 42);
    const cJSON *o;
    cJSON_ArrayForEach(o, seed_objects) {
        const char *kind = cJSON_GetObjectItemCaseSensitive(o, "kind")->valuestring;
        const char *av = cJSON_GetObjectItemCaseSensitive(o, "apiVersion")->valuestring;
        const char *slash = strchr(av, '/');
        char group[64] = "";
        if (slash)
            snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
        const char *version = slash ? slash + 1 : av;
        char plural[64];
        snprintf(plural, sizeof plural, "%ss", kind);
        for (char *p = plural; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        if (strcmp(kind, "PriorityClass") == 0)   /* not just lower case + "s" */
            snprintf(plural, sizeof plural, "priorityclasses");
        const ls_api_resource *r = ls_api_resource_find(group, version, plural);
        FUZZ_CHECK(r, "no resource for %s", kind);
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
                                                           "namespace");
        cJSON *out = NULL;
        int code = ls_api_create(a, r, cJSON_IsString(ns) ? ns->valuestring : NULL, cJSON_Duplicate(o, 1), &out);
        FUZZ_CHECK(code == 201, "creating the seed %s: %d", kind, code);
        cJSON_Delete(out);
    }
    return a;
}

/* The next line of [*p, end) as a NUL-terminated copy; *p moves past it. */
static char *take_line(const char **p, const char *end)
{
    const char *s = *p, *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
    const char *e = nl ? nl : end;
    char *line = fuzz_cstr((const uint8_t *)s, (size_t)(e - s));
    *p = nl ? nl + 1 : end;
    return line;
}

/* After a create (201 with an object): the object must be readable at its
 * canonical path, .../[namespaces/NS/]PLURAL/NAME. */
static void check_readable(ls_api_server *srv, const char *create_path, const cJSON *obj)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "namespace"));
    FUZZ_CHECK(name && *name, "POST %s: created an object without a name", create_path);
    char *copy = ls_xstrdup(create_path), *segs[16], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(copy, "/", &save); t && n < 16; t = strtok_r(NULL, "/", &save))
        segs[n++] = t;
    FUZZ_CHECK(n >= 3, "POST %s: a create on a short path", create_path);
    const char *plural = segs[--n];
    if (n >= 2 && strcmp(segs[n - 2], "namespaces") == 0)
        n -= 2;
    ls_buf path = {0};
    for (int i = 0; i < n; i++)
        ls_buf_addf(&path, "/%s", segs[i]);
    if (ns)
        ls_buf_addf(&path, "/namespaces/%s", ns);
    ls_buf_addf(&path, "/%s/%s", plural, name);
    static const char *const headers[] = {"Authorization", "Bearer " TOKEN, NULL};
    ls_http_request rq = {.method = "GET", .path = path.data, .query = "", .body = "", .peer = "127.0.0.1:1",
                          .headers = headers};
    ls_http_response rs;
    memset(&rs, 0, sizeof rs);
    ls_api_server_handle(srv, &rq, &rs);
    /* 429/500: a fault injected on the GET itself. */
    FUZZ_CHECK(rs.status == 200 || rs.status == 429 || rs.status == 500, "POST %s created %s, GET %s: %d %.300s",
               create_path, name, path.data, rs.status, rs.body ? rs.body : "");
    ls_http_response_release(&rs);
    ls_buf_free(&path);
    free(copy);
}

/* A list answer: at most limit items, all in the namespace of the path. */
static void check_list(const ls_http_request *rq, const cJSON *list)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    FUZZ_CHECK(cJSON_IsArray(items), "GET %s?%s: a list without items", rq->path, rq->query);
    const char *limit = ls_http_query(rq, "limit");
    uint32_t max = limit ? (uint32_t)strtoul(limit, NULL, 10) : 0;
    FUZZ_CHECK(!max || (uint32_t)cJSON_GetArraySize(items) <= max, "GET %s?%s: %d items over the limit", rq->path,
               rq->query, cJSON_GetArraySize(items));
    char *copy = ls_xstrdup(rq->path), *segs[16], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(copy, "/", &save); t && n < 16; t = strtok_r(NULL, "/", &save))
        segs[n++] = t;
    int rest = n >= 1 && strcmp(segs[0], "api") == 0 ? 2 : 3;
    if (n == rest + 3 && strcmp(segs[rest], "namespaces") == 0) {
        const cJSON *it;
        cJSON_ArrayForEach(it, items) {
            const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                 cJSON_GetObjectItemCaseSensitive(it, "metadata"), "namespace"));
            FUZZ_CHECK(ns && strcmp(ns, segs[rest + 1]) == 0, "GET %s?%s: an item of namespace %s", rq->path,
                       rq->query, ns ? ns : "(none)");
        }
    }
    free(copy);
}

static void one_request(ls_api_server *srv, ls_api *a, const char *data, size_t size)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    if (size == 0)
        return;
    unsigned char b = (unsigned char)data[0];
    unsigned char m = b & 0x7f;
    const char *method = m == 'G' ? "GET" : m == 'P' ? "POST" : m == 'U' ? "PUT" : m == 'A' ? "PATCH"
                       : m == 'D' ? "DELETE" : methods[m % 5];
    const char *p = data + 1, *end = data + size;
    char *path = take_line(&p, end), *query = take_line(&p, end);
    char *ctype = take_line(&p, end), *accept = take_line(&p, end);
    /* The body keeps its NULs (body_len), with a NUL after it as the server gives. */
    char *body = ls_xmalloc((size_t)(end - p) + 1);
    memcpy(body, p, (size_t)(end - p));
    body[end - p] = '\0';

    const char *headers[9];
    int nh = 0;
    if (!(b & 0x80)) {
        headers[nh++] = "Authorization";
        headers[nh++] = "Bearer " TOKEN;
    } else if (b & 0x40) {
        headers[nh++] = "authorization";
        headers[nh++] = "bearer wrong-token";
    }
    if (*ctype) {
        headers[nh++] = "Content-Type";
        headers[nh++] = ctype;
    }
    if (*accept) {
        headers[nh++] = "Accept";
        headers[nh++] = accept;
    }
    headers[nh] = NULL;
    ls_http_request rq = {.method = method, .path = path, .query = query, .body = body,
                          .body_len = (size_t)(end - p), .peer = "127.0.0.1:1", .conn_ = NULL,
                          .headers = headers};
    ls_http_response rs;
    memset(&rs, 0, sizeof rs);
    ls_api_server_handle(srv, &rq, &rs);
    FUZZ_CHECK(rs.status >= 100 && rs.status < 600, "%s %s?%s: status %d", method, path, query, rs.status);
    FUZZ_CHECK(rs.content_type, "%s %s?%s: no content type", method, path, query);
    if (verbose)
        fprintf(stderr, "%s %s?%s -> %d %.200s\n", method, path, query, rs.status,
                rs.producer ? "(stream)" : rs.body ? rs.body : "");
    if (rs.producer) {
        FUZZ_CHECK(!rs.body, "a streaming response with a body");
        pull_once(a, &rs);
    } else if (strcmp(rs.content_type, "application/json") == 0) {
        cJSON *j = cJSON_ParseWithLength(rs.body, rs.body_len);
        FUZZ_CHECK(cJSON_IsObject(j), "%s %s?%s: %d with a body that is not a JSON object: %.*s", method, path,
                   query, rs.status, (int)rs.body_len, rs.body ? rs.body : "");
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "kind"));
        if (strcmp(method, "POST") == 0 && rs.status == 201 && !(kind && strcmp(kind, "Status") == 0))
            check_readable(srv, path, j);
        size_t kl = kind ? strlen(kind) : 0;
        if (strcmp(method, "GET") == 0 && rs.status == 200 && kl > 4 && strcmp(kind + kl - 4, "List") == 0 &&
            strcmp(kind, "APIResourceList") != 0 && strcmp(kind, "APIGroupList") != 0)
            check_list(&rq, j);
        cJSON_Delete(j);
    }
    ls_http_response_release(&rs);
    free(path);
    free(query);
    free(ctype);
    free(accept);
    free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_api *a = new_store();
    ls_api_server *srv = ls_api_server_new(a, TOKEN);
    const char *p = (const char *)data, *end = p + size;
    /* Leading "fault: SPEC" lines: --fault values for this store. */
    ls_api_faults faults = {0};
    bool faulted = false;
    while (end - p > 7 && memcmp(p, "fault: ", 7) == 0) {
        p += 7;
        char *spec = take_line(&p, end);
        ls_error err = {{0}};
        if (!ls_api_parse_fault(&faults, spec, &err))
            FUZZ_CHECK(err.msg[0], "a refused --fault %s without a message", spec);
        free(spec);
        faulted = true;
    }
    if (faulted) {
        faults.latency_ms = 0;   /* a sleep per request, nothing to find */
        ls_api_set_faults(a, &faults);
    }
    for (int n = 0; n < MAX_REQUESTS && p < end; n++) {
        const char *sep = NULL;
        for (const char *q = p; q + 5 <= end; q++)
            if (memcmp(q, "\n===\n", 5) == 0) {
                sep = q;
                break;
            }
        const char *e = sep ? sep : end;
        one_request(srv, a, p, (size_t)(e - p));
        p = sep ? sep + 5 : end;
    }
    ls_api_server_stop(srv);
    ls_api_free(a);
    return 0;
}
