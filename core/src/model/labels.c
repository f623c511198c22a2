/*
 * labels.c: label maps, label and node selectors, and taint tolerations: how
 * they are compiled from JSON once, and how they are matched many times.
 *
 * Matching runs in the scheduler's per-node loops (called from Lua through the
 * FFI), so it works on interned ids only: labels are sorted by key id, selector
 * values by id, and every lookup is a binary search with no string compares.
 * Compiling validates like the API server does, so a selector that upstream
 * would reject is an error here rather than a silent mismatch.
 */
#include "labels_internal.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/doc.h"

/* ---- label maps ---------------------------------------------------------- */

static const ls_label *labels_find(const ls_labels *labels, ls_str key)
{
    if (!labels || !key)
        return NULL;
    uint32_t lo = 0, hi = labels->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        ls_str k = labels->items[mid].key;
        if (k == key)
            return &labels->items[mid];
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

ls_str ls_labels_get(const ls_labels *labels, ls_str key)
{
    const ls_label *l = labels_find(labels, key);
    return l ? l->value : 0;
}

bool ls_labels_has(const ls_labels *labels, ls_str key)
{
    return labels_find(labels, key) != NULL;
}

void ls_labels_sort(ls_label *items, uint32_t *n)
{
    /* Insertion sort: stable (so "last wins" below is well defined) and label
     * maps are short. */
    for (uint32_t i = 1; i < *n; i++) {
        ls_label x = items[i];
        uint32_t j = i;
        for (; j > 0 && items[j - 1].key > x.key; j--)
            items[j] = items[j - 1];
        items[j] = x;
    }
    uint32_t out = 0;
    for (uint32_t i = 0; i < *n; i++) {
        if (out > 0 && items[out - 1].key == items[i].key)
            items[out - 1] = items[i];
        else
            items[out++] = items[i];
    }
    *n = out;
}

bool ls_labels_from_json(const cJSON *map, ls_arena *a, ls_labels *out, const cJSON **bad)
{
    uint32_t n = 0;
    ls_label *items = ls_arena_alloc(a, (size_t)cJSON_GetArraySize(map) * sizeof *items);
    for (const cJSON *c = map->child; c; c = c->next) {
        if (!cJSON_IsString(c)) {
            *bad = c;
            return false;
        }
        items[n].key = ls_intern_cstr(c->string);
        items[n].value = ls_intern_cstr(c->valuestring);
        n++;
    }
    ls_labels_sort(items, &n);
    out->n = n;
    out->items = items;
    return true;
}

/* ---- requirement matching ------------------------------------------------ */

static bool values_contain(const ls_requirement *r, ls_str value)
{
    uint32_t lo = 0, hi = r->n_values;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->values[mid] == value)
            return true;
        if (r->values[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces. */
bool ls_parse_int64(const char *s, int64_t *out)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* One requirement against one key's state: present or not, and its value. */
static bool requirement_matches(const ls_requirement *r, bool present, ls_str value)
{
    int64_t n;
    switch (r->op) {
    case LS_OP_IN:
        return present && values_contain(r, value);
    case LS_OP_NOT_IN:
        return !present || !values_contain(r, value);
    case LS_OP_EXISTS:
        return present;
    case LS_OP_DOES_NOT_EXIST:
        return !present;
    case LS_OP_GT:
        return present && ls_parse_int64(ls_str_get(value), &n) && n > r->number;
    case LS_OP_LT:
        return present && ls_parse_int64(ls_str_get(value), &n) && n < r->number;
    default:
        return false;
    }
}

bool ls_selector_matches(const ls_selector *sel, const ls_labels *labels)
{
    if (sel->match_nothing)
        return false;
    for (uint32_t i = 0; i < sel->n; i++) {
        const ls_requirement *r = &sel->reqs[i];
        const ls_label *l = labels_find(labels, r->key);
        if (!requirement_matches(r, l != NULL, l ? l->value : 0))
            return false;
    }
    return true;
}

/* matchFields: the only field a node selector may name is metadata.name. */
static bool fields_match(const ls_selector *fields, const ls_node *node)
{
    for (uint32_t i = 0; i < fields->n; i++)
        if (!requirement_matches(&fields->reqs[i], true, node->name))
            return false;
    return true;
}

bool ls_node_selector_term_matches(const ls_node_selector_term *t, const ls_node *node)
{
    if (t->exprs.n == 0 && t->fields.n == 0)
        return false;
    return ls_selector_matches(&t->exprs, &node->labels) && fields_match(&t->fields, node);
}

bool ls_node_selector_matches(const ls_node_selector *s, const ls_node *node)
{
    for (uint32_t i = 0; i < s->n_terms; i++)
        if (ls_node_selector_term_matches(&s->terms[i], node))
            return true;
    return false;
}

bool ls_pod_matches_node_affinity(const ls_pod *pod, const ls_node *node)
{
    const ls_labels *want = &pod->node_selector;
    for (uint32_t i = 0; i < want->n; i++) {
        const ls_label *l = labels_find(&node->labels, want->items[i].key);
        if (!l || l->value != want->items[i].value)
            return false;
    }
    return !pod->has_required_node_affinity ||
           ls_node_selector_matches(&pod->required_node_affinity, node);
}

/* ---- tolerations --------------------------------------------------------- */

/* Absent (0) and "" mean the same thing for toleration and taint fields. */
static bool str_empty(ls_str s)
{
    return ls_str_len(s) == 0;
}

static bool str_same(ls_str a, ls_str b)
{
    return a == b || (str_empty(a) && str_empty(b));
}

bool ls_toleration_tolerates(const ls_toleration *t, const ls_taint *taint)
{
    if (t->effect != LS_EFFECT_ALL && t->effect != taint->effect)
        return false;
    if (!str_empty(t->key) && !str_same(t->key, taint->key))
        return false;
    if (t->op == LS_TOL_EXISTS)
        return true;
    return str_same(t->value, taint->value);
}

bool ls_tolerations_tolerate(const ls_toleration *t, uint32_t n, const ls_taint *taint)
{
    for (uint32_t i = 0; i < n; i++)
        if (ls_toleration_tolerates(&t[i], taint))
            return true;
    return false;
}

int32_t ls_find_untolerated_taint(const ls_taint *taints, uint32_t n_taints,
                                  const ls_toleration *tols, uint32_t n_tols, uint32_t effect_mask)
{
    for (uint32_t i = 0; i < n_taints; i++) {
        /* Effects come from Lua-built structs too: never shift by 32 or more. */
        if (taints[i].effect >= 32 || !(effect_mask & (1u << taints[i].effect)))
            continue;
        if (!ls_tolerations_tolerate(tols, n_tols, &taints[i]))
            return (int32_t)i;
    }
    return -1;
}

/* ---- compiling ----------------------------------------------------------- */

typedef struct compiler {
    ls_arena *a;
    ls_error *err;
    const cJSON **bad;
    bool node;             /* NodeSelectorRequirement: Gt and Lt allowed */
} compiler;

typedef struct path_buf { char s[512]; } path_buf;

static const char *path_join(path_buf *b, const char *base, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* base + "." + sub (or "[i]" subs, which need no dot) */
static const char *path_join(path_buf *b, const char *base, const char *fmt, ...)
{
    char sub[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sub, sizeof sub, fmt, ap);
    va_end(ap);
    const char *sep = (!base || !*base || sub[0] == '[') ? "" : ".";
    snprintf(b->s, sizeof b->s, "%s%s%s", base ? base : "", sep, sub);
    return b->s;
}

static bool fail(compiler *c, const cJSON *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(compiler *c, const cJSON *at, const char *path, const char *fmt, ...)
{
    if (c->bad)
        *c->bad = at;
    va_list ap;
    va_start(ap, fmt);
    ls_verror_at(c->err, path, fmt, ap);
    va_end(ap);
    return false;
}

static const char *op_name(uint8_t op)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static int parse_op(const char *s, bool node)
{
    int max = node ? LS_OP_LT : LS_OP_DOES_NOT_EXIST;
    for (int op = 0; op <= max; op++)
        if (strcmp(s, op_name((uint8_t)op)) == 0)
            return op;
    return -1;
}

static void sort_values(ls_str *v, uint32_t *n)
{
    for (uint32_t i = 1; i < *n; i++) {
        ls_str x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    uint32_t out = 0;
    for (uint32_t i = 0; i < *n; i++)
        if (out == 0 || v[out - 1] != v[i])
            v[out++] = v[i];
    *n = out;
}

/* Stable by key, so equal keys keep their source order and the compiled form
 * of a selector never depends on anything but its text. */
static void sort_requirements(ls_requirement *r, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        ls_requirement x = r[i];
        uint32_t j = i;
        for (; j > 0 && r[j - 1].key > x.key; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

static bool compile_string(compiler *c, const cJSON *j, const char *path, ls_str *out)
{
    if (!cJSON_IsString(j))
        return fail(c, j, path, "expected a string");
    *out = ls_intern_cstr(j->valuestring);
    return true;
}

static bool compile_values(compiler *c, const cJSON *json, const char *path, ls_requirement *r)
{
    if (!json)
        return true;
    if (!cJSON_IsArray(json))
        return fail(c, json, path, "expected an array");
    uint32_t n = (uint32_t)cJSON_GetArraySize(json);
    ls_str *v = ls_arena_alloc(c->a, n * sizeof *v);
    uint32_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        path_buf b;
        if (!compile_string(c, item, path_join(&b, path, "[%u]", i), &v[i]))
            return false;
        i++;
    }
    r->n_values = n;
    r->values = v;
    return true;
}

/* Operand counts as the API server validates them, and Gt/Lt's integer. */
static bool check_values(compiler *c, const cJSON *expr, const char *path, ls_requirement *r)
{
    path_buf b;
    const char *vpath = path_join(&b, path, "values");
    const cJSON *at = ls_json_member(expr, "values") ? ls_json_member(expr, "values") : expr;
    switch (r->op) {
    case LS_OP_IN:
    case LS_OP_NOT_IN:
        if (r->n_values == 0)
            return fail(c, at, vpath, "must be non-empty for operator %s", op_name(r->op));
        return true;
    case LS_OP_EXISTS:
    case LS_OP_DOES_NOT_EXIST:
        if (r->n_values != 0)
            return fail(c, at, vpath, "must be empty for operator %s", op_name(r->op));
        return true;
    default:
        if (r->n_values != 1)
            return fail(c, at, vpath, "must have exactly one value for operator %s", op_name(r->op));
        if (!ls_parse_int64(ls_str_get(r->values[0]), &r->number))
            return fail(c, at, vpath, "%s needs an integer, got \"%s\"", op_name(r->op),
                        ls_str_get(r->values[0]));
        return true;
    }
}

static bool compile_expression(compiler *c, const cJSON *expr, const char *path, ls_requirement *r)
{
    path_buf b;
    if (!cJSON_IsObject(expr))
        return fail(c, expr, path, "expected an object");
    const cJSON *key = ls_json_member(expr, "key"), *op = ls_json_member(expr, "operator");
    if (!key)
        return fail(c, expr, path_join(&b, path, "key"), "required");
    if (!compile_string(c, key, path_join(&b, path, "key"), &r->key))
        return false;
    if (!op)
        return fail(c, expr, path_join(&b, path, "operator"), "required");
    if (!cJSON_IsString(op))
        return fail(c, op, path_join(&b, path, "operator"), "expected a string");
    int o = parse_op(op->valuestring, c->node);
    if (o < 0)
        return fail(c, op, path_join(&b, path, "operator"), "unknown operator \"%s\" (expected %s)",
                    op->valuestring,
                    c->node ? "In, NotIn, Exists, DoesNotExist, Gt or Lt" : "In, NotIn, Exists or DoesNotExist");
    r->op = (uint8_t)o;
    if (!compile_values(c, ls_json_member(expr, "values"), path_join(&b, path, "values"), r))
        return false;
    if (!check_values(c, expr, path, r))
        return false;
    sort_values((ls_str *)r->values, &r->n_values);
    return true;
}

static bool compile_expressions(compiler *c, const cJSON *json, const char *path,
                                ls_requirement *reqs, uint32_t *n)
{
    uint32_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        path_buf b;
        if (!compile_expression(c, item, path_join(&b, path, "[%u]", i), &reqs[*n]))
            return false;
        (*n)++;
        i++;
    }
    return true;
}

static bool compile_match_labels(compiler *c, const cJSON *json, const char *path,
                                 ls_requirement *reqs, uint32_t *n)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        path_buf b;
        ls_str *v = ls_arena_alloc(c->a, sizeof *v);
        if (!compile_string(c, item, path_join(&b, path, "%s", item->string), v))
            return false;
        ls_requirement *r = &reqs[(*n)++];
        r->key = ls_intern_cstr(item->string);
        r->op = LS_OP_IN;
        r->n_values = 1;
        r->values = v;
    }
    return true;
}

/* Checks that an optional member has the JSON type a field needs. */
static bool optional_of(compiler *c, const cJSON *j, const char *path, bool want_array)
{
    if (!j)
        return true;
    if (want_array ? cJSON_IsArray(j) : cJSON_IsObject(j))
        return true;
    return fail(c, j, path, want_array ? "expected an array" : "expected an object");
}

static uint32_t size_of(const cJSON *j)
{
    return j ? (uint32_t)cJSON_GetArraySize(j) : 0;
}

bool ls_selector_compile_at(const cJSON *json, ls_arena *a, ls_selector *out,
                            const char *field_path, ls_error *err, const cJSON **bad)
{
    compiler c = {a, err, bad, false};
    memset(out, 0, sizeof *out);
    if (!json || cJSON_IsNull(json)) {
        out->match_nothing = 1;
        return true;
    }
    if (!cJSON_IsObject(json))
        return fail(&c, json, field_path, "expected an object");
    path_buf bl, be;
    const char *lpath = path_join(&bl, field_path, "matchLabels");
    const char *epath = path_join(&be, field_path, "matchExpressions");
    const cJSON *labels = ls_json_member(json, "matchLabels"), *exprs = ls_json_member(json, "matchExpressions");
    if (!optional_of(&c, labels, lpath, false) || !optional_of(&c, exprs, epath, true))
        return false;
    ls_requirement *reqs = ls_arena_alloc(a, (size_of(labels) + size_of(exprs)) * sizeof *reqs);
    uint32_t n = 0;
    if (!compile_match_labels(&c, labels, lpath, reqs, &n) ||
        !compile_expressions(&c, exprs, epath, reqs, &n))
        return false;
    sort_requirements(reqs, n);
    out->n = n;
    out->reqs = reqs;
    return true;
}

bool ls_selector_compile(const cJSON *json, ls_arena *a, ls_selector *out,
                         const char *field_path, ls_error *err)
{
    return ls_selector_compile_at(json, a, out, field_path, err, NULL);
}

/* matchFields may only say metadata.name In/NotIn [one name] (API validation). */
static bool check_field(compiler *c, const cJSON *expr, const char *path, const ls_requirement *r)
{
    path_buf b;
    if (strcmp(ls_str_get(r->key), "metadata.name") != 0)
        return fail(c, ls_json_member(expr, "key"), path_join(&b, path, "key"),
                    "unsupported field \"%s\" (only metadata.name)", ls_str_get(r->key));
    if (r->op != LS_OP_IN && r->op != LS_OP_NOT_IN)
        return fail(c, ls_json_member(expr, "operator"), path_join(&b, path, "operator"),
                    "operator %s is not supported for matchFields (only In or NotIn)", op_name(r->op));
    if (r->n_values != 1)
        return fail(c, ls_json_member(expr, "values"), path_join(&b, path, "values"),
                    "must have exactly one value for a field selector");
    return true;
}

static bool compile_term_fields(compiler *c, const cJSON *json, const char *path, ls_selector *out)
{
    ls_requirement *reqs = ls_arena_alloc(c->a, size_of(json) * sizeof *reqs);
    uint32_t n = 0, i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        path_buf b;
        const char *ipath = path_join(&b, path, "[%u]", i++);
        if (!compile_expression(c, item, ipath, &reqs[n]) || !check_field(c, item, ipath, &reqs[n]))
            return false;
        n++;
    }
    sort_requirements(reqs, n);
    out->n = n;
    out->reqs = reqs;
    return true;
}

bool ls_node_selector_term_compile(const cJSON *json, ls_arena *a, ls_node_selector_term *out,
                                   const char *field_path, ls_error *err, const cJSON **bad)
{
    compiler c = {a, err, bad, true};
    memset(out, 0, sizeof *out);
    if (!json || cJSON_IsNull(json))
        return true;
    if (!cJSON_IsObject(json))
        return fail(&c, json, field_path, "expected an object");
    path_buf be, bf;
    const char *epath = path_join(&be, field_path, "matchExpressions");
    const char *fpath = path_join(&bf, field_path, "matchFields");
    const cJSON *exprs = ls_json_member(json, "matchExpressions"), *fields = ls_json_member(json, "matchFields");
    if (!optional_of(&c, exprs, epath, true) || !optional_of(&c, fields, fpath, true))
        return false;
    ls_requirement *reqs = ls_arena_alloc(a, size_of(exprs) * sizeof *reqs);
    uint32_t n = 0;
    if (!compile_expressions(&c, exprs, epath, reqs, &n))
        return false;
    sort_requirements(reqs, n);
    out->exprs.n = n;
    out->exprs.reqs = reqs;
    return compile_term_fields(&c, fields, fpath, &out->fields);
}

void ls_selector_and(ls_selector *sel, const ls_requirement *extra, uint32_t n, ls_arena *a)
{
    if (sel->match_nothing || n == 0)
        return;
    ls_requirement *reqs = ls_arena_alloc(a, (sel->n + n) * sizeof *reqs);
    if (sel->n)
        memcpy(reqs, sel->reqs, sel->n * sizeof *reqs);
    memcpy(reqs + sel->n, extra, n * sizeof *reqs);
    sort_requirements(reqs, sel->n + n);
    sel->n += n;
    sel->reqs = reqs;
}
