/*
 * watchdog.c: see watchdog.h. Arming costs two atomic stores (calls into Lua
 * happen several times per pod); the watchdog thread polls every few
 * milliseconds. When the armed call is past its deadline, stage one sets a
 * count hook of 1 (interrupts interpreted code at its next instruction);
 * stage two, after a grace period, sends SIGUSR2 to the calling thread, whose
 * handler jumps back to the call site unless the thread is inside a critical
 * section (then it jumps when the section ends). Both stages check that the
 * call they aim at is still the one running.
 *
 * In a worker process (docs/plugins/worker.md) the jump is taken only when
 * the signal interrupted code the JIT compiled (an anonymous executable
 * mapping: a trace, which holds no lock of libc or of the allocator); when it
 * lands in any file's code (libc, the allocator, LuaJIT's C functions, ours)
 * the handler returns and the next signal tries again. A call that does not
 * come back within the supervisor's grace period ends the worker, which the
 * supervisor restarts. Arming and disarming also publish the call's start
 * and budget in the shared page, and the first stage describes the call
 * there (profile, plugin, extension point, pod). Before a cut-off leaves
 * (the hook's error, the jump) the runtime records whose code ran: the
 * innermost frame of a plugin's file (runtime_blame.c).
 */
#include "framework/watchdog.h"
#include "framework/runtime_internal.h"
#include "luasched/base.h"
#include "worker/page.h"

#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { POLL_MS = 5, GRACE_MS = 250 };

struct ls_watchdog {
    pthread_t thread;
    atomic_bool stop;
    /* Published by the calling thread. call is odd while armed. */
    atomic_uint_fast64_t call;
    atomic_uint_fast64_t started_ms;
    atomic_uint_fast64_t timeout_ms;
    atomic_bool may_interrupt;
    atomic_bool expire_now;
    lua_State *volatile L;
    pthread_t target;
    sigjmp_buf *volatile escape;
};

/* What the signal handler and the hook may act on. */
static atomic_uint_fast64_t kill_call;
static atomic_bool stop_requested;

void ls_watchdog_expire_now(ls_watchdog *w)
{
    atomic_store(&w->expire_now, true);
}

void ls_watchdog_request_stop(void)
{
    atomic_store(&stop_requested, true);
}
static ls_watchdog *volatile current;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static bool still_targeted(void)
{
    ls_watchdog *w = current;
    return w && atomic_load(&w->call) == atomic_load(&kill_call);
}

static void jump_out(void)
{
    if (!still_targeted())
        return;
    atomic_store(&kill_call, 0);
    ls_rt_blame_running();   /* whose code ran: the innermost frame of a plugin's file, read before the jump */
    siglongjmp(*current->escape, 1);
}

/* In a worker: the executable mappings of files, recorded once (the
 * seccomp filter forbids mapping a file as code afterwards). */
enum { MAX_CODE_RANGES = 128 };
static struct { uintptr_t lo, hi; } file_code[MAX_CODE_RANGES];
static int n_file_code;
static bool supervised;

static void note_code_line(const char *line)
{
    unsigned long lo, hi, offset, inode;
    char perms[8], dev[16];
    if (n_file_code < MAX_CODE_RANGES && sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &offset, dev,
                                                &inode) == 6 && perms[2] == 'x' && (inode != 0 || strchr(line, '['))) {
        file_code[n_file_code].lo = lo;
        file_code[n_file_code].hi = hi;
        n_file_code++;
    }
}

bool ls_watchdog_supervised(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return false;
    char line[1024];
    while (fgets(line, sizeof line, f))
        note_code_line(line);
    fclose(f);
    supervised = true;
    return true;
}

static uintptr_t interrupted_pc(const void *uctx)
{
    const ucontext_t *uc = uctx;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* Whether the signal landed in JIT-compiled code (no file's code). */
static bool in_compiled_code(const void *uctx)
{
    uintptr_t pc = interrupted_pc(uctx);
    if (!pc)
        return false;
    for (int i = 0; i < n_file_code; i++)
        if (pc >= file_code[i].lo && pc < file_code[i].hi)
            return false;
    return true;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    if (supervised && !in_compiled_code(uctx)) {
        /* inside libc, the allocator or C code: never jumped out of; should
         * the supervisor end the worker, its page says whose code ran */
        ls_rt_describe_blame();
        return;
    }
    if (!ls_critical_defer(jump_out))
        jump_out();
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* NODEFER: the handler leaves by siglongjmp to a sigsetjmp(.., 0) point,
     * which does not restore the mask, so the signal must not stay blocked. */
    sa.sa_flags = SA_NODEFER | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
}

void ls_watchdog_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    /* No position (lua_error, not luaL_error): see runtime.c's budget_hook. */
    if (still_targeted() && atomic_load(&stop_requested)) {
        lua_pushliteral(L, "plugin call cut off: the scheduler is stopping");
        lua_error(L);
    }
    if (still_targeted()) {
        ls_rt_blame_running();   /* in a hook the frames are exact */
        lua_pushfstring(L, "plugin exceeded its time budget of %d ms", (int)atomic_load(&current->timeout_ms));
        lua_error(L);
    }
}

static void signal_target(ls_watchdog *w);

/* In a forked what-if evaluator, which runs at idle priority (its calls wait
 * for the CPU while the scheduler has work): a call's time budget counts the
 * CPU time of the thread that made it, from when the watchdog first saw the
 * call (at most POLL_MS after it began, counted as spent). The grace before
 * the signal stays on the wall clock. */
static bool budget_on_cpu;

void ls_watchdog_count_cpu_time(void)
{
    budget_on_cpu = true;
}

/* The target thread's CPU time in ms; the wall clock when it cannot be read. */
static uint64_t target_cpu_ms(const ls_watchdog *w)
{
    clockid_t cid;
    struct timespec ts;
    if (pthread_getcpuclockid(w->target, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return now_ms();
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void expire(ls_watchdog *w, uint64_t call, bool *hooked)
{
    atomic_store(&kill_call, call);
    if (!*hooked) {
        *hooked = true;
        if (ls_worker_page_self && atomic_load(&w->call) == call)
            ls_rt_describe_running();
        lua_sethook(w->L, ls_watchdog_hook, LUA_MASKCOUNT, 1);
        return;
    }
    /* A call that talks to the cluster is interrupted only when the process
     * is stopping (a critical section still defers the jump). */
    bool may = atomic_load(&w->may_interrupt) || atomic_load(&stop_requested);
    if (may && atomic_load(&w->call) == call)
        signal_target(w);
}

static void *watch(void *arg)
{
    ls_watchdog *w = arg;
    uint64_t seen_call = 0, next_stage_ms = 0;
    uint64_t seen_wall = 0, seen_cpu = 0;   /* budget_on_cpu: when the call was first seen */
    bool hooked = false;
    struct timespec poll = {0, POLL_MS * 1000000L};
    while (!atomic_load(&w->stop)) {
        nanosleep(&poll, NULL);
        uint64_t call = atomic_load(&w->call);
        if (!(call & 1)) {
            seen_call = 0;
            continue;
        }
        if (call != seen_call) {
            seen_call = call;
            hooked = false;
            next_stage_ms = atomic_load(&w->started_ms) + atomic_load(&w->timeout_ms);
            seen_wall = now_ms();
            seen_cpu = budget_on_cpu ? target_cpu_ms(w) : 0;
        }
        uint64_t now = now_ms();
        /* the budget's clock: the wall, or the start plus the CPU time used */
        uint64_t clock = budget_on_cpu && !hooked ? seen_wall + (target_cpu_ms(w) - seen_cpu) : now;
        if (atomic_exchange(&w->expire_now, false)) {
            /* over memory: the allocator set the hook already; the signal now */
            hooked = true;
            next_stage_ms = clock = now;
        }
        if (atomic_load(&stop_requested) && !hooked && next_stage_ms > clock)
            next_stage_ms = clock;   /* asked to stop: no call runs on */
        if (clock >= next_stage_ms) {
            expire(w, call, &hooked);
            next_stage_ms = now + GRACE_MS;
        }
    }
    return NULL;
}

/* Every watchdog of the process, for a forked child to watch again. */
enum { MAX_WATCHDOGS = 64 };
static ls_watchdog *registered[MAX_WATCHDOGS];
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;

static void enlist(ls_watchdog *w, ls_watchdog *in_place_of)
{
    pthread_mutex_lock(&registry_mu);
    for (int i = 0; i < MAX_WATCHDOGS; i++)
        if (registered[i] == in_place_of) {
            registered[i] = w;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
}

/* In a forked child the seccomp filter's signal rule names the parent's pid
 * (worker/confine.c), so pthread_kill fails there: the second stage's signal
 * comes from a timer aimed at the thread that forked instead (the only one
 * that calls into Lua in the child; the kernel keeps such a timer's signal
 * within the process). */
static timer_t kick;
static bool kick_by_timer;

static void signal_target(ls_watchdog *w)
{
    if (!kick_by_timer) {
        pthread_kill(w->target, SIGUSR2);
        return;
    }
    struct itimerspec now = {{0, 0}, {0, 1}};
    timer_settime(kick, 0, &now, NULL);
}

bool ls_watchdog_restart_after_fork(void)
{
    struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2};
    ev._sigev_un._tid = gettid();
    bool ok = timer_create(CLOCK_MONOTONIC, &ev, &kick) == 0;
    kick_by_timer = ok;
    for (int i = 0; i < MAX_WATCHDOGS; i++) {
        ls_watchdog *w = registered[i];
        if (!w)
            continue;
        atomic_store(&w->stop, false);
        ok = pthread_create(&w->thread, NULL, watch, w) == 0 && ok;
    }
    return ok;
}

ls_watchdog *ls_watchdog_new(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
    ls_watchdog *w = ls_xcalloc(1, sizeof *w);
    atomic_init(&w->stop, false);
    atomic_init(&w->call, 0);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        free(w);
        return NULL;
    }
    enlist(w, NULL);
    return w;
}

void ls_watchdog_free(ls_watchdog *w)
{
    if (!w)
        return;
    enlist(NULL, w);
    atomic_store(&w->stop, true);
    pthread_join(w->thread, NULL);
    if (current == w)
        current = NULL;
    free(w);
}

void ls_watchdog_arm(ls_watchdog *w, lua_State *L, uint64_t timeout_ms, bool may_interrupt, sigjmp_buf *escape)
{
    w->L = L;
    w->target = pthread_self();
    w->escape = escape;
    current = w;
    atomic_store(&w->may_interrupt, may_interrupt);
    atomic_store(&w->expire_now, false);   /* meant for a call that has ended */
    atomic_store(&w->timeout_ms, timeout_ms);
    uint64_t started = now_ms();
    atomic_store(&w->started_ms, started);
    atomic_store(&w->call, (atomic_load(&w->call) | 1) + 2);   /* a new odd number: armed */
    ls_worker_page *page = ls_worker_page_self;
    if (page && may_interrupt) {   /* a call waiting on the cluster is not the supervisor's to end */
        atomic_store(&page->call_budget_ms, timeout_ms);
        atomic_store(&page->call_started_ms, started);
    }
}

void ls_watchdog_restart_clock(ls_watchdog *w)
{
    uint64_t call = atomic_load(&w->call);
    if (!(call & 1))
        return;
    uint64_t started = now_ms();
    atomic_store(&w->started_ms, started);
    atomic_store(&w->call, call + 2);   /* another odd number: the watcher reads the new start */
    /* the supervisor's clock of the call restarts too: a state's build (70
     * plugins, each within its budget) was ended by the supervisor as one call
     * past the budget and the grace on a loaded machine */
    ls_worker_page *page = ls_worker_page_self;
    if (page && atomic_load(&page->call_started_ms) != 0)
        atomic_store(&page->call_started_ms, started);
}

void ls_watchdog_disarm(ls_watchdog *w)
{
    atomic_store(&w->call, atomic_load(&w->call) + 1);        /* even: idle */
    if (ls_worker_page_self)
        atomic_store(&ls_worker_page_self->call_started_ms, 0);
}
