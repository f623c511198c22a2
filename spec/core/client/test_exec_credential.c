/*
 * test_exec_credential.c: kubeconfig exec credential plugins
 * (client/exec_cred.c, client/kubeconfig.c): the exec stanza parsed with its
 * errors (file:line, client-go's messages), and a small credential program
 * (a shell script written here) run as client-go runs it: args, env and
 * KUBERNETES_EXEC_INFO (interactive false, the cluster with provideClusterInfo)
 * reach it; a token or a client certificate comes back; the answer is cached
 * until its expirationTimestamp and dropped on a 401 (invalidate); a missing
 * command names the install hint; bad answers give client-go's messages.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/exec_cred.h"
#include "client/kubeconfig.h"
#include "test.h"

static char dir[256];

static const char *path_of(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
    FILE *f = fopen(path_of(name), "w");
    fputs(text, f);
    fclose(f);
    chmod(path_of(name), mode);
}

static char *read_text(const char *name)
{
    FILE *f = fopen(path_of(name), "r");
    if (!f)
        return ls_xstrdup("");
    char *buf = ls_xcalloc(1, 8192);
    size_t n = fread(buf, 1, 8191, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The credential program: logs its args, $GREETING and KUBERNETES_EXEC_INFO,
 * counts its runs, and prints the ExecCredential in $DIR/answer.json. */
static const char plugin[] =
    "#!/bin/sh\n"
    "d=$(dirname \"$0\")\n"
    "echo \"$@\" > \"$d/args.txt\"\n"
    "printf '%s' \"$GREETING\" > \"$d/env.txt\"\n"
    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info.json\"\n"
    "echo run >> \"$d/runs.txt\"\n"
    "cat \"$d/answer.json\"\n";

static void kubeconfig_with(const char *exec_yaml)
{
    char text[4096];
    snprintf(text, sizeof text,
             "current-context: c\n"
             "clusters:\n"
             "- name: a\n"
             "  cluster:\n"
             "    server: https://127.0.0.1:6443\n"
             "    certificate-authority-data: Q0EtREFUQQ==\n"
             "    extensions:\n"
             "    - name: client.authentication.k8s.io/exec\n"
             "      extension: {audience: luasched}\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    exec:\n%s"
             "contexts: [{name: c, context: {cluster: a, user: u}}]\n",
             exec_yaml);
    write_file("kc.yaml", text, 0600);
}

static void test_parse(void)
{
    kubeconfig_with("      apiVersion: client.authentication.k8s.io/v1\n"
                    "      command: ./cred.sh\n"
                    "      args: [get-token, --cluster, a]\n"
                    "      env: [{name: GREETING, value: hello}]\n"
                    "      provideClusterInfo: true\n"
                    "      interactiveMode: Never\n"
                    "      installHint: install cred.sh from the platform team\n");
    ls_kubeconfig cfg;
    ls_error err = {{0}};
    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK(cfg.exec != NULL);
    if (!cfg.exec)
        return;
    CHECK_STR(cfg.exec->command, path_of("./cred.sh"));   /* relative to the kubeconfig's directory */
    CHECK_INT(cfg.exec->n_args, 3);
    CHECK_STR(cfg.exec->args[1], "--cluster");
    CHECK_STR(cfg.exec->env[0], "GREETING=hello");
    CHECK_INT(cfg.exec->interactive_mode, LS_EXEC_NEVER);
    CHECK_STR(cfg.exec->cluster_json, "{\"server\":\"https://127.0.0.1:6443\",\"certificate-authority-data\":"
                                      "\"Q0EtREFUQQ==\",\"config\":{\"audience\":\"luasched\"}}");
    ls_kubeconfig_free(&cfg);

    kubeconfig_with("      apiVersion: client.authentication.k8s.io/v1\n"
                    "      command: cred.sh\n");
    CHECK(!ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "kc.yaml:13: users[0].user.exec.interactiveMode: interactiveMode must be specified for "
                            "cred.sh to use exec authentication plugin");
    kubeconfig_with("      apiVersion: client.authentication.k8s.io/v1beta1\n"
                    "      command: cred.sh\n");
    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK_INT(cfg.exec ? (int)cfg.exec->interactive_mode : -1, LS_EXEC_IF_AVAILABLE);   /* v1beta1 default */
    ls_kubeconfig_free(&cfg);
    kubeconfig_with("      apiVersion: client.authentication.k8s.io/v1alpha1\n"
                    "      command: cred.sh\n");
    CHECK(!ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "kc.yaml:14: users[0].user.exec.apiVersion: exec plugin: invalid apiVersion "
                            "\"client.authentication.k8s.io/v1alpha1\"");
    kubeconfig_with("      apiVersion: client.authentication.k8s.io/v1\n"
                    "      command: cred.sh\n"
                    "      interactiveMode: Sometimes\n");
    CHECK(!ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "users[0].user.exec.interactiveMode: invalid interactiveMode \"Sometimes\"");
}

/* A v1 config running the program with args and env. */
static ls_exec_config *config(const char *api, const char *command, ls_exec_interactive mode)
{
    static char *args[] = {"get-token", "--verbose"};
    static char *env[] = {"GREETING=hello from the kubeconfig"};
    ls_exec_config c = {.api_version = (char *)api, .command = (char *)command, .args = args, .n_args = 2,
                        .env = env, .n_env = 1, .provide_cluster_info = true, .interactive_mode = mode,
                        .install_hint = "ask the platform team for cred.sh",
                        .cluster_json = "{\"server\":\"https://127.0.0.1:6443\"}"};
    return ls_exec_config_copy(&c);
}

static int runs(void)
{
    char *t = read_text("runs.txt");
    int n = 0;
    for (char *p = t; (p = strstr(p, "run")); p += 3)
        n++;
    free(t);
    return n;
}

static void answer(const char *status_json)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":%s}",
             status_json);
    write_file("answer.json", text, 0600);
}

static void test_token_cached_until_expiry(void)
{
    write_file("cred.sh", plugin, 0755);
    unlink(path_of("runs.txt"));
    ls_exec_config *c = config("client.authentication.k8s.io/v1", path_of("cred.sh"), LS_EXEC_IF_AVAILABLE);
    ls_exec_cred *e = ls_exec_cred_new(c);
    /* Expires in 2 s: cached until then, run again after. */
    char status[256], when[64];
    time_t t = time(NULL) + 2;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    snprintf(status, sizeof status, "{\"token\":\"tok-1\",\"expirationTimestamp\":\"%s\"}", when);
    answer(status);
    ls_exec_result r;
    ls_error err = {{0}};
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_STR(r.token, "tok-1");
    CHECK(r.cert_pem == NULL);
    ls_exec_result_free(&r);
    char *args = read_text("args.txt"), *env = read_text("env.txt"), *info = read_text("info.json");
    CHECK_STR(args, "get-token --verbose\n");
    CHECK_STR(env, "hello from the kubeconfig");
    /* stdin is not a terminal under ctest: not interactive. */
    CHECK_STR(info, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"spec\":"
                    "{\"interactive\":false,\"cluster\":{\"server\":\"https://127.0.0.1:6443\"}}}");
    free(args);
    free(env);
    free(info);
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_INT(runs(), 1);   /* cached */
    uint64_t gen = r.generation;
    ls_exec_result_free(&r);
    answer("{\"token\":\"tok-2\"}");
    sleep(3);
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_STR(r.token, "tok-2");   /* expired: run again */
    CHECK_INT(runs(), 2);
    CHECK(r.generation != gen);
    ls_exec_result_free(&r);
    /* No expiry: kept, until a 401 on this generation drops it. */
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_INT(runs(), 2);
    ls_exec_cred_invalidate(e, gen);   /* an old generation's 401 changes nothing */
    ls_exec_result_free(&r);
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_INT(runs(), 2);
    answer("{\"token\":\"tok-3\"}");
    ls_exec_cred_invalidate(e, r.generation);
    ls_exec_result_free(&r);
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK_STR(r.token, "tok-3");
    CHECK_INT(runs(), 3);
    ls_exec_result_free(&r);
    CHECK_INT((int)ls_exec_cred_runs(e), 3);
    ls_exec_cred_free(e);
    ls_exec_config_free(c);
}

static void test_certificate(void)
{
    ls_exec_config *c = config("client.authentication.k8s.io/v1", path_of("cred.sh"), LS_EXEC_NEVER);
    ls_exec_cred *e = ls_exec_cred_new(c);
    answer("{\"clientCertificateData\":\"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n\","
           "\"clientKeyData\":\"-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n\"}");
    ls_exec_result r;
    ls_error err = {{0}};
    CHECK(ls_exec_cred_get(e, &r, &err));
    CHECK(r.token == NULL);
    CHECK_STR(r.cert_pem, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    CHECK_STR(r.key_pem, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
    CHECK_INT((int)r.key_len, (int)strlen(r.key_pem));
    ls_exec_result_free(&r);
    ls_exec_cred_free(e);
    ls_exec_config_free(c);
}

static void expect_failure(ls_exec_config *c, const char *status_json, const char *want)
{
    if (status_json)
        answer(status_json);
    ls_exec_cred *e = ls_exec_cred_new(c);
    ls_exec_result r;
    ls_error err = {{0}};
    CHECK(!ls_exec_cred_get(e, &r, &err));
    CHECK_STR(err.msg, want);
    ls_exec_cred_free(e);
}

static void test_errors(void)
{
    ls_exec_config *c = config("client.authentication.k8s.io/v1", path_of("cred.sh"), LS_EXEC_IF_AVAILABLE);
    expect_failure(c, "{}", "exec plugin didn't return a token or cert/key pair");
    expect_failure(c, "{\"clientCertificateData\":\"x\"}", "exec plugin returned only certificate or key, not both");
    expect_failure(c, "{\"token\":\"t\",\"expirationTimestamp\":\"tomorrow\"}",
                   "decoding stdout: status.expirationTimestamp: expected an RFC 3339 time, got \"tomorrow\"");
    write_file("answer.json", "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
                              "\"status\":{\"token\":\"t\"}}", 0600);
    expect_failure(c, NULL, "exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin "
                            "returned version client.authentication.k8s.io/v1beta1");
    write_file("answer.json", "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}", 0600);
    expect_failure(c, NULL, "exec plugin didn't return a status field");
    ls_exec_config_free(c);

    write_file("fail.sh", "#!/bin/sh\necho 'token expired, log in again' >&2\nexit 3\n", 0755);
    c = config("client.authentication.k8s.io/v1", path_of("fail.sh"), LS_EXEC_IF_AVAILABLE);
    char want[600];
    snprintf(want, sizeof want, "exec: executable %s failed with exit code 3", path_of("fail.sh"));
    expect_failure(c, NULL, want);
    ls_exec_config_free(c);

    c = config("client.authentication.k8s.io/v1", "luasched-no-such-credential-plugin", LS_EXEC_IF_AVAILABLE);
    expect_failure(c, NULL,
                   "exec: executable luasched-no-such-credential-plugin not found\n\nIt looks like you are trying to "
                   "use a client-go credential plugin that is not installed.\n\nTo learn more about this feature, "
                   "consult the documentation available at:\n      https://kubernetes.io/docs/reference/"
                   "access-authn-authz/authentication/#client-go-credential-plugins\n\nask the platform team for "
                   "cred.sh");
    ls_exec_config_free(c);

    c = config("client.authentication.k8s.io/v1", path_of("cred.sh"), LS_EXEC_ALWAYS);
    if (!isatty(STDIN_FILENO))
        expect_failure(c, "{\"token\":\"t\"}",
                       "exec plugin cannot support interactive mode: standard input is not a terminal");
    ls_exec_config_free(c);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/luasched-exec-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_parse();
    test_token_cached_until_expiry();
    test_certificate();
    test_errors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
