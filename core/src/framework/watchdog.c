/*
 * watchdog.c: see watchdog.h. Arming costs two atomic stores (calls into Lua
 * happen several times per pod); the watchdog thread polls every few
 * milliseconds. When the armed call is past its deadline, stage one sets a
 * count hook of 1 (interrupts interpreted code at its next instruction);
 * stage two, after a grace period, sends SIGUSR2 to the calling thread, whose
 * handler jumps back to the call site unless the thread is inside a critical
 * section (then it jumps when the section ends). Both stages check that the
 * call they aim at is still the one running.
 */
#include "framework/watchdog.h"
#include "luasched/base.h"

#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    siglongjmp(*current->escape, 1);
}

static void on_signal(int sig)
{
    (void)sig;
    if (!ls_critical_defer(jump_out))
        jump_out();
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* NODEFER: the handler leaves by siglongjmp to a sigsetjmp(.., 0) point,
     * which does not restore the mask, so the signal must not stay blocked. */
    sa.sa_flags = SA_NODEFER;
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
        lua_pushfstring(L, "plugin exceeded its time budget of %d ms", (int)atomic_load(&current->timeout_ms));
        lua_error(L);
    }
}

static void expire(ls_watchdog *w, uint64_t call, bool *hooked)
{
    atomic_store(&kill_call, call);
    if (!*hooked) {
        *hooked = true;
        lua_sethook(w->L, ls_watchdog_hook, LUA_MASKCOUNT, 1);
        return;
    }
    /* A call that talks to the cluster is interrupted only when the process
     * is stopping (a critical section still defers the jump). */
    bool may = atomic_load(&w->may_interrupt) || atomic_load(&stop_requested);
    if (may && atomic_load(&w->call) == call)
        pthread_kill(w->target, SIGUSR2);
}

static void *watch(void *arg)
{
    ls_watchdog *w = arg;
    uint64_t seen_call = 0, next_stage_ms = 0;
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
        }
        if (atomic_exchange(&w->expire_now, false)) {
            /* over memory: the allocator set the hook already; the signal now */
            hooked = true;
            next_stage_ms = now_ms();
        }
        if (atomic_load(&stop_requested) && !hooked && next_stage_ms > now_ms())
            next_stage_ms = now_ms();   /* asked to stop: no call runs on */
        if (now_ms() >= next_stage_ms) {
            expire(w, call, &hooked);
            next_stage_ms = now_ms() + GRACE_MS;
        }
    }
    return NULL;
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
    return w;
}

void ls_watchdog_free(ls_watchdog *w)
{
    if (!w)
        return;
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
    atomic_store(&w->started_ms, now_ms());
    atomic_store(&w->call, (atomic_load(&w->call) | 1) + 2);   /* a new odd number: armed */
}

void ls_watchdog_restart_clock(ls_watchdog *w)
{
    uint64_t call = atomic_load(&w->call);
    if (!(call & 1))
        return;
    atomic_store(&w->started_ms, now_ms());
    atomic_store(&w->call, call + 2);   /* another odd number: the watcher reads the new start */
}

void ls_watchdog_disarm(ls_watchdog *w)
{
    atomic_store(&w->call, atomic_load(&w->call) + 1);        /* even: idle */
}
