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
            "\n"
            "Simulates the cluster and explains the scheduling of POD (namespace/name, or name in\n"
            "\"default\"): each filter plugin's verdict per node, each score plugin's raw and final\n"
            "(normalized, weighted) score, the totals, and why the chosen node won.\n"
            "\n"
            "flags:\n"
            "  --output text|json   a report (text) or the pod's JSON record (json)\n");
    ls_cli_simulate_usage_flags(out);
    fprintf(out, "  -h, --help           this help\n");
}

static cJSON *find_record(cJSON *root, const char *ns, const char *name)
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

static void print_filters(const cJSON *rec)
{
    const cJSON *filter = cJSON_GetObjectItemCaseSensitive(rec, "filter");
    printf("Filter (in the order the nodes were examined):\n");
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
            printf("  %-24s rejected by %s: %s\n", node->string, by, failed);
        else
            printf("  %-24s passed\n", node->string);
    }
}

static void print_scores(const cJSON *rec)
{
    const cJSON *raw = cJSON_GetObjectItemCaseSensitive(rec, "score");
    const cJSON *final = cJSON_GetObjectItemCaseSensitive(rec, "finalScore");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(rec, "totalScore");
    if (!raw || !raw->child) {
        if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "node")))
            printf("Score: not run (a single feasible node is chosen without scoring, as upstream does)\n");
        else
            printf("Score: not run (no node passed the filters)\n");
        return;
    }
    printf("Score (plugin raw -> normalized x weight):\n");
    const cJSON *node;
    cJSON_ArrayForEach(node, raw) {
        printf("  %-24s", node->string);
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

static void print_choice(const cJSON *rec)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(rec, "node");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(rec, "totalScore");
    if (!cJSON_IsString(node)) {
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(rec, "message");
        printf("Result: not scheduled: %s\n", cJSON_IsString(msg) ? msg->valuestring : "");
        return;
    }
    const cJSON *mine = cJSON_GetObjectItemCaseSensitive(total, node->valuestring);
    if (!mine) {
        printf("Result: %s, the only node that passed every filter\n", node->valuestring);
        return;
    }
    int ties = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, total) ties += t->valuedouble == mine->valuedouble;
    if (ties > 1)
        printf("Result: %s, one of %d nodes with the highest total (%.0f), picked by the seeded tie-break\n",
               node->valuestring, ties, mine->valuedouble);
    else
        printf("Result: %s, the highest total (%.0f)\n", node->valuestring, mine->valuedouble);
}

static void print_report(const cJSON *rec, const char *ns, const char *name)
{
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(rec, "attempts");
    int n = cJSON_GetArraySize(attempts);
    printf("Pod %s/%s: %d attempt%s; the last one:\n", ns, name, n, n == 1 ? "" : "s");
    print_filters(rec);
    print_scores(rec);
    print_choice(rec);
}

int ls_cli_explain(int argc, char **argv)
{
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
    rc = ls_cli_run_simulation(&o, &root);
    if (rc != LS_EXIT_OK || !root) {
        cJSON_Delete(root);
        return rc ? rc : LS_EXIT_FAILURE;
    }
    cJSON *rec = find_record(root, ns, name);
    if (!rec) {
        fprintf(stderr, "luasched explain: pod %s/%s was not scheduled by this run (not in the cluster, "
                        "already running, or for another scheduler)\n", ns, name);
        cJSON_Delete(root);
        return LS_EXIT_USAGE;
    }
    if (json) {
        char *text = cJSON_PrintUnformatted(rec);
        puts(text);
        free(text);
    } else {
        print_report(rec, ns, name);
    }
    cJSON_Delete(root);
    return LS_EXIT_OK;
}
