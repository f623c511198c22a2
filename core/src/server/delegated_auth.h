/*
 * delegated_auth.h: who may read `luasched run`'s /metrics, /configz and any
 * other path, decided as kube-scheduler decides it (its delegating
 * authentication and authorization): a bearer token is checked with a
 * TokenReview, a client certificate against --client-ca-file (user: the CN,
 * groups: the O entries), a request with neither is system:anonymous; then
 * the paths of --authorization-always-allow-paths pass, system:masters passes,
 * and every other request is a SubjectAccessReview (non-resource: path and
 * the lower-cased method as verb) against the API server.
 *
 * Answers as upstream: an invalid token is 401 on every path ({"kind":"Status",
 * ..."reason":"Unauthorized"}); a refused request is 403 with
 * `forbidden: User "NAME" cannot get path "/metrics"` (": REASON" when the
 * review gave one). TokenReview results are cached 10 s, SubjectAccessReview
 * results 10 s allowed and 10 s denied (upstream's delegating defaults).
 */
#ifndef LS_SERVER_DELEGATED_AUTH_H
#define LS_SERVER_DELEGATED_AUTH_H

#include "client/http.h"
#include "server/http.h"

#include <stdint.h>

typedef struct ls_delegated_auth ls_delegated_auth;

/* Upstream's default --authorization-always-allow-paths. */
#define LS_DEFAULT_ALWAYS_ALLOW_PATHS "/healthz,/readyz,/livez"

typedef struct ls_delegated_auth_options {
    ls_kclient *authn;             /* TokenReviews (not owned); NULL: bearer tokens are ignored */
    ls_kclient *authz;             /* SubjectAccessReviews (not owned); NULL: nothing beyond the always-allowed */
    const char *always_allow;      /* comma-separated paths (a trailing * is a prefix); NULL: the default */
    bool client_certs;             /* the server checks client certificates (--client-ca-file) */
    int64_t authn_ttl_ms, allow_ttl_ms, deny_ttl_ms;   /* 0: 10 s each */
} ls_delegated_auth_options;

ls_delegated_auth *ls_delegated_auth_new(const ls_delegated_auth_options *o);
void ls_delegated_auth_free(ls_delegated_auth *a);
/* True when rq may proceed; otherwise rs holds the 401 or 403. */
bool ls_delegated_auth_check(ls_delegated_auth *a, const ls_http_request *rq, ls_http_response *rs);
/* Reviews sent so far (tests check the caches with them). */
uint64_t ls_delegated_auth_reviews(const ls_delegated_auth *a);

#endif
