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

#include <openssl/evp.h>

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
    int line = ls_doc_line(k->doc, node);
    char where[sizeof k->err->msg];
    snprintf(where, sizeof where, "%s:%d: %s", ls_doc_source(k->doc), line < 1 ? 1 : line, field);
    va_list ap;
    va_start(ap, fmt);
    ls_verror_at(k->err, where, fmt, ap);
    va_end(ap);
    return false;
}

static char *dup_or_null(const char *s)
{
    return s && *s ? ls_xstrdup(s) : NULL;
}

/* An optional member: true with *out NULL when absent or null; false (a
 * failure "expected ...") when it is not of the type that is() accepts. */
static bool opt_member(kc_ctx *k, const cJSON *obj, const char *key, const char *path,
                       cJSON_bool (*is)(const cJSON *), const char *expected, const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = v && !cJSON_IsNull(v) ? v : NULL;
    if (!*out || is(v))
        return true;
    char field[512];
    snprintf(field, sizeof field, "%s.%s", path, key);
    return fail(k, v, field, "%s", expected);
}

static bool opt_str(kc_ctx *k, const cJSON *obj, const char *key, const char *path, const char **out)
{
    const cJSON *v;
    bool ok = opt_member(k, obj, key, path, cJSON_IsString, "expected a string", &v);
    *out = v && ok ? v->valuestring : NULL;
    return ok;
}

static bool opt_bool(kc_ctx *k, const cJSON *obj, const char *key, const char *path, bool *out)
{
    const cJSON *v;
    if (!opt_member(k, obj, key, path, cJSON_IsBool, "expected true or false", &v))
        return false;
    if (v)
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

/* A list of strings at obj.key (absent: none). */
static bool str_list(kc_ctx *k, const cJSON *obj, const char *key, const char *path, char ***out, uint32_t *n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char field[512];
    snprintf(field, sizeof field, "%s.%s", path, key);
    *n = 0;
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsArray(v))
        return fail(k, v, field, "expected a list of strings");
    *out = ls_xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof **out);
    const cJSON *s;
    cJSON_ArrayForEach(s, v) {
        if (!cJSON_IsString(s))
            return fail(k, s, field, "expected a list of strings");
        (*out)[(*n)++] = ls_xstrdup(s->valuestring);
    }
    return true;
}

/* exec.env: [{name, value}] into "NAME=VALUE" strings. */
static bool exec_env(kc_ctx *k, const cJSON *exec, const char *path, ls_exec_config *x)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(exec, "env");
    char field[512];
    snprintf(field, sizeof field, "%s.env", path);
    if (!env || cJSON_IsNull(env))
        return true;
    if (!cJSON_IsArray(env))
        return fail(k, env, field, "expected a list of {name, value}");
    x->env = ls_xcalloc((size_t)cJSON_GetArraySize(env) + 1, sizeof *x->env);
    const cJSON *e;
    cJSON_ArrayForEach(e, env) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const char *value = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "value"));
        snprintf(field, sizeof field, "%s.env[%u]", path, x->n_env);
        if (!name || !*name || strchr(name, '=') || !value)
            return fail(k, e, field, "expected {name, value} strings (a name without '=')");
        size_t n = strlen(name) + strlen(value) + 2;
        x->env[x->n_env] = ls_xmalloc(n);
        snprintf(x->env[x->n_env++], n, "%s=%s", name, value);
    }
    return true;
}

/* spec.cluster of KUBERNETES_EXEC_INFO, from the context's cluster (client-go's field names). */
static char *exec_cluster_json(const cJSON *cluster, const ls_kubeconfig *cfg)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "server", cfg->server ? cfg->server : "");
    const char *sni = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cluster, "tls-server-name"));
    if (sni)
        cJSON_AddStringToObject(c, "tls-server-name", sni);
    if (cfg->insecure)
        cJSON_AddBoolToObject(c, "insecure-skip-tls-verify", true);
    if (cfg->ca_pem) {
        char *b64 = ls_xmalloc(4 * ((cfg->ca_len + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)cfg->ca_pem, (int)cfg->ca_len);
        cJSON_AddStringToObject(c, "certificate-authority-data", b64);
        free(b64);
    }
    const cJSON *proxy = cJSON_GetObjectItemCaseSensitive(cluster, "proxy-url");
    if (cJSON_IsString(proxy))
        cJSON_AddStringToObject(c, "proxy-url", proxy->valuestring);
    /* The cluster's extension "client.authentication.k8s.io/exec" is the plugin's config. */
    const cJSON *ext;
    cJSON_ArrayForEach(ext, cJSON_GetObjectItemCaseSensitive(cluster, "extensions")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ext, "name"));
        if (name && strcmp(name, "client.authentication.k8s.io/exec") == 0)
            cJSON_AddItemToObject(c, "config", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ext, "extension"), 1));
    }
    char *text = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    return text;
}

static bool exec_mode(kc_ctx *k, const cJSON *exec, const char *path, ls_exec_config *x)
{
    const char *mode;
    if (!opt_str(k, exec, "interactiveMode", path, &mode))
        return false;
    char field[512];
    snprintf(field, sizeof field, "%s.interactiveMode", path);
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(exec, "interactiveMode");
    if (!mode || !*mode) {
        /* client-go defaults v1beta1 to IfAvailable and requires it for v1. */
        if (strcmp(x->api_version, "client.authentication.k8s.io/v1") == 0)
            return fail(k, exec, field, "interactiveMode must be specified for %s to use exec authentication plugin",
                        x->command);
        x->interactive_mode = LS_EXEC_IF_AVAILABLE;
    } else if (strcmp(mode, "Never") == 0) {
        x->interactive_mode = LS_EXEC_NEVER;
    } else if (strcmp(mode, "IfAvailable") == 0) {
        x->interactive_mode = LS_EXEC_IF_AVAILABLE;
    } else if (strcmp(mode, "Always") == 0) {
        x->interactive_mode = LS_EXEC_ALWAYS;
    } else {
        return fail(k, node, field, "invalid interactiveMode \"%s\": expected Never, IfAvailable or Always", mode);
    }
    return true;
}

/* users[].user.exec: the credential plugin, with the cluster it is for. */
static bool load_exec(kc_ctx *k, const cJSON *exec, const char *path, const cJSON *cluster, ls_kubeconfig *cfg)
{
    char field[512];
    if (!cJSON_IsObject(exec))
        return fail(k, exec, path, "expected an object with apiVersion and command");
    const char *api, *command, *hint;
    if (!opt_str(k, exec, "apiVersion", path, &api) || !opt_str(k, exec, "command", path, &command) ||
        !opt_str(k, exec, "installHint", path, &hint))
        return false;
    snprintf(field, sizeof field, "%s.apiVersion", path);
    if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
                 strcmp(api, "client.authentication.k8s.io/v1beta1") != 0))
        return fail(k, cJSON_GetObjectItemCaseSensitive(exec, "apiVersion") ? cJSON_GetObjectItemCaseSensitive(exec, "apiVersion") : exec,
                    field, "exec plugin: invalid apiVersion \"%s\" (expected client.authentication.k8s.io/v1 or "
                    "client.authentication.k8s.io/v1beta1)", api ? api : "");
    snprintf(field, sizeof field, "%s.command", path);
    if (!command || !*command)
        return fail(k, exec, field, "expected the plugin's command");
    ls_exec_config *x = cfg->exec = ls_xcalloc(1, sizeof *x);
    x->api_version = ls_xstrdup(api);
    /* A relative command with a '/' is relative to the kubeconfig's directory, as client-go resolves it. */
    x->command = command[0] != '/' && strchr(command, '/') ? resolve_path(k, command) : ls_xstrdup(command);
    x->install_hint = dup_or_null(hint);
    if (!str_list(k, exec, "args", path, &x->args, &x->n_args) || !exec_env(k, exec, path, x) ||
        !opt_bool(k, exec, "provideClusterInfo", path, &x->provide_cluster_info) || !exec_mode(k, exec, path, x))
        return false;
    if (x->provide_cluster_info)
        x->cluster_json = exec_cluster_json(cluster, cfg);
    return true;
}

static bool load_user(kc_ctx *k, const cJSON *u, const char *path, const cJSON *cluster, ls_kubeconfig *cfg)
{
    char field[256];
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(u, "auth-provider");
    snprintf(field, sizeof field, "%s.auth-provider", path);
    if (ap && !cJSON_IsNull(ap))
        return fail(k, ap, field, "auth-provider plugins are not supported; use an exec credential plugin, a token, "
                                  "tokenFile or client certificate");
    const cJSON *exec = cJSON_GetObjectItemCaseSensitive(u, "exec");
    snprintf(field, sizeof field, "%s.exec", path);
    if (exec && !cJSON_IsNull(exec) && !load_exec(k, exec, field, cluster, cfg))
        return false;
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
    return !user || load_user(k, user, u_path, cluster, cfg);
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

bool ls_kubeconfig_load(const char *path, const char *context, const char *master, ls_kubeconfig *cfg,
                        ls_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (!path || !*path)
        return load_master_only(master, cfg, err);
    size_t len = 0;
    char *text = ls_doc_read_file(path, &len, err);
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
    ls_exec_config_free(cfg->exec);
    memset(cfg, 0, sizeof *cfg);
}
