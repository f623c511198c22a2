/*
 * test_worker.c: the worker process's parts (docs/plugins/worker.md): the
 * channel's framing and its limits, the confinement (what the seccomp filter
 * refuses and allows, run in a forked child), the shared page's description
 * of a call, and the supervision of a child: a call past its budget plus the
 * grace is ended, a death is worded with the call it ran.
 */
#include "test.h"
#include "worker/channel.h"
#include "worker/confine.h"
#include "worker/page.h"
#include "worker/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static void test_channel(void)
{
    int sv[2];
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const char *f[] = {"default", "", "uid-1"};
    CHECK(ls_chan_send(sv[0], NULL, LS_CH_BIND, f, 3));
    ls_chan_msg m;
    CHECK_INT(ls_chan_recv(sv[1], &m, 1024), 1);
    CHECK_INT(m.type, LS_CH_BIND);
    CHECK_INT(m.n, 3);
    CHECK_STR(m.f[0], "default");
    CHECK_STR(m.f[1], "");
    CHECK_STR(m.f[2], "uid-1");
    ls_chan_msg_free(&m);
    /* over the receiver's limit: refused before reading the body */
    const char *big[] = {"0123456789012345678901234567890123456789"};
    CHECK(ls_chan_send(sv[0], NULL, LS_CH_EVENT, big, 1));
    CHECK_INT(ls_chan_recv(sv[1], &m, 16), -1);
    close(sv[0]);
    close(sv[1]);
    /* a frame whose last field is not NUL-terminated */
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uint32_t len = 4;
    char frame[8];
    memcpy(frame, &len, 4);
    memcpy(frame + 4, "\x21" "abc", 4);
    CHECK_INT(write(sv[0], frame, 8), 8);
    CHECK_INT(ls_chan_recv(sv[1], &m, 1024), -1);
    close(sv[0]);
    CHECK_INT(ls_chan_recv(sv[1], &m, 1024), 0);   /* the peer closed */
    close(sv[1]);
    CHECK_STR(ls_chan_type_name(LS_CH_BIND), "bind");
    CHECK_STR(ls_chan_type_name(200), "unknown");
}

/* What the confined child could do, one bit each. */
enum {
    CAN_SOCKET = 1, CAN_WRITE_FILE = 2, CAN_EXEC = 4, CAN_FORK = 8, CAN_SIGNAL_PARENT = 16, CAN_MAP_FILE_CODE = 32,
    CAN_READ_FILE = 64, CAN_THREAD = 128, SECCOMP_2 = 256, CAN_KEEP_FD = 512, CLOSED_OTHERS = 1024,
    CAN_CLONE_OTHER = 2048,   /* clone as a process with flags other than fork()'s */
};

static void *nothing(void *arg)
{
    return arg;
}

static int probe(int extra_fd)
{
    int got = 0;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0)
        got |= CAN_SOCKET;
    int w = open("/tmp/luasched-confine-probe", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (w >= 0)
        got |= CAN_WRITE_FILE;
    char *argv[] = {"/bin/true", NULL};
    execve("/bin/true", argv, NULL);
    got |= 0;   /* still here: execve failed */
    if (errno != EPERM)
        got |= CAN_EXEC;
    pid_t p = fork();   /* allowed: the what-if evaluator (cli/whatif_worker.c) */
    if (p == 0)
        _exit(0);
    if (p > 0 && waitpid(p, NULL, 0) == p)
        got |= CAN_FORK;
    /* CLONE_FS is harmless to the kernel: only the filter refuses it */
    long c = syscall(SYS_clone, (long)(CLONE_FS | SIGCHLD), 0L, 0L, 0L, 0L);
    if (c == 0)
        _exit(0);
    if (c > 0) {
        got |= CAN_CLONE_OTHER;
        waitpid((pid_t)c, NULL, 0);
    }
    if (kill(getppid(), 0) == 0)
        got |= CAN_SIGNAL_PARENT;
    int r = open("/proc/self/status", O_RDONLY);
    if (r >= 0) {
        got |= CAN_READ_FILE;
        char buf[4096];
        ssize_t n = read(r, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = 0;
        if (strstr(buf, "Seccomp:\t2"))
            got |= SECCOMP_2;
        void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, r, 0);
        if (code != MAP_FAILED)
            got |= CAN_MAP_FILE_CODE;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) == 0 && pthread_join(t, NULL) == 0)
        got |= CAN_THREAD;
    if (fcntl(extra_fd, F_GETFD) < 0)
        got |= CLOSED_OTHERS;
    return got;
}

static void test_confine(void)
{
    int pipefd[2];
    CHECK_INT(pipe(pipefd), 0);
    int extra = open("/dev/null", O_RDONLY);
    pid_t pid = fork();
    if (pid == 0) {
        int keep[] = {pipefd[1]};
        ls_confine_options o = {.keep_fds = keep, .n_keep = 1, .memory_limit = 4ull << 30};
        ls_error err;
        int got = ls_worker_confine(&o, &err) ? probe(extra) : -1;
        if (fcntl(pipefd[1], F_GETFD) >= 0)
            got |= CAN_KEEP_FD;
        ssize_t n = write(pipefd[1], &got, sizeof got);
        _exit(n == sizeof got ? 0 : 1);
    }
    close(pipefd[1]);
    close(extra);
    int got = -1;
    CHECK_INT(read(pipefd[0], &got, sizeof got), (long long)sizeof got);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    CHECK(got >= 0);
    CHECK_INT(got & CAN_SOCKET, 0);
    CHECK_INT(got & CAN_WRITE_FILE, 0);
    CHECK_INT(got & CAN_EXEC, 0);
    CHECK_INT(got & CAN_FORK, CAN_FORK);
    if (!SANITIZED)   /* LeakSanitizer needs a process of its own at exit */
        CHECK_INT(got & CAN_CLONE_OTHER, 0);
    CHECK_INT(got & CAN_SIGNAL_PARENT, 0);
    CHECK_INT(got & CAN_MAP_FILE_CODE, 0);
    CHECK_INT(got & CAN_READ_FILE, CAN_READ_FILE);
    CHECK_INT(got & SECCOMP_2, SECCOMP_2);
    CHECK_INT(got & CAN_THREAD, CAN_THREAD);
    CHECK_INT(got & CAN_KEEP_FD, CAN_KEEP_FD);
    CHECK_INT(got & CLOSED_OTHERS, CLOSED_OTHERS);
    CHECK(access("/tmp/luasched-confine-probe", F_OK) != 0);
}

/* The forked commands' mode (cli/supervised.c): the confinement is recorded,
 * applied when plugin code is first due, and closes nothing, so the file the
 * command opened for its output before that is still written; opening one
 * for writing afterwards, a socket and exec are refused. */
static void test_confine_later(void)
{
    char out_path[] = "/tmp/ls_test_confine_out_XXXXXX";
    int out = mkstemp(out_path);
    CHECK(out >= 0);
    int pipefd[2];
    CHECK_INT(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        ls_confine_options o = {.keep_open = true, .memory_limit = 4ull << 30};
        ls_worker_confine_later(&o);
        int got = ls_worker_confined() ? -2 : 0;   /* nothing applied yet */
        ls_error err;
        if (got == 0 && ls_worker_confine_due(&err) && ls_worker_confined() && ls_worker_confine_due(&err)) {
            got = probe(out) & ~CLOSED_OTHERS;
            if (write(out, "report\n", 7) == 7)
                got |= CAN_KEEP_FD;
        }
        ssize_t n = write(pipefd[1], &got, sizeof got);
        _exit(n == sizeof got ? 0 : 1);
    }
    close(pipefd[1]);
    int got = -1;
    CHECK_INT(read(pipefd[0], &got, sizeof got), (long long)sizeof got);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    CHECK(got >= 0);
    CHECK_INT(got & CAN_SOCKET, 0);
    CHECK_INT(got & CAN_WRITE_FILE, 0);
    CHECK_INT(got & CAN_EXEC, 0);
    CHECK_INT(got & SECCOMP_2, SECCOMP_2);
    CHECK_INT(got & CAN_READ_FILE, CAN_READ_FILE);
    CHECK_INT(got & CAN_KEEP_FD, CAN_KEEP_FD);
    char buf[16] = {0};
    CHECK_INT(pread(out, buf, sizeof buf - 1, 0), 7);
    CHECK_STR(buf, "report\n");
    close(out);
    unlink(out_path);
    CHECK(access("/tmp/luasched-confine-probe", F_OK) != 0);
}

static int hangs_in_a_call(void *ud, int chan)
{
    (void)ud;
    (void)chan;
    ls_worker_page_describe("default-scheduler", "Wreck", "Filter", "default", "p", NULL);
    atomic_store(&ls_worker_page_self->call_budget_ms, 50);
    atomic_store(&ls_worker_page_self->call_started_ms, ls_worker_now_ms());
    for (;;)
        pause();
    return 0;
}

static int crashes_in_a_call(void *ud, int chan)
{
    (void)ud;
    (void)chan;
    ls_worker_page_describe("default-scheduler", "Wreck", "Score", "ns", "p", "score at /p/wreck.lua:9");
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    return 0;
}

static void test_supervision(void)
{
    ls_child c;
    ls_error err;
    CHECK(ls_child_init(&c, &err));
    CHECK(ls_child_spawn_fork(&c, hangs_in_a_call, NULL, &err));
    char why[1024] = "", how[1200] = "";
    uint64_t until = ls_worker_now_ms() + 5000;
    bool overdue = false;
    while (!overdue && ls_worker_now_ms() < until) {
        overdue = ls_child_overdue(&c, 50, why, sizeof why);
        usleep(5000);
    }
    CHECK(overdue);
    CHECK_STR(why, "a plugin call ran past its budget of 50 ms and the 50 ms grace: default-scheduler/Wreck/Filter/default/p");
    ls_child_kill(&c, why);
    CHECK(ls_child_ended(&c, true, how, sizeof how));
    CHECK_STR(how, "killed by the supervisor: a plugin call ran past its budget of 50 ms and the 50 ms grace: default-scheduler/Wreck/Filter/default/p");

    CHECK(ls_child_spawn_fork(&c, crashes_in_a_call, NULL, &err));
    CHECK(ls_child_ended(&c, true, how, sizeof how));
    CHECK_STR(how, "died of signal 11 (Segmentation fault) in plugin call default-scheduler/Wreck/Score/ns/p in score at /p/wreck.lua:9");
    ls_child_free(&c);
}

int main(void)
{
    test_channel();
    test_confine();
    test_confine_later();
    test_supervision();
    TEST_MAIN_END();
}
