/*
 * compare_gpu.c: the GPU metrics of `luasched compare` (the FGD paper's):
 * the cluster's GPU allocation at each percent of arrived workload (0..130:
 * the GPU milli requested by the pods created so far, bound or not, over the
 * cluster's GPU milli), and the pods left unscheduled by kind (CPU-only, a
 * share of one GPU, one whole GPU, several GPUs), with their means and
 * spread over seeds in the text, JSON and HTML reports.
 *
 * Percents are crossed when the arrived workload reaches them (floor), but
 * the end of the trace counts as its nearest percent (round): a trace tuned
 * to 130% ends at 129.99..130.1% and has its "130".
 *
 * GPUs are the extended resource alibabacloud.com/gpu-milli (1000 per GPU)
 * that `luasched import openb` writes; a trace without it has no GPU metrics.
 */
#include "cli/compare.h"
#include "luasched/cache.h"
#include "luasched/scheduler.h"
#include "sim/cluster.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define GPU_RESOURCE "alibabacloud.com/gpu-milli"

static const char *const KIND_KEY[CMP_KINDS] = {"cpuOnly", "shared", "wholeGpu", "multiGpu"};
static const char *const KIND_LABEL[CMP_KINDS] = {"CPU-only", "GPU share", "one GPU", "multi-GPU"};

static int gpu_slot(void)
{
    return ls_resource_index(GPU_RESOURCE);
}

static int64_t pod_gpu_milli(const ls_pod *pod, int slot)
{
    return slot >= 0 ? pod->requests.v[slot] : 0;
}

static int pod_kind(int64_t milli)
{
    if (milli <= 0)
        return CMP_KIND_CPU;
    if (milli < 1000)
        return CMP_KIND_SHARED;
    return milli == 1000 ? CMP_KIND_WHOLE : CMP_KIND_MULTI;
}

void cmp_gpu_start(cmp_gpu *g, const ls_cluster *c)
{
    memset(g, 0, sizeof *g);
    for (int p = 0; p <= CMP_ARRIVED_MAX; p++)
        g->alloc[p] = NAN;
    int slot = gpu_slot();
    if (slot < 0)
        return;
    for (uint32_t i = 0; i < ls_cluster_node_slots(c); i++) {
        const ls_node *n = ls_cluster_node(c, i);
        if (n)
            g->capacity_milli += n->allocatable.v[slot];
    }
    g->present = g->capacity_milli > 0;
}

static double allocated(const ls_cluster *c, const ls_scheduler *s, int slot)
{
    const ls_cache *cache = ls_scheduler_cache(s);
    int64_t used = 0;
    for (uint32_t i = 0; i < ls_cluster_node_slots(c); i++) {
        const ls_node *n = ls_cluster_node(c, i);
        const ls_node_info *ni = n ? ls_cache_node_info(cache, n->name) : NULL;
        if (ni)
            used += ni->requested.v[slot];
    }
    return (double)used;
}

/* Pods created before now arrived; each percent reached gets the allocation. */
static void arrive(cmp_gpu *g, const ls_cluster *c, const ls_scheduler *s, uint64_t now_ms, bool all)
{
    int slot = gpu_slot();
    uint32_t n = ls_cluster_num_pods(c);
    while (g->seen < n) {
        const ls_sim_pod *sp = ls_cluster_pod(c, g->seen);
        if (!all && sp->created_at_ms >= now_ms)
            break;
        g->arrived_milli += pod_gpu_milli(&sp->obj->pod, slot);
        g->seen++;
    }
    int reached = (int)floor(100.0 * (double)g->arrived_milli / (double)g->capacity_milli + 1e-9);
    if (reached > CMP_ARRIVED_MAX)
        reached = CMP_ARRIVED_MAX;
    if (g->next_percent > reached)
        return;
    double ratio = allocated(c, s, slot) / (double)g->capacity_milli;
    for (; g->next_percent <= reached; g->next_percent++)
        g->alloc[g->next_percent] = ratio;
}

void cmp_gpu_advance(cmp_gpu *g, const ls_cluster *c, const ls_scheduler *s, uint64_t now_ms)
{
    if (g->present)
        arrive(g, c, s, now_ms, false);
}

void cmp_gpu_finish(cmp_gpu *g, const ls_cluster *c, const ls_scheduler *s)
{
    if (!g->present)
        return;
    arrive(g, c, s, 0, true);
    int slot = gpu_slot();
    /* The whole trace arrived: its last percent is the nearest one (a trace
     * tuned to 130% ends a hair below or above 130.0%, by the last task's
     * size), holding the final allocation. */
    int last = (int)lround(100.0 * (double)g->arrived_milli / (double)g->capacity_milli);
    if (last > CMP_ARRIVED_MAX)
        last = CMP_ARRIVED_MAX;
    if (g->next_percent <= last) {
        double ratio = allocated(c, s, slot) / (double)g->capacity_milli;
        for (; g->next_percent <= last; g->next_percent++)
            g->alloc[g->next_percent] = ratio;
    }
    for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++) {
        const ls_sim_pod *sp = ls_cluster_pod(c, i);
        int k = pod_kind(pod_gpu_milli(&sp->obj->pod, slot));
        g->pods[k]++;
        if (sp->outcome != LS_POD_BOUND && sp->outcome != LS_POD_RUNNING)
            g->unscheduled[k]++;
    }
}

/* ---- over seeds */

static double series_at(const cmp_run *r, size_t offset, int p)
{
    return ((const double *)((const char *)&r->gpu + offset))[p];
}

void cmp_gpu_mean(const cmp_policy *pol, size_t offset, int p, double *mean, double *sd)
{
    double sum = 0, sq = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < pol->n_runs; i++) {
        double v = series_at(&pol->runs[i], offset, p);
        if (isnan(v))
            continue;
        sum += v;
        n++;
    }
    *mean = n ? sum / n : NAN;
    for (uint32_t i = 0; i < pol->n_runs; i++) {
        double v = series_at(&pol->runs[i], offset, p);
        if (!isnan(v))
            sq += (v - *mean) * (v - *mean);
    }
    *sd = n ? sqrt(sq / n) : NAN;
}

static double unscheduled_mean(const cmp_policy *pol, int k, double *sd)
{
    double sum = 0, sq = 0;
    for (uint32_t i = 0; i < pol->n_runs; i++)
        sum += pol->runs[i].gpu.unscheduled[k];
    double mean = pol->n_runs ? sum / pol->n_runs : 0;
    for (uint32_t i = 0; i < pol->n_runs; i++)
        sq += (pol->runs[i].gpu.unscheduled[k] - mean) * (pol->runs[i].gpu.unscheduled[k] - mean);
    *sd = pol->n_runs ? sqrt(sq / pol->n_runs) : 0;
    return mean;
}

static bool has_gpu(const cmp_report *r)
{
    return r->n_policies > 0 && r->policy[0].n_runs > 0 && r->policy[0].runs[0].gpu.present;
}

/* ---- JSON: percents as strings ("0".."130"), allocation in percent */

static void add_series(cJSON *obj, const char *key, const cmp_policy *pol, size_t offset, double scale, bool spread)
{
    cJSON *m = cJSON_AddObjectToObject(obj, key);
    for (int p = 0; p <= CMP_ARRIVED_MAX; p++) {
        double mean, sd;
        cmp_gpu_mean(pol, offset, p, &mean, &sd);
        if (isnan(mean))
            continue;
        char k[8];
        snprintf(k, sizeof k, "%d", p);
        cJSON_AddNumberToObject(m, k, round((spread ? sd : mean) * scale * 100) / 100);
    }
}

cJSON *cmp_gpu_json(const cmp_policy *pol)
{
    if (pol->n_runs == 0 || !pol->runs[0].gpu.present)
        return NULL;
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "capacityMilli", (double)pol->runs[0].gpu.capacity_milli);
    add_series(g, "gpuAllocation", pol, offsetof(cmp_gpu, alloc), 100, false);
    add_series(g, "gpuAllocationStddev", pol, offsetof(cmp_gpu, alloc), 100, true);
    cJSON *u = cJSON_AddObjectToObject(g, "unscheduled");
    cJSON *us = cJSON_AddObjectToObject(g, "unscheduledStddev");
    cJSON *pods = cJSON_AddObjectToObject(g, "pods");
    for (int k = 0; k < CMP_KINDS; k++) {
        double sd, mean = unscheduled_mean(pol, k, &sd);
        cJSON_AddNumberToObject(u, KIND_KEY[k], mean);
        cJSON_AddNumberToObject(us, KIND_KEY[k], round(sd * 100) / 100);
        cJSON_AddNumberToObject(pods, KIND_KEY[k], pol->runs[0].gpu.pods[k]);
    }
    return g;
}

/* ---- text */

void cmp_gpu_text(const cmp_report *r, FILE *out)
{
    if (!has_gpu(r))
        return;
    fprintf(out, "\nGPU allocation (%% of %.0f GPUs) at arrived workload (%% of the GPUs), mean +- stddev over seeds\n",
            (double)r->policy[0].runs[0].gpu.capacity_milli / 1000);
    fprintf(out, "%-10s", "arrived");
    for (uint32_t p = 0; p < r->n_policies; p++)
        fprintf(out, " %16.16s", r->policy[p].name);
    fputc('\n', out);
    static const int AT[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130};
    for (size_t i = 0; i < sizeof AT / sizeof AT[0]; i++) {
        fprintf(out, "%-10d", AT[i]);
        for (uint32_t p = 0; p < r->n_policies; p++) {
            double mean, sd;
            cmp_gpu_mean(&r->policy[p], offsetof(cmp_gpu, alloc), AT[i], &mean, &sd);
            if (isnan(mean))
                fprintf(out, " %16s", "-");
            else
                fprintf(out, "   %6.2f +- %4.2f", mean * 100, sd * 100);
        }
        fputc('\n', out);
    }
    fprintf(out, "\nunscheduled pods by kind, mean over seeds (of the trace's pods of that kind)\n");
    for (int k = 0; k < CMP_KINDS; k++) {
        fprintf(out, "%-10s", KIND_LABEL[k]);
        for (uint32_t p = 0; p < r->n_policies; p++) {
            double sd, mean = unscheduled_mean(&r->policy[p], k, &sd);
            fprintf(out, " %9.1f/%-6u", mean, r->policy[p].runs[0].gpu.pods[k]);
        }
        fputc('\n', out);
    }
}

/* ---- HTML: every policy's allocation-versus-arrived curve on one chart */

#define GW 640
#define GH 320
#define GL 56
#define GB 44
#define GT 16
#define GR 130

static double gx(double arrived) { return GL + arrived / CMP_ARRIVED_MAX * (GW - GL - GR); }
static double gy(double pct, double lo) { return GH - GB - (pct - lo) / (100 - lo) * (GH - GB - GT); }

static void curve(FILE *out, const cmp_policy *pol, const char *color, double lo)
{
    fprintf(out, "<polyline class=\"gpu-curve\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (int p = 0; p <= CMP_ARRIVED_MAX; p++) {
        double mean, sd;
        cmp_gpu_mean(pol, offsetof(cmp_gpu, alloc), p, &mean, &sd);
        if (!isnan(mean))
            fprintf(out, "%.1f,%.1f ", gx(p), gy(mean * 100 < lo ? lo : mean * 100, lo));
    }
    fputs("\"/>\n", out);
}

void cmp_gpu_html(const cmp_report *r, FILE *out)
{
    if (!has_gpu(r))
        return;
    const double lo = 0;
    fputs("<h2>GPU allocation versus arrived workload</h2>\n<figure><figcaption>GPU allocation ratio (mean over seeds) "
          "at each percent of arrived workload</figcaption>", out);
    fprintf(out, "<svg id=\"gpu-allocation\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "xmlns=\"http://www.w3.org/2000/svg\">\n", GW, GH, GW, GH);
    for (int v = 0; v <= 100; v += 20) {
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                     "font-size=\"10\" text-anchor=\"end\">%d%%</text>\n", GL, gy(v, lo), GW - GR, gy(v, lo), GL - 4,
                gy(v, lo) + 3, v);
    }
    for (int a = 0; a <= CMP_ARRIVED_MAX; a += 10)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/><text x=\"%.1f\" y=\"%d\" "
                     "font-size=\"10\" text-anchor=\"middle\">%d</text>\n", gx(a), GH - GB, gx(a), GH - GB + 4, gx(a),
                GH - GB + 15, a);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                 "y2=\"%d\" stroke=\"#333\"/>\n", GL, GH - GB, GW - GR, GH - GB, GL, GT, GL, GH - GB);
    fprintf(out, "<text class=\"axis-title\" x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">arrived "
                 "workload (%% of the cluster's GPUs)</text>\n", gx(CMP_ARRIVED_MAX / 2.0), GH - 8);
    fprintf(out, "<text class=\"axis-title\" x=\"12\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 12 %.1f)\">GPU allocation (%%)</text>\n", gy(50, lo), gy(50, lo));
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const char *color = cmp_chart_color(p);
        curve(out, &r->policy[p], color, lo);
        fprintf(out, "<rect x=\"%d\" y=\"%u\" width=\"10\" height=\"10\" fill=\"%s\"/><text class=\"legend\" x=\"%d\" "
                     "y=\"%u\" font-size=\"11\">", GW - GR + 10, GT + p * 16, color, GW - GR + 24, GT + p * 16 + 9);
        cmp_html_escape(out, r->policy[p].name);
        fputs("</text>\n", out);
    }
    fputs("</svg></figure>\n", out);
    fputs("<table id=\"gpu-unscheduled\"><thead><tr><th>unscheduled (mean &plusmn; stddev over seeds)</th>", out);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        fputs("<th>", out);
        cmp_html_escape(out, r->policy[p].name);
        fputs("</th>", out);
    }
    fputs("</tr></thead><tbody>\n", out);
    for (int k = 0; k < CMP_KINDS; k++) {
        fprintf(out, "<tr><td>%s pods</td>", KIND_LABEL[k]);
        for (uint32_t p = 0; p < r->n_policies; p++) {
            double sd, mean = unscheduled_mean(&r->policy[p], k, &sd);
            fprintf(out, "<td>%.1f &plusmn; %.1f</td>", mean, sd);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}
