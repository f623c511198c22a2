/*
 * fuzz_model.h: invariant checks over decoded objects (model.h), shared by the
 * pod, node and selector targets. They read every element of every array the
 * decoder produced, so with exact_arena.c an array shorter than its count is
 * an AddressSanitizer report, and they check the orderings that matching's
 * binary searches rely on.
 */
#ifndef LS_FUZZ_MODEL_H
#define LS_FUZZ_MODEL_H

#include "fuzz_common.h"

#include "luasched/model.h"

static inline void fuzz_check_str(ls_str s)
{
    FUZZ_CHECK(s <= ls_intern_count(), "string id %u past the table (%u)", s, ls_intern_count());
    FUZZ_CHECK(strlen(ls_str_get(s)) <= ls_str_len(s), "string %u longer than its length", s);
}

/* Sorted by key id, no key twice (ls_labels_sort keeps the last). */
static inline void fuzz_check_labels(const ls_labels *l)
{
    for (uint32_t i = 0; i < l->n; i++) {
        fuzz_check_str(l->items[i].key);
        fuzz_check_str(l->items[i].value);
        FUZZ_CHECK(i == 0 || l->items[i - 1].key < l->items[i].key, "labels out of order at %u", i);
        FUZZ_CHECK(ls_labels_get(l, l->items[i].key) == l->items[i].value, "label %u not found", i);
    }
}

/* Requirements sorted by key (stable), values sorted and unique. */
static inline void fuzz_check_selector(const ls_selector *s)
{
    if (s->match_nothing)
        FUZZ_CHECK(s->n == 0, "a null selector with %u requirements", s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        const ls_requirement *r = &s->reqs[i];
        fuzz_check_str(r->key);
        FUZZ_CHECK(r->op <= LS_OP_LT, "operator %u", r->op);
        FUZZ_CHECK(i == 0 || s->reqs[i - 1].key <= r->key, "requirements out of order at %u", i);
        for (uint32_t k = 0; k < r->n_values; k++) {
            fuzz_check_str(r->values[k]);
            FUZZ_CHECK(k == 0 || r->values[k - 1] < r->values[k], "values out of order at %u", k);
        }
        if (r->op == LS_OP_IN || r->op == LS_OP_NOT_IN)
            FUZZ_CHECK(r->n_values > 0, "%s without values", r->op ? "NotIn" : "In");
        if (r->op == LS_OP_EXISTS || r->op == LS_OP_DOES_NOT_EXIST)
            FUZZ_CHECK(r->n_values == 0, "Exists/DoesNotExist with values");
        if (r->op == LS_OP_GT || r->op == LS_OP_LT)
            FUZZ_CHECK(r->n_values == 1, "Gt/Lt with %u values", r->n_values);
    }
}

static inline void fuzz_check_node_term(const ls_node_selector_term *t)
{
    fuzz_check_selector(&t->exprs);
    fuzz_check_selector(&t->fields);
    for (uint32_t i = 0; i < t->fields.n; i++)
        FUZZ_CHECK(strcmp(ls_str_get(t->fields.reqs[i].key), "metadata.name") == 0, "field %s",
                   ls_str_get(t->fields.reqs[i].key));
}

static inline void fuzz_check_resources(const ls_resources *r, bool requests)
{
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++) {
        FUZZ_CHECK(r->v[i] >= 0, "resource %u is %lld", i, (long long)r->v[i]);
        if (r->v[i])
            FUZZ_CHECK(ls_resource_name(i) != NULL, "resource %u set but not registered", i);
    }
    if (requests)
        FUZZ_CHECK(r->v[LS_RES_PODS] == 0, "a pod requests pod slots");
}

static inline void fuzz_check_affinity_term(const ls_pod_affinity_term *t)
{
    fuzz_check_selector(&t->selector);
    if (t->has_ns_selector)
        fuzz_check_selector(&t->ns_selector);
    for (uint32_t i = 0; i < t->n_namespaces; i++)
        fuzz_check_str(t->namespaces[i]);
    FUZZ_CHECK(t->topology_key != 0, "affinity term without topologyKey");
}

static inline void fuzz_check_pod(const ls_pod *p)
{
    FUZZ_CHECK(p->name && p->ns && p->uid && p->scheduler_name, "pod without name/ns/uid/scheduler");
    fuzz_check_labels(&p->labels);
    fuzz_check_labels(&p->node_selector);
    fuzz_check_resources(&p->requests, true);
    FUZZ_CHECK(p->nonzero_milli_cpu >= 0 && p->nonzero_memory >= 0, "negative non-zero requests");
    FUZZ_CHECK(p->phase <= LS_PHASE_UNKNOWN && p->preemption_policy <= LS_PREEMPT_NEVER, "enum");
    bool nothing = true;
    for (uint32_t i = 0; i < LS_MAX_RESOURCES; i++)
        nothing = nothing && p->requests.v[i] == 0;
    FUZZ_CHECK(nothing == (p->requests_nothing != 0), "requests_nothing is wrong");
    for (uint32_t i = 0; i < p->n_host_ports; i++) {
        FUZZ_CHECK(p->host_ports[i].port > 0 && p->host_ports[i].protocol <= LS_PROTO_SCTP, "port");
        fuzz_check_str(p->host_ports[i].host_ip);
    }
    for (uint32_t i = 0; i < p->n_images; i++) {
        fuzz_check_str(p->images[i]);
        FUZZ_CHECK(p->images[i] != 0, "image %u missing", i);
    }
    if (p->has_required_node_affinity)
        FUZZ_CHECK(p->required_node_affinity.n_terms > 0, "required affinity without terms");
    for (uint32_t i = 0; i < p->required_node_affinity.n_terms; i++)
        fuzz_check_node_term(&p->required_node_affinity.terms[i]);
    for (uint32_t i = 0; i < p->n_preferred_node_affinity; i++) {
        FUZZ_CHECK(p->preferred_node_affinity[i].weight >= 1 && p->preferred_node_affinity[i].weight <= 100,
                   "node affinity weight %d", p->preferred_node_affinity[i].weight);
        fuzz_check_node_term(&p->preferred_node_affinity[i].term);
    }
    for (uint32_t i = 0; i < p->n_affinity; i++)
        fuzz_check_affinity_term(&p->affinity[i]);
    for (uint32_t i = 0; i < p->n_anti_affinity; i++)
        fuzz_check_affinity_term(&p->anti_affinity[i]);
    for (uint32_t i = 0; i < p->n_preferred_affinity; i++)
        fuzz_check_affinity_term(&p->preferred_affinity[i].term);
    for (uint32_t i = 0; i < p->n_preferred_anti_affinity; i++)
        fuzz_check_affinity_term(&p->preferred_anti_affinity[i].term);
    FUZZ_CHECK(p->has_affinity == (p->n_affinity || p->n_anti_affinity || p->n_preferred_affinity ||
                                   p->n_preferred_anti_affinity),
               "has_affinity is wrong");
    FUZZ_CHECK(p->has_required_anti_affinity == (p->n_anti_affinity > 0), "has_required_anti_affinity");
    for (uint32_t i = 0; i < p->n_tolerations; i++) {
        const ls_toleration *t = &p->tolerations[i];
        fuzz_check_str(t->key);
        fuzz_check_str(t->value);
        FUZZ_CHECK(t->op <= LS_TOL_EXISTS && t->effect <= LS_EFFECT_NO_EXECUTE, "toleration enum");
    }
    for (uint32_t i = 0; i < p->n_spread_constraints; i++) {
        const ls_spread_constraint *c = &p->spread_constraints[i];
        FUZZ_CHECK(c->max_skew > 0 && c->min_domains > 0 && c->topology_key, "spread constraint %u", i);
        fuzz_check_selector(&c->selector);
    }
    for (uint32_t i = 0; i < p->n_scheduling_gates; i++)
        FUZZ_CHECK(p->scheduling_gates[i] != 0, "empty gate");
    for (uint32_t i = 0; i < p->n_owner_refs; i++) {
        fuzz_check_str(p->owner_refs[i].kind);
        fuzz_check_str(p->owner_refs[i].name);
        fuzz_check_str(p->owner_refs[i].uid);
    }
}

static inline void fuzz_check_node(const ls_node *n)
{
    FUZZ_CHECK(n->name != 0, "node without a name");
    fuzz_check_labels(&n->labels);
    fuzz_check_resources(&n->capacity, false);
    fuzz_check_resources(&n->allocatable, false);
    for (uint32_t i = 0; i < n->n_taints; i++) {
        FUZZ_CHECK(n->taints[i].key != 0, "taint without a key");
        FUZZ_CHECK(n->taints[i].effect >= LS_EFFECT_NO_SCHEDULE && n->taints[i].effect <= LS_EFFECT_NO_EXECUTE,
                   "taint effect %u", n->taints[i].effect);
        fuzz_check_str(n->taints[i].value);
    }
    for (uint32_t i = 0; i < n->n_images; i++)
        for (uint32_t k = 0; k < n->images[i].n_names; k++)
            fuzz_check_str(n->images[i].names[k]);
    for (uint32_t i = 0; i < n->n_conditions; i++) {
        fuzz_check_str(n->conditions[i].type);
        fuzz_check_str(n->conditions[i].status);
    }
}

#endif
