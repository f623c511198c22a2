/*
 * confine.c: closes, limits and filters a worker process (see confine.h).
 */

#include "worker/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LS_SANITIZED 1
#endif
#endif

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor from 3 up but the kept ones. */
static void close_others(const int *keep, int n)
{
    int sorted[16];
    if (n > 16)
        n = 16;
    memcpy(sorted, keep, (size_t)n * sizeof *keep);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    unsigned from = 3;
    for (int i = 0; i < n; i++) {
        if (sorted[i] < (int)from)
            continue;
        if ((unsigned)sorted[i] > from)
            syscall(SYS_close_range, from, (unsigned)sorted[i] - 1, 0);
        from = (unsigned)sorted[i] + 1;
    }
    syscall(SYS_close_range, from, ~0u, 0);
}

static bool set_limits(uint64_t memory_limit, ls_error *err)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
#ifndef LS_SANITIZED   /* the sanitizers reserve terabytes of address space */
    if (memory_limit) {
        struct rlimit as = {memory_limit, memory_limit};
        if (setrlimit(RLIMIT_AS, &as) != 0)
            return ls_errorf(err, "setting the worker's memory limit: %s", strerror(errno));
    }
#else
    (void)memory_limit;
    (void)err;
#endif
    return true;
}

static const int ALLOWED[] = {
    SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64), SCMP_SYS(close),
    /* the channel's end, so its reader thread returns when a worker that failed to build ends */
    SCMP_SYS(shutdown),
    SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(statx), SCMP_SYS(lseek),
    SCMP_SYS(getdents64), SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(access), SCMP_SYS(faccessat),
    SCMP_SYS(faccessat2), SCMP_SYS(getcwd), SCMP_SYS(fcntl), SCMP_SYS(dup), SCMP_SYS(dup3),
    SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(mincore),
    SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
    SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(get_robust_list), SCMP_SYS(rseq), SCMP_SYS(set_tid_address),
    SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid),
    SCMP_SYS(getegid), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
    SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(poll),
    SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6), SCMP_SYS(inotify_init1), SCMP_SYS(inotify_add_watch),
    SCMP_SYS(inotify_rm_watch), SCMP_SYS(getrandom), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity),
    SCMP_SYS(getrlimit), SCMP_SYS(uname), SCMP_SYS(times), SCMP_SYS(getrusage), SCMP_SYS(sysinfo),
    SCMP_SYS(restart_syscall), SCMP_SYS(membarrier), SCMP_SYS(timer_create), SCMP_SYS(timer_settime),
    SCMP_SYS(timer_delete), SCMP_SYS(pipe2), SCMP_SYS(eventfd2),
    /* reaping its what-if evaluators (forked, below): wait4 only ever reaches the caller's children */
    SCMP_SYS(wait4),
#ifdef LS_SANITIZED   /* LeakSanitizer stops the world with ptrace from a clone at exit */
    SCMP_SYS(ptrace), SCMP_SYS(prctl), SCMP_SYS(sched_getparam), SCMP_SYS(sched_getscheduler),
#endif
};

/* An argument equal to v (clang's -Wmissing-field-initializers refuses
 * libseccomp's SCMP_A<n> macros with one datum). */
static struct scmp_arg_cmp cmp_eq(unsigned int arg, scmp_datum_t v)
{
    return (struct scmp_arg_cmp){.arg = arg, .op = SCMP_CMP_EQ, .datum_a = v, .datum_b = 0};
}

/* What an HTTP client needs (libcurl: a resolver, a connection, TLS). */
static const int NETWORK[] = {
    SCMP_SYS(socket), SCMP_SYS(connect), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt), SCMP_SYS(getsockname),
    SCMP_SYS(getpeername), SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg), SCMP_SYS(recvmsg),
    SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg), SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait), SCMP_SYS(socketpair), SCMP_SYS(bind),
};

static bool add_rules(scmp_filter_ctx ctx, bool network)
{
    bool ok = true;
    for (size_t i = 0; network && i < sizeof NETWORK / sizeof *NETWORK; i++)
        ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, NETWORK[i], 0) == 0;
    for (size_t i = 0; i < sizeof ALLOWED / sizeof *ALLOWED; i++)
        ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, ALLOWED[i], 0) == 0;
    /* O_TMPFILE is __O_TMPFILE | O_DIRECTORY: its own bit only, so that
     * opendir (O_DIRECTORY) still reads a directory (the plugin a misspelt name meant) */
    const scmp_datum_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY);
    /* files: read-only (the runtime, the plugins, the configuration on reload) */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, writing, 0)) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, writing, 0)) == 0;
    /* memory: anonymous mappings (the JIT's code among them), files only as data */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS)) == 0;
    /* threads, not processes (glibc falls back from clone3, whose flags a filter cannot read) */
#ifdef LS_SANITIZED
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 0) == 0;
#else
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)) == 0;
    /* and fork() exactly (glibc's flags): the what-if evaluator, a disposable
     * copy of the worker answering beside the scheduling loop
     * (cli/whatif_worker.c). It inherits this filter, limits and no new
     * privileges; it cannot exec (execve is not allowed), share the parent's
     * memory or enter a namespace, and plugins make no system calls of their
     * own (their Lua has no FFI), so a plugin gains nothing from it. */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                cmp_eq(0, CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)) == 0;
#endif
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
    /* signals to itself only (the watchdog's, raise) */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                                cmp_eq(0, (scmp_datum_t)getpid())) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                                cmp_eq(0, (scmp_datum_t)getpid())) == 0;
    /* a terminal's mode (isatty on the log), reading a limit, never raising one */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, cmp_eq(1, TCGETS)) == 0;
    /* a forked what-if evaluator lowers its own threads to idle priority
     * (cli/whatif_child.c): its own thread (0), SCHED_IDLE, nothing else */
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setscheduler), 2, cmp_eq(0, 0),
                                cmp_eq(1, SCHED_IDLE)) == 0;
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, cmp_eq(2, 0)) == 0;
    return ok;
}

static bool load_filter(bool network, ls_error *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx)
        return ls_errorf(err, "seccomp_init failed");
    bool ok = add_rules(ctx, network);
    int rc = ok ? seccomp_load(ctx) : -1;
    seccomp_release(ctx);
    if (!ok)
        return ls_errorf(err, "building the worker's seccomp filter failed");
    if (rc != 0)
        return ls_errorf(err, "loading the worker's seccomp filter: %s", strerror(-rc));
    return true;
}

static bool confined;
static uint64_t limit_of_memory;

uint64_t ls_worker_memory_limit(void)
{
    return limit_of_memory;
}

bool ls_worker_confine(const ls_confine_options *o, ls_error *err)
{
    if (!o->keep_open)
        close_others(o->keep_fds, o->n_keep);
    signal(SIGPIPE, SIG_IGN);   /* a supervisor gone is the channel's error */
    if (!set_limits(o->memory_limit, err))
        return false;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return ls_errorf(err, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    if (!load_filter(o->allow_network, err))
        return false;
    confined = true;
    limit_of_memory = o->memory_limit;
    return true;
}

bool ls_worker_confined(void)
{
    return confined;
}

static bool pending;
static ls_confine_options pending_options;

void ls_worker_confine_later(const ls_confine_options *o)
{
    pending_options = *o;
    pending = true;
}

void ls_worker_confine_allow_network(void)
{
    if (pending)
        pending_options.allow_network = true;
}

bool ls_worker_confine_due(ls_error *err)
{
    if (!pending)
        return true;
    pending = false;
    return ls_worker_confine(&pending_options, err);
}
