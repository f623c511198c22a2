/*
 * fuzz_node.c: the Node decoder (model/decode.c) on arbitrary trees. The input
 * goes through the document loader, and every document it yields is decoded
 * as a Node, whatever its kind, so that the decoder meets every shape of
 * value in every field; then ls_node_parse (the one-object entry point) runs
 * on the raw input too. Decoded nodes are checked (fuzz_model.h) and freed.
 */
#include "fuzz_model.h"

#include "model/doc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_intern_prepare();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_intern_prepare();
    ls_error err = {{0}};
    ls_doc_set *d = ls_doc_parse((const char *)data, size, "fuzz.yaml", &err);
    ls_decode_ctx ctx = {"fuzz.yaml", ls_doc_line_of, d};
    for (uint32_t i = 0; i < ls_doc_count(d); i++) {
        memset(&err, 0, sizeof err);
        ls_node_obj *p = ls_node_decode(ls_doc_get(d, i), &ctx, &err);
        if (p)
            fuzz_check_node(&p->node);
        else
            FUZZ_CHECK(strncmp(err.msg, "fuzz.yaml:", 10) == 0, "error without its source: \"%s\"", err.msg);
        ls_node_obj_free(p);
    }
    ls_doc_free(d);

    memset(&err, 0, sizeof err);
    const ls_node *node = ls_node_parse((const char *)data, size, NULL, &err);
    if (node)
        fuzz_check_node(node);
    else
        FUZZ_CHECK(err.msg[0] != '\0', "ls_node_parse failed without a message");
    ls_node_release(node);
    return 0;
}
