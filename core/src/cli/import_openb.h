/*
 * import_openb.h: the openb trace in memory (import_openb.c): nodes and tasks
 * read from the CSV files, the FGD paper's workload tuning, and the luasched
 * trace they become.
 *
 * The form a GPU node and a GPU pod take (the names open-gpu-share and the
 * paper's simulator use, so a device plugin of that family reads them too):
 * - node: allocatable `alibabacloud.com/gpu-milli` (1000 per GPU) and
 *   `alibabacloud.com/gpu-count`; labels `alibabacloud.com/gpu-card-model`
 *   (the model) and `alibabacloud.com/gpu-count`;
 * - pod: requests (and limits) `alibabacloud.com/gpu-milli` = GPUs x milli per
 *   GPU, so NodeResourcesFit checks the node's total; annotations
 *   `alibabacloud.com/gpu-count` (GPUs), `alibabacloud.com/gpu-milli` (milli
 *   per GPU: below 1000 is a share of one GPU) and, when the task is
 *   constrained, `alibabacloud.com/gpu-card-model` ("V100M16|V100M32").
 */
#ifndef LS_CLI_IMPORT_OPENB_H
#define LS_CLI_IMPORT_OPENB_H

#include "luasched/base.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OPENB_MILLI 1000

typedef struct openb_node {
    char *name, *model;          /* model NULL when the node has no GPU model */
    int64_t milli_cpu, memory_mib;
    int32_t gpus;
    uint32_t rank;               /* the seeded tie-break rank (label luasched.io/openb-rank) */
} openb_node;

typedef struct openb_task {
    char *name, *spec, *qos;     /* spec NULL when unconstrained; qos may be NULL */
    int64_t milli_cpu, memory_mib, creation;
    int32_t gpus, milli_gpu;     /* milli_gpu: per GPU, 0..1000 */
    uint32_t clone_of;           /* index + 1 of the trace task this one was sampled from; 0 for a trace task */
    uint32_t clone_no;
} openb_task;

typedef struct openb_trace {
    openb_node *nodes;
    uint32_t n_nodes;
    openb_task *tasks;           /* in scheduling order (creation order until openb_sample) */
    uint32_t n_tasks, cap_tasks;
    uint32_t n_trace_tasks;      /* before tuning */
    int64_t node_gpu_milli, task_gpu_milli;
} openb_trace;

/* Reads both files; errors name FILE:LINE, the column, what was expected. */
bool openb_read(openb_trace *t, const char *nodes_csv, const char *pods_csv, ls_error *err);
typedef enum openb_order {
    OPENB_ORDER_SHUFFLE,    /* the paper's grid (shufflePod: true): name order shuffled with the seed */
    OPENB_ORDER_CREATION,   /* creation time, then name */
} openb_order;

/* The arrival order, then the paper's workload tuning to ratio x the
 * cluster's GPU milli (0: none), then the nodes' tie-break ranks (a
 * permutation of 0..n-1 over the nodes in name order), drawing from Go's
 * math/rand seeded with seed, the calls the simulator makes in its order:
 * the same seed gives the simulator's run. */
void openb_sample(openb_trace *t, double ratio, int64_t seed, openb_order order);
bool openb_write(const openb_trace *t, FILE *out);
/* The same trace with the GPUs as DRA devices (import_openb_dra.c, --as-dra). */
bool openb_write_dra(const openb_trace *t, FILE *out);
/* A Node item: hostname, GPU count and model labels, CPU, memory and pods;
 * with `gpu_resources` the open-gpu-share gpu-milli / gpu-count allocatable
 * too (--as-dra leaves them to the ResourceSlices). Shared by both writers. */
void openb_write_node(const openb_node *n, bool gpu_resources, FILE *out);
/* The task's pod name: NAME, or NAME-tuned-I for a sampled copy. */
void openb_pod_name(const openb_task *k, char *buf, size_t cap);
/* A task's Timeline step up to its container's requests (the pod `name`, its
 * open-gpu-share annotations, cpu and memory); the writer adds what the GPUs
 * ask and closes the step. Shared by both writers. */
void openb_write_pod_start(const openb_task *k, const char *name, uint32_t at_ms, FILE *out);
/* The TypicalPodSet item (FGD's typical pods), shared by both writers. */
void openb_write_typical_pods(const openb_trace *t, FILE *out);
void openb_free(openb_trace *t);

#endif
