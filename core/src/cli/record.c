/*
 * record.c: `luasched record -o TRACE.yaml`: watches a live cluster (the
 * kubeconfig as `luasched run` reads it) and writes what `luasched simulate`
 * and `luasched compare` replay:
 *   - the objects the scheduler uses as they were when the recording started
 *     (one document each);
 *   - a Timeline of every creation, update and deletion after that, at its
 *     time since the start (only changes to what scheduling reads: a node's
 *     heartbeat or a pod's status alone is not a step);
 *   - a Bindings document: the node the live scheduler gave each pod that was
 *     unbound (pending at the start or created during the recording), kept
 *     apart as the reference outcome (those pods' steps never carry
 *     spec.nodeName, so a replay schedules them).
 * Objects are scrubbed of what scheduling does not read (annotations, env,
 * commands, probes, most status) unless --keep-all. Steps and bindings are
 * streamed to files beside the output while recording and appended when it
 * stops: memory holds the informers' current state, never the history.
 *
 * What is recorded: every kind the scheduler reads (client/read_kinds.c:
 * the default, volume and DRA plugins' kinds and gang scheduling's PodGroups
 * and Workloads) and the custom resources the configuration's plugins
 * register for (--config), each when the API server serves it (its
 * discovery, client/discovery.c). What the scheduler reads but the recording
 * cannot hold (metrics.k8s.io, which has no watch; a kind whose list kept
 * failing) is named in the Bindings document's notRecorded list, which
 * `luasched simulate` and `compare` report (docs/policy-lab/recording.md).
 */
#include "cli/cli.h"
#include "client/discovery.h"
#include "client/http.h"
#include "client/informer.h"
#include "client/kubeconfig.h"
#include "client/read_kinds.h"
#include "luasched/config.h"
#include "luasched/map.h"
#include "luasched/model.h"
#include "luasched/scheduler.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef ls_read_kind kind_spec;

/* The kinds of client/read_kinds.c, and as many the configuration's plugins
 * register for. */
#define N_KINDS LS_N_READ_KINDS
#define KINDS LS_READ_KINDS
enum { MAX_PLUGIN_KINDS = 16 };

/* A custom resource a plugin registered for, with its strings. */
typedef struct plugin_kind {
    kind_spec spec;
    char group[128], version[64], resource[128], kind[128], api_version[200];
} plugin_kind;

typedef struct recorder recorder;

typedef struct kind_state {
    recorder *rec;
    const kind_spec *spec;
    ls_informer *inf;
    bool synced;
} kind_state;

struct recorder {
    pthread_mutex_t lock;
    FILE *out, *steps, *bindings;
    char *steps_path, *bindings_path;
    double t0;
    bool keep_all;
    ls_map unbound_pods;       /* interned "ns/name" of unbound pods: their bindings are the reference */
    unsigned long n_objects, n_steps, n_bindings;
    bool write_failed;
    kind_state *kinds;                          /* N_KINDS + MAX_PLUGIN_KINDS of them */
    uint32_t n_kinds;
    plugin_kind plugin_kinds[MAX_PLUGIN_KINDS]; /* custom resources of the configuration's plugins */
    uint32_t n_plugin_kinds;
    ls_vec not_served;                          /* char *: "plural.version.group" not served, nothing to record */
    ls_vec not_recorded;                        /* cJSON *: {kind, reason} the scheduler reads, not recorded */
};

/* ---- scrubbing */

static void drop(cJSON *obj, const char *key)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
}

/* Drops the fields named in `keys` (NULL-terminated) from every element of a list. */
static void drop_in_each(cJSON *list, const char *const *keys)
{
    cJSON *c;
    cJSON_ArrayForEach(c, list) {
        for (size_t i = 0; keys[i]; i++)
            drop(c, keys[i]);
    }
}

static const char *const CONTAINER_NOISE[] = {"env", "envFrom", "command", "args", "livenessProbe",
                                              "readinessProbe", "startupProbe", "lifecycle", "volumeMounts",
                                              "workingDir", NULL};
static const char *const STATUS_NOISE[] = {"state", "lastState", "imageID", "containerID", "ready", "started",
                                           "restartCount", "image", "volumeMounts", "user", NULL};
static const char *const CONDITION_NOISE[] = {"lastHeartbeatTime", "lastProbeTime", "lastTransitionTime", "message",
                                              NULL};

/* What scheduling does not read goes; with keep_all only the server's
 * bookkeeping does. */
static void scrub(cJSON *obj, const kind_spec *k, bool keep_all)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    drop(meta, "managedFields");
    drop(meta, "resourceVersion");
    drop(meta, "generation");
    drop(meta, "selfLink");
    if (keep_all)
        return;
    drop(meta, "annotations");
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    if (strcmp(k->kind, "Pod") == 0) {
        drop_in_each(cJSON_GetObjectItemCaseSensitive(spec, "containers"), CONTAINER_NOISE);
        drop_in_each(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"), CONTAINER_NOISE);
        static const char *const noise[] = {"podIP", "podIPs", "hostIP", "hostIPs", "message", "startTime",
                                            "qosClass", "ephemeralContainerStatuses"};
        for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
            drop(status, noise[i]);
        drop_in_each(cJSON_GetObjectItemCaseSensitive(status, "containerStatuses"), STATUS_NOISE);
        drop_in_each(cJSON_GetObjectItemCaseSensitive(status, "initContainerStatuses"), STATUS_NOISE);
        drop_in_each(cJSON_GetObjectItemCaseSensitive(status, "conditions"), CONDITION_NOISE);
    } else if (strcmp(k->kind, "Node") == 0) {
        static const char *const noise[] = {"daemonEndpoints", "nodeInfo", "addresses", "volumesInUse",
                                            "volumesAttached", "config", "runtimeHandlers", "features"};
        for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
            drop(status, noise[i]);
        drop_in_each(cJSON_GetObjectItemCaseSensitive(status, "conditions"), CONDITION_NOISE);
    } else if (strcmp(k->kind, "Service") == 0 || strcmp(k->kind, "Namespace") == 0) {
        drop(obj, "status");
    }
}

/* ---- writing */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_text(recorder *r, FILE *f, const char *text)
{
    if (fputs(text, f) < 0)
        r->write_failed = true;
}

static cJSON *scrubbed_copy(const cJSON *obj, const kind_spec *k, bool keep_all)
{
    cJSON *copy = cJSON_Duplicate(obj, 1);
    if (!cJSON_GetObjectItemCaseSensitive(copy, "kind"))
        cJSON_AddStringToObject(copy, "kind", k->kind);
    if (!cJSON_GetObjectItemCaseSensitive(copy, "apiVersion"))
        cJSON_AddStringToObject(copy, "apiVersion", k->api_version);
    scrub(copy, k, keep_all);
    return copy;
}

static void write_document(recorder *r, const cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    write_text(r, r->out, "---\n");
    write_text(r, r->out, text);
    write_text(r, r->out, "\n");
    free(text);
    r->n_objects++;
}

/* One Timeline step, "- {"at": "1234ms", "<op>": {...}}" (JSON is YAML). */
static void write_step(recorder *r, const char *op, const cJSON *body)
{
    char *text = cJSON_PrintUnformatted(body);
    fprintf(r->steps, "- {\"at\": \"%lldms\", \"%s\": %s}\n", (long long)((now_s() - r->t0) * 1000.0), op, text);
    if (ferror(r->steps))
        r->write_failed = true;
    free(text);
    r->n_steps++;
}

static const char *meta_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *node_name_of(const cJSON *pod)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "spec"), "nodeName");
    return cJSON_IsString(v) ? v->valuestring : "";
}

static ls_str pod_key(const cJSON *pod)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s", meta_str(pod, "namespace"), meta_str(pod, "name"));
    return ls_intern_cstr(key);
}

static void write_binding(recorder *r, const cJSON *pod)
{
    fprintf(r->bindings, "- {\"pod\": \"%s/%s\", \"node\": \"%s\", \"at\": \"%lldms\"}\n", meta_str(pod, "namespace"),
            meta_str(pod, "name"), node_name_of(pod), (long long)((now_s() - r->t0) * 1000.0));
    if (ferror(r->bindings))
        r->write_failed = true;
    r->n_bindings++;
}

/* ---- informer handlers */

static void on_add(void *ud, const cJSON *obj)
{
    kind_state *ks = ud;
    recorder *r = ks->rec;
    bool is_pod = strcmp(ks->spec->kind, "Pod") == 0;
    cJSON *copy = scrubbed_copy(obj, ks->spec, r->keep_all);
    pthread_mutex_lock(&r->lock);
    if (is_pod && !node_name_of(obj)[0])
        ls_map_put(&r->unbound_pods, pod_key(obj), (void *)1);   /* its binding is the reference */
    if (!ks->synced) {
        write_document(r, copy);
    } else {
        write_step(r, "create", copy);
    }
    pthread_mutex_unlock(&r->lock);
    cJSON_Delete(copy);
}

/* A pod created unbound while recording: its binding is the reference
 * outcome, and its steps never bind it. The comparison leaves the status out
 * (the kubelet's or the scheduler's doing, not an input) and the node of such
 * a pod. */
static void pod_update(recorder *r, const kind_spec *k, const cJSON *old_obj, const cJSON *new_obj)
{
    bool ours = ls_map_get(&r->unbound_pods, pod_key(new_obj)) != NULL;
    if (ours && !node_name_of(old_obj)[0] && node_name_of(new_obj)[0])
        write_binding(r, new_obj);
    cJSON *cmp_old = scrubbed_copy(old_obj, k, false), *cmp_new = scrubbed_copy(new_obj, k, false);
    drop(cmp_old, "status");
    drop(cmp_new, "status");
    if (ours) {
        drop(cJSON_GetObjectItemCaseSensitive(cmp_old, "spec"), "nodeName");
        drop(cJSON_GetObjectItemCaseSensitive(cmp_new, "spec"), "nodeName");
    }
    if (!cJSON_Compare(cmp_old, cmp_new, 1)) {
        cJSON *step = scrubbed_copy(new_obj, k, r->keep_all);
        if (ours) {
            drop(cJSON_GetObjectItemCaseSensitive(step, "spec"), "nodeName");
            drop(step, "status");
        }
        write_step(r, "update", step);
        cJSON_Delete(step);
    }
    cJSON_Delete(cmp_old);
    cJSON_Delete(cmp_new);
}

/* Other kinds: a step when what scheduling reads changed (for a node not its
 * heartbeat, which the scrubbed copies leave out). */
static void object_update(recorder *r, const kind_spec *k, const cJSON *old_obj, const cJSON *new_obj)
{
    cJSON *cmp_old = scrubbed_copy(old_obj, k, false), *cmp_new = scrubbed_copy(new_obj, k, false);
    if (!cJSON_Compare(cmp_old, cmp_new, 1)) {
        cJSON *step = scrubbed_copy(new_obj, k, r->keep_all);
        write_step(r, "update", step);
        cJSON_Delete(step);
    }
    cJSON_Delete(cmp_old);
    cJSON_Delete(cmp_new);
}

static void on_update(void *ud, const cJSON *old_obj, const cJSON *new_obj)
{
    kind_state *ks = ud;
    recorder *r = ks->rec;
    pthread_mutex_lock(&r->lock);
    if (strcmp(ks->spec->kind, "Pod") == 0)
        pod_update(r, ks->spec, old_obj, new_obj);
    else
        object_update(r, ks->spec, old_obj, new_obj);
    pthread_mutex_unlock(&r->lock);
}

static void on_delete(void *ud, const cJSON *obj)
{
    kind_state *ks = ud;
    recorder *r = ks->rec;
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", ks->spec->api_version);   /* names a custom kind */
    cJSON_AddStringToObject(ref, "kind", ks->spec->kind);
    cJSON *meta = cJSON_AddObjectToObject(ref, "metadata");
    if (meta_str(obj, "namespace")[0])
        cJSON_AddStringToObject(meta, "namespace", meta_str(obj, "namespace"));
    cJSON_AddStringToObject(meta, "name", meta_str(obj, "name"));
    pthread_mutex_lock(&r->lock);
    if (strcmp(ks->spec->kind, "Pod") == 0)
        ls_map_remove(&r->unbound_pods, pod_key(obj));
    write_step(r, "delete", ref);
    pthread_mutex_unlock(&r->lock);
    cJSON_Delete(ref);
}

static void on_synced(void *ud)
{
    kind_state *ks = ud;
    pthread_mutex_lock(&ks->rec->lock);
    ks->synced = true;
    pthread_mutex_unlock(&ks->rec->lock);
}

/* ---- the command */

typedef struct record_opts {
    const char *out, *kubeconfig, *master, *context;
    const char *config;        /* whose plugins' custom resources are recorded too; NULL: the default */
    uint64_t duration_ms;      /* 0: until SIGINT/SIGTERM */
    bool keep_all;
} record_opts;

static void record_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched record -o TRACE.yaml [flags]\n"
            "\n"
            "Records a live cluster for replay: the objects the scheduler reads as they are now, a Timeline of\n"
            "every change after that (creations, updates that change what scheduling reads, deletions) at its\n"
            "time, and the bindings the live scheduler made (a Bindings document, the reference outcome that\n"
            "`luasched simulate` and `luasched compare` measure agreement with). Annotations, env, commands,\n"
            "probes and most status are left out unless --keep-all.\n"
            "\n"
            "flags:\n"
            "  -o, --out FILE       the trace to write (required)\n"
            "  --kubeconfig FILE    kubeconfig (default: in-cluster configuration)\n"
            "  --master URL         the API server's address (overrides the kubeconfig's)\n"
            "  --context NAME       the kubeconfig context (default: its current-context)\n"
            "  --config FILE        the KubeSchedulerConfiguration whose plugins' custom resources are recorded\n"
            "                       too, and whose metrics reads are reported as not recorded (default: the\n"
            "                       built-in default profile)\n"
            "  --duration D         stop after D (\"90s\", \"10m\", \"2h\"); default: at SIGINT or SIGTERM\n"
            "  --keep-all           keep annotations, env, commands, probes and status\n"
            "  -h, --help           this help\n");
}

static bool parse_duration_flag(const char *text, uint64_t *ms)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || v <= 0)
        return false;
    double unit = strcmp(end, "ms") == 0 ? 1 : strcmp(end, "s") == 0 || !*end ? 1000 : strcmp(end, "m") == 0 ? 60000
                : strcmp(end, "h") == 0 ? 3600000 : -1;
    if (unit < 0)
        return false;
    *ms = (uint64_t)(v * unit);
    return true;
}

static int parse_opts(int argc, char **argv, record_opts *o)
{
    enum { OPT_KUBECONFIG = 256, OPT_MASTER, OPT_CONTEXT, OPT_DURATION, OPT_KEEP_ALL, OPT_CONFIG };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},          {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"master", required_argument, NULL, OPT_MASTER}, {"context", required_argument, NULL, OPT_CONTEXT},
        {"duration", required_argument, NULL, OPT_DURATION}, {"keep-all", no_argument, NULL, OPT_KEEP_ALL},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': o->out = optarg; break;
        case OPT_KUBECONFIG: o->kubeconfig = optarg; break;
        case OPT_MASTER: o->master = optarg; break;
        case OPT_CONTEXT: o->context = optarg; break;
        case OPT_KEEP_ALL: o->keep_all = true; break;
        case OPT_CONFIG: o->config = optarg; break;
        case OPT_DURATION:
            if (!parse_duration_flag(optarg, &o->duration_ms)) {
                fprintf(stderr, "luasched record: --duration: expected a duration such as 90s, 10m or 2h, got "
                                "\"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 'h': record_usage(stdout); return -1;
        default: record_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    if (argc != optind) {
        fprintf(stderr, "luasched record: expected no arguments, got \"%s\"\n", argv[optind]);
        return LS_EXIT_USAGE;
    }
    if (!o->out) {
        fprintf(stderr, "luasched record: -o FILE is required (where the trace goes)\n");
        record_usage(stderr);
        return LS_EXIT_USAGE;
    }
    return 0;
}

static FILE *open_side_file(const char *out, const char *suffix, char **path)
{
    size_t len = strlen(out) + strlen(suffix) + 1;
    *path = ls_xmalloc(len);
    snprintf(*path, len, "%s%s", out, suffix);
    return fopen(*path, "w+");
}

/* ---- what to record */

static void note_not_recorded(recorder *r, const char *kind, const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "reason", reason);
    *(cJSON **)ls_vec_push(&r->not_recorded) = o;
}

/* A kind is recorded when the server serves it; else it is only named. */
static void add_kind(recorder *r, ls_discovery *d, const kind_spec *k)
{
    if (ls_discovery_serves(d, k->group, k->version, k->resource)) {
        r->kinds[r->n_kinds++].spec = k;
        return;
    }
    char name[300];
    snprintf(name, sizeof name, "%s.%s%s%s", k->resource, k->version, *k->group ? "." : "", k->group);
    *(char **)ls_vec_push(&r->not_served) = ls_xstrdup(name);
}

static bool in_fixed_list(const char *group, const char *version, const char *resource)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(KINDS[i].group, group) == 0 && strcmp(KINDS[i].version, version) == 0 &&
            strcmp(KINDS[i].resource, resource) == 0)
            return true;
    return false;
}

/* "plural.version.group" of a plugin's events table, recorded under the kind
 * discovery gives it. */
static void add_plugin_kind(recorder *r, ls_discovery *d, const char *name)
{
    const char *dot1 = strchr(name, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot2 || r->n_plugin_kinds == MAX_PLUGIN_KINDS)
        return;
    plugin_kind *p = &r->plugin_kinds[r->n_plugin_kinds];
    snprintf(p->resource, sizeof p->resource, "%.*s", (int)(dot1 - name), name);
    snprintf(p->version, sizeof p->version, "%.*s", (int)(dot2 - dot1 - 1), dot1 + 1);
    snprintf(p->group, sizeof p->group, "%s", dot2 + 1);
    if (in_fixed_list(p->group, p->version, p->resource))
        return;
    const char *kind = ls_discovery_kind(d, p->group, p->version, p->resource);
    snprintf(p->kind, sizeof p->kind, "%s", kind ? kind : p->resource);
    snprintf(p->api_version, sizeof p->api_version, "%s/%.*s", dot2 + 1, (int)(dot2 - dot1 - 1), dot1 + 1);
    p->spec = (kind_spec){p->group, p->version, p->resource, p->kind, p->api_version};
    r->n_plugin_kinds++;
    add_kind(r, d, &p->spec);
}

/* The configuration's plugins, loaded as run loads them: the custom
 * resources they register for are recorded; metrics.k8s.io, which they read
 * when they declare NodeMetrics or PodMetrics, cannot be. */
static bool add_plugin_kinds(recorder *r, ls_discovery *d, const char *config, ls_error *err)
{
    ls_config cfg;
    if (!ls_config_load(&cfg, config, err)) {
        ls_error why = *err;
        ls_config_free(&cfg);
        return ls_errorf(err, "--config %s: %s", config, why.msg);
    }
    ls_sched_options so = {0};
    ls_sched_source none = {0};
    ls_scheduler *s = ls_scheduler_new(&cfg, &so, &none, err);   /* takes cfg */
    if (!s)
        return false;
    const char *custom[MAX_PLUGIN_KINDS];
    uint32_t n = ls_scheduler_custom_resources(s, custom, MAX_PLUGIN_KINDS);
    for (uint32_t i = 0; i < n; i++)
        add_plugin_kind(r, d, custom[i]);
    uint32_t wanted = ls_model_wanted();
    static const char *const why =
        "metrics.k8s.io serves no watch and its values change with every scrape: a replay reads no metrics";
    if ((wanted & LS_WANT_NODE_METRICS) && ls_discovery_serves(d, "metrics.k8s.io", "v1beta1", "nodes"))
        note_not_recorded(r, "NodeMetrics", why);
    if ((wanted & LS_WANT_POD_METRICS) && ls_discovery_serves(d, "metrics.k8s.io", "v1beta1", "pods"))
        note_not_recorded(r, "PodMetrics", why);
    ls_scheduler_free(s);
    return true;
}

static bool choose_kinds(recorder *r, ls_kclient *client, const char *config, ls_error *err)
{
    ls_discovery *d = ls_discovery_fetch(client, err);
    if (!d)
        return false;
    r->kinds = ls_xcalloc(N_KINDS + MAX_PLUGIN_KINDS, sizeof *r->kinds);
    for (size_t i = 0; i < N_KINDS; i++)
        add_kind(r, d, &KINDS[i]);
    bool ok = add_plugin_kinds(r, d, config, err);
    ls_discovery_free(d);
    return ok;
}

static bool start_informers(recorder *r, ls_kclient *client, ls_error *err)
{
    for (size_t i = 0; i < r->n_kinds; i++) {
        kind_state *ks = &r->kinds[i];
        ks->rec = r;
        const kind_spec *k = ks->spec;
        ls_informer_options io = {.group = k->group, .version = k->version, .resource = k->resource};
        ls_informer_handlers h = {.on_add = on_add, .on_update = on_update, .on_delete = on_delete,
                                  .on_synced = on_synced, .ud = ks};
        ks->inf = ls_informer_new(client, &io, &h, err);
        if (!ks->inf || !ls_informer_start(ks->inf, err))
            return false;
    }
    return true;
}

static void stop_informers(recorder *r)
{
    for (size_t i = 0; i < r->n_kinds; i++)
        if (r->kinds[i].inf) {
            ls_informer_stop(r->kinds[i].inf);
            ls_informer_free(r->kinds[i].inf);
        }
}

/* Appends a side file, behind its document header, to the output. */
static void append_section(recorder *r, FILE *side, const char *header, const char *empty)
{
    write_text(r, r->out, header);
    if (ftell(side) == 0) {
        write_text(r, r->out, empty);
        return;
    }
    rewind(side);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, side)) > 0)
        if (fwrite(buf, 1, n, r->out) != n)
            r->write_failed = true;
}

/* A kind whose first list never came (forbidden, failing): not recorded,
 * with its informer's last error. Before the informers stop. */
static void note_unsynced(recorder *r)
{
    for (size_t i = 0; i < r->n_kinds; i++) {
        if (!r->kinds[i].inf || ls_informer_has_synced(r->kinds[i].inf))
            continue;
        ls_informer_stats st;
        ls_informer_get_stats(r->kinds[i].inf, &st);
        char reason[700];
        snprintf(reason, sizeof reason, "its list never succeeded while recording (%s)",
                 st.last_error[0] ? st.last_error : "no answer");
        note_not_recorded(r, r->kinds[i].spec->kind, reason);
    }
}

/* The Bindings document's notRecorded list, and the same on stderr. */
static void write_not_recorded(recorder *r)
{
    if (!r->not_recorded.len)
        return;
    write_text(r, r->out, "notRecorded:\n");
    fprintf(stderr, "not recorded (the scheduler reads them, a replay does not see them):\n");
    for (uint32_t i = 0; i < r->not_recorded.len; i++) {
        cJSON *o = LS_VEC_AT(&r->not_recorded, cJSON *, i);
        char *text = cJSON_PrintUnformatted(o);
        write_text(r, r->out, "- ");
        write_text(r, r->out, text);
        write_text(r, r->out, "\n");
        free(text);
        fprintf(stderr, "  %s: %s\n", cJSON_GetObjectItemCaseSensitive(o, "kind")->valuestring,
                cJSON_GetObjectItemCaseSensitive(o, "reason")->valuestring);
    }
}

static int finish(recorder *r, const record_opts *o)
{
    append_section(r, r->steps, "---\napiVersion: luasched.io/v1alpha1\nkind: Timeline\nsteps:\n", "  []\n");
    append_section(r, r->bindings, "---\napiVersion: luasched.io/v1alpha1\nkind: Bindings\nbindings:\n", "  []\n");
    write_not_recorded(r);
    if (fclose(r->out) != 0)
        r->write_failed = true;
    fclose(r->steps);
    fclose(r->bindings);
    unlink(r->steps_path);
    unlink(r->bindings_path);
    if (r->write_failed) {
        fprintf(stderr, "luasched record: writing %s: %s\n", o->out, strerror(errno));
        return LS_EXIT_FAILURE;
    }
    fprintf(stderr, "recorded %lu objects, %lu timeline steps, %lu bindings over %.1f s into %s\n", r->n_objects,
            r->n_steps, r->n_bindings, now_s() - r->t0, o->out);
    return LS_EXIT_OK;
}

static bool all_synced(recorder *r)
{
    for (size_t i = 0; i < r->n_kinds; i++)
        if (!ls_informer_has_synced(r->kinds[i].inf))
            return false;
    return true;
}

/* After this long, a kind still not listed is said while recording goes on. */
#define UNSYNCED_REPORT_S 30.0

/* Says when every kind has been listed (the initial state is written; from
 * then on changes are steps), or after UNSYNCED_REPORT_S which kinds are not,
 * then waits for the duration or a signal. */
static void wait_for_stop(recorder *r, const record_opts *o)
{
    static volatile sig_atomic_t stop, reload;
    ls_cli_trap_signals(&stop, &reload);
    bool said = false;
    while (!stop && (o->duration_ms == 0 || (now_s() - r->t0) * 1000.0 < (double)o->duration_ms)) {
        bool synced = all_synced(r);
        if (!said && (synced || now_s() - r->t0 > UNSYNCED_REPORT_S)) {
            pthread_mutex_lock(&r->lock);
            fprintf(stderr, "recording: %lu objects listed; changes from now on are timeline steps\n", r->n_objects);
            pthread_mutex_unlock(&r->lock);
            for (size_t i = 0; i < r->n_kinds && !synced; i++) {
                ls_informer_stats st;
                ls_informer_get_stats(r->kinds[i].inf, &st);
                if (!ls_informer_has_synced(r->kinds[i].inf))
                    fprintf(stderr, "recording: %s not listed yet (%s)\n", r->kinds[i].spec->kind,
                            st.last_error[0] ? st.last_error : "no answer");
            }
            said = true;
        }
        usleep(20000);
    }
}

static void say_not_served(const recorder *r)
{
    if (!r->not_served.len)
        return;
    fprintf(stderr, "not served by the API server (nothing to record):");
    for (uint32_t i = 0; i < r->not_served.len; i++)
        fprintf(stderr, "%s %s", i ? "," : "", LS_VEC_AT(&r->not_served, char *, i));
    fprintf(stderr, "\n");
}

static void recorder_free_kinds(recorder *r)
{
    free(r->kinds);
    for (uint32_t i = 0; i < r->not_served.len; i++)
        free(LS_VEC_AT(&r->not_served, char *, i));
    for (uint32_t i = 0; i < r->not_recorded.len; i++)
        cJSON_Delete(LS_VEC_AT(&r->not_recorded, cJSON *, i));
    ls_vec_free(&r->not_served);
    ls_vec_free(&r->not_recorded);
}

int ls_cli_record(int argc, char **argv)
{
    record_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    ls_error err;
    ls_kubeconfig kc;
    memset(&kc, 0, sizeof kc);
    if (!ls_kubeconfig_resolve(o.kubeconfig, o.context, o.master, &kc, &err)) {
        fprintf(stderr, "luasched record: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    ls_kclient_options co = {.qps = -1};
    ls_kclient *client = ls_kclient_new(&kc, &co, &err);
    recorder r = {.keep_all = o.keep_all};
    pthread_mutex_init(&r.lock, NULL);
    ls_map_init(&r.unbound_pods);
    ls_vec_init(&r.not_served, sizeof(char *));
    ls_vec_init(&r.not_recorded, sizeof(cJSON *));
    bool chosen = client && choose_kinds(&r, client, o.config, &err);
    if (chosen) {
        r.out = fopen(o.out, "w");
        r.steps = r.out ? open_side_file(o.out, ".steps", &r.steps_path) : NULL;
        r.bindings = r.steps ? open_side_file(o.out, ".bindings", &r.bindings_path) : NULL;
    }
    if (!client) {
        fprintf(stderr, "luasched record: %s\n", err.msg);
        rc = LS_EXIT_USAGE;
    } else if (!chosen) {
        fprintf(stderr, "luasched record: %s\n", err.msg);
        rc = LS_EXIT_FAILURE;
    } else if (!r.bindings) {
        fprintf(stderr, "luasched record: -o %s: %s\n", o.out, strerror(errno));
        rc = LS_EXIT_USAGE;
    } else {
        fprintf(r.out, "# Recorded by luasched record from %s. Replay: luasched simulate %s\n", kc.server, o.out);
        r.t0 = now_s();
        if (!start_informers(&r, client, &err)) {
            fprintf(stderr, "luasched record: %s\n", err.msg);
            rc = LS_EXIT_FAILURE;
        } else {
            wait_for_stop(&r, &o);
        }
        note_unsynced(&r);
        stop_informers(&r);
        say_not_served(&r);
        int frc = finish(&r, &o);
        rc = rc ? rc : frc;
        r.out = r.steps = NULL;
    }
    if (r.out)
        fclose(r.out);
    if (r.steps) {
        fclose(r.steps);
        unlink(r.steps_path);
    }
    free(r.steps_path);
    free(r.bindings_path);
    ls_map_free(&r.unbound_pods);
    recorder_free_kinds(&r);
    pthread_mutex_destroy(&r.lock);
    if (client)
        ls_kclient_free(client);
    ls_kubeconfig_free(&kc);
    return rc;
}
