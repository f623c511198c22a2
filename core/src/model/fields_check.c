/*
 * fields_check.c: the members of the v1 Pod and Node types (and of the parts
 * of them a scheduler reads: containers, their resources, affinity,
 * tolerations, taints, spread constraints), so that a cluster file's
 * `nodeSelecter:`, `containres:` or `request:` is named with its line and
 * the field it most likely meant (base/suggest.c) rather than dropped.
 * Parts the scheduler does not read (volumes, probes, status details) are
 * checked only at their top.
 */
#include "model/fields_check.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "luasched/base.h"

typedef struct schema schema;
typedef struct child {
    const char *name;
    const schema *of;    /* an object, or each item of a list of objects */
} child;
struct schema {
    const char *const *fields;   /* NULL-terminated */
    const child *children;       /* NULL-terminated by name */
};

#define FIELDS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define CHILDREN(...) ((const child[]){__VA_ARGS__, {NULL, NULL}})

static const schema META = {FIELDS("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                                   "generation", "creationTimestamp", "deletionTimestamp",
                                   "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
                                   "finalizers", "managedFields"),
                            NULL};
static const schema RESOURCES = {FIELDS("limits", "requests", "claims"), NULL};
static const schema CONTAINER = {
    FIELDS("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
           "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
           "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
           "securityContext", "stdin", "stdinOnce", "tty"),
    CHILDREN({"resources", &RESOURCES})};
static const schema TOLERATION = {FIELDS("key", "operator", "value", "effect", "tolerationSeconds"), NULL};
static const schema SELECTOR_TERM = {FIELDS("matchExpressions", "matchFields"), NULL};
static const schema NODE_SELECTOR = {FIELDS("nodeSelectorTerms"), CHILDREN({"nodeSelectorTerms", &SELECTOR_TERM})};
static const schema PREFERRED_NODE_TERM = {FIELDS("weight", "preference"), CHILDREN({"preference", &SELECTOR_TERM})};
static const schema NODE_AFFINITY = {
    FIELDS("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"),
    CHILDREN({"requiredDuringSchedulingIgnoredDuringExecution", &NODE_SELECTOR},
             {"preferredDuringSchedulingIgnoredDuringExecution", &PREFERRED_NODE_TERM})};
static const schema POD_TERM = {FIELDS("labelSelector", "namespaceSelector", "namespaces", "topologyKey",
                                       "matchLabelKeys", "mismatchLabelKeys"),
                                NULL};
static const schema WEIGHTED_POD_TERM = {FIELDS("weight", "podAffinityTerm"), CHILDREN({"podAffinityTerm", &POD_TERM})};
static const schema POD_AFFINITY = {
    FIELDS("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"),
    CHILDREN({"requiredDuringSchedulingIgnoredDuringExecution", &POD_TERM},
             {"preferredDuringSchedulingIgnoredDuringExecution", &WEIGHTED_POD_TERM})};
static const schema AFFINITY = {FIELDS("nodeAffinity", "podAffinity", "podAntiAffinity"),
                                CHILDREN({"nodeAffinity", &NODE_AFFINITY}, {"podAffinity", &POD_AFFINITY},
                                         {"podAntiAffinity", &POD_AFFINITY})};
static const schema SPREAD = {FIELDS("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                                     "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"),
                              NULL};
static const schema POD_SPEC = {
    FIELDS("volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
           "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName",
           "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
           "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity",
           "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig",
           "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
           "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
           "resources", "hostnameOverride", "workloadRef", "schedulingGroup"),
    CHILDREN({"containers", &CONTAINER}, {"initContainers", &CONTAINER}, {"resources", &RESOURCES},
             {"affinity", &AFFINITY}, {"tolerations", &TOLERATION}, {"topologySpreadConstraints", &SPREAD})};
static const schema POD_STATUS = {
    FIELDS("observedGeneration", "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs",
           "podIP", "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass",
           "ephemeralContainerStatuses", "resize", "resourceClaimStatuses", "extendedResourceClaimStatus",
           "allocatedResources", "resources"),
    NULL};
static const schema POD = {FIELDS("apiVersion", "kind", "metadata", "spec", "status"),
                           CHILDREN({"metadata", &META}, {"spec", &POD_SPEC}, {"status", &POD_STATUS})};
static const schema TAINT = {FIELDS("key", "value", "effect", "timeAdded"), NULL};
static const schema NODE_SPEC = {FIELDS("podCIDR", "podCIDRs", "providerID", "unschedulable", "taints",
                                        "configSource", "externalID"),
                                 CHILDREN({"taints", &TAINT})};
static const schema NODE_STATUS = {FIELDS("capacity", "allocatable", "phase", "conditions", "addresses",
                                          "daemonEndpoints", "nodeInfo", "images", "volumesInUse", "volumesAttached",
                                          "config", "runtimeHandlers", "features", "declaredFeatures"),
                                   NULL};
static const schema NODE = {FIELDS("apiVersion", "kind", "metadata", "spec", "status"),
                            CHILDREN({"metadata", &META}, {"spec", &NODE_SPEC}, {"status", &NODE_STATUS})};

typedef struct walk {
    ls_unknown_field_fn report;
    void *ud;
} walk;

static void check_object(const walk *w, const cJSON *obj, const schema *s, const char *path, int depth);

static size_t count_of(const char *const *fields)
{
    size_t n = 0;
    while (fields[n])
        n++;
    return n;
}

static void check_child(const walk *w, const cJSON *member, const schema *of, const char *path, int depth)
{
    char sub[512];
    if (cJSON_IsArray(member)) {
        int i = 0;
        for (const cJSON *item = member->child; item; item = item->next, i++) {
            snprintf(sub, sizeof sub, "%s%s%s[%d]", path, *path ? "." : "", member->string, i);
            check_object(w, item, of, sub, depth + 1);
        }
    } else {
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", member->string);
        check_object(w, member, of, sub, depth + 1);
    }
}

static void check_object(const walk *w, const cJSON *obj, const schema *s, const char *path, int depth)
{
    if (!cJSON_IsObject(obj) || depth > 8)
        return;
    size_t n = count_of(s->fields);
    for (const cJSON *m = obj->child; m; m = m->next) {
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = strcmp(s->fields[i], m->string) == 0;
        if (!known) {
            w->report(w->ud, m, path, ls_did_you_mean(m->string, (const char **)s->fields, n));
            continue;
        }
        for (const child *c = s->children; c && c->name; c++)
            if (strcmp(c->name, m->string) == 0)
                check_child(w, m, c->of, path, depth);
    }
}

void ls_check_known_fields(const cJSON *obj, ls_unknown_field_fn report, void *ud)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (!cJSON_IsString(kind))
        return;
    walk w = {report, ud};
    if (strcmp(kind->valuestring, "Pod") == 0)
        check_object(&w, obj, &POD, "", 0);
    else if (strcmp(kind->valuestring, "Node") == 0)
        check_object(&w, obj, &NODE, "", 0);
}
