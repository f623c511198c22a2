/*
 * test_pod_group.c: the Workload API's gang membership decoded into ls_pod
 * (GangScheduling reads it): v1.36+ spec.schedulingGroup.podGroupName and
 * v1.35's spec.workloadRef {name, podGroup}, absent fields as 0, and errors
 * naming the field.
 */
#include "test.h"

#include "luasched/model.h"

#include <string.h>

static const ls_pod *parse(const char *text, ls_error *err)
{
    return ls_pod_parse(text, strlen(text), "<test>", err);
}

static void test_scheduling_group(void)
{
    ls_error err = {0};
    const ls_pod *p = parse("{\"metadata\":{\"name\":\"w0\"},\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"train\"},"
                            "\"containers\":[{\"name\":\"c\"}]}}", &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_STR(ls_str_get(p->pod_group_name), "train");
        CHECK_INT(p->workload_name, 0);
        CHECK_INT(p->workload_pod_group, 0);
        ls_pod_release(p);
    }
}

static void test_workload_ref(void)
{
    ls_error err = {0};
    const ls_pod *p = parse("{\"metadata\":{\"name\":\"w1\"},\"spec\":{\"workloadRef\":{\"name\":\"job\","
                            "\"podGroup\":\"workers\"},\"containers\":[{\"name\":\"c\"}]}}", &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_STR(ls_str_get(p->workload_name), "job");
        CHECK_STR(ls_str_get(p->workload_pod_group), "workers");
        CHECK_INT(p->pod_group_name, 0);
        ls_pod_release(p);
    }
    p = parse("{\"metadata\":{\"name\":\"plain\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(p->pod_group_name, 0);
        CHECK_INT(p->workload_name, 0);
        ls_pod_release(p);
    }
}

static void test_errors(void)
{
    ls_error err = {0};
    CHECK(parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"schedulingGroup\":\"train\"}}", &err) == NULL);
    CHECK_CONTAINS(err.msg, "spec.schedulingGroup: expected an object");
    CHECK(parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"schedulingGroup\":{\"podGroupName\":7}}}", &err) == NULL);
    CHECK_CONTAINS(err.msg, "spec.schedulingGroup.podGroupName: expected a string");
    CHECK(parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"workloadRef\":{\"podGroup\":[]}}}", &err) == NULL);
    CHECK_CONTAINS(err.msg, "spec.workloadRef.podGroup: expected a string");
}

int main(void)
{
    test_scheduling_group();
    test_workload_ref();
    test_errors();
    ls_intern_reset();
    TEST_MAIN_END();
}
