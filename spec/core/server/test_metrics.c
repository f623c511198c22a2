/*
 * test_metrics.c: the Prometheus registry's text format (written by hand from
 * the exposition format: HELP, TYPE, cumulative buckets with le, +Inf, _sum,
 * _count, label escaping) and klog-style log lines.
 */
#include "luasched/log.h"
#include "server/metrics.h"
#include "test.h"

#include <stdlib.h>

static void test_counter_and_gauge(void)
{
    ls_metrics *m = ls_metrics_new();
    static const char *const labels[] = {"result", "profile", NULL};
    ls_metric_family *c = ls_metrics_family(m, "x_attempts_total", "Attempts.", LS_METRIC_COUNTER, labels, NULL, 0);
    ls_metric_family *g = ls_metrics_family(m, "x_pending", "Pending \\ pods\nnow.", LS_METRIC_GAUGE, NULL, NULL, 0);
    const char *a[] = {"scheduled", "default-scheduler"}, *b[] = {"error", "we\"ird\\"};
    ls_metrics_add(c, a, 1);
    ls_metrics_add(c, a, 2);
    ls_metrics_add(c, b, 1);
    ls_metrics_set(g, NULL, 7);
    CHECK(ls_metrics_family(m, "x_pending", "again", LS_METRIC_GAUGE, NULL, NULL, 0) == g);
    char *text = ls_metrics_render(m);
    CHECK_STR(text, "# HELP x_attempts_total Attempts.\n"
                    "# TYPE x_attempts_total counter\n"
                    "x_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"} 3\n"
                    "x_attempts_total{result=\"error\",profile=\"we\\\"ird\\\\\"} 1\n"
                    "# HELP x_pending Pending \\\\ pods\\nnow.\n"
                    "# TYPE x_pending gauge\n"
                    "x_pending 7\n");
    free(text);
    ls_metrics_free(m);
}

static void test_histogram(void)
{
    ls_metrics *m = ls_metrics_new();
    double buckets[3];
    ls_metrics_exp_buckets(0.001, 2, 3, buckets);
    CHECK(buckets[2] == 0.004);
    static const char *const labels[] = {"point", NULL};
    ls_metric_family *h = ls_metrics_family(m, "x_seconds", "Latency.", LS_METRIC_HISTOGRAM, labels, buckets, 3);
    const char *f[] = {"Filter"};
    ls_metrics_observe(h, f, 0.0005);
    ls_metrics_observe(h, f, 0.002);
    ls_metrics_observe(h, f, 0.002);
    ls_metrics_observe(h, f, 1.5);
    char *text = ls_metrics_render(m);
    CHECK_STR(text, "# HELP x_seconds Latency.\n"
                    "# TYPE x_seconds histogram\n"
                    "x_seconds_bucket{point=\"Filter\",le=\"0.001\"} 1\n"
                    "x_seconds_bucket{point=\"Filter\",le=\"0.002\"} 3\n"
                    "x_seconds_bucket{point=\"Filter\",le=\"0.004\"} 3\n"
                    "x_seconds_bucket{point=\"Filter\",le=\"+Inf\"} 4\n"
                    "x_seconds_sum{point=\"Filter\"} 1.5045\n"
                    "x_seconds_count{point=\"Filter\"} 4\n");
    free(text);
    ls_metrics_free(m);
}

static char *read_all(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *buf = calloc(1, (size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        buf[0] = '\0';
    return buf;
}

static void test_logs(void)
{
    FILE *f = tmpfile();
    ls_log_setup(2, LS_LOG_JSON, f);
    ls_log_info(2, "Successfully bound pod to node", "pod", "default/web-0", "node", "n\"1");
    ls_log_info(3, "too verbose");
    char *text = read_all(f);
    const char *msg = strstr(text, "\"msg\"");
    CHECK(strncmp(text, "{\"ts\":", 6) == 0);
    CHECK(strstr(text, "\"caller\":\"test_metrics.c:") != NULL);
    CHECK_STR(msg, "\"msg\":\"Successfully bound pod to node\",\"v\":2,\"pod\":\"default/web-0\",\"node\":\"n\\\"1\"}\n");
    free(text);
    fclose(f);
    f = tmpfile();
    ls_log_setup(0, LS_LOG_TEXT, f);
    ls_log_error("Leaderelection lost");
    text = read_all(f);
    CHECK(text[0] == 'E');
    CHECK(strstr(text, " test_metrics.c:") != NULL);
    CHECK(strstr(text, "] \"Leaderelection lost\"\n") != NULL);
    free(text);
    fclose(f);
    /* klog.KObj: "ns/name" in text, {"name","namespace"} in JSON */
    char ref[300];
    f = tmpfile();
    ls_log_setup(2, LS_LOG_TEXT, f);
    ls_log_info(2, "Successfully bound pod to node", "pod", ls_log_kobj(ref, sizeof ref, "default", "p1"), "node",
                "n1");
    text = read_all(f);
    CHECK(strstr(text, "] \"Successfully bound pod to node\" pod=\"default/p1\" node=\"n1\"\n") != NULL);
    free(text);
    fclose(f);
    f = tmpfile();
    ls_log_setup(2, LS_LOG_JSON, f);
    ls_log_info(2, "Successfully bound pod to node", "pod", ls_log_kobj(ref, sizeof ref, "default", "p1"), "node",
                "n1");
    ls_log_info(2, "Cluster-scoped", "node", ls_log_kobj(ref, sizeof ref, NULL, "n1"));
    text = read_all(f);
    CHECK(strstr(text, ",\"pod\":{\"name\":\"p1\",\"namespace\":\"default\"},\"node\":\"n1\"}\n") != NULL);
    CHECK(strstr(text, ",\"node\":{\"name\":\"n1\"}}\n") != NULL);
    free(text);
    fclose(f);
    ls_log_setup(0, LS_LOG_TEXT, NULL);
    ls_log_format fmt;
    CHECK(ls_log_parse_format("json", &fmt) && fmt == LS_LOG_JSON);
    CHECK(!ls_log_parse_format("yaml", &fmt));
}

int main(void)
{
    test_counter_and_gauge();
    test_histogram();
    test_logs();
    TEST_MAIN_END();
}
