/*
 * parse_text.c: one Pod, Node or other API object from JSON or YAML text, for
 * the plugin author's kit and the specs (the cluster loader decodes whole
 * files itself), and a cluster file's documents as JSON texts for the kit.
 */
#include "luasched/model.h"
#include "luasched/objects.h"
#include "model/doc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PARSE_POD, PARSE_NODE, PARSE_OBJECT } parse_kind;

/* The one object of the text, decoded as `kind` (its ls_pod_obj, ls_node_obj
 * or ls_object_obj), with errors naming source and line. */
static void *parse_single(const char *text, size_t len, const char *source, parse_kind kind, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, len, source, err);
    if (!doc)
        return NULL;
    const cJSON *obj = NULL;
    if (ls_doc_count(doc) != 1)
        ls_errorf(err, "%s: expected exactly one object, found %u", source, ls_doc_count(doc));
    else
        obj = ls_doc_get(doc, 0);
    ls_decode_ctx ctx = {source, ls_doc_line_of, doc};
    void *decoded = NULL;
    if (obj && kind == PARSE_POD)
        decoded = ls_pod_decode(obj, &ctx, err);
    else if (obj && kind == PARSE_NODE)
        decoded = ls_node_decode(obj, &ctx, err);
    else if (obj)
        decoded = ls_object_decode(obj, &ctx, err);
    ls_doc_free(doc);
    return decoded;
}

const ls_pod *ls_pod_parse(const char *text, size_t len, const char *source, ls_error *err)
{
    ls_pod_obj *p = parse_single(text, len, source ? source : "<pod>", PARSE_POD, err);
    return p ? &p->pod : NULL;
}

const ls_node *ls_node_parse(const char *text, size_t len, const char *source, ls_error *err)
{
    ls_node_obj *n = parse_single(text, len, source ? source : "<node>", PARSE_NODE, err);
    return n ? &n->node : NULL;
}

const ls_object *ls_object_parse(const char *text, size_t len, const char *source, ls_error *err)
{
    ls_object_obj *o = parse_single(text, len, source ? source : "<object>", PARSE_OBJECT, err);
    return o ? &o->obj : NULL;
}

/* Each record is the first member of its ls_*_obj, so the object is recovered
 * from the pointer handed out above. */
void ls_pod_release(const ls_pod *pod)
{
    if (pod)
        ls_pod_obj_free((ls_pod_obj *)(void *)((char *)(uintptr_t)pod - offsetof(ls_pod_obj, pod)));
}

void ls_node_release(const ls_node *node)
{
    if (node)
        ls_node_obj_free((ls_node_obj *)(void *)((char *)(uintptr_t)node - offsetof(ls_node_obj, node)));
}

void ls_object_release(const ls_object *obj)
{
    if (obj)
        ls_object_obj_free((ls_object_obj *)(void *)((char *)(uintptr_t)obj - offsetof(ls_object_obj, obj)));
}

/* Appends the document's compact JSON and a newline to *out (grown with
 * realloc); false when out of memory. */
static bool append_line(char **out, size_t *len, const cJSON *item)
{
    char *json = cJSON_PrintUnformatted(item);
    if (!json)
        return false;
    size_t n = strlen(json);
    char *grown = realloc(*out, *len + n + 2);
    if (grown) {
        memcpy(grown + *len, json, n);
        grown[*len + n] = '\n';
        grown[*len + n + 1] = '\0';
        *out = grown;
        *len += n + 1;
    }
    cJSON_free(json);
    return grown != NULL;
}

char *ls_documents_json(const char *text, size_t len, const char *source, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(text, len, source, err);
    if (!doc)
        return NULL;
    char *out = calloc(1, 1);
    size_t out_len = 0;
    for (uint32_t i = 0; out && i < ls_doc_count(doc); i++) {
        if (!append_line(&out, &out_len, ls_doc_get(doc, i))) {
            free(out);
            out = NULL;
        }
    }
    if (!out)
        ls_errorf(err, "%s: out of memory", source ? source : "<input>");
    ls_doc_free(doc);
    return out;
}

void ls_text_free(char *text)
{
    free(text);
}
