/*
 * test_framework.c: the framework's small pure parts against the reference:
 * numFeasibleNodesToFind (§1.8), the status registry and status codes (§1.2),
 * extension-point names (§1.1, §5.1), and the FitError message (§6.1) built by
 * core/src/framework/fit_error.c from a hand-built ls_cycle.
 */
#include "framework/fit_error.h"
#include "luasched/framework.h"

#include <stdlib.h>

#include "test.h"

/* ---- numFeasibleNodesToFind */

static void test_num_feasible_nodes(void)
{
    /* fewer than minFeasibleNodesToFind (100) nodes: check all of them */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 50, true), 50);
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 99, true), 99);
    CHECK_INT(ls_num_feasible_nodes_to_find(10, 99, true), 99);   /* whatever the percentage */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 0, true), 0);
    /* adaptive (percentage 0): 50 - n/125, floored at 5; the result floored at 100 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 100, true), 100);    /* 50 - 0 = 50% -> 50 -> floor 100 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 199, true), 100);    /* 50 - 1 = 49% -> 97 -> floor 100 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 250, true), 120);    /* 50 - 2 = 48% -> 120 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 1000, true), 420);   /* 50 - 8 = 42% -> 420 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 5000, true), 500);   /* 50 - 40 = 10% -> 500 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 5624, true), 337);   /* 5624/125 = 44: 6% -> 33744/100 = 337 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 6000, true), 300);   /* 50 - 48 = 2 -> 5% -> 300 */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 10000, true), 500);  /* 50 - 80 < 5 -> 5% -> 500 */
    /* an explicit percentage */
    CHECK_INT(ls_num_feasible_nodes_to_find(100, 1000, true), 1000);  /* all */
    CHECK_INT(ls_num_feasible_nodes_to_find(100, 5000, true), 5000);
    CHECK_INT(ls_num_feasible_nodes_to_find(30, 1000, true), 300);    /* 30% of 1000 */
    CHECK_INT(ls_num_feasible_nodes_to_find(5, 1000, true), 100);     /* 5% = 50 -> floor 100 */
    CHECK_INT(ls_num_feasible_nodes_to_find(1, 20000, true), 200);    /* 1% explicit is not floored at 5% */
    /* no scoring (no Score plugins, no extenders): one feasible node is enough */
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 50, false), 1);
    CHECK_INT(ls_num_feasible_nodes_to_find(0, 5000, false), 1);
    CHECK_INT(ls_num_feasible_nodes_to_find(100, 5000, false), 1);
}

/* ---- statuses */

static uint32_t reg(uint8_t code, const char *reasons)
{
    return ls_status_register(code, reasons, strlen(reasons));
}

static void test_status_registry(void)
{
    /* id 0 is Success, with no reasons */
    const ls_status_info *ok = ls_status_get(0);
    CHECK_INT(ok->code, LS_SUCCESS);
    CHECK_INT(ok->n_reasons, 0);
    CHECK_STR(ok->message, "");
    CHECK_INT(reg(LS_SUCCESS, "whatever"), 0);

    /* the same code and reasons share an id */
    uint32_t cpu = reg(LS_UNSCHEDULABLE, "Insufficient cpu");
    CHECK(cpu != 0);
    CHECK_INT(reg(LS_UNSCHEDULABLE, "Insufficient cpu"), cpu);
    /* a different code or different text is a different status */
    uint32_t cpu_unres = reg(LS_UNRESOLVABLE, "Insufficient cpu");
    CHECK(cpu_unres != cpu && cpu_unres != 0);
    CHECK(reg(LS_UNSCHEDULABLE, "Insufficient memory") != cpu);
    CHECK_INT(ls_status_get(cpu)->code, LS_UNSCHEDULABLE);
    CHECK_INT(ls_status_get(cpu_unres)->code, LS_UNRESOLVABLE);
    CHECK_INT(ls_status_get(cpu)->n_reasons, 1);
    CHECK_STR(ls_status_get(cpu)->message, "Insufficient cpu");

    /* reasons are split on '\n'; Message() joins them with ", " */
    uint32_t both = reg(LS_UNSCHEDULABLE, "Insufficient cpu\nInsufficient memory\nToo many pods");
    const ls_status_info *st = ls_status_get(both);
    CHECK_INT(st->n_reasons, 3);
    if (st->n_reasons == 3) {
        CHECK_STR(st->reasons[0], "Insufficient cpu");
        CHECK_STR(st->reasons[1], "Insufficient memory");
        CHECK_STR(st->reasons[2], "Too many pods");
    }
    CHECK_STR(st->message, "Insufficient cpu, Insufficient memory, Too many pods");

    /* only len bytes are read */
    uint32_t cut = ls_status_register(LS_ERROR, "boom and more", 4);
    CHECK_STR(ls_status_get(cut)->message, "boom");
    CHECK_INT(ls_status_get(cut)->code, LS_ERROR);

    /* a status without reasons (Lua's status(code) registers "") has none, as
     * upstream's NewStatus(code) has no Reasons() */
    uint32_t bare = ls_status_register(LS_UNSCHEDULABLE, "", 0);
    CHECK(bare != 0);
    CHECK_INT(ls_status_get(bare)->n_reasons, 0);
    CHECK_STR(ls_status_get(bare)->message, "");
    CHECK_INT(ls_status_register(LS_UNSCHEDULABLE, "", 0), bare);

    /* many statuses: ids stay stable as the registry grows */
    uint32_t ids[200];
    for (int i = 0; i < 200; i++) {
        char r[32];
        snprintf(r, sizeof r, "reason %d", i);
        ids[i] = reg(LS_UNSCHEDULABLE, r);
    }
    bool stable = true;
    for (int i = 0; i < 200; i++) {
        char r[32];
        snprintf(r, sizeof r, "reason %d", i);
        stable = stable && reg(LS_UNSCHEDULABLE, r) == ids[i] && strcmp(ls_status_get(ids[i])->message, r) == 0;
    }
    CHECK(stable);
    CHECK_STR(ls_status_get(cpu)->message, "Insufficient cpu");
    /* an unknown id reads as Success */
    CHECK_INT(ls_status_get(1000000)->code, LS_SUCCESS);
}

static void test_codes(void)
{
    CHECK_STR(ls_code_name(LS_SUCCESS), "Success");
    CHECK_STR(ls_code_name(LS_ERROR), "Error");
    CHECK_STR(ls_code_name(LS_UNSCHEDULABLE), "Unschedulable");
    CHECK_STR(ls_code_name(LS_UNRESOLVABLE), "UnschedulableAndUnresolvable");
    CHECK_STR(ls_code_name(LS_WAIT), "Wait");
    CHECK_STR(ls_code_name(LS_SKIP), "Skip");
    CHECK_STR(ls_code_name(LS_PENDING), "Pending");
    CHECK_STR(ls_code_name(42), "Unknown");
    /* IsRejected = Unschedulable or UnschedulableAndUnresolvable or Pending */
    CHECK(!ls_code_is_rejected(LS_SUCCESS));
    CHECK(!ls_code_is_rejected(LS_ERROR));
    CHECK(ls_code_is_rejected(LS_UNSCHEDULABLE));
    CHECK(ls_code_is_rejected(LS_UNRESOLVABLE));
    CHECK(!ls_code_is_rejected(LS_WAIT));
    CHECK(!ls_code_is_rejected(LS_SKIP));
    CHECK(ls_code_is_rejected(LS_PENDING));
}

/* ---- extension points */

static void test_ext_points(void)
{
    /* upstream's points in its run order, with their KubeSchedulerConfiguration
     * keys and names (a point added to the table is checked by the loop below) */
    static const struct {
        int ep;
        const char *key, *name;
    } upstream[] = {
        {LS_EP_PRE_ENQUEUE, "preEnqueue", "PreEnqueue"}, {LS_EP_QUEUE_SORT, "queueSort", "QueueSort"},
        {LS_EP_PRE_FILTER, "preFilter", "PreFilter"},    {LS_EP_FILTER, "filter", "Filter"},
        {LS_EP_POST_FILTER, "postFilter", "PostFilter"}, {LS_EP_PRE_SCORE, "preScore", "PreScore"},
        {LS_EP_SCORE, "score", "Score"},                 {LS_EP_RESERVE, "reserve", "Reserve"},
        {LS_EP_PERMIT, "permit", "Permit"},              {LS_EP_PRE_BIND, "preBind", "PreBind"},
        {LS_EP_BIND, "bind", "Bind"},                    {LS_EP_POST_BIND, "postBind", "PostBind"},
    };
    enum { N_UPSTREAM = sizeof upstream / sizeof upstream[0] };
    for (int i = 0; i < N_UPSTREAM; i++) {
        CHECK_INT(ls_ext_point_from_config_key(upstream[i].key), upstream[i].ep);
        CHECK_STR(ls_ext_point_name(upstream[i].ep), upstream[i].name);
        if (i > 0)
            CHECK(upstream[i - 1].ep < upstream[i].ep);   /* the table keeps upstream's order */
    }
    /* every configured point of the table: its key finds its row */
    for (int ep = 0; ep < LS_EP_COUNT; ep++) {
        const ls_ext_point_info *row = ls_ext_point_info_of(ep);
        CHECK(row->config_key != NULL);
        CHECK_INT(ls_ext_point_from_config_key(row->config_key), ep);
        CHECK_STR(ls_ext_point_name(ep), row->name);
    }
    CHECK_INT(ls_ext_point_from_config_key("preFilter"), LS_EP_PRE_FILTER);
    CHECK_INT(ls_ext_point_from_config_key("score"), LS_EP_SCORE);
    /* multiPoint is not an extension point of its own; keys are case-sensitive */
    CHECK_INT(ls_ext_point_from_config_key("multiPoint"), -1);
    CHECK_INT(ls_ext_point_from_config_key("PreFilter"), -1);
    CHECK_INT(ls_ext_point_from_config_key(""), -1);
    CHECK_STR(ls_ext_point_hook(LS_EP_QUEUE_SORT), "sort_key");
    CHECK_STR(ls_ext_point_hook(LS_EP_PRE_FILTER), "pre_filter");
    CHECK_STR(ls_ext_point_hook(LS_EP_POST_BIND), "post_bind");
    CHECK_STR(ls_ext_point_name(-1), "?");
    CHECK_STR(ls_ext_point_name(LS_EP_COUNT), "?");
}

/* ---- FitError */

enum { MAX_NODES = 16 };

/* A failed Filter phase over n candidate nodes: node i got statuses[i]
 * (0 = passed). Only what fit_error.c reads is filled in. */
typedef struct fake_cycle {
    ls_cycle c;
    ls_node_info infos[MAX_NODES];
    const ls_node_info *candidates[MAX_NODES];
    ls_node_status status[MAX_NODES];
} fake_cycle;

static void fake_init(fake_cycle *f, uint32_t num_all, uint32_t n, const uint32_t *statuses)
{
    memset(f, 0, sizeof *f);
    for (uint32_t i = 0; i < n; i++) {
        f->infos[i].index = i;
        f->candidates[i] = &f->infos[i];
        f->status[i].status = statuses[i];
        f->status[i].code = ls_status_get(statuses[i])->code;
        f->status[i].plugin = statuses[i] ? 0 : -1;
    }
    f->c.num_all_nodes = num_all;
    f->c.num_candidates = n;
    f->c.candidates = f->candidates;
    f->c.num_processed = n;
    f->c.node_status = f->status;
}

/* Runs ls_fit_error_filter and compares the whole message. */
static void check_fit_error(const fake_cycle *f, const char *expected, int line)
{
    char *msg = ls_fit_error_filter(&f->c);
    ls_test_checks++;
    if (strcmp(msg, expected) != 0) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: fit error\n  got      \"%s\"\n  expected \"%s\"\n", __FILE__, line, msg, expected);
    }
    free(msg);
}
#define CHECK_FIT_ERROR(f, expected) check_fit_error(f, expected, __LINE__)

static void test_fit_error_reference_example(void)
{
    /* §6.1's example (without the PostFilter part): 1 tainted node, 2 short of cpu */
    uint32_t taint = reg(LS_UNRESOLVABLE, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }");
    uint32_t cpu = reg(LS_UNSCHEDULABLE, "Insufficient cpu");
    fake_cycle f;
    fake_init(&f, 3, 3, (uint32_t[]){taint, cpu, cpu});
    /* "1 node(s)..." < "2 Insufficient cpu" as strings */
    CHECK_FIT_ERROR(&f, "0/3 nodes are available: 1 node(s) had untolerated taint "
                        "{node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu.");
    /* where Filter started does not matter: every processed node is counted once */
    f.c.start = 2;
    CHECK_FIT_ERROR(&f, "0/3 nodes are available: 1 node(s) had untolerated taint "
                        "{node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu.");
}

static void test_fit_error_string_sort(void)
{
    /* 10 nodes "b slow", 2 nodes "a full": entries "10 b slow" and "2 a full";
     * sort.Strings puts "10 b slow" first ('1' < '2'), not by count or by reason */
    uint32_t b = reg(LS_UNSCHEDULABLE, "b slow");
    uint32_t a = reg(LS_UNSCHEDULABLE, "a full");
    uint32_t st[12];
    for (int i = 0; i < 12; i++)
        st[i] = i % 6 == 0 ? a : b;   /* nodes 0 and 6: a; the other 10: b */
    fake_cycle f;
    fake_init(&f, 12, 12, st);
    CHECK_FIT_ERROR(&f, "0/12 nodes are available: 10 b slow, 2 a full.");
}

static void test_fit_error_multi_reason(void)
{
    /* each reason of a multi-reason status counts for its node:
     * cpu: nodes 0, 1 -> 2; memory: node 0 -> 1; pods: node 2 -> 1
     * sorted: "1 Insufficient memory" < "1 Too many pods" < "2 Insufficient cpu" */
    uint32_t cpu_mem = reg(LS_UNSCHEDULABLE, "Insufficient cpu\nInsufficient memory");
    uint32_t cpu = reg(LS_UNSCHEDULABLE, "Insufficient cpu");
    uint32_t pods = reg(LS_UNSCHEDULABLE, "Too many pods");
    fake_cycle f;
    fake_init(&f, 3, 3, (uint32_t[]){cpu_mem, cpu, pods});
    CHECK_FIT_ERROR(&f, "0/3 nodes are available: 1 Insufficient memory, 1 Too many pods, 2 Insufficient cpu.");

    /* the same reason under different codes is one histogram entry: 1 + 1 = 2 */
    uint32_t cpu_unres = reg(LS_UNRESOLVABLE, "Insufficient cpu");
    fake_init(&f, 2, 2, (uint32_t[]){cpu, cpu_unres});
    CHECK_FIT_ERROR(&f, "0/2 nodes are available: 2 Insufficient cpu.");
}

static void test_fit_error_absent_nodes(void)
{
    /* PreFilter restricted the candidates to 2 of 5 nodes, both short of cpu;
     * the 5 - 2 = 3 others count with the absent-nodes status */
    uint32_t cpu = reg(LS_UNSCHEDULABLE, "Insufficient cpu");
    uint32_t absent = reg(LS_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
    fake_cycle f;
    fake_init(&f, 5, 2, (uint32_t[]){cpu, cpu});
    f.c.prefilter_restricts = 1;
    f.c.prefilter_absent_status = absent;
    CHECK_FIT_ERROR(&f, "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity].");

    /* a multi-reason absent status counts each reason 3 times */
    uint32_t absent2 = reg(LS_UNRESOLVABLE, "zz one\nInsufficient cpu");
    f.c.prefilter_absent_status = absent2;
    /* cpu: 2 + 3 = 5; "zz one": 3 */
    CHECK_FIT_ERROR(&f, "0/5 nodes are available: 3 zz one, 5 Insufficient cpu.");

    /* without an absent status the nodes outside the list add nothing */
    f.c.prefilter_absent_status = 0;
    CHECK_FIT_ERROR(&f, "0/5 nodes are available: 2 Insufficient cpu.");
}

static void test_fit_error_edges(void)
{
    /* statuses without reasons contribute no entries; upstream then appends
     * nothing after the colon (" %v." only when the histogram is non-empty) */
    uint32_t bare = ls_status_register(LS_UNSCHEDULABLE, "", 0);
    fake_cycle f;
    fake_init(&f, 2, 2, (uint32_t[]){bare, bare});
    CHECK_FIT_ERROR(&f, "0/2 nodes are available:");

    /* passed nodes (code Success) are not counted; only the rejected ones */
    uint32_t cpu = reg(LS_UNSCHEDULABLE, "Insufficient cpu");
    fake_init(&f, 3, 3, (uint32_t[]){cpu, 0, cpu});
    CHECK_FIT_ERROR(&f, "0/3 nodes are available: 2 Insufficient cpu.");

    /* start wraps around the candidate list: (3 + i) % 4 visits 3, 0, 1, 2 */
    uint32_t mem = reg(LS_UNSCHEDULABLE, "Insufficient memory");
    fake_init(&f, 4, 4, (uint32_t[]){cpu, mem, mem, cpu});
    f.c.start = 3;
    CHECK_FIT_ERROR(&f, "0/4 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.");
}

static void test_fit_error_prefilter(void)
{
    fake_cycle f;
    fake_init(&f, 3, 0, NULL);
    char *msg = ls_fit_error_prefilter(&f.c, "node(s) didn't match pod topology spread constraints (missing required label)");
    CHECK_STR(msg, "0/3 nodes are available: node(s) didn't match pod topology spread constraints "
                   "(missing required label).");
    free(msg);
    /* a multi-reason PreFilter status arrives as its Message(), joined with ", " */
    uint32_t st = reg(LS_UNRESOLVABLE, "first\nsecond");
    msg = ls_fit_error_prefilter(&f.c, ls_status_get(st)->message);
    CHECK_STR(msg, "0/3 nodes are available: first, second.");
    free(msg);
}

int main(void)
{
    test_num_feasible_nodes();
    test_status_registry();
    test_codes();
    test_ext_points();
    test_fit_error_reference_example();
    test_fit_error_string_sort();
    test_fit_error_multi_reason();
    test_fit_error_absent_nodes();
    test_fit_error_edges();
    test_fit_error_prefilter();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
