/*
 * fuzz_kubeconfig.c: kubeconfig parsing (client/kubeconfig.c through
 * ls_kubeconfig_parse): contexts, clusters, users, *-data fields (base64),
 * file references, tokens, --master and --context.
 *
 * The first byte of the input picks the options, the rest is the kubeconfig:
 *   bits 0-1  the context: current-context, "prod", "dev", or "ctx"
 *   bit 2     a master URL ("https://override:6443/") overriding the server
 *   bit 3     the source name: "<dir>/kubeconfig" or NULL ("<input>", files
 *             relative to the current directory; only used when the input
 *             references no files, so that nothing outside <dir> is read)
 * <dir> is a temporary directory made at start with the files a kubeconfig
 * may reference: ca.crt, client.crt, client.key, token, certs/ca.crt. An
 * input with a string starting with '/' or holding ".." is not parsed (it
 * could name any file, /dev/zero included).
 *
 * Checks: no crash, leak or sanitizer report; after a success the server is
 * set without a trailing '/', the namespace is set, the certificate and key
 * come together; after a failure the configuration is zeroed and the error
 * names the source; and loading the same text from a file
 * (ls_kubeconfig_load) gives the same outcome, field by field.
 */
#include "fuzz_common.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "client/kubeconfig.h"
#include "model/doc.h"

static char dir[64];
static char source[128];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void cleanup(void)
{
    if (dir[0])
        nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void put_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "%s/luasched-fuzz-kc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (strlen(dir) > 48 || !mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    atexit(cleanup);
    snprintf(source, sizeof source, "%s/kubeconfig", dir);
    char certs[128];
    snprintf(certs, sizeof certs, "%s/certs", dir);
    mkdir(certs, 0700);
    static const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFuzz\n-----END CERTIFICATE-----\n";
    put_file("ca.crt", pem);
    put_file("certs/ca.crt", pem);
    put_file("client.crt", pem);
    put_file("client.key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFuzz\n-----END EC PRIVATE KEY-----\n");
    put_file("token", "file-token \r\n");
    put_file("empty", "");
    return 0;
}

static const char *const path_keys[] = {"certificate-authority", "client-certificate", "client-key", "tokenFile"};

/* Walks the parsed input: *unsafe when a string could name a file outside
 * dir, *refs when a member that names a file is set. */
static void scan(const cJSON *node, bool *unsafe, bool *refs)
{
    for (const cJSON *c = node ? node->child : NULL; c; c = c->next) {
        if (cJSON_IsString(c) && c->valuestring) {
            if (c->valuestring[0] == '/' || strstr(c->valuestring, ".."))
                *unsafe = true;
            for (size_t i = 0; c->string && *c->valuestring && i < sizeof path_keys / sizeof path_keys[0]; i++)
                *refs |= strcmp(c->string, path_keys[i]) == 0;
        }
        scan(c, unsafe, refs);
    }
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_blob(const char *a, size_t alen, const char *b, size_t blen)
{
    return (!a && !b) || (a && b && alen == blen && memcmp(a, b, alen) == 0);
}

static void check_loaded(const ls_kubeconfig *c)
{
    FUZZ_CHECK(c->server && (!*c->server || c->server[strlen(c->server) - 1] != '/'), "server \"%s\"",
               c->server ? c->server : "(null)");
    FUZZ_CHECK(c->namespace && *c->namespace, "no namespace");
    FUZZ_CHECK(c->context, "no context");
    FUZZ_CHECK(!c->cert_pem == !c->key_pem, "a certificate without a key, or a key without one");
    FUZZ_CHECK(!c->ca_pem || c->ca_pem[c->ca_len] == '\0', "CA not NUL-terminated");
    FUZZ_CHECK(!c->cert_pem || c->cert_pem[c->cert_len] == '\0', "certificate not NUL-terminated");
    FUZZ_CHECK(!c->key_pem || c->key_pem[c->key_len] == '\0', "key not NUL-terminated");
    FUZZ_CHECK(!c->token_file || c->token, "a token file without its token");
}

static bool is_zero(const ls_kubeconfig *c)
{
    static const ls_kubeconfig zero;
    return memcmp(c, &zero, sizeof zero) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const char *const contexts[] = {NULL, "prod", "dev", "ctx"};
    const char *context = contexts[data[0] & 3];
    const char *master = data[0] & 4 ? "https://override:6443/" : NULL;
    bool in_dir = !(data[0] & 8);
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    ls_error err = {{0}};
    ls_doc_set *doc = ls_doc_parse(text, len, NULL, &err);
    bool unsafe = false, refs = false;
    for (uint32_t i = 0; i < ls_doc_count(doc); i++)
        scan(ls_doc_get(doc, i), &unsafe, &refs);
    ls_doc_free(doc);
    if (unsafe)
        return 0;
    if (refs)
        in_dir = true;
    const char *src = in_dir ? source : NULL;

    if (in_dir) {
        /* Written first: the input may reference the kubeconfig itself. */
        FILE *f = fopen(source, "wb");
        if (!f || (len && fwrite(text, 1, len, f) != len) || fclose(f) != 0) {
            perror(source);
            abort();
        }
    }
    ls_kubeconfig cfg;
    memset(&err, 0, sizeof err);
    bool ok = ls_kubeconfig_parse(text, len, src, context, master, &cfg, &err);
    if (ok) {
        check_loaded(&cfg);
        if (master)
            FUZZ_CHECK(strcmp(cfg.server, "https://override:6443") == 0, "master ignored: %s", cfg.server);
    } else {
        FUZZ_CHECK(is_zero(&cfg), "a failed parse left fields set");
        const char *name = src ? src : "<input>";
        FUZZ_CHECK(strncmp(err.msg, name, strlen(name)) == 0, "error without the source: \"%s\"", err.msg);
    }

    if (in_dir) {
        /* The file loader on the same text. */
        ls_kubeconfig fcfg;
        ls_error ferr = {{0}};
        bool fok = ls_kubeconfig_load(source, context, master, &fcfg, &ferr);
        FUZZ_CHECK(fok == ok, "parse %s, load %s (%s / %s)", ok ? "succeeded" : "failed",
                   fok ? "succeeded" : "failed", err.msg, ferr.msg);
        FUZZ_CHECK(strcmp(err.msg, ferr.msg) == 0, "errors differ: \"%s\" / \"%s\"", err.msg, ferr.msg);
        if (ok) {
            FUZZ_CHECK(same_str(cfg.server, fcfg.server) && same_str(cfg.token, fcfg.token) &&
                           same_str(cfg.token_file, fcfg.token_file) && same_str(cfg.username, fcfg.username) &&
                           same_str(cfg.password, fcfg.password) && same_str(cfg.namespace, fcfg.namespace) &&
                           same_str(cfg.context, fcfg.context) && cfg.insecure == fcfg.insecure &&
                           same_blob(cfg.ca_pem, cfg.ca_len, fcfg.ca_pem, fcfg.ca_len) &&
                           same_blob(cfg.cert_pem, cfg.cert_len, fcfg.cert_pem, fcfg.cert_len) &&
                           same_blob(cfg.key_pem, cfg.key_len, fcfg.key_pem, fcfg.key_len),
                       "parse and load differ");
        }
        ls_kubeconfig_free(&fcfg);
        unlink(source);
    }
    ls_kubeconfig_free(&cfg);
    return 0;
}
