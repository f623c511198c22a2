/*
 * fuzz_object.c: the decoder of the other API objects (model/objects.c:
 * Namespaces, Services, ReplicaSets, PDBs, custom resources) and the object
 * store. The input goes through the document loader; every document is decoded
 * as an object, checked, and put into a store, which must then find each one
 * by kind, namespace and name (the last one put wins for the same triple), and
 * must be empty again once they are all removed.
 */
#include "fuzz_model.h"

#include "luasched/objects.h"
#include "model/doc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_intern_prepare();
    return 0;
}

enum { MAX_OBJECTS = 256 };

static bool same_triple(const ls_object *a, const ls_object *b)
{
    return a->kind == b->kind && a->ns == b->ns && a->name == b->name;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_intern_prepare();
    ls_error err = {{0}};
    ls_doc_set *d = ls_doc_parse((const char *)data, size, "fuzz.yaml", &err);
    ls_decode_ctx ctx = {"fuzz.yaml", ls_doc_line_of, d};
    ls_object_obj *objs[MAX_OBJECTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < ls_doc_count(d) && n < MAX_OBJECTS; i++) {
        const cJSON *json = ls_doc_get(d, i);
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
        if (cJSON_IsString(kind))
            (void)ls_object_kind_known(kind->valuestring);
        memset(&err, 0, sizeof err);
        ls_object_obj *o = ls_object_decode(json, &ctx, &err);
        if (!o) {
            FUZZ_CHECK(strncmp(err.msg, "fuzz.yaml:", 10) == 0, "error without its source: \"%s\"", err.msg);
            continue;
        }
        const ls_object *ob = &o->obj;
        FUZZ_CHECK(ob->kind && ob->name, "object without kind or name");
        fuzz_check_str(ob->ns);
        fuzz_check_str(ob->uid);
        fuzz_check_labels(&ob->labels);
        if (ob->has_selector)
            fuzz_check_selector(&ob->selector);
        for (uint32_t k = 0; k < ob->n_disrupted_pods; k++)
            fuzz_check_str(ob->disrupted_pods[k]);
        FUZZ_CHECK(ob->json && strlen(ob->json) == ob->json_len, "json_len %u for %zu bytes", ob->json_len,
                   ob->json ? strlen(ob->json) : 0);
        objs[n++] = o;
    }

    ls_object_store *s = ls_object_store_new();
    for (uint32_t i = 0; i < n; i++)
        ls_object_store_put(s, &objs[i]->obj);
    for (uint32_t i = 0; i < n; i++) {
        const ls_object *o = &objs[i]->obj;
        const ls_object *want = o;
        for (uint32_t k = i + 1; k < n; k++)
            if (same_triple(&objs[k]->obj, o))
                want = &objs[k]->obj;
        const ls_object *got = ls_objects_find(s, o->kind, o->ns, o->name);
        FUZZ_CHECK(got == want, "find %s %s/%s gave %s %s/%s", ls_str_get(o->kind), ls_str_get(o->ns),
                   ls_str_get(o->name), got ? ls_str_get(got->kind) : "-", got ? ls_str_get(got->ns) : "-",
                   got ? ls_str_get(got->name) : "-");
        uint32_t count = ls_objects_count(s, o->kind);
        bool listed = false;
        for (uint32_t k = 0; k < count; k++)
            listed = listed || ls_objects_at(s, o->kind, k) == want;
        FUZZ_CHECK(listed, "object not listed under its kind");
        FUZZ_CHECK(ls_objects_at(s, o->kind, count) == NULL, "an object past the count");
    }
    for (uint32_t i = 0; i < n; i++)
        ls_object_store_remove(s, &objs[i]->obj);
    for (uint32_t i = 0; i < n; i++)
        FUZZ_CHECK(ls_objects_count(s, objs[i]->obj.kind) == 0, "kind %s not empty after removing all",
                   ls_str_get(objs[i]->obj.kind));
    ls_object_store_free(s);

    for (uint32_t i = 0; i < n; i++)
        ls_object_obj_free(objs[i]);
    ls_doc_free(d);
    return 0;
}
