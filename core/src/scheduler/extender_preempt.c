/*
 * extender_preempt.c: preemption's extender step (upstream's
 * Evaluator.callExtenders, pkg/scheduler/framework/preemption, v1.37: every
 * candidate must keep at least one victim). DefaultPreemption hands its
 * candidates over (node, victims, PDB violations); each extender with a
 * preemptVerb that is interested in the pod gets them as
 * ExtenderPreemptionArgs (whole victim pods, or their UIDs when
 * nodeCacheCapable) and answers NodeNameToMetaVictims, which replaces the
 * candidates for the next extender. Victims named by UID are looked up
 * among the pods of that node.
 *
 * Deviation: the new candidates come in the order of the extender's answer
 * (upstream iterates a Go map, in random order).
 */
#include "scheduler/extender_internal.h"

#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t ls_extenders_preempters(const ls_extenders *x, const ls_pod *pod)
{
    uint32_t n = 0;
    for (uint32_t i = 0; x && i < x->n; i++) {
        const char *verb = x->items[i].cfg->preempt_verb;
        if (verb && verb[0] && ls_extender_interested(&x->items[i], pod))
            n++;
    }
    return n;
}

void ls_extenders_candidates_reset(ls_extenders *x)
{
    x->candidates.len = 0;
    x->victims.len = 0;
}

void ls_extenders_candidate_add(ls_extenders *x, ls_str node, int64_t pdb_violations)
{
    extender_candidate *c = ls_vec_push(&x->candidates);
    *c = (extender_candidate){.node = node, .pdb_violations = pdb_violations, .first = x->victims.len};
}

void ls_extenders_victim_add(ls_extenders *x, const ls_pod *victim)
{
    if (!x->candidates.len)
        return;
    *(const ls_pod **)ls_vec_push(&x->victims) = victim;
    LS_VEC_AT(&x->candidates, extender_candidate, x->candidates.len - 1).n_victims++;
}

ls_str ls_extenders_candidate(const ls_extenders *x, uint32_t i, int64_t *pdb_violations, uint32_t *n_victims)
{
    if (i >= x->candidates.len)
        return 0;
    const extender_candidate *c = &LS_VEC_AT(&x->candidates, extender_candidate, i);
    *pdb_violations = c->pdb_violations;
    *n_victims = c->n_victims;
    return c->node;
}

const ls_pod *ls_extenders_victim(const ls_extenders *x, uint32_t i, uint32_t k)
{
    if (i >= x->candidates.len)
        return NULL;
    const extender_candidate *c = &LS_VEC_AT(&x->candidates, extender_candidate, i);
    return k < c->n_victims ? LS_VEC_AT(&x->victims, const ls_pod *, c->first + k) : NULL;
}

/* ---- the request */

static char *preemption_args(const ls_extenders *x, const ls_extender *e, const ls_pod *pod)
{
    bool meta = e->cfg->node_cache_capable;
    ls_buf b = {0};
    ls_buf_adds(&b, "{\"Pod\":");
    ls_extender_add_pod(&b, pod);
    ls_buf_adds(&b, meta ? ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{" : ",\"NodeNameToVictims\":{");
    for (uint32_t i = 0; i < x->candidates.len; i++) {
        const extender_candidate *c = &LS_VEC_AT(&x->candidates, extender_candidate, i);
        if (i)
            ls_buf_adds(&b, ",");
        ls_extender_add_string(&b, ls_str_get(c->node));
        ls_buf_adds(&b, ":{\"Pods\":[");
        for (uint32_t k = 0; k < c->n_victims; k++) {
            const ls_pod *v = LS_VEC_AT(&x->victims, const ls_pod *, c->first + k);
            if (k)
                ls_buf_adds(&b, ",");
            if (meta) {
                ls_buf_adds(&b, "{\"UID\":");
                ls_extender_add_string(&b, ls_str_get(v->uid));
                ls_buf_adds(&b, "}");
            } else {
                ls_extender_add_pod(&b, v);
            }
        }
        ls_buf_addf(&b, "],\"NumPDBViolations\":%lld}", (long long)c->pdb_violations);
    }
    ls_buf_adds(&b, meta ? "}}" : "},\"NodeNameToMetaVictims\":null}");
    return b.data;
}

/* ---- the answer */

static const ls_pod *pod_on_node(const ls_node_info *ni, const char *uid)
{
    ls_str id = ls_intern_cstr(uid);
    for (uint32_t k = 0; k < ni->num_pods; k++)
        if (ni->pods[k]->uid == id)
            return ni->pods[k];
    return NULL;
}

/* convertToVictims: the answer's NodeNameToMetaVictims into candidates
 * (appended after `base`); NULL, or the error. */
static char *convert(ls_extenders *x, const ls_extender *e, const ls_cycle *cycle, const cJSON *map)
{
    for (const cJSON *entry = cJSON_IsObject(map) ? map->child : NULL; entry; entry = entry->next) {
        const ls_node_info *ni = ls_snapshot_find(cycle->snapshot, ls_intern_cstr(entry->string));
        if (!ni)
            return ls_extender_format("nodeinfo not found for node name \"%s\"", entry->string);
        const cJSON *violations = cJSON_GetObjectItem(entry, "NumPDBViolations");
        int64_t n_violations = cJSON_IsNumber(violations) ? (int64_t)violations->valuedouble : 0;
        ls_extenders_candidate_add(x, ni->node->name, n_violations);
        const cJSON *pods = cJSON_GetObjectItem(entry, "Pods");
        for (const cJSON *p = cJSON_IsArray(pods) ? pods->child : NULL; p; p = p->next) {
            const cJSON *uid = cJSON_GetObjectItem(p, "UID");
            const char *text = cJSON_IsString(uid) ? uid->valuestring : "";
            const ls_pod *victim = pod_on_node(ni, text);
            if (!victim) {
                return ls_extender_format("extender: %s claims to preempt pod (UID: &{%s}) on node: %s, but the pod "
                                          "is not found on that node",
                                          e->cfg->url_prefix, text, entry->string);
            }
            ls_extenders_victim_add(x, victim);
        }
    }
    return NULL;
}

/* Every candidate needs a victim: an ignorable extender's empty ones are
 * dropped, any other's is an error. */
static char *check_victims(ls_extenders *x, const ls_extender *e, uint32_t base)
{
    uint32_t out = base;
    for (uint32_t i = base; i < x->candidates.len; i++) {
        extender_candidate c = LS_VEC_AT(&x->candidates, extender_candidate, i);
        if (c.n_victims == 0) {
            if (!e->cfg->ignorable)
                return ls_extender_format("expected at least one victim pod on node \"%s\"", ls_str_get(c.node));
            ls_log_info(2, "Ignored node for which the extender didn't report victims", "node", ls_str_get(c.node),
                        "extender", e->cfg->url_prefix);
            continue;
        }
        LS_VEC_AT(&x->candidates, extender_candidate, out++) = c;
    }
    x->candidates.len = out;
    return NULL;
}

/* One extender's ProcessPreemption: the candidates replaced by its answer,
 * or an error with the candidates unchanged. */
static char *process_one(ls_extenders *x, const ls_extender *e, const ls_cycle *cycle)
{
    char *body = preemption_args(x, e, cycle->pod);
    char *msg = NULL;
    cJSON *result = ls_extender_send(e, e->cfg->preempt_verb, body, &msg);
    free(body);
    if (!result)
        return msg;
    uint32_t base = x->candidates.len, vbase = x->victims.len;
    msg = convert(x, e, cycle, cJSON_GetObjectItem(result, "NodeNameToMetaVictims"));
    cJSON_Delete(result);
    if (!msg && !(msg = check_victims(x, e, base))) {
        /* the new candidates and their victims move to the front */
        uint32_t n = x->candidates.len - base;
        for (uint32_t i = 0; i < n; i++) {
            extender_candidate c = LS_VEC_AT(&x->candidates, extender_candidate, base + i);
            c.first -= vbase;
            LS_VEC_AT(&x->candidates, extender_candidate, i) = c;
        }
        memmove(x->victims.data, (char *)x->victims.data + vbase * sizeof(const ls_pod *),
                (x->victims.len - vbase) * sizeof(const ls_pod *));
        x->victims.len -= vbase;
        x->candidates.len = n;
        return NULL;
    }
    x->candidates.len = base;
    x->victims.len = vbase;
    return msg;
}

int ls_extenders_process_preemption(ls_extenders *x, const ls_cycle *cycle, char **msg)
{
    *msg = NULL;
    if (!x || !x->candidates.len)
        return x ? (int)x->candidates.len : 0;
    for (uint32_t i = 0; i < x->n; i++) {
        const ls_extender *e = &x->items[i];
        if (!e->cfg->preempt_verb || !e->cfg->preempt_verb[0] || !ls_extender_interested(e, cycle->pod))
            continue;
        char *err = process_one(x, e, cycle);
        if (ls_extender_skip_ignorable(e, &err, 2, "Skipped extender as it returned error and has ignorable flag set"))
            continue;
        if (err) {
            *msg = err;
            return -1;
        }
        if (!x->candidates.len)
            break;
    }
    return (int)x->candidates.len;
}
