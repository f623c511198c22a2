/*
 * import_openb_dra.c: `luasched import openb --as-dra`: the openb trace with
 * its GPUs as Dynamic Resource Allocation devices instead of the
 * open-gpu-share extended resources (import_openb.c), so that DynamicResources
 * (consumable capacity, v1.37) shares the GPUs:
 * - a DeviceClass `gpu.openb.luasched.io` (devices of the driver of that name);
 * - per GPU node a ResourceSlice `<node>-gpus` (pool `<node>`, nodeName),
 *   one device per GPU, `gpu-<i>`, with attributes `model` (string) and
 *   `index` (int), allowMultipleAllocations, and the consumable capacity
 *   `milli` 1000 (no request policy: a claim consumes what it asks);
 * - per GPU task a ResourceClaim `<pod>-gpu`, created with the pod: one
 *   request `gpu` for `count` = the task's GPUs devices of the class, each
 *   consuming `milli` = the task's milli per GPU (1000 for whole GPUs), with
 *   a CEL selector on `model` when the task is constrained; the pod names it
 *   in spec.resourceClaims.
 * Nodes keep their labels (model, GPU count) but not the gpu-milli / gpu-count
 * allocatable; pods keep the open-gpu-share annotations (what they ask) but
 * not the gpu-milli request. Documented in docs/policy-lab/gpu-sharing.md.
 */
#include "cli/import_openb.h"

#include <string.h>

#define DRA_DRIVER "gpu.openb.luasched.io"

static void write_class(FILE *out)
{
    fprintf(out, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"%s\"},"
                 "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == \\\"%s\\\"\"}}]}},\n",
            DRA_DRIVER, DRA_DRIVER);
}

static void write_slice(const openb_node *n, FILE *out)
{
    fprintf(out, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"%s-gpus\"},"
                 "\"spec\":{\"driver\":\"%s\",\"nodeName\":\"%s\",\"pool\":{\"name\":\"%s\",\"generation\":1,"
                 "\"resourceSliceCount\":1},\"devices\":[", n->name, DRA_DRIVER, n->name, n->name);
    for (int32_t i = 0; i < n->gpus; i++)
        fprintf(out, "%s{\"name\":\"gpu-%d\",\"attributes\":{\"model\":{\"string\":\"%s\"},\"index\":{\"int\":%d}},"
                     "\"allowMultipleAllocations\":true,\"capacity\":{\"milli\":{\"value\":\"%d\"}}}",
                i ? "," : "", i, n->model ? n->model : "", i, OPENB_MILLI);
    fprintf(out, "]}},\n");
}

/* The CEL selector of a model constraint "A|B": model in ["A", "B"]. */
static void write_model_selector(const char *spec, FILE *out)
{
    fprintf(out, ",\"selectors\":[{\"cel\":{\"expression\":\"device.attributes[\\\"%s\\\"].model in [", DRA_DRIVER);
    const char *p = spec;
    for (int i = 0;; i++) {
        size_t len = strcspn(p, "|");
        fprintf(out, "%s\\\"%.*s\\\"", i ? ", " : "", (int)len, p);
        if (!p[len])
            break;
        p += len + 1;
    }
    fprintf(out, "]\"}}]");
}

static void write_claim(const openb_task *k, const char *name, uint32_t at_ms, FILE *out)
{
    fprintf(out, "{\"at\":\"%ums\",\"create\":{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                 "\"metadata\":{\"name\":\"%s-gpu\",\"namespace\":\"default\",\"uid\":\"%s-gpu\"},"
                 "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"%s\","
                 "\"allocationMode\":\"ExactCount\",\"count\":%d,\"capacity\":{\"requests\":{\"milli\":\"%d\"}}",
            at_ms, name, name, DRA_DRIVER, k->gpus, k->milli_gpu);
    if (k->spec)
        write_model_selector(k->spec, out);
    fprintf(out, "}}]}}}},\n");
}

/* The pod names its claim instead of asking an extended resource. */
static void write_task(const openb_task *k, const char *name, uint32_t at_ms, FILE *out)
{
    openb_write_pod_start(k, name, at_ms, out);
    fprintf(out, "}}}]");
    if (k->gpus > 0)
        fprintf(out, ",\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"%s-gpu\"}]", name);
    fprintf(out, "}}}");
}

bool openb_write_dra(const openb_trace *t, FILE *out)
{
    fprintf(out, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
    write_class(out);
    for (uint32_t i = 0; i < t->n_nodes; i++) {
        openb_write_node(&t->nodes[i], false, out);
        if (t->nodes[i].gpus > 0)
            write_slice(&t->nodes[i], out);
    }
    openb_write_typical_pods(t, out);
    fprintf(out, "{\"apiVersion\":\"luasched.io/v1alpha1\",\"kind\":\"Timeline\",\"steps\":[\n");
    char name[512];
    for (uint32_t i = 0; i < t->n_tasks; i++) {
        const openb_task *k = &t->tasks[i];
        openb_pod_name(k, name, sizeof name);
        if (k->gpus > 0)
            write_claim(k, name, i + 1, out);
        write_task(k, name, i + 1, out);
        fputs(i + 1 < t->n_tasks ? ",\n" : "\n", out);
    }
    fprintf(out, "]}]}\n");
    return !ferror(out);
}
