/*
 * apiserver.h: the simulated cluster served over the Kubernetes REST API
 * (`luasched simulate --serve`). An in-memory store of JSON objects with one
 * global resourceVersion counter, a bounded history ring for watches, the
 * pod binding subresource with a record of every binding (the proof that a
 * scheduler bound every pod exactly once), and an HTTP(S) front end with
 * bearer-token auth, discovery, kubectl tables and fault injection.
 *
 * The store functions below are what the HTTP layer calls, and what the unit
 * tests drive directly. Each returns an HTTP status code and sets *out to a
 * new cJSON tree the caller frees: the object (or list), or a Kubernetes
 * Status for an error. All of them take the store's lock.
 */
#ifndef LS_SIM_APISERVER_H
#define LS_SIM_APISERVER_H

#include "luasched/base.h"
#include "server/http.h"

#include <cjson/cJSON.h>
#include <stdio.h>

typedef struct ls_api ls_api;

/* One served resource: "pods" in "" / "v1", "leases" in "coordination.k8s.io" / "v1". */
typedef struct ls_api_resource {
    const char *group, *version, *plural, *singular, *kind;
    bool namespaced;
    const char *short_names;   /* comma-separated, or NULL */
    const char *subresources;  /* comma-separated: "status,binding" */
    const char *fields;        /* field selector labels beyond metadata.name/namespace, comma-separated */
} ls_api_resource;

const ls_api_resource *ls_api_resource_find(const char *group, const char *version, const char *plural);

typedef struct ls_api_faults {
    uint32_t watch_drop;       /* end every watch stream after this many events; 0 = never */
    double gone;               /* rate of watches answered with 410 Expired */
    double error;              /* rate of 500 InternalError */
    double throttle;           /* rate of 429 TooManyRequests */
    uint32_t throttle_seconds; /* Retry-After */
    uint32_t latency_ms;       /* added to every resource request */
    int provision;             /* the provisioner: an ls_provision_fault (sim/pv_controller.h) */
} ls_api_faults;

/* history: how many events the watch ring keeps (0 = 10000). */
ls_api *ls_api_new(uint32_t history, uint64_t seed);
void ls_api_free(ls_api *a);
void ls_api_set_faults(ls_api *a, const ls_api_faults *f);
/* Parses one --fault value ("watch-drop=5", "throttle=0.1:2") into f. */
bool ls_api_parse_fault(ls_api_faults *f, const char *spec, ls_error *err);

/* --serve-as: pretend to be the API server of release v1.<minor>
 * (LS_API_OLDEST_RELEASE to LS_API_NEWEST_RELEASE): discovery leaves out the
 * group versions that release did not serve, requests for them get 404, a
 * cluster file's object of one is refused, and /version reports it. Before
 * loading files. 0: the current release. */
enum { LS_API_OLDEST_RELEASE = 28, LS_API_NEWEST_RELEASE = 37 };
void ls_api_set_serve_as(ls_api *a, int minor);
/* "v1.28", "1.28", "v1.28.3" into 28; false when not a release in range. */
bool ls_api_parse_release(const char *text, int *minor);

/* Loads a cluster file: PriorityClasses first, then every other object of a
 * served kind is created (pods through admission; pods with spec.nodeName are
 * recorded as already running). Namespaces the objects use are created. */
bool ls_api_load_file(ls_api *a, const char *path, ls_error *err);

typedef struct ls_api_list_opts {
    const char *label_selector, *field_selector;
    const char *resource_version;  /* watch: start after it; "" / "0": send the current state first */
    uint32_t limit;
    const char *continue_token;
    bool bookmarks;                /* allowWatchBookmarks */
    bool send_initial_events;      /* sendInitialEvents=true (watch-list): the current state, then a
                                    * BOOKMARK annotated k8s.io/initial-events-end */
    uint32_t timeout_seconds;      /* watch; 0 = until the server stops */
    bool table;                    /* watch: objects as one-row meta.k8s.io Tables (kubectl get -w) */
    const char *include_object;    /* with table: includeObject (None, Metadata, Object) */
} ls_api_list_opts;

int ls_api_get(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, cJSON **out);
int ls_api_list(ls_api *a, const ls_api_resource *r, const char *ns, const ls_api_list_opts *o, cJSON **out);
/* obj is consumed. */
int ls_api_create(ls_api *a, const ls_api_resource *r, const char *ns, cJSON *obj, cJSON **out);
/* PUT; status_only for the status subresource. obj is consumed. */
int ls_api_update(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, cJSON *obj,
                  bool status_only, cJSON **out);
/* content_type: application/merge-patch+json or application/strategic-merge-patch+json. */
int ls_api_patch(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, const char *content_type,
                 const cJSON *patch, bool status_only, cJSON **out);
/* uid: the preconditions.uid of DeleteOptions, or NULL. */
int ls_api_delete(ls_api *a, const ls_api_resource *r, const char *ns, const char *name, const char *uid,
                  cJSON **out);
/* POST .../pods/NAME/binding with a v1 Binding. */
int ls_api_bind(ls_api *a, const char *ns, const char *name, const cJSON *binding, cJSON **out);

/* A kind Status object for an error (code 404 -> NotFound, ...). */
cJSON *ls_api_status(int code, const char *reason, const char *message);

/* Upstream's ValidateObjectMeta on annotations, for every kind: their keys and
 * values together at most LS_API_ANNOTATIONS_MAX bytes (TotalAnnotationSizeLimitB).
 * False, with the 422 message in msg ("<Kind> \"<name>\" is invalid:
 * metadata.annotations: Too long: ..."), when `obj` holds more. */
enum { LS_API_ANNOTATIONS_MAX = 256 * 1024 };
bool ls_api_annotations_fit(const cJSON *obj, const char *kind, const char *name, char *msg, size_t size);

/* ---- watch */
typedef struct ls_api_watch ls_api_watch;
/* NULL with *out a Status (and the code returned in *code) for a bad request. */
ls_api_watch *ls_api_watch_start(ls_api *a, const ls_api_resource *r, const char *ns, const ls_api_list_opts *o,
                                 int *code, cJSON **out);
/* Appends the next events (newline-delimited JSON) to out, waiting for them;
 * false when the stream is over. */
bool ls_api_watch_next(ls_api_watch *w, ls_buf *out, const volatile bool *stopping);
void ls_api_watch_free(ls_api_watch *w);
/* Wakes every watcher and makes them end (server stop). */
void ls_api_stop_watches(ls_api *a);

/* ---- the binding record */
typedef struct ls_api_record {   /* its strings belong to the store */
    char *ns, *name, *uid;
    char *node;                /* the node bound to (or running on, from the file) */
    uint32_t binds;            /* successful bindings: must end 0 or 1 */
    uint32_t refused;          /* bindings refused because the pod was already bound */
    char *refused_node;        /* the node the first refused binding asked for */
    bool running;              /* had spec.nodeName when created */
    bool deleted;
    bool missing_node;         /* bound to a node that does not exist */
} ls_api_record;

uint32_t ls_api_num_records(const ls_api *a);
const ls_api_record *ls_api_record_at(const ls_api *a, uint32_t i);
/* Prints one line per pod and the summary; false when a pod was bound twice,
 * to a missing node, or a binding was refused for a bound pod. */
bool ls_api_print_record(ls_api *a, FILE *out);
/* {"pods":[{namespace, name, uid, node, binds, refused, running, deleted,
 * missingNode}], "events": {bindings, scheduled, scheduledAtLastBinding},
 * "ok": bool}: what GET /luasched/v1/record serves. scheduledAtLastBinding
 * is how many Scheduled events existed when the latest binding was accepted. */
cJSON *ls_api_record_json(ls_api *a);

/* ---- HTTP front end */
typedef struct ls_api_server ls_api_server;
typedef struct ls_api_serve_opts {
    const char *host;
    uint16_t port;
    const char *cert_pem, *key_pem;   /* HTTPS when set */
    const char *token;                /* required bearer token; NULL = no auth */
    const char *const *users;         /* more users for TokenReview: "TOKEN=NAME[:GROUP,...]" (api_auth.h) */
    int n_users;
    FILE *audit;                      /* one line per resource request (api_auth.h); NULL = none */
    /* POST /whatif (docs/operations/what-if.md), for the admin token only as
     * the resource API: the answer (JSON, malloc'd) and its HTTP status;
     * NULL: /whatif is not found. */
    char *(*whatif)(void *ud, const char *question, size_t len, int *status);
    void *whatif_ud;
} ls_api_serve_opts;

ls_api_server *ls_api_serve(ls_api *a, const ls_api_serve_opts *o, ls_error *err);
/* The bound port; 0 for a server from ls_api_server_new. */
uint16_t ls_api_server_port(const ls_api_server *s);
/* Stops serving (ends open watches, joins the connections) and frees s; also
 * frees a server from ls_api_server_new. NULL is fine. */
void ls_api_server_stop(ls_api_server *s);

/* The request handler without the listening (what ls_api_serve serves, for
 * tests and fuzzing): token as in ls_api_serve_opts (copied; NULL = no auth).
 * Free with ls_api_server_stop. */
ls_api_server *ls_api_server_new(ls_api *a, const char *token);
/* Answers one request (see http.h for building one without a connection);
 * the caller releases rs with ls_http_response_release. A watch answers with
 * a streaming response whose producer may block waiting for events (until
 * timeoutSeconds, or ls_api_stop_watches). */
void ls_api_server_handle(ls_api_server *s, const ls_http_request *rq, ls_http_response *rs);

#endif
