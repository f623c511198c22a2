/*
 * main.c: the luasched command: dispatches to subcommands and owns the exit
 * codes (0 done, 1 internal failure, 2 bad input or usage).
 */
#include "cli/cli.h"
#include "luasched/base.h"
#include "luasched/feature_gates.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: luasched <command> [flags]\n"
            "\n"
            "commands:\n"
            "  run                     schedule a real cluster (kubeconfig or in-cluster), as kube-scheduler\n"
            "  simulate CLUSTER.yaml   schedule an embedded, in-memory cluster loaded from manifests\n"
            "  simulate --serve ADDR[:PORT] CLUSTER.yaml...\n"
            "                          serve such a cluster over the Kubernetes API (HTTPS) for kubectl,\n"
            "                          luasched run or kube-scheduler, and report every binding at the end\n"
            "  explain CLUSTER.yaml POD\n"
            "                          why POD went where it went: every plugin's verdict and score per node\n"
            "  check CONFIG            load a KubeSchedulerConfiguration and every plugin it names, and report\n"
            "                          every problem at once\n"
            "  bench WORKLOAD.yaml     run a scheduler_perf workload (bench/*.yaml) and report pods/s\n"
            "  record -o TRACE.yaml    record a live cluster (objects, a timeline of changes, the bindings made)\n"
            "                          for replay with simulate or compare\n"
            "  compare TRACE.yaml --config A --config B ...\n"
            "                          run a trace under several policies and compare them (text, JSON, HTML)\n"
            "  import openb NODES.csv PODS.csv\n"
            "                          write a trace from the openb GPU-sharing trace (tasks as pods, GPUs as\n"
            "                          extended resources), for simulate or compare\n"
            "  whatif QUESTION.json    ask a running scheduler where pods would go (one pod, a gang, a\n"
            "                          template's replicas; on a changed cluster), without creating them\n"
            "  test [SPEC...]          run a plugin's busted specs with the plugin kit (luasched.testing)\n"
            "  new plugin NAME         write a plugin, its spec and a profile into the current folder\n"
            "  version                 print the version, the commit and the LuaJIT version\n"
            "\n"
            "Run 'luasched <command> --help' for a command's flags.\n");
}

const char *ls_cli_argv0;

static bool serves(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "--serve", 7) == 0 && (argv[i][7] == 0 || argv[i][7] == '='))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return LS_EXIT_USAGE;
    }
    ls_cli_argv0 = argv[0];
    const char *cmd = argv[1];
    /* --feature-gates is process-wide (upstream's DefaultFeatureGate): taken
     * out of the arguments of every command that builds a scheduler or its
     * configuration, before the command parses the rest. */
    static const char *const with_gates[] = {"simulate", "explain", "check", "run", "bench", "compare", NULL};
    for (int i = 0; with_gates[i]; i++) {
        if (strcmp(cmd, with_gates[i]) != 0)
            continue;
        ls_error err = {{0}};
        if (!ls_feature_gates_from_args(&argc, argv, &err)) {
            fprintf(stderr, "luasched %s: %s\n", cmd, err.msg);
            return LS_EXIT_USAGE;
        }
    }
    /* Commands that run plugin code do so in a supervised worker process
     * (supervised.c); `simulate --serve` runs none, `run` has its own. */
    if (strcmp(cmd, "simulate") == 0)
        return serves(argc, argv) ? ls_cli_simulate(argc - 1, argv + 1)
                                  : ls_cli_supervised(cmd, ls_cli_simulate, argc - 1, argv + 1);
    if (strcmp(cmd, "explain") == 0)
        return ls_cli_supervised(cmd, ls_cli_explain, argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return ls_cli_supervised(cmd, ls_cli_check, argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return ls_cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "test") == 0)
        return ls_cli_test(argc - 1, argv + 1);
    if (strcmp(cmd, "new") == 0)
        return ls_cli_new(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return ls_cli_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return ls_cli_supervised(cmd, ls_cli_compare, argc - 1, argv + 1);
    if (strcmp(cmd, "record") == 0)
        return ls_cli_record(argc - 1, argv + 1);
    if (strcmp(cmd, "whatif") == 0)
        return ls_cli_whatif(argc - 1, argv + 1);
    if (strcmp(cmd, "import") == 0)
        return ls_cli_import(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        return ls_cli_version(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    static const char *const commands[] = {"run",     "simulate", "explain", "check", "bench",   "record",
                                           "compare", "import",   "whatif",  "test",  "new",     "version"};
    const char *near = ls_did_you_mean(cmd, commands, sizeof commands / sizeof *commands);
    if (near)
        fprintf(stderr, "luasched: unknown command \"%s\"; did you mean \"%s\"?\n", cmd, near);
    else
        fprintf(stderr, "luasched: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return LS_EXIT_USAGE;
}
