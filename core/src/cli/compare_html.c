/*
 * compare_html.c: `luasched compare --output html`: one self-contained page
 * (no script, no font, no network access: it reads the same offline) with
 * the summary table, charts drawn as inline SVG (cpu and memory allocated
 * over time, the final per-node cpu allocation histogram, latency
 * percentiles, pods per zone) and the first pods the policies placed
 * differently. Its size is bounded whatever the trace: the series have
 * CMP_SAMPLES points and the pod table at most MAX_DIFF_ROWS rows.
 */
#include "cli/compare.h"

#include <math.h>
#include <string.h>

#define MAX_DIFF_ROWS 200
#define CHART_W 560
#define CHART_H 220
#define PAD_L 48
#define PAD_B 28
#define PAD_T 16

static const char *const COLOR[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char *cmp_chart_color(uint32_t p)
{
    return COLOR[p % (sizeof COLOR / sizeof COLOR[0])];
}

#define COLOR_OF(p) cmp_chart_color((uint32_t)(p))

void cmp_html_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* ---- chart frame */

static double plot_x(double v, double max)
{
    return PAD_L + (max > 0 ? v / max : 0) * (CHART_W - PAD_L - 10);
}

static double plot_y(double v, double max)
{
    return CHART_H - PAD_B - (max > 0 ? v / max : 0) * (CHART_H - PAD_B - PAD_T);
}

static void chart_open(FILE *out, const char *id, const char *title)
{
    fprintf(out, "<figure><figcaption>");
    cmp_html_escape(out, title);
    fprintf(out, "</figcaption><svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "xmlns=\"http://www.w3.org/2000/svg\">\n", id, CHART_W, CHART_H, CHART_W, CHART_H);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", PAD_L, CHART_H - PAD_B,
            CHART_W - 10, CHART_H - PAD_B);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", PAD_L, PAD_T, PAD_L,
            CHART_H - PAD_B);
}

/* Ticks at quarters; a count (unit "") below 4 gets whole-number ticks only. */
static void y_ticks(FILE *out, double max, const char *unit)
{
    bool count = unit[0] == '\0';
    int steps = count && max < 4 ? (int)ceil(max) : 4;
    if (count && max >= 4)
        max = ceil(max / 4) * 4;   /* quarters of a multiple of 4 are whole */
    for (int i = 0; i <= steps; i++) {
        double v = max * i / (steps > 0 ? steps : 1);
        double y = plot_y(v, max);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>", PAD_L, y, CHART_W - 10, y);
        if (strcmp(unit, "%") == 0)
            fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.0f%%</text>\n", PAD_L - 4,
                    y + 3, v * 100);
        else
            fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.*f%s</text>\n", PAD_L - 4,
                    y + 3, max >= 10 ? 0 : 2, v, unit);
    }
}

static void legend(FILE *out, uint32_t n)
{
    for (uint32_t p = 0; p < n; p++)
        fprintf(out, "<rect x=\"%u\" y=\"2\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%u\" y=\"11\" "
                     "font-size=\"11\">%c</text>", CHART_W - 10 - (n - p) * 30, COLOR_OF(p), CHART_W + 3 - (n - p) * 30,
                cmp_policy_letter(p));
    fputs("\n", out);
}

static void chart_close(FILE *out)
{
    fputs("</svg></figure>\n", out);
}

/* ---- charts */

typedef double (*sample_value)(const cmp_sample *);
static double cpu_mean(const cmp_sample *s) { return s->cpu.mean; }
static double mem_mean(const cmp_sample *s) { return s->mem.mean; }
static double cpu_sd(const cmp_sample *s) { return s->cpu.stddev; }
static double mem_sd(const cmp_sample *s) { return s->mem.stddev; }

static void series(FILE *out, const cmp_run *run, sample_value get, double max_t, double max_v, const char *color,
                   const char *dash)
{
    fprintf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
            dash);
    for (uint32_t i = 0; i < run->n_samples; i++)
        fprintf(out, "%.1f,%.1f ", plot_x(run->samples[i].at_s, max_t), plot_y(get(&run->samples[i]), max_v));
    fputs("\"/>\n", out);
}

/* Allocation over time, per policy (seed 0): the mean over nodes (solid) and
 * the standard deviation over nodes (dashed), which shows the imbalance. */
static void time_chart(FILE *out, const cmp_report *r, const char *id, const char *title, sample_value get,
                       sample_value get_sd)
{
    double max_t = r->span_s, max_v = 0;
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const cmp_run *run = &r->policy[p].runs[0];
        for (uint32_t i = 0; i < run->n_samples; i++) {
            if (run->samples[i].at_s > max_t)
                max_t = run->samples[i].at_s;
            if (get(&run->samples[i]) > max_v)
                max_v = get(&run->samples[i]);
            if (get_sd(&run->samples[i]) > max_v)
                max_v = get_sd(&run->samples[i]);
        }
    }
    max_v = max_v > 0 ? max_v * 1.1 : 1;
    chart_open(out, id, title);
    y_ticks(out, max_v, "%");
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%.0fs</text>\n", CHART_W - 10,
            CHART_H - 8, max_t);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        series(out, &r->policy[p].runs[0], get, max_t, max_v, COLOR_OF(p), "");
        series(out, &r->policy[p].runs[0], get_sd, max_t, max_v, COLOR_OF(p), " stroke-dasharray=\"5,4\"");
    }
    legend(out, r->n_policies);
    chart_close(out);
}

/* Grouped bars: n groups of one value per policy (v[p * n + i]). */
static void bar_chart(FILE *out, const char *id, const char *title, const char *const *labels, const double *v,
                      uint32_t np, int n, const char *unit)
{
    double max_v = 0;
    for (int i = 0; i < n * (int)np; i++)
        if (v[i] > max_v)
            max_v = v[i];
    max_v = max_v > 0 ? max_v * 1.1 : 1;
    chart_open(out, id, title);
    y_ticks(out, max_v, unit);
    double group = (double)(CHART_W - PAD_L - 10) / (n > 0 ? n : 1);
    double bar = group * 0.76 / (np ? np : 1);
    for (int i = 0; i < n; i++) {
        double x0 = PAD_L + group * i + group * 0.12;
        for (uint32_t p = 0; p < np; p++) {
            double val = v[p * (uint32_t)n + (uint32_t)i];
            double y = plot_y(val, max_v);
            fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                         "<title>%c: %g</title></rect>", x0 + p * bar, y, bar, CHART_H - PAD_B - y, COLOR_OF(p),
                    cmp_policy_letter(p), val);
        }
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">", x0 + bar * np / 2,
                CHART_H - 12);
        cmp_html_escape(out, labels[i]);
        fputs("</text>\n", out);
    }
    legend(out, np);
    chart_close(out);
}

static void histogram_chart(FILE *out, const cmp_report *r)
{
    static const char *const labels[CMP_BINS] = {"0-10%", "10-20", "20-30", "30-40", "40-50",
                                                 "50-60", "60-70", "70-80", "80-90", "90-100"};
    double v[CMP_MAX_POLICIES * CMP_BINS];
    for (uint32_t p = 0; p < r->n_policies; p++)
        for (int i = 0; i < CMP_BINS; i++)
            v[p * CMP_BINS + (uint32_t)i] = r->policy[p].runs[0].cpu_hist[i];
    bar_chart(out, "cpu-histogram", "Nodes by cpu allocated at the end (first seed)", labels, v, r->n_policies,
              CMP_BINS, "");
}

static void latency_chart(FILE *out, const cmp_report *r)
{
    static const char *const labels[3] = {"p50", "p90", "p99"};
    double v[CMP_MAX_POLICIES * 3];
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const cmp_dist *l = &r->policy[p].runs[0].latency;
        v[p * 3] = l->p50;
        v[p * 3 + 1] = l->p90;
        v[p * 3 + 2] = l->p99;
    }
    bar_chart(out, "latency", "Creation to binding, seconds (first seed)", labels, v, r->n_policies, 3, "s");
}

/* Pods per zone, over the union of both policies' zones (at most 24 shown). */
static void zone_chart(FILE *out, const cmp_report *r)
{
    enum { MAX_ZONES = 24 };
    const char *labels[MAX_ZONES];
    double v[CMP_MAX_POLICIES * MAX_ZONES] = {0};
    int n = 0;
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const cmp_run *run = &r->policy[p].runs[0];
        for (uint32_t z = 0; z < run->n_zones; z++) {
            int i = 0;
            while (i < n && strcmp(labels[i], run->zones[z].name) != 0)
                i++;
            if (i == n) {
                if (n == MAX_ZONES)
                    continue;
                labels[n++] = run->zones[z].name;
            }
            v[p * MAX_ZONES + (uint32_t)i] = run->zones[z].pods;
        }
    }
    /* rows of MAX_ZONES: repack to rows of n */
    for (uint32_t p = 1; p < r->n_policies; p++)
        for (int i = 0; i < n; i++)
            v[p * (uint32_t)n + (uint32_t)i] = v[p * MAX_ZONES + (uint32_t)i];
    bar_chart(out, "zones", "Pods per zone at the end (first seed)", labels, v, r->n_policies, n, "");
}

/* ---- tables */

static void summary_row(FILE *out, const cmp_report *r, const cmp_metric *m)
{
    fputs("<tr><td>", out);
    cmp_html_escape(out, m->label);
    fputs("</td>", out);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        char v[32];
        cmp_format_metric(v, sizeof v, m, cmp_mean_over_seeds(&r->policy[p], m->get));
        fprintf(out, "<td>%s</td>", v);
    }
    fputs("</tr>\n", out);
}

static void summary_table(FILE *out, const cmp_report *r)
{
    size_t n;
    const cmp_metric *m = cmp_metrics(&n);
    fputs("<table id=\"summary\"><thead><tr><th></th>", out);
    for (uint32_t p = 0; p < r->n_policies; p++)
        fprintf(out, "<th>%c</th>", cmp_policy_letter(p));
    fputs("</tr></thead><tbody>\n", out);
    for (size_t i = 0; i < n; i++)
        summary_row(out, r, &m[i]);
    if (r->has_reference)
        summary_row(out, r, cmp_agreement_metric());
    fputs("</tbody></table>\n", out);
    if (r->not_recorded) {
        fputs("<p id=\"not-recorded\">Not recorded (the live scheduler read them, the replays did not): ", out);
        cmp_html_escape(out, r->not_recorded);
        fputs("</p>\n", out);
    }
}

/* "Seeds alone move N pods": what the tie-breaking (and, with one trace per
 * seed, the sampling) changes by itself, so a smaller difference is noise. */
static void seed_noise(FILE *out, const cmp_report *r)
{
    if (r->policy[0].n_runs < 2) {
        fputs("<p id=\"seed-noise\">One seed per policy: run with <code>--seeds 2</code> or more to see how many "
              "pods the seeds alone move.</p>\n", out);
        return;
    }
    fputs("<p id=\"seed-noise\">Seeds alone (first seed against the second):", out);
    for (uint32_t p = 0; p < r->n_policies; p++)
        fprintf(out, "%s <b>%c</b> moves %u pod%s", p ? "," : "", cmp_policy_letter(p), r->policy[p].seed_moves,
                r->policy[p].seed_moves == 1 ? "" : "s");
    fputs(". A difference between policies smaller than this is within seed noise.</p>\n", out);
}

static void diff_table(FILE *out, const cmp_report *r)
{
    seed_noise(out, r);
    if (r->n_policies < 2)
        return;
    fprintf(out, "<h2>Placed differently (first seed, A against B): %u pod%s</h2>\n", r->n_diffs,
            r->n_diffs == 1 ? "" : "s");
    if (r->n_diffs == 0)
        return;
    fputs("<table id=\"diffs\"><thead><tr><th>pod</th><th>A</th><th>B</th></tr></thead><tbody>\n", out);
    for (uint32_t i = 0; i < r->n_diffs && i < MAX_DIFF_ROWS; i++) {
        fputs("<tr><td>", out);
        cmp_html_escape(out, r->diffs[i].pod);
        fputs("</td><td>", out);
        cmp_html_escape(out, r->diffs[i].node_a ? r->diffs[i].node_a : "(pending)");
        fputs("</td><td>", out);
        cmp_html_escape(out, r->diffs[i].node_b ? r->diffs[i].node_b : "(pending)");
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    if (r->n_diffs > MAX_DIFF_ROWS)
        fprintf(out, "<p>... and %u more (<code>--output json</code> lists all).</p>\n", r->n_diffs - MAX_DIFF_ROWS);
}

bool cmp_report_html(const cmp_report *r, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>luasched compare: ", out);
    cmp_html_escape(out, r->trace);
    fputs("</title>\n<style>body{font:14px sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
          "margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:"
          "left}figure{display:inline-block;margin:8px 16px 8px 0}figcaption{font-weight:bold;margin-bottom:4px}"
          ".a{color:#1f77b4}.b{color:#ff7f0e}</style></head><body>\n", out);
    fputs("<h1>luasched compare</h1>\n<p>Trace <code>", out);
    cmp_html_escape(out, r->trace);
    fprintf(out, "</code>: %u nodes at the end, %.0f s of timeline, %u seed%s per policy.</p>\n<p>", r->n_nodes,
            r->span_s, r->policy[0].n_runs, r->policy[0].n_runs == 1 ? "" : "s");
    for (uint32_t p = 0; p < r->n_policies; p++) {
        fprintf(out, "%s<b style=\"color:%s\">%c</b> = ", p ? "<br>" : "", COLOR_OF(p), cmp_policy_letter(p));
        cmp_html_escape(out, r->policy[p].name);
        fputs(" (<code>", out);
        cmp_html_escape(out, r->policy[p].config);
        fputs("</code>)", out);
    }
    fputs("</p>\n<h2>Summary (means over seeds)</h2>\n", out);
    summary_table(out, r);
    cmp_gpu_html(r, out);
    cmp_lua_html(r, out);
    fputs("<h2>Charts</h2>\n", out);
    time_chart(out, r, "cpu-over-time", "Cpu allocated per node over time: mean (solid), stddev (dashed), seed 0",
               cpu_mean, cpu_sd);
    time_chart(out, r, "memory-over-time",
               "Memory allocated per node over time: mean (solid), stddev (dashed), seed 0", mem_mean, mem_sd);
    histogram_chart(out, r);
    latency_chart(out, r);
    zone_chart(out, r);
    diff_table(out, r);
    fputs("</body></html>\n", out);
    return !ferror(out);
}
