/*
 * test_snapshot.c: the per-cycle snapshot (core/src/cache/snapshot.c) and the
 * node tree (cache.c) against the reference, §4.3-4.4: the generation-based
 * incremental refresh (only NodeInfos changed since the last refresh are
 * copied, in place), pruning of removed nodes, copy semantics, and the
 * zone round-robin node order with its zone key (region + zone labels,
 * falling back to the failure-domain.beta.kubernetes.io labels), and the
 * positions changed since a generation (newest first) with the list generation.
 */
#include "cache/cache_internal.h"
#include "luasched/framework.h"

#include <stdlib.h>

#include "test.h"

/* ---- fixtures */

static ls_str S(const char *s)
{
    return ls_intern_cstr(s);
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

/* A node with the given labels (flow-YAML members, may be ""). */
static const ls_node *labelled_node(const char *name, const char *labels)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: %s, labels: {%s}}\n"
             "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}}\n",
             name, labels);
    return parse_node(yaml);
}

static const ls_node *zoned_node(const char *name, const char *zone)
{
    char labels[256];
    snprintf(labels, sizeof labels, "topology.kubernetes.io/zone: %s", zone);
    return labelled_node(name, labels);
}

/* A pod bound to `node` requesting `cpu`. */
static const ls_pod *cpu_pod(const char *name, const char *node, const char *cpu)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "metadata: {name: %s, uid: uid-%s}\n"
             "spec: {nodeName: %s, containers: [{name: c, image: app, resources: {requests: {cpu: %s}}}]}\n",
             name, name, node, cpu);
    ls_error err = {{0}};
    const ls_pod *p = ls_pod_parse(yaml, strlen(yaml), "test-pod", &err);
    if (!p) {
        fprintf(stderr, "pod parse failed: %s\n", err.msg);
        abort();
    }
    return p;
}

/* The snapshot's node names in list order, joined with ',' ("a,c,d,b,e"). */
static const char *order(const ls_snapshot *s)
{
    static char buf[512];
    size_t len = 0;
    buf[0] = '\0';
    const ls_node_info *const *list = ls_snapshot_list(s);
    for (uint32_t i = 0; i < ls_snapshot_num_nodes(s); i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "",
                                ls_str_get(list[i]->node->name));
    return buf;
}

/* Every NodeInfo's index is its list position, ls_snapshot_node agrees with
 * the list, and ls_snapshot_find finds each one by name. */
static bool indexes_consistent(const ls_snapshot *s)
{
    const ls_node_info *const *list = ls_snapshot_list(s);
    for (uint32_t i = 0; i < ls_snapshot_num_nodes(s); i++) {
        if (list[i]->index != i || ls_snapshot_node(s, i) != list[i])
            return false;
        if (ls_snapshot_find(s, list[i]->node->name) != list[i])
            return false;
    }
    return ls_snapshot_node(s, ls_snapshot_num_nodes(s)) == NULL;
}

/* ---- incremental update */

static void test_incremental_update(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *a = labelled_node("a", "");
    const ls_node *b = labelled_node("b", "");
    const ls_node *cn = labelled_node("c", "");
    const ls_node *a2 = labelled_node("a", "tier: gold");
    const ls_pod *p = cpu_pod("p", "b", "300m");
    const ls_pod *q = cpu_pod("q", "a", "100m");
    const ls_pod *r = cpu_pod("r", "c", "100m");
    ls_error err = {{0}};

    /* an empty cache: nothing to copy */
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_INT(ls_snapshot_num_nodes(s), 0);

    /* first update: every node is newer than generation 0, so all 3 are copied */
    ls_cache_add_node(c, a);
    ls_cache_add_node(c, b);
    ls_cache_add_node(c, cn);
    CHECK_INT(ls_cache_update_snapshot(c, s), 3);
    CHECK_INT(ls_snapshot_num_nodes(s), 3);
    CHECK(indexes_consistent(s));
    /* the snapshot generation is the newest NodeInfo's (c, added last) */
    CHECK(ls_snapshot_generation(s) == ls_cache_node_info(c, S("c"))->generation);

    /* nothing changed: 0 copied, generation unchanged */
    uint64_t gen = ls_snapshot_generation(s);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK(ls_snapshot_generation(s) == gen);

    /* one pod added on b: only b is copied, in place (same NodeInfo pointer) */
    const ls_node_info *snap_b = ls_snapshot_find(s, S("b"));
    CHECK(ls_cache_add_pod(c, p, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK(ls_snapshot_find(s, S("b")) == snap_b);
    CHECK_INT(snap_b->num_pods, 1);
    CHECK_INT(snap_b->requested.milli_cpu, 300);
    CHECK(snap_b->num_pods == 1 && snap_b->pods[0] == p);
    CHECK(ls_snapshot_generation(s) > gen);

    /* pods on two different nodes: 2 copied */
    CHECK(ls_cache_add_pod(c, q, &err));
    CHECK(ls_cache_add_pod(c, r, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 2);

    /* assume then forget on a touches a (twice) and nothing else: 1 copied */
    const ls_pod *t = cpu_pod("t", "a", "1");
    CHECK(ls_cache_assume_pod(c, t, S("a"), &err));
    CHECK(ls_cache_forget_pod(c, t, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK_INT(ls_snapshot_find(s, S("a"))->requested.milli_cpu, 100);   /* q only */

    /* a node update (labels) copies that node */
    ls_cache_update_node(c, a, a2);
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK(ls_snapshot_find(s, S("a"))->node == a2);
    CHECK_INT(ls_snapshot_find(s, S("a"))->num_pods, 1);   /* the update keeps the pods */

    CHECK(ls_cache_remove_pod(c, p, &err));
    CHECK(ls_cache_remove_pod(c, q, &err));
    CHECK(ls_cache_remove_pod(c, r, &err));
    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_pod_release(p);
    ls_pod_release(q);
    ls_pod_release(r);
    ls_pod_release(t);
    ls_node_release(a);
    ls_node_release(a2);
    ls_node_release(b);
    ls_node_release(cn);
}

/* ---- changed positions (ls_snapshot_changed_since, list generation) */

static uint32_t index_of(const ls_snapshot *s, const char *name)
{
    return ls_snapshot_find(s, S(name))->index;
}

static void test_changed_since(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *a = labelled_node("a", "");
    const ls_node *b = labelled_node("b", "");
    const ls_node *cn = labelled_node("c", "");
    const ls_node *d = labelled_node("d", "");
    const ls_pod *p = cpu_pod("p", "b", "300m");
    const ls_pod *q = cpu_pod("q", "c", "100m");
    const ls_pod *r = cpu_pod("r", "b", "100m");
    ls_error err = {{0}};
    uint32_t out[4];

    ls_cache_add_node(c, a);
    ls_cache_add_node(c, b);
    ls_cache_add_node(c, cn);
    ls_cache_update_snapshot(c, s);
    uint64_t list_gen = ls_snapshot_list_generation(s);
    CHECK(list_gen != 0);
    /* since 0: every node, newest first; cap limits what is written, not the count */
    CHECK_INT(ls_snapshot_changed_since(s, 0, out, 4), 3);
    CHECK_INT(out[0], index_of(s, "c"));
    CHECK_INT(out[1], index_of(s, "b"));
    CHECK_INT(out[2], index_of(s, "a"));
    CHECK_INT(ls_snapshot_changed_since(s, 0, out, 1), 3);

    uint64_t gen = ls_snapshot_generation(s);
    CHECK_INT(ls_snapshot_changed_since(s, gen, out, 4), 0);

    /* pods on b then c, then b again: c and b (newest first), list unchanged */
    CHECK(ls_cache_add_pod(c, p, &err));
    CHECK(ls_cache_add_pod(c, q, &err));
    CHECK(ls_cache_add_pod(c, r, &err));
    ls_cache_update_snapshot(c, s);
    CHECK(ls_snapshot_list_generation(s) == list_gen);
    CHECK_INT(ls_snapshot_changed_since(s, gen, out, 4), 2);
    CHECK_INT(out[0], index_of(s, "b"));
    CHECK_INT(out[1], index_of(s, "c"));
    uint64_t gen2 = ls_snapshot_generation(s);
    CHECK_INT(ls_snapshot_changed_since(s, gen2, out, 4), 0);

    /* a node added or removed: a new list generation */
    ls_cache_add_node(c, d);
    ls_cache_update_snapshot(c, s);
    CHECK(ls_snapshot_list_generation(s) != list_gen);
    list_gen = ls_snapshot_list_generation(s);
    CHECK_INT(ls_snapshot_changed_since(s, gen2, out, 4), 1);
    CHECK_INT(out[0], index_of(s, "d"));
    ls_cache_remove_node(c, a);
    ls_cache_update_snapshot(c, s);
    CHECK(ls_snapshot_list_generation(s) != list_gen);
    CHECK_INT(ls_snapshot_num_nodes(s), 3);
    /* the removed node is out of the order too */
    CHECK_INT(ls_snapshot_changed_since(s, 0, out, 4), 3);

    CHECK(ls_cache_remove_pod(c, p, &err));
    CHECK(ls_cache_remove_pod(c, q, &err));
    CHECK(ls_cache_remove_pod(c, r, &err));
    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_pod_release(p);
    ls_pod_release(q);
    ls_pod_release(r);
    ls_node_release(a);
    ls_node_release(b);
    ls_node_release(cn);
    ls_node_release(d);
}

static void test_node_removal(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *a = labelled_node("a", "");
    const ls_node *b = labelled_node("b", "");
    const ls_node *cn = labelled_node("c", "");
    const ls_node *d = labelled_node("d", "");
    const ls_pod *p = cpu_pod("p", "c", "100m");
    ls_error err = {{0}};
    ls_cache_add_node(c, a);
    ls_cache_add_node(c, b);
    ls_cache_add_node(c, cn);
    ls_cache_add_node(c, d);
    CHECK(ls_cache_add_pod(c, p, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 4);
    CHECK_STR(order(s), "a,b,c,d");

    /* removing b (no pods): nothing to copy, b pruned, the list rebuilt */
    ls_cache_remove_node(c, b);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_INT(ls_snapshot_num_nodes(s), 3);
    CHECK(ls_snapshot_find(s, S("b")) == NULL);
    CHECK_STR(order(s), "a,c,d");
    CHECK(indexes_consistent(s));

    /* removing c with a pod on it: a ghost, never copied, pruned from the snapshot */
    ls_cache_remove_node(c, cn);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_INT(ls_snapshot_num_nodes(s), 2);
    CHECK(ls_snapshot_find(s, S("c")) == NULL);
    CHECK_STR(order(s), "a,d");
    CHECK(indexes_consistent(s));

    /* the ghost changing (its pod deleted) does not bring it back */
    CHECK(ls_cache_remove_pod(c, p, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_STR(order(s), "a,d");

    /* removing and re-adding before the next update: one copy, b back at the end */
    ls_cache_add_node(c, b);
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK_STR(order(s), "a,d,b");
    ls_cache_remove_node(c, a);
    ls_cache_add_node(c, a);
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK_STR(order(s), "d,b,a");
    CHECK(indexes_consistent(s));

    /* removing everything empties the snapshot */
    ls_cache_remove_node(c, a);
    ls_cache_remove_node(c, b);
    ls_cache_remove_node(c, d);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_INT(ls_snapshot_num_nodes(s), 0);
    CHECK(ls_snapshot_find(s, S("d")) == NULL);

    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_pod_release(p);
    ls_node_release(a);
    ls_node_release(b);
    ls_node_release(cn);
    ls_node_release(d);
}

/* Removal prunes correctly with many nodes (the map's backward-shift deletion
 * moves entries during the prune walk). */
static void test_bulk_removal(void)
{
    enum { N = 64 };
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *nodes[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%02d", i);
        nodes[i] = labelled_node(name, "");
        ls_cache_add_node(c, nodes[i]);
    }
    CHECK_INT(ls_cache_update_snapshot(c, s), N);
    /* remove every node with an odd number: 32 remain, n00, n02, ..., n62 in order */
    for (int i = 1; i < N; i += 2)
        ls_cache_remove_node(c, nodes[i]);
    CHECK_INT(ls_cache_update_snapshot(c, s), 0);
    CHECK_INT(ls_snapshot_num_nodes(s), N / 2);
    bool ok = true;
    for (int i = 0; i < N / 2; i++)
        ok = ok && ls_snapshot_node(s, (uint32_t)i)->node == nodes[2 * i];
    CHECK(ok);
    for (int i = 1; i < N; i += 2)
        ok = ok && ls_snapshot_find(s, nodes[i]->name) == NULL;
    CHECK(ok);
    CHECK(indexes_consistent(s));

    ls_snapshot_free(s);
    ls_cache_free(c);
    for (int i = 0; i < N; i++)
        ls_node_release(nodes[i]);
}

/* ---- copy semantics */

static void test_copy_semantics(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *a = labelled_node("a", "");
    const ls_node *b = labelled_node("b", "");
    const ls_pod *p1 = cpu_pod("p1", "a", "200m");
    const ls_pod *p2 = cpu_pod("p2", "a", "300m");
    const ls_pod *p3 = cpu_pod("p3", "a", "50m");
    ls_error err = {{0}};
    ls_cache_add_node(c, a);
    CHECK(ls_cache_add_pod(c, p1, &err));
    CHECK(ls_cache_add_pod(c, p2, &err));
    ls_cache_update_snapshot(c, s);
    const ls_node_info *snap = ls_snapshot_find(s, S("a"));
    const ls_node_info *live = ls_cache_node_info(c, S("a"));
    CHECK(snap != live);
    CHECK_INT(snap->requested.milli_cpu, 500);   /* 200 + 300 */
    uint64_t gen = snap->generation;

    /* the cache changes: p1 leaves, p3 arrives, a node is added */
    CHECK(ls_cache_remove_pod(c, p1, &err));
    CHECK(ls_cache_add_pod(c, p3, &err));
    ls_cache_add_node(c, b);
    /* the snapshot keeps what it copied until the next update */
    CHECK_INT(snap->num_pods, 2);
    CHECK(snap->num_pods == 2 && snap->pods[0] == p1 && snap->pods[1] == p2);
    CHECK_INT(snap->requested.milli_cpu, 500);
    CHECK_INT(snap->nonzero_milli_cpu, 500);
    CHECK(snap->generation == gen);
    CHECK_INT(ls_snapshot_num_nodes(s), 1);
    CHECK(ls_snapshot_find(s, S("b")) == NULL);
    /* while the live view has moved on: 300 + 50 */
    CHECK_INT(live->requested.milli_cpu, 350);

    /* the next update refreshes the same NodeInfo in place */
    CHECK_INT(ls_cache_update_snapshot(c, s), 2);   /* a and b */
    CHECK(ls_snapshot_find(s, S("a")) == snap);
    CHECK_INT(snap->requested.milli_cpu, 350);
    CHECK_INT(snap->num_pods, 2);
    CHECK(snap->generation == live->generation);
    CHECK_INT(ls_snapshot_num_nodes(s), 2);

    /* two snapshots of one cache are independent */
    ls_snapshot *s2 = ls_snapshot_new();
    CHECK_INT(ls_cache_update_snapshot(c, s2), 2);
    CHECK(ls_cache_remove_pod(c, p3, &err));
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK_INT(ls_snapshot_find(s, S("a"))->requested.milli_cpu, 300);
    CHECK_INT(ls_snapshot_find(s2, S("a"))->requested.milli_cpu, 350);
    CHECK_INT(ls_cache_update_snapshot(c, s2), 1);
    CHECK_INT(ls_snapshot_find(s2, S("a"))->requested.milli_cpu, 300);

    CHECK(ls_cache_remove_pod(c, p2, &err));
    ls_snapshot_free(s2);
    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_pod_release(p1);
    ls_pod_release(p2);
    ls_pod_release(p3);
    ls_node_release(a);
    ls_node_release(b);
}

/* ---- node tree */

static void test_zone_key(void)
{
    const ls_node *both = labelled_node("x", "topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: z1");
    const ls_node *beta = labelled_node("y", "failure-domain.beta.kubernetes.io/region: r1, "
                                             "failure-domain.beta.kubernetes.io/zone: z1");
    const ls_node *mixed = labelled_node("m", "topology.kubernetes.io/zone: z1, "
                                              "failure-domain.beta.kubernetes.io/zone: z9, "
                                              "failure-domain.beta.kubernetes.io/region: r1");
    const ls_node *zone_only = labelled_node("z", "topology.kubernetes.io/zone: z1");
    const ls_node *region_only = labelled_node("r", "topology.kubernetes.io/region: r1");
    const ls_node *none = labelled_node("n", "kubernetes.io/hostname: n");

    /* GetZoneKey: region + ":\x00:" + zone */
    ls_str k = ls_node_zone_key(both);
    CHECK_INT(ls_str_len(k), 7);   /* "r1" + 3 + "z1" */
    CHECK(ls_str_len(k) == 7 && memcmp(ls_str_get(k), "r1:\0:z1", 7) == 0);
    /* the beta labels give the same key for the same values */
    CHECK(ls_node_zone_key(beta) == k);
    /* the GA zone label wins over the beta one; the beta region fills in */
    CHECK(ls_node_zone_key(mixed) == k);
    /* one of the two is enough; neither gives no key */
    k = ls_node_zone_key(zone_only);
    CHECK(ls_str_len(k) == 5 && memcmp(ls_str_get(k), ":\0:z1", 5) == 0);
    k = ls_node_zone_key(region_only);
    CHECK(ls_str_len(k) == 5 && memcmp(ls_str_get(k), "r1:\0:", 5) == 0);
    CHECK(ls_node_zone_key(none) == 0);

    ls_node_release(both);
    ls_node_release(beta);
    ls_node_release(mixed);
    ls_node_release(zone_only);
    ls_node_release(region_only);
    ls_node_release(none);
}

static void test_zone_round_robin(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    const ls_node *a = zoned_node("a", "z1");
    const ls_node *b = zoned_node("b", "z1");
    const ls_node *cn = zoned_node("c", "z2");
    const ls_node *d = zoned_node("d", "z3");
    const ls_node *e = zoned_node("e", "z1");
    ls_cache_add_node(c, a);
    ls_cache_add_node(c, b);
    ls_cache_add_node(c, cn);
    ls_cache_add_node(c, d);
    ls_cache_add_node(c, e);
    ls_cache_update_snapshot(c, s);
    /* zones z1: [a, b, e], z2: [c], z3: [d];
     * round 0: a c d; round 1: b; round 2: e */
    CHECK_STR(order(s), "a,c,d,b,e");
    CHECK(indexes_consistent(s));

    /* b moves to z3 (appended there): z1 [a, e], z2 [c], z3 [d, b] -> a c d | e b */
    const ls_node *b3 = zoned_node("b", "z3");
    ls_cache_update_node(c, b, b3);
    CHECK_INT(ls_cache_update_snapshot(c, s), 1);
    CHECK_STR(order(s), "a,c,d,e,b");
    CHECK(indexes_consistent(s));

    /* c moves to z1, emptying z2: z1 [a, e, c], z3 [d, b] -> a d | e b | c */
    const ls_node *c1 = zoned_node("c", "z1");
    ls_cache_update_node(c, cn, c1);
    ls_cache_update_snapshot(c, s);
    CHECK_STR(order(s), "a,d,e,b,c");
    CHECK(indexes_consistent(s));

    /* a label change that keeps the zone does not move the node */
    const ls_node *a_gold = labelled_node("a", "topology.kubernetes.io/zone: z1, tier: gold");
    ls_cache_update_node(c, a, a_gold);
    ls_cache_update_snapshot(c, s);
    CHECK_STR(order(s), "a,d,e,b,c");

    /* removing d: z1 [a, e, c], z3 [b] -> a b | e | c */
    ls_cache_remove_node(c, d);
    ls_cache_update_snapshot(c, s);
    CHECK_STR(order(s), "a,b,e,c");
    CHECK(indexes_consistent(s));
    CHECK(ls_snapshot_find(s, S("d")) == NULL);
    CHECK(ls_snapshot_find(s, S("e")) && ls_snapshot_find(s, S("e"))->node == e);

    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_node_release(a);
    ls_node_release(a_gold);
    ls_node_release(b);
    ls_node_release(b3);
    ls_node_release(cn);
    ls_node_release(c1);
    ls_node_release(d);
    ls_node_release(e);
}

static void test_zone_key_order(void)
{
    ls_cache *c = ls_cache_new();
    ls_snapshot *s = ls_snapshot_new();
    /* x (r1/z1), y (r2/z1): the same zone name in two regions is two zones;
     * w uses the beta labels for r1/z1, so it joins x; u has no zone labels */
    const ls_node *x = labelled_node("x", "topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: z1");
    const ls_node *y = labelled_node("y", "topology.kubernetes.io/region: r2, topology.kubernetes.io/zone: z1");
    const ls_node *w = labelled_node("w", "failure-domain.beta.kubernetes.io/region: r1, "
                                          "failure-domain.beta.kubernetes.io/zone: z1");
    const ls_node *u = labelled_node("u", "");
    const ls_node *v = labelled_node("v", "");
    ls_cache_add_node(c, x);
    ls_cache_add_node(c, y);
    ls_cache_add_node(c, w);
    ls_cache_add_node(c, u);
    ls_cache_add_node(c, v);
    ls_cache_update_snapshot(c, s);
    /* zones r1/z1 [x, w], r2/z1 [y], "" [u, v] -> x y u | w v */
    CHECK_STR(order(s), "x,y,u,w,v");
    CHECK(indexes_consistent(s));
    /* ls_snapshot_find: by name, NULL for an unknown one */
    CHECK(ls_snapshot_find(s, S("w")) && ls_snapshot_find(s, S("w"))->node == w);
    CHECK(ls_snapshot_find(s, S("nope")) == NULL);
    CHECK(ls_snapshot_node(s, 5) == NULL);

    ls_snapshot_free(s);
    ls_cache_free(c);
    ls_node_release(x);
    ls_node_release(y);
    ls_node_release(w);
    ls_node_release(u);
    ls_node_release(v);
}

int main(void)
{
    test_incremental_update();
    test_changed_since();
    test_node_removal();
    test_bulk_removal();
    test_copy_semantics();
    test_zone_key();
    test_zone_round_robin();
    test_zone_key_order();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
