/*
 * test_pv_controller.c: the PV and ephemeral-volume controllers of the
 * clusters luasched owns (core/src/sim/pv_controller.c), over a store of
 * JSON objects: Immediate binding to the smallest matching volume,
 * completing pairs pre-bound either way, provisioning for a selected node
 * (capacity, class, node affinity from the CSINode's topology keys or the
 * class's allowedTopologies), the provisioning faults, ephemeral claims,
 * claims whose volume is gone marked Lost.
 */
#include "sim/pv_controller.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_json.h"

/* ---- a store: kind -> list of objects */

typedef struct store {
    cJSON *root;   /* {"Kind": [obj, ...]} */
    int puts;
} store;

static const char *text_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        j = cJSON_GetObjectItemCaseSensitive(j, b);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static cJSON *list_of(store *s, const char *kind)
{
    cJSON *l = cJSON_GetObjectItemCaseSensitive(s->root, kind);
    return l ? l : cJSON_AddArrayToObject(s->root, kind);
}

static bool same_key(const cJSON *o, const char *ns, const char *name)
{
    const char *ons = text_at(o, "metadata", "namespace"), *oname = text_at(o, "metadata", "name");
    return oname && strcmp(oname, name) == 0 && (!ns || (ons && strcmp(ons, ns) == 0));
}

static cJSON *s_get(void *ud, const char *kind, const char *ns, const char *name)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, list_of(ud, kind))
        if (same_key(o, ns, name))
            return cJSON_Duplicate(o, 1);
    return NULL;
}

static void s_each(void *ud, const char *kind, bool (*fn)(void *fud, const cJSON *obj), void *fud)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, list_of(ud, kind))
        if (!fn(fud, o))
            return;
}

static bool s_put(void *ud, const char *kind, const cJSON *obj, ls_error *err)
{
    (void)err;
    store *s = ud;
    s->puts++;
    cJSON *l = list_of(s, kind);
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, l) {
        if (same_key(o, text_at(obj, "metadata", "namespace"), text_at(obj, "metadata", "name"))) {
            cJSON_ReplaceItemInArray(l, i, cJSON_Duplicate(obj, 1));
            return true;
        }
        i++;
    }
    cJSON_AddItemToArray(l, cJSON_Duplicate(obj, 1));
    return true;
}

static ls_pv_ops ops_of(store *s, ls_provision_fault fault)
{
    return (ls_pv_ops){.ud = s, .get = s_get, .each = s_each, .put = s_put, .fault = fault};
}

static void add(store *s, const char *kind, const char *text)
{
    cJSON_AddItemToArray(list_of(s, kind), json(text));
}

/* The claim's "phase volumeName" after the controller's pass. */
static const char *claim_state(store *s, const char *ns, const char *name)
{
    static char buf[300];
    cJSON *c = s_get(s, "PersistentVolumeClaim", ns, name);
    const char *phase = text_at(c, "status", "phase"), *vol = text_at(c, "spec", "volumeName");
    snprintf(buf, sizeof buf, "%s %s", phase ? phase : "-", vol ? vol : "-");
    cJSON_Delete(c);
    return buf;
}

static const char *annotation(store *s, const char *kind, const char *ns, const char *name, const char *key)
{
    static char buf[300];
    cJSON *c = s_get(s, kind, ns, name);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "metadata"),
                                                        "annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, key);
    snprintf(buf, sizeof buf, "%s", cJSON_IsString(v) ? v->valuestring : "-");
    cJSON_Delete(c);
    return buf;
}

#define PV(name, size, cls, extra) \
    "{'kind':'PersistentVolume','metadata':{'name':'" name "'},'spec':{'capacity':{'storage':'" size "'}," \
    "'accessModes':['ReadWriteOnce'],'storageClassName':'" cls "'" extra "}}"
#define PVC(name, size, cls, extra) \
    "{'kind':'PersistentVolumeClaim','metadata':{'name':'" name "','namespace':'ns','uid':'uid-" name "'" extra "}," \
    "'spec':{'accessModes':['ReadWriteOnce'],'storageClassName':'" cls "','resources':{'requests':{'storage':'" size "'}}}}"

static void test_immediate_binding(void)
{
    store s = {cJSON_CreateObject(), 0};
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_OK);
    add(&s, "StorageClass", "{'metadata':{'name':'std'},'provisioner':'kubernetes.io/no-provisioner',"
                            "'volumeBindingMode':'Immediate'}");
    add(&s, "PersistentVolume", PV("big", "10Gi", "std", ""));
    add(&s, "PersistentVolume", PV("small", "2Gi", "std", ""));
    add(&s, "PersistentVolume", PV("tiny", "500Mi", "std", ""));
    add(&s, "PersistentVolume", PV("other-class", "2Gi", "fast", ""));
    add(&s, "PersistentVolumeClaim", PVC("a", "1Gi", "std", ""));
    add(&s, "PersistentVolumeClaim", PVC("b", "1Gi", "std", ""));
    add(&s, "PersistentVolumeClaim", PVC("c", "1Gi", "std", ""));
    ls_error err;
    CHECK(ls_pv_sync_all(&ops, &err));
    /* smallest that fits: a -> small (2Gi; tiny is too small), b -> big, c -> none left */
    CHECK_STR(claim_state(&s, "ns", "a"), "Bound small");
    CHECK_STR(claim_state(&s, "ns", "b"), "Bound big");
    CHECK_STR(claim_state(&s, "ns", "c"), "- -");
    CHECK_STR(annotation(&s, "PersistentVolumeClaim", "ns", "a", "pv.kubernetes.io/bind-completed"), "yes");
    cJSON *pv = s_get(&s, "PersistentVolume", NULL, "small");
    CHECK_STR(text_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "uid"), "uid-a");
    CHECK_STR(text_at(pv, "status", "phase"), "Bound");
    cJSON_Delete(pv);
    pv = s_get(&s, "PersistentVolume", NULL, "tiny");
    CHECK_STR(text_at(pv, "status", "phase"), "Available");   /* the first pass marks free volumes */
    cJSON_Delete(pv);
    /* a second pass changes nothing */
    int puts = s.puts;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_INT(s.puts, puts);
    cJSON_Delete(s.root);
}

static void test_prebound_pairs(void)
{
    store s = {cJSON_CreateObject(), 0};
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_OK);
    add(&s, "StorageClass", "{'metadata':{'name':'local'},'provisioner':'kubernetes.io/no-provisioner',"
                            "'volumeBindingMode':'WaitForFirstConsumer'}");
    /* the scheduler pre-bound the volume (claimRef without uid) */
    add(&s, "PersistentVolume", PV("pv-1", "1Gi", "local", ",'claimRef':{'namespace':'ns','name':'by-volume'}"));
    add(&s, "PersistentVolumeClaim", PVC("by-volume", "1Gi", "local", ""));
    /* the user named the volume on the claim */
    add(&s, "PersistentVolume", PV("pv-2", "1Gi", "local", ""));
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'by-claim','namespace':'ns'},'spec':{'volumeName':'pv-2','storageClassName':'local'}}");
    /* a claim naming a volume bound to someone else stays pending */
    add(&s, "PersistentVolume", PV("pv-3", "1Gi", "local", ",'claimRef':{'namespace':'ns','name':'x','uid':'u'}"));
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'thief','namespace':'ns'},'spec':{'volumeName':'pv-3','storageClassName':'local'}}");
    /* a delayed claim without a selected node waits for the scheduler */
    add(&s, "PersistentVolumeClaim", PVC("waiting", "1Gi", "local", ""));
    ls_error err;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_STR(claim_state(&s, "ns", "by-volume"), "Bound pv-1");
    CHECK_STR(claim_state(&s, "ns", "by-claim"), "Bound pv-2");
    CHECK_STR(claim_state(&s, "ns", "thief"), "- pv-3");
    CHECK_STR(claim_state(&s, "ns", "waiting"), "- -");
    cJSON *pv = s_get(&s, "PersistentVolume", NULL, "pv-2");
    /* a claim without uid is referred to as "ns/name", as pods are */
    CHECK_STR(text_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "uid"), "ns/by-claim");
    cJSON_Delete(pv);
    pv = s_get(&s, "PersistentVolume", NULL, "pv-1");
    CHECK_STR(text_at(cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef", "uid"), "uid-by-volume");
    cJSON_Delete(pv);
    cJSON_Delete(s.root);
}

static void provisioning_store(store *s)
{
    s->root = cJSON_CreateObject();
    s->puts = 0;
    add(s, "Node", "{'metadata':{'name':'n1','labels':{'topology.kubernetes.io/zone':'b','rack':'r7'}}}");
    add(s, "StorageClass", "{'metadata':{'name':'zonal'},'provisioner':'pd.csi.storage.gke.io',"
                           "'volumeBindingMode':'WaitForFirstConsumer','allowedTopologies':[{'matchLabelExpressions':"
                           "[{'key':'topology.kubernetes.io/zone','values':['b','c']}]}]}");
    add(s, "PersistentVolumeClaim",
        PVC("data", "7Gi", "zonal", ",'annotations':{'volume.kubernetes.io/selected-node':'n1'}"));
}

static void test_provisioning(void)
{
    store s;
    provisioning_store(&s);
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_OK);
    ls_error err;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_STR(claim_state(&s, "ns", "data"), "Bound pvc-uid-data");
    cJSON *pv = s_get(&s, "PersistentVolume", NULL, "pvc-uid-data");
    CHECK(pv != NULL);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pv, "spec");
    CHECK_STR(text_at(spec, "capacity", "storage"), "7Gi");
    CHECK_STR(text_at(spec, "csi", "driver"), "pd.csi.storage.gke.io");
    CHECK_STR(text_at(spec, "storageClassName", NULL), "zonal");
    CHECK_STR(annotation(&s, "PersistentVolume", NULL, "pvc-uid-data", "pv.kubernetes.io/provisioned-by"),
              "pd.csi.storage.gke.io");
    /* no CSINode: the class's allowedTopologies keys, with the node's value */
    char *aff = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(spec, "nodeAffinity"));
    CHECK_STR(aff, "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/"
                   "zone\",\"operator\":\"In\",\"values\":[\"b\"]}]}]}}");
    free(aff);
    cJSON_Delete(pv);
    cJSON_Delete(s.root);

    /* with a CSINode, the driver's topology keys win */
    provisioning_store(&s);
    add(&s, "CSINode", "{'metadata':{'name':'n1'},'spec':{'drivers':[{'name':'pd.csi.storage.gke.io',"
                       "'topologyKeys':['rack']}]}}");
    CHECK(ls_pv_sync_all(&ops, &err));
    pv = s_get(&s, "PersistentVolume", NULL, "pvc-uid-data");
    aff = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pv, "spec"),
                                                                  "nodeAffinity"));
    CHECK_CONTAINS(aff, "\"key\":\"rack\",\"operator\":\"In\",\"values\":[\"r7\"]");
    free(aff);
    cJSON_Delete(pv);
    cJSON_Delete(s.root);
}

static void test_provisioning_faults(void)
{
    store s;
    provisioning_store(&s);
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_FAIL);
    ls_error err;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_STR(claim_state(&s, "ns", "data"), "- -");
    CHECK_STR(annotation(&s, "PersistentVolumeClaim", "ns", "data", "volume.kubernetes.io/selected-node"), "-");
    cJSON_Delete(s.root);

    provisioning_store(&s);
    ops = ops_of(&s, LS_PROVISION_NEVER);
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_STR(claim_state(&s, "ns", "data"), "- -");
    CHECK_STR(annotation(&s, "PersistentVolumeClaim", "ns", "data", "volume.kubernetes.io/selected-node"), "n1");
    CHECK(s_get(&s, "PersistentVolume", NULL, "pvc-uid-data") == NULL);
    cJSON_Delete(s.root);

    ls_provision_fault f;
    CHECK(ls_provision_fault_parse("fail", &f) && f == LS_PROVISION_FAIL);
    CHECK(ls_provision_fault_parse("never", &f) && f == LS_PROVISION_NEVER);
    CHECK(!ls_provision_fault_parse("sometimes", &f));
}

static void test_ephemeral_claims(void)
{
    store s = {cJSON_CreateObject(), 0};
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_OK);
    cJSON *pod = json("{'metadata':{'name':'web','namespace':'ns','uid':'pod-uid'},'spec':{'volumes':["
                       "{'name':'cache','ephemeral':{'volumeClaimTemplate':{'metadata':{'labels':{'a':'b'}},"
                       "'spec':{'accessModes':['ReadWriteOnce'],'storageClassName':'dyn'}}}},"
                       "{'name':'cfg','configMap':{'name':'x'}}]}}");
    ls_error err;
    CHECK(ls_pv_create_ephemeral_claims(&ops, pod, &err));
    CHECK_INT(s.puts, 1);
    cJSON *c = s_get(&s, "PersistentVolumeClaim", "ns", "web-cache");
    CHECK(c != NULL);
    const cJSON *owner = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "metadata"), "ownerReferences"), 0);
    CHECK_STR(text_at(owner, "uid", NULL), "pod-uid");
    CHECK_STR(text_at(owner, "kind", NULL), "Pod");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(owner, "controller")));
    CHECK_STR(text_at(c, "spec", "storageClassName"), "dyn");
    cJSON_Delete(c);
    /* once there, it is not made again */
    CHECK(ls_pv_create_ephemeral_claims(&ops, pod, &err));
    CHECK_INT(s.puts, 1);
    cJSON_Delete(pod);
    cJSON_Delete(s.root);
}

/* syncBoundClaim: a claim bound before (bind-completed) whose volume no longer
 * exists, or that lost its volume name, becomes Lost; one naming a volume that
 * was never bound to it (no bind-completed) keeps waiting; Lost is written once. */
static void test_lost_claims(void)
{
    store s = {cJSON_CreateObject(), 0};
    ls_pv_ops ops = ops_of(&s, LS_PROVISION_OK);
    add(&s, "PersistentVolume",
        PV("pv-here", "1Gi", "std", ",'claimRef':{'namespace':'ns','name':'kept','uid':'uid-kept'}"));
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'kept','namespace':'ns','uid':'uid-kept','annotations':{'pv.kubernetes.io/bind-completed':"
        "'yes'}},'spec':{'volumeName':'pv-here','storageClassName':'std'},'status':{'phase':'Bound'}}");
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'gone','namespace':'ns','annotations':{'pv.kubernetes.io/bind-completed':'yes'}},"
        "'spec':{'volumeName':'pv-gone','storageClassName':'std'},'status':{'phase':'Bound'}}");
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'unnamed','namespace':'ns','annotations':{'pv.kubernetes.io/bind-completed':'yes'}},"
        "'spec':{'storageClassName':'std'},'status':{'phase':'Bound'}}");
    add(&s, "PersistentVolumeClaim",
        "{'metadata':{'name':'early','namespace':'ns'},'spec':{'volumeName':'pv-later','storageClassName':'std'}}");
    ls_error err;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_STR(claim_state(&s, "ns", "kept"), "Bound pv-here");
    CHECK_STR(claim_state(&s, "ns", "gone"), "Lost pv-gone");
    CHECK_STR(claim_state(&s, "ns", "unnamed"), "Lost -");
    CHECK_STR(claim_state(&s, "ns", "early"), "- pv-later");
    int puts = s.puts;
    CHECK(ls_pv_sync_all(&ops, &err));
    CHECK_INT(s.puts, puts);
    cJSON_Delete(s.root);
}

int main(void)
{
    test_immediate_binding();
    test_prebound_pairs();
    test_provisioning();
    test_provisioning_faults();
    test_ephemeral_claims();
    test_lost_claims();
    ls_intern_reset();
    TEST_MAIN_END();
}
