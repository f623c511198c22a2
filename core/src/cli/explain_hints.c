/*
 * explain_hints.c: the smallest single changes that would open nodes to a
 * pod that found none, from its cycle's Filter verdicts (the nodes examined,
 * each with the plugin that rejected it) and the snapshot the cycle ran on.
 * Each hint counts the nodes that one change opens for the plugin that
 * rejected them; the filters after that plugin were not run on those nodes,
 * so a hint says what passes that plugin, as the upstream message does.
 *
 * NodeResourcesFit: per resource, for the nodes short of that resource alone,
 *   the reductions of the request that make 1, 2, ... of them fit (the
 *   smallest for each count, at most three lines).
 * TaintToleration: the untolerated NoSchedule/NoExecute taint that is the only
 *   one on the most rejected nodes.
 * NodeAffinity: the nodeSelector entry that is the only mismatch on the most
 *   rejected nodes; the nodes that fail only the required node affinity are
 *   counted (its terms are not solved).
 * NodePorts: the host port that is the only conflict on the most nodes.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli/explain_hints.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIT_LINES = 3 };

typedef struct hint_ctx {
    const ls_cycle *cycle;
    const ls_vec *filters;   /* the profile's Filter plugins (ls_plugin_ref) */
    FILE *out;
    int lines;
} hint_ctx;

/* ---- which nodes a plugin rejected */

static const char *rejecting_plugin(const hint_ctx *h, const ls_node_info *ni)
{
    const ls_node_status *st = &h->cycle->node_status[ni->index];
    if (st->code == LS_SUCCESS || st->plugin < 0 || (uint32_t)st->plugin >= h->filters->len)
        return NULL;
    return ls_str_get(LS_VEC_AT(h->filters, ls_plugin_ref, st->plugin).name);
}

/* Calls fn for each examined node that `plugin` rejected. */
static void each_rejected(hint_ctx *h, const char *plugin, void (*fn)(hint_ctx *, const ls_node_info *, void *),
                          void *ud)
{
    const ls_cycle *c = h->cycle;
    for (uint32_t i = 0; i < c->num_processed; i++) {
        const ls_node_info *ni = c->candidates[(c->start + i) % c->num_candidates];
        const char *by = rejecting_plugin(h, ni);
        if (by && strcmp(by, plugin) == 0)
            fn(h, ni, ud);
    }
}

static const char *nodes(uint32_t n)
{
    return n == 1 ? "node" : "nodes";
}

/* "1 node opens", "2 nodes open". */
static const char *verb(uint32_t n, const char *plural, const char *singular)
{
    return n == 1 ? singular : plural;
}

/* One line of hints: "  N node(s) VERB(s) " and the rest. */
static void hint_line(hint_ctx *h, uint32_t n, const char *plural, const char *singular, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void hint_line(hint_ctx *h, uint32_t n, const char *plural, const char *singular, const char *fmt, ...)
{
    fprintf(h->out, "  %u %s %s ", n, nodes(n), verb(n, plural, singular));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(h->out, fmt, ap);
    va_end(ap);
    fputc('\n', h->out);
    h->lines++;
}

/* ---- NodeResourcesFit */

/* "200m", "2" for cpu; "512Mi", "1Gi" for memory when exact; else the number. */
static void format_quantity(uint32_t r, int64_t v, char *buf, size_t cap)
{
    if (r == 0) {
        if (v % 1000 == 0)
            snprintf(buf, cap, "%lld", (long long)(v / 1000));
        else
            snprintf(buf, cap, "%lldm", (long long)v);
        return;
    }
    static const char *const units[] = {"Ki", "Mi", "Gi", "Ti"};
    int u = -1;
    while ((r == 1 || r == 2) && u < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%lld%s", (long long)v, u >= 0 ? units[u] : "");
}

typedef struct fit_shortfalls {
    uint32_t resource;
    int64_t *values;
    uint32_t n;
} fit_shortfalls;

/* The node fits once the request of `resource` is `short_by` lower, and no
 * other resource (nor the pod count) is short: then *short_by is set. */
static bool short_of_one(const ls_pod *pod, const ls_node_info *ni, uint32_t resource, int64_t *short_by)
{
    if (ni->allocatable.pods && (int64_t)ni->num_pods + 1 > ni->allocatable.pods)
        return false;
    bool found = false;
    for (uint32_t r = 0; r < ls_resource_count(); r++) {
        if (r == 3 || pod->requests.v[r] <= 0)
            continue;
        int64_t missing = pod->requests.v[r] - (ni->allocatable.v[r] - ni->requested.v[r]);
        if (missing <= 0)
            continue;
        if (r != resource || missing > pod->requests.v[r])
            return false;
        *short_by = missing;
        found = true;
    }
    return found;
}

static void collect_shortfall(hint_ctx *h, const ls_node_info *ni, void *ud)
{
    fit_shortfalls *f = ud;
    int64_t by;
    if (short_of_one(h->cycle->pod, ni, f->resource, &by))
        f->values[f->n++] = by;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void fit_hints(hint_ctx *h)
{
    fit_shortfalls f = {.values = ls_xcalloc(h->cycle->num_processed + 1, sizeof(int64_t))};
    for (uint32_t r = 0; r < ls_resource_count(); r++) {
        if (r == 3 || h->cycle->pod->requests.v[r] <= 0)
            continue;
        f.resource = r;
        f.n = 0;
        each_rejected(h, "NodeResourcesFit", collect_shortfall, &f);
        qsort(f.values, f.n, sizeof *f.values, by_value);
        int shown = 0;
        for (uint32_t i = 0; i < f.n && shown < MAX_FIT_LINES; i++) {
            if (i + 1 < f.n && f.values[i + 1] == f.values[i])
                continue;   /* the count of nodes open at this reduction includes the equal ones */
            char q[64];
            format_quantity(r, f.values[i], q, sizeof q);
            hint_line(h, i + 1, "fit", "fits", "with %s less %s", q, ls_resource_name(r));
            shown++;
        }
    }
    free(f.values);
}

/* ---- TaintToleration */

enum { MAX_KEYS = 64 };

typedef struct tally {
    const void *keys[MAX_KEYS];   /* what one change is: a taint, a selector label, a host port */
    uint32_t counts[MAX_KEYS];
    uint32_t n;
} tally;

static void tally_add(tally *t, const void *key, bool (*same)(const void *, const void *))
{
    for (uint32_t i = 0; i < t->n; i++)
        if (same(t->keys[i], key)) {
            t->counts[i]++;
            return;
        }
    if (t->n < MAX_KEYS) {
        t->keys[t->n] = key;
        t->counts[t->n++] = 1;
    }
}

static int tally_best(const tally *t)
{
    int best = -1;
    for (uint32_t i = 0; i < t->n; i++)
        if (best < 0 || t->counts[i] > t->counts[best])
            best = (int)i;
    return best;
}

/* What alone keeps a pod off a node (one taint, one host port), NULL when
 * nothing or more than one thing does. */
typedef const void *(*sole_blocker_fn)(hint_ctx *h, const ls_node_info *ni);

typedef struct blockers {
    tally t;
    sole_blocker_fn sole;
    bool (*same)(const void *, const void *);
} blockers;

static void count_blocker(hint_ctx *h, const ls_node_info *ni, void *ud)
{
    blockers *b = ud;
    const void *key = b->sole(h, ni);
    if (key)
        tally_add(&b->t, key, b->same);
}

/* The hint for the one change (the key) that would open the most of the
 * nodes plugin rejected, if some change would: line(h, key, how many). */
static void best_change_hint(hint_ctx *h, const char *plugin, sole_blocker_fn sole,
                             bool (*same)(const void *, const void *),
                             void (*line)(hint_ctx *h, const void *key, uint32_t n))
{
    blockers b = {.sole = sole, .same = same};
    each_rejected(h, plugin, count_blocker, &b);
    int best = tally_best(&b.t);
    if (best >= 0)
        line(h, b.t.keys[best], b.t.counts[best]);
}

static bool same_taint(const void *a, const void *b)
{
    const ls_taint *x = a, *y = b;
    return x->key == y->key && x->value == y->value && x->effect == y->effect;
}

static const void *sole_taint(hint_ctx *h, const ls_node_info *ni)
{
    const ls_pod *pod = h->cycle->pod;
    const ls_node *node = ni->node;
    const uint32_t mask = (1u << LS_EFFECT_NO_SCHEDULE) | (1u << LS_EFFECT_NO_EXECUTE);
    const ls_taint *only = NULL;
    for (uint32_t i = 0; i < node->n_taints; i++) {
        const ls_taint *t = &node->taints[i];
        if (!((1u << t->effect) & mask) || ls_tolerations_tolerate(pod->tolerations, pod->n_tolerations, t))
            continue;
        if (only)
            return NULL;   /* two untolerated taints: one toleration does not open it */
        only = t;
    }
    return only;
}

static void taint_line(hint_ctx *h, const void *key, uint32_t n)
{
    const ls_taint *taint = key;
    const char *effect = taint->effect == LS_EFFECT_NO_EXECUTE ? "NoExecute" : "NoSchedule";
    const char *value = ls_str_get(taint->value);
    hint_line(h, n, "open", "opens", "if it tolerates %s%s%s:%s", ls_str_get(taint->key), *value ? "=" : "", value,
              effect);
}

/* ---- NodeAffinity */

static bool same_label(const void *a, const void *b)
{
    return a == b;
}

typedef struct affinity_tally {
    tally selector;
    uint32_t affinity_only;   /* nodes that match the nodeSelector but not the required affinity */
} affinity_tally;

static void collect_selector(hint_ctx *h, const ls_node_info *ni, void *ud)
{
    affinity_tally *a = ud;
    const ls_pod *pod = h->cycle->pod;
    const ls_label *miss = NULL;
    for (uint32_t i = 0; i < pod->node_selector.n; i++) {
        const ls_label *l = &pod->node_selector.items[i];
        if (ls_labels_get(&ni->node->labels, l->key) == l->value)
            continue;
        if (miss)
            return;
        miss = l;
    }
    bool affinity_ok = !pod->has_required_node_affinity ||
                       ls_node_selector_matches(&pod->required_node_affinity, ni->node);
    if (!miss && !affinity_ok)
        a->affinity_only++;
    else if (miss && affinity_ok)
        tally_add(&a->selector, miss, same_label);
}

static void affinity_hints(hint_ctx *h)
{
    affinity_tally a = {0};
    each_rejected(h, "NodeAffinity", collect_selector, &a);
    int best = tally_best(&a.selector);
    if (best >= 0) {
        const ls_label *l = a.selector.keys[best];
        uint32_t n = a.selector.counts[best];
        hint_line(h, n, "open", "opens", "without its nodeSelector %s=%s", ls_str_get(l->key), ls_str_get(l->value));
    }
    if (a.affinity_only) {
        hint_line(h, a.affinity_only, "fail", "fails", "only its required node affinity (no single term to drop)");
    }
}

/* ---- NodePorts */

static bool ports_conflict(const ls_host_port *a, const ls_host_port *b)
{
    if (a->port != b->port || a->protocol != b->protocol)
        return false;
    const char *x = ls_str_get(a->host_ip), *y = ls_str_get(b->host_ip);
    return strcmp(x, "0.0.0.0") == 0 || strcmp(y, "0.0.0.0") == 0 || strcmp(x, y) == 0;
}

static const void *sole_port(hint_ctx *h, const ls_node_info *ni)
{
    const ls_pod *pod = h->cycle->pod;
    const ls_host_port *only = NULL;
    for (uint32_t i = 0; i < pod->n_host_ports; i++) {
        bool taken = false;
        for (uint32_t k = 0; k < ni->n_used_ports && !taken; k++)
            taken = ports_conflict(&pod->host_ports[i], &ni->used_ports[k]);
        if (!taken)
            continue;
        if (only)
            return NULL;
        only = &pod->host_ports[i];
    }
    return only;
}

static void port_line(hint_ctx *h, const void *key, uint32_t n)
{
    static const char *const protocols[] = {"TCP", "UDP", "SCTP"};
    const ls_host_port *p = key;
    hint_line(h, n, "open", "opens", "without its hostPort %d/%s", p->port,
              protocols[p->protocol < 3 ? p->protocol : 0]);
}

char *ls_explain_hints(const ls_cycle *cycle, const ls_scheduler *s)
{
    if (!cycle->num_processed || !cycle->num_candidates)
        return NULL;
    const ls_profile *prof = ls_scheduler_profile(s, cycle->profile);
    char *text = NULL;
    size_t len = 0;
    hint_ctx h = {.cycle = cycle, .filters = &prof->plugins[LS_EP_FILTER], .out = open_memstream(&text, &len)};
    if (!h.out)
        return NULL;
    fit_hints(&h);
    best_change_hint(&h, "TaintToleration", sole_taint, same_taint, taint_line);
    affinity_hints(&h);
    best_change_hint(&h, "NodePorts", sole_port, same_label, port_line);
    fclose(h.out);
    if (!h.lines) {
        free(text);
        return NULL;
    }
    return text;
}
