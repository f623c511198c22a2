/*
 * read_kinds.c: the kinds the scheduler reads (see read_kinds.h): the
 * default plugins' and preemption's (model/objects.c and the decoder), the
 * volume plugins', DynamicResources' and GangScheduling's.
 */
#include "client/read_kinds.h"

const ls_read_kind LS_READ_KINDS[] = {
    {"", "v1", "namespaces", "Namespace", "v1"},
    {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", "scheduling.k8s.io/v1"},
    {"", "v1", "nodes", "Node", "v1"},
    {"", "v1", "services", "Service", "v1"},
    {"", "v1", "replicationcontrollers", "ReplicationController", "v1"},
    {"apps", "v1", "replicasets", "ReplicaSet", "apps/v1"},
    {"apps", "v1", "statefulsets", "StatefulSet", "apps/v1"},
    {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", "policy/v1"},
    {"", "v1", "persistentvolumes", "PersistentVolume", "v1"},
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", "v1"},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass", "storage.k8s.io/v1"},
    {"storage.k8s.io", "v1", "csinodes", "CSINode", "storage.k8s.io/v1"},
    {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", "storage.k8s.io/v1"},
    {"storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", "storage.k8s.io/v1"},
    {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", "storage.k8s.io/v1"},
    {"resource.k8s.io", "v1", "deviceclasses", "DeviceClass", "resource.k8s.io/v1"},
    {"resource.k8s.io", "v1", "resourceslices", "ResourceSlice", "resource.k8s.io/v1"},
    {"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", "resource.k8s.io/v1"},
    {"scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", "scheduling.k8s.io/v1beta1"},
    {"scheduling.k8s.io", "v1alpha3", "podgroups", "PodGroup", "scheduling.k8s.io/v1alpha3"},
    {"scheduling.k8s.io", "v1alpha1", "workloads", "Workload", "scheduling.k8s.io/v1alpha1"},
    {"", "v1", "pods", "Pod", "v1"},
};

const size_t LS_N_READ_KINDS = sizeof LS_READ_KINDS / sizeof LS_READ_KINDS[0];
