/*
 * compare_lua_report.c: the reports of compare's metrics written in Lua
 * (compare_lua.c): per policy, the mean and the population standard
 * deviation over seeds at each arrived percent; JSON (every percent), text
 * and HTML (a chart of every policy's mean against the arrived percent, and a
 * table at every 10 percent, per metric). A metric without any
 * value (a built-in GPU metric on a trace without GPUs) is left out.
 */
#include "cli/compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* ---- over seeds */

void cmp_lua_mean(const cmp_policy *pol, uint32_t k, int p, double *mean, double *sd)
{
    double sum = 0, sq = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < pol->n_runs; i++) {
        double v = pol->runs[i].metric[k][p];
        if (!isnan(v)) {
            sum += v;
            n++;
        }
    }
    *mean = n ? sum / n : NAN;
    for (uint32_t i = 0; i < pol->n_runs; i++) {
        double v = pol->runs[i].metric[k][p];
        if (!isnan(v))
            sq += (v - *mean) * (v - *mean);
    }
    *sd = n ? sqrt(sq / n) : NAN;
}

bool cmp_lua_has_values(const cmp_report *r, uint32_t k)
{
    for (uint32_t p = 0; p < r->n_policies; p++)
        for (uint32_t s = 0; s < r->policy[p].n_runs; s++)
            for (int a = 0; a <= CMP_ARRIVED_MAX; a++)
                if (!isnan(r->policy[p].runs[s].metric[k][a]))
                    return true;
    return false;
}

/* ---- reports */

static double round2(double v) { return round(v * 100) / 100; }

cJSON *cmp_lua_json(const cmp_report *r, const cmp_policy *pol)
{
    cJSON *all = NULL;
    for (uint32_t k = 0; k < r->n_metrics; k++) {
        if (!cmp_lua_has_values(r, k))
            continue;
        if (!all)
            all = cJSON_CreateObject();
        cJSON *mj = cJSON_AddObjectToObject(all, r->metric_name[k]);
        cJSON *mean_j = cJSON_AddObjectToObject(mj, "mean");
        cJSON *sd_j = cJSON_AddObjectToObject(mj, "stddev");
        for (int p = 0; p <= CMP_ARRIVED_MAX; p++) {
            double mean, sd;
            cmp_lua_mean(pol, k, p, &mean, &sd);
            if (isnan(mean))
                continue;
            char key[8];
            snprintf(key, sizeof key, "%d", p);
            cJSON_AddNumberToObject(mean_j, key, round2(mean));
            cJSON_AddNumberToObject(sd_j, key, round2(sd));
        }
    }
    return all;
}

static const int AT[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130};

static const char *file_label(const cmp_report *r, uint32_t k)
{
    return cmp_lua_is_builtin(r, k) ? "built in" : r->metric_file[k];
}

void cmp_lua_text(const cmp_report *r, FILE *out)
{
    for (uint32_t k = 0; k < r->n_metrics; k++) {
        if (!cmp_lua_has_values(r, k))
            continue;
        fprintf(out, "\nmetric %s (%s) at arrived workload (%%), mean +- stddev over seeds\n", r->metric_name[k],
                file_label(r, k));
        fprintf(out, "%-10s", "arrived");
        for (uint32_t p = 0; p < r->n_policies; p++)
            fprintf(out, " %20.20s", r->policy[p].name);
        fputc('\n', out);
        for (size_t i = 0; i < sizeof AT / sizeof AT[0]; i++) {
            bool any = false;
            for (uint32_t p = 0; p < r->n_policies; p++) {
                double mean, sd;
                cmp_lua_mean(&r->policy[p], k, AT[i], &mean, &sd);
                any = any || !isnan(mean);
            }
            if (!any)
                continue;
            fprintf(out, "%-10d", AT[i]);
            for (uint32_t p = 0; p < r->n_policies; p++) {
                double mean, sd;
                cmp_lua_mean(&r->policy[p], k, AT[i], &mean, &sd);
                if (isnan(mean))
                    fprintf(out, " %20s", "-");
                else
                    fprintf(out, " %11.2f +- %5.2f", mean, sd);
            }
            fputc('\n', out);
        }
    }
}

/* ---- HTML: a chart per metric (every policy's mean against the arrived
 * percent), then its table */

#define MW 640
#define MH 280
#define ML 70
#define MB 44
#define MT 16
#define MR 130

static double mx(double arrived) { return ML + arrived / CMP_ARRIVED_MAX * (MW - ML - MR); }
static double my(double v, double lo, double hi) { return MH - MB - (v - lo) / (hi - lo) * (MH - MB - MT); }

static void chart(const cmp_report *r, uint32_t k, FILE *out)
{
    double lo = 0, hi = 0;
    for (uint32_t p = 0; p < r->n_policies; p++)
        for (int a = 0; a <= CMP_ARRIVED_MAX; a++) {
            double mean, sd;
            cmp_lua_mean(&r->policy[p], k, a, &mean, &sd);
            if (!isnan(mean)) {
                lo = mean < lo ? mean : lo;
                hi = mean > hi ? mean : hi;
            }
        }
    if (hi <= lo)
        hi = lo + 1;
    fputs("<svg class=\"chart lua-metric-chart\" id=\"metric-chart-", out);
    cmp_html_escape(out, r->metric_name[k]);
    fprintf(out, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n", MW, MH,
            MW, MH);
    for (int i = 0; i <= 4; i++) {
        double v = lo + (hi - lo) * i / 4;
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                     "font-size=\"10\" text-anchor=\"end\">%.4g</text>\n", ML, my(v, lo, hi), MW - MR, my(v, lo, hi), ML - 4,
                my(v, lo, hi) + 3, v);
    }
    for (int a = 0; a <= CMP_ARRIVED_MAX; a += 10)
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n", mx(a), MH - MB + 15, a);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", ML, MH - MB, MW - MR, MH - MB);
    fprintf(out, "<text class=\"axis-title\" x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">arrived "
                 "workload (%%)</text>\n", mx(CMP_ARRIVED_MAX / 2.0), MH - 8);
    fprintf(out, "<text class=\"axis-title\" x=\"12\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 12 %.1f)\">", my((lo + hi) / 2, lo, hi), my((lo + hi) / 2, lo, hi));
    cmp_html_escape(out, r->metric_name[k]);
    fputs(" (mean over seeds)</text>\n", out);
    for (uint32_t p = 0; p < r->n_policies; p++) {
        const char *color = cmp_chart_color(p);
        fprintf(out, "<polyline class=\"metric-curve\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
        for (int a = 0; a <= CMP_ARRIVED_MAX; a++) {
            double mean, sd;
            cmp_lua_mean(&r->policy[p], k, a, &mean, &sd);
            if (!isnan(mean))
                fprintf(out, "%.1f,%.1f ", mx(a), my(mean, lo, hi));
        }
        fprintf(out, "\"/><rect x=\"%d\" y=\"%u\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%u\" "
                     "font-size=\"11\">", MW - MR + 10, MT + p * 16, color, MW - MR + 24, MT + p * 16 + 9);
        cmp_html_escape(out, r->policy[p].name);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
}

void cmp_lua_html(const cmp_report *r, FILE *out)
{
    for (uint32_t k = 0; k < r->n_metrics; k++) {
        if (!cmp_lua_has_values(r, k))
            continue;
        fputs("<h2>Metric ", out);
        cmp_html_escape(out, r->metric_name[k]);
        fputs(" (", out);
        cmp_html_escape(out, file_label(r, k));
        fputs(")</h2>\n", out);
        chart(r, k, out);
        fputs("<table class=\"lua-metric\" id=\"metric-", out);
        cmp_html_escape(out, r->metric_name[k]);
        fputs("\"><thead><tr><th>arrived (%) / mean &plusmn; stddev over seeds</th>", out);
        for (uint32_t p = 0; p < r->n_policies; p++) {
            fputs("<th>", out);
            cmp_html_escape(out, r->policy[p].name);
            fputs("</th>", out);
        }
        fputs("</tr></thead><tbody>\n", out);
        for (size_t i = 0; i < sizeof AT / sizeof AT[0]; i++) {
            fprintf(out, "<tr><td>%d</td>", AT[i]);
            for (uint32_t p = 0; p < r->n_policies; p++) {
                double mean, sd;
                cmp_lua_mean(&r->policy[p], k, AT[i], &mean, &sd);
                if (isnan(mean))
                    fputs("<td>-</td>", out);
                else
                    fprintf(out, "<td>%.2f &plusmn; %.2f</td>", mean, sd);
            }
            fputs("</tr>\n", out);
        }
        fputs("</tbody></table>\n", out);
    }
}
