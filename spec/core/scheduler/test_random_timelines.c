/*
 * test_random_timelines.c: invariants under randomized runs (issue 8).
 *
 * Each seed generates, through a PRNG of its own, a cluster file: 3-20 nodes
 * (zones, labels, NoSchedule / PreferNoSchedule / NoExecute taints, some
 * cordoned), 10-60 pods (requests, PriorityClasses incl. preemptionPolicy
 * Never, nodeSelector, node affinity, pod (anti-)affinity, spread constraints,
 * tolerations, host ports, scheduling gates, nominations, ReplicaSet owners,
 * some already running, some for another scheduler), Services, ReplicaSets and
 * PodDisruptionBudgets, and a Timeline of 5-30 steps (node adds, re-adds of
 * deleted names, deletes, label / taint / cordon / allocatable merge patches,
 * whole-node updates, pod creates (some refused by admission), deletes and
 * label patches, gate removals, object creates / patches / deletes), some at
 * equal times. The file is written to a temp dir and run through the library
 * as `luasched simulate` does, with a source that wraps the cluster's own, so
 * that after every advance of the timeline and after every attempt the
 * invariants below are checked:
 *
 *  - bind: the pod is live, unbound, ungated and ours, bound at most once, to
 *    a node that exists at that moment (by the generator's own model of the
 *    timeline), assumed there by the cache, and that node passes the simple
 *    filters (cordon, NoSchedule/NoExecute taints, nodeSelector and required
 *    node affinity, cpu / memory / pod count, host ports, required
 *    anti-affinity on kubernetes.io/hostname); the cluster accepts it;
 *  - preemption: the preemptor may preempt (not Never), each victim has a
 *    strictly lower priority and runs on the node named; the cluster accepts;
 *  - attempts: on a live, ungated pod object (the current one), never after
 *    the pod was bound, a success matching the one binding, a failure with a
 *    message; a Never pod has no victims;
 *  - the cache: exactly the model's nodes, each NodeInfo's requested and
 *    non-zero sums (and affinity lists, host ports) equal to the sums over its
 *    pods, its pods exactly the live assigned pods on that node, nothing
 *    assumed between cycles, pod counts matching the cluster; the queue holds
 *    exactly the live pending pods;
 *  - the end: ls_cluster_finish + ls_cluster_check pass, every pod's outcome is
 *    the one the model predicts (bound / pending with a reason, gated iff its
 *    gates were never removed, deleted, preempted, running, not ours), every
 *    timeline step played, activeQ empty; a pod left pending was last tried
 *    after the last change, and does not obviously fit any node.
 *
 *   ./build/test_random_timelines                              60 seeds (ctest)
 *   LUASCHED_RANDOM_SEEDS=1000 ./build/test_random_timelines   long mode
 *   LUASCHED_RANDOM_SEED=123 ./build/test_random_timelines     seed 123 alone
 *   LUASCHED_RANDOM_FIRST=5001 LUASCHED_RANDOM_SEEDS=1000 ...   seeds 5001..6000
 *   LUASCHED_RANDOM_KEEP=1 ...                                 keep every file, clean or not
 *
 * Every seed runs in a child process, so a crash, a sanitizer report, a leak
 * or a hang is pinned on its seed. A failing seed names itself and keeps its
 * file, which `luasched simulate FILE` replays (the scheduler runs with seed
 * 0, as there).
 */
#include "luasched/cache.h"
#include "luasched/framework.h"
#include "luasched/scheduler.h"
#include "sim/cluster.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ZONE_KEY "topology.kubernetes.io/zone"
#define HOST_KEY "kubernetes.io/hostname"

enum { DEFAULT_SEEDS = 60, MAX_NODES = 64, MAX_PODS = 128, MAX_STEPS = 30, MAX_OBJECTS = 48, MAX_REPORTED = 8 };

/* ---- the PRNG (splitmix64) */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t below(rng *r, uint32_t n)
{
    return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int between(rng *r, int lo, int hi)
{
    return lo + (int)below(r, (uint32_t)(hi - lo + 1));
}

static bool chance(rng *r, uint32_t percent)
{
    return below(r, 100) < percent;
}

#define PICK(r, a) ((a)[below((r), (uint32_t)(sizeof(a) / sizeof((a)[0])))])

static const char *const ZONES[] = {"zone-a", "zone-b", "zone-c"};
static const char *const APPS[] = {"web", "db", "cache", "batch"};
static const char *const CLASSES[] = {"low", "mid", "mid-never", "high", "high-never"};
static const char *const IMAGES[] = {"nginx:1.25", "redis", "postgres:16", "busybox", "registry.local/batch:2"};

/* ---- the generated world, and the model of it the checks use */

typedef enum step_kind {
    ST_NODE_ADD, ST_NODE_DELETE, ST_NODE_LABELS, ST_NODE_TAINTS, ST_NODE_ALLOCATABLE, ST_NODE_REPLACE,
    ST_POD_CREATE, ST_POD_CREATE_REJECTED, ST_POD_DELETE, ST_POD_UNGATE, ST_POD_LABELS,
    ST_OBJECT_CREATE, ST_OBJECT_DELETE, ST_OBJECT_PATCH
} step_kind;

typedef struct gnode {
    char name[24];
    bool exists0;          /* in the file */
    bool live;             /* while generating */
} gnode;

/* One pod instance: a name created again after its delete is a new instance. */
typedef struct gpod {
    char name[24], ns[16];
    bool exists0, live, ours, assigned;
    uint32_t gates0, gates;
} gpod;

/* A Service, ReplicaSet or PodDisruptionBudget. */
typedef struct gobject {
    char kind[24], name[24], ns[16];
    bool live;
} gobject;

typedef struct gstep {
    uint64_t at_ms;
    step_kind kind;
    uint32_t target;       /* node or pod instance */
    uint32_t gates_after;
} gstep;

typedef struct world {
    uint64_t seed;
    uint32_t n_zones, n_nodes, n_pods, n_init_pods, n_steps, n_objects;
    bool has_rs[4];        /* per APPS entry: ReplicaSet rs-APP in default controls some of them */
    gnode nodes[MAX_NODES];
    gobject objects[MAX_OBJECTS];
    gpod pods[MAX_PODS];
    gstep steps[MAX_STEPS];
    cJSON *docs;           /* array of objects, pods in instance order */
    cJSON *timeline;       /* array of steps */
} world;

/* ---- generating objects */

static cJSON *str_array(const char *const *items, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(items[i]));
    return a;
}

static cJSON *node_labels(rng *r, const world *w, const char *name)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, HOST_KEY, name);
    if (chance(r, 90))
        cJSON_AddStringToObject(l, ZONE_KEY, ZONES[below(r, w->n_zones)]);
    if (chance(r, 70))
        cJSON_AddStringToObject(l, "disk", chance(r, 50) ? "ssd" : "hdd");
    if (chance(r, 60)) {
        char t[8];
        snprintf(t, sizeof t, "%d", between(r, 1, 4));
        cJSON_AddStringToObject(l, "tier", t);
    }
    if (chance(r, 20))
        cJSON_AddStringToObject(l, "gpu", "true");
    return l;
}

static void add_taint(cJSON *list, const char *key, const char *value, const char *effect)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "key", key);
    if (value)
        cJSON_AddStringToObject(t, "value", value);
    cJSON_AddStringToObject(t, "effect", effect);
    cJSON_AddItemToArray(list, t);
}

/* NULL when the draw gave none. */
static cJSON *random_taints(rng *r)
{
    cJSON *list = cJSON_CreateArray();
    if (chance(r, 25))
        add_taint(list, "dedicated", "infra", "NoSchedule");
    if (chance(r, 25))
        add_taint(list, "spot", "true", "PreferNoSchedule");
    if (chance(r, 5))
        add_taint(list, "maintenance", NULL, "NoExecute");
    if (cJSON_GetArraySize(list) == 0) {
        cJSON_Delete(list);
        return NULL;
    }
    return list;
}

static cJSON *random_allocatable(rng *r)
{
    static const char *const cpu[] = {"1", "2", "4", "8", "16", "3500m"};
    static const char *const mem[] = {"2Gi", "4Gi", "8Gi", "16Gi", "32Gi"};
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "cpu", PICK(r, cpu));
    cJSON_AddStringToObject(a, "memory", PICK(r, mem));
    char pods[8];
    snprintf(pods, sizeof pods, "%d", chance(r, 10) ? between(r, 2, 6) : 110);
    cJSON_AddStringToObject(a, "pods", pods);
    return a;
}

static cJSON *make_node(rng *r, const world *w, const char *name)
{
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "apiVersion", "v1");
    cJSON_AddStringToObject(n, "kind", "Node");
    cJSON *meta = cJSON_AddObjectToObject(n, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddItemToObject(meta, "labels", node_labels(r, w, name));
    cJSON *spec = cJSON_CreateObject();
    cJSON *taints = random_taints(r);
    if (taints)
        cJSON_AddItemToObject(spec, "taints", taints);
    if (chance(r, 15))
        cJSON_AddBoolToObject(spec, "unschedulable", true);
    if (spec->child)
        cJSON_AddItemToObject(n, "spec", spec);
    else
        cJSON_Delete(spec);
    cJSON *status = cJSON_AddObjectToObject(n, "status");
    cJSON *alloc = random_allocatable(r);
    cJSON_AddItemToObject(status, "capacity", cJSON_Duplicate(alloc, 1));
    cJSON_AddItemToObject(status, "allocatable", alloc);
    return n;
}

static cJSON *requirement(const char *key, const char *op, const char *const *values, uint32_t n)
{
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "key", key);
    cJSON_AddStringToObject(q, "operator", op);
    if (n)
        cJSON_AddItemToObject(q, "values", str_array(values, n));
    return q;
}

static cJSON *random_node_term(rng *r, const world *w)
{
    cJSON *term = cJSON_CreateObject();
    cJSON *exprs = cJSON_AddArrayToObject(term, "matchExpressions");
    const char *v[3];
    switch (below(r, 6)) {
    case 0: {
        uint32_t n = 1 + below(r, w->n_zones);
        uint32_t start = below(r, w->n_zones);
        for (uint32_t i = 0; i < n; i++)
            v[i] = ZONES[(start + i) % w->n_zones];
        cJSON_AddItemToArray(exprs, requirement(ZONE_KEY, "In", v, n));
        break;
    }
    case 1:
        v[0] = chance(r, 50) ? "1" : "2";
        cJSON_AddItemToArray(exprs, requirement("tier", "Gt", v, 1));
        break;
    case 2:
        v[0] = "hdd";
        cJSON_AddItemToArray(exprs, requirement("disk", "NotIn", v, 1));
        break;
    case 3: cJSON_AddItemToArray(exprs, requirement("gpu", "DoesNotExist", NULL, 0)); break;
    case 4: cJSON_AddItemToArray(exprs, requirement("disk", "Exists", NULL, 0)); break;
    default:
        v[0] = "4";
        cJSON_AddItemToArray(exprs, requirement("tier", "Lt", v, 1));
        break;
    }
    if (chance(r, 5) && w->n_nodes) {
        v[0] = w->nodes[below(r, w->n_nodes)].name;
        cJSON *fields = cJSON_AddArrayToObject(term, "matchFields");
        cJSON_AddItemToArray(fields, requirement("metadata.name", "In", v, 1));
    }
    return term;
}

static cJSON *pod_term(rng *r, const char *app, const char *topology_key)
{
    cJSON *t = cJSON_CreateObject();
    cJSON *sel = cJSON_AddObjectToObject(t, "labelSelector");
    cJSON *ml = cJSON_AddObjectToObject(sel, "matchLabels");
    cJSON_AddStringToObject(ml, "app", app);
    if (chance(r, 10)) {
        static const char *const both[] = {"default", "team-b"};
        cJSON_AddItemToObject(t, "namespaces", str_array(both, 2));
    }
    cJSON_AddStringToObject(t, "topologyKey", topology_key);
    return t;
}

static cJSON *weighted_pod_term(rng *r, const char *app, const char *topology_key)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "weight", between(r, 1, 100));
    cJSON_AddItemToObject(t, "podAffinityTerm", pod_term(r, app, topology_key));
    return t;
}

/* NULL when the draw gave none. */
static cJSON *random_affinity(rng *r, const world *w, const char *app)
{
    cJSON *aff = cJSON_CreateObject();
    if (chance(r, 25) || chance(r, 20)) {
        cJSON *na = cJSON_AddObjectToObject(aff, "nodeAffinity");
        if (chance(r, 55)) {
            cJSON *req = cJSON_AddObjectToObject(na, "requiredDuringSchedulingIgnoredDuringExecution");
            cJSON *terms = cJSON_AddArrayToObject(req, "nodeSelectorTerms");
            cJSON_AddItemToArray(terms, random_node_term(r, w));
            if (chance(r, 30))
                cJSON_AddItemToArray(terms, random_node_term(r, w));
        }
        if (!na->child || chance(r, 45)) {
            cJSON *pref = cJSON_AddArrayToObject(na, "preferredDuringSchedulingIgnoredDuringExecution");
            for (int i = 0, n = between(r, 1, 2); i < n; i++) {
                cJSON *p = cJSON_CreateObject();
                cJSON_AddNumberToObject(p, "weight", between(r, 1, 100));
                cJSON_AddItemToObject(p, "preference", random_node_term(r, w));
                cJSON_AddItemToArray(pref, p);
            }
        }
    }
    if (chance(r, 10) || chance(r, 15)) {
        cJSON *pa = cJSON_AddObjectToObject(aff, "podAffinity");
        if (chance(r, 45)) {
            cJSON *req = cJSON_AddArrayToObject(pa, "requiredDuringSchedulingIgnoredDuringExecution");
            cJSON_AddItemToArray(req, pod_term(r, PICK(r, APPS), chance(r, 70) ? ZONE_KEY : HOST_KEY));
        }
        if (!pa->child || chance(r, 40)) {
            cJSON *pref = cJSON_AddArrayToObject(pa, "preferredDuringSchedulingIgnoredDuringExecution");
            cJSON_AddItemToArray(pref, weighted_pod_term(r, PICK(r, APPS), chance(r, 50) ? ZONE_KEY : HOST_KEY));
        }
    }
    if (chance(r, 20) || chance(r, 15)) {
        cJSON *pa = cJSON_AddObjectToObject(aff, "podAntiAffinity");
        if (chance(r, 60)) {
            cJSON *req = cJSON_AddArrayToObject(pa, "requiredDuringSchedulingIgnoredDuringExecution");
            cJSON_AddItemToArray(req, pod_term(r, chance(r, 80) ? app : PICK(r, APPS),
                                               chance(r, 80) ? HOST_KEY : ZONE_KEY));
        }
        if (!pa->child || chance(r, 40)) {
            cJSON *pref = cJSON_AddArrayToObject(pa, "preferredDuringSchedulingIgnoredDuringExecution");
            cJSON_AddItemToArray(pref, weighted_pod_term(r, app, chance(r, 50) ? ZONE_KEY : HOST_KEY));
        }
    }
    if (!aff->child) {
        cJSON_Delete(aff);
        return NULL;
    }
    return aff;
}

static cJSON *random_spread(rng *r, const char *app, bool hashed)
{
    cJSON *list = cJSON_CreateArray();
    for (int i = 0, n = between(r, 1, 2); i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        bool hard = chance(r, 60);
        cJSON_AddNumberToObject(c, "maxSkew", between(r, 1, 2));
        cJSON_AddStringToObject(c, "topologyKey", i == 0 ? (chance(r, 60) ? ZONE_KEY : HOST_KEY)
                                                         : (chance(r, 50) ? HOST_KEY : ZONE_KEY));
        cJSON_AddStringToObject(c, "whenUnsatisfiable", hard ? "DoNotSchedule" : "ScheduleAnyway");
        cJSON *sel = cJSON_AddObjectToObject(c, "labelSelector");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(sel, "matchLabels"), "app", app);
        if (hard && chance(r, 20))
            cJSON_AddNumberToObject(c, "minDomains", between(r, 2, 3));
        if (chance(r, 10))
            cJSON_AddStringToObject(c, "nodeAffinityPolicy", "Ignore");
        if (chance(r, 15))
            cJSON_AddStringToObject(c, "nodeTaintsPolicy", "Honor");
        if (hashed && chance(r, 30)) {
            static const char *const keys[] = {"pod-template-hash"};
            cJSON_AddItemToObject(c, "matchLabelKeys", str_array(keys, 1));
        }
        cJSON_AddItemToArray(list, c);
    }
    return list;
}

static void add_toleration(cJSON *list, const char *key, const char *op, const char *value, const char *effect)
{
    cJSON *t = cJSON_CreateObject();
    if (key)
        cJSON_AddStringToObject(t, "key", key);
    cJSON_AddStringToObject(t, "operator", op);
    if (value)
        cJSON_AddStringToObject(t, "value", value);
    if (effect)
        cJSON_AddStringToObject(t, "effect", effect);
    cJSON_AddItemToArray(list, t);
}

static cJSON *random_tolerations(rng *r)
{
    cJSON *list = cJSON_CreateArray();
    if (chance(r, 30))
        add_toleration(list, "dedicated", "Equal", "infra", "NoSchedule");
    if (chance(r, 20))
        add_toleration(list, "spot", "Exists", NULL, NULL);
    if (chance(r, 5))
        add_toleration(list, NULL, "Exists", NULL, NULL);
    if (chance(r, 5))
        add_toleration(list, "node.kubernetes.io/unschedulable", "Exists", NULL, "NoSchedule");
    if (chance(r, 5))
        add_toleration(list, "maintenance", "Exists", NULL, "NoExecute");
    if (cJSON_GetArraySize(list) == 0) {
        cJSON_Delete(list);
        return NULL;
    }
    return list;
}

static cJSON *container(rng *r, const char *name, bool init, bool ports)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "image", PICK(r, IMAGES));
    cJSON *req = cJSON_CreateObject();
    char q[32];
    if (chance(r, init ? 90 : 80)) {
        snprintf(q, sizeof q, "%dm", 50 * between(r, 1, init ? 60 : 40));
        cJSON_AddStringToObject(req, "cpu", q);
    }
    if (chance(r, 75)) {
        snprintf(q, sizeof q, "%dMi", 64 * between(r, 1, 64));
        cJSON_AddStringToObject(req, "memory", q);
    }
    if (req->child)
        cJSON_AddItemToObject(cJSON_AddObjectToObject(c, "resources"), "requests", req);
    else
        cJSON_Delete(req);
    if (ports) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "containerPort", 8080);
        cJSON_AddNumberToObject(p, "hostPort", chance(r, 60) ? 8080 : 9090);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "ports"), p);
    }
    return c;
}

static cJSON *make_object(rng *r, world *w, const char *kind, const char *name, const char *ns, const char *app)
{
    gobject *o = &w->objects[w->n_objects++];
    snprintf(o->kind, sizeof o->kind, "%s", kind);
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->ns, sizeof o->ns, "%s", ns);
    o->live = true;
    cJSON *obj = cJSON_CreateObject();
    bool service = strcmp(kind, "Service") == 0, pdb = strcmp(kind, "PodDisruptionBudget") == 0;
    cJSON_AddStringToObject(obj, "apiVersion", service ? "v1" : pdb ? "policy/v1" : "apps/v1");
    cJSON_AddStringToObject(obj, "kind", kind);
    cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    char uid[48];
    snprintf(uid, sizeof uid, "uid-%s", name);
    cJSON_AddStringToObject(meta, "uid", uid);
    cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
    cJSON *sel = cJSON_AddObjectToObject(spec, "selector");
    cJSON_AddStringToObject(service ? sel : cJSON_AddObjectToObject(sel, "matchLabels"), "app", app);
    if (pdb)
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(obj, "status"), "disruptionsAllowed", between(r, 0, 2));
    return obj;
}

static int random_live_object(rng *r, const world *w)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->n_objects; i++)
        n += w->objects[i].live;
    if (!n)
        return -1;
    uint32_t k = below(r, n);
    for (uint32_t i = 0; i < w->n_objects; i++)
        if (w->objects[i].live && k-- == 0)
            return (int)i;
    return -1;
}

/* A live node's index, or -1 when none is. */
static int random_live_node(rng *r, const world *w)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->n_nodes; i++)
        n += w->nodes[i].live;
    if (!n)
        return -1;
    uint32_t k = below(r, n);
    for (uint32_t i = 0; i < w->n_nodes; i++)
        if (w->nodes[i].live && k-- == 0)
            return (int)i;
    return -1;
}

/* A new pod instance (its gpod filled in at w->pods[w->n_pods]). */
static cJSON *make_pod(rng *r, world *w, const char *name, const char *ns)
{
    gpod *gp = &w->pods[w->n_pods];
    memset(gp, 0, sizeof *gp);
    snprintf(gp->name, sizeof gp->name, "%s", name);
    snprintf(gp->ns, sizeof gp->ns, "%s", ns);
    gp->live = true;
    uint32_t app_index = below(r, 4);
    const char *app = APPS[app_index];
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "apiVersion", "v1");
    cJSON_AddStringToObject(p, "kind", "Pod");
    cJSON *meta = cJSON_AddObjectToObject(p, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
    cJSON_AddStringToObject(labels, "app", app);
    bool hashed = chance(r, 40);
    if (hashed)
        cJSON_AddStringToObject(labels, "pod-template-hash", chance(r, 50) ? "h1" : "h2");
    if (w->has_rs[app_index] && strcmp(ns, "default") == 0 && chance(r, 60)) {
        cJSON *owner = cJSON_CreateObject();
        char rs[32], uid[48];
        snprintf(rs, sizeof rs, "rs-%s", app);
        snprintf(uid, sizeof uid, "uid-%s", rs);
        cJSON_AddStringToObject(owner, "apiVersion", "apps/v1");
        cJSON_AddStringToObject(owner, "kind", "ReplicaSet");
        cJSON_AddStringToObject(owner, "name", rs);
        cJSON_AddStringToObject(owner, "uid", uid);
        cJSON_AddBoolToObject(owner, "controller", true);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
    }
    cJSON *spec = cJSON_AddObjectToObject(p, "spec");

    gp->ours = !chance(r, 5);
    if (!gp->ours)
        cJSON_AddStringToObject(spec, "schedulerName", "other-scheduler");
    int node = chance(r, 15) ? random_live_node(r, w) : -1;
    if (node >= 0) {
        gp->assigned = true;
        /* Now and then a node that does not exist (yet): the timeline may add it. */
        char future[24];
        snprintf(future, sizeof future, "node-%02u", w->n_nodes);
        cJSON_AddStringToObject(spec, "nodeName", chance(r, 10) ? future : w->nodes[node].name);
    }
    if (chance(r, 55))
        cJSON_AddStringToObject(spec, "priorityClassName", PICK(r, CLASSES));
    else if (chance(r, 8))
        cJSON_AddNumberToObject(spec, "priority", between(r, 0, 20000));
    if (chance(r, 5))
        cJSON_AddStringToObject(spec, "preemptionPolicy", chance(r, 70) ? "Never" : "PreemptLowerPriority");
    if (chance(r, 15)) {
        cJSON *sel = cJSON_AddObjectToObject(spec, "nodeSelector");
        switch (below(r, 3)) {
        case 0: cJSON_AddStringToObject(sel, "disk", "ssd"); break;
        case 1: cJSON_AddStringToObject(sel, "gpu", "true"); break;
        default: cJSON_AddStringToObject(sel, ZONE_KEY, ZONES[below(r, w->n_zones)]); break;
        }
    }
    cJSON *aff = random_affinity(r, w, app);
    if (aff)
        cJSON_AddItemToObject(spec, "affinity", aff);
    cJSON *tol = random_tolerations(r);
    if (tol)
        cJSON_AddItemToObject(spec, "tolerations", tol);
    if (chance(r, 25))
        cJSON_AddItemToObject(spec, "topologySpreadConstraints", random_spread(r, app, hashed));
    if (!gp->assigned && chance(r, 15)) {
        cJSON *gates = cJSON_AddArrayToObject(spec, "schedulingGates");
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", "example.com/gate-a");
        cJSON_AddItemToArray(gates, g);
        gp->gates = 1;
        if (chance(r, 30)) {
            g = cJSON_CreateObject();
            cJSON_AddStringToObject(g, "name", "example.com/gate-b");
            cJSON_AddItemToArray(gates, g);
            gp->gates = 2;
        }
    }
    gp->gates0 = gp->gates;
    if (chance(r, 10)) {
        cJSON *inits = cJSON_AddArrayToObject(spec, "initContainers");
        cJSON_AddItemToArray(inits, container(r, "init", true, false));
    }
    cJSON *containers = cJSON_AddArrayToObject(spec, "containers");
    bool ports = chance(r, 8);
    for (int i = 0, n = chance(r, 25) ? 2 : 1; i < n; i++) {
        char cname[16];
        snprintf(cname, sizeof cname, "c%d", i);
        cJSON_AddItemToArray(containers, container(r, cname, false, ports && i == 0));
    }
    if (gp->assigned)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "status"), "phase", "Running");
    else if (chance(r, 4) && w->n_nodes)
        /* A nomination left by an earlier scheduler, to a node that may be gone. */
        cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "status"), "nominatedNodeName",
                                chance(r, 80) ? w->nodes[below(r, w->n_nodes)].name : "node-99");
    w->n_pods++;
    return p;
}

static cJSON *priority_class(const char *name, int value, bool never, bool global_default)
{
    cJSON *pc = cJSON_CreateObject();
    cJSON_AddStringToObject(pc, "apiVersion", "scheduling.k8s.io/v1");
    cJSON_AddStringToObject(pc, "kind", "PriorityClass");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(pc, "metadata"), "name", name);
    cJSON_AddNumberToObject(pc, "value", value);
    if (global_default)
        cJSON_AddBoolToObject(pc, "globalDefault", true);
    if (never)
        cJSON_AddStringToObject(pc, "preemptionPolicy", "Never");
    return pc;
}

/* ---- generating the timeline */

static cJSON *ref(const char *kind, const char *ns, const char *name)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "kind", kind);
    cJSON *meta = cJSON_AddObjectToObject(b, "metadata");
    if (ns)
        cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON_AddStringToObject(meta, "name", name);
    return b;
}

static int random_live_pod(rng *r, const world *w, bool gated_only)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->n_pods; i++)
        n += w->pods[i].live && (!gated_only || w->pods[i].gates);
    if (!n)
        return -1;
    uint32_t k = below(r, n);
    for (uint32_t i = 0; i < w->n_pods; i++)
        if (w->pods[i].live && (!gated_only || w->pods[i].gates) && k-- == 0)
            return (int)i;
    return -1;
}

static uint32_t live_nodes(const world *w)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->n_nodes; i++)
        n += w->nodes[i].live;
    return n;
}

static step_kind draw_kind(rng *r)
{
    uint32_t x = below(r, 100);
    if (x < 12) return ST_NODE_ADD;
    if (x < 20) return ST_NODE_DELETE;
    if (x < 32) return ST_NODE_LABELS;
    if (x < 44) return ST_NODE_TAINTS;
    if (x < 48) return ST_NODE_ALLOCATABLE;
    if (x < 51) return ST_NODE_REPLACE;
    if (x < 67) return ST_POD_CREATE;
    if (x < 69) return ST_POD_CREATE_REJECTED;
    if (x < 80) return ST_POD_DELETE;
    if (x < 91) return ST_POD_UNGATE;
    if (x < 95) return ST_POD_LABELS;
    if (x < 97) return ST_OBJECT_CREATE;
    if (x < 99) return ST_OBJECT_DELETE;
    return ST_OBJECT_PATCH;
}

/* The body of one step (NULL when its kind does not apply now); fills st. */
static cJSON *make_step_body(rng *r, world *w, gstep *st, const char **op)
{
    *op = "patch";
    switch (st->kind) {
    case ST_NODE_ADD: {
        uint32_t k = w->n_nodes;
        /* Now and then a deleted node's name comes back. */
        for (uint32_t i = 0; i < w->n_nodes && chance(r, 20); i++) {
            uint32_t j = below(r, w->n_nodes);
            if (!w->nodes[j].live) {
                k = j;
                break;
            }
        }
        if (k == w->n_nodes) {
            if (w->n_nodes >= MAX_NODES)
                return NULL;
            snprintf(w->nodes[k].name, sizeof w->nodes[k].name, "node-%02u", k);
            w->n_nodes++;
        }
        w->nodes[k].live = true;
        st->target = k;
        *op = "create";
        return make_node(r, w, w->nodes[k].name);
    }
    case ST_NODE_DELETE: {
        int k = random_live_node(r, w);
        if (k < 0 || (live_nodes(w) == 1 && !chance(r, 10)))
            return NULL;
        w->nodes[k].live = false;
        st->target = (uint32_t)k;
        *op = "delete";
        return ref("Node", NULL, w->nodes[k].name);
    }
    case ST_NODE_LABELS: {
        int k = random_live_node(r, w);
        if (k < 0)
            return NULL;
        st->target = (uint32_t)k;
        cJSON *b = ref("Node", NULL, w->nodes[k].name);
        cJSON *labels = cJSON_AddObjectToObject(cJSON_GetObjectItem(b, "metadata"), "labels");
        for (int i = 0, n = between(r, 1, 2); i < n; i++) {
            const char *key, *value = NULL;
            char tier[8];
            switch (below(r, 4)) {
            case 0:
                key = "disk";
                value = chance(r, 25) ? NULL : (chance(r, 50) ? "ssd" : "hdd");
                break;
            case 1:
                key = ZONE_KEY;
                value = chance(r, 10) ? NULL : ZONES[below(r, w->n_zones)];
                break;
            case 2:
                key = "tier";
                snprintf(tier, sizeof tier, "%d", between(r, 1, 4));
                value = tier;
                break;
            default:
                key = "gpu";
                value = chance(r, 50) ? NULL : "true";
                break;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(labels, key);   /* the same key drawn twice */
            if (value)
                cJSON_AddStringToObject(labels, key, value);
            else
                cJSON_AddNullToObject(labels, key);
        }
        return b;
    }
    case ST_NODE_TAINTS: {
        int k = random_live_node(r, w);
        if (k < 0)
            return NULL;
        st->target = (uint32_t)k;
        cJSON *b = ref("Node", NULL, w->nodes[k].name);
        cJSON *spec = cJSON_AddObjectToObject(b, "spec");
        if (chance(r, 70)) {
            cJSON *taints = random_taints(r);
            if (taints)
                cJSON_AddItemToObject(spec, "taints", taints);
            else
                cJSON_AddNullToObject(spec, "taints");
        }
        if (!spec->child || chance(r, 40)) {
            if (chance(r, 40))
                cJSON_AddBoolToObject(spec, "unschedulable", true);
            else if (chance(r, 50))
                cJSON_AddBoolToObject(spec, "unschedulable", false);
            else
                cJSON_AddNullToObject(spec, "unschedulable");
        }
        return b;
    }
    case ST_NODE_ALLOCATABLE: {
        int k = random_live_node(r, w);
        if (k < 0)
            return NULL;
        st->target = (uint32_t)k;
        cJSON *b = ref("Node", NULL, w->nodes[k].name);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(b, "status"), "allocatable", random_allocatable(r));
        return b;
    }
    case ST_NODE_REPLACE: {
        /* An update step: the whole object again, labels, taints and all. */
        int k = random_live_node(r, w);
        if (k < 0)
            return NULL;
        st->target = (uint32_t)k;
        *op = "update";
        return make_node(r, w, w->nodes[k].name);
    }
    case ST_POD_CREATE_REJECTED: {
        /* Admission refuses it (no such PriorityClass): the step is skipped. */
        if (w->n_pods >= MAX_PODS)
            return NULL;
        char name[24];
        snprintf(name, sizeof name, "pod-%03u", w->n_pods);
        st->target = w->n_pods;
        *op = "create";
        cJSON *p = make_pod(r, w, name, "default");
        w->pods[st->target].live = false;
        cJSON *spec = cJSON_GetObjectItem(p, "spec");
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "priority");
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "priorityClassName");
        cJSON_AddStringToObject(spec, "priorityClassName", "no-such-class");
        return p;
    }
    case ST_POD_CREATE: {
        if (w->n_pods >= MAX_PODS)
            return NULL;
        char name[24], ns[16];
        snprintf(name, sizeof name, "pod-%03u", w->n_pods);
        snprintf(ns, sizeof ns, "%s", chance(r, 20) ? "team-b" : "default");
        /* Now and then a deleted pod's name comes back (same default uid). */
        if (chance(r, 20)) {
            uint32_t j = below(r, w->n_pods);
            bool taken = w->pods[j].live;
            for (uint32_t i = 0; i < w->n_pods && !taken; i++)
                taken = w->pods[i].live && strcmp(w->pods[i].name, w->pods[j].name) == 0 &&
                        strcmp(w->pods[i].ns, w->pods[j].ns) == 0;
            if (!taken) {
                snprintf(name, sizeof name, "%s", w->pods[j].name);
                snprintf(ns, sizeof ns, "%s", w->pods[j].ns);
            }
        }
        st->target = w->n_pods;
        *op = "create";
        return make_pod(r, w, name, ns);
    }
    case ST_POD_DELETE: {
        int k = random_live_pod(r, w, false);
        if (k < 0)
            return NULL;
        w->pods[k].live = false;
        st->target = (uint32_t)k;
        *op = "delete";
        return ref("Pod", w->pods[k].ns, w->pods[k].name);
    }
    case ST_POD_UNGATE: {
        int k = random_live_pod(r, w, true);
        if (k < 0)
            return NULL;
        gpod *gp = &w->pods[k];
        st->target = (uint32_t)k;
        cJSON *b = ref("Pod", gp->ns, gp->name);
        cJSON *spec = cJSON_AddObjectToObject(b, "spec");
        if (gp->gates == 2 && chance(r, 50)) {
            cJSON *g = cJSON_CreateObject();
            cJSON_AddStringToObject(g, "name", "example.com/gate-b");
            cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "schedulingGates"), g);
            gp->gates = 1;
        } else {
            cJSON_AddNullToObject(spec, "schedulingGates");
            gp->gates = 0;
        }
        st->gates_after = gp->gates;
        return b;
    }
    case ST_OBJECT_CREATE: {
        if (w->n_objects >= MAX_OBJECTS)
            return NULL;
        bool pdb = chance(r, 50);
        char name[24];
        snprintf(name, sizeof name, "%s-t%u", pdb ? "pdb" : "svc", w->n_objects);
        st->target = w->n_objects;
        *op = "create";
        return make_object(r, w, pdb ? "PodDisruptionBudget" : "Service", name, chance(r, 70) ? "default" : "team-b",
                           PICK(r, APPS));
    }
    case ST_OBJECT_DELETE:
    case ST_OBJECT_PATCH: {
        int k = random_live_object(r, w);
        if (k < 0)
            return NULL;
        gobject *o = &w->objects[k];
        st->target = (uint32_t)k;
        cJSON *b = ref(o->kind, o->ns, o->name);
        if (st->kind == ST_OBJECT_DELETE) {
            o->live = false;
            *op = "delete";
        } else if (strcmp(o->kind, "PodDisruptionBudget") == 0) {
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(b, "status"), "disruptionsAllowed", between(r, 0, 2));
        } else {
            cJSON *sel = cJSON_AddObjectToObject(cJSON_AddObjectToObject(b, "spec"), "selector");
            if (strcmp(o->kind, "Service") != 0)
                sel = cJSON_AddObjectToObject(sel, "matchLabels");
            cJSON_AddStringToObject(sel, "app", PICK(r, APPS));
        }
        return b;
    }
    case ST_POD_LABELS: {
        int k = random_live_pod(r, w, false);
        if (k < 0)
            return NULL;
        st->target = (uint32_t)k;
        cJSON *b = ref("Pod", w->pods[k].ns, w->pods[k].name);
        cJSON *labels = cJSON_AddObjectToObject(cJSON_GetObjectItem(b, "metadata"), "labels");
        cJSON_AddStringToObject(labels, "app", PICK(r, APPS));
        if (chance(r, 50))
            cJSON_AddStringToObject(labels, "extra", "x");
        else
            cJSON_AddNullToObject(labels, "extra");
        return b;
    }
    }
    return NULL;
}

static void format_at(uint64_t ms, char *buf, size_t len)
{
    if (ms % 1000 == 0)
        snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(buf, len, "%llums", (unsigned long long)ms);
}

static void generate(world *w, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->seed = seed;
    rng r = {seed * 0x2545f4914f6cdd1dull + 0x1234567ull};
    w->docs = cJSON_CreateArray();
    w->timeline = cJSON_CreateArray();
    w->n_zones = (uint32_t)between(&r, 1, 3);

    cJSON_AddItemToArray(w->docs, priority_class("low", 100, false, false));
    cJSON_AddItemToArray(w->docs, priority_class("mid", 1000, false, false));
    cJSON_AddItemToArray(w->docs, priority_class("mid-never", 1000, true, false));
    cJSON_AddItemToArray(w->docs, priority_class("high", 10000, false, false));
    cJSON_AddItemToArray(w->docs, priority_class("high-never", 10000, true, false));
    if (chance(&r, 30))
        cJSON_AddItemToArray(w->docs, priority_class("base", 50, chance(&r, 30), true));

    for (uint32_t a = 0; a < 4; a++) {
        char name[24];
        if (chance(&r, 25)) {
            snprintf(name, sizeof name, "svc-%s", APPS[a]);
            cJSON_AddItemToArray(w->docs, make_object(&r, w, "Service", name, "default", APPS[a]));
        }
        if (chance(&r, 25)) {
            snprintf(name, sizeof name, "rs-%s", APPS[a]);
            cJSON_AddItemToArray(w->docs, make_object(&r, w, "ReplicaSet", name, "default", APPS[a]));
            w->has_rs[a] = true;
        }
        if (chance(&r, 20)) {
            const char *ns = chance(&r, 70) ? "default" : "team-b";
            snprintf(name, sizeof name, "pdb-%s", APPS[a]);
            cJSON_AddItemToArray(w->docs, make_object(&r, w, "PodDisruptionBudget", name, ns, APPS[a]));
        }
    }

    uint32_t n_nodes = (uint32_t)between(&r, 3, 20);
    for (uint32_t i = 0; i < n_nodes; i++) {
        gnode *gn = &w->nodes[w->n_nodes++];
        snprintf(gn->name, sizeof gn->name, "node-%02u", i);
        gn->exists0 = gn->live = true;
        cJSON_AddItemToArray(w->docs, make_node(&r, w, gn->name));
    }
    uint32_t n_pods = (uint32_t)between(&r, 10, 60);
    for (uint32_t i = 0; i < n_pods; i++) {
        char name[24];
        snprintf(name, sizeof name, "pod-%03u", i);
        cJSON *p = make_pod(&r, w, name, chance(&r, 20) ? "team-b" : "default");
        w->pods[w->n_pods - 1].exists0 = true;
        cJSON_AddItemToArray(w->docs, p);
    }
    w->n_init_pods = w->n_pods;

    uint32_t n_steps = (uint32_t)between(&r, 5, MAX_STEPS);
    uint64_t t = chance(&r, 20) ? 0 : (uint64_t)between(&r, 0, 20000);
    for (uint32_t i = 0; i < n_steps; i++) {
        if (i > 0 && !chance(&r, 12))
            t += chance(&r, 70) ? 1000u * (uint64_t)between(&r, 1, 45) : (uint64_t)between(&r, 1, 45000);
        gstep *st = &w->steps[w->n_steps];
        memset(st, 0, sizeof *st);
        st->at_ms = t;
        const char *op = NULL;
        cJSON *body = NULL;
        for (int tries = 0; !body && tries < 8; tries++) {
            st->kind = tries < 6 ? draw_kind(&r) : (tries == 6 ? ST_POD_CREATE : ST_NODE_ADD);
            /* Gate removals are the point of gates: prefer them while gated pods wait. */
            if (tries == 0 && chance(&r, 10) && random_live_pod(&r, w, true) >= 0)
                st->kind = ST_POD_UNGATE;
            body = make_step_body(&r, w, st, &op);
        }
        if (!body)
            continue;
        char at[32];
        format_at(t, at, sizeof at);
        cJSON *step = cJSON_CreateObject();
        cJSON_AddStringToObject(step, "at", at);
        cJSON_AddItemToObject(step, op, body);
        cJSON_AddItemToArray(w->timeline, step);
        w->n_steps++;
    }
}

static void world_free(world *w)
{
    cJSON_Delete(w->docs);
    cJSON_Delete(w->timeline);
    w->docs = w->timeline = NULL;
}

static bool write_world(const world *w, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, "# luasched random timeline, seed %llu (spec/core/scheduler/test_random_timelines.c)\n"
               "# replay: luasched simulate %s\n",
            (unsigned long long)w->seed, path);
    for (const cJSON *d = w->docs->child; d; d = d->next) {
        char *s = cJSON_PrintUnformatted(d);
        fprintf(f, "---\n%s\n", s);
        free(s);
    }
    fprintf(f, "---\napiVersion: luasched.io/v1alpha1\nkind: Timeline\nsteps:\n");
    for (const cJSON *st = w->timeline->child; st; st = st->next) {
        char *s = cJSON_PrintUnformatted(st);
        fprintf(f, "- %s\n", s);
        free(s);
    }
    return fclose(f) == 0;
}

/* ---- the run and its checks */

typedef struct pod_book {
    uint32_t binds, successes;
    ls_str node;
    ls_str nominated;      /* the last node preemption nominated the pod to */
    bool preempted;
} pod_book;

typedef struct harness {
    const world *w;
    ls_cluster *cluster;
    ls_scheduler *sched;
    ls_sched_source inner;
    /* The model, played along with the timeline. */
    uint32_t next_step, next_id;
    ls_str node_name[MAX_NODES];
    bool node_exists[MAX_NODES];
    bool pod_live[MAX_PODS];
    uint32_t pod_gates[MAX_PODS];
    uint32_t pod_id[MAX_PODS];       /* instance -> the cluster's pod id; UINT32_MAX before creation */
    pod_book book[MAX_PODS];         /* per pod id */
    uint32_t expected_warnings;
    uint64_t last_change_ms;         /* the last step, binding or preemption that concerns our pods */
    ls_str hostname_key, unschedulable_key;
    /* Tallies. */
    uint64_t attempts, checks;
    uint32_t claimed[MAX_PODS], n_claimed;   /* victims chosen, deletion not yet seen */
    char claimed_at[400];
    uint32_t steps_played;
    char where[400];
    uint32_t violations;
    char reported[MAX_REPORTED][1400];
} harness;

static void violation(harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(harness *h, const char *fmt, ...)
{
    if (h->violations < MAX_REPORTED) {
        char msg[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(h->reported[h->violations], sizeof h->reported[0], "%s: %s", h->where, msg);
    }
    h->violations++;
}

static const char *pod_name(const ls_pod *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ls_str_get(p->ns), ls_str_get(p->name));
    return buf;
}

static int node_index(const harness *h, ls_str name)
{
    for (uint32_t k = 0; k < h->w->n_nodes; k++)
        if (h->node_name[k] == name)
            return (int)k;
    return -1;
}

static bool node_exists(const harness *h, ls_str name)
{
    int k = node_index(h, name);
    return k >= 0 && h->node_exists[k];
}

/* The cluster's record of pod id `id`, NULL when out of range. */
static const ls_sim_pod *sim_pod(const harness *h, uint32_t id)
{
    return id < MAX_PODS ? ls_cluster_pod(h->cluster, id) : NULL;
}

static bool is_assigned(ls_pod_outcome o)
{
    return o == LS_POD_RUNNING || o == LS_POD_BOUND;
}

static bool is_queued(ls_pod_outcome o)
{
    return o == LS_POD_PENDING || o == LS_POD_UNSCHEDULABLE || o == LS_POD_GATED;
}

static const char *outcome_name(ls_pod_outcome o)
{
    static const char *const names[] = {"running", "pending", "bound", "unschedulable",
                                        "gated", "not ours", "deleted", "preempted"};
    return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "?";
}

/* The cache against the cluster and the model. `in_flight` is the pod whose
 * successful attempt is being reported: it leaves the queue right after. */
static void check_state(harness *h, const ls_pod *in_flight)
{
    const ls_cache *cache = ls_scheduler_cache(h->sched);
    uint32_t n_pods = ls_cluster_num_pods(h->cluster);
    uint32_t seen[MAX_PODS] = {0};
    uint32_t n_live_nodes = 0;
    char pn[300];
    h->checks++;
    if (n_pods > MAX_PODS) {
        violation(h, "the cluster has %u pods, more than the %u generated", n_pods, (unsigned)MAX_PODS);
        return;
    }
    for (uint32_t k = 0; k < h->w->n_nodes; k++) {
        ls_str name = h->node_name[k];
        const ls_node_info *ni = ls_cache_node_info(cache, name);
        if (!h->node_exists[k]) {
            if (ni)
                violation(h, "deleted node %s is still in the cache", ls_str_get(name));
            continue;
        }
        n_live_nodes++;
        if (!ni) {
            violation(h, "node %s is missing from the cache", ls_str_get(name));
            continue;
        }
        if (!ni->node || ni->node->name != name)
            violation(h, "the cache's node %s holds node object %s", ls_str_get(name),
                      ni->node ? ls_str_get(ni->node->name) : "(none)");
        else if (memcmp(&ni->allocatable, &ni->node->allocatable, sizeof ni->allocatable) != 0)
            violation(h, "node %s: NodeInfo allocatable differs from the node's", ls_str_get(name));
        ls_resources sum;
        memset(&sum, 0, sizeof sum);
        int64_t nz_cpu = 0, nz_mem = 0;
        uint32_t with_aff = 0, with_anti = 0, ports = 0;
        for (uint32_t i = 0; i < ni->num_pods; i++) {
            const ls_pod *p = ni->pods[i];
            for (int r = 0; r < LS_MAX_RESOURCES; r++)
                sum.v[r] += p->requests.v[r];
            nz_cpu += p->nonzero_milli_cpu;
            nz_mem += p->nonzero_memory;
            with_aff += p->has_affinity != 0;
            with_anti += p->has_required_anti_affinity != 0;
            ports += p->n_host_ports;
            const ls_sim_pod *sp = p->id < n_pods ? sim_pod(h, p->id) : NULL;
            if (!sp || &sp->obj->pod != p) {
                violation(h, "node %s holds pod %s through a stale or foreign object", ls_str_get(name),
                          pod_name(p, pn, sizeof pn));
                continue;
            }
            if (!is_assigned(sp->outcome))
                violation(h, "node %s holds pod %s, which is %s", ls_str_get(name), pod_name(p, pn, sizeof pn),
                          outcome_name(sp->outcome));
            else if (p->node_name != name)
                violation(h, "node %s holds pod %s, which runs on %s", ls_str_get(name), pod_name(p, pn, sizeof pn),
                          ls_str_get(p->node_name));
            seen[p->id]++;
        }
        for (int r = 0; r < LS_MAX_RESOURCES; r++)
            if (sum.v[r] != ni->requested.v[r])
                violation(h, "node %s: requested %s is %lld, its %u pods sum to %lld", ls_str_get(name),
                          ls_resource_name((uint32_t)r), (long long)ni->requested.v[r], ni->num_pods,
                          (long long)sum.v[r]);
        if (nz_cpu != ni->nonzero_milli_cpu || nz_mem != ni->nonzero_memory)
            violation(h, "node %s: non-zero requests are %lld m / %lld B, its pods sum to %lld m / %lld B",
                      ls_str_get(name), (long long)ni->nonzero_milli_cpu, (long long)ni->nonzero_memory,
                      (long long)nz_cpu, (long long)nz_mem);
        if (with_aff != ni->num_pods_with_affinity || with_anti != ni->num_pods_with_required_anti_affinity)
            violation(h, "node %s: %u/%u pods with (anti-)affinity listed, %u/%u on it", ls_str_get(name),
                      ni->num_pods_with_affinity, ni->num_pods_with_required_anti_affinity, with_aff, with_anti);
        if (ports != ni->n_used_ports)
            violation(h, "node %s: %u used host ports, its pods have %u", ls_str_get(name), ni->n_used_ports, ports);
    }
    if (ls_cache_node_count(cache) != n_live_nodes)
        violation(h, "the cache has %u nodes, the timeline %u", ls_cache_node_count(cache), n_live_nodes);
    if (ls_cluster_num_nodes(h->cluster) != n_live_nodes)
        violation(h, "the cluster has %u nodes, the timeline %u", ls_cluster_num_nodes(h->cluster), n_live_nodes);
    if (ls_cache_assumed_count(cache) != 0)
        violation(h, "%u pods assumed between cycles", ls_cache_assumed_count(cache));

    uint32_t assigned = 0, queued = 0;
    for (uint32_t id = 0; id < n_pods; id++) {
        const ls_sim_pod *sp = sim_pod(h, id);
        const ls_pod *p = &sp->obj->pod;
        if (seen[id] > 1)
            violation(h, "pod %s is on %u NodeInfos", pod_name(p, pn, sizeof pn), seen[id]);
        if (is_assigned(sp->outcome)) {
            assigned++;
            if (!p->node_name) {
                violation(h, "pod %s is %s without a node", pod_name(p, pn, sizeof pn), outcome_name(sp->outcome));
                continue;
            }
            ls_str cached = ls_cache_pod_node(cache, p);
            if (cached != p->node_name)
                violation(h, "pod %s runs on %s, the cache has it on %s", pod_name(p, pn, sizeof pn),
                          ls_str_get(p->node_name), cached ? ls_str_get(cached) : "no node");
            if (node_exists(h, p->node_name) && seen[id] != 1)
                violation(h, "pod %s runs on %s but is not in its NodeInfo", pod_name(p, pn, sizeof pn),
                          ls_str_get(p->node_name));
        } else {
            if (seen[id])
                violation(h, "pod %s is %s but still in a NodeInfo", pod_name(p, pn, sizeof pn),
                          outcome_name(sp->outcome));
            if (is_queued(sp->outcome)) {
                queued++;
                if (ls_cache_pod_node(cache, p))
                    violation(h, "pending pod %s is in the cache on %s", pod_name(p, pn, sizeof pn),
                              ls_str_get(ls_cache_pod_node(cache, p)));
            }
        }
    }
    if (ls_cache_pod_count(cache) != assigned)
        violation(h, "the cache holds %u pods, the cluster runs %u", ls_cache_pod_count(cache), assigned);
    uint32_t expect_queued = queued + (in_flight ? 1 : 0);
    if (ls_scheduler_pending(h->sched) != expect_queued)
        violation(h, "the queue holds %u pods, %u are pending", ls_scheduler_pending(h->sched), expect_queued);
}

/* Namespaces an affinity term selects, as upstream (no namespaceSelector is generated). */
static bool term_covers_namespace(const ls_pod_affinity_term *t, const ls_pod *owner, ls_str ns)
{
    if (t->has_ns_selector)
        return false;
    if (!t->n_namespaces)
        return ns == owner->ns;
    for (uint32_t i = 0; i < t->n_namespaces; i++)
        if (t->namespaces[i] == ns)
            return true;
    return false;
}

/* The simple filters, checked again on the node a pod is being bound to
 * (assumed there: the NodeInfo counts it). */
static void check_placement(harness *h, const ls_pod *pod, ls_str node)
{
    const ls_cache *cache = ls_scheduler_cache(h->sched);
    const ls_node_info *ni = ls_cache_node_info(cache, node);
    char pn[300];
    pod_name(pod, pn, sizeof pn);
    if (!ni) {
        violation(h, "pod %s is bound to node %s, which the cache does not have", pn, ls_str_get(node));
        return;
    }
    if (!ls_cache_is_assumed(cache, pod) || ls_cache_pod_node(cache, pod) != node)
        violation(h, "pod %s is bound to %s without being assumed there", pn, ls_str_get(node));
    const ls_node *n = ni->node;
    ls_taint cordon = {.key = h->unschedulable_key, .effect = LS_EFFECT_NO_SCHEDULE};
    if (n->unschedulable && !ls_tolerations_tolerate(pod->tolerations, pod->n_tolerations, &cordon))
        violation(h, "pod %s is bound to cordoned node %s", pn, ls_str_get(node));
    int32_t t = ls_find_untolerated_taint(n->taints, n->n_taints, pod->tolerations, pod->n_tolerations,
                                          (1u << LS_EFFECT_NO_SCHEDULE) | (1u << LS_EFFECT_NO_EXECUTE));
    if (t >= 0)
        violation(h, "pod %s is bound to %s despite its untolerated taint %s", pn, ls_str_get(node),
                  ls_str_get(n->taints[t].key));
    if (!ls_pod_matches_node_affinity(pod, n))
        violation(h, "pod %s is bound to %s, which its nodeSelector / node affinity excludes", pn, ls_str_get(node));
    for (int r = 0; r <= LS_RES_EPHEMERAL; r++)
        if (pod->requests.v[r] > 0 && ni->requested.v[r] > ni->allocatable.v[r])
            violation(h, "pod %s is bound to %s, which is over its %s: %lld requested of %lld", pn,
                      ls_str_get(node), ls_resource_name((uint32_t)r), (long long)ni->requested.v[r],
                      (long long)ni->allocatable.v[r]);
    if ((int64_t)ni->num_pods > ni->allocatable.pods)
        violation(h, "pod %s is bound to %s, which now has %u pods for %lld allowed", pn, ls_str_get(node),
                  ni->num_pods, (long long)ni->allocatable.pods);
    for (uint32_t k = 0; k < pod->n_host_ports; k++) {
        const ls_host_port *hp = &pod->host_ports[k];
        uint32_t same = 0;
        for (uint32_t i = 0; i < ni->n_used_ports; i++)
            same += ni->used_ports[i].port == hp->port && ni->used_ports[i].protocol == hp->protocol;
        if (same > 1)
            violation(h, "pod %s is bound to %s, where host port %d is taken", pn, ls_str_get(node), hp->port);
    }
    if (!ls_labels_has(&n->labels, h->hostname_key))
        return;
    char other[300];
    for (uint32_t i = 0; i < ni->num_pods; i++) {
        const ls_pod *q = ni->pods[i];
        if (q == pod)
            continue;
        for (uint32_t a = 0; a < pod->n_anti_affinity; a++) {
            const ls_pod_affinity_term *term = &pod->anti_affinity[a];
            if (term->topology_key == h->hostname_key && term_covers_namespace(term, pod, q->ns) &&
                ls_selector_matches(&term->selector, &q->labels))
                violation(h, "pod %s is bound to %s next to %s, which its required anti-affinity excludes", pn,
                          ls_str_get(node), pod_name(q, other, sizeof other));
        }
        for (uint32_t a = 0; a < q->n_anti_affinity; a++) {
            const ls_pod_affinity_term *term = &q->anti_affinity[a];
            if (term->topology_key == h->hostname_key && term_covers_namespace(term, q, pod->ns) &&
                ls_selector_matches(&term->selector, &pod->labels))
                violation(h, "pod %s is bound to %s next to %s, whose required anti-affinity excludes it", pn,
                          ls_str_get(node), pod_name(q, other, sizeof other));
        }
    }
}

static bool h_bind(void *ud, const ls_pod *pod, ls_str node, ls_error *err)
{
    harness *h = ud;
    char pn[300];
    pod_name(pod, pn, sizeof pn);
    uint64_t now = ls_scheduler_now_ms(h->sched);
    snprintf(h->where, sizeof h->where, "binding of pod %s to %s at %.3f s", pn, ls_str_get(node),
             (double)now / 1000.0);
    h->last_change_ms = now;
    const ls_sim_pod *sp = sim_pod(h, pod->id);
    if (!sp || &sp->obj->pod != pod) {
        violation(h, "bind of pod %s through a stale or foreign object", pn);
    } else {
        if (sp->outcome != LS_POD_PENDING && sp->outcome != LS_POD_UNSCHEDULABLE)
            violation(h, "bind of pod %s, which is %s", pn, outcome_name(sp->outcome));
        if (h->book[pod->id].binds)
            violation(h, "pod %s bound a second time (first to %s, now to %s)", pn,
                      ls_str_get(h->book[pod->id].node), ls_str_get(node));
    }
    if (pod->n_scheduling_gates)
        violation(h, "pod %s is bound while it has %u scheduling gates", pn, pod->n_scheduling_gates);
    if (!node_exists(h, node))
        violation(h, "pod %s is bound to node %s, which does not exist now", pn, ls_str_get(node));
    check_placement(h, pod, node);
    bool ok = h->inner.bind(h->inner.ud, pod, node, err);
    if (!ok)
        violation(h, "the cluster refused the binding of pod %s to %s: %s", pn, ls_str_get(node), err->msg);
    else if (pod->id < MAX_PODS) {
        h->book[pod->id].binds++;
        h->book[pod->id].node = node;
    }
    return ok;
}

static bool h_preempt(void *ud, const ls_pod *victim, const ls_pod *preemptor, ls_str node, const char *message,
                      ls_error *err)
{
    harness *h = ud;
    char vn[300], pn[300];
    pod_name(victim, vn, sizeof vn);
    pod_name(preemptor, pn, sizeof pn);
    uint64_t now = ls_scheduler_now_ms(h->sched);
    snprintf(h->where, sizeof h->where, "preemption by pod %s on %s at %.3f s", pn, ls_str_get(node),
             (double)now / 1000.0);
    h->last_change_ms = now;
    if (preemptor->preemption_policy == LS_PREEMPT_NEVER)
        violation(h, "pod %s (preemptionPolicy Never) preempts %s", pn, vn);
    if (victim->priority >= preemptor->priority)
        violation(h, "pod %s (priority %d) preempts %s of priority %d", pn, preemptor->priority, vn, victim->priority);
    const ls_sim_pod *sp = sim_pod(h, victim->id);
    if (!sp || &sp->obj->pod != victim)
        violation(h, "victim %s given through a stale or foreign object", vn);
    else if (!is_assigned(sp->outcome))
        violation(h, "victim %s is %s", vn, outcome_name(sp->outcome));
    if (victim->node_name != node)
        violation(h, "victim %s runs on %s, preempted on %s", vn, ls_str_get(victim->node_name), ls_str_get(node));
    bool ok = h->inner.preempt(h->inner.ud, victim, preemptor, node, message, err);
    if (!ok)
        violation(h, "the cluster refused the preemption of %s: %s", vn, err->msg);
    else if (victim->id < MAX_PODS)
        h->book[victim->id].preempted = true;
    return ok;
}

/* Victims an earlier attempt chose must have been preempted through the source by now. */
static void check_claimed_victims(harness *h)
{
    for (uint32_t i = 0; i < h->n_claimed; i++)
        if (!h->book[h->claimed[i]].preempted)
            violation(h, "a victim chosen at %s was not preempted through the source", h->claimed_at);
    h->n_claimed = 0;
}

static void h_on_attempt(void *ud, const ls_attempt *a, const ls_cycle *cycle, const ls_scheduler *s)
{
    harness *h = ud;
    check_claimed_victims(h);
    const ls_pod *pod = a->pod;
    char pn[300];
    pod_name(pod, pn, sizeof pn);
    h->attempts++;
    snprintf(h->where, sizeof h->where, "attempt %llu (pod %s, at %.3f s)", (unsigned long long)h->attempts, pn,
             (double)a->time_ms / 1000.0);
    const ls_sim_pod *sp = sim_pod(h, pod->id);
    if (!sp || &sp->obj->pod != pod) {
        violation(h, "attempt on a stale or foreign pod object");
        h->inner.on_attempt(h->inner.ud, a, cycle, s);
        return;
    }
    pod_book *b = &h->book[pod->id];
    if (sp->outcome == LS_POD_DELETED || sp->outcome == LS_POD_PREEMPTED || sp->outcome == LS_POD_RUNNING)
        violation(h, "attempt on a pod that is %s", outcome_name(sp->outcome));
    if (pod->n_scheduling_gates)
        violation(h, "attempt on a pod with %u scheduling gates", pod->n_scheduling_gates);
    if (b->successes)
        violation(h, "attempt on a pod already bound to %s", ls_str_get(b->node));
    if (a->node) {
        b->successes++;
        if (b->binds != 1 || b->node != a->node)
            violation(h, "success on %s, but %u bindings (last to %s)", ls_str_get(a->node), b->binds,
                      ls_str_get(b->node));
    } else {
        if (!a->message || !a->message[0])
            violation(h, "failure without a message");
        if (b->binds)
            violation(h, "failure reported after the pod was bound to %s", ls_str_get(b->node));
    }
    if (a->nominated_node)
        b->nominated = a->nominated_node;
    if (a->n_victims && pod->preemption_policy == LS_PREEMPT_NEVER)
        violation(h, "a pod with preemptionPolicy Never preempted %u pods", a->n_victims);
    /* Async preemption: the victims' deletions are issued after the cycle, so
     * by the next attempt (or the end) each must have gone through the source. */
    for (uint32_t i = 0; i < a->n_victims; i++) {
        if (a->victims[i]->id >= MAX_PODS) {
            violation(h, "victim %u is not a pod of the cluster", i);
        } else if (!h->book[a->victims[i]->id].preempted && h->n_claimed < MAX_PODS) {
            h->claimed[h->n_claimed++] = a->victims[i]->id;
            snprintf(h->claimed_at, sizeof h->claimed_at, "%s", h->where);
        }
    }
    h->inner.on_attempt(h->inner.ud, a, cycle, s);
    check_state(h, a->node ? pod : NULL);
}

/* Whether a step due by now targets a pod the scheduler has preempted: the
 * cluster skips it with a warning ("not found"), as an API server would 404. */
static bool warning_expected(const harness *h, uint64_t now_ms)
{
    for (uint32_t i = h->next_step; i < h->w->n_steps && h->w->steps[i].at_ms <= now_ms; i++) {
        const gstep *st = &h->w->steps[i];
        if (st->kind == ST_POD_CREATE_REJECTED)
            return true;
        if (st->kind != ST_POD_DELETE && st->kind != ST_POD_LABELS && st->kind != ST_POD_UNGATE)
            continue;   /* only these name an existing pod */
        uint32_t id = h->pod_id[st->target];
        if (id < MAX_PODS && h->book[id].preempted)
            return true;
    }
    return false;
}

static void play_model(harness *h, uint64_t now_ms)
{
    while (h->next_step < h->w->n_steps && h->w->steps[h->next_step].at_ms <= now_ms) {
        const gstep *st = &h->w->steps[h->next_step++];
        bool on_pod = st->kind >= ST_POD_CREATE && st->kind <= ST_POD_LABELS;
        const gpod *gp = &h->w->pods[on_pod ? st->target : 0];
        uint32_t id = on_pod ? h->pod_id[st->target] : UINT32_MAX;
        h->steps_played++;
        /* Changes the scheduler sees: not a pending pod of another scheduler
         * arriving, nor a step the cluster skips. */
        bool skipped = st->kind == ST_POD_CREATE_REJECTED ||
                       (st->kind == ST_POD_CREATE && !gp->ours && !gp->assigned) ||
                       (st->kind > ST_POD_CREATE_REJECTED && st->kind <= ST_POD_LABELS && id < MAX_PODS &&
                        h->book[id].preempted);
        if (!skipped)
            h->last_change_ms = st->at_ms;
        switch (st->kind) {
        case ST_NODE_ADD: h->node_exists[st->target] = true; break;
        case ST_NODE_DELETE: h->node_exists[st->target] = false; break;
        case ST_NODE_LABELS:
        case ST_NODE_TAINTS:
        case ST_NODE_ALLOCATABLE:
        case ST_NODE_REPLACE:
        case ST_OBJECT_CREATE:
        case ST_OBJECT_DELETE:
        case ST_OBJECT_PATCH: break;
        case ST_POD_CREATE_REJECTED: h->expected_warnings++; break;
        case ST_POD_CREATE: {
            id = h->next_id++;
            const ls_sim_pod *sp = sim_pod(h, id);
            if (!sp || strcmp(ls_str_get(sp->obj->pod.name), gp->name) != 0 ||
                strcmp(ls_str_get(sp->obj->pod.ns), gp->ns) != 0) {
                violation(h, "pod %s/%s was not created as pod %u", gp->ns, gp->name, id);
                break;
            }
            h->pod_id[st->target] = id;
            h->pod_live[st->target] = true;
            break;
        }
        case ST_POD_DELETE:
            h->pod_live[st->target] = false;
            if (id < MAX_PODS && h->book[id].preempted)
                h->expected_warnings++;
            break;
        case ST_POD_UNGATE:
            h->pod_gates[st->target] = st->gates_after;
            if (id < MAX_PODS && h->book[id].preempted)
                h->expected_warnings++;
            break;
        case ST_POD_LABELS:
            if (id < MAX_PODS && h->book[id].preempted)
                h->expected_warnings++;
            break;
        }
    }
}

static void h_advance(void *ud, uint64_t now_ms)
{
    harness *h = ud;
    snprintf(h->where, sizeof h->where, "after the timeline at %.3f s", (double)now_ms / 1000.0);
    int saved = -1;
    if (warning_expected(h, now_ms)) {
        /* The expected "step skipped" warning would only be noise. */
        fflush(stderr);
        saved = dup(2);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 2);
            close(null);
        }
    }
    h->inner.advance_to(h->inner.ud, now_ms);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    play_model(h, now_ms);
    check_state(h, NULL);
}

static bool h_next_change(void *ud, uint64_t *at_ms)
{
    harness *h = ud;
    return h->inner.next_change_ms(h->inner.ud, at_ms);
}

/* A pod only the simple filters constrain: no nodeSelector, required node or
 * pod (anti-)affinity, hard spread constraint or host port. */
static bool simple_pod(const ls_pod *p)
{
    if (p->node_selector.n || p->has_required_node_affinity || p->n_affinity || p->n_anti_affinity ||
        p->n_host_ports)
        return false;
    for (uint32_t i = 0; i < p->n_spread_constraints; i++)
        if (p->spread_constraints[i].when_unsatisfiable == LS_DO_NOT_SCHEDULE)
            return false;
    return true;
}

/* A pod that ends pending, though it saw the cluster as it ends, must not
 * obviously fit a node: untainted (or tolerated), not cordoned, with room for
 * it and for every pod nominated there, and no running pod's required
 * anti-affinity selecting it (conservative on every count). */
static void check_no_obvious_fit(harness *h, const ls_pod *pod, const char *message)
{
    if (!simple_pod(pod))
        return;
    const ls_cache *cache = ls_scheduler_cache(h->sched);
    uint32_t n_pods = ls_cluster_num_pods(h->cluster);
    for (uint32_t id = 0; id < n_pods; id++) {
        const ls_sim_pod *sp = sim_pod(h, id);
        const ls_pod *q = &sp->obj->pod;
        if (!is_assigned(sp->outcome))
            continue;
        for (uint32_t a = 0; a < q->n_anti_affinity; a++)
            if (ls_selector_matches(&q->anti_affinity[a].selector, &pod->labels))
                return;
    }
    for (uint32_t k = 0; k < h->w->n_nodes; k++) {
        const ls_node_info *ni = h->node_exists[k] ? ls_cache_node_info(cache, h->node_name[k]) : NULL;
        if (!ni)
            continue;
        const ls_node *n = ni->node;
        ls_taint cordon = {.key = h->unschedulable_key, .effect = LS_EFFECT_NO_SCHEDULE};
        if (n->unschedulable && !ls_tolerations_tolerate(pod->tolerations, pod->n_tolerations, &cordon))
            continue;
        if (ls_find_untolerated_taint(n->taints, n->n_taints, pod->tolerations, pod->n_tolerations,
                                      (1u << LS_EFFECT_NO_SCHEDULE) | (1u << LS_EFFECT_NO_EXECUTE)) >= 0)
            continue;
        ls_resources need = ni->requested;
        int64_t count = (int64_t)ni->num_pods + 1;
        for (int r = 0; r < LS_MAX_RESOURCES; r++)
            need.v[r] += pod->requests.v[r];
        for (uint32_t id = 0; id < n_pods; id++) {
            const ls_sim_pod *sp = sim_pod(h, id);
            if (&sp->obj->pod == pod || !is_queued(sp->outcome) ||
                (h->book[id].nominated != n->name && sp->obj->pod.nominated_node_name != n->name))
                continue;
            for (int r = 0; r < LS_MAX_RESOURCES; r++)
                need.v[r] += sp->obj->pod.requests.v[r];
            count++;
        }
        bool fits = count <= ni->allocatable.pods;
        for (int r = 0; r <= LS_RES_EPHEMERAL; r++)
            fits = fits && !(pod->requests.v[r] > 0 && need.v[r] > ni->allocatable.v[r]);
        if (fits) {
            char pn[300];
            violation(h, "pod %s ends pending (%s) though node %s has room for it", pod_name(pod, pn, sizeof pn),
                      message ? message : "", ls_str_get(n->name));
            return;
        }
    }
}

/* What the model says each pod ends as. */
static void check_end(harness *h)
{
    snprintf(h->where, sizeof h->where, "at the end (%.3f s)", (double)ls_scheduler_now_ms(h->sched) / 1000.0);
    check_claimed_victims(h);
    ls_error err;
    if (!ls_cluster_check(h->cluster, &err))
        violation(h, "ls_cluster_check: %s", err.msg);
    ls_queue_gauges g = ls_scheduler_queue_gauges(h->sched);
    if (g.active)
        violation(h, "%u pods left in activeQ (%u backoff, %u unschedulable, %u gated)", g.active, g.backoff,
                  g.unschedulable, g.gated);
    if (h->steps_played != h->w->n_steps)
        violation(h, "%u of %u timeline steps played", h->steps_played, h->w->n_steps);
    const char *warning = ls_cluster_warning(h->cluster);
    if (warning && !h->expected_warnings)
        violation(h, "a timeline step was skipped: %s", warning);
    if (ls_cluster_num_pods(h->cluster) != h->next_id)
        violation(h, "the cluster has %u pods, the timeline made %u", ls_cluster_num_pods(h->cluster), h->next_id);
    char pn[300];
    for (uint32_t i = 0; i < h->w->n_pods; i++) {
        const gpod *gp = &h->w->pods[i];
        uint32_t id = h->pod_id[i];
        const ls_sim_pod *sp = sim_pod(h, id);
        if (!sp)
            continue;   /* never created: reported when its step played */
        const pod_book *b = &h->book[id];
        pod_name(&sp->obj->pod, pn, sizeof pn);
        ls_pod_outcome want;
        if (b->preempted)
            want = LS_POD_PREEMPTED;
        else if (!h->pod_live[i])
            want = LS_POD_DELETED;
        else if (gp->assigned)
            want = LS_POD_RUNNING;
        else if (!gp->ours)
            want = LS_POD_NOT_OURS;
        else if (h->pod_gates[i])
            want = LS_POD_GATED;
        else
            want = sp->outcome == LS_POD_BOUND ? LS_POD_BOUND : LS_POD_UNSCHEDULABLE;
        if (sp->outcome != want)
            violation(h, "pod %s ends %s, expected %s", pn, outcome_name(sp->outcome), outcome_name(want));
        if (b->binds > 1)
            violation(h, "pod %s was bound %u times", pn, b->binds);
        if (sp->outcome == LS_POD_BOUND && (b->binds != 1 || b->node != sp->node || b->successes != 1))
            violation(h, "pod %s ends bound to %s, the source saw %u bindings (to %s) and %u successes", pn,
                      ls_str_get(sp->node), b->binds, ls_str_get(b->node), b->successes);
        if (want == LS_POD_UNSCHEDULABLE && !sp->attempts)
            violation(h, "pod %s ends pending without an attempt", pn);
        if (want == LS_POD_UNSCHEDULABLE && sp->outcome == want) {
            if (sp->last_attempt_ms < h->last_change_ms)
                violation(h, "pod %s ends pending, last tried at %.3f s, before the last change at %.3f s", pn,
                          (double)sp->last_attempt_ms / 1000.0, (double)h->last_change_ms / 1000.0);
            else
                check_no_obvious_fit(h, &sp->obj->pod, sp->message);
        }
    }
    check_state(h, NULL);
}

/* ---- seeds
 *
 * Each seed runs in a child process: a crash, a sanitizer report, a leak or a
 * hang (SEED_TIMEOUT_S) is pinned on its seed, and every seed starts from a
 * fresh process, as its rerun and its replay do. */

enum { SEED_TIMEOUT_S = 300 };

typedef struct seed_result {
    uint64_t steps, attempts, checks;
    uint64_t outcomes[LS_POD_PREEMPTED + 1];
    uint32_t violations;
} seed_result;

static void harness_init(harness *h, const world *w, ls_cluster *c)
{
    memset(h, 0, sizeof *h);
    h->w = w;
    h->cluster = c;
    h->hostname_key = ls_intern_cstr(HOST_KEY);
    h->unschedulable_key = ls_intern_cstr("node.kubernetes.io/unschedulable");
    for (uint32_t k = 0; k < w->n_nodes; k++) {
        h->node_name[k] = ls_intern_cstr(w->nodes[k].name);
        h->node_exists[k] = w->nodes[k].exists0;
    }
    for (uint32_t i = 0; i < MAX_PODS; i++)
        h->pod_id[i] = UINT32_MAX;
    for (uint32_t i = 0; i < w->n_pods; i++) {
        h->pod_live[i] = w->pods[i].exists0;
        h->pod_gates[i] = w->pods[i].gates0;
        if (w->pods[i].exists0)
            h->pod_id[i] = i;   /* file pods take ids in file order */
    }
    h->next_id = w->n_init_pods;
    snprintf(h->where, sizeof h->where, "at the start");
}

static void print_rerun(uint64_t seed, const char *path)
{
    fprintf(stderr, "  rerun: LUASCHED_RANDOM_SEED=%llu test_random_timelines; replay: luasched simulate %s\n",
            (unsigned long long)seed, path);
}

/* Generates, writes and runs one seed (in the child); violations go to stderr. */
static void run_seed(uint64_t seed, const char *path, seed_result *res)
{
    static world w;
    static harness h;
    generate(&w, seed);
    bool written = write_world(&w, path);
    world_free(&w);
    ls_cluster *c = ls_cluster_new();
    harness_init(&h, &w, c);
    ls_error err;
    ls_config cfg;
    memset(&cfg, 0, sizeof cfg);
    ls_scheduler *s = NULL;
    if (!written)
        violation(&h, "cannot write %s", path);
    else if (!ls_cluster_load_file(c, path, &err) || !ls_cluster_admit(c, &err))
        violation(&h, "the generated file does not load: %s", err.msg);
    else if (!ls_config_load(&cfg, NULL, &err))
        violation(&h, "the default configuration does not load: %s", err.msg);
    else if (ls_cluster_num_pods(c) != w.n_init_pods)
        violation(&h, "the cluster loaded %u pods of %u", ls_cluster_num_pods(c), w.n_init_pods);
    else {
        h.inner = ls_cluster_source(c, NULL, NULL);
        ls_sched_source src = {.ud = &h, .bind = h_bind, .on_attempt = h_on_attempt,
                               .next_change_ms = h_next_change, .advance_to = h_advance, .preempt = h_preempt};
        ls_sched_options so = {.seed = 0};   /* as `luasched simulate` without --seed */
        s = ls_scheduler_new(&cfg, &so, &src, &err);
        if (!s)
            violation(&h, "ls_scheduler_new: %s", err.msg);
    }
    if (s) {
        h.sched = s;
        ls_cluster_start(c, s);
        check_state(&h, NULL);
        ls_scheduler_run(s);
        ls_cluster_finish(c, s);
        check_end(&h);
        for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++)
            res->outcomes[ls_cluster_pod(c, i)->outcome]++;
    }
    ls_scheduler_free(s);
    ls_config_free(&cfg);
    ls_cluster_free(c);

    res->steps = h.steps_played;
    res->attempts = h.attempts;
    res->checks = h.checks;
    res->violations = h.violations;
    if (!h.violations)
        return;
    fprintf(stderr, "seed %llu: %u invariant violation%s; file kept: %s\n", (unsigned long long)seed, h.violations,
            h.violations == 1 ? "" : "s", path);
    for (uint32_t i = 0; i < h.violations && i < MAX_REPORTED; i++)
        fprintf(stderr, "  %s\n", h.reported[i]);
    print_rerun(seed, path);
}

typedef struct totals {
    uint64_t seeds, steps, attempts, checks, failed;
    uint64_t outcomes[LS_POD_PREEMPTED + 1];
} totals;

/* Runs one seed in a child; false when it failed or died (its file is kept). */
static bool run_seed_isolated(uint64_t seed, const char *dir, bool keep, totals *tot)
{
    char path[600];
    snprintf(path, sizeof path, "%s/seed-%llu.yaml", dir, (unsigned long long)seed);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("test_random_timelines: pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("test_random_timelines: fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(SEED_TIMEOUT_S);
        seed_result res;
        memset(&res, 0, sizeof res);
        run_seed(seed, path, &res);
        ssize_t n = write(fds[1], &res, sizeof res);
        close(fds[1]);
        ls_status_reset();
        ls_intern_reset();
        exit(n == (ssize_t)sizeof res && !res.violations ? 0 : 1);   /* exit(): LeakSanitizer checks the child */
    }
    close(fds[1]);
    seed_result res;
    size_t got = 0;
    while (got < sizeof res) {
        ssize_t n = read(fds[0], (char *)&res + got, sizeof res - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    tot->seeds++;
    bool clean = got == sizeof res && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (got == sizeof res) {
        tot->steps += res.steps;
        tot->attempts += res.attempts;
        tot->checks += res.checks;
        for (int i = 0; i <= LS_POD_PREEMPTED; i++)
            tot->outcomes[i] += res.outcomes[i];
    }
    if (clean) {
        if (!keep)
            unlink(path);
        return true;
    }
    tot->failed++;
    if (got == sizeof res && res.violations && WIFEXITED(status) && WEXITSTATUS(status) == 1)
        return false;   /* the child reported its violations */
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        fprintf(stderr, "seed %llu: the run hung (over %d s); file kept: %s\n", (unsigned long long)seed,
                (int)SEED_TIMEOUT_S, path);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "seed %llu: the run died of signal %d (%s); file kept: %s\n", (unsigned long long)seed,
                WTERMSIG(status), strsignal(WTERMSIG(status)), path);
    else
        fprintf(stderr, "seed %llu: the run exited with status %d%s (a sanitizer report above?); file kept: %s\n",
                (unsigned long long)seed, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                got == sizeof res ? " after a clean run" : " before finishing", path);
    print_rerun(seed, path);
    return false;
}

static bool env_count(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return false;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end) {
        fprintf(stderr, "test_random_timelines: %s: expected a number, got \"%s\"\n", name, v);
        exit(2);
    }
    *out = n;
    return true;
}

int main(void)
{
    uint64_t first = 1, count = DEFAULT_SEEDS;
    env_count("LUASCHED_RANDOM_SEEDS", &count);
    env_count("LUASCHED_RANDOM_FIRST", &first);
    if (env_count("LUASCHED_RANDOM_SEED", &first))
        count = 1;
    bool keep = getenv("LUASCHED_RANDOM_KEEP") && *getenv("LUASCHED_RANDOM_KEEP");
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/luasched-random-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("test_random_timelines: mkdtemp");
        return 2;
    }
    totals tot;
    memset(&tot, 0, sizeof tot);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t i = 0; i < count; i++)
        run_seed_isolated(first + i, dir, keep, &tot);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (tot.failed)
        printf("%llu of %llu seeds failed (seeds %llu..%llu); kept files in %s\n", (unsigned long long)tot.failed,
               (unsigned long long)tot.seeds, (unsigned long long)first, (unsigned long long)(first + count - 1), dir);
    else
        printf("%llu seeds, %llu steps, %llu attempts ran clean (%llu checks, %.1f s)\n",
               (unsigned long long)tot.seeds, (unsigned long long)tot.steps, (unsigned long long)tot.attempts,
               (unsigned long long)tot.checks, seconds);
    const uint64_t *o = tot.outcomes;
    printf("pods: %llu bound, %llu pending, %llu gated, %llu preempted, %llu deleted, %llu running, %llu not ours\n",
           (unsigned long long)o[LS_POD_BOUND], (unsigned long long)o[LS_POD_UNSCHEDULABLE],
           (unsigned long long)o[LS_POD_GATED], (unsigned long long)o[LS_POD_PREEMPTED],
           (unsigned long long)o[LS_POD_DELETED], (unsigned long long)o[LS_POD_RUNNING],
           (unsigned long long)o[LS_POD_NOT_OURS]);
    if (keep && !tot.failed)
        printf("files kept in %s\n", dir);
    else if (!tot.failed)
        rmdir(dir);
    return tot.failed ? 1 : 0;
}
