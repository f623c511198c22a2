/*
 * compare_report.c: the text and JSON forms of `luasched compare`'s report
 * (see compare.h). Figures are means over each policy's seeds; the JSON also
 * carries every seed's run.
 */
#include "cli/compare.h"

#include <cjson/cJSON.h>
#include <string.h>

/* ---- metrics over a run, for cmp_mean_over_seeds */

static double m_bound(const cmp_run *r) { return r->bound; }
static double m_unschedulable(const cmp_run *r) { return r->unschedulable; }
static double m_preempted(const cmp_run *r) { return r->preempted; }
static double m_lat_p50(const cmp_run *r) { return r->latency.p50; }
static double m_lat_p90(const cmp_run *r) { return r->latency.p90; }
static double m_lat_p99(const cmp_run *r) { return r->latency.p99; }
static double m_cpu_mean(const cmp_run *r) { return r->cpu.mean; }
static double m_cpu_sd(const cmp_run *r) { return r->cpu.stddev; }
static double m_cpu_imb(const cmp_run *r) { return r->cpu.mean > 0 ? r->cpu.stddev / r->cpu.mean : 0; }
static double m_mem_mean(const cmp_run *r) { return r->mem.mean; }
static double m_mem_sd(const cmp_run *r) { return r->mem.stddev; }
static double m_mem_imb(const cmp_run *r) { return r->mem.mean > 0 ? r->mem.stddev / r->mem.mean : 0; }
static double m_fit_somewhere(const cmp_run *r) { return r->pending_fit_somewhere; }
static double m_fit_nowhere(const cmp_run *r) { return r->pending_fit_nowhere; }
static double m_stranded(const cmp_run *r) { return r->stranded_cpu; }
static double m_zone_imb(const cmp_run *r) { return r->zone_imbalance; }
static double m_agreement(const cmp_run *r)
{
    return r->agree_recorded ? (double)r->agree_same / r->agree_recorded : 0;
}

/* The agreement row, only for a trace that holds a recording's bindings. */
static const cmp_metric AGREEMENT = {"agreementWithRecording", "same node as the live scheduler", "%", m_agreement};

const cmp_metric *cmp_agreement_metric(void)
{
    return &AGREEMENT;
}

static const cmp_metric ROWS[] = {
    {"bound", "pods bound", "", m_bound},
    {"unschedulable", "pods pending", "", m_unschedulable},
    {"preempted", "pods preempted", "", m_preempted},
    {"latencyP50Seconds", "creation to binding p50", "s", m_lat_p50},
    {"latencyP90Seconds", "creation to binding p90", "s", m_lat_p90},
    {"latencyP99Seconds", "creation to binding p99", "s", m_lat_p99},
    {"cpuAllocatedMean", "cpu allocated per node, mean", "%", m_cpu_mean},
    {"cpuAllocatedStddev", "cpu allocated per node, stddev", "%", m_cpu_sd},
    {"cpuImbalance", "cpu imbalance (stddev/mean)", "", m_cpu_imb},
    {"memoryAllocatedMean", "memory allocated per node, mean", "%", m_mem_mean},
    {"memoryAllocatedStddev", "memory allocated per node, stddev", "%", m_mem_sd},
    {"memoryImbalance", "memory imbalance (stddev/mean)", "", m_mem_imb},
    {"pendingFitSomewhere", "pending pods whose cpu+memory fit a node", "", m_fit_somewhere},
    {"pendingFitNowhere", "pending pods whose cpu+memory fit no node", "", m_fit_nowhere},
    {"strandedCpu", "free cpu too small for any pending pod", "%", m_stranded},
    {"zoneImbalance", "pods per zone imbalance (stddev/mean)", "", m_zone_imb},
};
#define N_ROWS (sizeof ROWS / sizeof ROWS[0])

const cmp_metric *cmp_metrics(size_t *n)
{
    *n = N_ROWS;
    return ROWS;
}

/* ---- text */

void cmp_format_metric(char *buf, size_t len, const cmp_metric *row, double v)
{
    if (strcmp(row->unit, "%") == 0)
        snprintf(buf, len, "%.1f%%", v * 100.0);
    else if (strcmp(row->unit, "s") == 0)
        snprintf(buf, len, "%.1fs", v);
    else if (v == (double)(long long)v)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "%.3f", v);
}

char cmp_policy_letter(uint32_t p)
{
    return (char)('A' + p % 26);
}

static void text_row(const cmp_report *r, const cmp_metric *m, FILE *out)
{
    fprintf(out, "%-44s", m->label);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        char v[32];
        cmp_format_metric(v, sizeof v, m, cmp_mean_over_seeds(&r->policy[p], m->get));
        fprintf(out, " %14s", v);
    }
    fputc('\n', out);
}

void cmp_report_text(const cmp_report *r, FILE *out)
{
    fprintf(out, "trace %s: %u nodes at the end, %.0fs of timeline, %u seed%s per policy", r->trace, r->n_nodes,
            r->span_s, r->policy[0].n_runs, r->policy[0].n_runs == 1 ? "" : "s");
    if (r->first_seed)
        fprintf(out, " (seeds from %llu)", (unsigned long long)r->first_seed);
    fputc('\n', out);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        fprintf(out, "%c = %s", cmp_policy_letter(p), r->policy[p].config);
        if (r->policy[p].named)
            fprintf(out, " (%s)", r->policy[p].name);
        fputc('\n', out);
    }
    fprintf(out, "\n%-44s", "");
    for (uint32_t p = 0; p < r->n_policies; p++)
        fprintf(out, " %14c", cmp_policy_letter(p));
    fputc('\n', out);
    for (size_t i = 0; i < N_ROWS; i++)
        text_row(r, &ROWS[i], out);
    if (r->has_reference)
        text_row(r, &AGREEMENT, out);
    if (r->not_recorded)
        fprintf(out, "not recorded (the live scheduler read them, the replays did not): %s\n", r->not_recorded);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const cmp_run *run = &r->policy[p].runs[0];
        fprintf(out, "\npods per zone, %c (seed %llu):", cmp_policy_letter(p), (unsigned long long)r->first_seed);
        for (uint32_t z = 0; z < run->n_zones; z++)
            fprintf(out, " %s=%u", run->zones[z].name, run->zones[z].pods);
    }
    cmp_gpu_text(r, out);
    cmp_lua_text(r, out);
    if (r->n_policies < 2) {
        fputc('\n', out);
    } else {
    fprintf(out, "\n\nplaced differently (seed %llu): %u pod%s\n", (unsigned long long)r->first_seed, r->n_diffs,
            r->n_diffs == 1 ? "" : "s");
    for (uint32_t i = 0; i < r->n_diffs && i < 20; i++)
        fprintf(out, "  %s: A %s, B %s\n", r->diffs[i].pod, r->diffs[i].node_a ? r->diffs[i].node_a : "(pending)",
                r->diffs[i].node_b ? r->diffs[i].node_b : "(pending)");
    if (r->n_diffs > 20)
        fprintf(out, "  ... and %u more (--output json lists all)\n", r->n_diffs - 20);
    }
    if (r->policy[0].n_runs > 1) {
        fprintf(out, "seeds alone (seed %llu against seed %llu):", (unsigned long long)r->first_seed,
                (unsigned long long)r->first_seed + 1);
        for (uint32_t p = 0; p < r->n_policies; p++)
            fprintf(out, "%s %c moves %u%s", p ? "," : "", cmp_policy_letter(p), r->policy[p].seed_moves,
                    p ? "" : " pods");
        fputc('\n', out);
    }
}

/* ---- JSON */

static cJSON *dist_json(const cmp_dist *d)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "n", d->n);
    cJSON_AddNumberToObject(j, "mean", d->mean);
    cJSON_AddNumberToObject(j, "stddev", d->stddev);
    cJSON_AddNumberToObject(j, "min", d->min);
    cJSON_AddNumberToObject(j, "max", d->max);
    cJSON_AddNumberToObject(j, "p50", d->p50);
    cJSON_AddNumberToObject(j, "p90", d->p90);
    cJSON_AddNumberToObject(j, "p99", d->p99);
    return j;
}

static cJSON *hist_json(const uint32_t *bins)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < CMP_BINS; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(bins[i]));
    return a;
}

static cJSON *run_json(const cmp_run *run)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "seed", (double)run->seed);
    for (size_t i = 0; i < N_ROWS; i++)
        cJSON_AddNumberToObject(j, ROWS[i].key, ROWS[i].get(run));
    cJSON_AddNumberToObject(j, "attempts", (double)run->attempts);
    cJSON_AddNumberToObject(j, "seconds", run->seconds);
    cJSON_AddNumberToObject(j, "cpuSeconds", run->cpu_seconds);
    cJSON_AddNumberToObject(j, "metricCpuSeconds", run->metric_cpu_seconds);
    cJSON_AddItemToObject(j, "latencySeconds", dist_json(&run->latency));
    cJSON_AddItemToObject(j, "cpuAllocated", dist_json(&run->cpu));
    cJSON_AddItemToObject(j, "memoryAllocated", dist_json(&run->mem));
    cJSON_AddItemToObject(j, "cpuHistogram", hist_json(run->cpu_hist));
    cJSON_AddItemToObject(j, "memoryHistogram", hist_json(run->mem_hist));
    cJSON *samples = cJSON_AddArrayToObject(j, "overTime");
    for (uint32_t i = 0; i < run->n_samples; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "time", run->samples[i].at_s);
        cJSON_AddNumberToObject(s, "cpuMean", run->samples[i].cpu.mean);
        cJSON_AddNumberToObject(s, "cpuStddev", run->samples[i].cpu.stddev);
        cJSON_AddNumberToObject(s, "memoryMean", run->samples[i].mem.mean);
        cJSON_AddNumberToObject(s, "memoryStddev", run->samples[i].mem.stddev);
        cJSON_AddItemToArray(samples, s);
    }
    if (run->gpu.present) {
        cJSON *g = cJSON_AddObjectToObject(j, "gpuAllocation");
        for (int p = 0; p <= CMP_ARRIVED_MAX; p++) {
            if (run->gpu.alloc[p] != run->gpu.alloc[p])   /* NaN: not reached */
                continue;
            char k[8];
            snprintf(k, sizeof k, "%d", p);
            cJSON_AddNumberToObject(g, k, run->gpu.alloc[p] * 100);
        }
        static const char *const KIND[CMP_KINDS] = {"cpuOnly", "shared", "wholeGpu", "multiGpu"};
        cJSON *u = cJSON_AddObjectToObject(j, "unscheduled");
        for (int k = 0; k < CMP_KINDS; k++)
            cJSON_AddNumberToObject(u, KIND[k], run->gpu.unscheduled[k]);
    }
    cJSON *zones = cJSON_AddObjectToObject(j, "podsPerZone");
    for (uint32_t z = 0; z < run->n_zones; z++)
        cJSON_AddNumberToObject(zones, run->zones[z].name, run->zones[z].pods);
    return j;
}

cJSON *cmp_report_json(const cmp_report *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "trace", r->trace);
    cJSON_AddNumberToObject(root, "nodes", r->n_nodes);
    cJSON_AddNumberToObject(root, "timelineSeconds", r->span_s);
    if (r->not_recorded)
        cJSON_AddStringToObject(root, "notRecorded", r->not_recorded);
    cJSON *pols = cJSON_AddArrayToObject(root, "policies");
    cJSON_AddNumberToObject(root, "firstSeed", (double)r->first_seed);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        cJSON *pj = cJSON_CreateObject();
        cJSON_AddStringToObject(pj, "name", r->policy[p].name);
        cJSON_AddStringToObject(pj, "config", r->policy[p].config);
        cJSON_AddNumberToObject(pj, "seeds", r->policy[p].n_runs);
        cJSON *gpu = cmp_gpu_json(&r->policy[p]);
        if (gpu) {   /* the GPU figures at the policy's top level */
            cJSON *item = gpu->child;
            while (item) {
                cJSON *next = item->next;
                cJSON_AddItemToObject(pj, item->string, cJSON_DetachItemViaPointer(gpu, item));
                item = next;
            }
            cJSON_Delete(gpu);
        }
        cJSON *metrics = cmp_lua_json(r, &r->policy[p]);
        if (metrics)   /* the Lua metrics: {"NAME": {"mean": {"0": ..}, "stddev": {..}}} */
            cJSON_AddItemToObject(pj, "metrics", metrics);
        cJSON *mean = cJSON_AddObjectToObject(pj, "mean");
        for (size_t i = 0; i < N_ROWS; i++)
            cJSON_AddNumberToObject(mean, ROWS[i].key, cmp_mean_over_seeds(&r->policy[p], ROWS[i].get));
        if (r->has_reference)
            cJSON_AddNumberToObject(mean, AGREEMENT.key, cmp_mean_over_seeds(&r->policy[p], AGREEMENT.get));
        cJSON *runs = cJSON_AddArrayToObject(pj, "runs");
        for (uint32_t s = 0; s < r->policy[p].n_runs; s++)
            cJSON_AddItemToArray(runs, run_json(&r->policy[p].runs[s]));
        if (r->policy[p].n_runs > 1)
            cJSON_AddNumberToObject(pj, "seedMoves", r->policy[p].seed_moves);
        cJSON_AddItemToArray(pols, pj);
    }
    cJSON *diffs = cJSON_AddArrayToObject(root, "placedDifferently");
    for (uint32_t i = 0; i < r->n_diffs; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "pod", r->diffs[i].pod);
        if (r->diffs[i].node_a)
            cJSON_AddStringToObject(d, "a", r->diffs[i].node_a);
        else
            cJSON_AddNullToObject(d, "a");
        if (r->diffs[i].node_b)
            cJSON_AddStringToObject(d, "b", r->diffs[i].node_b);
        else
            cJSON_AddNullToObject(d, "b");
        cJSON_AddItemToArray(diffs, d);
    }
    return root;
}
