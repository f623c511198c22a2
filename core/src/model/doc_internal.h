/*
 * doc_internal.h: what the parts of the document loader share (doc.c: the
 * document set, its line table, List expansion and the public API;
 * doc_yaml.c: libyaml events into cJSON trees; doc_json.c: the strict JSON
 * scanner that attaches lines and number text to cJSON's tree). Not for use
 * outside core/src/model/doc*.c.
 */
#ifndef LS_MODEL_DOC_INTERNAL_H
#define LS_MODEL_DOC_INTERNAL_H

#include "model/doc.h"

#include <stdbool.h>

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

/* cJSON constructors abort on out-of-memory, as ls_xmalloc does. */
cJSON *ls_doc_new(cJSON *node);
/* Gives a number node its source text (replacing any), through cJSON's
 * allocator because cJSON_Delete is what frees it; aborts when out of memory. */
void ls_doc_number_text(cJSON *node, const char *text, size_t len);
void ls_doc_add_member(cJSON *obj, const char *key, cJSON *value);
/* Keeps a node that left the trees alive (its address stays taken in the
 * line table). */
void ls_doc_retire(ls_doc_set *d, cJSON *node);
/* Length of the prefix of s[0..n) made of characters of set. */
size_t ls_doc_span(const char *s, size_t n, const char *set);
#define DOC_DIGITS "0123456789"
/* 1-based line and column (in characters, like libyaml's marks) of pos. */
void ls_doc_position(const char *base, const char *pos, size_t *line, size_t *col);
/* "source:line: msg" (or "source: msg" when line is 0); always false. */
bool ls_doc_fail_line(const ls_doc_set *d, ls_error *err, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "source:line:col: msg"; always false. */
bool ls_doc_fail_pos(const ls_doc_set *d, ls_error *err, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void ls_doc_set_line(ls_doc_set *d, const cJSON *node, int line);
/* The member of obj repeating an earlier key, or NULL. */
const cJSON *ls_doc_find_duplicate(const cJSON *obj);
bool ls_doc_check_duplicates(const ls_doc_set *d, const cJSON *obj, ls_error *err);
/* A top-level document: checked, List-expanded, appended to the set. */
bool ls_doc_add_root(ls_doc_set *d, cJSON *root, bool yaml, ls_error *err);

bool ls_doc_parse_yaml(ls_doc_set *d, const char *text, size_t len, ls_error *err);
bool ls_doc_parse_json(ls_doc_set *d, const char *text, size_t len, ls_error *err);

#endif
