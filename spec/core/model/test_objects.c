/*
 * test_objects.c: decoding of Namespaces, Services, ReplicaSets, PDBs and
 * custom resources, and the object store (add, replace, remove, order).
 */
#include "luasched/framework.h"
#include "luasched/objects.h"
#include "model/doc.h"
#include "test.h"

#include <stdlib.h>

static ls_object_obj *decode(const char *yaml, ls_error *err)
{
    ls_doc_set *doc = ls_doc_parse(yaml, strlen(yaml), "objects.yaml", err);
    if (!doc)
        return NULL;
    ls_decode_ctx ctx = {"objects.yaml", ls_doc_line_of, doc};
    ls_object_obj *o = ls_object_decode(ls_doc_get(doc, 0), &ctx, err);
    ls_doc_free(doc);
    return o;
}

static ls_labels labels_of(ls_label *items, uint32_t n)
{
    return (ls_labels){n, items};
}

static void test_service_map_selector(void)
{
    ls_error err;
    ls_object_obj *o = decode("kind: Service\nmetadata: {name: web, namespace: shop}\n"
                              "spec: {selector: {app: web}}\n", &err);
    CHECK(o != NULL);
    if (!o)
        return;
    CHECK_STR(ls_str_get(o->obj.kind), "Service");
    CHECK_STR(ls_str_get(o->obj.ns), "shop");
    CHECK_INT(o->obj.has_selector, 1);
    ls_label web[] = {{ls_intern_cstr("app"), ls_intern_cstr("web")}};
    ls_label db[] = {{ls_intern_cstr("app"), ls_intern_cstr("db")}};
    ls_labels lw = labels_of(web, 1), ld = labels_of(db, 1);
    CHECK(ls_selector_matches(&o->obj.selector, &lw));
    CHECK(!ls_selector_matches(&o->obj.selector, &ld));
    CHECK_CONTAINS(o->obj.json, "\"selector\":{\"app\":\"web\"}");
    ls_object_obj_free(o);
}

static void test_replicaset_label_selector_and_namespace(void)
{
    ls_error err;
    ls_object_obj *rs = decode("kind: ReplicaSet\nmetadata: {name: web-1}\nspec:\n  selector:\n"
                               "    matchExpressions: [{key: tier, operator: In, values: [front]}]\n", &err);
    CHECK(rs != NULL);
    if (rs) {
        CHECK_STR(ls_str_get(rs->obj.ns), "default");   /* namespace defaults like the API server's */
        ls_label front[] = {{ls_intern_cstr("tier"), ls_intern_cstr("front")}};
        ls_labels l = labels_of(front, 1);
        CHECK(ls_selector_matches(&rs->obj.selector, &l));
        ls_object_obj_free(rs);
    }
    ls_object_obj *ns = decode("kind: Namespace\nmetadata: {name: shop, labels: {team: a}}\n", &err);
    CHECK(ns != NULL);
    if (ns) {
        CHECK_INT(ns->obj.ns, 0);                         /* cluster scoped */
        CHECK_STR(ls_str_get(ls_labels_get(&ns->obj.labels, ls_intern_cstr("team"))), "a");
        CHECK_INT(ns->obj.has_selector, 0);
        ls_object_obj_free(ns);
    }
}

static void test_pdb_status(void)
{
    ls_error err;
    ls_object_obj *o = decode("kind: PodDisruptionBudget\nmetadata: {name: db, namespace: shop}\n"
                              "spec: {selector: {matchLabels: {app: db}}}\n"
                              "status: {disruptionsAllowed: 1, disruptedPods: {db-0: \"2026-01-01T00:00:00Z\"}}\n",
                              &err);
    CHECK(o != NULL);
    if (!o)
        return;
    CHECK_INT(o->obj.disruptions_allowed, 1);
    CHECK_INT(o->obj.n_disrupted_pods, 1);
    CHECK_STR(ls_str_get(o->obj.disrupted_pods[0]), "db-0");
    ls_object_obj_free(o);
}

static void test_errors(void)
{
    ls_error err;
    CHECK(decode("kind: Service\nmetadata: {namespace: x}\n", &err) == NULL);
    CHECK_STR(err.msg, "objects.yaml:2: Service ?: metadata.name: expected a non-empty string");
    CHECK(decode("kind: ReplicaSet\nmetadata: {name: r}\nspec:\n  selector:\n"
                 "    matchExpressions: [{key: a, operator: Bogus}]\n", &err) == NULL);
    CHECK_CONTAINS(err.msg, "objects.yaml:5: ReplicaSet r: ");
}

/* The volume plugins' kinds are kept; PersistentVolumes, StorageClasses,
 * CSINodes, CSIDrivers and VolumeAttachments have no namespace; every
 * decoded version gets its own seq; a claim's spec.selector is compiled. */
static void test_storage_kinds(void)
{
    const char *kinds[] = {"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                           "CSIStorageCapacity", "VolumeAttachment"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        CHECK(ls_object_kind_known(kinds[i]));
    CHECK(ls_object_kind_cluster_scoped("PersistentVolume") && ls_object_kind_cluster_scoped("CSINode") &&
          ls_object_kind_cluster_scoped("VolumeAttachment") && ls_object_kind_cluster_scoped("StorageClass"));
    CHECK(!ls_object_kind_cluster_scoped("PersistentVolumeClaim") &&
          !ls_object_kind_cluster_scoped("CSIStorageCapacity"));
    ls_error err;
    ls_object_obj *pv = decode("kind: PersistentVolume\nmetadata: {name: pv-1, namespace: ignored}\n"
                               "spec: {capacity: {storage: 1Gi}}\n", &err);
    ls_object_obj *pv2 = decode("kind: PersistentVolume\nmetadata: {name: pv-1}\n", &err);
    ls_object_obj *pvc = decode("kind: PersistentVolumeClaim\nmetadata: {name: data, namespace: db}\n"
                                "spec: {selector: {matchLabels: {tier: fast}}}\n", &err);
    CHECK(pv && pv2 && pvc);
    if (pv && pv2 && pvc) {
        CHECK_INT(pv->obj.ns, 0);
        CHECK_STR(ls_str_get(pvc->obj.ns), "db");
        CHECK(pv->obj.seq != 0 && pv2->obj.seq != pv->obj.seq);
        CHECK_INT(pvc->obj.has_selector, 1);
        ls_label fast[] = {{ls_intern_cstr("tier"), ls_intern_cstr("fast")}};
        ls_labels lf = labels_of(fast, 1);
        CHECK(ls_selector_matches(&pvc->obj.selector, &lf));
        /* the store's generation moves on every change */
        ls_object_store *s = ls_object_store_new();
        uint64_t g0 = ls_objects_generation(s, 0);
        ls_object_store_put(s, &pv->obj);
        uint64_t g1 = ls_objects_generation(s, 0);
        ls_object_store_put(s, &pv2->obj);
        uint64_t g2 = ls_objects_generation(s, 0);
        CHECK(g1 > g0 && g2 > g1);
        CHECK(ls_objects_find(s, ls_intern_cstr("PersistentVolume"), 0, ls_intern_cstr("pv-1")) == &pv2->obj);
        ls_object_store_remove(s, &pv2->obj);
        CHECK(ls_objects_generation(s, 0) > g2);
        ls_object_store_free(s);
    }
    ls_object_obj_free(pv);
    ls_object_obj_free(pv2);
    ls_object_obj_free(pvc);

    /* the fields the volume plugins read are checked: file, line, object and field named */
    CHECK(decode("kind: PersistentVolume\nmetadata: {name: pv-1}\nspec:\n  capacity: {storage: lots}\n", &err) ==
          NULL);
    CHECK_STR(err.msg, "objects.yaml:4: PersistentVolume pv-1: spec.capacity.storage: invalid quantity \"lots\"");
    CHECK(decode("kind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: ReadWriteOnce}\n", &err) ==
          NULL);
    CHECK_CONTAINS(err.msg, "PersistentVolumeClaim c: spec.accessModes: expected an array of strings");
    CHECK(decode("kind: CSINode\nmetadata: {name: n1}\nspec:\n  drivers:\n  - {name: d, allocatable: {count: -1}}\n",
                 &err) == NULL);
    CHECK_CONTAINS(err.msg, "CSINode n1: spec.drivers[0].allocatable.count: expected a non-negative integer");
    CHECK(decode("kind: CSIDriver\nmetadata: {name: d}\nspec: {storageCapacity: 'yes'}\n", &err) == NULL);
    CHECK_CONTAINS(err.msg, "CSIDriver d: spec.storageCapacity: expected a boolean");
    CHECK(decode("kind: CSIStorageCapacity\nmetadata: {name: c, namespace: k}\nmaximumVolumeSize: 2Zi\n", &err) ==
          NULL);
    CHECK_CONTAINS(err.msg, "maximumVolumeSize: invalid quantity \"2Zi\"");
}

static void test_store(void)
{
    ls_error err;
    ls_object_obj *a = decode("kind: Service\nmetadata: {name: a}\n", &err);
    ls_object_obj *b = decode("kind: Service\nmetadata: {name: b}\n", &err);
    ls_object_obj *b2 = decode("kind: Service\nmetadata: {name: b, labels: {v: '2'}}\n", &err);
    ls_object_obj *c = decode("kind: Service\nmetadata: {name: c}\n", &err);
    ls_object_store *s = ls_object_store_new();
    ls_str svc = ls_intern_cstr("Service"), def = ls_intern_cstr("default");
    /* every decoded version has its own seq */
    CHECK(a->obj.seq && b->obj.seq > a->obj.seq && b2->obj.seq > b->obj.seq && c->obj.seq > b2->obj.seq);
    CHECK_INT(ls_objects_generation(s, svc), 0);
    ls_object_store_put(s, &a->obj);
    ls_object_store_put(s, &b->obj);
    ls_object_store_put(s, &c->obj);
    CHECK_INT(ls_objects_count(s, svc), 3);
    uint64_t g1 = ls_objects_generation(s, svc);
    CHECK(g1 != 0);
    ls_object_store_put(s, &b2->obj);                      /* same name: an update */
    CHECK_INT(ls_objects_count(s, svc), 3);
    uint64_t g2 = ls_objects_generation(s, svc);
    CHECK(g2 != g1);
    CHECK(ls_objects_find(s, svc, def, ls_intern_cstr("b")) == &b2->obj);
    ls_object_store_remove(s, &a->obj);
    CHECK_INT(ls_objects_count(s, svc), 2);
    CHECK(ls_objects_at(s, svc, 0) == &b2->obj);          /* arrival order kept */
    CHECK(ls_objects_at(s, svc, 1) == &c->obj);
    CHECK(ls_objects_find(s, svc, def, ls_intern_cstr("c")) == &c->obj);
    CHECK(ls_objects_find(s, svc, def, ls_intern_cstr("a")) == NULL);
    CHECK_INT(ls_objects_count(s, ls_intern_cstr("Namespace")), 0);
    CHECK(ls_objects_generation(s, svc) != g2);             /* the remove changed it */
    ls_object_store_remove(s, &a->obj);                     /* not there: no change */
    uint64_t g3 = ls_objects_generation(s, svc);
    ls_object_store_remove(s, &a->obj);
    CHECK(ls_objects_generation(s, svc) == g3);
    /* another store's generations never repeat this one's */
    ls_object_store *other = ls_object_store_new();
    ls_object_store_put(other, &a->obj);
    CHECK(ls_objects_generation(other, svc) > g3);
    ls_object_store_free(other);
    /* DRA's classes and slices have no namespace; claims do */
    ls_object_obj *dc = decode("kind: DeviceClass\nmetadata: {name: gpu}\n", &err);
    ls_object_obj *rc = decode("kind: ResourceClaim\nmetadata: {name: c}\n", &err);
    CHECK_INT(dc->obj.ns, 0);
    CHECK_STR(ls_str_get(rc->obj.ns), "default");
    ls_object_obj_free(dc);
    ls_object_obj_free(rc);
    ls_object_store_free(s);
    ls_object_obj_free(a);
    ls_object_obj_free(b);
    ls_object_obj_free(b2);
    ls_object_obj_free(c);
}

int main(void)
{
    test_service_map_selector();
    test_replicaset_label_selector_and_namespace();
    test_pdb_status();
    test_errors();
    test_store();
    test_storage_kinds();
    ls_status_reset();
    ls_intern_reset();
    TEST_MAIN_END();
}
