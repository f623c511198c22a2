/*
 * whatif_answer.c: one what-if question, from its JSON to its answer's JSON
 * (the schema: docs/operations/what-if.md).
 *
 * A question names one pod ("pod"), a list of pods placed in order as one
 * transaction ("pods", with "allOrNothing" for a gang) or a template and a
 * count ("template", "count": replicas until the first that does not fit).
 * Each pod is evaluated by the evaluator (scheduler/whatif_eval.c) as the
 * live scheduler's next cycle would schedule it; a placed pod is assumed in
 * the cache the next pods see (the live cache between two live cycles, or the
 * view a question with "changes" builds, whatif_changes.c), and every
 * assumption is forgotten before the answer leaves, the live snapshot
 * brought back to the live cache. The question's pods are decoded here, with
 * uids and ids of their own that no live pod has.
 */
#include "cli/attempt_record.h"
#include "cli/explain_hints.h"
#include "cli/whatif.h"
#include "scheduler/whatif_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PODS = 10000, FIRST_ID = 0x70000000u };

struct ls_whatif {
    ls_scheduler *evaluator;
    uint64_t questions;
};

typedef struct question {
    const cJSON *root;
    const char *kind;           /* "pod", "pods", "template" */
    bool all_or_nothing, stop_at_first, explain, hints, preemption;
    ls_vec pods;                /* ls_pod_obj * */
} question;

typedef struct answer_state {
    ls_whatif *wi;
    ls_scheduler *live;
    ls_whatif_view *view;       /* NULL: the live cluster */
    ls_cache *cache;            /* where placed pods are assumed */
    ls_vec assumed;             /* const ls_pod * */
    cJSON *placements;
    uint32_t placed, evaluated;
    const char *first_error;    /* a plugin's error (owned by the placement's JSON) */
    cJSON *failed;
} answer_state;

ls_whatif *ls_whatif_new(ls_scheduler *evaluator)
{
    ls_whatif *wi = ls_xcalloc(1, sizeof *wi);
    wi->evaluator = evaluator;
    return wi;
}

void ls_whatif_free(ls_whatif *wi)
{
    if (!wi)
        return;
    ls_scheduler_free(wi->evaluator);
    free(wi);
}

ls_scheduler *ls_whatif_evaluator(ls_whatif *wi)
{
    return wi->evaluator;
}

/* ---- the question */

static bool flag(const cJSON *root, const char *key, bool dflt, bool *out, ls_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!item) {
        *out = dflt;
        return true;
    }
    if (!cJSON_IsBool(item))
        return ls_errorf(err, "%s: expected true or false", key);
    *out = cJSON_IsTrue(item);
    return true;
}

/* A question's pod: pending (spec.nodeName dropped), with its own uid and id. */
static bool add_pod(question *q, const cJSON *obj, const char *source, const char *name,
                    ls_error *err)
{
    if (!cJSON_IsObject(obj))
        return ls_errorf(err, "%s: expected a Pod object", source);
    cJSON *copy = cJSON_Duplicate(obj, true);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
    if (!meta)
        meta = cJSON_AddObjectToObject(copy, "metadata");
    if (name) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
        cJSON_AddStringToObject(meta, "name", name);
    } else if (!cJSON_GetObjectItemCaseSensitive(meta, "name")) {
        char generated[64];
        snprintf(generated, sizeof generated, "whatif-%u", q->pods.len + 1);
        cJSON_AddStringToObject(meta, "name", generated);
    }
    ls_decode_ctx ctx = {.source = source};
    ls_pod_obj *p = ls_pod_decode(copy, &ctx, err);
    cJSON_Delete(copy);
    if (!p)
        return false;
    /* one question at a time: the same uids again (interned strings are never freed) */
    char uid[80];
    snprintf(uid, sizeof uid, "luasched-whatif-%u", q->pods.len);
    p->pod.uid = ls_intern(uid, strlen(uid));
    p->pod.id = FIRST_ID + q->pods.len;
    p->pod.node_name = 0;
    p->pod.nominated_node_name = 0;
    *(ls_pod_obj **)ls_vec_push(&q->pods) = p;
    return true;
}

static bool read_count(const cJSON *root, uint32_t *n, ls_error *err)
{
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(root, "count");
    if (!count)
        return ls_errorf(err, "count: a template needs a count (how many replicas to try)");
    double d = cJSON_IsNumber(count) ? count->valuedouble : -1;
    if (d < 1 || d > MAX_PODS || d != (double)(uint32_t)d)
        return ls_errorf(err, "count: expected a whole number from 1 to %d", MAX_PODS);
    *n = (uint32_t)d;
    return true;
}

/* Replicas NAME-1 .. NAME-N, NAME the template's metadata.name or generateName. */
static bool read_template(question *q, const cJSON *tmpl, ls_error *err)
{
    uint32_t n = 0;
    if (!read_count(q->root, &n, err))
        return false;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
    const cJSON *name = meta ? cJSON_GetObjectItemCaseSensitive(meta, "name") : NULL;
    const cJSON *gen = meta ? cJSON_GetObjectItemCaseSensitive(meta, "generateName") : NULL;
    char base[256];
    snprintf(base, sizeof base, "%s", cJSON_IsString(name) ? name->valuestring
                                      : cJSON_IsString(gen) ? gen->valuestring : "replica");
    size_t len = strlen(base);
    if (len && base[len - 1] == '-')
        base[len - 1] = 0;
    for (uint32_t i = 1; i <= n; i++) {
        char replica[300];
        snprintf(replica, sizeof replica, "%s-%u", base, i);
        if (!add_pod(q, tmpl, "template", replica, err))
            return false;
    }
    return true;
}

static bool read_pods(question *q, const cJSON *list, ls_error *err)
{
    if (!cJSON_IsArray(list) || !list->child)
        return ls_errorf(err, "pods: expected a non-empty list of Pod objects");
    if (cJSON_GetArraySize(list) > MAX_PODS)
        return ls_errorf(err, "pods: at most %d pods in one question", MAX_PODS);
    uint32_t i = 0;
    for (const cJSON *item = list->child; item; item = item->next, i++) {
        char source[32];
        snprintf(source, sizeof source, "pods[%u]", i);
        if (!add_pod(q, item, source, NULL, err))
            return false;
    }
    return true;
}

/* "timeoutSeconds" in ms; -1 when it is not a whole number in range. */
static long deadline_of(const cJSON *timeout)
{
    if (!cJSON_IsNumber(timeout) || timeout->valuedouble != (double)(long)timeout->valuedouble ||
        timeout->valuedouble < 1 || timeout->valuedouble > LS_WHATIF_DEADLINE_MS / 1000)
        return -1;
    return (long)timeout->valuedouble * 1000;
}

long ls_whatif_deadline_ms(const char *body)
{
    cJSON *root = cJSON_Parse(body);
    const cJSON *timeout = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "timeoutSeconds") : NULL;
    long ms = timeout ? deadline_of(timeout) : -1;
    cJSON_Delete(root);
    return ms > 0 ? ms : LS_WHATIF_DEADLINE_MS;
}

static bool check_keys(const cJSON *root, ls_error *err)
{
    static const char *const known[] = {"apiVersion", "kind",    "pod",   "pods",  "allOrNothing", "template",
                                        "count",      "changes", "explain", "hints", "preemption",
                                        "timeoutSeconds"};
    for (const cJSON *item = root->child; item; item = item->next) {
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            ok = ok || strcmp(item->string, known[k]) == 0;
        if (!ok)
            return ls_errorf(err, "%s: unknown field (expected pod, pods, template, count, allOrNothing, changes, "
                                  "explain, hints, preemption or timeoutSeconds)", item->string);
    }
    return true;
}

static bool read_question(question *q, const cJSON *root, ls_error *err)
{
    q->root = root;
    if (!cJSON_IsObject(root))
        return ls_errorf(err, "the request: expected a JSON object with \"pod\", \"pods\" or \"template\"");
    if (!check_keys(root, err))
        return false;
    const cJSON *pod = cJSON_GetObjectItemCaseSensitive(root, "pod");
    const cJSON *pods = cJSON_GetObjectItemCaseSensitive(root, "pods");
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(root, "template");
    if ((pod != NULL) + (pods != NULL) + (tmpl != NULL) != 1)
        return ls_errorf(err, "the request: expected exactly one of \"pod\", \"pods\" and \"template\"");
    q->kind = pod ? "pod" : pods ? "pods" : "template";
    if (!flag(root, "allOrNothing", false, &q->all_or_nothing, err) || !flag(root, "explain", pod != NULL, &q->explain, err) ||
        !flag(root, "hints", true, &q->hints, err) || !flag(root, "preemption", true, &q->preemption, err))
        return false;
    if (!pods && cJSON_GetObjectItemCaseSensitive(root, "allOrNothing"))
        return ls_errorf(err, "allOrNothing: only for \"pods\" (a template stops at the first replica that does not fit)");
    if (!tmpl && cJSON_GetObjectItemCaseSensitive(root, "count"))
        return ls_errorf(err, "count: only for \"template\"");
    const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(root, "timeoutSeconds");
    if (timeout && deadline_of(timeout) < 0)
        return ls_errorf(err, "timeoutSeconds: expected a whole number from 1 to %d", LS_WHATIF_DEADLINE_MS / 1000);
    q->stop_at_first = q->all_or_nothing || tmpl != NULL;
    if (pod)
        return add_pod(q, pod, "pod", NULL, err);
    if (pods)
        return read_pods(q, pods, err);
    if (!cJSON_IsObject(tmpl))
        return ls_errorf(err, "template: expected a Pod object");
    return read_template(q, tmpl, err);
}

static void free_question(question *q)
{
    for (uint32_t i = 0; i < q->pods.len; i++)
        ls_pod_obj_free(LS_VEC_AT(&q->pods, ls_pod_obj *, i));
    ls_vec_free(&q->pods);
}

/* ---- one placement's JSON */

static char *pod_ref(const ls_pod *pod, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", ls_str_get(pod->ns), ls_str_get(pod->name));
    return buf;
}

static const char *result_name(int verdict)
{
    return verdict == LS_WHATIF_NODE ? "scheduled" : verdict == LS_WHATIF_ERROR ? "error" : "unschedulable";
}

/* explain's per-node, per-plugin table: the attempt as `simulate --output
 * json` records it (filter verdicts, raw, final and total scores). */
static void add_explain(cJSON *pl, ls_scheduler *w, const ls_whatif_result *r)
{
    ls_pod probe = *r->attempt.pod;
    probe.id = 0;   /* the record is indexed by pod id: one slot */
    ls_attempt a = r->attempt;
    a.pod = &probe;
    ls_attempt_record *rec = ls_attempt_record_new(1);
    ls_attempt_record_observe(rec, &a, ls_whatif_cycle(w), w);
    cJSON *pod_rec = ls_attempt_record_take(rec, 0);
    ls_attempt_record_free(rec);
    cJSON *attempts = pod_rec ? cJSON_GetObjectItemCaseSensitive(pod_rec, "attempts") : NULL;
    cJSON *last = attempts ? cJSON_DetachItemFromArray(attempts, cJSON_GetArraySize(attempts) - 1) : NULL;
    if (last) {
        static const char *const dropped[] = {"time", "result", "node", "message", "attempt", "traceback"};
        for (size_t k = 0; k < sizeof dropped / sizeof *dropped; k++)
            cJSON_DeleteItemFromObjectCaseSensitive(last, dropped[k]);
        cJSON_AddItemToObject(pl, "explain", last);
    }
    cJSON_Delete(pod_rec);
}

static void add_hints(cJSON *pl, ls_scheduler *w)
{
    char *text = ls_explain_hints(ls_whatif_cycle(w), w);
    if (!text)
        return;
    cJSON *hints = cJSON_AddArrayToObject(pl, "hints");
    for (char *line = text, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line) - 1;
        else
            *end = 0;
        const char *start = line;
        while (*start == ' ')
            start++;
        cJSON_AddItemToArray(hints, cJSON_CreateString(start));
    }
    free(text);
}

static void add_preemption(cJSON *pl, const ls_whatif_result *r)
{
    if (!r->nominated_node)
        return;
    cJSON *p = cJSON_AddObjectToObject(pl, "preemption");
    cJSON_AddStringToObject(p, "nominatedNode", ls_str_get(r->nominated_node));
    cJSON *victims = cJSON_AddArrayToObject(p, "victims");
    char ref[600];
    for (uint32_t i = 0; i < r->n_victims; i++)
        cJSON_AddItemToArray(victims, cJSON_CreateString(pod_ref(r->victims[i], ref, sizeof ref)));
}

static cJSON *placement_json(answer_state *st, const question *q, ls_whatif_result *r)
{
    ls_scheduler *w = st->wi->evaluator;
    const ls_cycle *c = ls_whatif_cycle(w);
    cJSON *pl = cJSON_CreateObject();
    char ref[600];
    cJSON_AddStringToObject(pl, "pod", pod_ref(r->attempt.pod, ref, sizeof ref));
    cJSON_AddStringToObject(pl, "result", result_name(r->verdict));
    if (r->verdict == LS_WHATIF_NODE) {
        cJSON_AddStringToObject(pl, "node", ls_str_get(r->node));
        cJSON *tied = cJSON_AddArrayToObject(pl, "tiedNodes");
        for (uint32_t i = 0; i < r->n_tied; i++)
            cJSON_AddItemToArray(tied, cJSON_CreateString(ls_str_get(r->tied[i])));
    } else {
        cJSON_AddStringToObject(pl, "message", r->message ? r->message : "");
    }
    cJSON_AddNumberToObject(pl, "nodes", c->num_all_nodes);
    cJSON_AddNumberToObject(pl, "evaluatedNodes", c->num_processed);
    cJSON_AddNumberToObject(pl, "feasibleNodes", c->num_feasible);
    if (q->explain)
        add_explain(pl, w, r);
    if (r->verdict == LS_WHATIF_UNSCHEDULABLE && q->hints)
        add_hints(pl, w);
    return pl;
}

/* ---- evaluating */

static ls_snapshot *snapshot_of(answer_state *st)
{
    return st->view ? ls_whatif_view_snapshot(st->view) : NULL;   /* NULL: the live one, refreshed */
}

static void note_failure(answer_state *st, uint32_t index, const ls_whatif_result *r, const cJSON *pl)
{
    if (r->verdict == LS_WHATIF_ERROR && !st->first_error)
        st->first_error = cJSON_GetObjectItemCaseSensitive(pl, "message")->valuestring;
    if (st->failed)
        return;
    char ref[600];
    st->failed = cJSON_CreateObject();
    cJSON_AddNumberToObject(st->failed, "index", index);
    cJSON_AddStringToObject(st->failed, "pod", pod_ref(r->attempt.pod, ref, sizeof ref));
    cJSON_AddStringToObject(st->failed, "result", result_name(r->verdict));
    cJSON_AddStringToObject(st->failed, "message", r->message ? r->message : "");
}

static void evaluate_all(answer_state *st, const question *q)
{
    ls_scheduler *w = st->wi->evaluator;
    ls_whatif_result r = {0};
    for (uint32_t i = 0; i < q->pods.len; i++) {
        const ls_pod *pod = &LS_VEC_AT(&q->pods, ls_pod_obj *, i)->pod;
        ls_whatif_evaluate(w, st->live, snapshot_of(st), pod, i ? LS_WHATIF_CONTINUE : LS_WHATIF_FROM_LIVE, &r);
        st->evaluated++;
        cJSON *pl = placement_json(st, q, &r);   /* explain and hints before PostFilter reruns filters */
        if (r.verdict == LS_WHATIF_UNSCHEDULABLE && q->preemption) {
            ls_whatif_preempt(w, st->live, &r);
            cJSON_ReplaceItemInObjectCaseSensitive(pl, "message", cJSON_CreateString(r.message ? r.message : ""));
            add_preemption(pl, &r);
        }
        cJSON_AddItemToArray(st->placements, pl);
        if (r.verdict != LS_WHATIF_NODE) {
            note_failure(st, i, &r, pl);
            if (q->stop_at_first)
                break;
            continue;
        }
        ls_error err;
        if (ls_cache_assume_pod(st->cache, pod, r.node, &err)) {
            *(const ls_pod **)ls_vec_push(&st->assumed) = pod;
            st->placed++;
        }
    }
    ls_whatif_result_free(&r);
}

/* Every assumption of the question forgotten; the live snapshot follows. */
static void undo(answer_state *st)
{
    ls_error err;
    for (uint32_t i = st->assumed.len; i-- > 0;)
        ls_cache_forget_pod(st->cache, LS_VEC_AT(&st->assumed, const ls_pod *, i), &err);
    if (!st->view)
        ls_whatif_live_snapshot(st->live);
    st->assumed.len = 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static cJSON *answer_json(answer_state *st, const question *q, double began_ms)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(a, "kind", "WhatIfAnswer");
    cJSON_AddStringToObject(a, "question", q->kind);
    bool fits = st->placed == q->pods.len;
    cJSON_AddBoolToObject(a, "fits", fits);
    cJSON_AddNumberToObject(a, "placed", st->placed);
    if (strcmp(q->kind, "template") == 0)
        cJSON_AddNumberToObject(a, "count", q->pods.len);
    if (st->view)
        cJSON_AddBoolToObject(a, "changedCluster", true);
    if (st->first_error)
        cJSON_AddStringToObject(a, "error", st->first_error);
    if (st->failed)
        cJSON_AddItemToObject(a, "failed", st->failed);
    cJSON_AddItemToObject(a, "placements", st->placements);
    cJSON_AddNumberToObject(a, "elapsedMs", (double)(int64_t)((now_ms() - began_ms) * 1000) / 1000);
    return a;
}

char *ls_whatif_error_json(const char *msg)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(e, "kind", "WhatIfAnswer");
    cJSON_AddStringToObject(e, "error", msg);
    char *text = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    return text;
}

static bool check_profiles(ls_whatif *wi, const question *q, ls_error *err)
{
    for (uint32_t i = 0; i < q->pods.len; i++) {
        const ls_pod *pod = &LS_VEC_AT(&q->pods, ls_pod_obj *, i)->pod;
        if (ls_whatif_profile_of(wi->evaluator, pod) < 0)
            return ls_errorf(err, "%s: spec.schedulerName \"%s\" names no profile of this scheduler",
                             i ? "pods" : q->kind, ls_str_get(pod->scheduler_name));
    }
    return true;
}

char *ls_whatif_answer(ls_whatif *wi, ls_scheduler *live, const char *body, size_t len, int *status)
{
    wi->questions++;
    double began = now_ms();
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, false);
    for (; root && end && end < body + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'); end++) {
    }
    if (root && end && end < body + len && *end) {
        cJSON_Delete(root);
        root = NULL;
    }
    question q = {0};
    ls_vec_init(&q.pods, sizeof(ls_pod_obj *));
    ls_error err = {0};
    answer_state st = {.wi = wi, .live = live};
    ls_vec_init(&st.assumed, sizeof(const ls_pod *));
    bool ok = root ? read_question(&q, root, &err) && check_profiles(wi, &q, &err)
                   : ls_errorf(&err, "the request is not JSON (near byte %zu)",
                               (size_t)(end ? end - body : cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - body : 0));
    const cJSON *changes = ok ? cJSON_GetObjectItemCaseSensitive(root, "changes") : NULL;
    if (changes && !(st.view = ls_whatif_view_new(live, changes, FIRST_ID, &err)))
        ok = false;
    char *text;
    if (!ok) {
        *status = 400;
        text = ls_whatif_error_json(err.msg);
    } else {
        st.cache = st.view ? ls_whatif_view_cache(st.view) : ls_whatif_live_cache(live);
        st.placements = cJSON_CreateArray();
        evaluate_all(&st, &q);
        undo(&st);
        cJSON *a = answer_json(&st, &q, began);
        text = cJSON_PrintUnformatted(a);
        cJSON_Delete(a);
        *status = 200;
    }
    ls_vec_free(&st.assumed);
    ls_whatif_view_free(st.view);
    free_question(&q);
    cJSON_Delete(root);
    return text;
}
