/*
 * supervise.c: starting, watching and ending a worker process (see supervise.h).
 */

#include "worker/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

bool ls_child_init(ls_child *c, ls_error *err)
{
    memset(c, 0, sizeof *c);
    c->chan = -1;
    c->page = ls_worker_page_create(&c->page_fd);
    if (!c->page)
        return ls_errorf(err, "cannot create the worker's shared page: %s", strerror(errno));
    return true;
}

void ls_child_free(ls_child *c)
{
    if (c->pid > 0) {
        ls_child_kill(c, "the supervisor is stopping");
        char how[64];
        ls_child_ended(c, true, how, sizeof how);
    }
    if (c->chan >= 0)
        close(c->chan);
    ls_worker_page_free(c->page);
    if (c->page_fd >= 0)
        close(c->page_fd);
    c->page = NULL;
    c->page_fd = -1;
}

/* The variables a worker keeps: nothing that could carry a credential. */
static bool kept_variable(const char *kv)
{
    static const char *const prefixes[] = {"LANG=", "LC_", "TZ=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=",
                                           "LSAN_OPTIONS=", "LD_LIBRARY_PATH="};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(kv, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static bool make_socket(ls_child *c, int *theirs, ls_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return ls_errorf(err, "socketpair: %s", strerror(errno));
    c->chan = sv[0];
    *theirs = sv[1];
    /* a worker that stops reading must not block the supervisor's threads for long */
    struct timeval send_timeout = {.tv_sec = LS_CHILD_SEND_TIMEOUT_S};
    setsockopt(c->chan, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
    ls_worker_page_reset(c->page);
    c->killed_for[0] = 0;
    c->started_ms = ls_worker_now_ms();
    return true;
}

bool ls_child_spawn_exec(ls_child *c, const char *self, char *const argv[], ls_error *err)
{
    int theirs = -1;
    if (!make_socket(c, &theirs, err))
        return false;
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = ls_xcalloc(n + 1, sizeof *env);
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (kept_variable(*e))
            env[k++] = *e;
    pid_t pid = fork();
    if (pid == 0) {
        /* only async-signal-safe calls between fork and exec */
        /* through fds above both targets, so that neither overwrites the other */
        int chan = fcntl(theirs, F_DUPFD, 10), page = fcntl(c->page_fd, F_DUPFD, 10);
        if (chan < 0 || page < 0 || dup2(chan, LS_WORKER_CHAN_FD) < 0 || dup2(page, LS_WORKER_PAGE_FD) < 0)
            _exit(127);
        execve("/proc/self/exe", argv, env);
        if (self)   /* no /proc (a chroot): the path the command was started by, searched in PATH */
            execvpe(self, argv, env);
        _exit(127);
    }
    free(env);
    close(theirs);
    if (pid < 0) {
        close(c->chan);
        c->chan = -1;
        return ls_errorf(err, "fork: %s", strerror(errno));
    }
    c->pid = pid;
    return true;
}

bool ls_child_spawn_fork(ls_child *c, int (*fn)(void *ud, int chan), void *ud, ls_error *err)
{
    int theirs = -1;
    if (!make_socket(c, &theirs, err))
        return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(c->chan);
        ls_worker_page_self = c->page;
        _exit(fn(ud, theirs));
    }
    close(theirs);
    if (pid < 0) {
        close(c->chan);
        c->chan = -1;
        return ls_errorf(err, "fork: %s", strerror(errno));
    }
    c->pid = pid;
    return true;
}

void ls_child_call(const ls_child *c, char *out, size_t cap)
{
    ls_worker_page_call(c->page, out, cap);
}

/* The worker's scheduling state ('R' runnable, 'S' asleep, 'D', 'T'...) and the
 * CPU time its threads have used, from /proc/<pid>/stat. */
static bool read_cpu(pid_t pid, char *state, uint64_t *cpu_ms)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    unsigned long long utime, stime;
    if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", state, &utime, &stime) != 3)
        return false;
    long hz = sysconf(_SC_CLK_TCK);
    *cpu_ms = (utime + stime) * 1000 / (unsigned long long)(hz > 0 ? hz : 100);
    return true;
}

/* Starved, not hung: past its wall-clock deadline (from + allowed) but
 * runnable, with less than `allowed` of CPU used since from, and within the
 * starved factor. The CPU is counted from the first poll that sees the call
 * older than COUNT_FROM_MS (most calls end sooner and cost no read of /proc). */
enum { COUNT_FROM_MS = 100 };

static bool starved(ls_child *c, uint64_t from, uint64_t allowed, uint64_t now)
{
    if (now < from + COUNT_FROM_MS && now < from + allowed)
        return true;
    char state = 0;
    uint64_t cpu = 0;
    if (!read_cpu(c->pid, &state, &cpu))
        return false;
    if (c->deadline_from_ms != from) {
        c->deadline_from_ms = from;
        c->cpu_at_from_ms = cpu;
    }
    if (now < from + allowed)
        return true;
    return state == 'R' && now < from + LS_CHILD_STARVED_FACTOR * allowed && cpu - c->cpu_at_from_ms < allowed;
}

/* True when a plugin call runs past its budget plus grace_ms, or a worker
 * that noted a fatal signal has not ended grace_ms later (see supervise.h). */
bool ls_child_overdue(ls_child *c, uint64_t grace_ms, char *why, size_t cap)
{
    if (c->pid <= 0)
        return false;
    uint64_t started = atomic_load(&c->page->call_started_ms);
    uint64_t budget = atomic_load(&c->page->call_budget_ms);
    uint64_t now = ls_worker_now_ms();
    uint64_t fatal = atomic_load(&c->page->why_ms);
    if (fatal) {   /* its report of a fatal signal hangs */
        if (starved(c, fatal, grace_ms, now))
            return false;
        snprintf(why, cap, "it did not end within %llu ms of a %s", (unsigned long long)grace_ms, c->page->why);
        return true;
    }
    if (!started || starved(c, started, budget + grace_ms, now))
        return false;
    char call[800];
    ls_child_call(c, call, sizeof call);
    snprintf(why, cap, "a plugin call ran past its budget of %llu ms and the %llu ms grace%s%s",
             (unsigned long long)budget, (unsigned long long)grace_ms, call[0] ? ": " : "", call);
    return true;
}

void ls_child_kill(ls_child *c, const char *why)
{
    if (c->pid <= 0)
        return;
    snprintf(c->killed_for, sizeof c->killed_for, "%s", why);
    kill(c->pid, SIGKILL);
}

static void word_end(const ls_child *c, int status, char *how, size_t cap)
{
    char call[800];
    ls_child_call(c, call, sizeof call);
    const char *why = c->page->why;
    if (c->killed_for[0])
        snprintf(how, cap, "killed by the supervisor: %s", c->killed_for);
    else if (WIFSIGNALED(status))
        snprintf(how, cap, "died of signal %d (%s)%s%s%s%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                 why[0] ? ", " : "", why, call[0] ? " in plugin call " : "", call);
    else
        snprintf(how, cap, "exited with status %d%s%s%s%s", WEXITSTATUS(status), why[0] ? ", " : "", why,
                 call[0] ? " in plugin call " : "", call);
}

bool ls_child_ended(ls_child *c, bool block, char *how, size_t cap)
{
    if (c->pid <= 0)
        return true;
    int status;
    pid_t r;
    do
        r = waitpid(c->pid, &status, block ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return false;
    if (r < 0)
        snprintf(how, cap, "could not be waited for: %s", strerror(errno));
    else
        word_end(c, status, how, cap);
    c->pid = 0;
    if (c->chan >= 0)
        close(c->chan);
    c->chan = -1;
    return true;
}
