/*
 * lua_vs_c.c: how much the Lua plugin costs against the same plugin in C.
 *
 *   luasched_lua_vs_c [NODES [PODS [PODS_PER_NODE]]]      (defaults 5000 1000 10)
 *
 * Builds a snapshot through the cache API: NODES nodes shaped like
 * scheduler_perf's (4 CPU, 32Gi, 110 pods), each running PODS_PER_NODE pods
 * of assorted sizes (every tenth node nearly full, so Filter rejects some).
 * Then, for each of PODS incoming pods, runs NodeResourcesFit's PreFilter and
 * Filter over every node and PreScore and Score (LeastAllocated) over every
 * feasible node, twice:
 *   (a) in C (bench/fit_in_c.c);
 *   (b) the real plugin, plugins/node_resources_fit.lua, through the Lua
 *       runtime: a profile with NodeResourcesFit alone, and one
 *       LS_EP_PRE_FILTER / FILTER / PRE_SCORE / SCORE per pod, as the
 *       scheduler's cycle makes them.
 * Prints ns per node for each (filter + score), the Lua/C ratio, and whether
 * both gave the same feasible nodes, statuses and scores (exit 1 if not).
 */
#include "fit_in_c.h"
#include "framework/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fixture {
    uint32_t n_nodes, n_pods, per_node;
    const ls_node **nodes;
    const ls_pod **running;        /* n_nodes * per_node, on the nodes */
    const ls_pod **incoming;       /* n_pods, to place */
    ls_cache *cache;
    ls_snapshot *snapshot;
} fixture;

/* The cycle buffers and what one pod's run produced. */
typedef struct run_buffers {
    const ls_node_info **feasible;
    ls_node_status *status;
    int64_t *scores, *raw;
    uint8_t skipped[1];
} run_buffers;

typedef struct result {
    uint32_t num_feasible;
    uint32_t *feasible;            /* node indices */
    int64_t *scores;
    uint8_t *codes;                /* per node */
} result;

/* This thread's CPU time: on a shared machine the time the thread waits for a
 * core is not the work of either implementation (the wall clock swung the
 * ratio from 1.0 to 2.3 under a load average of 8). */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const ls_error *err)
{
    fprintf(stderr, "luasched_lua_vs_c: %s: %s\n", what, err ? err->msg : "");
    exit(2);
}

/* ---- the snapshot */

static const ls_node *make_node(uint32_t i)
{
    char text[400];
    int n = snprintf(text, sizeof text,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05u\"},"
                     "\"status\":{\"capacity\":{\"pods\":\"110\",\"cpu\":\"4\",\"memory\":\"32Gi\"}}}",
                     i);
    ls_error err;
    const ls_node *node = ls_node_parse(text, (size_t)n, "<node>", &err);
    if (!node)
        die("node", &err);
    return node;
}

/* A pod of assorted size; on `node` when given. Every tenth node gets a big
 * first pod, so that it has no room for most incoming pods. */
static const ls_pod *make_pod(const char *name, const char *node, uint32_t milli_cpu, uint32_t mem_mi)
{
    char text[600], where[64] = "";
    if (node)
        snprintf(where, sizeof where, "\"nodeName\":\"%s\",", node);
    int n = snprintf(text, sizeof text,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"bench\"},"
                     "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                     "{\"cpu\":\"%um\",\"memory\":\"%uMi\"}}}]}}",
                     name, where, milli_cpu, mem_mi);
    ls_error err;
    const ls_pod *pod = ls_pod_parse(text, (size_t)n, "<pod>", &err);
    if (!pod)
        die("pod", &err);
    return pod;
}

static void build_fixture(fixture *f)
{
    ls_error err;
    f->cache = ls_cache_new();
    f->nodes = calloc(f->n_nodes, sizeof *f->nodes);
    f->running = calloc((size_t)f->n_nodes * f->per_node, sizeof *f->running);
    f->incoming = calloc(f->n_pods, sizeof *f->incoming);
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        f->nodes[i] = make_node(i);
        ls_cache_add_node(f->cache, f->nodes[i]);
        for (uint32_t j = 0; j < f->per_node; j++) {
            char name[64];
            snprintf(name, sizeof name, "run-%u-%u", i, j);
            uint32_t cpu = i % 10 == 0 && j == 0 ? 3500 : 50 + (i * 7 + j * 13) % 250;
            const ls_pod *p = make_pod(name, ls_str_get(f->nodes[i]->name), cpu, 100 + (i * 11 + j * 17) % 1500);
            f->running[(size_t)i * f->per_node + j] = p;
            if (!ls_cache_add_pod(f->cache, p, &err))
                die("cache", &err);
        }
    }
    for (uint32_t k = 0; k < f->n_pods; k++) {
        char name[64];
        snprintf(name, sizeof name, "incoming-%u", k);
        f->incoming[k] = make_pod(name, NULL, 100 + (k % 5) * 100, 500);
    }
    f->snapshot = ls_snapshot_new();
    ls_cache_update_snapshot(f->cache, f->snapshot);
}

static void free_fixture(fixture *f)
{
    ls_snapshot_free(f->snapshot);
    ls_cache_free(f->cache);
    for (size_t i = 0; i < (size_t)f->n_nodes * f->per_node; i++)
        ls_pod_release(f->running[i]);
    for (uint32_t k = 0; k < f->n_pods; k++)
        ls_pod_release(f->incoming[k]);
    for (uint32_t i = 0; i < f->n_nodes; i++)
        ls_node_release(f->nodes[i]);
    free(f->nodes);
    free(f->running);
    free(f->incoming);
}

/* ---- the cycle */

static void init_cycle(ls_cycle *c, const fixture *f, run_buffers *b)
{
    uint32_t n = ls_snapshot_num_nodes(f->snapshot);
    memset(c, 0, sizeof *c);
    b->feasible = calloc(n, sizeof *b->feasible);
    b->status = calloc(n, sizeof *b->status);
    b->scores = calloc(n, sizeof *b->scores);
    b->raw = calloc(n, sizeof *b->raw);
    c->snapshot = f->snapshot;
    c->num_all_nodes = n;
    c->all_nodes = ls_snapshot_list(f->snapshot);
    c->num_filter_plugins = 1;
    c->num_score_plugins = 1;
    c->feasible = b->feasible;
    c->node_status = b->status;
    c->scores = b->scores;
    c->raw_scores = b->raw;
    c->score_skipped = b->skipped;
}

/* What the scheduler's begin_cycle and run_filters set: every node a
 * candidate, every feasible one scored (percentageOfNodesToScore 100). */
static void begin_pod(ls_cycle *c, const ls_pod *pod)
{
    c->pod = pod;
    c->candidates = c->all_nodes;
    c->num_candidates = c->num_all_nodes;
    c->start = 0;
    c->num_to_find = c->num_all_nodes;
    c->num_feasible = c->num_processed = 0;
}

static void free_buffers(run_buffers *b)
{
    free(b->feasible);
    free(b->status);
    free(b->scores);
    free(b->raw);
}

/* ---- the Lua runtime with NodeResourcesFit alone */

static void fit_profile(ls_profile *p)
{
    memset(p, 0, sizeof *p);
    p->scheduler_name = ls_intern_cstr("default-scheduler");
    p->percentage_of_nodes_to_score = 100;
    ls_str name = ls_intern_cstr("NodeResourcesFit");
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        ls_vec_init(&p->plugins[ep], sizeof(ls_plugin_ref));
    static const int points[] = {LS_EP_PRE_FILTER, LS_EP_FILTER, LS_EP_PRE_SCORE, LS_EP_SCORE};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        ls_plugin_ref *ref = ls_vec_push(&p->plugins[points[i]]);
        ref->name = name;
        ref->weight = 1;
    }
}

static void free_profile(ls_profile *p)
{
    for (int ep = 0; ep < LS_EP_COUNT; ep++)
        ls_vec_free(&p->plugins[ep]);
}

/* Seconds spent in Filter (with PreFilter) and in Score (with PreScore). */
typedef struct split {
    double filter, score;
} split;

static void lua_pod(ls_lua *lua, ls_cycle *c, const ls_pod *pod, split *t)
{
    double t0 = now_s();
    begin_pod(c, pod);
    if (ls_lua_run(lua, LS_EP_PRE_FILTER, 0) != LS_SUCCESS || ls_lua_run(lua, LS_EP_FILTER, 0) != LS_SUCCESS) {
        fprintf(stderr, "luasched_lua_vs_c: Lua filter: %s\n", ls_status_get(c->status)->message);
        exit(1);
    }
    double t1 = now_s();
    t->filter += t1 - t0;
    if (c->num_feasible < 2)
        return;   /* a single feasible node is not scored (as the scheduler) */
    if (ls_lua_run(lua, LS_EP_PRE_SCORE, 0) != LS_SUCCESS || ls_lua_run(lua, LS_EP_SCORE, 0) != LS_SUCCESS) {
        fprintf(stderr, "luasched_lua_vs_c: Lua score: %s\n", ls_status_get(c->status)->message);
        exit(1);
    }
    t->score += now_s() - t1;
}

static void c_pod(ls_cycle *c, const ls_pod *pod, split *t)
{
    fit_pod_state st;
    double t0 = now_s();
    begin_pod(c, pod);
    fit_run_filter(c, &st);
    double t1 = now_s();
    t->filter += t1 - t0;
    fit_run_score(c, &st);
    t->score += now_s() - t1;
}

/* ---- checking that both agree */

static void keep(result *r, const ls_cycle *c)
{
    r->num_feasible = c->num_feasible;
    for (uint32_t i = 0; i < c->num_feasible; i++) {
        r->feasible[i] = c->feasible[i]->index;
        r->scores[i] = c->num_feasible > 1 ? c->scores[i] : 0;
    }
    for (uint32_t i = 0; i < c->num_all_nodes; i++)
        r->codes[i] = c->node_status[i].code;
}

static bool same(const result *a, const result *b, uint32_t n_nodes)
{
    if (a->num_feasible != b->num_feasible)
        return false;
    for (uint32_t i = 0; i < a->num_feasible; i++)
        if (a->feasible[i] != b->feasible[i] || a->scores[i] != b->scores[i])
            return false;
    return memcmp(a->codes, b->codes, n_nodes) == 0;
}

static void alloc_result(result *r, uint32_t n)
{
    r->feasible = calloc(n, sizeof *r->feasible);
    r->scores = calloc(n, sizeof *r->scores);
    r->codes = calloc(n, 1);
}

static void free_result(result *r)
{
    free(r->feasible);
    free(r->scores);
    free(r->codes);
}

/* Runs both on every pod and compares; also warms the JIT up. Returns the
 * feasible nodes per pod, summed. */
static uint64_t verify(const fixture *f, ls_lua *lua, ls_cycle *c, bool *agree)
{
    result rc, rl;
    alloc_result(&rc, c->num_all_nodes);
    alloc_result(&rl, c->num_all_nodes);
    uint64_t feasible = 0;
    split ignored = {0, 0};
    *agree = true;
    for (uint32_t k = 0; k < f->n_pods; k++) {
        c_pod(c, f->incoming[k], &ignored);
        keep(&rc, c);
        lua_pod(lua, c, f->incoming[k], &ignored);
        keep(&rl, c);
        feasible += rc.num_feasible;
        if (!same(&rc, &rl, c->num_all_nodes) && *agree) {
            fprintf(stderr, "luasched_lua_vs_c: pod %u: C and Lua disagree (feasible %u vs %u)\n", k,
                    rc.num_feasible, rl.num_feasible);
            *agree = false;
        }
    }
    free_result(&rc);
    free_result(&rl);
    return feasible;
}

/* ---- timing */

static split time_c(const fixture *f, ls_cycle *c)
{
    split t = {0, 0};
    for (uint32_t k = 0; k < f->n_pods; k++)
        c_pod(c, f->incoming[k], &t);
    return t;
}

static split time_lua(const fixture *f, ls_lua *lua, ls_cycle *c)
{
    split t = {0, 0};
    for (uint32_t k = 0; k < f->n_pods; k++)
        lua_pod(lua, c, f->incoming[k], &t);
    return t;
}

static double total(split t)
{
    return t.filter + t.score;
}

/* The best of `rounds` runs of each, alternating. */
static void measure(const fixture *f, ls_lua *lua, ls_cycle *c, int rounds, split *tc, split *tl)
{
    for (int r = 0; r < rounds; r++) {
        split a = time_c(f, c), b = time_lua(f, lua, c);
        if (r == 0 || total(a) < total(*tc))
            *tc = a;
        if (r == 0 || total(b) < total(*tl))
            *tl = b;
    }
}

static uint32_t arg_or(int argc, char **argv, int i, uint32_t fallback)
{
    if (argc <= i)
        return fallback;
    char *end;
    unsigned long v = strtoul(argv[i], &end, 10);
    if (!*argv[i] || *end || v == 0 || v > 1000000) {
        fprintf(stderr, "usage: luasched_lua_vs_c [NODES [PODS [PODS_PER_NODE]]]\n");
        exit(2);
    }
    return (uint32_t)v;
}

static void report_line(const char *who, split t, double visits, double scored, const char *what)
{
    printf("%-4s %6.1f ns per node: filter %5.1f ns per node, score %5.1f ns per scored node (%.1f ms)  %s\n", who,
           total(t) * 1e9 / visits, t.filter * 1e9 / visits, scored ? t.score * 1e9 / scored : 0.0,
           total(t) * 1e3, what);
}

static void report(const fixture *f, uint64_t feasible, split tc, split tl, bool agree)
{
    double visits = (double)f->n_nodes * f->n_pods;
    printf("snapshot: %u nodes, %u running pods each; %u incoming pods; %.0f feasible nodes per pod on average\n",
           f->n_nodes, f->per_node, f->n_pods, (double)feasible / f->n_pods);
    report_line("C", tc, visits, (double)feasible, "bench/fit_in_c.c");
    report_line("Lua", tl, visits, (double)feasible, "plugins/node_resources_fit.lua through the Lua runtime");
    printf("ratio Lua/C: %.2f (filter %.2f, score %.2f; target: within 1.30)\n", total(tl) / total(tc),
           tl.filter / tc.filter, tc.score > 0 ? tl.score / tc.score : 0.0);
    printf("results agree: %s\n", agree ? "yes (feasible nodes, statuses, scores)" : "NO");
}

int main(int argc, char **argv)
{
    fixture f = {.n_nodes = arg_or(argc, argv, 1, 5000), .n_pods = arg_or(argc, argv, 2, 1000),
                 .per_node = arg_or(argc, argv, 3, 10)};
    if (argc > 4) {
        fprintf(stderr, "usage: luasched_lua_vs_c [NODES [PODS [PODS_PER_NODE]]]\n");
        return 2;
    }
    build_fixture(&f);
    ls_cycle cycle;
    run_buffers buf;
    init_cycle(&cycle, &f, &buf);
    ls_error err;
    ls_lua *lua = ls_lua_new(&cycle, NULL, &err);
    ls_profile prof;
    fit_profile(&prof);
    if (!lua || !ls_lua_build(lua, &prof, 1, &err))
        die("Lua runtime", &err);
    bool agree;
    uint64_t feasible = verify(&f, lua, &cycle, &agree);
    split tc = {0, 0}, tl = {0, 0};
    measure(&f, lua, &cycle, 3, &tc, &tl);
    report(&f, feasible, tc, tl, agree);
    ls_lua_free(lua);
    free_profile(&prof);
    free_buffers(&buf);
    free_fixture(&f);
    fit_reset();
    ls_status_reset();
    ls_intern_reset();
    return agree ? 0 : 1;
}
