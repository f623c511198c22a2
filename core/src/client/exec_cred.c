/*
 * exec_cred.c: runs kubeconfig exec credential plugins. See exec_cred.h.
 */
#include "client/exec_cred.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { MAX_OUTPUT = 1 << 20, RUN_TIMEOUT_MS = 60000 };

static const char NOT_INSTALLED_HELP[] =
    "\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\n"
    "To learn more about this feature, consult the documentation available at:\n"
    "      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins";

struct ls_exec_cred {
    ls_exec_config *cfg;
    pthread_mutex_t mu;          /* also serializes runs of the plugin, as client-go */
    bool cached;
    ls_exec_result cred;
    time_t expires;              /* 0: never */
    uint64_t generation, runs;
    int refs;                    /* clients sharing the cache (guarded by mu) */
};

/* ---- configuration */

static char **copy_strings(char *const *v, uint32_t n)
{
    char **out = ls_xcalloc(n ? n : 1, sizeof *out);
    for (uint32_t i = 0; i < n; i++)
        out[i] = ls_xstrdup(v[i]);
    return out;
}

static char *dup_opt(const char *s)
{
    return s ? ls_xstrdup(s) : NULL;
}

ls_exec_config *ls_exec_config_copy(const ls_exec_config *c)
{
    if (!c)
        return NULL;
    ls_exec_config *d = ls_xcalloc(1, sizeof *d);
    d->api_version = ls_xstrdup(c->api_version);
    d->command = ls_xstrdup(c->command);
    d->args = copy_strings(c->args, c->n_args);
    d->n_args = c->n_args;
    d->env = copy_strings(c->env, c->n_env);
    d->n_env = c->n_env;
    d->provide_cluster_info = c->provide_cluster_info;
    d->interactive_mode = c->interactive_mode;
    d->install_hint = dup_opt(c->install_hint);
    d->cluster_json = dup_opt(c->cluster_json);
    return d;
}

void ls_exec_config_free(ls_exec_config *c)
{
    if (!c)
        return;
    free(c->api_version);
    free(c->command);
    ls_strv_free(c->args, c->n_args);
    ls_strv_free(c->env, c->n_env);
    free(c->install_hint);
    free(c->cluster_json);
    free(c);
}

/* ---- lifecycle */

ls_exec_cred *ls_exec_cred_new(const ls_exec_config *c)
{
    ls_exec_cred *e = ls_xcalloc(1, sizeof *e);
    e->cfg = ls_exec_config_copy(c);
    e->refs = 1;
    pthread_mutex_init(&e->mu, NULL);
    return e;
}

ls_exec_cred *ls_exec_cred_ref(ls_exec_cred *e)
{
    if (e) {
        pthread_mutex_lock(&e->mu);
        e->refs++;
        pthread_mutex_unlock(&e->mu);
    }
    return e;
}

void ls_exec_result_free(ls_exec_result *r)
{
    free(r->token);
    free(r->cert_pem);
    free(r->key_pem);
    memset(r, 0, sizeof *r);
}

void ls_exec_cred_free(ls_exec_cred *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    bool last = --e->refs == 0;
    pthread_mutex_unlock(&e->mu);
    if (!last)
        return;
    ls_exec_result_free(&e->cred);
    ls_exec_config_free(e->cfg);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

uint64_t ls_exec_cred_runs(const ls_exec_cred *e)
{
    return e->runs;
}

/* ---- running the plugin */

/* KUBERNETES_EXEC_INFO: {"apiVersion", "kind": "ExecCredential", "spec": {"interactive", "cluster"?}}. */
static char *exec_info(const ls_exec_config *c, bool interactive)
{
    cJSON *info = cJSON_CreateObject();
    cJSON_AddStringToObject(info, "apiVersion", c->api_version);
    cJSON_AddStringToObject(info, "kind", "ExecCredential");
    cJSON *spec = cJSON_AddObjectToObject(info, "spec");
    cJSON_AddBoolToObject(spec, "interactive", interactive);
    if (c->provide_cluster_info && c->cluster_json) {
        cJSON *cluster = cJSON_Parse(c->cluster_json);
        if (cluster)
            cJSON_AddItemToObject(spec, "cluster", cluster);
    }
    char *text = cJSON_PrintUnformatted(info);
    cJSON_Delete(info);
    return text;
}

static bool overridden(const ls_exec_config *c, const char *entry)
{
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
    if (n == strlen("KUBERNETES_EXEC_INFO") && strncmp(entry, "KUBERNETES_EXEC_INFO", n) == 0)
        return true;
    for (uint32_t i = 0; i < c->n_env; i++)
        if (strncmp(c->env[i], entry, n) == 0 && c->env[i][n] == '=')
            return true;
    return false;
}

/* The process environment, then the configured env, then KUBERNETES_EXEC_INFO
 * (later names replace earlier ones). Free with free_env. */
static char **plugin_env(const ls_exec_config *c, const char *info)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = ls_xcalloc(n + c->n_env + 2, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!overridden(c, environ[i]))
            env[k++] = ls_xstrdup(environ[i]);
    for (uint32_t i = 0; i < c->n_env; i++)
        env[k++] = ls_xstrdup(c->env[i]);
    size_t len = strlen(info) + sizeof "KUBERNETES_EXEC_INFO=";
    env[k] = ls_xmalloc(len);
    snprintf(env[k], len, "KUBERNETES_EXEC_INFO=%s", info);
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env[i]; i++)
        free(env[i]);
    free(env);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the child's stdout to EOF (bounded in size and time). */
static bool read_output(int fd, char **out, size_t *len, ls_error *err, const char *cmd)
{
    size_t cap = 4096, n = 0;
    char *buf = ls_xmalloc(cap);
    int64_t deadline = mono_ms() + RUN_TIMEOUT_MS;
    for (;;) {
        int64_t left = deadline - mono_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            free(buf);
            return ls_errorf(err, "exec: executable %s did not finish within %d s", cmd, RUN_TIMEOUT_MS / 1000);
        }
        if (n + 4096 > cap) {
            if (cap >= MAX_OUTPUT) {
                free(buf);
                return ls_errorf(err, "exec: executable %s wrote more than %d bytes", cmd, MAX_OUTPUT);
            }
            cap *= 2;
            buf = ls_xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return true;
}

static bool spawn_plugin(const ls_exec_config *c, bool interactive, pid_t *pid, int *out_fd, ls_error *err)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return ls_errorf(err, "exec: cannot make a pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    if (!interactive)
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    char **argv = ls_xcalloc(c->n_args + 2, sizeof *argv);
    argv[0] = c->command;
    for (uint32_t i = 0; i < c->n_args; i++)
        argv[i + 1] = c->args[i];
    char *info = exec_info(c, interactive);
    char **env = plugin_env(c, info);
    int rc = posix_spawnp(pid, c->command, &fa, NULL, argv, env);
    free_env(env);
    free(info);
    free(argv);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        if (rc == ENOENT || rc == EACCES)
            return ls_errorf(err, "exec: executable %s not found%s%s%s", c->command, NOT_INSTALLED_HELP,
                             c->install_hint ? "\n\n" : "", c->install_hint ? c->install_hint : "");
        return ls_errorf(err, "exec: %s: %s", c->command, strerror(rc));
    }
    *out_fd = pipefd[0];
    return true;
}

/* Runs the plugin: its stdout in *out on exit status 0. */
static bool run_plugin(const ls_exec_config *c, char **out, size_t *len, ls_error *err)
{
    bool tty = isatty(STDIN_FILENO);
    if (c->interactive_mode == LS_EXEC_ALWAYS && !tty)
        return ls_errorf(err, "exec plugin cannot support interactive mode: standard input is not a terminal");
    bool interactive = tty && c->interactive_mode != LS_EXEC_NEVER;
    pid_t pid = 0;
    int fd = -1;
    if (!spawn_plugin(c, interactive, &pid, &fd, err))
        return false;
    bool read_ok = read_output(fd, out, len, err, c->command);
    close(fd);
    if (!read_ok)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!read_ok)
        return false;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(*out);
        *out = NULL;
        if (WIFEXITED(status))
            return ls_errorf(err, "exec: executable %s failed with exit code %d", c->command, WEXITSTATUS(status));
        return ls_errorf(err, "exec: executable %s was killed by signal %d", c->command, WTERMSIG(status));
    }
    return true;
}

/* ---- the answer */

/* RFC 3339 ("2026-11-24T21:00:00Z", fractions and offsets allowed) to Unix time. */
static bool parse_time(const char *s, time_t *out)
{
    struct tm tm = {0};
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return false;
    if (*rest == '.')
        while (*++rest >= '0' && *rest <= '9') {
        }
    long offset = 0;
    if (*rest == '+' || *rest == '-') {
        int hh, mm;
        if (sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2)
            return false;
        offset = (hh * 3600L + mm * 60L) * (*rest == '-' ? -1 : 1);
        rest += 6;
    } else if (*rest == 'Z' || *rest == 'z') {
        rest++;
    } else {
        return false;
    }
    if (*rest)
        return false;
    *out = timegm(&tm) - offset;
    return true;
}

static const char *str_field(const cJSON *o, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return v && *v ? v : NULL;
}

/* Decodes the plugin's ExecCredential into e->cred / e->expires. */
static bool decode_answer(ls_exec_cred *e, const char *text, ls_error *err)
{
    cJSON *doc = cJSON_Parse(text);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return ls_errorf(err, "decoding stdout: the output of %s is not a JSON object", e->cfg->command);
    }
    const char *api = str_field(doc, "apiVersion"), *kind = str_field(doc, "kind");
    bool ok = false;
    if (!kind || strcmp(kind, "ExecCredential") != 0)
        ls_errorf(err, "decoding stdout: expected kind ExecCredential, got \"%s\"", kind ? kind : "");
    else if (!api || strcmp(api, e->cfg->api_version) != 0)
        ls_errorf(err, "exec plugin is configured to use API version %s, plugin returned version %s",
                  e->cfg->api_version, api ? api : "");
    else {
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(doc, "status");
        const char *token = str_field(status, "token"), *cert = str_field(status, "clientCertificateData");
        const char *key = str_field(status, "clientKeyData"), *exp = str_field(status, "expirationTimestamp");
        time_t expires = 0;
        if (!cJSON_IsObject(status))
            ls_errorf(err, "exec plugin didn't return a status field");
        else if (!token && !cert && !key)
            ls_errorf(err, "exec plugin didn't return a token or cert/key pair");
        else if (!cert != !key)
            ls_errorf(err, "exec plugin returned only certificate or key, not both");
        else if (exp && !parse_time(exp, &expires))
            ls_errorf(err, "decoding stdout: status.expirationTimestamp: expected an RFC 3339 time, got \"%s\"",
                      exp);
        else {
            ls_exec_result_free(&e->cred);
            e->cred.token = dup_opt(token);
            e->cred.cert_pem = dup_opt(cert);
            e->cred.cert_len = cert ? strlen(cert) : 0;
            e->cred.key_pem = dup_opt(key);
            e->cred.key_len = key ? strlen(key) : 0;
            e->cred.generation = ++e->generation;
            e->expires = expires;
            e->cached = true;
            ok = true;
        }
    }
    cJSON_Delete(doc);
    return ok;
}

static void copy_result(ls_exec_result *dst, const ls_exec_result *src)
{
    dst->token = dup_opt(src->token);
    dst->cert_pem = dup_opt(src->cert_pem);
    dst->cert_len = src->cert_len;
    dst->key_pem = dup_opt(src->key_pem);
    dst->key_len = src->key_len;
    dst->generation = src->generation;
}

bool ls_exec_cred_get(ls_exec_cred *e, ls_exec_result *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&e->mu);
    bool ok = true;
    if (!e->cached || (e->expires && time(NULL) >= e->expires)) {
        char *text = NULL;
        size_t len;
        e->runs++;
        ok = run_plugin(e->cfg, &text, &len, err) && decode_answer(e, text, err);
        free(text);
    }
    if (ok)
        copy_result(out, &e->cred);
    pthread_mutex_unlock(&e->mu);
    return ok;
}

void ls_exec_cred_invalidate(ls_exec_cred *e, uint64_t generation)
{
    pthread_mutex_lock(&e->mu);
    if (e->cached && e->cred.generation == generation)
        e->cached = false;
    pthread_mutex_unlock(&e->mu);
}
