/*
 * supervise.h: a supervised worker process (docs/plugins/worker.md): started
 * with a socket to talk over and the shared page (page.h), watched for a
 * plugin call that runs past its budget plus a grace period, killed and
 * reaped, with the reason worded for the log.
 */
#ifndef LS_WORKER_SUPERVISE_H
#define LS_WORKER_SUPERVISE_H

#include "luasched/base.h"
#include "worker/page.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The descriptors an exec'd worker finds its channel and its page on. */
enum { LS_WORKER_CHAN_FD = 3, LS_WORKER_PAGE_FD = 4 };
/* A write to the worker that blocks this long fails (the worker does not read). */
enum { LS_CHILD_SEND_TIMEOUT_S = 5 };

typedef struct ls_child {
    pid_t pid;                 /* 0: none */
    int chan;                  /* the supervisor's end of the socket; -1: none */
    ls_worker_page *page;      /* made once, cleared for each worker */
    int page_fd;
    uint64_t started_ms;
    char killed_for[512];      /* why the supervisor killed it ("" when it did not) */
    uint64_t deadline_from_ms; /* the page's call (or fatal-signal) time last seen */
    uint64_t cpu_at_from_ms;   /* the worker's CPU time when the supervisor saw it */
} ls_child;

bool ls_child_init(ls_child *c, ls_error *err);
void ls_child_free(ls_child *c);   /* kills a worker still running */

/* Starts this executable again (/proc/self/exe, else `self`, the command's
 * argv[0], searched in PATH) with `argv`, the channel on fd 3, the page on
 * fd 4 and only the environment variables that configure the runtime
 * (locale, time zone, sanitizers), never the caller's others. */
bool ls_child_spawn_exec(ls_child *c, const char *self, char *const argv[], ls_error *err);
/* Forks a worker running fn(ud, channel fd) and exiting with its result. */
bool ls_child_spawn_fork(ls_child *c, int (*fn)(void *ud, int chan), void *ud, ls_error *err);

/* True when a plugin call runs past its budget plus grace_ms: why names the
 * call when the worker described it. A worker that is runnable and has used
 * less CPU than that since the call began is starved by a busy machine, not
 * hung: it gets up to LS_CHILD_STARVED_FACTOR times the time before it is
 * ended. A worker blocked (a lock left held) or spinning is ended on time. */
bool ls_child_overdue(ls_child *c, uint64_t grace_ms, char *why, size_t cap);
enum { LS_CHILD_STARVED_FACTOR = 10 };
/* SIGKILL, remembering why. */
void ls_child_kill(ls_child *c, const char *why);
/* Whether the worker has ended (waiting for it when `block`); how it ended
 * is worded in `how` ("exited with status 1", "killed by signal 9 (Killed):
 * <why>", with the call it ran when known). Closes the channel once ended. */
bool ls_child_ended(ls_child *c, bool block, char *how, size_t cap);
/* "profile/plugin/point/pod" the worker last described, or "". */
void ls_child_call(const ls_child *c, char *out, size_t cap);

#endif
