/*
 * api_auth.h: who the served cluster knows and what it lets them do, for
 * clients that delegate authentication and authorization to the API server
 * (`luasched run`'s secured /metrics and /configz, as kube-scheduler):
 * TokenReview and SubjectAccessReview, and an audit log of the requests it
 * served (verb, group, resource, subresource), from which a test derives the
 * RBAC rules luasched needs.
 *
 * Users: the admin token of --token (user "luasched-serve-admin", group
 * system:masters) and each --serve-user TOKEN=NAME[:GROUP,GROUP...]. Only the
 * admin may call the resource API; every known token authenticates in a
 * TokenReview. The SubjectAccessReview policy is two of upstream's default
 * bindings: system:masters may do anything, and the system:monitoring group
 * may `get` upstream's system:monitoring paths (/healthz, /livez, /readyz and
 * their sub-paths, /metrics, /metrics/slis). Everything else is denied.
 */
#ifndef LS_SIM_API_AUTH_H
#define LS_SIM_API_AUTH_H

#include "server/http.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct api_auth api_auth;

/* admin_token NULL: no authentication at all (every request is the admin). */
api_auth *api_auth_new(const char *admin_token);
void api_auth_free(api_auth *a);
/* Adds "TOKEN=NAME[:GROUP,GROUP...]"; false with err set on a malformed spec. */
bool api_auth_add_user(api_auth *a, const char *spec, ls_error *err);
/* Appends one line per served resource request to out (not owned; NULL: off). */
void api_auth_set_audit(api_auth *a, FILE *out);

/* True when the request carries the admin's bearer token (or auth is off). */
bool api_auth_is_admin(const api_auth *a, const ls_http_request *rq);
/* "VERB GROUP RESOURCE SUBRESOURCE NAMESPACE NAME", "-" for an empty field;
 * verbs are the RBAC verbs (get, list, watch, create, update, patch, delete). */
void api_auth_audit(api_auth *a, const char *verb, const char *group, const char *resource, const char *sub,
                    const char *ns, const char *name);
/* POST /apis/authentication.k8s.io/v1/tokenreviews and
 * /apis/authorization.k8s.io/v1/subjectaccessreviews: true when path is one
 * of them (the response is then filled). */
bool api_auth_review(api_auth *a, const char *path, const ls_http_request *rq, ls_http_response *rs);

#endif
