/*
 * explain_live.c: `luasched explain --kubeconfig FILE NAMESPACE/POD`: reads
 * the live cluster through the API (plain list calls: nodes, pods that are
 * not terminal, and every other kind the plugins read), loads it into the
 * embedded cluster, and runs the pod's cycle with tracing and without binding
 * anything: the bound pods stay where they are, the other pending pods are
 * left out, and the pod itself is scheduled as if it were pending (a bound
 * pod is taken off its node for that). The report is explain's per-node,
 * per-plugin table; for a pod that finds no node it goes on with the
 * smallest single changes that would open nodes (explain_hints.c).
 */
#include "cli/cli.h"
#include "cli/explain_hints.h"
#include "client/api_needs.h"
#include "client/http.h"
#include "client/kubeconfig.h"
#include "client/read_kinds.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct live_opts {
    const char *kubeconfig, *master, *context;
    char ns[256], name[256];
} live_opts;

/* What the scheduler reads (client/read_kinds.c), as `luasched run`'s
 * informers list it: pods that are not terminal. Kinds the server does not
 * serve (its discovery) are left out; so is DynamicResources when
 * resource.k8s.io/v1 is (client/api_needs.c), as in run. */
#define KINDS LS_READ_KINDS
#define POD_QUERY "?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"

static void live_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched explain --kubeconfig FILE [--master URL] [--context NAME] NAMESPACE/POD [flags]\n"
            "\n"
            "Reads the live cluster through its API server and explains the scheduling of one pod there, as\n"
            "`luasched explain CLUSTER.yaml POD` does for a file: each filter plugin's verdict per node, each\n"
            "score plugin's scores. Nothing is bound or written. For a pod that finds no node, the smallest\n"
            "single changes that would open nodes follow (less of one resource, one more toleration, one\n"
            "nodeSelector entry less, one host port less).\n"
            "\n"
            "flags:\n"
            "  --kubeconfig FILE    kubeconfig of the cluster\n"
            "  --master URL         the API server's address (overrides the kubeconfig's)\n"
            "  --context NAME       the kubeconfig context (default: its current-context)\n"
            "  --output text|json   a report (text) or the pod's JSON record with \"hints\" (json)\n");
    ls_cli_simulate_usage_flags(out);
    fprintf(out, "  -h, --help           this help\n");
}

/* Takes --kubeconfig, --master and --context (and their =VALUE forms) out of
 * argv; the rest goes to the shared simulate/explain flags. */
static int take_client_flags(int *argc, char **argv, live_opts *lo)
{
    static const char *const names[] = {"--kubeconfig", "--master", "--context"};
    const char **slots[] = {&lo->kubeconfig, &lo->master, &lo->context};
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        int which = -1;
        const char *value = NULL;
        for (int f = 0; f < 3 && which < 0; f++) {
            size_t n = strlen(names[f]);
            if (strncmp(argv[i], names[f], n) != 0)
                continue;
            if (argv[i][n] == '=')
                which = f, value = argv[i] + n + 1;
            else if (argv[i][n] == 0)
                which = f, value = i + 1 < *argc ? argv[++i] : NULL;
        }
        if (which < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (!value) {
            fprintf(stderr, "luasched explain: %s: expected a value\n", names[which]);
            return LS_EXIT_USAGE;
        }
        *slots[which] = value;
    }
    *argc = out;
    return 0;
}

/* ---- reading the cluster */

static bool is_target(const cJSON *meta, const live_opts *lo)
{
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    return cJSON_IsString(ns) && cJSON_IsString(name) && strcmp(ns->valuestring, lo->ns) == 0 &&
           strcmp(name->valuestring, lo->name) == 0;
}

/* Bound pods stay; the pod explained is made pending; other pending pods go. */
static bool keep_pod(cJSON *pod, const live_opts *lo, bool *found, char *was_on, size_t cap)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(spec, "nodeName");
    bool bound = cJSON_IsString(node) && *node->valuestring;
    if (!is_target(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), lo))
        return bound;
    *found = true;
    if (bound) {
        snprintf(was_on, cap, "%s", node->valuestring);
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
    }
    return true;
}

typedef struct live_read {
    char *text;
    size_t len, cap;
    uint32_t nodes, pods, items;
    bool found;
    char was_on[256];
} live_read;

static void append(live_read *r, const char *s)
{
    size_t n = strlen(s);
    if (r->len + n + 1 > r->cap) {
        r->cap = (r->len + n + 1) * 2;
        r->text = ls_xrealloc(r->text, r->cap);
    }
    memcpy(r->text + r->len, s, n + 1);
    r->len += n;
}

static bool add_items(live_read *r, cJSON *list, size_t k, const live_opts *lo)
{
    cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        bool pod = strcmp(KINDS[k].kind, "Pod") == 0;
        if (pod && !keep_pod(item, lo, &r->found, r->was_on, sizeof r->was_on))
            continue;
        r->pods += pod;
        r->nodes += strcmp(KINDS[k].kind, "Node") == 0;
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(item, "metadata"), "managedFields");
        cJSON_DeleteItemFromObjectCaseSensitive(item, "kind");
        cJSON_DeleteItemFromObjectCaseSensitive(item, "apiVersion");
        cJSON_AddStringToObject(item, "apiVersion", KINDS[k].api_version);
        cJSON_AddStringToObject(item, "kind", KINDS[k].kind);
        char *doc = cJSON_PrintUnformatted(item);
        append(r, r->items++ ? ",\n" : "");
        append(r, doc);
        free(doc);
    }
    return true;
}

/* One JSON List of every object, one a line. */
static bool read_cluster(ls_kclient *client, ls_discovery *d, const live_opts *lo, live_read *r, ls_error *err)
{
    append(r, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
    for (size_t k = 0; k < LS_N_READ_KINDS; k++) {
        if (!ls_discovery_serves(d, KINDS[k].group, KINDS[k].version, KINDS[k].resource))
            continue;
        char path[400];
        snprintf(path, sizeof path, "%s%s/%s/%s%s", *KINDS[k].group ? "/apis/" : "/api", KINDS[k].group,
                 KINDS[k].version, KINDS[k].resource, strcmp(KINDS[k].kind, "Pod") == 0 ? POD_QUERY : "");
        ls_kresponse resp;
        if (!ls_kclient_request(client, "GET", path, NULL, NULL, 0, &resp, err)) {
            ls_kresponse_free(&resp);
            return false;
        }
        if (resp.status == 404) {
            ls_kresponse_free(&resp);
            continue;
        }
        cJSON *list = resp.status == 200 ? cJSON_Parse(resp.body) : NULL;
        if (!list) {
            bool ok = ls_errorf(err, "GET %s: HTTP %ld: %.200s", path, resp.status,
                                resp.body ? resp.body : "");
            ls_kresponse_free(&resp);
            return ok;
        }
        ls_kresponse_free(&resp);
        add_items(r, list, k, lo);
        cJSON_Delete(list);
    }
    append(r, "]}\n");
    if (!r->found)
        return ls_errorf(err, "pods \"%s\" not found in namespace \"%s\" (or it has terminated)", lo->name, lo->ns);
    return true;
}

/* ---- the explanation */

typedef struct hints_watch {
    const live_opts *lo;
    char *hints;   /* from the pod's last attempt that found no node */
} hints_watch;

static void observe(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    hints_watch *w = ud;
    if (strcmp(ls_str_get(a->pod->ns), w->lo->ns) != 0 || strcmp(ls_str_get(a->pod->name), w->lo->name) != 0 ||
        a->permit == LS_PERMIT_WAITING)
        return;
    free(w->hints);
    w->hints = a->node ? NULL : ls_explain_hints(cycle, s);
}

static void print_json(cJSON *rec, const char *hints)
{
    cJSON *arr = cJSON_AddArrayToObject(rec, "hints");
    for (const char *p = hints; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        while (n && *p == ' ')
            p++, n--;
        char *line = ls_xmalloc(n + 1);
        memcpy(line, p, n);
        line[n] = 0;
        cJSON_AddItemToArray(arr, cJSON_CreateString(line));
        free(line);
        p += n + (nl != NULL);
    }
    char *text = cJSON_PrintUnformatted(rec);
    puts(text);
    free(text);
}

static int explain_pod(const ls_sim_opts *base, const live_opts *lo, const live_read *r, const char *server)
{
    hints_watch w = {.lo = lo};
    ls_sim_opts o = *base;
    o.cluster = server;
    o.cluster_text = r->text;
    o.cluster_len = r->len;
    o.observe = observe;
    o.observe_ud = &w;
    cJSON *root = NULL;
    int rc = ls_cli_run_simulation(&o, "explain", &root);
    cJSON *rec = rc == LS_EXIT_OK && root ? ls_cli_explain_find(root, lo->ns, lo->name) : NULL;
    if (rc == LS_EXIT_OK && !rec) {
        fprintf(stderr, "luasched explain: pod %s/%s is not for this configuration's profiles (its "
                        "schedulerName), so it was not scheduled\n", lo->ns, lo->name);
        rc = LS_EXIT_USAGE;
    }
    if (rec && base->json) {
        print_json(rec, w.hints);
    } else if (rec) {
        printf("Live cluster at %s: %u nodes, %u pods read\n", server, r->nodes, r->pods);
        if (*r->was_on)
            printf("Pod %s/%s is bound to %s; its cycle is run again as if it were pending\n", lo->ns, lo->name,
                   r->was_on);
        ls_cli_explain_report(rec, lo->ns, lo->name);
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(rec, "node");
        if (w.hints)
            printf("Changes that would open nodes:\n%s", w.hints);
        else if (!cJSON_IsString(node))
            printf("No single change of the pod found that opens a node\n");
    }
    free(w.hints);
    cJSON_Delete(root);
    return rc;
}

int ls_cli_explain_live(int argc, char **argv)
{
    live_opts lo = {0};
    int rc = take_client_flags(&argc, argv, &lo);
    if (rc)
        return rc;
    ls_sim_opts o;
    rc = ls_cli_parse_sim_opts(argc, argv, &o, 1, NULL, live_usage);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    const char *pod = o.cluster, *slash = strchr(pod, '/');
    if (!slash || slash == pod || !slash[1]) {
        fprintf(stderr, "luasched explain: expected NAMESPACE/POD, got \"%s\"\n", pod);
        return LS_EXIT_USAGE;
    }
    snprintf(lo.ns, sizeof lo.ns, "%.*s", (int)(slash - pod), pod);
    snprintf(lo.name, sizeof lo.name, "%s", slash + 1);
    ls_error err;
    ls_kubeconfig kc;
    if (!ls_kubeconfig_resolve(lo.kubeconfig, lo.context, lo.master, &kc, &err)) {
        fprintf(stderr, "luasched explain: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    ls_kclient *client = ls_kclient_new(&kc, &(ls_kclient_options){0}, &err);
    live_read r = {0};
    ls_discovery *d = client ? ls_discovery_fetch(client, &err) : NULL;
    if (d) {
        ls_api_needs_apply(d);   /* the explanation runs what run would run against this server */
        ls_discovery_warn(d);
    }
    bool ok = d && read_cluster(client, d, &lo, &r, &err);
    ls_discovery_free(d);
    ls_kclient_free(client);
    if (!ok) {
        fprintf(stderr, "luasched explain: %s: %s\n", kc.server, err.msg);
        ls_kubeconfig_free(&kc);
        free(r.text);
        return LS_EXIT_FAILURE;
    }
    rc = explain_pod(&o, &lo, &r, kc.server);
    ls_kubeconfig_free(&kc);
    free(r.text);
    return rc;
}
