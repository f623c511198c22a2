/*
 * bench_internal.h: the bench cluster's state, shared by bench_cluster.c
 * (objects, the scheduler source, the sampler), bench_churn.c (the churn
 * operation) and bench_ops.c (a staged workload's ops). Internal to the CLI.
 */
#ifndef LS_CLI_BENCH_INTERNAL_H
#define LS_CLI_BENCH_INTERNAL_H

#include "cli/bench.h"
#include "luasched/map.h"

typedef struct bench_pod {
    ls_pod_obj *obj;
    uint8_t role;
    uint8_t state;
    bool added;
    bool attempted;             /* staged workloads: the scheduler tried it at least once */
    uint32_t op;                /* staged workloads: the createPods op that made it, + 1 (0: none) */
} bench_pod;

typedef struct bench_node {
    ls_node_obj *obj;
    bool deleted;
} bench_node;

typedef struct bench_object {
    ls_object_obj *obj;
    bool deleted;
} bench_object;

/* What a churn step created, so that recreate mode can delete it. */
enum { REF_NONE, REF_POD, REF_NODE, REF_OBJECT };
typedef struct churn_ref {
    uint8_t kind;
    uint32_t index;
} churn_ref;

/* A cluster event held back until the attempt ends (see the top). */
enum { EV_POD_UPDATE, EV_POD_DELETE };
typedef struct held_event {
    uint8_t kind;
    uint32_t pod;
} held_event;

struct bench_cluster {
    const bench_workload *w;
    ls_scheduler *sched;
    ls_vec pods;                /* bench_pod, index = pod id */
    ls_vec nodes;               /* bench_node, index = node id */
    ls_vec objects;             /* bench_object */
    ls_vec held;                /* held_event, in order */
    ls_map node_names;          /* live nodes: name -> index + 1 */
    uint32_t node_counter, pod_counter, object_counter, gang_counter;
    char gang_name[256];        /* the group the next gang pods join */

    uint64_t next_seq;          /* arrival order in the queue */
    /* the churn operation */
    bool churning;
    uint64_t next_tick_ms;
    uint32_t next_heartbeat;    /* heartbeat mode: the next node to report */
    churn_ref *slots;           /* recreate: number x templates */
    /* the measurement */
    bool measuring;
    double end_time, last_progress, last_idle_check;
    volatile sig_atomic_t stop;
    bench_counts counts;
    bench_sampler sampler;
    struct bench_ops_state *ops;   /* a staged workload's progress (bench_ops.c), or NULL */
};

/* Object builders (bench_cluster.c). Objects are kept until the cluster is freed. */
void bench_set_name(cJSON *tmpl, const char *name, const char *ns);
void bench_set_label(cJSON *tmpl, const char *key, const char *value);
ls_node_obj *bench_make_node(bench_cluster *c, cJSON *tmpl, const char *where, bool single, const char *zone_key,
                       const char *zone, ls_error *err);
void bench_add_node(bench_cluster *c, ls_node_obj *n);
void bench_add_object(bench_cluster *c, ls_object_obj *o);
bool bench_create_namespace(bench_cluster *c, const char *name, ls_error *err);
ls_pod_obj *bench_make_pod(bench_cluster *c, cJSON *tmpl, const char *where, const char *ns, ls_error *err);
ls_pod_obj *bench_make_group_pod(bench_cluster *c, const bench_group *g, uint32_t k, ls_error *err);
bench_pod *bench_push_pod(bench_cluster *c, ls_pod_obj *p, int role);
void bench_add_pod(bench_cluster *c, bench_pod *bp);
void bench_delete_pod(bench_cluster *c, bench_pod *bp);
/* The n-th object of a template: generateName + n; a fixed name is used as
 * is when the template makes a single object. */
void bench_object_name(const cJSON *tmpl, const char *fallback, uint32_t n, bool single, char *buf, size_t len);
/* Errors name `where` (the workload file's template). */
ls_decode_ctx bench_decode_ctx(const char *where);
ls_object_obj *bench_decode_object(cJSON *json, const char *where, ls_error *err);
/* One churn tick (bench_churn.c). */
void bench_churn_tick(bench_cluster *c);
/* A node's CSINode from the group's template; a pod's bound PersistentVolume and
 * claim (the pod's volume "vol" uses the claim). */
bool bench_create_csinode(bench_cluster *c, const bench_group *g, ls_str node, ls_error *err);
bool bench_create_pod_volumes(bench_cluster *c, const bench_group *g, cJSON *pod, const char *pv_name,
                              const char *pvc_name, ls_error *err);

/* Staged workloads (bench_ops.c): an attempt's outcome and the source's hooks. */
void bench_ops_on_attempt(bench_cluster *c, bench_pod *bp, bool bound);
bool bench_ops_next_change(bench_cluster *c, uint64_t *at_ms);
void bench_ops_advance(bench_cluster *c, uint64_t now_ms);
void bench_ops_free(bench_cluster *c);

#endif
