/*
 * parse_text.c: one Pod or Node from JSON or YAML text, for the plugin
 * author's kit and the specs (the cluster loader decodes whole files itself).
 */
#include "luasched/model.h"
#include "model/doc.h"

#include <stddef.h>

static const cJSON *single_object(ls_doc_set *doc, const char *source, ls_error *err)
{
    if (ls_doc_count(doc) != 1) {
        ls_errorf(err, "%s: expected exactly one object, found %u", source, ls_doc_count(doc));
        return NULL;
    }
    return ls_doc_get(doc, 0);
}

const ls_pod *ls_pod_parse(const char *text, size_t len, const char *source, ls_error *err)
{
    source = source ? source : "<pod>";
    ls_doc_set *doc = ls_doc_parse(text, len, source, err);
    if (!doc)
        return NULL;
    const cJSON *obj = single_object(doc, source, err);
    ls_decode_ctx ctx = {source, ls_doc_line_of, doc};
    ls_pod_obj *p = obj ? ls_pod_decode(obj, &ctx, err) : NULL;
    ls_doc_free(doc);
    return p ? &p->pod : NULL;
}

const ls_node *ls_node_parse(const char *text, size_t len, const char *source, ls_error *err)
{
    source = source ? source : "<node>";
    ls_doc_set *doc = ls_doc_parse(text, len, source, err);
    if (!doc)
        return NULL;
    const cJSON *obj = single_object(doc, source, err);
    ls_decode_ctx ctx = {source, ls_doc_line_of, doc};
    ls_node_obj *n = obj ? ls_node_decode(obj, &ctx, err) : NULL;
    ls_doc_free(doc);
    return n ? &n->node : NULL;
}

/* The pod is the first member of its ls_pod_obj, so the object is recovered
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
