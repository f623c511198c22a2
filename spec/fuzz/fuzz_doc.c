/*
 * fuzz_doc.c: the document loader (model/doc.c) on raw bytes: JSON or YAML by
 * content, several YAML documents, anchors and merges, List expansion.
 *
 * The input buffer is handed over as is (ls_doc_parse must not need a NUL),
 * so any read past its end is an AddressSanitizer report. On success every
 * node of every tree is looked up with ls_doc_line, and doc.h's promises are
 * checked: documents are objects, every node has a line inside the input,
 * number nodes carry their text.
 */
#include "fuzz_common.h"

#include "model/doc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_intern_prepare();
    return 0;
}

static void walk(const ls_doc_set *d, const cJSON *node, int max_line, int depth)
{
    int line = ls_doc_line(d, node);
    FUZZ_CHECK(line >= 1 && line <= max_line, "node at depth %d (type %d, key \"%s\") has line %d",
               depth, node->type, node->string ? node->string : "", line);
    FUZZ_CHECK(ls_doc_line_of(node, (void *)d) == line, "ls_doc_line_of disagrees");
    if (cJSON_IsNumber(node))
        FUZZ_CHECK(node->valuestring != NULL, "number %g without its text", node->valuedouble);
    if (cJSON_IsString(node))
        FUZZ_CHECK(node->valuestring != NULL, "string without text");
    for (const cJSON *c = node->child; c; c = c->next) {
        if (cJSON_IsObject(node))
            FUZZ_CHECK(c->string != NULL, "object member without a key");
        walk(d, c, max_line, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_intern_prepare();
    ls_error err = {{0}};
    ls_doc_set *d = ls_doc_parse((const char *)data, size, "fuzz.yaml", &err);
    if (!d) {
        FUZZ_CHECK(strncmp(err.msg, "fuzz.yaml:", 10) == 0, "error without its source: \"%s\"", err.msg);
        return 0;
    }
    FUZZ_CHECK(strcmp(ls_doc_source(d), "fuzz.yaml") == 0, "source is \"%s\"", ls_doc_source(d));
    uint32_t n = ls_doc_count(d);
    int max_line = fuzz_max_line(size);
    for (uint32_t i = 0; i < n; i++) {
        const cJSON *root = ls_doc_get(d, i);
        FUZZ_CHECK(cJSON_IsObject(root), "document %u is not an object", i);
        walk(d, root, max_line, 0);
    }
    FUZZ_CHECK(ls_doc_get(d, n) == NULL, "a document past the count");
    FUZZ_CHECK(ls_doc_line(d, NULL) == 0, "a line for NULL");
    ls_doc_free(d);
    return 0;
}
