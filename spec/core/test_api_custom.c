/*
 * test_api_custom.c: the served API's custom resources (api_custom.c) and
 * metrics.k8s.io resources: registration from a cluster file (plural by the
 * CRD default rule, scope as the embedded cluster decides), list and get,
 * discovery per group version, and the read-only metrics resources.
 */
#include "sim/api_internal.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const CLUSTER =
    "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: team}\nspec: {size: 3}\n---\n"
    "apiVersion: example.com/v1\nkind: Policy\nmetadata: {name: p1}\n---\n"
    "apiVersion: example.com/v1\nkind: Box\nmetadata: {name: b1, namespace: team}\n---\n"
    "apiVersion: topology.node.k8s.io/v1alpha2\nkind: NodeResourceTopology\nmetadata: {name: n1}\n"
    "topologyPolicies: [SingleNUMANodeContainerLevel]\n---\n"
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"
    "spec: {group: example.com, scope: Namespaced}\n---\n"
    "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: n1}\n"
    "timestamp: \"2026-11-24T12:00:00Z\"\nwindow: 30s\nusage: {cpu: 1500m, memory: 3Gi}\n";

static char path[64];

static char *write_cluster(void)
{
    snprintf(path, sizeof path, "/tmp/test_api_custom_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, CLUSTER, strlen(CLUSTER)) != (ssize_t)strlen(CLUSTER))
        abort();
    close(fd);
    return path;
}

static int count_items(ls_api *a, const ls_api_resource *r, const char *ns)
{
    cJSON *out = NULL;
    ls_api_list_opts o = {0};
    int n = ls_api_list(a, r, ns, &o, &out) == 200 ? cJSON_GetArraySize(cJSON_GetObjectItem(out, "items")) : -1;
    cJSON_Delete(out);
    return n;
}

static bool discovery_has(const char *group, const char *version)
{
    cJSON *d = api_discovery_groups(0);
    bool found = false;
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(d, "groups")) {
        const cJSON *pv = cJSON_GetObjectItem(g, "preferredVersion");
        found = found || (strcmp(cJSON_GetObjectItem(g, "name")->valuestring, group) == 0 &&
                          strcmp(cJSON_GetObjectItem(pv, "version")->valuestring, version) == 0);
    }
    cJSON_Delete(d);
    return found;
}

static void test_custom_resources(void)
{
    char *path = write_cluster();
    ls_api *a = ls_api_new(0, 1);
    ls_error err;
    CHECK(ls_api_load_file(a, path, &err));
    unlink(path);
    /* plural rule: -s, -ies after a consonant and y, -es after x */
    const ls_api_resource *w = ls_api_resource_find("example.com", "v1", "widgets");
    const ls_api_resource *p = ls_api_resource_find("example.com", "v1", "policies");
    const ls_api_resource *b = ls_api_resource_find("example.com", "v1", "boxes");
    const ls_api_resource *t = ls_api_resource_find("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies");
    CHECK(w && p && b && t);
    if (!w || !p || !b || !t)
        return;
    CHECK_STR(w->kind, "Widget");
    CHECK(w->namespaced);
    CHECK(p->namespaced);                    /* custom kinds are namespaced unless the model says otherwise */
    CHECK(!t->namespaced);                   /* NodeResourceTopology is cluster-scoped */
    const ls_api_resource *crd =
        ls_api_resource_find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    CHECK(crd && !crd->namespaced);          /* a CRD document is served, cluster-scoped */
    CHECK_INT(count_items(a, w, "team"), 1);
    CHECK_INT(count_items(a, w, "other"), 0);
    CHECK_INT(count_items(a, p, NULL), 1);   /* created in "default", listed across namespaces */
    cJSON *out = NULL;
    CHECK_INT(ls_api_get(a, w, "team", "w1", &out), 200);
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "size")->valueint, 3);
    cJSON_Delete(out);
    CHECK(discovery_has("example.com", "v1"));
    CHECK(discovery_has("topology.node.k8s.io", "v1alpha2"));
    CHECK(discovery_has("apps", "v1"));
    /* a second file registers nothing twice */
    uint32_t n = api_custom_count();
    path = write_cluster();
    ls_api *a2 = ls_api_new(0, 1);
    CHECK(ls_api_load_file(a2, path, &err));
    unlink(path);
    CHECK_INT(api_custom_count(), n);
    ls_api_free(a2);
    ls_api_free(a);
}

static void test_metrics_resources(void)
{
    char *path = write_cluster();
    ls_api *a = ls_api_new(0, 1);
    ls_error err;
    CHECK(ls_api_load_file(a, path, &err));
    unlink(path);
    const ls_api_resource *nm = ls_api_resource_find("metrics.k8s.io", "v1beta1", "nodes");
    const ls_api_resource *pm = ls_api_resource_find("metrics.k8s.io", "v1beta1", "pods");
    CHECK(nm && pm);
    if (!nm || !pm)
        return;
    CHECK_STR(nm->kind, "NodeMetrics");
    CHECK(!nm->namespaced && pm->namespaced);
    CHECK(api_resource_read_only(nm) && api_resource_read_only(pm));
    CHECK(!api_resource_read_only(ls_api_resource_find("", "v1", "pods")));
    cJSON *out = NULL;
    CHECK_INT(ls_api_get(a, nm, NULL, "n1", &out), 200);
    CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "usage"), "cpu")->valuestring, "1500m");
    CHECK_STR(cJSON_GetObjectItem(out, "window")->valuestring, "30s");
    cJSON_Delete(out);
    CHECK(discovery_has("metrics.k8s.io", "v1beta1"));
    ls_api_free(a);
}

int main(void)
{
    test_custom_resources();
    test_metrics_resources();
    TEST_MAIN_END();
}
