/*
 * compare_measures.c: the measures `luasched compare` takes of one run
 * (compare.c): distributions (mean, spread, nearest-rank percentiles),
 * histograms of node allocation, and the cluster at the end: pending pods
 * that would fit somewhere (fragmentation), stranded cpu, and pods per zone.
 */
#include "cli/compare.h"
#include "luasched/cache.h"
#include "luasched/scheduler.h"
#include "sim/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *v, uint32_t n, double p)
{
    if (n == 0)
        return 0;
    uint32_t rank = (uint32_t)ceil(p / 100.0 * n);
    return v[rank ? rank - 1 : 0];
}

cmp_dist cmp_summarize(double *v, uint32_t n)
{
    cmp_dist d = {.n = n};
    if (n == 0)
        return d;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0, sq = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += v[i];
    d.mean = sum / n;
    for (uint32_t i = 0; i < n; i++)
        sq += (v[i] - d.mean) * (v[i] - d.mean);
    d.stddev = sqrt(sq / n);
    d.min = v[0];
    d.max = v[n - 1];
    d.p50 = percentile(v, n, 50);
    d.p90 = percentile(v, n, 90);
    d.p99 = percentile(v, n, 99);
    return d;
}

void cmp_histogram(const double *v, uint32_t n, uint32_t *bins)
{
    for (uint32_t i = 0; i < n; i++) {
        int b = (int)(v[i] * CMP_BINS);
        bins[b < 0 ? 0 : b >= CMP_BINS ? CMP_BINS - 1 : b]++;
    }
}

/* Pending pods whose cpu and memory fit the free capacity of some node. */
void cmp_fragmentation(const ls_cluster *c, const ls_scheduler *s, cmp_run *r)
{
    const ls_cache *cache = ls_scheduler_cache(s);
    int64_t smallest_cpu = INT64_MAX;
    for (uint32_t i = 0; i < ls_cluster_num_pods(c); i++) {
        const ls_sim_pod *sp = ls_cluster_pod(c, i);
        if (sp->outcome != LS_POD_UNSCHEDULABLE)
            continue;
        const ls_resources *want = &sp->obj->pod.requests;
        if (want->milli_cpu < smallest_cpu)
            smallest_cpu = want->milli_cpu;
        bool fits = false;
        for (uint32_t k = 0; k < ls_cluster_node_slots(c) && !fits; k++) {
            const ls_node *node = ls_cluster_node(c, k);
            const ls_node_info *ni = node ? ls_cache_node_info(cache, node->name) : NULL;
            fits = ni && ni->allocatable.milli_cpu - ni->requested.milli_cpu >= want->milli_cpu &&
                   ni->allocatable.memory - ni->requested.memory >= want->memory;
        }
        if (fits)
            r->pending_fit_somewhere++;
        else
            r->pending_fit_nowhere++;
    }
    int64_t free_cpu = 0, stranded = 0;
    for (uint32_t k = 0; k < ls_cluster_node_slots(c); k++) {
        const ls_node *node = ls_cluster_node(c, k);
        const ls_node_info *ni = node ? ls_cache_node_info(cache, node->name) : NULL;
        if (!ni)
            continue;
        int64_t f = ni->allocatable.milli_cpu - ni->requested.milli_cpu;
        if (f <= 0)
            continue;
        free_cpu += f;
        if (smallest_cpu != INT64_MAX && f < smallest_cpu)
            stranded += f;
    }
    r->stranded_cpu = free_cpu > 0 ? (double)stranded / (double)free_cpu : 0;
}

void cmp_zone_balance(const ls_cluster *c, const ls_scheduler *s, cmp_run *r)
{
    const ls_cache *cache = ls_scheduler_cache(s);
    ls_str zone_key = ls_intern_cstr("topology.kubernetes.io/zone");
    for (uint32_t k = 0; k < ls_cluster_node_slots(c); k++) {
        const ls_node *node = ls_cluster_node(c, k);
        const ls_node_info *ni = node ? ls_cache_node_info(cache, node->name) : NULL;
        if (!ni)
            continue;
        ls_str z = ls_labels_get(&node->labels, zone_key);
        const char *name = z ? ls_str_get(z) : "(none)";
        uint32_t i = 0;
        while (i < r->n_zones && strcmp(r->zones[i].name, name) != 0)
            i++;
        if (i == r->n_zones) {
            r->zones = ls_xrealloc(r->zones, (r->n_zones + 1) * sizeof *r->zones);
            r->zones[r->n_zones++] = (cmp_zone){.name = ls_xstrdup(name)};
        }
        r->zones[i].pods += ni->num_pods;
    }
    double sum = 0, sq = 0;
    for (uint32_t i = 0; i < r->n_zones; i++)
        sum += r->zones[i].pods;
    double mean = r->n_zones ? sum / r->n_zones : 0;
    for (uint32_t i = 0; i < r->n_zones; i++)
        sq += (r->zones[i].pods - mean) * (r->zones[i].pods - mean);
    r->zone_imbalance = mean > 0 ? sqrt(sq / r->n_zones) / mean : 0;
}
