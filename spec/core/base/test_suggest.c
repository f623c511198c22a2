/*
 * test_suggest.c: "did you mean" (base/suggest.c) and the per-key log limit
 * (base/log_limit.c). The expected suggestions are the misspellings a
 * newcomer writes (issue 25), worked by hand: one edit, one swap, a prefix.
 */
#include "base/log_limit.h"
#include "luasched/base.h"
#include "test.h"

static void test_did_you_mean(void)
{
    const char *pod_spec[] = {"containers", "initContainers", "nodeName", "nodeSelector", "tolerations"};
    size_t n = sizeof pod_spec / sizeof *pod_spec;
    CHECK_STR(ls_did_you_mean("nodeSelecter", pod_spec, n), "nodeSelector");   /* one substitution */
    CHECK_STR(ls_did_you_mean("containres", pod_spec, n), "containers");       /* one swap */
    CHECK_STR(ls_did_you_mean("nodename", pod_spec, n), "nodeName");           /* case */
    CHECK_STR(ls_did_you_mean("node", pod_spec, n), "nodeName");               /* a prefix */
    CHECK(ls_did_you_mean("priority", pod_spec, n) == NULL);                    /* nothing close */
    CHECK(ls_did_you_mean("nodeName", pod_spec, n) == NULL);                    /* known: no suggestion */
    CHECK(ls_did_you_mean("", pod_spec, n) == NULL);
    const char *resources[] = {"limits", "requests", "claims"};
    CHECK_STR(ls_did_you_mean("request", resources, 3), "requests");
    const char *plugins[] = {"PreferLabeled", "PrioritySort", "NodeAffinity"};
    CHECK_STR(ls_did_you_mean("PreferLabelled", plugins, 3), "PreferLabeled");
    const char *strategies[] = {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"};
    CHECK_STR(ls_did_you_mean("MostAlocated", strategies, 3), "MostAllocated");
    CHECK(ls_did_you_mean("Balanced", strategies, 3) == NULL);
}

/* A misspelt hook: case and underscores ignored, one edit at most, no
 * prefix rule (helpers named after a hook are no misspelling). */
static void test_misspelling_of(void)
{
    const char *hooks[] = {"pre_filter", "filter", "post_filter", "pre_score", "score", "bind", "init"};
    size_t n = sizeof hooks / sizeof *hooks;
    CHECK_STR(ls_misspelling_of("filtr", hooks, n), "filter");          /* one deletion */
    CHECK_STR(ls_misspelling_of("scor", hooks, n), "score");            /* one deletion */
    CHECK_STR(ls_misspelling_of("socre", hooks, n), "score");           /* one swap */
    CHECK_STR(ls_misspelling_of("preFilter", hooks, n), "pre_filter");  /* camelCase */
    CHECK_STR(ls_misspelling_of("Score", hooks, n), "score");           /* case */
    CHECK_STR(ls_misspelling_of("postfiltre", hooks, n), "post_filter"); /* underscore and a swap */
    CHECK(ls_misspelling_of("bind_claim", hooks, n) == NULL);            /* a helper: "bind" is a prefix */
    CHECK(ls_misspelling_of("score_volumes", hooks, n) == NULL);
    CHECK(ls_misspelling_of("zone_score", hooks, n) == NULL);            /* three edits from pre_score */
    CHECK(ls_misspelling_of("score_of", hooks, n) == NULL);              /* two edits from score */
    CHECK_STR(ls_misspelling_of("scores", hooks, n), "score");           /* one insertion */
    CHECK(ls_misspelling_of("filter", hooks, n) == NULL);                /* known: no suggestion */
    CHECK(ls_misspelling_of("fit", hooks, n) == NULL);                   /* under four letters: exact only */
    CHECK_STR(ls_misspelling_of("Bind", hooks, n), "bind");              /* another case */
}

static void test_log_limit(void)
{
    ls_log_limiter *l = ls_log_limiter_new(10.0);
    uint64_t held = 99;
    CHECK(ls_log_limiter_allow(l, "Raises", 100.0, &held));
    CHECK_INT(held, 0);
    CHECK(!ls_log_limiter_allow(l, "Raises", 101.0, &held));
    CHECK(!ls_log_limiter_allow(l, "Raises", 109.9, &held));
    CHECK(ls_log_limiter_allow(l, "Other", 105.0, &held));   /* per key */
    CHECK_INT(held, 0);
    CHECK(ls_log_limiter_allow(l, "Raises", 110.0, &held));  /* the window passed: 2 held back */
    CHECK_INT(held, 2);
    CHECK(!ls_log_limiter_allow(l, "Raises", 115.0, &held));
    CHECK(ls_log_limiter_allow(l, "Raises", 130.0, &held));
    CHECK_INT(held, 1);
    ls_log_limiter_free(l);
}

int main(void)
{
    test_did_you_mean();
    test_misspelling_of();
    test_log_limit();
    TEST_MAIN_END();
}
