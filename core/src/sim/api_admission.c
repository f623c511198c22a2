/*
 * api_admission.c: what the API server's admission and defaulting do to a new
 * object: upstream's pod validation (api_validate.c), the Priority plugin (priority and preemptionPolicy from the pod's
 * PriorityClass or the globalDefault one, as the embedded cluster does), pod
 * defaults (schedulerName, phase), a Ready condition for nodes without
 * conditions, and an Active phase for namespaces.
 */
#include "sim/api_internal.h"

#include <stdio.h>
#include <string.h>

/* Built-in classes the API server always has. */
static const struct {
    const char *name;
    int32_t value;
} system_classes[] = {{"system-cluster-critical", 2000000000}, {"system-node-critical", 2000001000}};

static const cJSON *find_class(ls_api *a, const char *name)
{
    api_coll *c = api_coll_of(a, ls_api_resource_find("scheduling.k8s.io", "v1", "priorityclasses"));
    for (uint32_t i = 0; i < c->len; i++) {
        const cJSON *pc = c->items[i]->obj;
        const char *n = ls_json_text(pc, "metadata", "name");
        if (name ? n && strcmp(n, name) == 0 : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pc, "globalDefault")))
            return pc;
    }
    return NULL;
}

/* The Priority admission plugin: priority and preemptionPolicy from the
 * pod's PriorityClass (or the globalDefault one). A priority already written
 * in the spec is kept, as the embedded cluster does for dumped pods. */
static int admit_priority(ls_api *a, cJSON *pod, const char *name, cJSON **out)
{
    cJSON *spec = ls_json_child_object(pod, "spec");
    const char *cls = ls_json_text(spec, "priorityClassName", NULL);
    const cJSON *pc = cls ? find_class(a, cls) : find_class(a, NULL);
    double value = 0;
    const char *policy = NULL;
    if (pc) {
        value = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pc, "value"));
        policy = ls_json_text(pc, "preemptionPolicy", NULL);
        if (!cls)
            cJSON_AddStringToObject(spec, "priorityClassName", ls_json_text(pc, "metadata", "name"));
    } else if (cls) {
        size_t i = 0;
        while (i < 2 && strcmp(system_classes[i].name, cls) != 0)
            i++;
        if (i == 2) {
            char msg[600];
            snprintf(msg, sizeof msg, "pods \"%s\" is forbidden: no PriorityClass with name %s was found", name, cls);
            return api_fail(out, 403, "Forbidden", msg);
        }
        value = system_classes[i].value;
    }
    if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(spec, "priority")))
        api_set_item(spec, "priority", cJSON_CreateNumber(value));
    if (!ls_json_text(spec, "preemptionPolicy", NULL))
        cJSON_AddStringToObject(spec, "preemptionPolicy", policy ? policy : "PreemptLowerPriority");
    return 0;
}

static int default_pod(ls_api *a, cJSON *pod, const char *name, cJSON **out)
{
    cJSON *spec = ls_json_child_object(pod, "spec");
    if (!ls_json_text(spec, "schedulerName", NULL))
        cJSON_AddStringToObject(spec, "schedulerName", "default-scheduler");
    cJSON *status = ls_json_child_object(pod, "status");
    if (!ls_json_text(status, "phase", NULL))
        cJSON_AddStringToObject(status, "phase", ls_json_text(spec, "nodeName", NULL) ? "Running" : "Pending");
    return admit_priority(a, pod, name, out);
}

static void default_node(cJSON *node)
{
    cJSON *status = ls_json_child_object(node, "status");
    if (cJSON_GetObjectItemCaseSensitive(status, "conditions"))
        return;
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON *ready = cJSON_CreateObject();
    cJSON_AddStringToObject(ready, "type", "Ready");
    cJSON_AddStringToObject(ready, "status", "True");
    cJSON_AddStringToObject(ready, "reason", "KubeletReady");
    cJSON_AddItemToArray(conds, ready);
}

int api_admit(ls_api *a, const ls_api_resource *r, cJSON *obj, const char *name, cJSON **out)
{
    int code;
    if (strcmp(r->kind, "Pod") == 0)
        return (code = api_validate_pod(obj, name, out)) ? code : default_pod(a, obj, name, out);
    if (strcmp(r->kind, "Node") == 0)
        default_node(obj);
    if (strcmp(r->kind, "Namespace") == 0)
        ls_json_set_string(ls_json_child_object(obj, "status"), "phase", "Active");
    return 0;
}
