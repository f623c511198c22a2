/*
 * metrics.h: a small Prometheus registry. Families are declared once with
 * their help text, type and (for histograms) buckets; series are found by
 * their label values and created on first use. Recording and rendering may
 * happen on different threads (the scheduling thread records, the /metrics
 * handler renders), so every operation takes the registry's lock.
 */
#ifndef LS_SERVER_METRICS_H
#define LS_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef enum ls_metric_type { LS_METRIC_COUNTER, LS_METRIC_GAUGE, LS_METRIC_HISTOGRAM } ls_metric_type;

typedef struct ls_metrics ls_metrics;
typedef struct ls_metric_family ls_metric_family;

ls_metrics *ls_metrics_new(void);
void ls_metrics_free(ls_metrics *m);

/* label_names: NULL-terminated, at most 4. buckets: upper bounds, ascending
 * (histograms only; +Inf is implied). */
ls_metric_family *ls_metrics_family(ls_metrics *m, const char *name, const char *help, ls_metric_type type,
                                    const char *const *label_names, const double *buckets, size_t n_buckets);
ls_metric_family *ls_metrics_find(ls_metrics *m, const char *name);

/* Label values in the order of the family's label names (as many as it has). */
void ls_metrics_add(ls_metric_family *f, const char *const *label_values, double delta);
void ls_metrics_set(ls_metric_family *f, const char *const *label_values, double value);
/* The series of these label values, created at zero if it does not exist
 * (a metric shown from the first scrape). A family without labels has its
 * one series from registration. */
void ls_metrics_touch(ls_metric_family *f, const char *const *label_values);
/* The family's HELP and TYPE are shown even while it has no series (a
 * counter or gauge only: a labeled counter declared from the first scrape,
 * its samples from its first event). */
void ls_metrics_declare(ls_metric_family *f);
/* Drops every series of the family (labels that no longer exist, after a reload). */
void ls_metrics_clear(ls_metric_family *f);
void ls_metrics_observe(ls_metric_family *f, const char *const *label_values, double value);
/* Many observations at once, already counted per bucket of the family (one
 * count per bucket plus +Inf, not cumulative). */
void ls_metrics_observe_bucketed(ls_metric_family *f, const char *const *label_values, const uint64_t *bucket_counts,
                                 uint64_t count, double sum);

/* Exponential buckets as Prometheus' client libraries make them. */
void ls_metrics_exp_buckets(double start, double factor, size_t count, double *out);

/* The text exposition format (version 0.0.4); the caller frees it. */
char *ls_metrics_render(ls_metrics *m);

#endif
