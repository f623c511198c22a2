/*
 * import.c: `luasched import openb NODES.csv PODS.csv [--inflate R] [--seed N]
 * [-o OUT]`: turns Alibaba's GPU-sharing trace "openb" (alibaba/clusterdata,
 * cluster-trace-gpu-v2023/csv) into a luasched trace: one JSON List with the
 * nodes and a Timeline that creates the tasks as pods, one per millisecond, in
 * the order the FGD paper's grid schedules them (the tasks shuffled with the
 * seed, then the sampled copies; --order creation keeps creation time, then
 * name). The CSV reading and the inflation rule are in import_openb.c; the
 * form of a GPU node and a GPU pod (extended resources, annotations, the
 * model label) in import_openb.h, documented in docs/policy-lab/gpu-sharing.md;
 * with --as-dra the GPUs are DRA devices and claims (import_openb_dra.c).
 */
#include "cli/cli.h"
#include "cli/import_openb.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void import_usage(FILE *out)
{
    fprintf(out,
            "usage: luasched import openb NODES.csv PODS.csv [--inflate R] [--seed N] [--order O] [--as-dra]\n"
            "       [-o OUT]\n"
            "\n"
            "Writes a luasched trace (a JSON List: the nodes, then a Timeline creating one pod per task,\n"
            "1 ms apart) from the openb GPU-sharing trace (alibaba/clusterdata,\n"
            "cluster-trace-gpu-v2023/csv: openb_node_list_*.csv and openb_pod_list_*.csv).\n"
            "\n"
            "flags:\n"
            "  --inflate R   grow (or prune) the tasks until their GPU requests are R times the cluster's\n"
            "                GPUs, sampling extra tasks from the trace (the FGD paper's workload tuning;\n"
            "                default 1.3; 0 keeps the trace as it is)\n"
            "  --seed N      the seed of the order, the sampling and the node ranks, drawn with Go's math/rand\n"
            "                as the paper's simulator draws them (default 42, the paper's first seed)\n"
            "  --order O     shuffle (default: the tasks shuffled with the seed, then the sampled copies,\n"
            "                as the paper's grid runs) or creation (creation time, then name)\n"
            "  --as-dra      GPUs as DRA devices with consumable capacity (a DeviceClass, a ResourceSlice\n"
            "                per GPU node, a ResourceClaim per GPU task) instead of open-gpu-share's\n"
            "                extended resources\n"
            "  -o, --out F   write to F instead of standard output\n"
            "  -h, --help    this help\n");
}

typedef struct import_opts {
    const char *nodes, *pods, *out;
    double inflate;
    uint64_t seed;
    bool as_dra;
    openb_order order;
} import_opts;

static int parse_import(int argc, char **argv, import_opts *o)
{
    static const struct option longopts[] = {
        {"inflate", required_argument, NULL, 'i'}, {"seed", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},     {"help", no_argument, NULL, 'h'},
        {"as-dra", no_argument, NULL, 'd'},
        {"order", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    *o = (import_opts){.inflate = 1.3, .seed = 42, .order = OPENB_ORDER_SHUFFLE};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'i':
            o->inflate = strtod(optarg, &end);
            if (!*optarg || *end || o->inflate < 0 || o->inflate > 100) {
                fprintf(stderr, "luasched import: --inflate: expected a ratio from 0 to 100, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 's':
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || *optarg == '-') {
                fprintf(stderr, "luasched import: --seed: expected a non-negative integer, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 'r':
            if (strcmp(optarg, "shuffle") == 0)
                o->order = OPENB_ORDER_SHUFFLE;
            else if (strcmp(optarg, "creation") == 0)
                o->order = OPENB_ORDER_CREATION;
            else {
                fprintf(stderr, "luasched import: --order: expected shuffle or creation, got \"%s\"\n", optarg);
                return LS_EXIT_USAGE;
            }
            break;
        case 'o': o->out = optarg; break;
        case 'd': o->as_dra = true; break;
        case 'h': import_usage(stdout); return -1;
        default: import_usage(stderr); ls_cli_suggest_flag(argc, argv, longopts); return LS_EXIT_USAGE;
        }
    }
    int rest = argc - optind;
    if (rest < 1 || strcmp(argv[optind], "openb") != 0) {
        fprintf(stderr, "luasched import: expected the format 'openb' first, got %s%s%s\n", rest ? "\"" : "nothing",
                rest ? argv[optind] : "", rest ? "\"" : "");
        import_usage(stderr);
        return LS_EXIT_USAGE;
    }
    if (rest != 3) {
        fprintf(stderr, "luasched import openb: expected NODES.csv and PODS.csv, got %d file%s\n", rest - 1,
                rest == 2 ? "" : "s");
        import_usage(stderr);
        return LS_EXIT_USAGE;
    }
    o->nodes = argv[optind + 1];
    o->pods = argv[optind + 2];
    return 0;
}

int ls_cli_import(int argc, char **argv)
{
    import_opts o;
    int rc = parse_import(argc, argv, &o);
    if (rc)
        return rc < 0 ? LS_EXIT_OK : rc;
    openb_trace t;
    ls_error err;
    if (!openb_read(&t, o.nodes, o.pods, &err)) {
        fprintf(stderr, "luasched import: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    openb_sample(&t, o.inflate, (int64_t)o.seed, o.order);
    FILE *out = o.out ? fopen(o.out, "w") : stdout;
    if (!out) {
        fprintf(stderr, "luasched import: -o %s: %s\n", o.out, strerror(errno));
        openb_free(&t);
        return LS_EXIT_USAGE;
    }
    bool ok = o.as_dra ? openb_write_dra(&t, out) : openb_write(&t, out);
    if (o.out && fclose(out) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "luasched import: writing the trace: %s\n", strerror(errno));
        rc = LS_EXIT_FAILURE;
    } else {
        fprintf(stderr, "luasched import: %u nodes (%lld GPUs), %u tasks from the trace + %u sampled = %u pods, "
                        "GPU requests %.1f%% of the cluster's GPUs\n",
                t.n_nodes, (long long)(t.node_gpu_milli / 1000), t.n_trace_tasks, t.n_tasks - t.n_trace_tasks,
                t.n_tasks, t.node_gpu_milli ? 100.0 * (double)t.task_gpu_milli / (double)t.node_gpu_milli : 0);
    }
    openb_free(&t);
    return rc;
}
