/*
 * compare_lua_report.c: the reports of compare's metrics written in Lua
 * (compare_lua.c): per policy, the mean and the population standard
 * deviation over seeds at each arrived percent; JSON (every percent), text
 * and HTML (a table per metric at every 10 percent). A metric without any
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

static void esc(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else if (*s == '"')
            fputs("&quot;", out);
        else
            fputc(*s, out);
    }
}

void cmp_lua_html(const cmp_report *r, FILE *out)
{
    for (uint32_t k = 0; k < r->n_metrics; k++) {
        if (!cmp_lua_has_values(r, k))
            continue;
        fputs("<h2>Metric ", out);
        esc(out, r->metric_name[k]);
        fputs(" (", out);
        esc(out, file_label(r, k));
        fputs(")</h2>\n<table class=\"lua-metric\" id=\"metric-", out);
        esc(out, r->metric_name[k]);
        fputs("\"><thead><tr><th>arrived (%) / mean &plusmn; stddev over seeds</th>", out);
        for (uint32_t p = 0; p < r->n_policies; p++) {
            fputs("<th>", out);
            esc(out, r->policy[p].name);
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
