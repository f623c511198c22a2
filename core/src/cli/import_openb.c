/*
 * import_openb.c: reads the openb CSV files (columns found by their header
 * names, so extra columns and another order are fine), applies the FGD
 * paper's workload tuning and writes the luasched trace (see import_openb.h).
 *
 * Order (the paper's simulator, SortClusterPods): the paper's grid runs with
 * shufflePod true, so the tasks, sorted by name, are shuffled with the seed
 * (OPENB_ORDER_SHUFFLE); OPENB_ORDER_CREATION keeps creation time, then name
 * (the simulator with shufflePod false: its pod YAML carries no creation
 * time, so that order is the file's). The shuffle draws first, the tuning
 * after, from one generator, as the simulator's math/rand calls go.
 *
 * Tuning (the paper's simulator, TunePodsByNodeTotalResource): with T the
 * ratio times the cluster's GPU milli and S the tasks' total GPU milli,
 * - S > T: remove a task drawn uniformly from the list until S <= T;
 * - S < T: draw a task uniformly from the trace (sorted by name, as the
 *   simulator keeps its workload) and append a copy named NAME-tuned-I,
 *   until the drawn task's milli per GPU would take S beyond T (the
 *   simulator's test, kept as it is: a multi-GPU task counts one GPU there).
 *   The copies come after the trace's tasks, in the order they were drawn.
 * Draws: Go's math/rand seeded with the seed (base/go_rand.c), in the
 * simulator's order: rand.Seed(seed), one rand.Int() (its debug log line
 * evaluates one, printed or not), the shuffle, the tuning's rand.Intn, ten
 * rand.Float64 of its informers (see openb_sample), then rand.Perm for the
 * node names. So seed 42 is the paper's seed 42: the same order, the same
 * copies, the same node ranks.
 */
#include "cli/import_openb.h"

#include "base/go_rand.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV */

typedef struct csv_file {
    const char *path;
    FILE *f;
    char *line;
    size_t cap;
    uint32_t lineno;
    char *field[32];
    int n_fields;
} csv_file;

static bool csv_next(csv_file *c)
{
    ssize_t len;
    do {
        len = getline(&c->line, &c->cap, c->f);
        if (len < 0)
            return false;
        c->lineno++;
        while (len > 0 && (c->line[len - 1] == '\n' || c->line[len - 1] == '\r'))
            c->line[--len] = '\0';
    } while (len == 0);
    c->n_fields = 0;
    char *p = c->line;
    for (;;) {
        if (c->n_fields < 32)
            c->field[c->n_fields++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return true;
}

static int csv_column(const csv_file *c, const char *name)
{
    for (int i = 0; i < c->n_fields; i++)
        if (strcmp(c->field[i], name) == 0)
            return i;
    return -1;
}

static bool csv_open(csv_file *c, const char *path, ls_error *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f)
        return ls_errorf(err, "%s: cannot open: %s", path, strerror(errno));
    if (!csv_next(c)) {
        fclose(c->f);
        return ls_errorf(err, "%s: empty file: expected a header line", path);
    }
    return true;
}

static void csv_close(csv_file *c)
{
    if (c->f)
        fclose(c->f);
    free(c->line);
}

/* The header's columns by name; a missing one is an error naming them all. */
static bool csv_columns(csv_file *c, const char *const *names, int n, int *idx, bool *optional, ls_error *err)
{
    for (int i = 0; i < n; i++) {
        idx[i] = csv_column(c, names[i]);
        if (idx[i] < 0 && !(optional && optional[i]))
            return ls_errorf(err, "%s:%u: the header has no column \"%s\" (expected the columns of an openb %s file)",
                             c->path, c->lineno, names[i], n > 6 ? "pod list" : "node list");
    }
    return true;
}

static const char *field(const csv_file *c, int col)
{
    return col >= 0 && col < c->n_fields ? c->field[col] : "";
}

static bool int_field(const csv_file *c, int col, const char *name, int64_t lo, int64_t hi, int64_t *out,
                      ls_error *err)
{
    const char *s = field(c, col);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s && *end == '.' ) {   /* "2.0" as pandas writes integers of a float column */
        char *frac = end + 1;
        while (*frac == '0')
            frac++;
        if (*frac == '\0')
            end = frac;
    }
    if (!*s || *end || errno || v < lo || v > hi)
        return ls_errorf(err, "%s:%u: %s: expected an integer from %lld to %lld, got \"%s\"", c->path, c->lineno, name,
                         (long long)lo, (long long)hi, s);
    *out = v;
    return true;
}

/* Empty or "nan" (pandas' missing value) is no value. */
static bool missing(const char *s)
{
    return !*s || strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0;
}

/* A label value: [A-Za-z0-9._-], alphanumeric at both ends, at most 63. */
static bool label_value(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* An object name: lower-case alphanumerics, '-' and '.', at most 200 here. */
static bool object_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 200 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' || s[i] == '.'))
            return false;
    return true;
}

static bool name_field(const csv_file *c, int col, const char *what, char **out, ls_error *err)
{
    const char *s = field(c, col);
    if (!object_name(s))
        return ls_errorf(err, "%s:%u: %s: expected a lower-case name (a-z, 0-9, '-', '.'), got \"%s\"", c->path,
                         c->lineno, what, s);
    *out = ls_xstrdup(s);
    return true;
}

/* GPU models: one ("T4") or several separated by '|' ("V100M16|V100M32"). */
static bool models_field(const csv_file *c, int col, const char *what, bool several, char **out, ls_error *err)
{
    const char *s = field(c, col);
    *out = NULL;
    if (missing(s))
        return true;
    for (const char *p = s;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (!label_value(p, len) || (bar && !several))
            return ls_errorf(err, "%s:%u: %s: expected %s (letters, digits, '-', '_', '.'), got \"%s\"", c->path,
                             c->lineno, what, several ? "GPU models separated by '|', as V100M16|V100M32" :
                             "one GPU model, as V100M16", s);
        if (!bar)
            break;
        p = bar + 1;
    }
    *out = ls_xstrdup(s);
    return true;
}

/* ---- nodes */

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL, N_COLS };
static const char *const NODE_COLS[N_COLS] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

static bool read_node(const csv_file *c, const int *col, openb_node *n, ls_error *err)
{
    int64_t gpus;
    memset(n, 0, sizeof *n);
    if (!name_field(c, col[N_SN], "sn", &n->name, err) ||
        !int_field(c, col[N_CPU], "cpu_milli", 1, INT64_C(1) << 40, &n->milli_cpu, err) ||
        !int_field(c, col[N_MEM], "memory_mib", 1, INT64_C(1) << 40, &n->memory_mib, err) ||
        !int_field(c, col[N_GPU], "gpu", 0, 64, &gpus, err) ||
        !models_field(c, col[N_MODEL], "model", false, &n->model, err))
        return false;
    n->gpus = (int32_t)gpus;
    return true;
}

static bool read_nodes(openb_trace *t, const char *path, ls_error *err)
{
    csv_file c;
    int col[N_COLS];
    if (!csv_open(&c, path, err))
        return false;
    bool ok = csv_columns(&c, NODE_COLS, N_COLS, col, NULL, err);
    uint32_t cap = 0;
    while (ok && csv_next(&c)) {
        if (t->n_nodes == cap) {
            cap = cap ? cap * 2 : 256;
            t->nodes = ls_xrealloc(t->nodes, cap * sizeof *t->nodes);
        }
        ok = read_node(&c, col, &t->nodes[t->n_nodes], err);
        if (ok) {
            t->node_gpu_milli += (int64_t)t->nodes[t->n_nodes].gpus * OPENB_MILLI;
            t->n_nodes++;
        } else {
            free(t->nodes[t->n_nodes].name);
        }
    }
    if (ok && t->n_nodes == 0)
        ok = ls_errorf(err, "%s: no node rows after the header", path);
    csv_close(&c);
    return ok;
}

/* ---- tasks */

enum { P_NAME, P_CPU, P_MEM, P_NGPU, P_MGPU, P_SPEC, P_CREATED, P_QOS, P_COLS };
static const char *const POD_COLS[P_COLS] = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                             "gpu_milli", "gpu_spec", "creation_time", "qos"};
static bool POD_OPTIONAL[P_COLS] = {[P_QOS] = true};

static bool task_gpus(const csv_file *c, const int *col, openb_task *k, ls_error *err)
{
    int64_t gpus, milli;
    if (!int_field(c, col[P_NGPU], "num_gpu", 0, 64, &gpus, err) ||
        !int_field(c, col[P_MGPU], "gpu_milli", 0, OPENB_MILLI, &milli, err))
        return false;
    if (gpus == 0 && milli != 0)
        return ls_errorf(err, "%s:%u: gpu_milli: a task with num_gpu 0 asks for no GPU share, got %lld "
                              "(set num_gpu to 1 for a share of one GPU)", c->path, c->lineno, (long long)milli);
    if (gpus > 0 && milli == 0)
        return ls_errorf(err, "%s:%u: gpu_milli: a task with num_gpu %lld needs its milli per GPU (1 to 1000), got 0",
                         c->path, c->lineno, (long long)gpus);
    if (gpus > 1 && milli != OPENB_MILLI)
        return ls_errorf(err, "%s:%u: gpu_milli: a task with num_gpu %lld takes whole GPUs (1000), got %lld; "
                              "only a one-GPU task shares a GPU", c->path, c->lineno, (long long)gpus,
                         (long long)milli);
    k->gpus = (int32_t)gpus;
    k->milli_gpu = (int32_t)milli;
    return true;
}

static bool read_task(const csv_file *c, const int *col, openb_task *k, ls_error *err)
{
    memset(k, 0, sizeof *k);
    bool ok = name_field(c, col[P_NAME], "name", &k->name, err) &&
              int_field(c, col[P_CPU], "cpu_milli", 0, INT64_C(1) << 40, &k->milli_cpu, err) &&
              int_field(c, col[P_MEM], "memory_mib", 0, INT64_C(1) << 40, &k->memory_mib, err) &&
              task_gpus(c, col, k, err) && models_field(c, col[P_SPEC], "gpu_spec", true, &k->spec, err) &&
              int_field(c, col[P_CREATED], "creation_time", 0, INT64_C(1) << 50, &k->creation, err);
    if (ok && col[P_QOS] >= 0 && !missing(field(c, col[P_QOS]))) {
        const char *q = field(c, col[P_QOS]);
        if (!label_value(q, strlen(q)))
            ok = ls_errorf(err, "%s:%u: qos: expected a word (LS, BE, Burstable, ...), got \"%s\"", c->path,
                           c->lineno, q);
        else
            k->qos = ls_xstrdup(q);
    }
    if (!ok) {
        free(k->name);
        free(k->spec);
    }
    return ok;
}

static void push_task(openb_trace *t, const openb_task *k)
{
    if (t->n_tasks == t->cap_tasks) {
        t->cap_tasks = t->cap_tasks ? t->cap_tasks * 2 : 1024;
        t->tasks = ls_xrealloc(t->tasks, t->cap_tasks * sizeof *t->tasks);
    }
    t->tasks[t->n_tasks++] = *k;
}

static int64_t task_milli(const openb_task *k)
{
    return (int64_t)k->gpus * k->milli_gpu;
}

static bool read_tasks(openb_trace *t, const char *path, ls_error *err)
{
    csv_file c;
    int col[P_COLS];
    if (!csv_open(&c, path, err))
        return false;
    bool ok = csv_columns(&c, POD_COLS, P_COLS, col, POD_OPTIONAL, err);
    while (ok && csv_next(&c)) {
        openb_task k;
        ok = read_task(&c, col, &k, err);
        if (ok) {
            push_task(t, &k);
            t->task_gpu_milli += task_milli(&k);
        }
    }
    if (ok && t->n_tasks == 0)
        ok = ls_errorf(err, "%s: no task rows after the header", path);
    csv_close(&c);
    return ok;
}

/* The simulator's order: creation time, then name. */
static int by_creation(const void *a, const void *b)
{
    const openb_task *x = a, *y = b;
    if (x->creation != y->creation)
        return x->creation < y->creation ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int by_name_value(const void *a, const void *b)
{
    const openb_task *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    const openb_task *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

bool openb_read(openb_trace *t, const char *nodes_csv, const char *pods_csv, ls_error *err)
{
    memset(t, 0, sizeof *t);
    if (!read_nodes(t, nodes_csv, err) || !read_tasks(t, pods_csv, err)) {
        openb_free(t);
        return false;
    }
    qsort(t->tasks, t->n_tasks, sizeof *t->tasks, by_creation);
    for (uint32_t i = 1; i < t->n_tasks; i++)
        if (strcmp(t->tasks[i].name, t->tasks[i - 1].name) == 0) {
            ls_errorf(err, "%s: task \"%s\" appears twice (names must be unique)", pods_csv, t->tasks[i].name);
            openb_free(t);
            return false;
        }
    t->n_trace_tasks = t->n_tasks;
    return true;
}

/* ---- tuning */

static void tune_down(openb_trace *t, double target, ls_go_rand *rng)
{
    while ((double)t->task_gpu_milli > target && t->n_tasks > 0) {
        uint32_t i = (uint32_t)ls_go_rand_intn(rng, t->n_tasks);
        openb_task gone = t->tasks[i];
        t->task_gpu_milli -= task_milli(&gone);
        memmove(&t->tasks[i], &t->tasks[i + 1], (t->n_tasks - i - 1) * sizeof *t->tasks);
        t->n_tasks--;
        free(gone.name);
        free(gone.spec);
        free(gone.qos);
    }
}

static void tune_up(openb_trace *t, double target, ls_go_rand *rng)
{
    uint32_t n = t->n_trace_tasks;
    const openb_task **sorted = ls_xcalloc(n, sizeof *sorted);
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = &t->tasks[i];
    qsort(sorted, n, sizeof *sorted, by_name);
    uint32_t *draw = ls_xcalloc(n, sizeof *draw);   /* trace index of each name-sorted task */
    for (uint32_t i = 0; i < n; i++)
        draw[i] = (uint32_t)(sorted[i] - t->tasks);
    free(sorted);
    for (uint32_t no = 0;; no++) {
        uint32_t from = draw[ls_go_rand_intn(rng, n)];
        openb_task k = t->tasks[from];
        if ((double)(t->task_gpu_milli + k.milli_gpu) > target)
            break;
        k.name = ls_xstrdup(t->tasks[from].name);
        k.spec = k.spec ? ls_xstrdup(k.spec) : NULL;
        k.qos = k.qos ? ls_xstrdup(k.qos) : NULL;
        k.clone_of = from + 1;
        k.clone_no = no;
        push_task(t, &k);   /* may move t->tasks: `from` is an index */
        t->task_gpu_milli += task_milli(&k);
    }
    free(draw);
}

static void swap_tasks(void *ctx, size_t i, size_t j)
{
    openb_task *tasks = ctx, k = tasks[i];
    tasks[i] = tasks[j];
    tasks[j] = k;
}

/* The simulator's SortClusterPods with shufflePod: sort.Slice by name, then
 * rand.Shuffle. */
static void shuffle_tasks(openb_trace *t, ls_go_rand *rng)
{
    qsort(t->tasks, t->n_tasks, sizeof *t->tasks, by_name_value);
    ls_go_rand_shuffle(rng, t->n_tasks, swap_tasks, t->tasks);
}

/* The simulator names every node "%04d-" + its name, the numbers
 * rand.Perm(n)[i] for the i-th node in name order, and its scheduler breaks
 * score ties by the smallest name: the rank is that number. */
static int node_by_name(const void *a, const void *b)
{
    return strcmp((*(openb_node *const *)a)->name, (*(openb_node *const *)b)->name);
}

static void rank_nodes(openb_trace *t, ls_go_rand *rng)
{
    uint32_t n = t->n_nodes ? t->n_nodes : 1;
    openb_node **by_name = ls_xcalloc(n, sizeof *by_name);
    uint32_t *perm = ls_xcalloc(n, sizeof *perm);
    for (uint32_t i = 0; i < t->n_nodes; i++)
        by_name[i] = &t->nodes[i];
    qsort(by_name, t->n_nodes, sizeof *by_name, node_by_name);
    ls_go_rand_perm(rng, t->n_nodes, perm);
    for (uint32_t i = 0; i < t->n_nodes; i++)
        by_name[i]->rank = perm[i];
    free(perm);
    free(by_name);
}

#define OPENB_INFORMER_DRAWS 10

void openb_sample(openb_trace *t, double ratio, int64_t seed, openb_order order)
{
    ls_go_rand rng;
    ls_go_rand_seed(&rng, seed);
    (void)ls_go_rand_int63(&rng);   /* the simulator's log.Debugf("... Random Int: %d", rand.Int()) */
    if (order == OPENB_ORDER_SHUFFLE)
        shuffle_tasks(t, &rng);
    if (ratio > 0 && t->node_gpu_milli > 0) {
        double target = ratio * (double)t->node_gpu_milli;
        if ((double)t->task_gpu_milli > target)
            tune_down(t, target, &rng);
        else if ((double)t->task_gpu_milli < target)
            tune_up(t, target, &rng);
    }
    /* Before naming the nodes, the simulator starts its scheduler's informers
     * (RunCluster's runScheduler), and each of their reflectors draws its
     * watch timeout with the global rand.Float64 (client-go's ListAndWatch).
     * That is OPENB_INFORMER_DRAWS draws: the count with which the paper's
     * published GpuPacking fragmentation series at seed 42 is reproduced
     * value for value (docs/policy-lab/gpu-sharing.md, section 1); 0 to 9 and
     * 11 to 12 are not. */
    for (int i = 0; i < OPENB_INFORMER_DRAWS; i++)
        (void)ls_go_rand_float64(&rng);
    rank_nodes(t, &rng);
}

/* ---- typical pods (the paper's GetTypicalPods: isInvolvedCpuPods true,
 * podPopularityThreshold 95, podIncreaseStep 1) */

typedef struct openb_shape {
    const openb_task *k;   /* the first task of the shape */
    uint32_t count;
} openb_shape;

static int spec_cmp(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int shape_cmp(const openb_task *x, const openb_task *y)
{
    if (x->milli_cpu != y->milli_cpu)
        return x->milli_cpu < y->milli_cpu ? -1 : 1;
    if (x->milli_gpu != y->milli_gpu)
        return x->milli_gpu < y->milli_gpu ? -1 : 1;
    if (x->gpus != y->gpus)
        return x->gpus < y->gpus ? -1 : 1;
    return spec_cmp(x->spec, y->spec);
}

static int by_shape(const void *a, const void *b)
{
    return shape_cmp(*(const openb_task *const *)a, *(const openb_task *const *)b);
}

/* More frequent first; at equal counts the larger shape first (the
 * simulator's sort.Reverse of count, then PodResource.Less). */
static int by_popularity(const void *a, const void *b)
{
    const openb_shape *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return -shape_cmp(x->k, y->k);
}

/* The shapes of the trace's own tasks (not the sampled ones), most popular
 * first, cut at the first count reaching 95% of the tasks. */
static uint32_t typical_shapes(const openb_trace *t, openb_shape **out, uint32_t *covered)
{
    uint32_t n = t->n_trace_tasks;
    const openb_task **v = ls_xcalloc(n + 1, sizeof *v);
    uint32_t m = 0;
    for (uint32_t i = 0; i < t->n_tasks; i++)
        if (!t->tasks[i].clone_of)
            v[m++] = &t->tasks[i];
    qsort(v, m, sizeof *v, by_shape);
    openb_shape *s = ls_xcalloc(m + 1, sizeof *s);
    uint32_t n_s = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (n_s == 0 || shape_cmp(s[n_s - 1].k, v[i]) != 0)
            s[n_s++] = (openb_shape){v[i], 0};
        s[n_s - 1].count++;
    }
    free(v);
    qsort(s, n_s, sizeof *s, by_popularity);
    uint32_t keep = 0, cum = 0;
    while (keep < n_s && (double)cum < 0.95 * m)
        cum += s[keep++].count;
    *out = s;
    *covered = cum;
    return keep;
}

void openb_write_typical_pods(const openb_trace *t, FILE *out)
{
    openb_shape *s;
    uint32_t covered, n = typical_shapes(t, &s, &covered);
    fprintf(out, "{\"apiVersion\":\"luasched.io/v1alpha1\",\"kind\":\"TypicalPodSet\",\"metadata\":{"
                 "\"name\":\"openb\",\"namespace\":\"default\"},\"spec\":{\"pods\":[");
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s{\"milliCpu\":%lld,\"milliGpu\":%d,\"gpus\":%d,%s%s%s\"weight\":%.17g}", i ? "," : "",
                (long long)s[i].k->milli_cpu, s[i].k->milli_gpu, s[i].k->gpus, s[i].k->spec ? "\"model\":\"" : "",
                s[i].k->spec ? s[i].k->spec : "", s[i].k->spec ? "\"," : "", (double)s[i].count / covered);
    fprintf(out, "]}},\n");
    free(s);
}

/* ---- writing */

/* A node's pods capacity is 1001, as in the paper's node list
 * (data/node_yaml): the task count never limits a node there. Its GPUs are
 * open-gpu-share's extended resources when gpu_resources, else left to DRA
 * devices (import_openb_dra.c); the labels are the same either way. */
void openb_write_node(const openb_node *n, bool gpu_resources, FILE *out)
{
    fprintf(out, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
                 "\"kubernetes.io/hostname\":\"%s\"", n->name, n->name);
    if (n->gpus > 0)
        fprintf(out, ",\"alibabacloud.com/gpu-count\":\"%d\"", n->gpus);
    if (n->model)
        fprintf(out, ",\"alibabacloud.com/gpu-card-model\":\"%s\"", n->model);
    fprintf(out, ",\"luasched.io/openb-rank\":\"%04u\"", n->rank);
    char res[256];
    int len = snprintf(res, sizeof res, "\"cpu\":\"%lldm\",\"memory\":\"%lldMi\",\"pods\":\"1001\"",
                       (long long)n->milli_cpu, (long long)n->memory_mib);
    if (gpu_resources && n->gpus > 0)
        snprintf(res + len, sizeof res - (size_t)len,
                 ",\"alibabacloud.com/gpu-milli\":\"%d\",\"alibabacloud.com/gpu-count\":\"%d\"",
                 n->gpus * OPENB_MILLI, n->gpus);
    fprintf(out, "}},\"status\":{\"capacity\":{%s},\"allocatable\":{%s},"
                 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},\n", res, res);
}

void openb_pod_name(const openb_task *k, char *buf, size_t cap)
{
    if (k->clone_of)
        snprintf(buf, cap, "%s-tuned-%u", k->name, k->clone_no);
    else
        snprintf(buf, cap, "%s", k->name);
}

void openb_write_pod_start(const openb_task *k, const char *name, uint32_t at_ms, FILE *out)
{
    fprintf(out, "{\"at\":\"%ums\",\"create\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                 "\"namespace\":\"default\",\"uid\":\"%s\",\"annotations\":{\"luasched.io/openb-creation-time\":\"%lld\"",
            at_ms, name, name, (long long)k->creation);
    if (k->qos)
        fprintf(out, ",\"luasched.io/openb-qos\":\"%s\"", k->qos);
    if (k->gpus > 0)
        fprintf(out, ",\"alibabacloud.com/gpu-count\":\"%d\",\"alibabacloud.com/gpu-milli\":\"%d\"", k->gpus,
                k->milli_gpu);
    if (k->spec)
        fprintf(out, ",\"alibabacloud.com/gpu-card-model\":\"%s\"", k->spec);
    fprintf(out, "}},\"spec\":{\"containers\":[{\"name\":\"task\",\"image\":\"openb/task\",\"resources\":{"
                 "\"requests\":{\"cpu\":\"%lldm\",\"memory\":\"%lldMi\"",
            (long long)k->milli_cpu, (long long)k->memory_mib);
}

/* The pod asks its GPU milli as the open-gpu-share extended resource. */
static void write_task(const openb_task *k, const char *name, uint32_t at_ms, FILE *out)
{
    openb_write_pod_start(k, name, at_ms, out);
    if (k->gpus > 0)
        fprintf(out, ",\"alibabacloud.com/gpu-milli\":\"%lld\"},\"limits\":{\"alibabacloud.com/gpu-milli\":\"%lld\"",
                (long long)task_milli(k), (long long)task_milli(k));
    fprintf(out, "}}}]}}}");
}

bool openb_write(const openb_trace *t, FILE *out)
{
    fprintf(out, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
    for (uint32_t i = 0; i < t->n_nodes; i++)
        openb_write_node(&t->nodes[i], true, out);
    openb_write_typical_pods(t, out);
    fprintf(out, "{\"apiVersion\":\"luasched.io/v1alpha1\",\"kind\":\"Timeline\",\"steps\":[\n");
    char name[512];
    for (uint32_t i = 0; i < t->n_tasks; i++) {
        openb_pod_name(&t->tasks[i], name, sizeof name);
        write_task(&t->tasks[i], name, i + 1, out);
        fputs(i + 1 < t->n_tasks ? ",\n" : "\n", out);
    }
    fprintf(out, "]}]}\n");
    return !ferror(out);
}

void openb_free(openb_trace *t)
{
    for (uint32_t i = 0; i < t->n_nodes; i++) {
        free(t->nodes[i].name);
        free(t->nodes[i].model);
    }
    for (uint32_t i = 0; i < t->n_tasks; i++) {
        free(t->tasks[i].name);
        free(t->tasks[i].spec);
        free(t->tasks[i].qos);
    }
    free(t->nodes);
    free(t->tasks);
    memset(t, 0, sizeof *t);
}
