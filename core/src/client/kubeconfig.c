/*
 * kubeconfig.c: kubeconfig files and in-cluster configuration. See
 * kubeconfig.h. The file is read through model/doc.c so that every error can
 * name the file and line of the field at fault.
 */
#include "client/kubeconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/kutil.h"
#include "model/doc.h"

#define LS_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct kc_ctx {
    ls_doc_set *doc;
    char *dir;          /* the kubeconfig's directory, for relative paths */
    ls_error *err;
} kc_ctx;

static bool fail(kc_ctx *k, const cJSON *node, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(kc_ctx *k, const cJSON *node, const char *field, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line = ls_doc_line(k->doc, node);
    if (line < 1)
        line = 1;
    ls_errorf(k->err, "%s:%d: %s: %s", ls_doc_source(k->doc), line, field, what);
    return false;
}

static char *dup_or_null(const char *s)
{
    return s && *s ? ls_xstrdup(s) : NULL;
}

/* An optional string member: true with *out NULL when absent or null. */
static bool opt_str(kc_ctx *k, const cJSON *obj, const char *key, const char *path, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsString(v)) {
        char field[256];
        snprintf(field, sizeof field, "%s.%s", path, key);
        return fail(k, v, field, "expected a string");
    }
    *out = v->valuestring;
    return true;
}

static bool opt_bool(kc_ctx *k, const cJSON *obj, const char *key, const char *path, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsBool(v)) {
        char field[256];
        snprintf(field, sizeof field, "%s.%s", path, key);
        return fail(k, v, field, "expected true or false");
    }
    *out = cJSON_IsTrue(v);
    return true;
}

/* Finds the entry of clusters/users/contexts called name; *inner is its
 * "cluster"/"user"/"context" object, *path names it ("users[2].user"). */
static bool find_named(kc_ctx *k, const cJSON *root, const char *list, const char *inner_key, const char *name,
                       const cJSON *ref_node, const char *ref_field, const cJSON **inner, char *path,
                       size_t path_cap)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, list);
    if (arr && !cJSON_IsNull(arr) && !cJSON_IsArray(arr))
        return fail(k, arr, list, "expected a list");
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr) {
        char at[64];
        snprintf(at, sizeof at, "%s[%d]", list, i);
        if (!cJSON_IsObject(item))
            return fail(k, item, at, "expected a mapping with name and %s", inner_key);
        const char *n = ls_kutil_json_str(item, "name");
        if (n && strcmp(n, name) == 0) {
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(item, inner_key);
            snprintf(path, path_cap, "%s.%s", at, inner_key);
            if (!cJSON_IsObject(in))
                return fail(k, in ? in : item, path, "expected a mapping");
            *inner = in;
            return true;
        }
        i++;
    }
    const char *what = strcmp(list, "clusters") == 0 ? "cluster" : strcmp(list, "users") == 0 ? "user" : "context";
    return fail(k, ref_node, ref_field, "no %s named \"%s\"", what, name);
}

static char *resolve_path(kc_ctx *k, const char *p)
{
    if (p[0] == '/' || !k->dir)
        return ls_xstrdup(p);
    size_t n = strlen(k->dir) + strlen(p) + 2;
    char *s = ls_xmalloc(n);
    snprintf(s, n, "%s/%s", k->dir, p);
    return s;
}

/* Reads "<key>-data" (base64) or "<key>" (a file) of obj into *out. */
static bool load_blob(kc_ctx *k, const cJSON *obj, const char *path, const char *key, char **out, size_t *len)
{
    char data_key[64], field[256];
    snprintf(data_key, sizeof data_key, "%s-data", key);
    const char *data, *file;
    if (!opt_str(k, obj, data_key, path, &data) || !opt_str(k, obj, key, path, &file))
        return false;
    if (data && *data) {   /* the data field wins over the file, as in client-go */
        *out = ls_kutil_base64_decode(data, strlen(data), len);
        snprintf(field, sizeof field, "%s.%s", path, data_key);
        if (!*out)
            return fail(k, cJSON_GetObjectItemCaseSensitive(obj, data_key), field, "expected base64 data");
        return true;
    }
    if (file && *file) {
        char *full = resolve_path(k, file);
        ls_error ferr = {{0}};
        *out = ls_kutil_read_file(full, len, &ferr);
        free(full);
        snprintf(field, sizeof field, "%s.%s", path, key);
        if (!*out)
            return fail(k, cJSON_GetObjectItemCaseSensitive(obj, key), field, "cannot read: %s", ferr.msg);
    }
    return true;
}

static bool load_cluster(kc_ctx *k, const cJSON *c, const char *path, ls_kubeconfig *cfg)
{
    const char *server;
    if (!opt_str(k, c, "server", path, &server) || !opt_bool(k, c, "insecure-skip-tls-verify", path, &cfg->insecure))
        return false;
    if (server && *server) {
        cfg->server = ls_xstrdup(server);
        size_t n = strlen(cfg->server);
        while (n > 0 && cfg->server[n - 1] == '/')
            cfg->server[--n] = '\0';
    }
    return load_blob(k, c, path, "certificate-authority", &cfg->ca_pem, &cfg->ca_len);
}

static bool load_user(kc_ctx *k, const cJSON *u, const char *path, ls_kubeconfig *cfg)
{
    char field[256];
    static const char *const unsupported[] = {"exec", "auth-provider"};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(u, unsupported[i]);
        snprintf(field, sizeof field, "%s.%s", path, unsupported[i]);
        if (v && !cJSON_IsNull(v))
            return fail(k, v, field, "credential plugins are not supported; use a token, tokenFile or client certificate");
    }
    if (!load_blob(k, u, path, "client-certificate", &cfg->cert_pem, &cfg->cert_len) ||
        !load_blob(k, u, path, "client-key", &cfg->key_pem, &cfg->key_len))
        return false;
    if (!cfg->cert_pem != !cfg->key_pem) {
        snprintf(field, sizeof field, "%s.%s", path, cfg->cert_pem ? "client-key" : "client-certificate");
        return fail(k, u, field, "expected together with %s", cfg->cert_pem ? "client-certificate" : "client-key");
    }
    const char *token, *token_file, *user, *pass;
    if (!opt_str(k, u, "token", path, &token) || !opt_str(k, u, "tokenFile", path, &token_file) ||
        !opt_str(k, u, "username", path, &user) || !opt_str(k, u, "password", path, &pass))
        return false;
    cfg->username = dup_or_null(user);
    cfg->password = dup_or_null(pass);
    if (token_file && *token_file) {
        /* The file's token wins over an inline one: client-go re-reads it and
         * prefers the last value read. */
        cfg->token_file = resolve_path(k, token_file);
        size_t len;
        ls_error ferr = {{0}};
        char *t = ls_kutil_read_file(cfg->token_file, &len, &ferr);
        snprintf(field, sizeof field, "%s.tokenFile", path);
        if (!t)
            return fail(k, cJSON_GetObjectItemCaseSensitive(u, "tokenFile"), field, "cannot read: %s", ferr.msg);
        while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
            t[--len] = '\0';
        cfg->token = t;
    } else {
        cfg->token = dup_or_null(token);
    }
    return true;
}

static bool load_context(kc_ctx *k, const cJSON *root, const char *context, ls_kubeconfig *cfg)
{
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(root, "current-context");
    const cJSON *ref = root;
    const char *ref_field = "context";
    if (!context || !*context) {
        if (cur && !cJSON_IsNull(cur) && !cJSON_IsString(cur))
            return fail(k, cur, "current-context", "expected a string");
        context = cJSON_IsString(cur) ? cur->valuestring : NULL;
        if (!context || !*context)
            return fail(k, root, "current-context", "not set, and no context was given");
        ref = cur;
        ref_field = "current-context";
    }
    const cJSON *ctx, *cluster, *user = NULL;
    char ctx_path[96], cl_path[96], u_path[96];
    if (!find_named(k, root, "contexts", "context", context, ref, ref_field, &ctx, ctx_path, sizeof ctx_path))
        return false;
    cfg->context = ls_xstrdup(context);
    const char *cluster_name, *user_name, *ns;
    if (!opt_str(k, ctx, "cluster", ctx_path, &cluster_name) || !opt_str(k, ctx, "user", ctx_path, &user_name) ||
        !opt_str(k, ctx, "namespace", ctx_path, &ns))
        return false;
    char field[128];
    snprintf(field, sizeof field, "%s.cluster", ctx_path);
    if (!cluster_name || !*cluster_name)
        return fail(k, ctx, field, "expected the name of a cluster");
    const cJSON *cl_ref = cJSON_GetObjectItemCaseSensitive(ctx, "cluster");
    if (!find_named(k, root, "clusters", "cluster", cluster_name, cl_ref, field, &cluster, cl_path, sizeof cl_path))
        return false;
    if (user_name && *user_name) {
        snprintf(field, sizeof field, "%s.user", ctx_path);
        const cJSON *u_ref = cJSON_GetObjectItemCaseSensitive(ctx, "user");
        if (!find_named(k, root, "users", "user", user_name, u_ref, field, &user, u_path, sizeof u_path))
            return false;
    }
    cfg->namespace = ls_xstrdup(ns && *ns ? ns : "default");
    if (!load_cluster(k, cluster, cl_path, cfg))
        return false;
    if (!cfg->server) {
        snprintf(field, sizeof field, "%s.server", cl_path);
        return fail(k, cluster, field, "expected the API server's URL");
    }
    return !user || load_user(k, user, u_path, cfg);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return NULL;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = ls_xmalloc(n + 1);
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static void set_server(ls_kubeconfig *cfg, const char *server)
{
    free(cfg->server);
    cfg->server = ls_xstrdup(server);
    size_t n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
}

static bool load_master_only(const char *master, ls_kubeconfig *cfg, ls_error *err)
{
    if (!master || !*master)
        return ls_errorf(err, "kubeconfig: no file and no master given");
    set_server(cfg, master);
    cfg->namespace = ls_xstrdup("default");
    return true;
}

bool ls_kubeconfig_parse(const char *text, size_t len, const char *source_name, const char *context,
                         const char *master, ls_kubeconfig *cfg, ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    kc_ctx k = {.doc = ls_doc_parse(text, len, source_name, err), .dir = source_name ? dir_of(source_name) : NULL,
                .err = err};
    bool ok = k.doc != NULL;
    if (ok && ls_doc_count(k.doc) != 1) {
        ls_errorf(err, "%s:1: expected one kubeconfig document, found %u", ls_doc_source(k.doc),
                  ls_doc_count(k.doc));
        ok = false;
    }
    ok = ok && load_context(&k, ls_doc_get(k.doc, 0), context, cfg);
    if (ok && master && *master)
        set_server(cfg, master);
    if (k.doc)
        ls_doc_free(k.doc);
    free(k.dir);
    if (!ok)
        ls_kubeconfig_free(cfg);
    return ok;
}

/* The whole file (through EOF, so pipes work), with model/doc.c's errors. */
static char *read_kubeconfig(const char *path, size_t *len, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_errorf(err, "%s: cannot read file: %s", path, strerror(errno));
        return NULL;
    }
    ls_kbuf b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ls_kbuf_add(&b, chunk, n);
    if (ferror(f)) {
        int e = errno;
        ls_errorf(err, "%s: cannot read file: %s", path, strerror(e));
        fclose(f);
        ls_kbuf_free(&b);
        return NULL;
    }
    fclose(f);
    if (!b.s)
        ls_kbuf_add(&b, "", 0);
    *len = b.len;
    return b.s;
}

bool ls_kubeconfig_load(const char *path, const char *context, const char *master, ls_kubeconfig *cfg,
                        ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (!path || !*path)
        return load_master_only(master, cfg, err);
    size_t len = 0;
    char *text = read_kubeconfig(path, &len, err);
    if (!text)
        return false;
    bool ok = ls_kubeconfig_parse(text, len, path, context, master, cfg, err);
    free(text);
    return ok;
}

static char *read_trimmed(const char *dir, const char *name, bool required, ls_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    ls_error e = {{0}};
    char *s = ls_kutil_read_file(path, &len, &e);
    if (!s) {
        if (required)
            ls_errorf(err, "in-cluster configuration: %s", e.msg);
        return NULL;
    }
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
        s[--len] = '\0';
    return s;
}

bool ls_kubeconfig_in_cluster(ls_kubeconfig *cfg, ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return ls_errorf(err, "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                              "must be set (not running in a pod? give a kubeconfig)");
    const char *dir = getenv("LUASCHED_SERVICEACCOUNT_DIR");
    if (!dir || !*dir)
        dir = LS_SA_DIR;
    char server[512];
    bool v6 = strchr(host, ':') != NULL;   /* an IPv6 literal needs brackets in a URL */
    snprintf(server, sizeof server, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
    cfg->token = read_trimmed(dir, "token", true, err);
    if (!cfg->token)
        return false;
    size_t n = strlen(dir) + sizeof "/token";
    cfg->token_file = ls_xmalloc(n);
    snprintf(cfg->token_file, n, "%s/token", dir);
    cfg->server = ls_xstrdup(server);
    char ca_path[4096];
    snprintf(ca_path, sizeof ca_path, "%s/ca.crt", dir);
    ls_error ca_err = {{0}};
    cfg->ca_pem = ls_kutil_read_file(ca_path, &cfg->ca_len, &ca_err);   /* absent: system CAs, as client-go */
    cfg->namespace = read_trimmed(dir, "namespace", false, NULL);
    if (!cfg->namespace || !*cfg->namespace) {
        free(cfg->namespace);
        cfg->namespace = ls_xstrdup("default");
    }
    return true;
}

bool ls_kubeconfig_resolve(const char *path, const char *context, const char *master, ls_kubeconfig *cfg,
                           ls_error *err)
{
    if ((!path || !*path) && (!master || !*master))
        return ls_kubeconfig_in_cluster(cfg, err);
    return ls_kubeconfig_load(path, context, master, cfg, err);
}

void ls_kubeconfig_free(ls_kubeconfig *cfg)
{
    free(cfg->server);
    free(cfg->ca_pem);
    free(cfg->cert_pem);
    free(cfg->key_pem);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    free(cfg->password);
    free(cfg->namespace);
    free(cfg->context);
    memset(cfg, 0, sizeof *cfg);
}
