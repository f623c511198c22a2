/*
 * whatif_cli.c: `luasched whatif QUESTION`: sends a what-if question (JSON
 * or YAML, a file or "-") to a running scheduler's /whatif
 * (docs/cli/whatif.md) and prints the answer: a summary per pod (text) or the
 * answer's JSON as it came. Exit 0 when everything asked fits, 1 when not, 2
 * on a bad question or a failed call.
 */
#include "cli/cli.h"
#include "client/kubeconfig.h"
#include "luasched/model.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct whatif_opts {
    const char *server, *token, *kubeconfig, *ca_file, *question;
    bool insecure, json;
} whatif_opts;

static void whatif_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched whatif [flags] QUESTION.json|QUESTION.yaml|-\n"
            "\n"
            "Asks a running scheduler (`luasched run`'s secure port) where pods would go, without creating them:\n"
            "one pod, a list placed in order (\"allOrNothing\": a gang), or a template's replicas until the first\n"
            "that does not fit, optionally on a changed cluster (nodes added, cordoned, drained or removed, pods\n"
            "removed). The question's schema: docs/operations/what-if.md. Exit status: 0 everything asked fits,\n"
            "1 it does not, 2 a bad question or a failed call.\n"
            "\n"
            "flags:\n"
            "  --server URL                   the scheduler's secure port (default https://127.0.0.1:10259), or the\n"
            "                                 URL `simulate --serve` serves at\n"
            "  --token TOKEN                  the bearer token to send\n"
            "  --kubeconfig FILE              take the token or client certificate of FILE's current user\n"
            "  --certificate-authority FILE   verify the scheduler's certificate with this CA\n"
            "  --insecure-skip-tls-verify     do not verify it (a self-signed serving certificate)\n"
            "  --output text|json             a summary per pod (default) or the answer's JSON\n"
            "  -h, --help                     this help\n");
}

static int parse(int argc, char **argv, whatif_opts *o)
{
    enum { O_SERVER = 256, O_TOKEN, O_KUBECONFIG, O_CA, O_INSECURE, O_OUTPUT };
    static const struct option longs[] = {
        {"server", required_argument, NULL, O_SERVER}, {"token", required_argument, NULL, O_TOKEN},
        {"kubeconfig", required_argument, NULL, O_KUBECONFIG},
        {"certificate-authority", required_argument, NULL, O_CA},
        {"insecure-skip-tls-verify", no_argument, NULL, O_INSECURE}, {"output", required_argument, NULL, O_OUTPUT},
        {"help", no_argument, NULL, 'h'}, {0}};
    *o = (whatif_opts){.server = "https://127.0.0.1:10259"};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case O_SERVER: o->server = optarg; break;
        case O_TOKEN: o->token = optarg; break;
        case O_KUBECONFIG: o->kubeconfig = optarg; break;
        case O_CA: o->ca_file = optarg; break;
        case O_INSECURE: o->insecure = true; break;
        case O_OUTPUT:
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
                fprintf(stderr, "luasched whatif: --output: expected text or json, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            o->json = strcmp(optarg, "json") == 0;
            break;
        case 'h': whatif_usage(stdout); return -1;
        default: whatif_usage(stderr); ls_cli_suggest_flag(argc, argv, longs); return LS_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "luasched whatif: expected one question (a file, or - for standard input)\n");
        whatif_usage(stderr);
        return LS_EXIT_USAGE;
    }
    o->question = argv[optind];
    return 0;
}

/* ---- the question's text: JSON, or one YAML document made JSON */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    ls_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ls_buf_add(&b, chunk, n);
    if (f != stdin)
        fclose(f);
    ls_buf_add(&b, "", 1);
    *len = b.len - 1;
    return b.data;
}

static char *question_json(const char *path, ls_error *err)
{
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text) {
        ls_errorf(err, "%s: cannot read the question", path);
        return NULL;
    }
    char *docs = ls_documents_json(text, len, path, err);
    free(text);
    if (!docs)
        return NULL;
    char *nl = strchr(docs, '\n');
    if (!nl || nl[1]) {
        ls_text_free(docs);
        ls_errorf(err, "%s: expected one document (the question)", path);
        return NULL;
    }
    *nl = 0;
    char *q = ls_xstrdup(docs);
    ls_text_free(docs);
    return q;
}

/* ---- the call */

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    ls_buf_add(ud, data, size * n);
    return size * n;
}

static bool credentials(const whatif_opts *o, ls_kubeconfig *kc, ls_error *err)
{
    memset(kc, 0, sizeof *kc);
    if (!o->kubeconfig)
        return true;
    return ls_kubeconfig_load(o->kubeconfig, NULL, NULL, kc, err);
}

static long post(const whatif_opts *o, const ls_kubeconfig *kc, const char *question, ls_buf *out, ls_error *err)
{
    CURL *h = curl_easy_init();
    char url[2048];
    size_t n = strlen(o->server);
    snprintf(url, sizeof url, "%.*s/whatif", (int)(n && o->server[n - 1] == '/' ? n - 1 : n), o->server);
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    const char *token = o->token ? o->token : kc->token;
    char auth[4096];
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        headers = curl_slist_append(headers, auth);
    }
    struct curl_blob cert = {.data = kc->cert_pem, .len = kc->cert_len, .flags = CURL_BLOB_COPY};
    struct curl_blob key = {.data = kc->key_pem, .len = kc->key_len, .flags = CURL_BLOB_COPY};
    if (kc->cert_pem && kc->key_pem) {
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, question);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    if (o->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
    if (o->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    else
        ls_errorf(err, "POST %s: %s", url, curl_easy_strerror(rc));
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    ls_buf_add(out, "", 1);
    return status;
}

/* ---- the summary */

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : "";
}

static void print_placement(const cJSON *pl)
{
    const char *result = text_of(pl, "result");
    printf("%s: ", text_of(pl, "pod"));
    if (strcmp(result, "scheduled") != 0) {
        printf("%s: %s\n", result, text_of(pl, "message"));
    } else {
        printf("%s", text_of(pl, "node"));
        const cJSON *tied = cJSON_GetObjectItemCaseSensitive(pl, "tiedNodes");
        if (cJSON_GetArraySize(tied) > 1)
            printf(" (tied with %d nodes, the scheduler's seeded choice)", cJSON_GetArraySize(tied) - 1);
        printf("\n");
    }
    const cJSON *hint;
    cJSON_ArrayForEach(hint, cJSON_GetObjectItemCaseSensitive(pl, "hints"))
        printf("  hint: %s\n", cJSON_IsString(hint) ? hint->valuestring : "");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(pl, "preemption");
    if (pre) {
        printf("  preemption would make room on %s, evicting", text_of(pre, "nominatedNode"));
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(pre, "victims"))
            printf(" %s", cJSON_IsString(v) ? v->valuestring : "");
        printf("\n");
    }
}

static void print_summary(const cJSON *a)
{
    const cJSON *pl;
    cJSON_ArrayForEach(pl, cJSON_GetObjectItemCaseSensitive(a, "placements"))
        print_placement(pl);
    const cJSON *placed = cJSON_GetObjectItemCaseSensitive(a, "placed");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(a, "count");
    bool fits = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "fits"));
    if (count)
        printf("%d of %d replicas fit\n", placed ? placed->valueint : 0, count->valueint);
    else
        printf("%s\n", fits ? "fits" : "does not fit");
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(a, "failed");
    if (failed && !count && strcmp(text_of(a, "question"), "pod") != 0)
        printf("first failing: %s: %s\n", text_of(failed, "pod"), text_of(failed, "message"));
}

int ls_cli_whatif(int argc, char **argv)
{
    whatif_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_error err = {0};
    ls_kubeconfig kc;
    char *question = question_json(o.question, &err);
    if (!question || !credentials(&o, &kc, &err)) {
        fprintf(stderr, "luasched whatif: %s\n", err.msg);
        free(question);
        return LS_EXIT_USAGE;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ls_buf body = {0};
    long status = post(&o, &kc, question, &body, &err);
    free(question);
    ls_kubeconfig_free(&kc);
    cJSON *answer = status ? cJSON_Parse(body.data) : NULL;
    if (status == 200 && answer) {
        if (o.json)
            printf("%s\n", body.data);
        else
            print_summary(answer);
        rc = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "fits")) ? LS_EXIT_OK : LS_EXIT_FAILURE;
    } else {
        const char *msg = answer ? text_of(answer, "error") : "";
        if (!*msg)
            msg = answer ? text_of(answer, "message") : "";
        if (status)
            fprintf(stderr, "luasched whatif: %ld: %s\n", status, *msg ? msg : body.data);
        else
            fprintf(stderr, "luasched whatif: %s\n", err.msg);
        rc = LS_EXIT_USAGE;
    }
    cJSON_Delete(answer);
    free(body.data);
    curl_global_cleanup();
    return rc;
}
