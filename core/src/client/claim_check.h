/*
 * claim_check.h: what a worker may ask the supervisor to create or write for
 * DynamicResources' extended resources backed by DRA (DRAExtendedResource,
 * upstream dynamicresources.go bindClaim): the special ResourceClaim of a
 * pod, and the pod's status.extendedResourceClaimStatus. The worker checks
 * before it asks (a plugin gets an error), the supervisor again before it
 * writes (a worker that skips the check is ended). No state: JSON in, a
 * verdict out.
 */
#ifndef LS_CLIENT_CLAIM_CHECK_H
#define LS_CLIENT_CLAIM_CHECK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define LS_EXTENDED_RESOURCE_CLAIM_ANNOTATION "resource.kubernetes.io/extended-resource-claim"

/* The owner a special claim names: its pod. */
typedef struct ls_claim_owner {
    const char *name, *uid;   /* into the checked JSON */
} ls_claim_owner;

/* Is `claim` the special claim of a pod in namespace `ns`, as upstream's
 * scheduler creates it: apiVersion resource.k8s.io/v1, kind ResourceClaim,
 * metadata of namespace `ns` (or none), generateName "<pod>-extended-resources-"
 * and no name, the annotation resource.kubernetes.io/extended-resource-claim
 * "true" and no other, one ownerReference (v1 Pod, the pod's name and uid,
 * controller and blockOwnerDeletion true), labels and finalizers absent,
 * spec.devices.requests a non-empty list, no status. False with why. */
bool ls_claim_check_extended(const cJSON *claim, const char *ns, ls_claim_owner *owner, char *why, size_t cap);

/* Is `patch` a merge patch of a pod's status.extendedResourceClaimStatus and
 * of nothing else: {"status": {"extendedResourceClaimStatus": {"requestMappings":
 * [{containerName, resourceName, requestName}, ...], "resourceClaimName": name}}}.
 * False with why. */
bool ls_claim_check_pod_status_patch(const cJSON *patch, char *why, size_t cap);

#endif
