/*
 * fuzz_selector.c: label selector compiling and matching (model/labels.c).
 *
 * The input is parsed by cJSON and compiled twice: as a metav1.LabelSelector
 * (ls_selector_compile) and as a v1.NodeSelectorTerm (matchExpressions with
 * Gt/Lt, matchFields). Each compiled selector is matched against a fixed label
 * set, an empty one, and one made from the selector's own keys and values (so
 * that matches are found too), and every answer is compared with a plain
 * reading of the JSON: string compares and linear scans, no interning, no
 * sorting, no binary search.
 */
#include "fuzz_model.h"

#include <cjson/cJSON.h>

#include "model/labels_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_intern_prepare();
    return 0;
}

/* ---- label sets as plain strings */

enum { MAX_LABELS = 64 };

typedef struct plain_labels {
    uint32_t n;
    const char *key[MAX_LABELS], *value[MAX_LABELS];
} plain_labels;

/* A later value for the same key replaces the earlier one, as in a JSON map. */
static void plain_set(plain_labels *l, const char *key, const char *value)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (strcmp(l->key[i], key) == 0) {
            l->value[i] = value;
            return;
        }
    }
    if (l->n < MAX_LABELS) {
        l->key[l->n] = key;
        l->value[l->n++] = value;
    }
}

static const char *plain_get(const plain_labels *l, const char *key)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->key[i], key) == 0)
            return l->value[i];
    return NULL;
}

static ls_labels to_labels(const plain_labels *l, ls_label *buf)
{
    uint32_t n = l->n;
    for (uint32_t i = 0; i < n; i++) {
        buf[i].key = ls_intern_cstr(l->key[i]);
        buf[i].value = ls_intern_cstr(l->value[i]);
    }
    ls_labels_sort(buf, &n);
    return (ls_labels){n, buf};
}

static const cJSON *member(const cJSON *obj, const char *name)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNull(j) ? NULL : j;
}

/* Keys and first values the selector mentions, as labels. */
static void derive_labels(const cJSON *json, plain_labels *l)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, member(json, "matchLabels")) {
        if (item->string && cJSON_IsString(item))
            plain_set(l, item->string, item->valuestring);
    }
    cJSON_ArrayForEach(item, member(json, "matchExpressions")) {
        const cJSON *key = member(item, "key"), *values = member(item, "values");
        const cJSON *first = cJSON_IsArray(values) ? values->child : NULL;
        if (cJSON_IsString(key))
            plain_set(l, key->valuestring, cJSON_IsString(first) ? first->valuestring : "");
    }
}

/* ---- the plain reading of a compiled-OK selector */

static bool plain_in(const cJSON *values, const char *value)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, values) {
        if (strcmp(v->valuestring, value) == 0)
            return true;
    }
    return false;
}

static bool plain_expression(const cJSON *expr, const char *value)
{
    const char *op = member(expr, "operator")->valuestring;
    const cJSON *values = member(expr, "values");
    int64_t have, want;
    if (strcmp(op, "In") == 0)
        return value && plain_in(values, value);
    if (strcmp(op, "NotIn") == 0)
        return !value || !plain_in(values, value);
    if (strcmp(op, "Exists") == 0)
        return value != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return value == NULL;
    FUZZ_CHECK(ls_parse_int64(values->child->valuestring, &want), "Gt/Lt compiled without a number");
    if (!value || !ls_parse_int64(value, &have))
        return false;
    return strcmp(op, "Gt") == 0 ? have > want : have < want;
}

static bool plain_expressions(const cJSON *exprs, const plain_labels *l)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, exprs) {
        if (!plain_expression(e, plain_get(l, member(e, "key")->valuestring)))
            return false;
    }
    return true;
}

static bool plain_selector(const cJSON *json, const plain_labels *l)
{
    if (!json || cJSON_IsNull(json))
        return false;
    const cJSON *item;
    cJSON_ArrayForEach(item, member(json, "matchLabels")) {
        const char *v = plain_get(l, item->string);
        if (!v || strcmp(v, item->valuestring) != 0)
            return false;
    }
    return plain_expressions(member(json, "matchExpressions"), l);
}

static bool plain_term(const cJSON *json, const plain_labels *l, const char *node_name)
{
    const cJSON *exprs = member(json, "matchExpressions"), *fields = member(json, "matchFields");
    if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
        return false;
    if (!plain_expressions(exprs, l))
        return false;
    const cJSON *f;
    cJSON_ArrayForEach(f, fields) {
        if (!plain_expression(f, node_name))
            return false;
    }
    return true;
}

/* ---- the target */

static void check_both_ways(const cJSON *json, const ls_selector *sel, const ls_node_selector_term *term,
                            const plain_labels *l, const char *node_name)
{
    ls_label buf[MAX_LABELS];
    ls_node node = {0};
    node.name = ls_intern_cstr(node_name);
    node.labels = to_labels(l, buf);
    if (sel) {
        bool got = ls_selector_matches(sel, &node.labels), want = plain_selector(json, l);
        FUZZ_CHECK(got == want, "selector matches %d, plain reading says %d", got, want);
    }
    if (term) {
        bool got = ls_node_selector_term_matches(term, &node), want = plain_term(json, l, node_name);
        FUZZ_CHECK(got == want, "node selector term matches %d, plain reading says %d", got, want);
        ls_node_selector nsel = {1, term};
        FUZZ_CHECK(ls_node_selector_matches(&nsel, &node) == got, "one-term node selector differs");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_intern_prepare();
    cJSON *json = cJSON_ParseWithLength((const char *)data, size);
    if (!json)
        return 0;

    ls_arena a;
    ls_arena_init(&a);
    ls_error err = {{0}};
    ls_selector sel;
    const cJSON *bad = NULL;
    bool sel_ok = ls_selector_compile(json, &a, &sel, "spec.selector", &err);
    if (sel_ok)
        fuzz_check_selector(&sel);
    else
        FUZZ_CHECK(strncmp(err.msg, "spec.selector", 13) == 0, "error without its path: \"%s\"", err.msg);
    memset(&err, 0, sizeof err);
    ls_node_selector_term term;
    bool term_ok = ls_node_selector_term_compile(json, &a, &term, "spec.term", &err, &bad);
    if (term_ok)
        fuzz_check_node_term(&term);
    else
        FUZZ_CHECK(err.msg[0] && bad, "term error without a message or a culprit: \"%s\"", err.msg);

    static const char *const fixed[][2] = {
        {"app", "web"},      {"tier", "frontend"}, {"zone", "a"},  {"version", "3"},
        {"gpu", ""},         {"num", "-12"},       {"big", "9223372036854775807"},
        {"kubernetes.io/hostname", "node-1"},
    };
    plain_labels sets[3] = {{0}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        plain_set(&sets[0], fixed[i][0], fixed[i][1]);
    derive_labels(json, &sets[2]);
    const ls_selector *s = sel_ok ? &sel : NULL;
    const ls_node_selector_term *t = term_ok ? &term : NULL;
    for (int i = 0; i < 3; i++) {
        check_both_ways(json, s, t, &sets[i], "node-1");
        /* the name a matchFields entry asks for, to reach the matching side */
        const cJSON *f = term_ok && cJSON_IsArray(member(json, "matchFields")) ? member(json, "matchFields")->child
                                                                                : NULL;
        const cJSON *v = f ? member(f, "values") : NULL;
        if (v && cJSON_IsString(v->child))
            check_both_ways(json, s, t, &sets[i], v->child->valuestring);
    }

    ls_arena_free(&a);
    cJSON_Delete(json);
    return 0;
}
