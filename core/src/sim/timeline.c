/*
 * timeline.c: parsing of Timeline documents (see timeline.h), durations, and
 * JSON merge patch.
 */
#include "sim/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ls_timeline_init(ls_timeline *t)
{
    ls_vec_init(&t->steps, sizeof(ls_step));
    t->next = 0;
}

void ls_timeline_free(ls_timeline *t)
{
    for (uint32_t i = 0; i < t->steps.len; i++) {
        ls_step *s = &LS_VEC_AT(&t->steps, ls_step, i);
        cJSON_Delete(s->body);
        free(s->where);
    }
    ls_vec_free(&t->steps);
}

bool ls_timeline_is_document(const cJSON *doc)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(doc, "kind");
    return cJSON_IsString(kind) && strcmp(kind->valuestring, "Timeline") == 0;
}

/* A unit suffix and its length in milliseconds; longest suffixes first. */
static const struct {
    const char *unit;
    double ms;
} UNITS[] = {{"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};

static bool parse_duration_text(const char *s, uint64_t *ms)
{
    double total = 0;
    if (!*s)
        return false;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || v < 0)
            return false;
        s = end;
        size_t u = 0;
        for (; u < sizeof UNITS / sizeof UNITS[0]; u++)
            if (strncmp(s, UNITS[u].unit, strlen(UNITS[u].unit)) == 0)
                break;
        if (u == sizeof UNITS / sizeof UNITS[0])
            return false;
        total += v * UNITS[u].ms;
        s += strlen(UNITS[u].unit);
    }
    *ms = (uint64_t)(total + 0.5);
    return true;
}

bool ls_duration_parse(const cJSON *v, uint64_t *ms)
{
    if (cJSON_IsNumber(v) && v->valuedouble >= 0) {
        *ms = (uint64_t)(v->valuedouble * 1000 + 0.5);
        return true;
    }
    return cJSON_IsString(v) && parse_duration_text(v->valuestring, ms);
}

static const struct {
    const char *key;
    ls_step_op op;
} OPS[] = {{"create", LS_STEP_CREATE}, {"update", LS_STEP_UPDATE}, {"patch", LS_STEP_PATCH}, {"delete", LS_STEP_DELETE}};

static bool step_error(ls_error *err, const ls_doc_set *doc, const cJSON *at, int i, const char *what)
{
    int line = ls_doc_line(doc, at);
    if (line)
        return ls_errorf(err, "%s:%d: Timeline steps[%d]: %s", ls_doc_source(doc), line, i, what);
    return ls_errorf(err, "%s: Timeline steps[%d]: %s", ls_doc_source(doc), i, what);
}

static bool add_step(ls_timeline *t, const ls_doc_set *doc, const cJSON *item, int i, ls_error *err)
{
    if (!cJSON_IsObject(item))
        return step_error(err, doc, item, i, "expected an object {at, create|update|patch|delete}");
    uint64_t at;
    const cJSON *at_item = cJSON_GetObjectItemCaseSensitive(item, "at");
    if (!ls_duration_parse(at_item, &at))
        return step_error(err, doc, at_item ? at_item : item, i,
                          "at: expected a duration such as 90s, 1m30s or 500ms, or a number of seconds");
    const cJSON *body = NULL;
    ls_step_op op = LS_STEP_CREATE;
    for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(item, OPS[k].key);
        if (!b)
            continue;
        if (body)
            return step_error(err, doc, b, i, "expected exactly one of create, update, patch, delete");
        body = b;
        op = OPS[k].op;
    }
    if (!body)
        return step_error(err, doc, item, i, "expected one of create, update, patch, delete");
    if (!cJSON_IsObject(body) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(body, "kind")))
        return step_error(err, doc, body, i, "expected an object with a kind (and metadata.name)");
    ls_step *s = ls_vec_push(&t->steps);
    s->at_ms = at;
    s->op = op;
    s->body = cJSON_Duplicate(body, 1);
    s->order = t->steps.len;
    char where[512];
    snprintf(where, sizeof where, "%s:%d", ls_doc_source(doc), ls_doc_line(doc, item));
    s->where = ls_xstrdup(where);
    return true;
}

bool ls_timeline_add(ls_timeline *t, const ls_doc_set *doc, const cJSON *obj, ls_error *err)
{
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(obj, "steps");
    if (!cJSON_IsArray(steps)) {
        int line = ls_doc_line(doc, steps ? steps : obj);
        return ls_errorf(err, "%s:%d: Timeline: steps: expected a list of steps", ls_doc_source(doc), line);
    }
    int i = 0;
    for (const cJSON *item = steps->child; item; item = item->next, i++)
        if (!add_step(t, doc, item, i, err))
            return false;
    return true;
}

static int by_time(const void *a, const void *b)
{
    const ls_step *x = a, *y = b;
    if (x->at_ms != y->at_ms)
        return x->at_ms < y->at_ms ? -1 : 1;
    return x->order < y->order ? -1 : 1;
}

void ls_timeline_seal(ls_timeline *t)
{
    if (t->steps.len > 1)
        qsort(t->steps.data, t->steps.len, sizeof(ls_step), by_time);
}

const ls_step *ls_timeline_next_due(ls_timeline *t, uint64_t now_ms)
{
    if (t->next >= t->steps.len)
        return NULL;
    const ls_step *s = &LS_VEC_AT(&t->steps, ls_step, t->next);
    if (s->at_ms > now_ms)
        return NULL;
    t->next++;
    return s;
}

bool ls_timeline_next_time(const ls_timeline *t, uint64_t *at_ms)
{
    if (t->next >= t->steps.len)
        return false;
    *at_ms = LS_VEC_AT(&t->steps, ls_step, t->next).at_ms;
    return true;
}

uint32_t ls_timeline_len(const ls_timeline *t)
{
    return t->steps.len;
}

void ls_json_merge_patch(cJSON *target, const cJSON *patch)
{
    for (const cJSON *p = patch->child; p; p = p->next) {
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
            continue;
        }
        cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);
        if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
            ls_json_merge_patch(t, p);
            continue;
        }
        cJSON *copy = cJSON_Duplicate(p, 1);
        if (cJSON_IsObject(p)) {
            /* A nested patch onto nothing builds the object, dropping nulls. */
            cJSON *fresh = cJSON_CreateObject();
            ls_json_merge_patch(fresh, p);
            cJSON_Delete(copy);
            copy = fresh;
        }
        if (t)
            cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, copy);
        else
            cJSON_AddItemToObject(target, p->string, copy);
    }
}
