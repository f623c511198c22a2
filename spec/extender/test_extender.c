/*
 * test_extender.c: a scheduler extender for the specs (libmicrohttpd +
 * cJSON), speaking upstream's wire format (k8s.io/kube-scheduler/extender/v1).
 *
 *   test_extender PORT_FILE LOG_FILE [--tls CERT_FILE [NAME]]
 *
 * (with --tls: HTTPS with a self-signed certificate for NAME, 127.0.0.1 by
 * default, written to CERT_FILE so that a client can trust it; when
 * $TEST_EXTENDER_CLIENT_CERT_DIR is set too, a client certificate and key are
 * made there (client.crt, client.key) and every request without that client
 * certificate gets HTTP 403)
 * listens on 127.0.0.1 (a free port, written to PORT_FILE), appends one line
 * per call to LOG_FILE ("VERB NAMESPACE/POD nodes=N" or "bind NS/POD NODE")
 * and the request as received to LOG_FILE.bodies ("/VERB BODY"), and serves
 * until SIGINT or SIGTERM. Its rules, by node and pod name, so
 * that the specs can work the expected outcome by hand:
 *
 *   /filter      nodes whose name contains "bad" fail (FailedNodes,
 *                "extender: no room for the pod"), "gone" fail as unresolvable
 *                (FailedAndUnresolvableNodes, "extender: node is gone"); the
 *                others pass, answered in the form asked (NodeNames or Nodes)
 *   /prioritize  score = the number the node name ends with, modulo 11
 *   /preempt     the candidates given back as NodeNameToMetaVictims (UIDs),
 *                without the nodes whose name contains "keep"
 *   /preempt-empty  every candidate given back with no victim
 *   /bind        records the binding; a pod whose name contains "bindfail"
 *                gets {"Error": "extender: binding refused"}
 *   /bind-api    records it and POSTs pods/binding to the API server of the
 *                kubeconfig named by $TEST_EXTENDER_KUBECONFIG (as a binding
 *                extender does); its failure is the answer's Error
 *   /filter-error   {"Error": "extender: filter failed on purpose"}
 *   /status500   HTTP 500
 *   /slow        answers /filter after 1.5 s (for httpTimeout)
 */
#include "client/http.h"
#include "server/tls.h"

#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static FILE *call_log, *body_log;
static char *client_ca;   /* the client certificate required, when one is */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;

typedef struct body {
    char *data;
    size_t len;
} body;

static void log_line(const char *line)
{
    pthread_mutex_lock(&log_lock);
    fputs(line, call_log);
    fputc('\n', call_log);
    fflush(call_log);
    pthread_mutex_unlock(&log_lock);
}

static const char *pod_key(const cJSON *pod, char *buf, size_t len)
{
    const cJSON *meta = cJSON_GetObjectItem(pod, "metadata");
    const cJSON *ns = cJSON_GetObjectItem(meta, "namespace"), *name = cJSON_GetObjectItem(meta, "name");
    snprintf(buf, len, "%s/%s", cJSON_IsString(ns) ? ns->valuestring : "",
             cJSON_IsString(name) ? name->valuestring : "");
    return buf;
}

static const char *node_name(const cJSON *item)
{
    if (cJSON_IsString(item))
        return item->valuestring;
    const cJSON *name = cJSON_GetObjectItem(cJSON_GetObjectItem(item, "metadata"), "name");
    return cJSON_IsString(name) ? name->valuestring : "";
}

/* The candidate nodes of ExtenderArgs (NodeNames, else Nodes.items). */
static const cJSON *nodes_of(const cJSON *args, bool *by_name)
{
    const cJSON *names = cJSON_GetObjectItem(args, "NodeNames");
    *by_name = cJSON_IsArray(names);
    return *by_name ? names : cJSON_GetObjectItem(cJSON_GetObjectItem(args, "Nodes"), "items");
}

static void log_call(const char *verb, const cJSON *args)
{
    bool by_name;
    char key[300], line[400];
    snprintf(line, sizeof line, "%s %s nodes=%d", verb, pod_key(cJSON_GetObjectItem(args, "Pod"), key, sizeof key),
             cJSON_GetArraySize(nodes_of(args, &by_name)));
    log_line(line);
}

static cJSON *filter(const cJSON *args)
{
    bool by_name;
    const cJSON *nodes = nodes_of(args, &by_name);
    cJSON *out = cJSON_CreateObject(), *kept = cJSON_CreateArray();
    cJSON *failed = cJSON_CreateObject(), *gone = cJSON_CreateObject();
    for (const cJSON *n = nodes ? nodes->child : NULL; n; n = n->next) {
        const char *name = node_name(n);
        if (strstr(name, "gone"))
            cJSON_AddStringToObject(gone, name, "extender: node is gone");
        else if (strstr(name, "bad"))
            cJSON_AddStringToObject(failed, name, "extender: no room for the pod");
        else
            cJSON_AddItemToArray(kept, cJSON_Duplicate(n, 1));
    }
    if (by_name) {
        cJSON_AddNullToObject(out, "Nodes");
        cJSON_AddItemToObject(out, "NodeNames", kept);
    } else {
        cJSON *list = cJSON_AddObjectToObject(out, "Nodes");
        cJSON_AddItemToObject(list, "items", kept);
        cJSON_AddNullToObject(out, "NodeNames");
    }
    cJSON_AddItemToObject(out, "FailedNodes", failed);
    cJSON_AddItemToObject(out, "FailedAndUnresolvableNodes", gone);
    cJSON_AddStringToObject(out, "Error", "");
    return out;
}

static long trailing_number(const char *name)
{
    size_t n = strlen(name);
    while (n > 0 && isdigit((unsigned char)name[n - 1]))
        n--;
    return strtol(name + n, NULL, 10);
}

static cJSON *prioritize(const cJSON *args)
{
    bool by_name;
    const cJSON *nodes = nodes_of(args, &by_name);
    cJSON *out = cJSON_CreateArray();
    for (const cJSON *n = nodes ? nodes->child : NULL; n; n = n->next) {
        cJSON *hp = cJSON_CreateObject();
        cJSON_AddStringToObject(hp, "Host", node_name(n));
        cJSON_AddNumberToObject(hp, "Score", (double)(trailing_number(node_name(n)) % 11));
        cJSON_AddItemToArray(out, hp);
    }
    return out;
}

static cJSON *preempt(const cJSON *args, bool empty)
{
    const cJSON *full = cJSON_GetObjectItem(args, "NodeNameToVictims");
    const cJSON *meta = cJSON_GetObjectItem(args, "NodeNameToMetaVictims");
    const cJSON *map = cJSON_IsObject(full) ? full : meta;
    char key[300], line[400];
    snprintf(line, sizeof line, "preempt %s candidates=%d", pod_key(cJSON_GetObjectItem(args, "Pod"), key, sizeof key),
             cJSON_GetArraySize(map));
    log_line(line);
    cJSON *out = cJSON_CreateObject(), *result = cJSON_AddObjectToObject(out, "NodeNameToMetaVictims");
    for (const cJSON *entry = map ? map->child : NULL; entry; entry = entry->next) {
        if (strstr(entry->string, "keep"))
            continue;
        cJSON *victims = cJSON_AddObjectToObject(result, entry->string);
        cJSON *pods = cJSON_AddArrayToObject(victims, "Pods");
        const cJSON *given = cJSON_GetObjectItem(entry, "Pods");
        for (const cJSON *p = empty ? NULL : given ? given->child : NULL; p; p = p->next) {
            const cJSON *uid = cJSON_IsObject(full) ? cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "uid")
                                                    : cJSON_GetObjectItem(p, "UID");
            cJSON *mp = cJSON_CreateObject();
            cJSON_AddStringToObject(mp, "UID", cJSON_IsString(uid) ? uid->valuestring : "");
            cJSON_AddItemToArray(pods, mp);
        }
        const cJSON *v = cJSON_GetObjectItem(entry, "NumPDBViolations");
        cJSON_AddNumberToObject(victims, "NumPDBViolations", cJSON_IsNumber(v) ? v->valuedouble : 0);
    }
    return out;
}

static cJSON *bind_pod(const cJSON *args)
{
    const cJSON *ns = cJSON_GetObjectItem(args, "PodNamespace"), *name = cJSON_GetObjectItem(args, "PodName");
    const cJSON *node = cJSON_GetObjectItem(args, "Node");
    char key[300];
    snprintf(key, sizeof key, "%s/%s", cJSON_IsString(ns) ? ns->valuestring : "",
             cJSON_IsString(name) ? name->valuestring : "");
    char line[400];
    snprintf(line, sizeof line, "bind %s %s", key, cJSON_IsString(node) ? node->valuestring : "");
    log_line(line);
    cJSON *out = cJSON_CreateObject();
    bool refused = cJSON_IsString(name) && strstr(name->valuestring, "bindfail");
    cJSON_AddStringToObject(out, "Error", refused ? "extender: binding refused" : "");
    return out;
}

static ls_kclient *api_client(void)
{
    static ls_kclient *client;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!client) {
        ls_kubeconfig kc;
        ls_error err;
        const char *path = getenv("TEST_EXTENDER_KUBECONFIG");
        if (path && ls_kubeconfig_load(path, NULL, NULL, &kc, &err)) {
            client = ls_kclient_new(&kc, NULL, &err);
            ls_kubeconfig_free(&kc);
        }
    }
    pthread_mutex_unlock(&lock);
    return client;
}

/* ExtenderBindingArgs -> POST .../pods/NAME/binding on the API server. */
static cJSON *bind_through_api(const cJSON *args)
{
    cJSON *out = bind_pod(args);
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItem(args, "PodNamespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(args, "PodName"));
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItem(args, "PodUID"));
    const char *node = cJSON_GetStringValue(cJSON_GetObjectItem(args, "Node"));
    ls_kclient *client = api_client();
    if (!client || !ns || !name || !uid || !node) {
        cJSON_ReplaceItemInObject(out, "Error", cJSON_CreateString("extender: no API server to bind with"));
        return out;
    }
    char path[600], body[1200];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
             "\"uid\":\"%s\"},\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
             name, ns, uid, node);
    ls_kresponse resp;
    ls_error err;
    bool ok = ls_kclient_request(client, "POST", path, "application/json", body, strlen(body), &resp, &err);
    if (!ok || resp.status != 201) {
        char msg[1100];
        snprintf(msg, sizeof msg, "extender: binding through the API failed: %s",
                 ok ? (resp.body ? resp.body : "") : err.msg);
        cJSON_ReplaceItemInObject(out, "Error", cJSON_CreateString(msg));
    }
    ls_kresponse_free(&resp);
    return out;
}

/* The answer to one call, or NULL for HTTP 500. */
static cJSON *answer(const char *verb, const cJSON *args)
{
    if (strcmp(verb, "/filter") == 0 || strcmp(verb, "/slow") == 0) {
        log_call(verb + 1, args);
        if (strcmp(verb, "/slow") == 0) {
            struct timespec ts = {1, 500000000};
            nanosleep(&ts, NULL);
        }
        return filter(args);
    }
    if (strcmp(verb, "/prioritize") == 0) {
        log_call("prioritize", args);
        return prioritize(args);
    }
    if (strcmp(verb, "/preempt") == 0 || strcmp(verb, "/preempt-empty") == 0)
        return preempt(args, strcmp(verb, "/preempt-empty") == 0);
    if (strcmp(verb, "/bind") == 0)
        return bind_pod(args);
    if (strcmp(verb, "/bind-api") == 0)
        return bind_through_api(args);
    if (strcmp(verb, "/filter-error") == 0) {
        log_call("filter-error", args);
        cJSON *out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "Error", "extender: filter failed on purpose");
        return out;
    }
    log_call(verb + 1, args);
    return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *data, size_t *size, void **state)
{
    (void)cls;
    (void)version;
    body *b = *state;
    if (!b) {
        *state = calloc(1, sizeof(body));
        return MHD_YES;
    }
    if (*size) {
        b->data = realloc(b->data, b->len + *size + 1);
        memcpy(b->data + b->len, data, *size);
        b->len += *size;
        b->data[b->len] = '\0';
        *size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") != 0)
        return reply(conn, 405, strdup("{}"));
    if (client_ca) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        unsigned status = 1;
        if (!ci || gnutls_certificate_verify_peers2(ci->tls_session, &status) != 0 || status != 0)
            return reply(conn, 403, strdup("{\"Error\":\"a client certificate is required\"}"));
    }
    pthread_mutex_lock(&log_lock);
    fprintf(body_log, "%s %s\n", url, b->data ? b->data : "");
    fflush(body_log);
    pthread_mutex_unlock(&log_lock);
    cJSON *args = cJSON_ParseWithLength(b->data ? b->data : "", b->len);
    if (!args)
        return reply(conn, 400, strdup("{\"Error\":\"not JSON\"}"));
    cJSON *out = answer(url, args);
    cJSON_Delete(args);
    if (!out)
        return reply(conn, 500, strdup("{}"));
    char *text = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    return reply(conn, 200, text);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state, enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    body *b = *state;
    if (b) {
        free(b->data);
        free(b);
    }
    *state = NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static struct MHD_Daemon *start(const char *cert_file, const char *name, char **cert, char **key)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    if (!cert_file)
        return MHD_start_daemon(flags, 0, NULL, NULL, on_access, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    const char *hosts[] = {name};
    ls_error err;
    if (!ls_tls_self_signed(hosts, 1, cert, key, &err) || !ls_tls_write_pem(cert_file, *cert, 0644, &err)) {
        fprintf(stderr, "test_extender: %s\n", err.msg);
        return NULL;
    }
    const char *dir = getenv("TEST_EXTENDER_CLIENT_CERT_DIR");
    if (!dir)
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_access, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_HTTPS_MEM_CERT, *cert,
                                MHD_OPTION_HTTPS_MEM_KEY, *key, MHD_OPTION_END);
    const char *client[] = {"extender-client"};
    char *client_key = NULL, path[4096];
    bool ok = ls_tls_self_signed(client, 1, &client_ca, &client_key, &err);
    snprintf(path, sizeof path, "%s/client.crt", dir);
    ok = ok && ls_tls_write_pem(path, client_ca, 0644, &err);
    snprintf(path, sizeof path, "%s/client.key", dir);
    ok = ok && ls_tls_write_pem(path, client_key, 0600, &err);
    free(client_key);
    if (!ok) {
        fprintf(stderr, "test_extender: %s\n", err.msg);
        return NULL;
    }
    return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_access, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_HTTPS_MEM_CERT, *cert,
                            MHD_OPTION_HTTPS_MEM_KEY, *key, MHD_OPTION_HTTPS_MEM_TRUST, client_ca, MHD_OPTION_END);
}

int main(int argc, char **argv)
{
    const char *cert_file = (argc == 5 || argc == 6) && strcmp(argv[3], "--tls") == 0 ? argv[4] : NULL;
    if (argc != 3 && !cert_file) {
        fprintf(stderr, "usage: test_extender PORT_FILE LOG_FILE [--tls CERT_FILE [NAME]]\n");
        return 2;
    }
    call_log = fopen(argv[2], "a");
    char bodies[4096];
    snprintf(bodies, sizeof bodies, "%s.bodies", argv[2]);
    body_log = fopen(bodies, "a");
    if (!call_log || !body_log) {
        perror(argv[2]);
        return 2;
    }
    char *cert = NULL, *key = NULL;
    struct MHD_Daemon *d = start(cert_file, argc == 6 ? argv[5] : "127.0.0.1", &cert, &key);
    if (!d) {
        fprintf(stderr, "test_extender: cannot listen\n");
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    FILE *pf = fopen(argv[1], "w");
    if (!pf) {
        perror(argv[1]);
        return 2;
    }
    fprintf(pf, "%u\n", (unsigned)di->port);
    fclose(pf);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    for (int i = 0; i < 6000 && !stop; i++)   /* at most 10 minutes */
        usleep(100000);
    MHD_stop_daemon(d);
    free(cert);
    free(key);
    free(client_ca);
    fclose(call_log);
    fclose(body_log);
    return 0;
}
