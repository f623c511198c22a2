/*
 * attempt_record.c: the JSON record of each pod's scheduling attempts
 * (`simulate --output json`, `explain`). Every attempt keeps its own Filter
 * verdicts, scores and Permit outcome; the pod's top-level fields are those
 * of its last attempt, the one that decided. An attempt that waited at Permit
 * is reported twice by the scheduler: at the wait (its Filter and Score are
 * taken then) and when it is allowed, rejected or timed out.
 */
#include "cli/attempt_record.h"
#include "framework/waiting_pods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ls_attempt_record {
    cJSON **pods;      /* per pod id: the record so far */
    cJSON **waiting;   /* per pod id: the details of an attempt waiting at Permit */
    uint32_t cap;      /* a timeline adds pods during the run */
};

ls_attempt_record *ls_attempt_record_new(uint32_t num_pods)
{
    ls_attempt_record *r = ls_xcalloc(1, sizeof *r);
    r->cap = num_pods + 1;
    r->pods = ls_xcalloc(r->cap, sizeof *r->pods);
    r->waiting = ls_xcalloc(r->cap, sizeof *r->waiting);
    return r;
}

void ls_attempt_record_free(ls_attempt_record *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->cap; i++) {
        cJSON_Delete(r->pods[i]);
        cJSON_Delete(r->waiting[i]);
    }
    free(r->pods);
    free(r->waiting);
    free(r);
}

static void grow(ls_attempt_record *r, uint32_t id)
{
    if (id < r->cap)
        return;
    uint32_t cap = (id + 1) * 2;
    r->pods = ls_xrealloc(r->pods, cap * sizeof *r->pods);
    r->waiting = ls_xrealloc(r->waiting, cap * sizeof *r->waiting);
    memset(r->pods + r->cap, 0, (cap - r->cap) * sizeof *r->pods);
    memset(r->waiting + r->cap, 0, (cap - r->cap) * sizeof *r->waiting);
    r->cap = cap;
}

/* ---- one attempt's Filter and Score */

static cJSON *filter_json(const ls_cycle *c, const ls_profile *prof, const ls_scheduler *s)
{
    cJSON *filter = cJSON_CreateObject();
    const ls_vec *plugins = &prof->plugins[LS_EP_FILTER];
    if (!c->filter_trace)
        return filter;
    for (uint32_t n = 0; n < c->num_all_nodes; n++) {
        const uint32_t *row = plugins->len ? c->filter_trace + (size_t)n * plugins->len : NULL;
        cJSON *verdicts = NULL;
        for (uint32_t p = 0; p < plugins->len; p++) {
            if (!row[p])
                continue;
            if (!verdicts)
                verdicts = cJSON_AddObjectToObject(filter, ls_str_get(c->all_nodes[n]->node->name));
            const char *name = ls_str_get(LS_VEC_AT(plugins, ls_plugin_ref, p).name);
            cJSON_AddStringToObject(verdicts, name, row[p] == 1 ? "passed" : ls_status_get(row[p] - 1)->message);
        }
        /* the HTTP extenders, after the plugins (upstream's ExtenderName) */
        const char *extender = ls_scheduler_extender_verdict(s, c->all_nodes[n]->index);
        if (extender && !verdicts)
            verdicts = cJSON_AddObjectToObject(filter, ls_str_get(c->all_nodes[n]->node->name));
        if (extender)
            cJSON_AddStringToObject(verdicts, "Extender", extender);
    }
    return filter;
}

/* Each HTTP extender's score, named by its urlPrefix as upstream names it. */
static void extender_scores_json(cJSON *r, cJSON *f, const ls_scheduler *s, uint32_t i)
{
    for (uint32_t e = 0; e < ls_scheduler_num_extenders(s); e++) {
        int64_t raw, final;
        if (!ls_scheduler_extender_score(s, e, i, &raw, &final))
            continue;
        cJSON_AddNumberToObject(r, ls_scheduler_extender_name(s, e), (double)raw);
        cJSON_AddNumberToObject(f, ls_scheduler_extender_name(s, e), (double)final);
    }
}

static void scores_json(cJSON *rec, const ls_cycle *c, const ls_profile *prof, const int64_t *totals,
                        const ls_scheduler *s)
{
    cJSON *raw = cJSON_AddObjectToObject(rec, "score");
    cJSON *final = cJSON_AddObjectToObject(rec, "finalScore");
    cJSON *total = cJSON_AddObjectToObject(rec, "totalScore");
    const ls_vec *plugins = &prof->plugins[LS_EP_SCORE];
    uint32_t n = c->num_feasible;
    if (n < 2 || !totals)
        return;   /* a single feasible node is chosen without scoring, as upstream; no totals: scoring failed */
    for (uint32_t i = 0; i < n; i++) {
        const char *node = ls_str_get(c->feasible[i]->node->name);
        cJSON *r = cJSON_AddObjectToObject(raw, node), *f = cJSON_AddObjectToObject(final, node);
        if (totals)
            cJSON_AddNumberToObject(total, node, (double)totals[i]);
        for (uint32_t p = 0; p < plugins->len; p++) {
            const ls_plugin_ref *ref = &LS_VEC_AT(plugins, ls_plugin_ref, p);
            if (c->score_skipped[p])
                continue;
            cJSON_AddNumberToObject(r, ls_str_get(ref->name), (double)c->raw_scores[p * n + i]);
            cJSON_AddNumberToObject(f, ls_str_get(ref->name), (double)(c->scores[p * n + i] * ref->weight));
        }
        extender_scores_json(r, f, s, i);
    }
}

/* Filter, Score and how many nodes were examined and passed. */
static cJSON *details_json(const ls_attempt *a, const ls_cycle *c, const ls_scheduler *s)
{
    const ls_profile *prof = ls_scheduler_profile(s, a->profile);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "evaluatedNodes", a->via_nominated_node ? 1 : c->num_processed);
    cJSON_AddNumberToObject(d, "feasibleNodes", c->num_feasible);
    if (a->via_nominated_node)
        cJSON_AddBoolToObject(d, a->via_batch_hint ? "batchHintOnly" : "nominatedNodeOnly", true);
    cJSON_AddItemToObject(d, "filter", filter_json(c, prof, s));
    scores_json(d, c, prof, a->total_scores, s);
    return d;
}

/* ---- the attempt's outcome */

static const char *permit_result(uint8_t permit)
{
    switch (permit) {
    case LS_PERMIT_WAITING: return "waiting";
    case LS_PERMIT_ALLOWED: return "allowed";
    case LS_PERMIT_REJECTED: return "rejected";
    case LS_PERMIT_TIMED_OUT: return "timeout";
    default: return NULL;
    }
}

/* Permit's outcome when a plugin made the pod wait or rejected it (an
 * immediate allow, the usual case, adds nothing). */
static void add_permit(cJSON *at, const ls_attempt *a)
{
    const char *result = permit_result(a->permit);
    if (!result || (a->permit == LS_PERMIT_ALLOWED && !a->permit_waited))
        return;
    cJSON *p = cJSON_AddObjectToObject(at, "permit");
    cJSON_AddStringToObject(p, "result", result);
    cJSON_AddBoolToObject(p, "waited", a->permit_waited);
    if (a->permit_waited) {
        char dur[64];
        ls_format_duration(a->permit_wait_ms, dur, sizeof dur);
        cJSON_AddNumberToObject(p, "waitSeconds", (double)a->permit_wait_ms / 1000.0);
        cJSON_AddStringToObject(p, "wait", dur);
    }
    if (a->permit_plugin)
        cJSON_AddStringToObject(p, "plugin", ls_str_get(a->permit_plugin));
}

/* An Error a plugin raised: the plugin frames of its traceback, innermost
 * first ("file:line: in function 'f'"). */
static void add_traceback(cJSON *at, const ls_attempt *a)
{
    const char *detail = !a->node && a->code == LS_ERROR && a->message ? ls_status_error_detail(a->message) : NULL;
    if (!detail)
        return;
    cJSON *lines = cJSON_AddArrayToObject(at, "traceback");
    for (const char *p = detail; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *line = ls_xstrndup(p, n);
        cJSON_AddItemToArray(lines, cJSON_CreateString(line));
        free(line);
        p += n + (end != NULL);
    }
}

/* `time` is when the attempt began: for one that waited at Permit, the
 * wait's start (its outcome came permit.wait later). */
static void add_outcome(cJSON *at, const ls_attempt *a)
{
    uint64_t began = a->permit_waited && a->time_ms >= a->permit_wait_ms ? a->time_ms - a->permit_wait_ms : a->time_ms;
    cJSON_AddNumberToObject(at, "time", (double)began / 1000.0);
    cJSON_AddStringToObject(at, "result",
                            a->node ? "bound" : (ls_code_is_rejected(a->code) ? "unschedulable" : "error"));
    if (a->node)
        cJSON_AddStringToObject(at, "node", ls_str_get(a->node));
    else
        cJSON_AddStringToObject(at, "message", a->message ? a->message : "");
    add_traceback(at, a);
    if (a->nominated_node)
        cJSON_AddStringToObject(at, "nominatedNode", ls_str_get(a->nominated_node));
    if (a->expected_node)   /* status.nominatedNodeName set for the binding (cleared again on a failure) */
        cJSON_AddStringToObject(at, "expectedNode", ls_str_get(a->expected_node));
    if (a->n_victims) {
        cJSON *victims = cJSON_AddArrayToObject(at, "victims");
        for (uint32_t i = 0; i < a->n_victims; i++) {
            char name[600];
            snprintf(name, sizeof name, "%s/%s", ls_str_get(a->victims[i]->ns), ls_str_get(a->victims[i]->name));
            cJSON_AddItemToArray(victims, cJSON_CreateString(name));
        }
    }
    add_permit(at, a);
}

/* The pod's record: its identity, the deciding (last) attempt's outcome and
 * details, then every attempt in order. */
static cJSON *pod_record(const ls_attempt *a, const cJSON *at, cJSON *history)
{
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "namespace", ls_str_get(a->pod->ns));
    cJSON_AddStringToObject(rec, "name", ls_str_get(a->pod->name));
    if (a->node)
        cJSON_AddStringToObject(rec, "node", ls_str_get(a->node));
    else
        cJSON_AddNullToObject(rec, "node");
    if (a->message)
        cJSON_AddStringToObject(rec, "message", a->message);
    else
        cJSON_AddNullToObject(rec, "message");
    if (a->nominated_node)
        cJSON_AddStringToObject(rec, "nominatedNode", ls_str_get(a->nominated_node));
    static const char *const copied[] = {"evaluatedNodes", "feasibleNodes", "nominatedNodeOnly", "batchHintOnly", "filter",
                                         "score", "finalScore", "totalScore", "permit"};
    for (size_t i = 0; i < sizeof copied / sizeof *copied; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(at, copied[i]);
        if (item)
            cJSON_AddItemToObject(rec, copied[i], cJSON_Duplicate(item, true));
    }
    cJSON_AddItemToObject(rec, "attempts", history);
    return rec;
}

void ls_attempt_record_observe(void *ud, const ls_attempt *a, const ls_cycle *c, const ls_scheduler *s)
{
    ls_attempt_record *r = ud;
    uint32_t id = a->pod->id;
    grow(r, id);
    if (a->permit == LS_PERMIT_WAITING) {
        cJSON_Delete(r->waiting[id]);
        r->waiting[id] = details_json(a, c, s);
        cJSON_AddStringToObject(r->waiting[id], "selectedNode", ls_str_get(c->selected_node));
        return;
    }
    /* An attempt resumed from Permit keeps the Filter and Score it waited with. */
    cJSON *details = a->permit_waited && r->waiting[id] ? r->waiting[id] : details_json(a, c, s);
    if (details == r->waiting[id])
        r->waiting[id] = NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(details, "selectedNode");
    cJSON *at = cJSON_CreateObject();
    add_outcome(at, a);
    while (details->child) {
        cJSON *item = details->child;
        cJSON_AddItemToObject(at, item->string, cJSON_DetachItemViaPointer(details, item));
    }
    cJSON_Delete(details);
    cJSON *prev = r->pods[id];
    cJSON *history = prev ? cJSON_DetachItemFromObjectCaseSensitive(prev, "attempts") : cJSON_CreateArray();
    cJSON_AddItemToArray(history, at);
    cJSON_Delete(prev);
    r->pods[id] = pod_record(a, at, history);
}

cJSON *ls_attempt_record_take(ls_attempt_record *r, uint32_t pod_id)
{
    if (pod_id >= r->cap)
        return NULL;
    cJSON *rec = r->pods[pod_id];
    r->pods[pod_id] = NULL;
    return rec;
}

cJSON *ls_attempt_record_unattempted(const ls_pod *pod, const char *gate_message)
{
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddStringToObject(rec, "namespace", ls_str_get(pod->ns));
    cJSON_AddStringToObject(rec, "name", ls_str_get(pod->name));
    cJSON_AddNullToObject(rec, "node");
    cJSON_AddStringToObject(rec, "message", gate_message);
    cJSON_AddStringToObject(rec, "gated", gate_message);
    cJSON_AddArrayToObject(rec, "attempts");
    return rec;
}
