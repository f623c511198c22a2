/*
 * fit_in_c.c: NodeResourcesFit's Filter and LeastAllocated Score in C (see
 * fit_in_c.h), for bench/lua_vs_c.c only.
 */
#include "fit_in_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Status ids by failure key (bits * 2 + unresolvable), registered on first sight. */
typedef struct status_cache {
    uint64_t *keys;
    uint32_t *ids;
    uint32_t len, cap;
} status_cache;

static status_cache cache;

void fit_reset(void)
{
    free(cache.keys);
    free(cache.ids);
    memset(&cache, 0, sizeof cache);
}

void fit_pre_filter(const ls_pod *pod, fit_pod_state *st)
{
    memset(st, 0, sizeof *st);
    st->nothing = pod->requests_nothing != 0;
    st->cpu = pod->requests.milli_cpu;
    st->memory = pod->requests.memory;
    st->ephemeral = pod->requests.ephemeral_storage;
    for (uint32_t slot = LS_RES_FIRST_SCALAR; slot < ls_resource_count(); slot++) {
        if (pod->requests.v[slot] != 0) {
            st->slots[st->n_scalars] = slot;
            st->reqs[st->n_scalars++] = pod->requests.v[slot];
        }
    }
    st->score_cpu = pod->nonzero_milli_cpu;
    st->score_memory = pod->nonzero_memory;
}

/* One resource: the request against what the node has left. */
static uint32_t check(int64_t req, int64_t alloc, int64_t used, uint32_t bit, bool *unresolvable)
{
    if (req <= 0 || req <= alloc - used)
        return 0;
    if (req > alloc)
        *unresolvable = true;
    return bit;
}

uint32_t fit_filter(const fit_pod_state *st, const ls_node_info *ni, bool *unresolvable)
{
    const ls_resources *alloc = &ni->allocatable, *used = &ni->requested;
    uint32_t mask = (int64_t)ni->num_pods + 1 > alloc->pods ? FIT_PODS : 0;
    *unresolvable = false;
    if (st->nothing)
        return mask;
    mask |= check(st->cpu, alloc->milli_cpu, used->milli_cpu, FIT_CPU, unresolvable);
    mask |= check(st->memory, alloc->memory, used->memory, FIT_MEMORY, unresolvable);
    mask |= check(st->ephemeral, alloc->ephemeral_storage, used->ephemeral_storage, FIT_EPHEMERAL, unresolvable);
    for (uint32_t k = 0; k < st->n_scalars; k++) {
        uint32_t s = st->slots[k];
        mask |= check(st->reqs[k], alloc->v[s], used->v[s], 1u << s, unresolvable);
    }
    return mask;
}

/* The status of a failure, as the Lua plugin words it. */
static uint32_t register_status(uint32_t mask, bool unresolvable)
{
    char reasons[1024];
    size_t n = 0;
    static const char *const fixed[] = {"Too many pods", "Insufficient cpu", "Insufficient memory",
                                        "Insufficient ephemeral-storage"};
    for (uint32_t b = 0; b < 32; b++) {
        if (!(mask & (1u << b)))
            continue;
        const char *what = b < 4 ? fixed[b] : NULL;
        char scalar[300];
        if (!what) {
            snprintf(scalar, sizeof scalar, "Insufficient %s", ls_resource_name(b));
            what = scalar;
        }
        n += (size_t)snprintf(reasons + n, sizeof reasons - n, "%s%s", n ? "\n" : "", what);
        if (n >= sizeof reasons)
            n = sizeof reasons - 1;
    }
    return ls_status_register(unresolvable ? LS_UNRESOLVABLE : LS_UNSCHEDULABLE, reasons, n);
}

static uint32_t status_of(uint32_t mask, bool unresolvable)
{
    uint64_t key = (uint64_t)mask * 2 + unresolvable;
    for (uint32_t i = 0; i < cache.len; i++)
        if (cache.keys[i] == key)
            return cache.ids[i];
    if (cache.len == cache.cap) {
        cache.cap = cache.cap ? cache.cap * 2 : 8;
        cache.keys = realloc(cache.keys, cache.cap * sizeof *cache.keys);
        cache.ids = realloc(cache.ids, cache.cap * sizeof *cache.ids);
        if (!cache.keys || !cache.ids)
            abort();
    }
    cache.keys[cache.len] = key;
    return cache.ids[cache.len++] = register_status(mask, unresolvable);
}

/* upstream leastResourceScorer for one resource: the share left free, 0..100. */
static int64_t least_allocated(int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return 0;
    return (capacity - requested) * LS_MAX_NODE_SCORE / capacity;
}

int64_t fit_score(const fit_pod_state *st, const ls_node_info *ni)
{
    int64_t score = 0, weights = 0;
    if (ni->allocatable.milli_cpu != 0) {
        score += least_allocated(ni->nonzero_milli_cpu + st->score_cpu, ni->allocatable.milli_cpu);
        weights++;
    }
    if (ni->allocatable.memory != 0) {
        score += least_allocated(ni->nonzero_memory + st->score_memory, ni->allocatable.memory);
        weights++;
    }
    return weights ? score / weights : 0;
}

static void filter_loop(ls_cycle *c, const fit_pod_state *st)
{
    uint32_t nf = 0, processed = 0;
    for (uint32_t i = 0; i < c->num_candidates; i++) {
        const ls_node_info *ni = c->candidates[(c->start + i) % c->num_candidates];
        ls_node_status *out = &c->node_status[ni->index];
        processed++;
        bool unresolvable;
        uint32_t mask = fit_filter(st, ni, &unresolvable);
        if (mask) {
            out->status = status_of(mask, unresolvable);
            out->code = unresolvable ? LS_UNRESOLVABLE : LS_UNSCHEDULABLE;
            out->plugin = 0;
            continue;
        }
        out->code = LS_SUCCESS;
        c->feasible[nf++] = ni;
        if (nf >= c->num_to_find)
            break;
    }
    c->num_feasible = nf;
    c->num_processed = processed;
}

void fit_run_filter(ls_cycle *c, fit_pod_state *st)
{
    fit_pre_filter(c->pod, st);
    filter_loop(c, st);
}

void fit_run_score(ls_cycle *c, const fit_pod_state *st)
{
    if (c->num_feasible < 2)
        return;   /* a single feasible node is not scored (as the scheduler) */
    c->score_skipped[0] = 0;
    for (uint32_t i = 0; i < c->num_feasible; i++)
        c->scores[i] = fit_score(st, c->feasible[i]);
}
