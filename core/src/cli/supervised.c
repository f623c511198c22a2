/*
 * supervised.c: `simulate`, `explain`, `check` and `compare` run their plugin
 * code in a worker process (docs/plugins/worker.md "Other commands"). This
 * process forks the command's own code as the worker, before any plugin or
 * thread exists, and watches it through the shared page: a plugin call that
 * runs past its budget plus a grace period is ended with the worker. When the
 * worker dies during a plugin call for a pod (a crash, or ended for a hang),
 * the command is run again with that pod marked, so that the new worker
 * fails it at once as an Error of that plugin and the run completes with its
 * report; ended outside any pod's call (a plugin file that hangs at load),
 * the command says why and exits with status 2, as for any plugin that does
 * not load. A signal sent to this process (SIGINT, SIGTERM, SIGHUP, or any
 * other one sent with kill) is passed to the worker, and the worker's end is
 * this process's: its exit status, or the same signal.
 *
 * The worker confines itself as run's does (worker/confine.h), when its
 * first plugin code is about to run: by then the command has read its input
 * and opened the files it writes, and from then on it opens nothing for
 * writing, makes no socket and runs no program. Its address space is limited
 * to LUASCHED_WORKER_MEMORY_LIMIT (default 8Gi, as run's
 * --worker-memory-limit; 0: none).
 */
#include "cli/cli.h"
#include "framework/watchdog.h"
#include "worker/confine.h"
#include "worker/marks.h"
#include "worker/supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { GRACE_MS = 2000, MAX_RESTARTS = 16, POLL_US = 20000 };
#define DEFAULT_WORKER_MEMORY (8ull << 30)

typedef struct command {
    int (*fn)(int argc, char **argv);
    int argc;
    char **argv;
    uint64_t memory_limit;
} command;

static volatile pid_t worker_pid;
static volatile sig_atomic_t forwarded;   /* a signal from outside was passed on: the end is not a crash */

static int worker_main(void *ud, int chan)
{
    close(chan);   /* these commands need no channel: the page is enough */
    const command *c = ud;
    ls_watchdog_supervised();
    ls_worker_confine_later(&(ls_confine_options){.keep_open = true, .memory_limit = c->memory_limit});
    int rc = c->fn(c->argc, c->argv);
    fflush(NULL);
    return rc;
}

static void forward(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (info && info->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)) {
        signal(sig, SIG_DFL);   /* a fault of this process itself */
        return;
    }
    forwarded = 1;
    if (worker_pid > 0)
        kill(worker_pid, sig);
}

static void trap_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGSEGV, SIGBUS, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* Waits for the worker, ending it when a call is overdue; its wait status. */
static int watch(ls_child *c, char *how, size_t cap)
{
    int status = 0;
    for (;;) {
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        char why[1024];
        if (!c->killed_for[0] && ls_child_overdue(c, GRACE_MS, why, sizeof why))
            ls_child_kill(c, why);
        usleep(POLL_US);
    }
    char call[800];
    ls_child_call(c, call, sizeof call);
    if (c->killed_for[0])
        snprintf(how, cap, "was ended by its supervisor: %s", c->killed_for);
    else if (WIFSIGNALED(status)) {
        /* what the worker said of its end (out of memory), unless it only names the signal */
        const char *why = strncmp(c->page->why, "fatal signal", 12) ? c->page->why : "";
        snprintf(how, cap, "died of signal %d (%s)%s%s%s%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                 why[0] ? ", " : "", why, call[0] ? " in plugin call " : "", call);
    }
    else
        snprintf(how, cap, "exited with status %d", WEXITSTATUS(status));
    c->pid = 0;
    worker_pid = 0;
    return status;
}

/* The Error a marked pod gets in the next worker. */
static void mark(const ls_child *c, const char *cmd, const char *how)
{
    const ls_worker_page *p = c->page;
    char msg[2000];
    if (!strcmp(p->point, "Filter"))
        snprintf(msg, sizeof msg, "running \"%s\" filter plugin: the %s worker process %s", p->plugin, cmd, how);
    else
        snprintf(msg, sizeof msg, "running %s plugin \"%s\": the %s worker process %s", p->point, p->plugin, cmd, how);
    ls_worker_mark_pod(p->pod, msg);
    fprintf(stderr, "luasched %s: the worker process %s; running again with pod %s failed as an Error of plugin %s\n",
            cmd, how, p->pod, ls_worker_page_culprit(p));
}

int ls_cli_supervised(const char *cmd, int (*fn)(int argc, char **argv), int argc, char **argv)
{
    ls_child child;
    ls_error err;
    if (!ls_child_init(&child, &err)) {   /* no page: run unsupervised rather than not at all */
        fprintf(stderr, "luasched %s: %s; running without a worker process\n", cmd, err.msg);
        return fn(argc, argv);
    }
    command c = {fn, argc, argv, DEFAULT_WORKER_MEMORY};
    const char *limit = getenv("LUASCHED_WORKER_MEMORY_LIMIT");
    if (limit && !ls_cli_parse_size(limit, &c.memory_limit)) {
        fprintf(stderr, "luasched %s: LUASCHED_WORKER_MEMORY_LIMIT: expected bytes with an optional Ki, Mi or Gi "
                        "suffix (0: none), got \"%s\"\n", cmd, limit);
        ls_child_free(&child);
        return LS_EXIT_USAGE;
    }
    trap_signals();
    int status = 0;
    for (int restarts = 0;; restarts++) {
        fflush(NULL);
        if (!ls_child_spawn_fork(&child, worker_main, &c, &err)) {
            fprintf(stderr, "luasched %s: %s\n", cmd, err.msg);
            ls_child_free(&child);
            return LS_EXIT_FAILURE;
        }
        close(child.chan);
        child.chan = -1;
        worker_pid = child.pid;
        char how[1200];
        status = watch(&child, how, sizeof how);
        bool crashed = !WIFEXITED(status) && !forwarded;
        if (!crashed || !child.page->pod[0] || restarts == MAX_RESTARTS) {
            if (crashed)
                fprintf(stderr, "luasched %s: the worker process %s\n", cmd, how);
            break;
        }
        mark(&child, cmd, how);
    }
    bool ended_by_us = child.killed_for[0] != 0;
    ls_child_free(&child);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (ended_by_us && !forwarded)
        return LS_EXIT_USAGE;   /* said above: a plugin that hangs outside any pod's call (loading) is bad input */
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
}
