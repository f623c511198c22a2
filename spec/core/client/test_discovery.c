/*
 * test_discovery.c: the API server's discovery as run reads it
 * (client/discovery.c), what depends on which API (client/api_needs.c, the
 * configuration's unavailable plugins in config/config_available.c), against
 * the served API (sim/) over plain HTTP, as the current release and as
 * v1.28 (--serve-as); and the --serve-as release parser.
 */
#include "client/api_needs.h"
#include "client/discovery.h"
#include "luasched/config.h"
#include "sim/apiserver.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"

static ls_api_server *serve(ls_api *a)
{
    ls_api_serve_opts so = {.host = "127.0.0.1", .port = 0, .token = "t"};
    ls_error err = {{0}};
    ls_api_server *s = ls_api_serve(a, &so, &err);
    if (!s)
        fprintf(stderr, "ls_api_serve: %s\n", err.msg);
    return s;
}

static ls_kclient *client_of(ls_api_server *s)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u", ls_api_server_port(s));
    ls_kubeconfig cfg = {.server = url, .token = "t", .namespace = "default"};
    ls_kclient_options o = {.max_attempts = 1, .timeout_ms = 10000};
    ls_error err = {{0}};
    return ls_kclient_new(&cfg, &o, &err);
}

/* What run sees of an API server pretending to be release `serve_as` (0: current). */
static ls_discovery *discover(int serve_as, ls_api **api, ls_api_server **srv, ls_kclient **c)
{
    *api = ls_api_new(0, 0);
    ls_api_set_serve_as(*api, serve_as);
    *srv = serve(*api);
    *c = *srv ? client_of(*srv) : NULL;
    ls_error err = {{0}};
    ls_discovery *d = *c ? ls_discovery_fetch(*c, &err) : NULL;
    if (!d)
        fprintf(stderr, "ls_discovery_fetch: %s\n", err.msg);
    return d;
}

static void done(ls_discovery *d, ls_api *api, ls_api_server *srv, ls_kclient *c)
{
    ls_discovery_free(d);
    ls_kclient_free(c);
    ls_api_server_stop(srv);
    ls_api_free(api);
}

static void test_current_release(void)
{
    ls_api *api;
    ls_api_server *srv;
    ls_kclient *c;
    ls_discovery *d = discover(0, &api, &srv, &c);
    CHECK(d != NULL);
    if (!d)
        return;
    CHECK(ls_discovery_serves_group_version(d, "", "v1"));
    CHECK(ls_discovery_serves(d, "", "v1", "pods"));
    CHECK(ls_discovery_serves(d, "resource.k8s.io", "v1", "resourceclaims"));
    CHECK(ls_discovery_serves_name(d, "resourceslices.v1.resource.k8s.io"));
    CHECK_STR(ls_discovery_kind(d, "storage.k8s.io", "v1", "csistoragecapacities"), "CSIStorageCapacity");
    CHECK(!ls_discovery_serves(d, "storage.k8s.io", "v1", "volumesnapshots"));   /* no such resource there */
    CHECK(!ls_discovery_serves(d, "example.com", "v1", "widgets"));            /* no such group */
    CHECK(ls_discovery_serves_name(d, "Service"));                             /* a core kind name */
    ls_api_needs_apply(d);
    CHECK_INT(ls_discovery_off_count(d), 0);
    CHECK(ls_config_unavailable_api(ls_intern_cstr("DynamicResources")) == NULL);
    done(d, api, srv, c);
}

static void test_v1_28(void)
{
    ls_api *api;
    ls_api_server *srv;
    ls_kclient *c;
    ls_discovery *d = discover(28, &api, &srv, &c);
    CHECK(d != NULL);
    if (!d)
        return;
    CHECK_STR(ls_discovery_server_version(d), "v1.28.0-luasched");
    CHECK(!ls_discovery_serves_group_version(d, "resource.k8s.io", "v1"));
    CHECK(!ls_discovery_serves_name(d, "resourceclaims.v1.resource.k8s.io"));
    CHECK(ls_discovery_serves(d, "storage.k8s.io", "v1", "csistoragecapacities"));   /* GA since v1.24 */
    CHECK(ls_discovery_serves(d, "scheduling.k8s.io", "v1", "priorityclasses"));
    ls_api_needs_apply(d);
    CHECK_STR(ls_config_unavailable_api(ls_intern_cstr("DynamicResources")), "resource.k8s.io/v1");
    char *off = ls_discovery_off_text(d);
    CHECK_STR(off, "plugin DynamicResources and its watches (resource.k8s.io/v1 not served)");
    free(off);
    ls_discovery_note_off(d, "watch of widgets", "example.com", "v1", "widgets");
    ls_discovery_note_off(d, "watch of widgets", "example.com", "v1", "widgets");   /* noted once */
    CHECK_INT(ls_discovery_off_count(d), 2);
    off = ls_discovery_off_text(d);
    CHECK_STR(off, "plugin DynamicResources and its watches (resource.k8s.io/v1 not served); "
                   "watch of widgets (widgets.v1.example.com not served)");
    free(off);
    done(d, api, srv, c);
}

/* What run's worker gets on its command line (--served-apis): the v1.28
 * server's version and group versions, read back with the same answers by
 * group version; a malformed list is refused. */
static void test_served_list(void)
{
    ls_api *api;
    ls_api_server *srv;
    ls_kclient *c;
    ls_discovery *d = discover(28, &api, &srv, &c);
    CHECK(d != NULL);
    if (!d)
        return;
    char *list = ls_discovery_served_list(d);
    CHECK(strncmp(list, "v1.28.0-luasched|v1,", 20) == 0);
    CHECK(strstr(list, ",storage.k8s.io/v1") != NULL);
    CHECK(strstr(list, "resource.k8s.io") == NULL);
    ls_error err = {{0}};
    ls_discovery *w = ls_discovery_from_list(list, &err);
    CHECK(w != NULL);
    if (w) {
        CHECK_STR(ls_discovery_server_version(w), "v1.28.0-luasched");
        CHECK(ls_discovery_serves(w, "", "v1", "pods"));
        CHECK(ls_discovery_serves(w, "storage.k8s.io", "v1", "csistoragecapacities"));
        CHECK(!ls_discovery_serves(w, "resource.k8s.io", "v1", "resourceclaims"));
        CHECK(!ls_discovery_serves_name(w, "podgroups.v1beta1.scheduling.k8s.io"));
        ls_config_clear_unavailable();
        ls_api_needs_apply(w);
        CHECK_STR(ls_config_unavailable_api(ls_intern_cstr("DynamicResources")), "resource.k8s.io/v1");
        char *off = ls_discovery_off_text(w);
        CHECK_STR(off, "plugin DynamicResources and its watches (resource.k8s.io/v1 not served)");
        free(off);
        ls_discovery_free(w);
    }
    free(list);
    CHECK(ls_discovery_from_list("v1.28.0", &err) == NULL);
    CHECK_CONTAINS(err.msg, "--served-apis: expected VERSION|GROUP/VERSION,...");
    CHECK(ls_discovery_from_list("v1.28.0|v1,apps/v1,/v1", &err) == NULL);
    CHECK_STR(err.msg, "--served-apis: entry 3 \"/v1\": expected GROUP/VERSION or VERSION of [a-z0-9.-], at "
                       "most 512 entries");
    CHECK(ls_discovery_from_list("v1.28.0|v1,Apps/v1", &err) == NULL);
    done(d, api, srv, c);
    ls_config_clear_unavailable();
}

/* ---- the configuration with DynamicResources unavailable */

static bool fake_points(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    (void)ud;
    (void)err;
    *points = strcmp(name, "PrioritySort") == 0    ? 1u << LS_EP_QUEUE_SORT
              : strcmp(name, "DefaultBinder") == 0 ? 1u << LS_EP_BIND
                                                   : 1u << LS_EP_FILTER;
    return true;
}

static bool has_filter(const ls_config *cfg, const char *name)
{
    const ls_vec *v = &cfg->profiles[0].plugins[LS_EP_FILTER];
    for (uint32_t i = 0; i < v->len; i++)
        if (strcmp(ls_str_get(LS_VEC_AT(v, ls_plugin_ref, i).name), name) == 0)
            return true;
    return false;
}

static void test_config_unavailable(void)
{
    ls_error err = {{0}};
    ls_config cfg;
    ls_config_clear_unavailable();
    CHECK(ls_config_load(&cfg, NULL, &err) && ls_config_expand(&cfg, fake_points, NULL, &err));
    CHECK(has_filter(&cfg, "DynamicResources"));
    ls_config_free(&cfg);

    ls_config_set_unavailable("DynamicResources", "resource.k8s.io/v1");
    CHECK(ls_config_load(&cfg, NULL, &err) && ls_config_expand(&cfg, fake_points, NULL, &err));
    CHECK(!has_filter(&cfg, "DynamicResources"));   /* left out of the default set, as with its gate off */
    CHECK(has_filter(&cfg, "NodeResourcesFit"));
    ls_config_free(&cfg);

    char path[] = "/tmp/test_discovery_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
          "- schedulerName: default-scheduler\n  plugins:\n    filter:\n      enabled:\n"
          "      - name: DynamicResources\n",
          f);
    fclose(f);
    CHECK(ls_config_load(&cfg, path, &err));
    CHECK(!ls_config_expand(&cfg, fake_points, NULL, &err));   /* enabled explicitly: an error */
    char want[600];
    snprintf(want, sizeof want, "%s: profile default-scheduler: plugin DynamicResources is enabled but needs "
                                "resource.k8s.io/v1, which the API server does not serve: remove the plugin from "
                                "the profile or use a server that serves resource.k8s.io/v1", path);
    CHECK_STR(err.msg, want);
    ls_config_free(&cfg);
    unlink(path);
    ls_config_clear_unavailable();
}

static void test_parse_release(void)
{
    int m = 0;
    CHECK(ls_api_parse_release("v1.28", &m) && m == 28);
    CHECK(ls_api_parse_release("1.37", &m) && m == 37);
    CHECK(ls_api_parse_release("v1.30.4", &m) && m == 30);
    CHECK(!ls_api_parse_release("v1.27", &m));     /* older than the supported range */
    CHECK(!ls_api_parse_release("v1.38", &m));     /* newer than the served API */
    CHECK(!ls_api_parse_release("v2.28", &m));
    CHECK(!ls_api_parse_release("v1.28x", &m));
    CHECK(!ls_api_parse_release("v1.28.", &m));
    CHECK(!ls_api_parse_release("", &m));
}

int main(void)
{
    test_current_release();
    test_v1_28();
    test_served_list();
    test_config_unavailable();
    test_parse_release();
    TEST_MAIN_END();
}
