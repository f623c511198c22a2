/*
 * run_worker.c: the worker process of `luasched run` (docs/plugins/worker.md).
 *
 * Started by the supervisor (run.c) as `luasched run --worker ...` with its
 * channel on fd 3 and the shared page on fd 4, with no credentials in its
 * arguments or environment. It confines itself (confine.h) before any plugin
 * loads, builds the scheduler as `run` always did, tells the supervisor the
 * completed configuration and what to watch, waits for the cluster's state,
 * then runs the scheduling loop; every write leaves as a message.
 */
#include "luasched/feature_gates.h"
#include "cli/cli.h"
#include "cli/run_internal.h"
#include "cli/whatif_worker.h"
#include "scheduler/whatif_eval.h"
#include "client/api_needs.h"
#include "client/kcluster.h"
#include "framework/watchdog.h"
#include "scheduler/extender.h"
#include "luasched/log.h"
#include "luasched/scheduler.h"
#include "server/metrics.h"
#include "worker/confine.h"
#include "worker/page.h"
#include "worker/supervise.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct worker_state {
    volatile sig_atomic_t stop, reload;
    const run_opts *opts;
    ls_discovery *discovery;       /* the supervisor's, from --served-apis; NULL: everything served */
    uint64_t configz_reloads;      /* the successful reloads configz reflects */
    ls_kcluster *kc;
    ls_scheduler *sched;
    ls_whatif_worker *whatif;      /* /whatif's questions, answered by forked evaluators */
    ls_metrics *metrics;
    char *plugin_dirs;
    char *configz;
} worker_state;

/* After a successful hot reload, the supervisor's /configz shows the
 * configuration now in force (before: the one of the start). */
static void refresh_configz(worker_state *w)
{
    uint64_t reloads = ls_scheduler_reloads(w->sched, true);
    if (reloads == w->configz_reloads)
        return;
    w->configz_reloads = reloads;
    ls_error err;
    char *text = ls_run_completed_config(w->opts, true, &err);
    if (!text) {
        ls_log_error("Could not refresh /configz after the reload", "err", err.msg);
        return;
    }
    free(w->configz);
    w->configz = text;
    ls_kcluster_send_configz(w->kc, w->configz);
}

static void beat(void *ud, uint64_t now_ms, uint64_t queued)
{
    worker_state *w = ud;
    ls_worker_page *p = ls_worker_page_self;
    atomic_store(&p->waiting, queued);
    atomic_store(&p->heartbeat_ms, now_ms);
    refresh_configz(w);
    ls_whatif_worker_serve(w->whatif, w->sched);
}

/* The what-if evaluator (docs/operations/what-if.md): a second scheduler of
 * the same configuration, with Lua states of its own under the same budgets,
 * tracing, and a source that writes nothing; watched and reloaded as --config.
 * Built when the first question comes (whatif_worker.h), not at start. */
static ls_scheduler *build_whatif(void *ud, ls_error *err)
{
    worker_state *w = ud;
    const run_opts *o = w->opts;
    ls_config cfg;
    if (!ls_run_load_config(o, &cfg))
        return ls_errorf(err, "the configuration could not be loaded again"), NULL;
    cfg.client_connection.kubeconfig = NULL;
    ls_sched_options so = {.seed = o->seed, .trace = true, .plugin_path = o->plugin_path ? o->plugin_path : w->plugin_dirs,
                           .plugin_timeout_ms = o->plugin_timeout_ms ? o->plugin_timeout_ms
                                                                     : cfg.luasched.plugin_timeout_ms};
    ls_sched_source none = ls_whatif_source();
    ls_scheduler *evaluator = ls_scheduler_new(&cfg, &so, &none, err);   /* takes cfg */
    if (evaluator)
        ls_scheduler_watch(evaluator, o->config);
    return evaluator;
}

/* What the server serves, as the supervisor's discovery read it: what needs
 * an API it does not serve is left out of the default profile, and a plugin
 * enabled explicitly that needs one is refused (the supervisor warns). */
static bool learn_served(const run_opts *o, worker_state *w, ls_error *err)
{
    if (!o->served_apis)
        return true;
    w->discovery = ls_discovery_from_list(o->served_apis, err);
    if (!w->discovery)
        return false;
    ls_api_needs_apply(w->discovery);
    return true;
}

static bool build_scheduler(const run_opts *o, ls_config *cfg, worker_state *w, ls_error *err)
{
    /* The scheduler keeps its options across reloads, which free the
     * configuration: the path lives as long as the run. */
    char *dirs = !o->plugin_path && cfg->luasched.plugin_dirs ? ls_xstrdup(cfg->luasched.plugin_dirs) : NULL;
    w->plugin_dirs = dirs;
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path ? o->plugin_path : dirs,
                           .plugin_timeout_ms = o->plugin_timeout_ms ? o->plugin_timeout_ms
                                                                     : cfg->luasched.plugin_timeout_ms};
    ls_sched_source src = ls_kcluster_source(w->kc);
    w->sched = ls_scheduler_new(cfg, &so, &src, err);   /* takes cfg */
    if (!w->sched)
        return false;
    w->metrics = ls_metrics_new();
    ls_scheduler_set_metrics(w->sched, w->metrics);
    return !w->discovery || ls_api_needs_check(w->discovery, w->sched, err);
}

/* --shadow: the candidate's own policy (its plugins and luasched section,
 * the same flags), watched and reloaded like the configuration. */
static bool attach_shadow(const run_opts *o, worker_state *w, ls_error *err)
{
    if (!o->shadow)
        return true;
    ls_config cfg;
    if (!ls_config_load(&cfg, o->shadow, err)) {
        ls_error why = *err;
        ls_config_free(&cfg);
        return ls_errorf(err, "--shadow %s: %s", o->shadow, why.msg);
    }
    ls_sched_options so = {.seed = o->seed, .plugin_path = o->plugin_path, .plugin_timeout_ms = o->plugin_timeout_ms};
    if (!ls_scheduler_set_shadow(w->sched, &cfg, &so, o->shadow, err)) {
        ls_error why = *err;
        return ls_errorf(err, "--shadow %s: %s", o->shadow, why.msg);
    }
    ls_log_info(0, "Evaluating a shadow configuration", "config", o->shadow);
    return true;
}

/* What to ask the supervisor to watch: metrics and custom resources. */
static bool say_hello(worker_state *w)
{
    const char *custom[14];
    uint32_t n = ls_scheduler_custom_resources(w->sched, custom, 14);
    uint32_t wanted = ls_model_wanted();
    return ls_kcluster_hello(w->kc, w->configz, (wanted & LS_WANT_NODE_METRICS) != 0,
                             (wanted & LS_WANT_POD_METRICS) != 0, custom, n);
}

static void free_worker(worker_state *w)
{
    ls_whatif_worker_free(w->whatif);
    ls_scheduler_free(w->sched);   /* closes every Lua state */
    ls_kcluster_free(w->kc);
    ls_discovery_free(w->discovery);
    ls_metrics_free(w->metrics);
    free(w->plugin_dirs);
    free(w->configz);
}

int ls_run_worker(const run_opts *o)
{
    ls_error err;
    if (!ls_worker_page_attach(LS_WORKER_PAGE_FD)) {
        fprintf(stderr, "luasched run: the worker has no shared page\n");
        return LS_EXIT_FAILURE;
    }
    close(LS_WORKER_PAGE_FD);
    int keep[] = {LS_WORKER_CHAN_FD};
    ls_confine_options co = {.keep_fds = keep, .n_keep = 1, .memory_limit = o->worker_memory};
    if (!ls_worker_confine(&co, &err)) {
        ls_log_error("Cannot confine the worker", "err", err.msg);
        return LS_EXIT_FAILURE;
    }
    ls_watchdog_supervised();
    static worker_state w;
    memset(&w, 0, sizeof w);
    ls_cli_trap_signals(&w.stop, &w.reload);
    w.opts = o;
    if (!learn_served(o, &w, &err)) {
        fprintf(stderr, "luasched run: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    ls_config cfg;
    if (!ls_run_load_config(o, &cfg)) {
        ls_discovery_free(w.discovery);
        return LS_EXIT_USAGE;
    }
    cfg.client_connection.kubeconfig = NULL;   /* the worker never connects: no path to credentials kept */
    int rc = LS_EXIT_USAGE;
    w.kc = ls_kcluster_new_linked(LS_WORKER_CHAN_FD, &err);
    if (w.kc)
        ls_extender_set_transport(ls_kcluster_extender_call, w.kc);   /* no network here */
    w.configz = w.kc ? ls_run_completed_config(o, true, &err) : NULL;
    if (!w.configz || !build_scheduler(o, &cfg, &w, &err) || !attach_shadow(o, &w, &err)) {
        ls_log_error("Error creating the scheduler", "err", err.msg);
        fprintf(stderr, "luasched run: %s\n", err.msg);
    } else if ((w.whatif = ls_whatif_worker_new(w.kc, build_whatif, &w, !o->whatif_in_loop,
                                                  (uint64_t)(o->whatif_max_wait_ns / 1000000))) && say_hello(&w)) {
        ls_kcluster_serve_metrics(w.kc, w.metrics);
        ls_scheduler_watch(w.sched, o->config);
        rc = LS_EXIT_OK;
        if (ls_kcluster_wait_fed(w.kc, &w.stop)) {
            ls_kcluster_attach(w.kc, w.sched);
            ls_run_control ctl = {.stop = &w.stop, .reload = &w.reload, .hold = true, .progress = beat,
                                  .progress_ud = &w};
            ls_scheduler_run_realtime(w.sched, &ctl);
        }
    }
    free_worker(&w);
    ls_status_reset();
    ls_intern_reset();
    return rc;
}

/* ---- its command line */

static void add(char ***argv, size_t *n, const char *a, const char *b)
{
    *argv = ls_xrealloc(*argv, (*n + 3) * sizeof **argv);
    (*argv)[(*n)++] = ls_xstrdup(a);
    if (b)
        (*argv)[(*n)++] = ls_xstrdup(b);
    (*argv)[*n] = NULL;
}

char **ls_run_worker_argv(const run_opts *o, const char *served_apis)
{
    char **argv = NULL;
    size_t n = 0;
    char num[32];
    add(&argv, &n, "luasched", NULL);
    add(&argv, &n, "run", NULL);
    add(&argv, &n, "--worker", NULL);
    add(&argv, &n, "--leader-elect=false", NULL);   /* the supervisor elects */
    if (o->config)
        add(&argv, &n, "--config", o->config);
    if (o->plugin_path)
        add(&argv, &n, "--plugin-path", o->plugin_path);
    if (o->shadow)
        add(&argv, &n, "--shadow", o->shadow);
    if (o->whatif_in_loop)
        add(&argv, &n, "--whatif-evaluator", "loop");
    snprintf(num, sizeof num, "%lldus", (long long)(o->whatif_max_wait_ns / 1000));
    add(&argv, &n, "--whatif-max-wait", num);
    if (o->plugin_timeout_ms) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)o->plugin_timeout_ms);
        add(&argv, &n, "--plugin-timeout", num);
    }
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->seed);
    add(&argv, &n, "--seed", num);
    snprintf(num, sizeof num, "%d", o->verbosity);
    add(&argv, &n, "--v", num);
    add(&argv, &n, "--logging-format", o->log_format == LS_LOG_JSON ? "json" : "text");
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->worker_memory);
    add(&argv, &n, "--worker-memory-limit", num);
    char gates[1024];   /* process-wide: main.c took them out of the supervisor's arguments */
    ls_feature_gates_format(gates, sizeof gates);
    if (gates[0])
        add(&argv, &n, "--feature-gates", gates);
    if (served_apis)
        add(&argv, &n, "--served-apis", served_apis);
    return argv;
}

void ls_run_worker_argv_free(char **argv)
{
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}
