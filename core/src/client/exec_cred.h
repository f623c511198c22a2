/*
 * exec_cred.h: kubeconfig `exec` credential plugins
 * (client.authentication.k8s.io/v1 and v1beta1 ExecCredential), as client-go
 * runs them: the command with its args, the process environment plus the
 * configured env, and KUBERNETES_EXEC_INFO (an ExecCredential whose spec says
 * whether the plugin may interact, and the cluster when provideClusterInfo);
 * stdout must be an ExecCredential of the same apiVersion whose status holds a
 * token or a client certificate and key. The result is kept until its
 * expirationTimestamp (for ever without one) and dropped when the API server
 * answers 401 to it, so the next request runs the plugin again.
 */
#ifndef LS_CLIENT_EXEC_CRED_H
#define LS_CLIENT_EXEC_CRED_H

#include "luasched/base.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ls_exec_interactive {
    LS_EXEC_IF_AVAILABLE = 0, LS_EXEC_NEVER, LS_EXEC_ALWAYS,
} ls_exec_interactive;

/* users[].user.exec of a kubeconfig (owned strings). */
typedef struct ls_exec_config {
    char *api_version;           /* client.authentication.k8s.io/v1 or /v1beta1 */
    char *command;
    char **args;                 /* n_args strings */
    uint32_t n_args;
    char **env;                  /* "NAME=VALUE", n_env of them */
    uint32_t n_env;
    bool provide_cluster_info;
    ls_exec_interactive interactive_mode;
    char *install_hint;          /* NULL when unset */
    char *cluster_json;          /* spec.cluster of KUBERNETES_EXEC_INFO (provideClusterInfo), or NULL */
} ls_exec_config;

ls_exec_config *ls_exec_config_copy(const ls_exec_config *c);
void ls_exec_config_free(ls_exec_config *c);

typedef struct ls_exec_cred ls_exec_cred;

/* Credentials handed to one request (owned copies). */
typedef struct ls_exec_result {
    char *token;                 /* NULL when the plugin returned a certificate only */
    char *cert_pem, *key_pem;    /* NULL when it returned a token only */
    size_t cert_len, key_len;
    uint64_t generation;         /* which run of the plugin they came from */
} ls_exec_result;

ls_exec_cred *ls_exec_cred_new(const ls_exec_config *c);
/* Another holder of the same cache (client-go shares one authenticator, and
 * so one credential, between the clients of one kubeconfig); each holder
 * calls ls_exec_cred_free, the last one frees it. */
ls_exec_cred *ls_exec_cred_ref(ls_exec_cred *e);
void ls_exec_cred_free(ls_exec_cred *e);
/* The cached credentials, running the plugin when there are none or they
 * expired. Errors read as client-go's, e.g. "exec: executable aws not found". */
bool ls_exec_cred_get(ls_exec_cred *e, ls_exec_result *out, ls_error *err);
/* The API server refused the credentials of this generation (401): the next
 * get runs the plugin again (unless another request already did). */
void ls_exec_cred_invalidate(ls_exec_cred *e, uint64_t generation);
/* How many times the plugin ran (tests). */
uint64_t ls_exec_cred_runs(const ls_exec_cred *e);
void ls_exec_result_free(ls_exec_result *r);

#endif
