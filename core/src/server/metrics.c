/*
 * metrics.c: the Prometheus registry of metrics.h. Series live in a per-family
 * vector found by comparing label values: families hold few series (a handful
 * of results, profiles, extension points and plugins), so a linear scan beats
 * hashing the values.
 */
#include "server/metrics.h"

#include "luasched/base.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LABELS = 4 };

typedef struct metric_series {
    char *values[MAX_LABELS];
    double value;          /* counter or gauge; a histogram's sum */
    uint64_t count;        /* histogram observations */
    uint64_t *bucket_hits; /* per bucket, not cumulative */
} metric_series;

struct ls_metric_family {
    ls_metrics *owner;
    char *name, *help;
    ls_metric_type type;
    char *labels[MAX_LABELS];
    size_t n_labels;
    double *buckets;
    size_t n_buckets;
    ls_vec series;         /* metric_series */
    bool declared;         /* HELP and TYPE shown without a series (ls_metrics_declare) */
};

struct ls_metrics {
    pthread_mutex_t lock;
    ls_vec families;       /* ls_metric_family * */
};

ls_metrics *ls_metrics_new(void)
{
    ls_metrics *m = ls_xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    ls_vec_init(&m->families, sizeof(ls_metric_family *));
    return m;
}

static void family_free(ls_metric_family *f)
{
    for (uint32_t i = 0; i < f->series.len; i++) {
        metric_series *s = &LS_VEC_AT(&f->series, metric_series, i);
        for (size_t l = 0; l < f->n_labels; l++)
            free(s->values[l]);
        free(s->bucket_hits);
    }
    ls_vec_free(&f->series);
    for (size_t l = 0; l < f->n_labels; l++)
        free(f->labels[l]);
    free(f->buckets);
    free(f->name);
    free(f->help);
    free(f);
}

void ls_metrics_free(ls_metrics *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->families.len; i++)
        family_free(LS_VEC_AT(&m->families, ls_metric_family *, i));
    ls_vec_free(&m->families);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

ls_metric_family *ls_metrics_find(ls_metrics *m, const char *name)
{
    ls_metric_family *found = NULL;
    pthread_mutex_lock(&m->lock);
    for (uint32_t i = 0; i < m->families.len && !found; i++) {
        ls_metric_family *f = LS_VEC_AT(&m->families, ls_metric_family *, i);
        if (strcmp(f->name, name) == 0)
            found = f;
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

static metric_series *series_for(ls_metric_family *f, const char *const *values);

ls_metric_family *ls_metrics_family(ls_metrics *m, const char *name, const char *help, ls_metric_type type,
                                    const char *const *label_names, const double *buckets, size_t n_buckets)
{
    ls_metric_family *f = ls_metrics_find(m, name);
    if (f)
        return f;
    f = ls_xcalloc(1, sizeof *f);
    f->owner = m;
    f->name = ls_xstrdup(name);
    f->help = ls_xstrdup(help);
    f->type = type;
    for (; label_names && label_names[f->n_labels] && f->n_labels < MAX_LABELS; f->n_labels++)
        f->labels[f->n_labels] = ls_xstrdup(label_names[f->n_labels]);
    if (type == LS_METRIC_HISTOGRAM && n_buckets) {
        f->buckets = ls_xmalloc(n_buckets * sizeof *f->buckets);
        memcpy(f->buckets, buckets, n_buckets * sizeof *f->buckets);
        f->n_buckets = n_buckets;
    }
    ls_vec_init(&f->series, sizeof(metric_series));
    if (!f->n_labels)
        series_for(f, NULL);   /* a metric without labels exists from registration, as client_golang's */
    pthread_mutex_lock(&m->lock);
    *(ls_metric_family **)ls_vec_push(&m->families) = f;
    pthread_mutex_unlock(&m->lock);
    return f;
}

void ls_metrics_exp_buckets(double start, double factor, size_t count, double *out)
{
    for (size_t i = 0; i < count; i++, start *= factor)
        out[i] = start;
}

static metric_series *series_for(ls_metric_family *f, const char *const *values)
{
    for (uint32_t i = 0; i < f->series.len; i++) {
        metric_series *s = &LS_VEC_AT(&f->series, metric_series, i);
        size_t l = 0;
        while (l < f->n_labels && strcmp(s->values[l], values[l] ? values[l] : "") == 0)
            l++;
        if (l == f->n_labels)
            return s;
    }
    metric_series *s = ls_vec_push(&f->series);
    memset(s, 0, sizeof *s);
    for (size_t l = 0; l < f->n_labels; l++)
        s->values[l] = ls_xstrdup(values[l] ? values[l] : "");
    if (f->type == LS_METRIC_HISTOGRAM)
        s->bucket_hits = ls_xcalloc(f->n_buckets + 1, sizeof *s->bucket_hits);
    return s;
}

void ls_metrics_clear(ls_metric_family *f)
{
    pthread_mutex_lock(&f->owner->lock);
    for (uint32_t i = 0; i < f->series.len; i++) {
        metric_series *s = &LS_VEC_AT(&f->series, metric_series, i);
        for (size_t l = 0; l < f->n_labels; l++)
            free(s->values[l]);
        free(s->bucket_hits);
    }
    f->series.len = 0;
    pthread_mutex_unlock(&f->owner->lock);
}

void ls_metrics_add(ls_metric_family *f, const char *const *label_values, double delta)
{
    pthread_mutex_lock(&f->owner->lock);
    series_for(f, label_values)->value += delta;
    pthread_mutex_unlock(&f->owner->lock);
}

void ls_metrics_touch(ls_metric_family *f, const char *const *label_values)
{
    pthread_mutex_lock(&f->owner->lock);
    series_for(f, label_values);
    pthread_mutex_unlock(&f->owner->lock);
}

void ls_metrics_set(ls_metric_family *f, const char *const *label_values, double value)
{
    pthread_mutex_lock(&f->owner->lock);
    series_for(f, label_values)->value = value;
    pthread_mutex_unlock(&f->owner->lock);
}

void ls_metrics_observe(ls_metric_family *f, const char *const *label_values, double value)
{
    pthread_mutex_lock(&f->owner->lock);
    metric_series *s = series_for(f, label_values);
    size_t b = 0;
    while (b < f->n_buckets && value > f->buckets[b])
        b++;
    s->bucket_hits[b]++;
    s->count++;
    s->value += value;
    pthread_mutex_unlock(&f->owner->lock);
}

void ls_metrics_observe_bucketed(ls_metric_family *f, const char *const *label_values, const uint64_t *bucket_counts,
                                 uint64_t count, double sum)
{
    pthread_mutex_lock(&f->owner->lock);
    metric_series *s = series_for(f, label_values);
    for (size_t b = 0; b <= f->n_buckets; b++)
        s->bucket_hits[b] += bucket_counts[b];
    s->count += count;
    s->value += sum;
    pthread_mutex_unlock(&f->owner->lock);
}

/* ---- rendering */

typedef struct text_out {
    char *data;
    size_t len, cap;
} text_out;

static void out_printf(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(text_out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->data + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        o->cap = o->cap * 2 + (n > 0 ? (size_t)n : 0) + 256;
        o->data = ls_xrealloc(o->data, o->cap);
    }
}

/* Label values escape backslash, quote and newline; HELP escapes backslash and newline. */
static void out_escaped(text_out *o, const char *s, bool quotes)
{
    for (; *s; s++) {
        if (*s == '\\')
            out_printf(o, "\\\\");
        else if (*s == '\n')
            out_printf(o, "\\n");
        else if (*s == '"' && quotes)
            out_printf(o, "\\\"");
        else
            out_printf(o, "%c", *s);
    }
}

/* The shortest text that reads back as the same double, as Go's
 * strconv.FormatFloat(v, 'g', -1, 64) writes samples and bucket bounds. */
static void format_number(double v, char *buf, size_t len)
{
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, len, "%.0f", v);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buf, len, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void out_number(text_out *o, double v)
{
    char buf[64];
    format_number(v, buf, sizeof buf);
    out_printf(o, "%s", buf);
}

/* {a="x",b="y"} plus an optional extra label (a histogram's le). */
static void out_labels(text_out *o, const ls_metric_family *f, const metric_series *s, const char *le)
{
    if (!f->n_labels && !le)
        return;
    out_printf(o, "{");
    for (size_t l = 0; l < f->n_labels; l++) {
        out_printf(o, "%s%s=\"", l ? "," : "", f->labels[l]);
        out_escaped(o, s->values[l], true);
        out_printf(o, "\"");
    }
    if (le)
        out_printf(o, "%sle=\"%s\"", f->n_labels ? "," : "", le);
    out_printf(o, "}");
}

static void render_histogram(text_out *o, const ls_metric_family *f, const metric_series *s)
{
    uint64_t cumulative = 0;
    char le[64];
    for (size_t b = 0; b <= f->n_buckets; b++) {
        cumulative += s->bucket_hits[b];
        format_number(b < f->n_buckets ? f->buckets[b] : INFINITY, le, sizeof le);
        out_printf(o, "%s_bucket", f->name);
        out_labels(o, f, s, le);
        out_printf(o, " %llu\n", (unsigned long long)cumulative);
    }
    out_printf(o, "%s_sum", f->name);
    out_labels(o, f, s, NULL);
    out_printf(o, " ");
    out_number(o, s->value);
    out_printf(o, "\n%s_count", f->name);
    out_labels(o, f, s, NULL);
    out_printf(o, " %llu\n", (unsigned long long)s->count);
}

static void render_family(text_out *o, const ls_metric_family *f)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};
    out_printf(o, "# HELP %s ", f->name);
    out_escaped(o, f->help, false);
    out_printf(o, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
    for (uint32_t i = 0; i < f->series.len; i++) {
        const metric_series *s = &LS_VEC_AT(&f->series, metric_series, i);
        if (f->type == LS_METRIC_HISTOGRAM) {
            render_histogram(o, f, s);
            continue;
        }
        out_printf(o, "%s", f->name);
        out_labels(o, f, s, NULL);
        out_printf(o, " ");
        out_number(o, s->value);
        out_printf(o, "\n");
    }
}

void ls_metrics_declare(ls_metric_family *f)
{
    pthread_mutex_lock(&f->owner->lock);
    f->declared = true;
    pthread_mutex_unlock(&f->owner->lock);
}

char *ls_metrics_render(ls_metrics *m)
{
    text_out o = {ls_xmalloc(4096), 0, 4096};
    o.data[0] = '\0';
    pthread_mutex_lock(&m->lock);
    for (uint32_t i = 0; i < m->families.len; i++) {
        const ls_metric_family *f = LS_VEC_AT(&m->families, ls_metric_family *, i);
        /* promtool rejects a family with HELP/TYPE and no samples only for
         * histograms; counters and gauges without series are simply left out. */
        if (f->series.len || (f->declared && f->type != LS_METRIC_HISTOGRAM))
            render_family(&o, f);
    }
    pthread_mutex_unlock(&m->lock);
    return o.data;
}
