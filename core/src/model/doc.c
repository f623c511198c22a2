/*
 * doc.c: the document loader. It turns one input file, JSON or YAML, into a
 * set of cJSON objects (one per manifest) plus a side table mapping every node
 * to the line it came from, and reports malformed input as "file:line:col:
 * what was expected". It knows nothing about what the objects mean; the
 * decoders in model/ and config/ do.
 *
 * Ownership rule that the line table depends on: no node that ever entered the
 * table is freed before the set is. Nodes that leave the trees (List wrappers,
 * "<<" merge sources, anchored keys, null documents) go to set->retired
 * instead, so their addresses cannot be reused by a later allocation and
 * inherit a stale line. Anchors also point into the trees, which is the other
 * reason a node may never be freed while its document is being built. (On a
 * failure partial trees are freed at once: the whole set goes with them.)
 */
#include "model/doc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* Manifests nest a few dozen levels at most; the limit only keeps the
 * recursive builders (and cJSON_Delete) off the end of the stack. It is below
 * cJSON's own limit of 1000 so that our scanner, not cJSON, reports it. */
#define DOC_MAX_DEPTH 512
/* Guard against "billion laughs": nested aliases can expand exponentially. */
#define DOC_MAX_ALIAS_NODES 100000

struct ls_doc_set {
    char *source;
    cJSON **docs;
    uint32_t count, cap;
    cJSON *retired;   /* array of trees kept only so their addresses stay taken */
    /* line table: open addressing on node addresses, cap a power of two */
    const cJSON **line_keys;
    int *line_vals;
    uint32_t line_len, line_cap;
};

/* ---- small helpers */

static cJSON *doc_new(cJSON *node)
{
    if (!node) {
        fprintf(stderr, "luasched: out of memory (cJSON)\n");
        abort();
    }
    return node;
}

static void doc_add_member(cJSON *obj, const char *key, cJSON *value)
{
    if (!cJSON_AddItemToObject(obj, key, value)) {
        fprintf(stderr, "luasched: out of memory (cJSON key)\n");
        abort();
    }
}

static void doc_retire(ls_doc_set *d, cJSON *node)
{
    if (node)
        cJSON_AddItemToArray(d->retired, node);
}

static char *doc_strndup(const char *s, size_t n)
{
    char *p = ls_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* A number that remembers how it was written. The text goes through cJSON's
 * allocator because cJSON_Delete is what frees it. */
static cJSON *doc_number(double value, const char *text, size_t len)
{
    cJSON *n = doc_new(cJSON_CreateNumber(value));
    n->valuestring = cJSON_malloc(len + 1);
    if (!n->valuestring) {
        fprintf(stderr, "luasched: out of memory (cJSON)\n");
        abort();
    }
    memcpy(n->valuestring, text, len);
    n->valuestring[len] = '\0';
    return n;
}

/* 1-based line and column (in characters, like libyaml's marks) of pos. */
static void doc_position(const char *base, const char *pos, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (const char *p = base; p < pos; p++) {
        if (*p == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static bool doc_fail_line(const ls_doc_set *d, ls_error *err, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool doc_fail_line(const ls_doc_set *d, ls_error *err, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        return ls_errorf(err, "%s:%d: %s", d->source, line, msg);
    return ls_errorf(err, "%s: %s", d->source, msg);
}

static bool doc_fail_pos(const ls_doc_set *d, ls_error *err, size_t line, size_t col,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static bool doc_fail_pos(const ls_doc_set *d, ls_error *err, size_t line, size_t col,
                         const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ls_errorf(err, "%s:%zu:%zu: %s", d->source, line, col, msg);
}

/* ---- line table */

static uint32_t doc_line_slot(const ls_doc_set *d, const cJSON *node)
{
    uint64_t h = (uint64_t)(uintptr_t)node * 0x9E3779B97F4A7C15ull;
    uint32_t mask = d->line_cap - 1;
    uint32_t i = (uint32_t)(h >> 32) & mask;
    while (d->line_keys[i] && d->line_keys[i] != node)
        i = (i + 1) & mask;
    return i;
}

static void doc_line_grow(ls_doc_set *d)
{
    const cJSON **old_keys = d->line_keys;
    int *old_vals = d->line_vals;
    uint32_t old_cap = d->line_cap;
    d->line_cap = old_cap ? old_cap * 2 : 256;
    d->line_keys = ls_xcalloc(d->line_cap, sizeof *d->line_keys);
    d->line_vals = ls_xcalloc(d->line_cap, sizeof *d->line_vals);
    for (uint32_t i = 0; i < old_cap; i++) {
        if (!old_keys[i])
            continue;
        uint32_t j = doc_line_slot(d, old_keys[i]);
        d->line_keys[j] = old_keys[i];
        d->line_vals[j] = old_vals[i];
    }
    free(old_keys);
    free(old_vals);
}

static void doc_set_line(ls_doc_set *d, const cJSON *node, int line)
{
    if ((d->line_len + 1) * 2 > d->line_cap)
        doc_line_grow(d);
    uint32_t i = doc_line_slot(d, node);
    if (!d->line_keys[i]) {
        d->line_keys[i] = node;
        d->line_len++;
    }
    d->line_vals[i] = line;
}

/* ---- checks shared by both formats */

typedef struct doc_key_ref {
    const char *key;
    const cJSON *node;
    uint32_t order;
} doc_key_ref;

static int doc_key_ref_cmp(const void *a, const void *b)
{
    const doc_key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The member that repeats an earlier key, first in document order, or NULL.
 * Sorting keeps big maps (ConfigMap data, annotations) from going quadratic;
 * the usual handful of keys is sorted on the stack. */
static const cJSON *doc_find_duplicate(const cJSON *obj)
{
    uint32_t n = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        n++;
    if (n < 2)
        return NULL;
    doc_key_ref small[16];
    doc_key_ref *refs = n <= 16 ? small : ls_xmalloc(n * sizeof *refs);
    uint32_t i = 0;
    for (const cJSON *c = obj->child; c; c = c->next, i++)
        refs[i] = (doc_key_ref){c->string ? c->string : "", c, i};
    qsort(refs, n, sizeof *refs, doc_key_ref_cmp);
    const doc_key_ref *dup = NULL;
    for (i = 1; i < n; i++) {
        if (strcmp(refs[i - 1].key, refs[i].key) == 0 && (!dup || refs[i].order < dup->order))
            dup = &refs[i];
    }
    const cJSON *found = dup ? dup->node : NULL;
    if (refs != small)
        free(refs);
    return found;
}

static bool doc_check_duplicates(const ls_doc_set *d, const cJSON *obj, ls_error *err)
{
    const cJSON *dup = doc_find_duplicate(obj);
    if (!dup)
        return true;
    return doc_fail_line(d, err, ls_doc_line(d, dup), "duplicate key \"%s\"", dup->string);
}

static const char *doc_type_name(const cJSON *n, bool yaml)
{
    if (cJSON_IsArray(n))
        return yaml ? "a sequence" : "an array";
    if (cJSON_IsString(n))
        return "a string";
    if (cJSON_IsNumber(n))
        return "a number";
    if (cJSON_IsBool(n))
        return "a boolean";
    if (cJSON_IsObject(n))
        return yaml ? "a mapping" : "an object";
    return "null";
}

/* ---- top-level documents and List expansion */

static bool doc_add_root(ls_doc_set *d, cJSON *root, bool yaml, ls_error *err);

/* Whether obj is a list to expand. *kind is its kind and *elem_len how much of
 * it names the items: "PodList" -> "Pod" (3), a plain "List" -> nothing (0). */
static bool doc_list_kind(const cJSON *obj, const char **kind, size_t *elem_len)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(obj, "items");
    if (!cJSON_IsString(k) || !cJSON_IsArray(items))
        return false;
    size_t n = strlen(k->valuestring);
    if (n < 4 || strcmp(k->valuestring + n - 4, "List") != 0)
        return false;
    *kind = k->valuestring;
    *elem_len = n - 4;
    return true;
}

static void doc_infer_field(ls_doc_set *d, cJSON *item, const char *key, const char *value,
                            size_t len)
{
    if (cJSON_GetObjectItemCaseSensitive(item, key))
        return;
    char *v = doc_strndup(value, len);
    cJSON *s = doc_new(cJSON_CreateString(v));
    free(v);
    doc_add_member(item, key, s);
    doc_set_line(d, s, ls_doc_line(d, item));
}

/* A "FooList" says what its items are, and kubectl lets items omit it. A plain
 * "List" mixes kinds, so there is nothing to infer. */
static void doc_infer_item_type(ls_doc_set *d, cJSON *item, const char *kind, size_t elem_len,
                                const cJSON *api)
{
    if (!cJSON_IsObject(item) || elem_len == 0)
        return;
    doc_infer_field(d, item, "kind", kind, elem_len);
    if (cJSON_IsString(api))
        doc_infer_field(d, item, "apiVersion", api->valuestring, strlen(api->valuestring));
}

static bool doc_expand_list(ls_doc_set *d, cJSON *list, const char *kind, size_t elem_len,
                            bool yaml, ls_error *err)
{
    doc_retire(d, list);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(list, "apiVersion");
    while (items->child) {
        cJSON *item = cJSON_DetachItemViaPointer(items, items->child);
        doc_infer_item_type(d, item, kind, elem_len, api);
        if (!doc_add_root(d, item, yaml, err))
            return false;
    }
    return true;
}

/* Takes ownership of root. */
static bool doc_add_root(ls_doc_set *d, cJSON *root, bool yaml, ls_error *err)
{
    if (cJSON_IsNull(root)) {
        doc_retire(d, root);
        return true;
    }
    if (!cJSON_IsObject(root)) {
        doc_retire(d, root);
        return doc_fail_line(d, err, ls_doc_line(d, root),
                             "expected an object (a Kubernetes manifest), found %s",
                             doc_type_name(root, yaml));
    }
    const char *kind;
    size_t elem_len;
    if (doc_list_kind(root, &kind, &elem_len))
        return doc_expand_list(d, root, kind, elem_len, yaml, err);
    if (d->count == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->docs = ls_xrealloc(d->docs, d->cap * sizeof *d->docs);
    }
    d->docs[d->count++] = root;
    return true;
}

/* ---- YAML scalars */

typedef enum doc_scalar_kind {
    SC_STR,
    SC_NULL,
    SC_TRUE,
    SC_FALSE,
    SC_INT,     /* decimal */
    SC_RADIX,   /* 0x.., 0o.., or YAML 1.1 leading-zero octal as Kubernetes reads it */
    SC_FLOAT,
} doc_scalar_kind;

static bool doc_is_one_of(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++) {
        if (strlen(*words) == n && memcmp(s, *words, n) == 0)
            return true;
    }
    return false;
}

static size_t doc_span(const char *s, size_t n, const char *set)
{
    size_t i = 0;
    while (i < n && s[i] && strchr(set, s[i]))
        i++;
    return i;
}

#define DOC_DIGITS "0123456789"

static bool doc_is_decimal_int(const char *s, size_t n)
{
    size_t i = (n > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    size_t digits = doc_span(s + i, n - i, DOC_DIGITS);
    return digits > 0 && i + digits == n;
}

static bool doc_is_radix_int(const char *s, size_t n)
{
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return doc_span(s + 2, n - 2, DOC_DIGITS "abcdefABCDEF") == n - 2;
    if (n > 2 && s[0] == '0' && s[1] == 'o')
        return doc_span(s + 2, n - 2, "01234567") == n - 2;
    return n > 1 && s[0] == '0' && doc_span(s + 1, n - 1, "01234567") == n - 1;
}

/* [-+]? ( \.[0-9]+ | [0-9]+ (\.[0-9]*)? ) ([eE][-+]?[0-9]+)? */
static bool doc_is_float(const char *s, size_t n)
{
    size_t i = (n > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    size_t whole = doc_span(s + i, n - i, DOC_DIGITS);
    i += whole;
    if (i < n && s[i] == '.') {
        size_t frac = doc_span(s + i + 1, n - i - 1, DOC_DIGITS);
        if (!whole && !frac)
            return false;
        i += 1 + frac;
    } else if (!whole) {
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t exp = doc_span(s + i, n - i, DOC_DIGITS);
        if (!exp)
            return false;
        i += exp;
    }
    return i == n;
}

static doc_scalar_kind doc_classify(const char *s, size_t n)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    if (n == 0 || doc_is_one_of(s, n, nulls))
        return SC_NULL;
    if (doc_is_one_of(s, n, trues))
        return SC_TRUE;
    if (doc_is_one_of(s, n, falses))
        return SC_FALSE;
    if (doc_is_radix_int(s, n))
        return SC_RADIX;
    if (doc_is_decimal_int(s, n))
        return SC_INT;
    if (doc_is_float(s, n))
        return SC_FLOAT;
    return SC_STR;
}

/* Hex and octal get their decimal spelling as text: that is what Kubernetes
 * would hand on, and what a quantity parser understands. One that overflows
 * 64 bits stays a string, as it does there. */
static cJSON *doc_radix_number(const char *s)
{
    int base = 8;
    const char *digits = s + 1;
    if (s[1] == 'x' || s[1] == 'X' || s[1] == 'o') {
        base = s[1] == 'o' ? 8 : 16;
        digits = s + 2;
    }
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, base);
    if (errno == ERANGE)
        return doc_new(cJSON_CreateString(s));
    char text[32];
    int len = snprintf(text, sizeof text, "%llu", v);
    return doc_number((double)v, text, (size_t)len);
}

/* s is NUL-terminated (libyaml terminates scalar values). */
static cJSON *doc_scalar_node(doc_scalar_kind kind, const char *s, size_t n)
{
    switch (kind) {
    case SC_NULL:
        return doc_new(cJSON_CreateNull());
    case SC_TRUE:
        return doc_new(cJSON_CreateTrue());
    case SC_FALSE:
        return doc_new(cJSON_CreateFalse());
    case SC_RADIX:
        return doc_radix_number(s);
    case SC_INT:
    case SC_FLOAT:
        return doc_number(strtod(s, NULL), s, n);
    case SC_STR:
        break;
    }
    return doc_new(cJSON_CreateString(s));
}

/* ---- YAML builder: libyaml events -> cJSON */

typedef struct yb_anchor {
    char *name;
    const cJSON *node;   /* NULL while the anchored node is still being built */
} yb_anchor;

typedef struct yaml_builder {
    yaml_parser_t parser;
    ls_doc_set *set;
    ls_error *err;
    const char *text;
    size_t len;
    ls_vec anchors;        /* yb_anchor; anchors are scoped to one document */
    size_t alias_nodes;    /* nodes created by expanding aliases and merges */
} yaml_builder;

static void *yb_fail_at(yaml_builder *b, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void *yb_fail_at(yaml_builder *b, yaml_mark_t mark, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    doc_fail_pos(b->set, b->err, mark.line + 1, mark.column + 1, "%s", msg);
    return NULL;
}

static bool yb_parser_error(yaml_builder *b)
{
    const yaml_parser_t *p = &b->parser;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_MEMORY_ERROR)
        return doc_fail_line(b->set, b->err, 0, "out of memory while parsing YAML");
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset, not a mark. */
        size_t line, col, off = p->problem_offset < b->len ? p->problem_offset : b->len;
        doc_position(b->text, b->text + off, &line, &col);
        if (p->problem_value != -1)
            return doc_fail_pos(b->set, b->err, line, col, "%s (byte 0x%02X)", problem,
                                (unsigned)p->problem_value);
        return doc_fail_pos(b->set, b->err, line, col, "%s", problem);
    }
    size_t line = p->problem_mark.line + 1, col = p->problem_mark.column + 1;
    if (p->context)
        return doc_fail_pos(b->set, b->err, line, col, "%s (%s at line %zu, column %zu)",
                            problem, p->context, p->context_mark.line + 1,
                            p->context_mark.column + 1);
    return doc_fail_pos(b->set, b->err, line, col, "%s", problem);
}

static bool yb_next(yaml_builder *b, yaml_event_t *ev)
{
    if (yaml_parser_parse(&b->parser, ev))
        return true;
    return yb_parser_error(b);
}

static int yb_line(yaml_mark_t mark)
{
    return (int)mark.line + 1;
}

static const char *yb_event_anchor(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return (const char *)ev->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
        return (const char *)ev->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
        return (const char *)ev->data.mapping_start.anchor;
    default:
        return NULL;
    }
}

static uint32_t yb_anchor_open(yaml_builder *b, const char *name)
{
    yb_anchor *a = ls_vec_push(&b->anchors);
    a->name = ls_xstrdup(name);
    return b->anchors.len - 1;
}

/* The latest definition wins, as YAML says. */
static const yb_anchor *yb_anchor_find(const yaml_builder *b, const char *name)
{
    for (uint32_t i = b->anchors.len; i-- > 0;) {
        const yb_anchor *a = &LS_VEC_AT(&b->anchors, yb_anchor, i);
        if (strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

static void yb_anchors_clear(yaml_builder *b)
{
    for (uint32_t i = 0; i < b->anchors.len; i++)
        free(LS_VEC_AT(&b->anchors, yb_anchor, i).name);
    b->anchors.len = 0;
}

static cJSON *yb_node(yaml_builder *b, yaml_event_t *ev, int depth);

/* Deep copy for aliases and merges; the copy keeps the original's lines. */
static cJSON *yb_copy(yaml_builder *b, const cJSON *src, int depth, yaml_mark_t at)
{
    if (depth > DOC_MAX_DEPTH)
        return yb_fail_at(b, at, "nesting deeper than %d levels", DOC_MAX_DEPTH);
    if (++b->alias_nodes > DOC_MAX_ALIAS_NODES)
        return yb_fail_at(b, at, "aliases expand to more than %d nodes", DOC_MAX_ALIAS_NODES);
    cJSON *dst;
    if (cJSON_IsNumber(src) && src->valuestring)
        dst = doc_number(src->valuedouble, src->valuestring, strlen(src->valuestring));
    else if (cJSON_IsNumber(src))
        dst = doc_new(cJSON_CreateNumber(src->valuedouble));
    else if (cJSON_IsString(src))
        dst = doc_new(cJSON_CreateString(src->valuestring));
    else if (cJSON_IsBool(src))
        dst = doc_new(cJSON_CreateBool(cJSON_IsTrue(src)));
    else if (cJSON_IsArray(src))
        dst = doc_new(cJSON_CreateArray());
    else if (cJSON_IsObject(src))
        dst = doc_new(cJSON_CreateObject());
    else
        dst = doc_new(cJSON_CreateNull());
    doc_set_line(b->set, dst, ls_doc_line(b->set, src));
    for (const cJSON *c = src->child; c; c = c->next) {
        cJSON *cc = yb_copy(b, c, depth + 1, at);
        if (!cc) {
            cJSON_Delete(dst);
            return NULL;
        }
        if (cJSON_IsObject(dst))
            doc_add_member(dst, c->string, cc);
        else
            cJSON_AddItemToArray(dst, cc);
    }
    return dst;
}

static cJSON *yb_alias(yaml_builder *b, const yaml_event_t *ev, int depth)
{
    const char *name = (const char *)ev->data.alias.anchor;
    const yb_anchor *a = yb_anchor_find(b, name);
    if (!a)
        return yb_fail_at(b, ev->start_mark, "undefined alias \"%s\"", name);
    if (!a->node)
        return yb_fail_at(b, ev->start_mark, "alias \"%s\" refers to a node that contains it",
                          name);
    cJSON *copy = yb_copy(b, a->node, depth, ev->start_mark);
    if (copy)
        doc_set_line(b->set, copy, yb_line(ev->start_mark));
    return copy;
}

#define YB_TAG(name) "tag:yaml.org,2002:" name

/* Explicit core tags decide the type whatever the style; "!" and !!str force a
 * string; other tags (custom ones, !!binary...) are ignored, as in Kubernetes. */
static cJSON *yb_scalar(yaml_builder *b, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    doc_scalar_kind kind = plain ? doc_classify(s, n) : SC_STR;
    if (tag && (strcmp(tag, "!") == 0 || strcmp(tag, YB_TAG("str")) == 0)) {
        kind = SC_STR;
    } else if (tag && strncmp(tag, YB_TAG(""), strlen(YB_TAG(""))) == 0) {
        const char *t = tag + strlen(YB_TAG(""));
        doc_scalar_kind k = doc_classify(s, n);
        bool ok = true;
        if (strcmp(t, "null") == 0)
            ok = k == SC_NULL;
        else if (strcmp(t, "bool") == 0)
            ok = k == SC_TRUE || k == SC_FALSE;
        else if (strcmp(t, "int") == 0)
            ok = k == SC_INT || k == SC_RADIX;
        else if (strcmp(t, "float") == 0)
            ok = k == SC_INT || k == SC_RADIX || k == SC_FLOAT;
        else
            k = kind;
        if (!ok)
            return yb_fail_at(b, ev->start_mark, "\"%s\" is not a valid !!%s", s, t);
        kind = k;
    }
    cJSON *node = doc_scalar_node(kind, s, n);
    doc_set_line(b->set, node, yb_line(ev->start_mark));
    return node;
}

static cJSON *yb_sequence(yaml_builder *b, const yaml_event_t *start, int depth)
{
    cJSON *arr = doc_new(cJSON_CreateArray());
    doc_set_line(b->set, arr, yb_line(start->start_mark));
    for (;;) {
        yaml_event_t ev;
        if (!yb_next(b, &ev))
            break;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return arr;
        }
        cJSON *item = yb_node(b, &ev, depth + 1);
        if (!item)
            break;
        cJSON_AddItemToArray(arr, item);
    }
    cJSON_Delete(arr);
    return NULL;
}

/* JSON keys are strings: a scalar key is taken as written ("1", "true"), an
 * alias by the text of what it names. Collections cannot be keys. */
static char *yb_key_text(yaml_builder *b, yaml_event_t *ev, int depth)
{
    if (ev->type == YAML_SCALAR_EVENT && !ev->data.scalar.anchor) {
        char *key = doc_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        yaml_event_delete(ev);
        return key;
    }
    if (ev->type != YAML_SCALAR_EVENT && ev->type != YAML_ALIAS_EVENT) {
        yb_fail_at(b, ev->start_mark, "mapping keys must be scalars (JSON has no other keys)");
        yaml_event_delete(ev);
        return NULL;
    }
    yaml_mark_t mark = ev->start_mark;
    cJSON *node = yb_node(b, ev, depth + 1);
    if (!node)
        return NULL;
    doc_retire(b->set, node);   /* it may be anchored: keep it alive */
    if (cJSON_IsString(node) || (cJSON_IsNumber(node) && node->valuestring))
        return ls_xstrdup(node->valuestring);
    if (cJSON_IsBool(node))
        return ls_xstrdup(cJSON_IsTrue(node) ? "true" : "false");
    if (cJSON_IsNull(node))
        return ls_xstrdup("null");
    yb_fail_at(b, mark, "mapping keys must be scalars (JSON has no other keys)");
    return NULL;
}

static bool yb_merge_one(yaml_builder *b, cJSON *obj, const cJSON *src, int depth,
                         yaml_mark_t at)
{
    for (const cJSON *m = src->child; m; m = m->next) {
        if (cJSON_GetObjectItemCaseSensitive(obj, m->string))
            continue;
        cJSON *copy = yb_copy(b, m, depth + 1, at);
        if (!copy)
            return false;
        doc_add_member(obj, m->string, copy);
    }
    return true;
}

/* "<<: *base" (or a sequence of them): keys written in the mapping win, then
 * earlier sources over later ones, as the YAML merge-key spec says. Values are
 * copied, not moved, because the source may be anchored and aliased again. */
static bool yb_apply_merge(yaml_builder *b, cJSON *obj, const cJSON *src, int depth,
                           yaml_mark_t at)
{
    if (cJSON_IsObject(src))
        return yb_merge_one(b, obj, src, depth, at);
    if (cJSON_IsArray(src)) {
        const cJSON *m;
        for (m = src->child; m && cJSON_IsObject(m); m = m->next) {
            if (!yb_merge_one(b, obj, m, depth, at))
                return false;
        }
        if (!m)
            return true;
    }
    return doc_fail_line(b->set, b->err, ls_doc_line(b->set, src),
                         "the value of a \"<<\" merge key must be a mapping or a sequence of "
                         "mappings");
}

static bool yb_is_merge_key(const yaml_event_t *ev)
{
    return ev->type == YAML_SCALAR_EVENT && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           !ev->data.scalar.tag && ev->data.scalar.length == 2 &&
           memcmp(ev->data.scalar.value, "<<", 2) == 0;
}

/* One key/value pair; consumes key_ev. A merge value is parked in *merge
 * until the mapping is complete, since explicit keys after it still win. */
static bool yb_member(yaml_builder *b, cJSON *obj, yaml_event_t *key_ev, cJSON **merge,
                      int depth)
{
    int key_line = yb_line(key_ev->start_mark);
    bool is_merge = yb_is_merge_key(key_ev);
    char *key = yb_key_text(b, key_ev, depth);
    if (!key)
        return false;
    yaml_event_t ev;
    cJSON *value = yb_next(b, &ev) ? yb_node(b, &ev, depth + 1) : NULL;
    if (value && is_merge && *merge) {
        doc_retire(b->set, value);
        value = NULL;
        doc_fail_line(b->set, b->err, key_line, "duplicate key \"<<\"");
    }
    if (value) {
        doc_set_line(b->set, value, key_line);
        if (is_merge)
            *merge = value;
        else
            doc_add_member(obj, key, value);
    }
    free(key);
    return value != NULL;
}

static cJSON *yb_mapping(yaml_builder *b, const yaml_event_t *start, int depth)
{
    cJSON *obj = doc_new(cJSON_CreateObject());
    cJSON *merge = NULL;
    doc_set_line(b->set, obj, yb_line(start->start_mark));
    for (;;) {
        yaml_event_t ev;
        if (!yb_next(b, &ev))
            goto fail;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (!yb_member(b, obj, &ev, &merge, depth))
            goto fail;
    }
    if (!doc_check_duplicates(b->set, obj, b->err))
        goto fail;
    if (merge) {
        doc_retire(b->set, merge);
        if (!yb_apply_merge(b, obj, merge, depth, start->start_mark)) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
fail:
    doc_retire(b->set, merge);
    cJSON_Delete(obj);
    return NULL;
}

/* Builds the node that ev starts, consuming ev and the events up to its end. */
static cJSON *yb_node(yaml_builder *b, yaml_event_t *ev, int depth)
{
    cJSON *node = NULL;
    const char *anchor = yb_event_anchor(ev);
    uint32_t slot = 0;
    if (depth > DOC_MAX_DEPTH) {
        yb_fail_at(b, ev->start_mark, "nesting deeper than %d levels", DOC_MAX_DEPTH);
        yaml_event_delete(ev);
        return NULL;
    }
    if (anchor)
        slot = yb_anchor_open(b, anchor);
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        node = yb_scalar(b, ev);
        break;
    case YAML_SEQUENCE_START_EVENT:
        node = yb_sequence(b, ev, depth);
        break;
    case YAML_MAPPING_START_EVENT:
        node = yb_mapping(b, ev, depth);
        break;
    case YAML_ALIAS_EVENT:
        node = yb_alias(b, ev, depth);
        break;
    default:
        yb_fail_at(b, ev->start_mark, "unexpected YAML event %d", (int)ev->type);
        break;
    }
    if (node && anchor)
        LS_VEC_AT(&b->anchors, yb_anchor, slot).node = node;
    yaml_event_delete(ev);
    return node;
}

static bool yb_document(yaml_builder *b)
{
    yaml_event_t ev;
    if (!yb_next(b, &ev))
        return false;
    cJSON *root = yb_node(b, &ev, 0);
    yb_anchors_clear(b);
    return root && doc_add_root(b->set, root, true, b->err);
}

static bool yb_stream(yaml_builder *b)
{
    for (;;) {
        yaml_event_t ev;
        if (!yb_next(b, &ev))
            return false;
        yaml_event_type_t type = ev.type;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            return true;
        if (type == YAML_DOCUMENT_START_EVENT && !yb_document(b))
            return false;
    }
}

static bool doc_parse_yaml(ls_doc_set *d, const char *text, size_t len, ls_error *err)
{
    yaml_builder b;
    memset(&b, 0, sizeof b);
    if (!yaml_parser_initialize(&b.parser))
        return doc_fail_line(d, err, 0, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    b.set = d;
    b.err = err;
    b.text = text;
    b.len = len;
    ls_vec_init(&b.anchors, sizeof(yb_anchor));
    bool ok = yb_stream(&b);
    yb_anchors_clear(&b);
    ls_vec_free(&b.anchors);
    yaml_parser_delete(&b.parser);
    return ok;
}

/* ---- JSON: cJSON builds the tree; a strict scanner walks the same text
 * alongside it to attach lines and number text, and, when cJSON refuses the
 * input, to say where and what was expected (cJSON only gives a position). */

typedef struct json_scan {
    const char *p, *end;
    int line;
    ls_doc_set *set;
    const char *problem;   /* what was expected at p, on failure */
    const cJSON *dup;      /* or: the member repeating a key */
} json_scan;

static int js_peek(const json_scan *s)
{
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

static bool js_is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static void js_ws(json_scan *s)
{
    for (; s->p < s->end; s->p++) {
        char c = *s->p;
        if (c == '\n')
            s->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
    }
}

static bool js_fail(json_scan *s, const char *problem)
{
    s->problem = problem;
    return false;
}

static bool js_value(json_scan *s, cJSON *node, int depth);

static bool js_escape(json_scan *s)
{
    const char *backslash = s->p++;
    int c = js_peek(s);
    if (c > 0 && strchr("\"\\/bfnrt", c)) {
        s->p++;
        return true;
    }
    if (c == 'u' && s->end - s->p > 4 && doc_span(s->p + 1, 4, DOC_DIGITS "abcdefABCDEF") == 4) {
        s->p += 5;
        return true;
    }
    s->p = backslash;
    return js_fail(s, "invalid escape sequence in string");
}

static bool js_string(json_scan *s)
{
    const char *open = s->p++;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            s->p++;
            return true;
        }
        if (c == '\n')
            break;
        if (c < 0x20)
            return js_fail(s, "control character in string (it must be escaped)");
        if (c == '\\') {
            if (!js_escape(s))
                return false;
        } else {
            s->p++;
        }
    }
    s->p = open;
    return js_fail(s, "unterminated string");
}

static void js_digits(json_scan *s)
{
    while (js_is_digit(js_peek(s)))
        s->p++;
}

static bool js_number(json_scan *s, cJSON *node)
{
    const char *start = s->p;
    if (js_peek(s) == '-')
        s->p++;
    if (js_peek(s) == '0')
        s->p++;
    else if (js_is_digit(js_peek(s)))
        js_digits(s);
    else
        return js_fail(s, "invalid number: expected a digit");
    if (js_peek(s) == '.') {
        s->p++;
        if (!js_is_digit(js_peek(s)))
            return js_fail(s, "invalid number: expected a digit after '.'");
        js_digits(s);
    }
    if (js_peek(s) == 'e' || js_peek(s) == 'E') {
        s->p++;
        if (js_peek(s) == '+' || js_peek(s) == '-')
            s->p++;
        if (!js_is_digit(js_peek(s)))
            return js_fail(s, "invalid number: expected a digit in the exponent");
        js_digits(s);
    }
    if (node) {
        cJSON_free(node->valuestring);
        size_t n = (size_t)(s->p - start);
        node->valuestring = cJSON_malloc(n + 1);
        if (!node->valuestring) {
            fprintf(stderr, "luasched: out of memory (cJSON)\n");
            abort();
        }
        memcpy(node->valuestring, start, n);
        node->valuestring[n] = '\0';
    }
    return true;
}

static bool js_literal(json_scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return js_fail(s, "expected a value");
    s->p += n;
    return true;
}

static bool js_object(json_scan *s, cJSON *node, int depth)
{
    s->p++;
    cJSON *child = node ? node->child : NULL;
    js_ws(s);
    if (js_peek(s) == '}') {
        s->p++;
        return true;
    }
    for (bool first = true;; first = false) {
        js_ws(s);
        if (js_peek(s) != '"')
            return js_fail(s, first ? "expected a string key or '}'" : "expected a string key");
        int key_line = s->line;
        if (!js_string(s))
            return false;
        js_ws(s);
        if (js_peek(s) != ':')
            return js_fail(s, "expected ':'");
        s->p++;
        if (!js_value(s, child, depth + 1))
            return false;
        if (child)
            doc_set_line(s->set, child, key_line);
        js_ws(s);
        if (js_peek(s) == '}')
            break;
        if (js_peek(s) != ',')
            return js_fail(s, "expected ',' or '}'");
        s->p++;
        child = child ? child->next : NULL;
    }
    s->p++;
    s->dup = node ? doc_find_duplicate(node) : NULL;
    return s->dup == NULL;
}

static bool js_array(json_scan *s, cJSON *node, int depth)
{
    s->p++;
    cJSON *child = node ? node->child : NULL;
    js_ws(s);
    if (js_peek(s) == ']') {
        s->p++;
        return true;
    }
    for (;;) {
        if (!js_value(s, child, depth + 1))
            return false;
        js_ws(s);
        if (js_peek(s) == ']')
            break;
        if (js_peek(s) != ',')
            return js_fail(s, "expected ',' or ']'");
        s->p++;
        child = child ? child->next : NULL;
    }
    s->p++;
    return true;
}

static bool js_node_matches(const cJSON *node, int c)
{
    switch (c) {
    case '{':
        return cJSON_IsObject(node);
    case '[':
        return cJSON_IsArray(node);
    case '"':
        return cJSON_IsString(node);
    case 't':
    case 'f':
        return cJSON_IsBool(node);
    case 'n':
        return cJSON_IsNull(node);
    default:
        return cJSON_IsNumber(node);
    }
}

/* node is cJSON's tree for this value, or NULL when only diagnosing. If the
 * two ever disagree the annotation stops there rather than guess. */
static bool js_value(json_scan *s, cJSON *node, int depth)
{
    js_ws(s);
    int c = js_peek(s);
    if (node && !js_node_matches(node, c))
        node = NULL;
    if (node)
        doc_set_line(s->set, node, s->line);
    if ((c == '{' || c == '[') && depth >= DOC_MAX_DEPTH)
        return js_fail(s, "nesting too deep");
    switch (c) {
    case '{':
        return js_object(s, node, depth);
    case '[':
        return js_array(s, node, depth);
    case '"':
        return js_string(s);
    case 't':
        return js_literal(s, "true");
    case 'f':
        return js_literal(s, "false");
    case 'n':
        return js_literal(s, "null");
    default:
        if (c == '-' || js_is_digit(c))
            return js_number(s, node);
        return js_fail(s, "expected a value");
    }
}

static bool js_document(json_scan *s, cJSON *root)
{
    if (!js_value(s, root, 0))
        return false;
    js_ws(s);
    return s->p == s->end || js_fail(s, "expected end of input after the JSON value");
}

static bool doc_parse_json(ls_doc_set *d, const char *text, size_t len, ls_error *err)
{
    const char *stop = NULL;
    /* Not "require_null_terminated": cJSON then wants a NUL inside len. The
     * scanner rejects trailing text instead. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &stop, false);
    json_scan s = {.p = text, .end = text + len, .line = 1, .set = d};
    if (js_document(&s, root) && root)
        return doc_add_root(d, root, false, err);
    if (s.dup) {
        doc_fail_line(d, err, ls_doc_line(d, s.dup), "duplicate key \"%s\"", s.dup->string);
        cJSON_Delete(root);
        return false;
    }
    cJSON_Delete(root);
    size_t line, col;
    if (s.problem) {
        doc_position(text, s.p, &line, &col);
        return doc_fail_pos(d, err, line, col, "invalid JSON: %s", s.problem);
    }
    /* Valid by our reading yet refused by cJSON (e.g. a number too long for
     * its buffer): all we have is where it stopped. */
    doc_position(text, stop && stop >= text && stop <= text + len ? stop : text, &line, &col);
    return doc_fail_pos(d, err, line, col, "invalid JSON (not accepted by the JSON parser)");
}

/* ---- public API */

static bool doc_looks_like_json(const char *text, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && text[i] && strchr(" \t\r\n", text[i]))
        i++;
    return i < len && (text[i] == '{' || text[i] == '[');
}

ls_doc_set *ls_doc_parse(const char *text, size_t len, const char *source_name, ls_error *err)
{
    ls_doc_set *d = ls_xcalloc(1, sizeof *d);
    d->source = ls_xstrdup(source_name ? source_name : "<input>");
    d->retired = doc_new(cJSON_CreateArray());
    if (!text) {
        text = "";
        len = 0;
    }
    bool ok;
    if (doc_looks_like_json(text, len)) {
        /* cJSON does not skip a byte order mark; YAML's reader does. */
        size_t bom = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        ok = doc_parse_json(d, text + bom, len - bom, err);
    } else {
        ok = doc_parse_yaml(d, text, len, err);
    }
    if (!ok) {
        ls_doc_free(d);
        return NULL;
    }
    return d;
}

/* Reads through EOF rather than trusting a size, so pipes and /dev/stdin work. */
static char *doc_read_file(const char *path, size_t *len_out, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_errorf(err, "%s: cannot read file: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, len = 0;
    char *buf = ls_xmalloc(cap);
    for (;;) {
        len += fread(buf + len, 1, cap - len, f);
        if (ferror(f)) {
            int e = errno;
            ls_errorf(err, "%s: cannot read file: %s", path, strerror(e));
            free(buf);
            fclose(f);
            return NULL;
        }
        if (feof(f))
            break;
        if (len == cap)
            buf = ls_xrealloc(buf, cap *= 2);
    }
    fclose(f);
    *len_out = len;
    return buf;
}

ls_doc_set *ls_doc_load_file(const char *path, ls_error *err)
{
    size_t len = 0;
    char *text = doc_read_file(path, &len, err);
    if (!text)
        return NULL;
    ls_doc_set *d = ls_doc_parse(text, len, path, err);
    free(text);
    return d;
}

uint32_t ls_doc_count(const ls_doc_set *d)
{
    return d ? d->count : 0;
}

const cJSON *ls_doc_get(const ls_doc_set *d, uint32_t i)
{
    return d && i < d->count ? d->docs[i] : NULL;
}

int ls_doc_line(const ls_doc_set *d, const cJSON *item)
{
    if (!d || !item || !d->line_cap)
        return 0;
    uint32_t i = doc_line_slot(d, item);
    return d->line_keys[i] ? d->line_vals[i] : 0;
}

int ls_doc_line_of(const cJSON *item, void *ud)
{
    return ls_doc_line(ud, item);
}

const char *ls_doc_source(const ls_doc_set *d)
{
    return d ? d->source : "";
}

void ls_doc_free(ls_doc_set *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->count; i++)
        cJSON_Delete(d->docs[i]);
    free(d->docs);
    cJSON_Delete(d->retired);
    free(d->line_keys);
    free(d->line_vals);
    free(d->source);
    free(d);
}
