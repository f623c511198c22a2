/*
 * doc_yaml.c: YAML documents into cJSON trees, the way Kubernetes converts
 * YAML to JSON (see doc.h): typed plain scalars, aliases expanded into copies
 * (bounded against exponential expansion), "<<" merge keys applied, every node
 * given its line.
 */
#include "model/doc_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* ---- YAML scalars */

/* A number that remembers how it was written. */
static cJSON *doc_number(double value, const char *text, size_t len)
{
    cJSON *n = ls_doc_new(cJSON_CreateNumber(value));
    ls_doc_number_text(n, text, len);
    return n;
}


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


static bool doc_is_decimal_int(const char *s, size_t n)
{
    size_t i = (n > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    size_t digits = ls_doc_span(s + i, n - i, DOC_DIGITS);
    return digits > 0 && i + digits == n;
}

static bool doc_is_radix_int(const char *s, size_t n)
{
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return ls_doc_span(s + 2, n - 2, DOC_DIGITS "abcdefABCDEF") == n - 2;
    if (n > 2 && s[0] == '0' && s[1] == 'o')
        return ls_doc_span(s + 2, n - 2, "01234567") == n - 2;
    return n > 1 && s[0] == '0' && ls_doc_span(s + 1, n - 1, "01234567") == n - 1;
}

/* [-+]? ( \.[0-9]+ | [0-9]+ (\.[0-9]*)? ) ([eE][-+]?[0-9]+)? */
static bool doc_is_float(const char *s, size_t n)
{
    size_t i = (n > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    size_t whole = ls_doc_span(s + i, n - i, DOC_DIGITS);
    i += whole;
    if (i < n && s[i] == '.') {
        size_t frac = ls_doc_span(s + i + 1, n - i - 1, DOC_DIGITS);
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
        size_t exp = ls_doc_span(s + i, n - i, DOC_DIGITS);
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
        return ls_doc_new(cJSON_CreateString(s));
    char text[32];
    int len = snprintf(text, sizeof text, "%llu", v);
    return doc_number((double)v, text, (size_t)len);
}

/* s is NUL-terminated (libyaml terminates scalar values). */
static cJSON *doc_scalar_node(doc_scalar_kind kind, const char *s, size_t n)
{
    switch (kind) {
    case SC_NULL:
        return ls_doc_new(cJSON_CreateNull());
    case SC_TRUE:
        return ls_doc_new(cJSON_CreateTrue());
    case SC_FALSE:
        return ls_doc_new(cJSON_CreateFalse());
    case SC_RADIX:
        return doc_radix_number(s);
    case SC_INT:
    case SC_FLOAT:
        return doc_number(strtod(s, NULL), s, n);
    case SC_STR:
        break;
    }
    return ls_doc_new(cJSON_CreateString(s));
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
    ls_doc_fail_pos(b->set, b->err, mark.line + 1, mark.column + 1, "%s", msg);
    return NULL;
}

static bool yb_parser_error(yaml_builder *b)
{
    const yaml_parser_t *p = &b->parser;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_MEMORY_ERROR)
        return ls_doc_fail_line(b->set, b->err, 0, "out of memory while parsing YAML");
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset, not a mark. */
        size_t line, col, off = p->problem_offset < b->len ? p->problem_offset : b->len;
        ls_doc_position(b->text, b->text + off, &line, &col);
        if (p->problem_value != -1)
            return ls_doc_fail_pos(b->set, b->err, line, col, "%s (byte 0x%02X)", problem,
                                (unsigned)p->problem_value);
        return ls_doc_fail_pos(b->set, b->err, line, col, "%s", problem);
    }
    size_t line = p->problem_mark.line + 1, col = p->problem_mark.column + 1;
    if (p->context)
        return ls_doc_fail_pos(b->set, b->err, line, col, "%s (%s at line %zu, column %zu)",
                            problem, p->context, p->context_mark.line + 1,
                            p->context_mark.column + 1);
    return ls_doc_fail_pos(b->set, b->err, line, col, "%s", problem);
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
        dst = ls_doc_new(cJSON_CreateNumber(src->valuedouble));
    else if (cJSON_IsString(src))
        dst = ls_doc_new(cJSON_CreateString(src->valuestring));
    else if (cJSON_IsBool(src))
        dst = ls_doc_new(cJSON_CreateBool(cJSON_IsTrue(src)));
    else if (cJSON_IsArray(src))
        dst = ls_doc_new(cJSON_CreateArray());
    else if (cJSON_IsObject(src))
        dst = ls_doc_new(cJSON_CreateObject());
    else
        dst = ls_doc_new(cJSON_CreateNull());
    ls_doc_set_line(b->set, dst, ls_doc_line(b->set, src));
    for (const cJSON *c = src->child; c; c = c->next) {
        cJSON *cc = yb_copy(b, c, depth + 1, at);
        if (!cc) {
            cJSON_Delete(dst);
            return NULL;
        }
        if (cJSON_IsObject(dst))
            ls_doc_add_member(dst, c->string, cc);
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
        ls_doc_set_line(b->set, copy, yb_line(ev->start_mark));
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
    ls_doc_set_line(b->set, node, yb_line(ev->start_mark));
    return node;
}

static cJSON *yb_sequence(yaml_builder *b, const yaml_event_t *start, int depth)
{
    cJSON *arr = ls_doc_new(cJSON_CreateArray());
    ls_doc_set_line(b->set, arr, yb_line(start->start_mark));
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
        char *key = ls_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
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
    ls_doc_retire(b->set, node);   /* it may be anchored: keep it alive */
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
        ls_doc_add_member(obj, m->string, copy);
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
    return ls_doc_fail_line(b->set, b->err, ls_doc_line(b->set, src),
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
        ls_doc_retire(b->set, value);
        value = NULL;
        ls_doc_fail_line(b->set, b->err, key_line, "duplicate key \"<<\"");
    }
    if (value) {
        ls_doc_set_line(b->set, value, key_line);
        if (is_merge)
            *merge = value;
        else
            ls_doc_add_member(obj, key, value);
    }
    free(key);
    return value != NULL;
}

static cJSON *yb_mapping(yaml_builder *b, const yaml_event_t *start, int depth)
{
    cJSON *obj = ls_doc_new(cJSON_CreateObject());
    cJSON *merge = NULL;
    ls_doc_set_line(b->set, obj, yb_line(start->start_mark));
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
    if (!ls_doc_check_duplicates(b->set, obj, b->err))
        goto fail;
    if (merge) {
        ls_doc_retire(b->set, merge);
        if (!yb_apply_merge(b, obj, merge, depth, start->start_mark)) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
fail:
    ls_doc_retire(b->set, merge);
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
    return root && ls_doc_add_root(b->set, root, true, b->err);
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

bool ls_doc_parse_yaml(ls_doc_set *d, const char *text, size_t len, ls_error *err)
{
    yaml_builder b;
    memset(&b, 0, sizeof b);
    if (!yaml_parser_initialize(&b.parser))
        return ls_doc_fail_line(d, err, 0, "out of memory while parsing YAML");
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

