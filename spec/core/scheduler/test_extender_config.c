/*
 * test_extender_config.c: the `extenders:` list of a configuration (fields,
 * upstream's validateExtenders messages, the written form) and the runtime's
 * view of it: ignorable extenders last, which pods an extender is
 * interested in (managedResources), NodeResourcesFit's ignoredResources.
 */
#include "config/config_internal.h"
#include "scheduler/extender_internal.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

#define API "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static const char *write_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ls-ext-cfg-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* The problems of a configuration, joined by '\n' without the file name. */
static char *problems_of(const char *text)
{
    const char *path = write_file(text);
    ls_config cfg;
    ls_error err;
    ls_config_load(&cfg, path, &err);
    size_t total = 1;
    for (uint32_t i = 0; i < cfg.problems.len; i++)
        total += strlen(LS_VEC_AT(&cfg.problems, char *, i)) + 1;
    char *out = calloc(1, total);
    for (uint32_t i = 0; i < cfg.problems.len; i++) {
        const char *p = LS_VEC_AT(&cfg.problems, char *, i);
        if (strncmp(p, path, strlen(path)) == 0)
            p += strlen(path);
        strcat(out, p);
        if (i + 1 < cfg.problems.len)
            strcat(out, "\n");
    }
    ls_config_free(&cfg);
    return out;
}

static void check_problems(const char *text, const char *expected, int line)
{
    char *got = problems_of(text);
    if (strcmp(got, expected) != 0) {
        ls_test_failures++;
        fprintf(stderr, "%s:%d: problems:\n%s\nexpected:\n%s\n", __FILE__, line, got, expected);
    }
    ls_test_checks++;
    free(got);
}
#define CHECK_PROBLEMS(text, expected) check_problems(text, expected, __LINE__)

static void test_fields(void)
{
    const char *path = write_file(API "extenders:\n"
                                      "- urlPrefix: http://a/\n"
                                      "  filterVerb: filter\n"
                                      "  ignorable: true\n"
                                      "- urlPrefix: https://b\n"
                                      "  prioritizeVerb: prio\n"
                                      "  weight: 3\n"
                                      "  httpTimeout: 250ms\n"
                                      "  enableHTTPS: true\n"
                                      "  tlsConfig: {insecure: true, serverName: b.example, certData: aGk=}\n"
                                      "  nodeCacheCapable: true\n"
                                      "  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n");
    ls_config cfg;
    ls_error err;
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK_INT(cfg.n_extenders, 2);
    if (cfg.n_extenders == 2) {
        const ls_extender_config *a = &cfg.extenders[0], *b = &cfg.extenders[1];
        CHECK_STR(a->url_prefix, "http://a/");
        CHECK_STR(a->filter_verb, "filter");
        CHECK(a->prioritize_verb == NULL && a->bind_verb == NULL && a->preempt_verb == NULL);
        CHECK(a->ignorable);
        CHECK_INT(a->http_timeout_ns, 0);   /* no v1 default: 5 s only at run time */
        CHECK_INT(b->weight, 3);
        CHECK_INT(b->http_timeout_ns, 250000000);
        CHECK(b->enable_https && b->has_tls && b->tls.insecure && b->node_cache_capable);
        CHECK_STR(b->tls.server_name, "b.example");
        CHECK_INT(b->tls.cert_len, 2);
        CHECK(b->tls.cert_data && memcmp(b->tls.cert_data, "hi", 2) == 0);
        CHECK_INT(b->n_managed, 1);
        CHECK_STR(b->managed[0].name, "example.com/gpu");
        CHECK(b->managed[0].ignored_by_scheduler);

        /* the runtime: ignorable last, httpTimeout 0 -> 5 s */
        ls_extenders *x = ls_extenders_new(&cfg, &err);
        CHECK(x != NULL);
        if (x) {
            CHECK_INT(x->n, 2);
            CHECK_STR(x->items[0].url, "https://b");
            CHECK_STR(x->items[1].url, "http://a");
            CHECK_INT(x->items[0].timeout_ms, 250);
            CHECK_INT(x->items[1].timeout_ms, LS_DEFAULT_EXTENDER_TIMEOUT_MS);
            CHECK(ls_extenders_have_filter(x) && ls_extenders_have_prioritizer(x));

            const char *gpu = "{\"metadata\":{\"name\":\"g\",\"namespace\":\"d\",\"uid\":\"u\"},"
                              "\"spec\":{\"containers\":"
                              "[{\"name\":\"c\",\"resources\":{\"limits\":{\"example.com/gpu\":\"1\"}}}]}}";
            const char *plain = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"containers\":"
                                "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
            const ls_pod *g = ls_pod_parse(gpu, strlen(gpu), "gpu", &err);
            const ls_pod *p = ls_pod_parse(plain, strlen(plain), "plain", &err);
            CHECK(g && p);
            if (g && p) {
                CHECK(ls_extender_interested(&x->items[0], g));    /* a limit alone names the resource */
                CHECK(!ls_extender_interested(&x->items[0], p));
                CHECK(ls_extender_interested(&x->items[1], p));    /* no managedResources: every pod */
            }
            ls_pod_release(g);
            ls_pod_release(p);
            ls_extenders_free(x);
        }

        /* ignoredByScheduler -> NodeResourcesFit's ignoredResources */
        ls_extenders_apply_ignored_resources(&cfg, cfg.profiles, cfg.n_profiles);
        cJSON *fit = cJSON_GetObjectItemCaseSensitive(cfg.profiles[0].plugin_args, "NodeResourcesFit");
        char *text = cJSON_PrintUnformatted(fit);
        CHECK_STR(text, "{\"ignoredResources\":[\"example.com/gpu\"]}");
        free(text);

        /* written back: omitempty fields out, httpTimeout always in, []byte in base64 */
        char *json = ls_config_format(&cfg, true, &err);
        cJSON *root = cJSON_Parse(json);
        char *ext = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, "extenders"));
        CHECK_STR(ext, "[{\"filterVerb\":\"filter\",\"httpTimeout\":\"0s\",\"ignorable\":true,"
                       "\"urlPrefix\":\"http://a/\"},"
                       "{\"enableHTTPS\":true,\"httpTimeout\":\"250ms\",\"managedResources\":[{\"ignoredByScheduler\":"
                       "true,\"name\":\"example.com/gpu\"}],\"nodeCacheCapable\":true,"
                       "\"prioritizeVerb\":\"prio\",\"tlsConfig\":{\"certData\":\"aGk=\",\"insecure\":true,"
                       "\"serverName\":\"b.example\"},\"urlPrefix\":\"https://b\",\"weight\":3}]");
        free(ext);
        cJSON_Delete(root);
        free(json);
    }
    ls_config_free(&cfg);
}

/* upstream's validateExtenders and apimachinery's name checks, word for word */
static void test_validation(void)
{
    CHECK_PROBLEMS(API "extenders:\n- {urlPrefix: x, prioritizeVerb: p, weight: -1}\n",
                   ":4: extenders[0].weight: Invalid value: -1: must have a positive weight applied to it");
    CHECK_PROBLEMS(API "extenders:\n- {urlPrefix: x, bindVerb: b}\n- {urlPrefix: y, bindVerb: c}\n",
                   ":3: extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can "
                   "implement bind");
    CHECK_PROBLEMS(API "extenders:\n- urlPrefix: x\n  managedResources:\n  - name: Example.com/gpu\n",
                   ":6: extenders[0].managedResources[0].name: Invalid value: \"Example.com/gpu\": prefix part a "
                   "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                   "must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                   "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    CHECK_PROBLEMS(API "extenders:\n- urlPrefix: x\n  managedResources:\n  - name: example.com/-x\n",
                   ":6: extenders[0].managedResources[0].name: Invalid value: \"example.com/-x\": name part must "
                   "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                   "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    CHECK_PROBLEMS(API "extenders:\n- urlPrefix: x\n  managedResources:\n  - name: kubernetes.io/x\n"
                       "- urlPrefix: y\n  managedResources:\n  - name: a.io/x\n  - name: a.io/x\n",
                   ":6: extenders[0].managedResources[0].name: Invalid value: \"kubernetes.io/x\": is an invalid "
                   "extended resource name\n"
                   ":10: extenders[1].managedResources[1].name: Invalid value: \"a.io/x\": duplicate extender "
                   "managed resource name");
    CHECK_PROBLEMS(API "extenders:\n- {urlPrefix: x, httpTimeout: soon, tlsConfig: {caData: \"!!\"}, colour: red}\n",
                   ":4: extenders[0].colour: unknown field\n"
                   ":4: extenders[0].httpTimeout: expected a duration such as \"30s\" or \"1m30s\"\n"
                   ":4: extenders[0].tlsConfig.caData: illegal base64 data: expected standard base64 (PEM bytes)");
    CHECK_PROBLEMS(API "extenders: {urlPrefix: x}\n", ":3: extenders: expected a list of extenders");
}

int main(void)
{
    test_fields();
    test_validation();
    unlink(write_file(""));
    TEST_MAIN_END();
}
