/*
 * test_feature_gates.c: --feature-gates parsing as component-base's Set, the
 * v1.37 defaults, locks and luasched's refusals, and the flag taken out of
 * a command's arguments.
 */
#include "../test.h"

#include "luasched/feature_gates.h"
#include "luasched/framework.h"

static void test_defaults(void)
{
    ls_feature_gates_reset();
    CHECK(ls_feature_enabled(LS_FG_OpportunisticBatching));
    CHECK(ls_feature_enabled(LS_FG_SchedulerPopFromBackoffQ));
    CHECK(ls_feature_enabled(LS_FG_StorageCapacityScoring));
    CHECK(ls_feature_enabled(LS_FG_NodeDeclaredFeatures));
    CHECK(!ls_feature_enabled(LS_FG_GenericWorkload));
    CHECK(!ls_feature_enabled(LS_FG_SchedulerAsyncAPICalls));
    CHECK(ls_feature_enabled_name("DynamicResourceAllocation"));
    CHECK(!ls_feature_enabled_name("NoSuchGate"));
    const ls_feature_gate_info *i = ls_feature_gate_info_of(LS_FG_SchedulerQueueingHints);
    CHECK(i->stage == LS_FG_STAGE_GA && i->locked && i->default_value);
    CHECK_STR(ls_feature_gate_refusal(LS_FG_OpportunisticBatching), "");   /* implemented off */
    CHECK(ls_feature_gate_refusal(LS_FG_SchedulerAsyncPreemption)[0] != '\0');
}

static void test_set(void)
{
    ls_feature_gates_reset();
    ls_error err = {{0}};
    CHECK(ls_feature_gates_set(" OpportunisticBatching = false ,,SchedulerPopFromBackoffQ=0", &err));
    CHECK(!ls_feature_enabled(LS_FG_OpportunisticBatching));
    CHECK(!ls_feature_enabled(LS_FG_SchedulerPopFromBackoffQ));
    char buf[256];
    ls_feature_gates_format(buf, sizeof buf);
    CHECK_STR(buf, "OpportunisticBatching=false,SchedulerPopFromBackoffQ=false");
    /* a later value wins; Go's ParseBool spellings */
    CHECK(ls_feature_gates_set("OpportunisticBatching=T", &err));
    CHECK(ls_feature_enabled(LS_FG_OpportunisticBatching));

    /* a bad item changes nothing, not even the good ones before it */
    CHECK(!ls_feature_gates_set("StorageCapacityScoring=false,Foo=true", &err));
    CHECK_STR(err.msg, "unrecognized feature gate: Foo");
    CHECK(ls_feature_enabled(LS_FG_StorageCapacityScoring));
    CHECK(!ls_feature_gates_set("VolumeLimitScalin=true", &err));
    CHECK_STR(err.msg, "unrecognized feature gate: VolumeLimitScalin (did you mean VolumeLimitScaling?)");
    CHECK(!ls_feature_gates_set("NodeDeclaredFeatures=false", &err));
    CHECK_STR(err.msg, "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true");
    CHECK(ls_feature_gates_set("NodeDeclaredFeatures=true", &err));   /* its default: fine */
    CHECK(!ls_feature_gates_set("GenericWorkload=yes", &err));
    CHECK_STR(err.msg, "invalid value of GenericWorkload=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax");
    CHECK(!ls_feature_gates_set("GenericWorkload", &err));
    CHECK_STR(err.msg, "missing bool value for GenericWorkload");
    CHECK(!ls_feature_gates_set("SchedulerAsyncPreemption=false", &err));
    CHECK_CONTAINS(err.msg, "SchedulerAsyncPreemption=false is not supported by luasched: ");
    ls_feature_gates_reset();
}

static void test_from_args(void)
{
    ls_feature_gates_reset();
    char a0[] = "simulate", a1[] = "c.yaml", a2[] = "--feature-gates=OpportunisticBatching=false", a3[] = "--seed",
         a4[] = "3", a5[] = "--feature-gates", a6[] = "SchedulerPopFromBackoffQ=false", a7[] = "--",
         a8[] = "--feature-gates=Foo=true";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
    int argc = 9;
    ls_error err = {{0}};
    CHECK(ls_feature_gates_from_args(&argc, argv, &err));
    CHECK_INT(argc, 6);
    CHECK_STR(argv[2], "--seed");
    CHECK_STR(argv[4], "--");
    CHECK_STR(argv[5], "--feature-gates=Foo=true");   /* after --: positional, untouched */
    CHECK(argv[6] == NULL);
    CHECK(!ls_feature_enabled(LS_FG_OpportunisticBatching));
    CHECK(!ls_feature_enabled(LS_FG_SchedulerPopFromBackoffQ));

    char b0[] = "check", b1[] = "--feature-gates=Foo=true";
    char *bad[] = {b0, b1, NULL};
    argc = 2;
    CHECK(!ls_feature_gates_from_args(&argc, bad, &err));
    CHECK_STR(err.msg, "invalid argument \"Foo=true\" for \"--feature-gates\" flag: unrecognized feature gate: Foo");
    char c0[] = "check", c1[] = "--feature-gates";
    char *missing[] = {c0, c1, NULL};
    argc = 2;
    CHECK(!ls_feature_gates_from_args(&argc, missing, &err));
    CHECK_STR(err.msg, "flag needs an argument: --feature-gates");
    ls_feature_gates_reset();
}

int main(void)
{
    test_defaults();
    test_set();
    test_from_args();
    TEST_MAIN_END();
}
