/*
 * doc.c: the document loader. It turns one input file, JSON or YAML, into a
 * set of cJSON objects (one per manifest) plus a side table mapping every node
 * to the line it came from, and reports malformed input as "file:line:col:
 * what was expected". It knows nothing about what the objects mean; the
 * decoders in model/ and config/ do.
 *
 * This file holds the document set, its line table, the checks both formats
 * share, List expansion and the public API; doc_yaml.c builds trees from
 * YAML, doc_json.c from JSON (doc_internal.h is what they share).
 *
 * Ownership rule that the line table depends on: no node that ever entered the
 * table is freed before the set is. Nodes that leave the trees (List wrappers,
 * "<<" merge sources, anchored keys, null documents) go to set->retired
 * instead, so their addresses cannot be reused by a later allocation and
 * inherit a stale line. Anchors also point into the trees, which is the other
 * reason a node may never be freed while its document is being built. (On a
 * failure partial trees are freed at once: the whole set goes with them.)
 */
#include "model/doc_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- small helpers */

cJSON *ls_doc_new(cJSON *node)
{
    if (!node) {
        fprintf(stderr, "luasched: out of memory (cJSON)\n");
        abort();
    }
    return node;
}

void ls_doc_number_text(cJSON *node, const char *text, size_t len)
{
    cJSON_free(node->valuestring);
    node->valuestring = cJSON_malloc(len + 1);
    if (!node->valuestring) {
        fprintf(stderr, "luasched: out of memory (cJSON)\n");
        abort();
    }
    memcpy(node->valuestring, text, len);
    node->valuestring[len] = '\0';
}

void ls_doc_add_member(cJSON *obj, const char *key, cJSON *value)
{
    if (!cJSON_AddItemToObject(obj, key, value)) {
        fprintf(stderr, "luasched: out of memory (cJSON key)\n");
        abort();
    }
}

void ls_doc_retire(ls_doc_set *d, cJSON *node)
{
    if (node)
        cJSON_AddItemToArray(d->retired, node);
}

size_t ls_doc_span(const char *s, size_t n, const char *set)
{
    size_t i = 0;
    while (i < n && s[i] && strchr(set, s[i]))
        i++;
    return i;
}


/* 1-based line and column (in characters, like libyaml's marks) of pos. */
void ls_doc_position(const char *base, const char *pos, size_t *line, size_t *col)
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

bool ls_doc_fail_line(const ls_doc_set *d, ls_error *err, int line, const char *fmt, ...)
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

bool ls_doc_fail_pos(const ls_doc_set *d, ls_error *err, size_t line, size_t col,
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

void ls_doc_set_line(ls_doc_set *d, const cJSON *node, int line)
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
const cJSON *ls_doc_find_duplicate(const cJSON *obj)
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

bool ls_doc_check_duplicates(const ls_doc_set *d, const cJSON *obj, ls_error *err)
{
    const cJSON *dup = ls_doc_find_duplicate(obj);
    if (!dup)
        return true;
    return ls_doc_fail_line(d, err, ls_doc_line(d, dup), "duplicate key \"%s\"", dup->string);
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
    char *v = ls_xstrndup(value, len);
    cJSON *s = ls_doc_new(cJSON_CreateString(v));
    free(v);
    ls_doc_add_member(item, key, s);
    ls_doc_set_line(d, s, ls_doc_line(d, item));
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
    ls_doc_retire(d, list);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(list, "apiVersion");
    while (items->child) {
        cJSON *item = cJSON_DetachItemViaPointer(items, items->child);
        doc_infer_item_type(d, item, kind, elem_len, api);
        if (!ls_doc_add_root(d, item, yaml, err))
            return false;
    }
    return true;
}

/* Takes ownership of root. */
bool ls_doc_add_root(ls_doc_set *d, cJSON *root, bool yaml, ls_error *err)
{
    if (cJSON_IsNull(root)) {
        ls_doc_retire(d, root);
        return true;
    }
    if (!cJSON_IsObject(root)) {
        ls_doc_retire(d, root);
        return ls_doc_fail_line(d, err, ls_doc_line(d, root),
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
    d->retired = ls_doc_new(cJSON_CreateArray());
    if (!text) {
        text = "";
        len = 0;
    }
    bool ok;
    if (doc_looks_like_json(text, len)) {
        /* cJSON does not skip a byte order mark; YAML's reader does. */
        size_t bom = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        ok = ls_doc_parse_json(d, text + bom, len - bom, err);
    } else {
        ok = ls_doc_parse_yaml(d, text, len, err);
    }
    if (!ok) {
        ls_doc_free(d);
        return NULL;
    }
    return d;
}

char *ls_doc_read_file(const char *path, size_t *len_out, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_errorf(err, "%s: cannot read file: %s", path, strerror(errno));
        return NULL;
    }
    char *text = ls_read_stream(f, len_out);
    if (!text)
        ls_errorf(err, "%s: cannot read file: %s", path, strerror(errno));
    fclose(f);
    return text;
}

ls_doc_set *ls_doc_load_file(const char *path, ls_error *err)
{
    size_t len = 0;
    char *text = ls_doc_read_file(path, &len, err);
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

const cJSON *ls_json_member(const cJSON *obj, const char *name)
{
    const cJSON *j = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
    return cJSON_IsNull(j) ? NULL : j;
}

const char *ls_json_text(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

cJSON *ls_json_child_object(cJSON *parent, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
    if (!cJSON_IsObject(o)) {
        cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
        o = cJSON_AddObjectToObject(parent, key);
    }
    return o;
}

void ls_json_set_string(cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddStringToObject(obj, key, value);
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
