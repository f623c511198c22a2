/*
 * test_cache.c: the scheduler cache (core/src/cache/cache.c) against the
 * reference, §4.1-4.2 and §2.2: NodeInfo sums of requested and non-zero
 * requested resources (100m / 200Mi for an unset cpu / memory request), pod
 * counts, the (anti-)affinity pod lists, used host ports, the assume / forget /
 * confirm / update / remove lifecycle with its error messages, ghost nodes,
 * and image summaries. Every expected number is worked out in a comment.
 */
#include "cache/cache_internal.h"
#include "luasched/framework.h"

#include <stdlib.h>

#include "test.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)
#define DEFAULT_CPU 100          /* DefaultMilliCPURequest */
#define DEFAULT_MEM (200 * MI)   /* DefaultMemoryRequest = 209715200 */

/* ---- fixtures */

static const ls_pod *parse_pod(const char *yaml)
{
    ls_error err = {{0}};
    const ls_pod *p = ls_pod_parse(yaml, strlen(yaml), "test-pod", &err);
    if (!p) {
        fprintf(stderr, "pod parse failed: %s\n", err.msg);
        abort();
    }
    return p;
}

static const ls_node *parse_node(const char *yaml)
{
    ls_error err = {{0}};
    const ls_node *n = ls_node_parse(yaml, strlen(yaml), "test-node", &err);
    if (!n) {
        fprintf(stderr, "node parse failed: %s\n", err.msg);
        abort();
    }
    return n;
}

/* A pod named `name` (uid "uid-<name>"), bound to `node` unless NULL, whose
 * spec continues with `spec_rest` (flow-style YAML members after nodeName). */
static const ls_pod *make_pod(const char *name, const char *node, const char *spec_rest)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: %s, namespace: default, uid: uid-%s}\n"
             "spec: {%s%s%s%s}\n",
             name, name, node ? "nodeName: " : "", node ? node : "", node ? ", " : "", spec_rest);
    return parse_pod(yaml);
}

/* One container with the given requests body ("cpu: 500m, memory: 1Gi" or ""). */
static const ls_pod *requests_pod(const char *name, const char *node, const char *requests)
{
    char spec[512];
    if (requests[0])
        snprintf(spec, sizeof spec, "containers: [{name: c, image: app, resources: {requests: {%s}}}]", requests);
    else
        snprintf(spec, sizeof spec, "containers: [{name: c, image: app}]");
    return make_pod(name, node, spec);
}

/* A node with 4 cpu / 8Gi / 110 pods allocatable and the given status.images (flow YAML list). */
static const ls_node *make_node(const char *name, const char *images)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: %s}\n"
             "status:\n"
             "  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n"
             "  images: %s\n",
             name, images ? images : "[]");
    return parse_node(yaml);
}

static ls_str S(const char *s)
{
    return ls_intern_cstr(s);
}

static const ls_node_info *info(const ls_cache *c, const char *node)
{
    return ls_cache_node_info(c, S(node));
}

static bool has_pod(const ls_node_info *ni, const ls_pod *pod)
{
    for (uint32_t i = 0; ni && i < ni->num_pods; i++)
        if (ni->pods[i] == pod)
            return true;
    return false;
}

static bool has_port(const ls_node_info *ni, const char *ip, uint8_t proto, int32_t port)
{
    for (uint32_t i = 0; ni && i < ni->n_used_ports; i++)
        if (ni->used_ports[i].host_ip == S(ip) && ni->used_ports[i].protocol == proto &&
            ni->used_ports[i].port == port)
            return true;
    return false;
}

/* The accounting part of a NodeInfo, for exact before/after comparisons. */
typedef struct sums {
    ls_resources requested;
    int64_t nonzero_cpu, nonzero_mem;
    uint32_t pods, affinity, anti, ports;
} sums;

static sums sums_of(const ls_node_info *ni)
{
    sums s;
    memset(&s, 0, sizeof s);
    s.requested = ni->requested;
    s.nonzero_cpu = ni->nonzero_milli_cpu;
    s.nonzero_mem = ni->nonzero_memory;
    s.pods = ni->num_pods;
    s.affinity = ni->num_pods_with_affinity;
    s.anti = ni->num_pods_with_required_anti_affinity;
    s.ports = ni->n_used_ports;
    return s;
}

static bool sums_equal(sums a, sums b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- NodeInfo accounting */

static void test_requested_and_nonzero(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    const ls_node_info *ni = info(c, "n1");
    CHECK(ni != NULL);
    CHECK(ni->node == n1);
    /* allocatable copied from status.allocatable: 4 cpu = 4000m, 8Gi, 110 pods */
    CHECK_INT(ni->allocatable.milli_cpu, 4000);
    CHECK_INT(ni->allocatable.memory, 8 * GI);
    CHECK_INT(ni->allocatable.pods, 110);
    CHECK_INT(ni->num_pods, 0);
    CHECK_INT(ni->requested.milli_cpu, 0);
    CHECK_INT(ni->nonzero_milli_cpu, 0);

    /* p1: cpu 500m, memory 1Gi both set: requested = nonzero = (500, 1Gi) */
    const ls_pod *p1 = requests_pod("p1", "n1", "cpu: 500m, memory: 1Gi");
    /* p2: nothing set: requested (0, 0); nonzero (100, 200Mi) */
    const ls_pod *p2 = requests_pod("p2", "n1", "");
    /* p3: container a sets cpu 250m only, container b sets memory 100Mi only:
     *   requested = (250, 100Mi); nonzero = (250 + 100, 200Mi + 100Mi) = (350, 300Mi) */
    const ls_pod *p3 = make_pod("p3", "n1",
                                "containers: [{name: a, image: app, resources: {requests: {cpu: 250m}}},"
                                " {name: b, image: app, resources: {requests: {memory: 100Mi}}}]");
    /* p4: explicit zeros stay zero in the non-zero sums too */
    const ls_pod *p4 = requests_pod("p4", "n1", "cpu: '0', memory: '0'");
    ls_error err = {{0}};
    CHECK(ls_cache_add_pod(c, p1, &err));
    CHECK(ls_cache_add_pod(c, p2, &err));
    CHECK(ls_cache_add_pod(c, p3, &err));
    CHECK(ls_cache_add_pod(c, p4, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->num_pods, 4);
    /* requested cpu: 500 + 0 + 250 + 0 = 750 */
    CHECK_INT(ni->requested.milli_cpu, 750);
    /* requested memory: 1Gi + 0 + 100Mi + 0 = 1073741824 + 104857600 = 1178599424 */
    CHECK_INT(ni->requested.memory, 1178599424LL);
    CHECK_INT(ni->requested.memory, GI + 100 * MI);
    /* pods are not a pod-side request */
    CHECK_INT(ni->requested.pods, 0);
    /* nonzero cpu: 500 + 100 + 350 + 0 = 950 */
    CHECK_INT(ni->nonzero_milli_cpu, 950);
    /* nonzero memory: 1Gi + 200Mi + 300Mi + 0 = 1073741824 + 209715200 + 314572800 = 1598029824 */
    CHECK_INT(ni->nonzero_memory, 1598029824LL);
    CHECK_INT(ni->nonzero_memory, GI + DEFAULT_MEM + 300 * MI);
    CHECK_INT(ls_cache_pod_count(c), 4);
    CHECK_INT(ls_cache_assumed_count(c), 0);

    /* removing p3 takes off exactly its share: cpu 750 - 250 = 500, nonzero cpu 950 - 350 = 600 */
    CHECK(ls_cache_remove_pod(c, p3, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->num_pods, 3);
    CHECK_INT(ni->requested.milli_cpu, 500);
    CHECK_INT(ni->requested.memory, GI);
    CHECK_INT(ni->nonzero_milli_cpu, 600);
    CHECK_INT(ni->nonzero_memory, GI + DEFAULT_MEM);   /* 1Gi + 200Mi + 0 */
    CHECK(!has_pod(ni, p3));
    CHECK(has_pod(ni, p1) && has_pod(ni, p2) && has_pod(ni, p4));

    /* removing the rest returns every sum to zero */
    CHECK(ls_cache_remove_pod(c, p1, &err));
    CHECK(ls_cache_remove_pod(c, p2, &err));
    CHECK(ls_cache_remove_pod(c, p4, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->num_pods, 0);
    CHECK_INT(ni->requested.milli_cpu, 0);
    CHECK_INT(ni->requested.memory, 0);
    CHECK_INT(ni->nonzero_milli_cpu, 0);
    CHECK_INT(ni->nonzero_memory, 0);
    CHECK_INT(ls_cache_pod_count(c), 0);

    ls_cache_free(c);
    ls_pod_release(p1);
    ls_pod_release(p2);
    ls_pod_release(p3);
    ls_pod_release(p4);
    ls_node_release(n1);
}

/* Required pod anti-affinity on app=web, per hostname. */
#define ANTI_REQUIRED                                                                              \
    "podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "                           \
    "[{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}"
#define AFFINITY_REQUIRED                                                                          \
    "podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "                               \
    "[{labelSelector: {matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}"
#define ANTI_PREFERRED                                                                             \
    "podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, "           \
    "podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}}]}"

static void test_affinity_lists(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    /* PodsWithAffinity: any pod (anti-)affinity; PodsWithRequiredAntiAffinity: required anti terms */
    const ls_pod *plain = requests_pod("plain", "n1", "");
    const ls_pod *aff = make_pod("aff", "n1", "containers: [{name: c, image: app}], affinity: {" AFFINITY_REQUIRED "}");
    const ls_pod *anti = make_pod("anti", "n1", "containers: [{name: c, image: app}], affinity: {" ANTI_REQUIRED "}");
    const ls_pod *pref = make_pod("pref", "n1", "containers: [{name: c, image: app}], affinity: {" ANTI_PREFERRED "}");
    ls_error err = {{0}};
    CHECK(ls_cache_add_pod(c, plain, &err));
    CHECK(ls_cache_add_pod(c, aff, &err));
    CHECK(ls_cache_add_pod(c, anti, &err));
    CHECK(ls_cache_add_pod(c, pref, &err));
    const ls_node_info *ni = info(c, "n1");
    CHECK_INT(ni->num_pods, 4);
    /* aff, anti, pref have some pod (anti-)affinity; plain has none */
    CHECK_INT(ni->num_pods_with_affinity, 3);
    /* only anti has a required anti-affinity term (pref's is preferred) */
    CHECK_INT(ni->num_pods_with_required_anti_affinity, 1);
    CHECK(ni->num_pods_with_required_anti_affinity == 1 && ni->pods_with_required_anti_affinity[0] == anti);
    bool found_plain = false;
    for (uint32_t i = 0; i < ni->num_pods_with_affinity; i++)
        found_plain = found_plain || ni->pods_with_affinity[i] == plain;
    CHECK(!found_plain);

    /* removing anti leaves aff and pref; the required list is empty */
    CHECK(ls_cache_remove_pod(c, anti, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->num_pods_with_affinity, 2);
    CHECK_INT(ni->num_pods_with_required_anti_affinity, 0);
    CHECK(ls_cache_remove_pod(c, aff, &err));
    CHECK(ls_cache_remove_pod(c, pref, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->num_pods_with_affinity, 0);
    CHECK_INT(ni->num_pods, 1);

    ls_cache_free(c);
    ls_pod_release(plain);
    ls_pod_release(aff);
    ls_pod_release(anti);
    ls_pod_release(pref);
    ls_node_release(n1);
}

static void test_used_ports(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    /* web: hostPort 8080/TCP on 0.0.0.0 (hostIP unset), 5353/UDP on 10.0.0.1, and a
     * containerPort without hostPort that uses nothing on the node: 2 used ports */
    const ls_pod *web = make_pod("web", "n1",
                                 "containers: [{name: c, image: app, ports: ["
                                 "{containerPort: 80, hostPort: 8080},"
                                 " {containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 10.0.0.1},"
                                 " {containerPort: 9090}]}]");
    const ls_pod *alt = make_pod("alt", "n1",
                                 "containers: [{name: c, image: app, ports: [{containerPort: 80, hostPort: 8081}]}]");
    ls_error err = {{0}};
    CHECK(ls_cache_add_pod(c, web, &err));
    const ls_node_info *ni = info(c, "n1");
    CHECK_INT(ni->n_used_ports, 2);
    CHECK(has_port(ni, "0.0.0.0", LS_PROTO_TCP, 8080));
    CHECK(has_port(ni, "10.0.0.1", LS_PROTO_UDP, 5353));
    CHECK(!has_port(ni, "0.0.0.0", LS_PROTO_TCP, 9090));

    CHECK(ls_cache_add_pod(c, alt, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->n_used_ports, 3);   /* 2 + 1 */
    CHECK(has_port(ni, "0.0.0.0", LS_PROTO_TCP, 8081));

    /* removing web frees its two ports and keeps alt's */
    CHECK(ls_cache_remove_pod(c, web, &err));
    ni = info(c, "n1");
    CHECK_INT(ni->n_used_ports, 1);
    CHECK(has_port(ni, "0.0.0.0", LS_PROTO_TCP, 8081));
    CHECK(!has_port(ni, "0.0.0.0", LS_PROTO_TCP, 8080));
    CHECK(!has_port(ni, "10.0.0.1", LS_PROTO_UDP, 5353));
    CHECK(ls_cache_remove_pod(c, alt, &err));
    CHECK_INT(info(c, "n1")->n_used_ports, 0);

    ls_cache_free(c);
    ls_pod_release(web);
    ls_pod_release(alt);
    ls_node_release(n1);
}

/* ---- pod lifecycle */

static void test_assume_forget(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    const ls_pod *base = requests_pod("base", "n1", "cpu: 300m, memory: 512Mi");
    /* the pod being scheduled has no nodeName yet; assume names the node */
    const ls_pod *p = make_pod("p", NULL,
                               "containers: [{name: c, image: app, resources: {requests: {cpu: 700m}},"
                               " ports: [{containerPort: 80, hostPort: 80}]}], affinity: {" ANTI_REQUIRED "}");
    ls_error err = {{0}};
    CHECK(ls_cache_add_pod(c, base, &err));
    sums before = sums_of(info(c, "n1"));
    uint64_t gen_before = info(c, "n1")->generation;

    CHECK(ls_cache_assume_pod(c, p, S("n1"), &err));
    const ls_node_info *ni = info(c, "n1");
    CHECK(ls_cache_is_assumed(c, p));
    CHECK_INT(ls_cache_assumed_count(c), 1);
    CHECK_INT(ls_cache_pod_count(c), 2);
    CHECK(ls_cache_pod_node(c, p) == S("n1"));
    CHECK(has_pod(ni, p));
    /* cpu 300 + 700 = 1000; memory 512Mi + 0; nonzero memory 512Mi + 200Mi (unset) */
    CHECK_INT(ni->requested.milli_cpu, 1000);
    CHECK_INT(ni->requested.memory, 512 * MI);
    CHECK_INT(ni->nonzero_milli_cpu, 1000);
    CHECK_INT(ni->nonzero_memory, 512 * MI + DEFAULT_MEM);
    CHECK_INT(ni->n_used_ports, 1);
    CHECK_INT(ni->num_pods_with_affinity, 1);
    CHECK_INT(ni->num_pods_with_required_anti_affinity, 1);
    CHECK(ni->generation > gen_before);   /* every change takes a new generation */

    /* assuming twice: upstream's "pod %v(%v) is in the cache, so can't be assumed" */
    CHECK(!ls_cache_assume_pod(c, p, S("n1"), &err));
    CHECK_CONTAINS(err.msg, "default/p is in the cache, so can't be assumed");
    CHECK_INT(ls_cache_assumed_count(c), 1);

    /* forget restores every sum exactly */
    CHECK(ls_cache_forget_pod(c, p, &err));
    CHECK(sums_equal(sums_of(info(c, "n1")), before));
    CHECK(!ls_cache_is_assumed(c, p));
    CHECK_INT(ls_cache_assumed_count(c), 0);
    CHECK_INT(ls_cache_pod_count(c), 1);
    CHECK(ls_cache_pod_node(c, p) == 0);
    CHECK(!has_pod(info(c, "n1"), p));

    /* forgetting again, or forgetting an added (not assumed) pod, is an error */
    err.msg[0] = '\0';
    CHECK(!ls_cache_forget_pod(c, p, &err));
    CHECK_CONTAINS(err.msg, "pod default/p wasn't assumed so cannot be forgotten");
    err.msg[0] = '\0';
    CHECK(!ls_cache_forget_pod(c, base, &err));
    CHECK_CONTAINS(err.msg, "pod default/base wasn't assumed so cannot be forgotten");
    CHECK(sums_equal(sums_of(info(c, "n1")), before));

    /* finish_binding only applies to assumed pods */
    CHECK(!ls_cache_finish_binding(c, p));
    CHECK(ls_cache_assume_pod(c, p, S("n1"), &err));
    CHECK(ls_cache_finish_binding(c, p));
    CHECK(ls_cache_is_assumed(c, p));   /* ttl 0: never expires, stays assumed */
    CHECK(ls_cache_forget_pod(c, p, &err));
    CHECK(sums_equal(sums_of(info(c, "n1")), before));

    ls_cache_free(c);
    ls_pod_release(base);
    ls_pod_release(p);
    ls_node_release(n1);
}

static void test_assume_confirm(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    const ls_node *n2 = make_node("n2", NULL);
    ls_cache_add_node(c, n1);
    ls_cache_add_node(c, n2);
    /* the scheduler's copy (no nodeName) and the informer's bound copy, same uid */
    const ls_pod *assumed = make_pod("p", NULL, "containers: [{name: c, image: app, resources: {requests: {cpu: 1}}}]");
    const ls_pod *bound = make_pod("p", "n1", "containers: [{name: c, image: app, resources: {requests: {cpu: 1}}}]");
    ls_error err = {{0}};
    CHECK(ls_cache_assume_pod(c, assumed, S("n1"), &err));
    sums assumed_sums = sums_of(info(c, "n1"));
    /* cpu 1 = 1000m; memory unset: requested 0, nonzero 200Mi */
    CHECK_INT(assumed_sums.requested.milli_cpu, 1000);
    CHECK_INT(assumed_sums.nonzero_mem, DEFAULT_MEM);

    /* the informer's Add confirms: same sums, the real object replaces the assumed one */
    CHECK(ls_cache_add_pod(c, bound, &err));
    const ls_node_info *ni = info(c, "n1");
    CHECK(sums_equal(sums_of(ni), assumed_sums));
    CHECK_INT(ni->num_pods, 1);
    CHECK(ni->num_pods == 1 && ni->pods[0] == bound);
    CHECK(!ls_cache_is_assumed(c, bound));
    CHECK_INT(ls_cache_assumed_count(c), 0);
    CHECK_INT(ls_cache_pod_count(c), 1);

    /* a second Add: upstream's "pod %v(%v) was already in added state" */
    CHECK(!ls_cache_add_pod(c, bound, &err));
    CHECK_CONTAINS(err.msg, "default/p was already in added state");
    /* a confirmed pod can no longer be forgotten */
    CHECK(!ls_cache_forget_pod(c, bound, &err));
    CHECK_CONTAINS(err.msg, "wasn't assumed so cannot be forgotten");

    /* assumed on n1 but bound to n2: the pod moves, n1's sums return to zero */
    const ls_pod *q_assumed = make_pod("q", NULL, "containers: [{name: c, image: app, resources: {requests: {cpu: 200m}}}]");
    const ls_pod *q_bound = make_pod("q", "n2", "containers: [{name: c, image: app, resources: {requests: {cpu: 200m}}}]");
    CHECK(ls_cache_assume_pod(c, q_assumed, S("n1"), &err));
    CHECK_INT(info(c, "n1")->requested.milli_cpu, 1200);   /* 1000 + 200 */
    CHECK(ls_cache_add_pod(c, q_bound, &err));
    CHECK_INT(info(c, "n1")->requested.milli_cpu, 1000);   /* back to p's share */
    CHECK_INT(info(c, "n2")->requested.milli_cpu, 200);
    CHECK(has_pod(info(c, "n2"), q_bound));
    CHECK(!has_pod(info(c, "n1"), q_assumed));
    CHECK(ls_cache_pod_node(c, q_bound) == S("n2"));
    CHECK_INT(ls_cache_assumed_count(c), 0);

    /* an assumed pod removed by a delete event leaves the assumed count */
    const ls_pod *r = make_pod("r", NULL, "containers: [{name: c, image: app}]");
    CHECK(ls_cache_assume_pod(c, r, S("n2"), &err));
    CHECK_INT(ls_cache_assumed_count(c), 1);
    CHECK(ls_cache_remove_pod(c, r, &err));
    CHECK_INT(ls_cache_assumed_count(c), 0);
    CHECK_INT(info(c, "n2")->num_pods, 1);

    ls_cache_free(c);
    ls_pod_release(assumed);
    ls_pod_release(bound);
    ls_pod_release(q_assumed);
    ls_pod_release(q_bound);
    ls_pod_release(r);
    ls_node_release(n1);
    ls_node_release(n2);
}

static void test_update_pod(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    const ls_pod *old_pod = requests_pod("p", "n1", "cpu: 500m, memory: 1Gi");
    /* the new version requests more cpu, sets no memory and gains required anti-affinity */
    const ls_pod *new_pod = make_pod("p", "n1",
                                     "containers: [{name: c, image: app, resources: {requests: {cpu: 1500m}}}],"
                                     " affinity: {" ANTI_REQUIRED "}");
    const ls_pod *moved = requests_pod("p", "n2", "cpu: 500m, memory: 1Gi");
    const ls_pod *stranger = requests_pod("stranger", "n1", "");
    ls_error err = {{0}};
    CHECK(ls_cache_add_pod(c, old_pod, &err));
    CHECK(ls_cache_update_pod(c, old_pod, new_pod, &err));
    const ls_node_info *ni = info(c, "n1");
    /* update = remove old + add new: cpu 1500, memory 0, nonzero memory 200Mi */
    CHECK_INT(ni->num_pods, 1);
    CHECK(ni->num_pods == 1 && ni->pods[0] == new_pod);
    CHECK_INT(ni->requested.milli_cpu, 1500);
    CHECK_INT(ni->requested.memory, 0);
    CHECK_INT(ni->nonzero_milli_cpu, 1500);
    CHECK_INT(ni->nonzero_memory, DEFAULT_MEM);
    CHECK_INT(ni->num_pods_with_affinity, 1);
    CHECK_INT(ni->num_pods_with_required_anti_affinity, 1);
    CHECK_INT(ls_cache_pod_count(c), 1);

    /* a node change is not an update the cache accepts */
    CHECK(!ls_cache_update_pod(c, new_pod, moved, &err));
    CHECK_CONTAINS(err.msg, "moved from node n1 to n2");
    /* an unknown pod: upstream's "is not added to scheduler cache, so cannot be updated" */
    CHECK(!ls_cache_update_pod(c, stranger, stranger, &err));
    CHECK_CONTAINS(err.msg, "pod default/stranger is not added to scheduler cache, so cannot be updated");
    /* an assumed pod gets no updates before its Add */
    const ls_pod *a = make_pod("a", NULL, "containers: [{name: c, image: app}]");
    CHECK(ls_cache_assume_pod(c, a, S("n1"), &err));
    CHECK(!ls_cache_update_pod(c, a, a, &err));
    CHECK_CONTAINS(err.msg, "default/a");

    ls_cache_free(c);
    ls_pod_release(old_pod);
    ls_pod_release(new_pod);
    ls_pod_release(moved);
    ls_pod_release(stranger);
    ls_pod_release(a);
    ls_node_release(n1);
}

static void test_error_paths(void)
{
    ls_cache *c = ls_cache_new();
    const ls_node *n1 = make_node("n1", NULL);
    ls_cache_add_node(c, n1);
    const ls_pod *unbound = make_pod("u", NULL, "containers: [{name: c, image: app}]");
    const ls_pod *ghost = requests_pod("g", "n1", "");
    ls_error err = {{0}};

    /* Add of a pod without nodeName */
    CHECK(!ls_cache_add_pod(c, unbound, &err));
    CHECK_CONTAINS(err.msg, "pod default/u is not assigned to a node");
    /* Remove of a pod the cache never saw: upstream's text */
    CHECK(!ls_cache_remove_pod(c, ghost, &err));
    CHECK_CONTAINS(err.msg, "pod default/g is not found in scheduler cache, so cannot be removed from it");
    /* the cache key is the uid; a pod without one is an error (GetPodKey) */
    ls_pod no_uid = *ghost;
    no_uid.uid = 0;
    CHECK(!ls_cache_add_pod(c, &no_uid, &err));
    CHECK_CONTAINS(err.msg, "pod default/g has no uid");
    CHECK(!ls_cache_assume_pod(c, &no_uid, S("n1"), &err));
    CHECK_CONTAINS(err.msg, "has no uid");
    /* nothing was changed by the failures */
    CHECK_INT(ls_cache_pod_count(c), 0);
    CHECK_INT(info(c, "n1")->num_pods, 0);

    ls_cache_free(c);
    ls_pod_release(unbound);
    ls_pod_release(ghost);
    ls_node_release(n1);
}

/* ---- ghosts: pods on nodes the cache does not (or no longer) have */

static void test_ghost_nodes(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *n1 = make_node("n1", NULL);
    const ls_node *late = make_node("late", NULL);
    ls_cache_add_node(c, n1);
    const ls_pod *early = requests_pod("early", "late", "cpu: 100m, memory: 64Mi");
    const ls_pod *p = requests_pod("p", "n1", "cpu: 400m");
    ls_error err = {{0}};

    /* a pod on an unknown node: held on a ghost NodeInfo, not a node of the cache */
    CHECK(ls_cache_add_pod(c, early, &err));
    CHECK(ls_cache_pod_node(c, early) == S("late"));
    CHECK(info(c, "late") == NULL);
    CHECK_INT(ls_cache_node_count(c), 1);
    ls_cache_update_snapshot(c, s);
    CHECK_INT(ls_snapshot_num_nodes(s), 1);
    CHECK(ls_snapshot_find(s, S("late")) == NULL);

    /* when the node arrives it already carries the pod: cpu 100, memory 64Mi */
    ls_cache_add_node(c, late);
    const ls_node_info *ni = info(c, "late");
    CHECK(ni != NULL);
    CHECK_INT(ls_cache_node_count(c), 2);
    CHECK_INT(ni ? ni->num_pods : 0, 1);
    CHECK_INT(ni ? ni->requested.milli_cpu : 0, 100);
    CHECK_INT(ni ? ni->requested.memory : 0, 64 * MI);
    ls_cache_update_snapshot(c, s);
    CHECK_INT(ls_snapshot_num_nodes(s), 2);
    CHECK(ls_snapshot_find(s, S("late")) != NULL);

    /* removing n1 while p runs on it: a ghost, out of the node count and snapshots */
    CHECK(ls_cache_add_pod(c, p, &err));
    ls_cache_remove_node(c, n1);
    CHECK(info(c, "n1") == NULL);
    CHECK_INT(ls_cache_node_count(c), 1);
    CHECK(ls_cache_pod_node(c, p) == S("n1"));
    ls_cache_update_snapshot(c, s);
    CHECK_INT(ls_snapshot_num_nodes(s), 1);
    CHECK(ls_snapshot_find(s, S("n1")) == NULL);
    CHECK(ls_snapshot_node(s, 0) && ls_snapshot_node(s, 0)->node == late);

    /* re-adding n1 while the ghost lives brings its pod back: cpu 400 */
    ls_cache_add_node(c, n1);
    CHECK_INT(info(c, "n1") ? info(c, "n1")->requested.milli_cpu : -1, 400);
    ls_cache_remove_node(c, n1);
    /* the pod's delete drops the ghost; a new n1 starts empty */
    CHECK(ls_cache_remove_pod(c, p, &err));
    ls_cache_add_node(c, n1);
    CHECK_INT(info(c, "n1") ? info(c, "n1")->num_pods : 99, 0);
    CHECK_INT(info(c, "n1") ? info(c, "n1")->requested.milli_cpu : -1, 0);
    ls_cache_update_snapshot(c, s);
    CHECK_INT(ls_snapshot_num_nodes(s), 2);

    /* assuming onto an unknown node holds the pod on an empty NodeInfo (a ghost
     * here: no node object); forgetting it drops that NodeInfo again */
    const ls_pod *lost = requests_pod("lost", NULL, "cpu: 100m");
    CHECK(ls_cache_assume_pod(c, lost, S("nowhere"), &err));
    CHECK(ls_cache_pod_node(c, lost) == S("nowhere"));
    CHECK(info(c, "nowhere") == NULL);
    CHECK_INT(ls_cache_node_count(c), 2);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK(ls_snapshot_find(s, S("nowhere")) == NULL);
    CHECK(ls_cache_forget_pod(c, lost, &err));
    CHECK(ls_map_get(&c->nodes, S("nowhere")) == NULL);
    ls_pod_release(lost);

    /* removing a node without pods forgets it at once; removing it twice is harmless */
    ls_cache_remove_node(c, n1);
    ls_cache_remove_node(c, n1);
    CHECK_INT(ls_cache_node_count(c), 1);

    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_pod_release(early);
    ls_pod_release(p);
    ls_node_release(n1);
    ls_node_release(late);
}

/* ---- image summaries */

static void image_state(const ls_snapshot *s, const char *node, const char *image, bool *found, int64_t *size,
                        uint32_t *num_nodes)
{
    *size = -1;
    *num_nodes = 0;
    const ls_node_info *ni = ls_snapshot_find(s, S(node));
    *found = ni && ls_snapshot_image_state(s, ni, S(image), size, num_nodes);
}

static void test_image_states(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    /* nginx:1.25 on a and b; redis (kept as reported, not normalized) and its digest name on a only */
    const ls_node *a = make_node("a", "[{names: [nginx:1.25], sizeBytes: 100000000},"
                                      " {names: [redis, 'redis@sha256:abc'], sizeBytes: 5000}]");
    const ls_node *b = make_node("b", "[{names: [nginx:1.25], sizeBytes: 100000000}]");
    const ls_node *a2 = make_node("a", "[{names: ['redis@sha256:abc'], sizeBytes: 5000}]");
    ls_cache_add_node(c, a);
    ls_cache_add_node(c, b);
    ls_cache_update_snapshot(c, s);
    bool found;
    int64_t size;
    uint32_t num;

    image_state(s, "a", "nginx:1.25", &found, &size, &num);
    CHECK(found);
    CHECK_INT(size, 100000000);
    CHECK_INT(num, 2);   /* a and b */
    image_state(s, "b", "nginx:1.25", &found, &size, &num);
    CHECK(found);
    CHECK_INT(num, 2);
    image_state(s, "a", "redis:latest", &found, &size, &num);
    CHECK(!found);   /* a pod's "redis" is looked up as redis:latest: this node reported "redis" */
    image_state(s, "a", "redis", &found, &size, &num);
    CHECK(found);
    CHECK_INT(size, 5000);
    CHECK_INT(num, 1);
    image_state(s, "a", "redis@sha256:abc", &found, &size, &num);
    CHECK(found);
    CHECK_INT(num, 1);
    image_state(s, "b", "redis:latest", &found, &size, &num);
    CHECK(!found);   /* b does not have it */
    CHECK(ls_cache_image(c, S("nginx:1.25")) && ls_cache_image(c, S("nginx:1.25"))->num_nodes == 2);

    /* b leaves: nginx is on one node */
    ls_cache_remove_node(c, b);
    ls_cache_update_snapshot(c, s);
    image_state(s, "a", "nginx:1.25", &found, &size, &num);
    CHECK(found);
    CHECK_INT(num, 1);

    /* a drops nginx and plain redis: their summaries go away, the digest stays */
    ls_cache_update_node(c, a, a2);
    CHECK(ls_cache_image(c, S("nginx:1.25")) == NULL);
    CHECK(ls_cache_image(c, S("redis:latest")) == NULL);
    CHECK(ls_cache_image(c, S("redis@sha256:abc")) != NULL);
    ls_cache_update_snapshot(c, s);
    image_state(s, "a", "nginx:1.25", &found, &size, &num);
    CHECK(!found);
    image_state(s, "a", "redis@sha256:abc", &found, &size, &num);
    CHECK(found);
    CHECK_INT(num, 1);

    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_node_release(a);
    ls_node_release(b);
    ls_node_release(a2);
}

/* ---- generations */

static void test_generations(void)
{
    /* nextGeneration() is process-global and never reused: a node removed and
     * added again, or a change in another cache, never repeats a number */
    ls_cache *c1 = ls_cache_new();
    ls_cache *c2 = ls_cache_new();
    const ls_node *a = make_node("a", NULL);
    const ls_node *b = make_node("b", NULL);
    ls_cache_add_node(c1, a);
    uint64_t g1 = info(c1, "a")->generation;
    ls_cache_add_node(c2, b);
    uint64_t g2 = info(c2, "b")->generation;
    CHECK(g2 > g1);
    ls_cache_remove_node(c1, a);
    ls_cache_add_node(c1, a);
    uint64_t g3 = info(c1, "a")->generation;
    CHECK(g3 > g2);
    /* a node update takes a new generation too */
    ls_cache_update_node(c1, a, a);
    CHECK(info(c1, "a")->generation > g3);
    ls_cache_free(c1);
    ls_cache_free(c2);
    ls_node_release(a);
    ls_node_release(b);
}

int main(void)
{
    test_requested_and_nonzero();
    test_affinity_lists();
    test_used_ports();
    test_assume_forget();
    test_assume_confirm();
    test_update_pod();
    test_error_paths();
    test_ghost_nodes();
    test_image_states();
    test_generations();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
