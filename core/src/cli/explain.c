/*
 * explain.c: `luasched explain CLUSTER.yaml POD`: runs the simulation with
 * tracing on and tells, for one pod, every filter plugin's verdict on every
 * node, every score plugin's raw and final score, the totals, and why the
 * chosen node won (or upstream's message when none fits).
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void explain_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched explain CLUSTER.yaml POD [flags]\n"
            "       luasched explain --kubeconfig FILE [--master URL] [--context NAME] NAMESPACE/POD [flags]\n"
            "\n"
            "Simulates the cluster and explains the scheduling of POD (namespace/name, or name in\n"
            "\"default\"), attempt by attempt: each filter plugin's verdict per node, each score plugin's\n"
            "raw and final (normalized, weighted) score, the totals, Permit's outcome (and how long the\n"
            "pod waited), and why the chosen node won or the attempt failed.\n"
            "\n"
            "flags:\n"
            "  --output text|json   a report (text) or the pod's JSON record (json)\n");
    ls_cli_simulate_usage_flags(out);
    fprintf(out, "  -h, --help           this help\n");
}

cJSON *ls_cli_explain_find(cJSON *root, const char *ns, const char *name)
{
    cJSON *pods = cJSON_GetObjectItemCaseSensitive(root, "pods");
    cJSON *rec;
    cJSON_ArrayForEach(rec, pods) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(rec, "name");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "namespace");
        if (cJSON_IsString(n) && cJSON_IsString(s) && strcmp(n->valuestring, name) == 0 &&
            strcmp(s->valuestring, ns) == 0)
            return rec;
    }
    return NULL;
}

/* "; did you mean shop/web-0?" for a pod this run did not schedule: the pod
 * of that name in another namespace (a name alone means "default"), else the
 * closest NAMESPACE/NAME the run scheduled; "" when none is close. */
static const char *explain_near(const cJSON *root, const char *ns, const char *name, char *buf, size_t len)
{
    const cJSON *pods = cJSON_GetObjectItemCaseSensitive(root, "pods");
    int n = cJSON_GetArraySize(pods);
    char **list = n > 0 ? calloc((size_t)n, sizeof *list) : NULL;
    int used = 0;
    const cJSON *rec;
    buf[0] = 0;
    cJSON_ArrayForEach(rec, pods) {
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(rec, "name");
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(rec, "namespace");
        if (!list || !cJSON_IsString(pn) || !cJSON_IsString(ps))
            continue;
        if (strcmp(pn->valuestring, name) == 0 && !buf[0])
            snprintf(buf, len, "; did you mean %s/%s?", ps->valuestring, pn->valuestring);
        size_t size = strlen(ps->valuestring) + strlen(pn->valuestring) + 2;
        if ((list[used] = malloc(size)) != NULL)
            snprintf(list[used++], size, "%s/%s", ps->valuestring, pn->valuestring);
    }
    if (!buf[0] && used > 0) {
        char wanted[520];
        snprintf(wanted, sizeof wanted, "%s/%s", ns, name);
        const char *hit = ls_did_you_mean(wanted, (const char *const *)list, (size_t)used);
        if (hit)
            snprintf(buf, len, "; did you mean %s?", hit);
    }
    for (int i = 0; i < used; i++)
        free(list[i]);
    free(list);
    return buf;
}

static void print_filters(const cJSON *at)
{
    const cJSON *filter = cJSON_GetObjectItemCaseSensitive(at, "filter");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(at, "nominatedNodeOnly")))
        printf("  Filter (the nominated node alone, as upstream tries it first):\n");
    else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(at, "batchHintOnly")))
        printf("  Filter (the batch hint alone: OpportunisticBatching reused the previous pod's scores):\n");
    else if (!filter || !filter->child)
        printf("  Filter: not run\n");
    else
        printf("  Filter (in the order the nodes were examined):\n");
    const cJSON *node;
    cJSON_ArrayForEach(node, filter) {
        const char *failed = NULL, *by = NULL;
        const cJSON *verdict;
        cJSON_ArrayForEach(verdict, node) {
            if (cJSON_IsString(verdict) && strcmp(verdict->valuestring, "passed") != 0) {
                failed = verdict->valuestring;
                by = verdict->string;
            }
        }
        if (failed)
            printf("    %-24s rejected by %s: %s\n", node->string, by, failed);
        else
            printf("    %-24s passed\n", node->string);
    }
}

static int feasible_nodes(const cJSON *at)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(at, "feasibleNodes");
    return cJSON_IsNumber(n) ? n->valueint : 0;
}

static void print_scores(const cJSON *at)
{
    const cJSON *raw = cJSON_GetObjectItemCaseSensitive(at, "score");
    const cJSON *final = cJSON_GetObjectItemCaseSensitive(at, "finalScore");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(at, "totalScore");
    int feasible = feasible_nodes(at);
    if (!raw || !raw->child) {
        if (feasible == 1)
            printf("  Score: not run (a single feasible node is chosen without scoring, as upstream does)\n");
        else if (feasible == 0)
            printf("  Score: not run (no node passed the filters)\n");
        else
            printf("  Score: not completed (%d feasible nodes; the attempt ended before the totals)\n", feasible);
        return;
    }
    printf("  Score (plugin raw -> normalized x weight):\n");
    const cJSON *node;
    cJSON_ArrayForEach(node, raw) {
        printf("    %-24s", node->string);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(final, node->string);
        const cJSON *p;
        cJSON_ArrayForEach(p, node) {
            const cJSON *fp = cJSON_GetObjectItemCaseSensitive(f, p->string);
            printf(" %s %.0f -> %.0f;", p->string, p->valuedouble, fp ? fp->valuedouble : 0.0);
        }
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(total, node->string);
        printf(" total %.0f\n", t ? t->valuedouble : 0.0);
    }
}

static const char *text_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "Permit: waited 1m30s at Gang, then timed out", "Permit: allowed". */
static void print_permit(const cJSON *at)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(at, "permit");
    if (!p)
        return;
    const char *result = text_of(p, "result"), *plugin = text_of(p, "plugin"), *wait = text_of(p, "wait");
    printf("  Permit: ");
    if (wait)
        printf("waited %s, then ", wait);
    if (strcmp(result, "allowed") == 0)
        printf("allowed\n");
    else if (strcmp(result, "timeout") == 0)
        printf("timed out at %s\n", plugin ? plugin : "?");
    else
        printf("rejected by %s\n", plugin ? plugin : "?");
}

/* The attempt's scored choice (only a bound attempt has one). */
static void print_choice(const cJSON *at, const char *node)
{
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(at, "totalScore");
    const cJSON *mine = cJSON_GetObjectItemCaseSensitive(total, node);
    if (!mine) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(at, "nominatedNodeOnly")))
            printf("  Result: %s, its nominated node, which passed every filter\n", node);
        else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(at, "batchHintOnly")))
            printf("  Result: %s, the batch hint (the next best node of the previous pod with the same "
                   "signature), which passed every filter, without scoring\n",
                   node);
        else
            printf("  Result: %s, the only node that passed every filter\n", node);
        return;
    }
    int ties = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, total) ties += t->valuedouble == mine->valuedouble;
    if (ties > 1)
        printf("  Result: %s, one of %d nodes with the highest total (%.0f), picked by the seeded tie-break\n",
               node, ties, mine->valuedouble);
    else
        printf("  Result: %s, the highest total (%.0f)\n", node, mine->valuedouble);
}

static void print_attempt(const cJSON *at, int i)
{
    const cJSON *time = cJSON_GetObjectItemCaseSensitive(at, "time");
    printf("Attempt %d at %gs:\n", i, cJSON_IsNumber(time) ? time->valuedouble : 0.0);
    print_filters(at);
    print_scores(at);
    print_permit(at);
    const char *node = text_of(at, "node");
    if (node) {
        print_choice(at, node);
        return;
    }
    printf("  Result: not scheduled: %s\n", text_of(at, "message") ? text_of(at, "message") : "");
    const cJSON *trace = cJSON_GetObjectItemCaseSensitive(at, "traceback");
    const cJSON *frame;
    if (cJSON_GetArraySize(trace))
        printf("  Traceback (the plugin's frames, innermost first):\n");
    cJSON_ArrayForEach(frame, trace) printf("    %s\n", frame->valuestring);
    const cJSON *victims = cJSON_GetObjectItemCaseSensitive(at, "victims");
    const cJSON *v;
    cJSON_ArrayForEach(v, victims) printf("  Preempted %s\n", v->valuestring);
    if (text_of(at, "nominatedNode"))
        printf("  Nominated to %s\n", text_of(at, "nominatedNode"));
}

void ls_cli_explain_report(const cJSON *rec, const char *ns, const char *name)
{
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(rec, "attempts");
    int n = cJSON_GetArraySize(attempts);
    if (text_of(rec, "gated")) {
        printf("Pod %s/%s: gated, never attempted: %s\n", ns, name, text_of(rec, "gated"));
        return;
    }
    printf("Pod %s/%s: %d attempt%s\n", ns, name, n, n == 1 ? "" : "s");
    const cJSON *at;
    int i = 0;
    cJSON_ArrayForEach(at, attempts) print_attempt(at, ++i);
}

/* --kubeconfig, --master or --context: the live cluster (explain_live.c). */
static bool wants_live(int argc, char **argv)
{
    static const char *const flags[] = {"--kubeconfig", "--master", "--context"};
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        for (int f = 0; f < 3; f++) {
            size_t n = strlen(flags[f]);
            if (strncmp(argv[i], flags[f], n) == 0 && (argv[i][n] == 0 || argv[i][n] == '='))
                return true;
        }
    return false;
}

int ls_cli_explain(int argc, char **argv)
{
    if (wants_live(argc, argv))
        return ls_cli_explain_live(argc, argv);
    ls_sim_opts o;
    const char *pod = NULL;
    int rc = ls_cli_parse_sim_opts(argc, argv, &o, 2, &pod, explain_usage);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    if (o.write_config)
        return ls_cli_write_config("explain", &o);
    bool json = o.json;
    char ns[256] = "default", name[256];
    const char *slash = strchr(pod, '/');
    if (slash) {
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - pod), pod);
        snprintf(name, sizeof name, "%s", slash + 1);
    } else {
        snprintf(name, sizeof name, "%s", pod);
    }
    cJSON *root = NULL;
    rc = ls_cli_run_simulation(&o, "explain", &root);
    if (rc != LS_EXIT_OK || !root) {
        cJSON_Delete(root);
        return rc ? rc : LS_EXIT_FAILURE;
    }
    cJSON *rec = ls_cli_explain_find(root, ns, name);
    if (!rec) {
        char near[520];
        fprintf(stderr, "luasched explain: pod %s/%s was not scheduled by this run (not in the cluster, "
                        "already running, or for another scheduler)%s\n", ns, name,
                explain_near(root, ns, name, near, sizeof near));
        cJSON_Delete(root);
        return LS_EXIT_USAGE;
    }
    if (json) {
        char *text = cJSON_PrintUnformatted(rec);
        puts(text);
        free(text);
    } else {
        ls_cli_explain_report(rec, ns, name);
    }
    cJSON_Delete(root);
    return LS_EXIT_OK;
}
