/*
 * cli.h: subcommands of the luasched executable and their shared helpers.
 */
#ifndef LS_CLI_H
#define LS_CLI_H

#include "luasched/base.h"

#ifndef LS_VERSION
#define LS_VERSION "0.1.0"
#endif

enum { LS_EXIT_OK = 0, LS_EXIT_FAILURE = 1, LS_EXIT_USAGE = 2 };

#include <stdio.h>

struct cJSON;

struct ls_attempt;
struct ls_cycle;
struct ls_scheduler;

typedef struct ls_sim_opts {
    const char *cluster;
    const char *config;
    const char *plugin_path;
    bool json;
    uint64_t seed;
    uint64_t plugin_timeout_ms;
    bool realtime, hold;
    const char *shadow;         /* --shadow: a candidate configuration evaluated beside, never binding */
    const char *cluster_text;   /* the cluster as text instead of the file `cluster` names (live explain) */
    size_t cluster_len;
    /* Optional: every attempt (and Permit wait) is also shown to this observer. */
    void (*observe)(void *ud, const struct ls_attempt *a, const struct ls_cycle *cycle,
                    const struct ls_scheduler *s);
    void *observe_ud;
    const char *write_config;   /* --write-config-to: write the completed configuration and exit */
} ls_sim_opts;

#include <signal.h>
/* SIGINT/SIGTERM set *stop, SIGHUP sets *reload. */
void ls_cli_trap_signals(volatile sig_atomic_t *stop, volatile sig_atomic_t *reload);

int ls_cli_simulate(int argc, char **argv);
int ls_cli_explain(int argc, char **argv);
/* `luasched explain --kubeconfig ...` (explain_live.c). */
int ls_cli_explain_live(int argc, char **argv);
/* explain.c: the pod's record in a simulation's JSON document; its text report. */
struct cJSON *ls_cli_explain_find(struct cJSON *root, const char *ns, const char *name);
void ls_cli_explain_report(const struct cJSON *rec, const char *ns, const char *name);
int ls_cli_bench(int argc, char **argv);
int ls_cli_check(int argc, char **argv);
/* `luasched simulate --serve ...` (serve.c): argv as given to simulate. */
int ls_cli_serve(int argc, char **argv);
void ls_cli_serve_usage_flags(FILE *out);
/* --write-config-to: loads the configuration, builds its plugins, writes the
 * completed configuration to o->write_config (check.c). */
int ls_cli_write_config(const char *cmd, const ls_sim_opts *o);
/* Builds the configuration's plugins and returns the completed configuration
 * as text (JSON or YAML), or NULL with err set. Expands cfg. */
struct ls_config;
char *ls_cli_completed_config(struct ls_config *cfg, const char *plugin_path, bool json, ls_error *err);
int ls_cli_run(int argc, char **argv);
/* The flags simulate and explain share; `positional` arguments expected
 * (the second one, if any, goes to *extra; with --write-config-to they may
 * be left out). -1 after --help. */
int ls_cli_parse_sim_opts(int argc, char **argv, ls_sim_opts *o, int positional, const char **extra,
                          void (*usage)(FILE *));
void ls_cli_simulate_usage_flags(FILE *out);
/* Runs a simulation (messages name `command`); with json_out the JSON document (pods with explain
 * records, summary) is returned instead of printed. */
int ls_cli_run_simulation(const ls_sim_opts *o, const char *command, struct cJSON **json_out);

/* Peak resident set size of this process, in bytes. */
uint64_t ls_cli_peak_rss(void);
double ls_cli_now(void);

#endif
