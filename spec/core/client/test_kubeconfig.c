/*
 * test_kubeconfig.c: kubeconfig files and in-cluster configuration
 * (client/kubeconfig.c): contexts, data vs file fields, paths relative to the
 * kubeconfig, tokenFile, --master, the service-account directory (through
 * LUASCHED_SERVICEACCOUNT_DIR), and every error message with file:line.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/kubeconfig.h"
#include "test.h"

static char dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static const char *path_of(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* "-----BEGIN TEST-----\n" and friends, base64-encoded */
#define CA_B64 "Q0EtREFUQQ=="        /* "CA-DATA" */
#define CERT_B64 "Q0VSVC1EQVRB"      /* "CERT-DATA" */
#define KEY_B64 "S0VZLURBVEE="       /* "KEY-DATA" */

static const char good[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: main\n"
    "clusters:\n"
    "- name: a\n"
    "  cluster:\n"
    "    server: https://a.example:6443/\n"
    "    certificate-authority: ca.pem\n"
    "- name: b\n"
    "  cluster:\n"
    "    server: http://127.0.0.1:8080\n"
    "    certificate-authority-data: " CA_B64 "\n"
    "    certificate-authority: missing-but-data-wins.pem\n"
    "    insecure-skip-tls-verify: true\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " CERT_B64 "\n"
    "    client-key-data: " KEY_B64 "\n"
    "    token: inline-token\n"
    "- name: robot\n"
    "  user:\n"
    "    tokenFile: secrets/token\n"
    "    token: loses-to-the-file\n"
    "- name: files\n"
    "  user:\n"
    "    client-certificate: client.crt\n"
    "    client-key: client.key\n"
    "contexts:\n"
    "- name: main\n"
    "  context: {cluster: a, user: admin, namespace: team}\n"
    "- name: other\n"
    "  context: {cluster: b, user: robot}\n"
    "- name: anon\n"
    "  context: {cluster: b}\n"
    "- name: certfiles\n"
    "  context: {cluster: a, user: files}\n";

static void test_contexts(void)
{
    write_file("kc.yaml", good);
    write_file("ca.pem", "CA-FROM-FILE\n");
    write_file("client.crt", "CRT-FILE");
    write_file("client.key", "KEY-FILE");
    char sub[512];
    snprintf(sub, sizeof sub, "%s/secrets", dir);
    mkdir(sub, 0700);
    write_file("secrets/token", "file-token\n");

    ls_kubeconfig cfg;
    ls_error err = {{0}};
    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), NULL, NULL, &cfg, &err));
    CHECK_STR(cfg.server, "https://a.example:6443");
    CHECK_STR(cfg.ca_pem, "CA-FROM-FILE\n");
    CHECK_INT(cfg.ca_len, 13);
    CHECK_STR(cfg.cert_pem, "CERT-DATA");
    CHECK_STR(cfg.key_pem, "KEY-DATA");
    CHECK_INT(cfg.key_len, 8);
    CHECK_STR(cfg.token, "inline-token");
    CHECK(cfg.token_file == NULL);
    CHECK(!cfg.insecure);
    CHECK_STR(cfg.namespace, "team");
    CHECK_STR(cfg.context, "main");
    ls_kubeconfig_free(&cfg);

    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), "other", NULL, &cfg, &err));
    CHECK_STR(cfg.server, "http://127.0.0.1:8080");
    CHECK_STR(cfg.ca_pem, "CA-DATA");
    CHECK(cfg.insecure);
    CHECK_STR(cfg.token, "file-token");
    CHECK_CONTAINS(cfg.token_file, "/secrets/token");
    CHECK(cfg.cert_pem == NULL);
    CHECK_STR(cfg.namespace, "default");
    ls_kubeconfig_free(&cfg);

    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), "anon", "https://override:1/", &cfg, &err));
    CHECK_STR(cfg.server, "https://override:1");
    CHECK(cfg.token == NULL);
    ls_kubeconfig_free(&cfg);

    CHECK(ls_kubeconfig_load(path_of("kc.yaml"), "certfiles", NULL, &cfg, &err));
    CHECK_STR(cfg.cert_pem, "CRT-FILE");
    CHECK_STR(cfg.key_pem, "KEY-FILE");
    ls_kubeconfig_free(&cfg);

    /* only a master */
    CHECK(ls_kubeconfig_load(NULL, NULL, "http://127.0.0.1:1234", &cfg, &err));
    CHECK_STR(cfg.server, "http://127.0.0.1:1234");
    ls_kubeconfig_free(&cfg);
    CHECK(ls_kubeconfig_resolve("", NULL, "http://m:1", &cfg, &err));
    CHECK_STR(cfg.server, "http://m:1");
    ls_kubeconfig_free(&cfg);

    /* JSON works too */
    write_file("kc.json", "{\"current-context\":\"c\",\"clusters\":[{\"name\":\"k\",\"cluster\":{\"server\":\"https://j\"}}],"
                          "\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"k\"}}]}");
    CHECK(ls_kubeconfig_load(path_of("kc.json"), NULL, NULL, &cfg, &err));
    CHECK_STR(cfg.server, "https://j");
    ls_kubeconfig_free(&cfg);
}

/* Loads text as kc-bad.yaml and expects an error equal to want (after the
 * directory part of the path). */
static void expect_error(const char *text, const char *context, const char *want)
{
    write_file("kc-bad.yaml", text);
    ls_kubeconfig cfg;
    ls_error err = {{0}};
    CHECK(!ls_kubeconfig_load(path_of("kc-bad.yaml"), context, NULL, &cfg, &err));
    CHECK(cfg.server == NULL);
    const char *msg = strstr(err.msg, "kc-bad.yaml");
    CHECK_STR(msg, want);
}

static void test_errors(void)
{
    expect_error("current-context: c\n"
                 "clusters:\n"
                 "- name: a\n"
                 "  cluster: {server: https://a}\n"
                 "contexts:\n"
                 "- name: c\n"
                 "  context:\n"
                 "    cluster: x\n",
                 NULL, "kc-bad.yaml:8: contexts[0].context.cluster: no cluster named \"x\"");
    expect_error("current-context: nope\n"
                 "contexts: []\n",
                 NULL, "kc-bad.yaml:1: current-context: no context named \"nope\"");
    expect_error("clusters: []\n", NULL, "kc-bad.yaml:1: current-context: not set, and no context was given");
    expect_error("contexts: []\n", "given", "kc-bad.yaml:1: context: no context named \"given\"");
    expect_error("current-context: c\n"
                 "clusters:\n"
                 "- name: a\n"
                 "  cluster:\n"
                 "    insecure-skip-tls-verify: true\n"
                 "contexts: [{name: c, context: {cluster: a}}]\n",
                 NULL, "kc-bad.yaml:4: clusters[0].cluster.server: expected the API server's URL");
    expect_error("current-context: c\n"
                 "clusters:\n"
                 "- name: a\n"
                 "  cluster:\n"
                 "    server: https://a\n"
                 "    certificate-authority-data: '%%%'\n"
                 "contexts: [{name: c, context: {cluster: a}}]\n",
                 NULL, "kc-bad.yaml:6: clusters[0].cluster.certificate-authority-data: expected base64 data");
    expect_error("current-context: c\n"
                 "clusters:\n"
                 "- name: a\n"
                 "  cluster:\n"
                 "    server: [1]\n"
                 "contexts: [{name: c, context: {cluster: a}}]\n",
                 NULL, "kc-bad.yaml:5: clusters[0].cluster.server: expected a string");
    expect_error("current-context: c\n"
                 "clusters:\n"
                 "- name: a\n"
                 "  cluster:\n"
                 "    server: https://a\n"
                 "    insecure-skip-tls-verify: maybe\n"
                 "contexts: [{name: c, context: {cluster: a}}]\n",
                 NULL, "kc-bad.yaml:6: clusters[0].cluster.insecure-skip-tls-verify: expected true or false");
    expect_error("current-context: c\n"
                 "clusters: [{name: a, cluster: {server: https://a}}]\n"
                 "contexts: [{name: c, context: {cluster: a, user: u}}]\n",
                 NULL, "kc-bad.yaml:3: contexts[0].context.user: no user named \"u\"");
    expect_error("current-context: c\n"
                 "clusters: [{name: a, cluster: {server: https://a}}]\n"
                 "users:\n"
                 "- name: u\n"
                 "  user:\n"
                 "    exec: {command: aws}\n"
                 "contexts: [{name: c, context: {cluster: a, user: u}}]\n",
                 NULL,
                 "kc-bad.yaml:6: users[0].user.exec.apiVersion: exec plugin: invalid apiVersion \"\" (expected "
                 "client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1)");
    expect_error("current-context: c\n"
                 "clusters: [{name: a, cluster: {server: https://a}}]\n"
                 "users:\n"
                 "- name: u\n"
                 "  user:\n"
                 "    client-certificate-data: " CERT_B64 "\n"
                 "contexts: [{name: c, context: {cluster: a, user: u}}]\n",
                 NULL, "kc-bad.yaml:5: users[0].user.client-key: expected together with client-certificate");
    expect_error("current-context: c\n"
                 "clusters: {a: 1}\n"
                 "contexts: [{name: c, context: {cluster: a}}]\n",
                 NULL, "kc-bad.yaml:2: clusters: expected a list");
    expect_error("current-context: c\n"
                 "contexts:\n"
                 "- just-a-string\n",
                 NULL, "kc-bad.yaml:3: contexts[0]: expected a mapping with name and context");
    expect_error("current-context: c\n"
                 "contexts:\n"
                 "- name: c\n",
                 NULL, "kc-bad.yaml:3: contexts[0].context: expected a mapping");

    /* file references: relative to the kubeconfig's directory */
    write_file("kc-bad.yaml", "current-context: c\n"
                              "clusters:\n"
                              "- name: a\n"
                              "  cluster:\n"
                              "    server: https://a\n"
                              "    certificate-authority: nowhere/ca.pem\n"
                              "contexts: [{name: c, context: {cluster: a}}]\n");
    ls_kubeconfig cfg;
    ls_error err = {{0}};
    CHECK(!ls_kubeconfig_load(path_of("kc-bad.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "kc-bad.yaml:6: clusters[0].cluster.certificate-authority: cannot read: ");
    CHECK_CONTAINS(err.msg, "/nowhere/ca.pem: No such file or directory");

    write_file("kc-bad.yaml", "current-context: c\n"
                              "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n"
                              "clusters: [{name: a, cluster: {server: https://a}}]\n"
                              "contexts: [{name: c, context: {cluster: a, user: u}}]\n");
    CHECK(!ls_kubeconfig_load(path_of("kc-bad.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "kc-bad.yaml:2: users[0].user.tokenFile: cannot read: /nonexistent/token");

    /* syntax errors and missing files come from the document loader */
    write_file("kc-bad.yaml", "clusters: [\n");
    CHECK(!ls_kubeconfig_load(path_of("kc-bad.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "kc-bad.yaml:");
    CHECK(!ls_kubeconfig_load(path_of("none.yaml"), NULL, NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "none.yaml");
    CHECK(!ls_kubeconfig_load(NULL, NULL, NULL, &cfg, &err));
    CHECK_STR(err.msg, "kubeconfig: no file and no master given");
}

static void test_in_cluster(void)
{
    char sa[512];
    snprintf(sa, sizeof sa, "%s/sa", dir);
    mkdir(sa, 0700);
    write_file("sa/token", "sa-token\n");
    write_file("sa/ca.crt", "SA-CA");
    write_file("sa/namespace", "kube-system");
    setenv("LUASCHED_SERVICEACCOUNT_DIR", sa, 1);

    ls_kubeconfig cfg;
    ls_error err = {{0}};
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    CHECK(!ls_kubeconfig_in_cluster(&cfg, &err));
    CHECK_CONTAINS(err.msg, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    CHECK(!ls_kubeconfig_resolve(NULL, NULL, NULL, &cfg, &err));   /* neither file nor master: in cluster */
    CHECK_CONTAINS(err.msg, "KUBERNETES_SERVICE_HOST");

    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    CHECK(ls_kubeconfig_in_cluster(&cfg, &err));
    CHECK_STR(cfg.server, "https://10.96.0.1:443");
    CHECK_STR(cfg.token, "sa-token");
    CHECK_CONTAINS(cfg.token_file, "/sa/token");
    CHECK_STR(cfg.ca_pem, "SA-CA");
    CHECK_STR(cfg.namespace, "kube-system");
    ls_kubeconfig_free(&cfg);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    write_file("sa/namespace", "");
    CHECK(ls_kubeconfig_in_cluster(&cfg, &err));
    CHECK_STR(cfg.server, "https://[fd00::1]:443");
    CHECK_STR(cfg.namespace, "default");
    ls_kubeconfig_free(&cfg);

    char token[512];
    snprintf(token, sizeof token, "%s/sa/token", dir);
    unlink(token);
    CHECK(!ls_kubeconfig_in_cluster(&cfg, &err));
    CHECK_CONTAINS(err.msg, "in-cluster configuration: ");
    CHECK_CONTAINS(err.msg, "/sa/token: No such file or directory");
}

/* A kubeconfig in memory: the same fields and errors, relative files against
 * the source name's directory. */
static void test_parse_in_memory(void)
{
    char ca[600];
    snprintf(ca, sizeof ca, "%s/mem-ca.crt", dir);
    FILE *f = fopen(ca, "w");
    if (f) {
        fputs("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", f);
        fclose(f);
    }
    static const char text[] =
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters:\n- name: k\n  cluster: {server: 'https://10.0.0.1:6443/', certificate-authority: mem-ca.crt}\n"
        "users:\n- name: u\n  user: {token: abc}\n"
        "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: team}\n";
    char source[600];
    snprintf(source, sizeof source, "%s/kc-in-memory.yaml", dir);
    ls_kubeconfig cfg;
    ls_error err;
    CHECK(ls_kubeconfig_parse(text, sizeof text - 1, source, NULL, NULL, &cfg, &err));
    CHECK_STR(cfg.server, "https://10.0.0.1:6443");
    CHECK_STR(cfg.token, "abc");
    CHECK_STR(cfg.namespace, "team");
    CHECK(cfg.ca_pem && strstr(cfg.ca_pem, "BEGIN CERTIFICATE"));
    ls_kubeconfig_free(&cfg);
    CHECK(!ls_kubeconfig_parse(text, sizeof text - 1, "mem.yaml", "nope", NULL, &cfg, &err));
    CHECK_CONTAINS(err.msg, "mem.yaml");
    CHECK_CONTAINS(err.msg, "nope");
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/luasched-kc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_contexts();
    test_errors();
    test_in_cluster();
    test_parse_in_memory();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
