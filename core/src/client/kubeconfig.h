/*
 * kubeconfig.h: where the API server is and how to authenticate (internal).
 *
 * Two sources, as kube-scheduler: a kubeconfig file (clusters / users /
 * contexts; current-context or a chosen one; --master overrides the server)
 * or the in-cluster service account. Everything is resolved at load time into
 * bytes: file references (certificate-authority, client-certificate,
 * client-key, relative to the kubeconfig's directory) are read, *-data fields
 * are base64-decoded, so the HTTP client never touches the file system except
 * to re-read a rotating token file.
 */
#ifndef LS_CLIENT_KUBECONFIG_H
#define LS_CLIENT_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "luasched/base.h"
#include "client/exec_cred.h"

typedef struct ls_kubeconfig {
    char *server;        /* "https://host:port" (no trailing slash); never NULL after a load */
    char *ca_pem;        /* CA bundle (PEM) to verify the server with; NULL: system CAs */
    size_t ca_len;
    char *cert_pem;      /* client certificate (PEM); NULL: none */
    size_t cert_len;
    char *key_pem;       /* its private key (PEM) */
    size_t key_len;
    char *token;         /* bearer token; NULL: none */
    char *token_file;    /* when set, the token came from this file and is re-read periodically */
    char *username;      /* basic auth (rare), NULL when unset */
    char *password;
    bool insecure;       /* insecure-skip-tls-verify */
    char *namespace;     /* context namespace / service account namespace; "default" when unset */
    char *context;       /* name of the context used; NULL in cluster or with only a master */
    ls_exec_config *exec;   /* users[].user.exec: a credential plugin (exec_cred.h); NULL: none */
} ls_kubeconfig;

/* Loads path (YAML or JSON). context NULL/"" uses current-context; master
 * NULL/"" keeps the cluster's server. With path NULL/"" and a master, the
 * result is just that server with no credentials. Errors read
 * "FILE:LINE: FIELD: what was expected", e.g.
 *   kc.yaml:7: contexts[0].context.cluster: no cluster named "x"
 * On failure cfg is left zeroed. */
bool ls_kubeconfig_load(const char *path, const char *context, const char *master, ls_kubeconfig *cfg,
                        ls_error *err);
/* The same on a kubeconfig in memory (YAML or JSON; need not be
 * NUL-terminated), which ls_kubeconfig_load reads its file into.
 * source_name is what errors name (NULL: "<input>") and where relative file
 * references resolve: against source_name's directory when it has a '/',
 * else against the current directory (as for a file path "kc.yaml"). */
bool ls_kubeconfig_parse(const char *text, size_t len, const char *source_name, const char *context,
                         const char *master, ls_kubeconfig *cfg, ls_error *err);
/* The service account of the pod we run in: KUBERNETES_SERVICE_HOST/PORT and
 * /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}
 * (LUASCHED_SERVICEACCOUNT_DIR overrides the directory, for tests). */
bool ls_kubeconfig_in_cluster(ls_kubeconfig *cfg, ls_error *err);
/* What kube-scheduler does with --kubeconfig / --master: both empty means in
 * cluster, otherwise ls_kubeconfig_load. */
bool ls_kubeconfig_resolve(const char *path, const char *context, const char *master, ls_kubeconfig *cfg,
                           ls_error *err);
void ls_kubeconfig_free(ls_kubeconfig *cfg);

#endif
