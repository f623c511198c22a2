/*
 * decode_internal.h: the decoder's state and the helpers its parts share:
 * decode_access.c (paths, errors, typed member access, lists), decode_containers.c
 * (containers and resize status) and decode.c (the Pod and Node decoders).
 * Not installed and not part of the FFI; only core/src/model uses it.
 */
#ifndef LUASCHED_DECODE_INTERNAL_H
#define LUASCHED_DECODE_INTERNAL_H

#include "luasched/model.h"
#include "model/doc.h"
#include "pod_resources.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

typedef struct dec {
    const ls_decode_ctx *ctx;
    ls_error *err;
    ls_error scratch;      /* callee messages, before the context is added */
    ls_arena *a;
    const char *kind;      /* "pod" or "node" */
    char who[512];         /* "namespace/name" or the node name, once known */
    char path[512];        /* the field being decoded, e.g. spec.containers[0] */
    size_t len;
} dec;

void dec_init(dec *d, const ls_decode_ctx *ctx, ls_error *err, ls_arena *a, const char *kind);
/* An error's location prefix, "file:line: ", "file: ", "line N: " or "" (the
 * parts that are unknown left out), into out. */
void dec_location(const ls_decode_ctx *c, const cJSON *at, char *out, size_t cap);

/* ---- field paths and errors: every dec_* that fails has reported to d->err */

/* Appends ".name" (or "name" at the root); returns the mark to pop back to. */
size_t dec_path_field(dec *d, const char *name);
void dec_path_pop(dec *d, size_t mark);
/* "file:line: pod ns/name: path: msg", at the line of `at`; returns false. */
bool dec_fail(dec *d, const cJSON *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Fails on obj.name, at the member's line (or the object's when it is absent). */
bool dec_fail_member(dec *d, const cJSON *obj, const char *name, const char *msg);

/* ---- typed access to members (absent leaves *out as it was) */

/* Members are read with ls_json_member (model/doc.h): a JSON null is absent. */
uint32_t dec_size_of(const cJSON *j);
bool dec_get_object(dec *d, const cJSON *obj, const char *name, const cJSON **out);
bool dec_get_array(dec *d, const cJSON *obj, const char *name, const cJSON **out);
bool dec_get_text(dec *d, const cJSON *obj, const char *name, const char **out);
/* Interned string; "" reads as absent. dec_require_str fails when absent. */
bool dec_get_str(dec *d, const cJSON *obj, const char *name, ls_str *out);
bool dec_require_str(dec *d, const cJSON *obj, const char *name, ls_str *out);
bool dec_get_bool(dec *d, const cJSON *obj, const char *name, uint8_t *out);
bool dec_get_int64(dec *d, const cJSON *obj, const char *name, int64_t *out, bool *present);
bool dec_get_int32(dec *d, const cJSON *obj, const char *name, int32_t *out, bool *present);
/* A string naming one of names[] (indexed by the enum value). */
bool dec_get_enum(dec *d, const cJSON *obj, const char *name, const char *const *names, int n, bool required,
                  uint8_t *out);
bool dec_get_time(dec *d, const cJSON *obj, const char *name, int64_t *out);
bool dec_labels(dec *d, const cJSON *obj, const char *name, ls_labels *out);
/* A ResourceList; *set (may be NULL) gets a bit per slot given. */
bool dec_resources(dec *d, const cJSON *obj, const char *name, ls_resources *out, uint32_t *set);
bool dec_selector(dec *d, const cJSON *obj, const char *name, ls_selector *out);
bool dec_node_term(dec *d, const cJSON *j, const cJSON *parent, ls_node_selector_term *out);
/* An array of strings into interned ids; absent leaves *n and *out. */
bool dec_strings(dec *d, const cJSON *obj, const char *name, uint32_t *n, const ls_str **out);

/* ---- lists */

/* Decodes one list element into out (zeroed arena memory, NULL for a list that
 * is only read); ctx is what the caller passed along. */
typedef bool (*decode_item_fn)(dec *d, const cJSON *j, void *out, void *ctx);

typedef struct list_out {
    void *items;    /* arena array (item_size > 0), one entry per element */
    uint32_t n;
} list_out;

/* Every element of arr (NULL: none), each at its path [i]; out may be NULL. */
bool dec_items(dec *d, const cJSON *arr, size_t item_size, decode_item_fn fn, void *ctx, list_out *out);
/* obj.name, a list (absent: no elements), decoded by fn under its field path. */
bool dec_list(dec *d, const cJSON *obj, const char *name, size_t item_size, decode_item_fn fn, void *ctx,
              list_out *out);
/* dec_list into a record's count and array fields (set only on success); items
 * is the address of the array pointer field. DEC_LIST_INTO names them by the
 * record's convention: `field` and `n_field`. */
bool dec_list_to(dec *d, const cJSON *obj, const char *name, size_t item_size, decode_item_fn fn, void *ctx,
                 uint32_t *n, void *items);
#define DEC_LIST_INTO(d, obj, name, fn, ctx, rec, field) \
    dec_list_to((d), (obj), (name), sizeof *(rec)->field, (fn), (ctx), &(rec)->n_##field, &(rec)->field)

/* ---- a pod's containers and resize status (decode_containers.c) */

typedef struct pod_build {
    ls_vec ctrs;             /* ls_ctr_res, spec order (init first) */
    ls_pod_res_input in;     /* the pod-level parts; ctrs are attached at the end */
    ls_vec ports;            /* ls_host_port, copied into the arena at the end */
    ls_str *images;
    uint32_t n_images;
    uint8_t restart_all_rule; /* a container's restartPolicyRules restarts all containers */
    uint8_t host_network, host_users; /* spec.hostNetwork; spec.hostUsers (true when unset) */
} pod_build;

/* spec's containers, image volumes, overhead, pod-level resources, hostNetwork/hostUsers. */
bool dec_containers(dec *d, const cJSON *spec, ls_pod *pod, pod_build *b);
/* status: container statuses, the PodResizePending condition, pod-level status. */
bool dec_resize_status(dec *d, const cJSON *status, pod_build *b);
/* The requests every plugin reads, once spec and status are in. */
void dec_finish_requests(ls_pod *pod, pod_build *b);
/* NodeDeclaredFeatures: the features the spec needs a node to declare. */
void dec_infer_required_features(dec *d, ls_pod *pod, const pod_build *b);

#pragma GCC visibility pop

#endif
