/*
 * pv_controller.h: the part of kube-controller-manager's PersistentVolume and
 * ephemeral-volume controllers (and of an external CSI provisioner) that the
 * scheduler depends on, for clusters luasched owns (the embedded cluster of
 * `simulate` and the served API of `simulate --serve`). Against a real
 * cluster luasched does only what kube-scheduler does.
 *
 * For one claim it:
 *  - completes a pre-bound pair: a claim naming its volume (spec.volumeName),
 *    or a volume whose claimRef names the claim (VolumeBinding's PreBind);
 *  - binds an Immediate claim to the smallest matching available volume
 *    (class, access modes, capacity, selector, volume mode), or provisions one;
 *  - provisions a volume for a WaitForFirstConsumer claim annotated with
 *    volume.kubernetes.io/selected-node: capacity from the request, the
 *    class's provisioner as CSI driver, node affinity from the selected node's
 *    topology (the CSINode driver's topologyKeys, else the keys of the class's
 *    allowedTopologies) with the node's values;
 *  - reports the claim bound (spec.volumeName, pv.kubernetes.io/bind-completed,
 *    status.phase Bound) and the volume Bound (claimRef with the claim's uid);
 *  - marks a claim bound before whose volume no longer exists Lost.
 * A provisioning fault either removes the selected-node annotation (what a
 * failing provisioner does, so the scheduler retries) or never finishes.
 *
 * It reads and writes objects through ls_pv_ops, so one implementation serves
 * both stores.
 */
#ifndef LS_SIM_PV_CONTROLLER_H
#define LS_SIM_PV_CONTROLLER_H

#include "luasched/base.h"

struct cJSON;

typedef enum ls_provision_fault {
    LS_PROVISION_OK = 0,
    LS_PROVISION_FAIL,      /* the provisioner fails: the selected-node annotation is removed */
    LS_PROVISION_NEVER,     /* the provisioner never answers: the claim stays pending */
} ls_provision_fault;

typedef struct ls_pv_ops {
    void *ud;
    /* A copy of the object the caller frees, or NULL (ns NULL for cluster-scoped kinds). */
    struct cJSON *(*get)(void *ud, const char *kind, const char *ns, const char *name);
    /* Calls fn with every object of kind (the tree is valid during the call) until it returns false. */
    void (*each)(void *ud, const char *kind, bool (*fn)(void *fud, const struct cJSON *obj), void *fud);
    /* Stores obj as the object's new version (created when absent); obj stays the caller's. */
    bool (*put)(void *ud, const char *kind, const struct cJSON *obj, ls_error *err);
    ls_provision_fault fault;
} ls_pv_ops;

/* One claim's step (see above). False only when a write failed (err filled). */
bool ls_pv_sync_claim(const ls_pv_ops *ops, const char *ns, const char *name, ls_error *err);
/* Every claim, in store order. */
bool ls_pv_sync_all(const ls_pv_ops *ops, ls_error *err);
/* The ephemeral-volume controller: a claim "<pod>-<volume>" owned by the pod
 * for each of the pod's generic ephemeral volumes that has none yet. */
bool ls_pv_create_ephemeral_claims(const ls_pv_ops *ops, const struct cJSON *pod, ls_error *err);
/* "fail" or "never" (the --fault provision=... values); false on anything else. */
bool ls_provision_fault_parse(const char *text, ls_provision_fault *out);

#endif
