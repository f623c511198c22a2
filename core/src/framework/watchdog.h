/*
 * watchdog.h: a wall-clock limit on each call into Lua. LuaJIT's count hook
 * only counts interpreted instructions, and a loop compiled to a trace never
 * looks at hooks, so a runaway plugin could hang the scheduler. The watchdog
 * first sets a hook (enough for interpreted code); if the call is still
 * running after a grace period it interrupts the thread with a signal and
 * jumps back to the call site, and the caller abandons and rebuilds the state.
 */
#ifndef LS_LUA_WATCHDOG_H
#define LS_LUA_WATCHDOG_H

#include <lua.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ls_watchdog ls_watchdog;

ls_watchdog *ls_watchdog_new(void);
void ls_watchdog_free(ls_watchdog *w);

/* Starts watching a call on the calling thread. `may_interrupt` false limits
 * the watchdog to the hook (for calls that talk to the cluster). `escape` is
 * where the signal path jumps to; it must stay valid until disarm. */
void ls_watchdog_arm(ls_watchdog *w, lua_State *L, uint64_t timeout_ms, bool may_interrupt, sigjmp_buf *escape);
void ls_watchdog_disarm(ls_watchdog *w);
/* The armed call starts a new step with the whole timeout again (a load-time
 * call loads plugins one after another: each plugin's code has the budget,
 * not the sum of them). Nothing when no call is armed. */
void ls_watchdog_restart_clock(ls_watchdog *w);
/* The process was asked to stop (SIGTERM, SIGINT): every watchdog cuts the
 * call it watches off now (the hook at once, the signal after the grace
 * period), so a plugin cannot hold the stop back. Async-signal-safe. */
void ls_watchdog_request_stop(void);
/* Cuts the watched call off now (the Lua state ran past its memory limit):
 * the signal comes after the grace period if the hook did not stop it. */
void ls_watchdog_expire_now(ls_watchdog *w);
/* This process is a supervised worker (docs/plugins/worker.md): the signal
 * stage jumps out only of JIT-compiled code, never out of a file's code
 * (libc, the allocator); the supervisor ends a call that does not return.
 * Records the executable mappings of files now. False when they cannot be read. */
bool ls_watchdog_supervised(void);
/* In a child just forked (one thread, the caller): every watchdog of the
 * parent watches again, from a thread of the child's own (the what-if
 * evaluator, cli/whatif_worker.c). False when a thread could not start. At
 * most 64 watchdogs are known to it (one per set of Lua states). */
bool ls_watchdog_restart_after_fork(void);
/* From now on a call's time budget counts the CPU time of the thread that
 * made it, not the wall clock (a forked what-if evaluator: it runs at idle
 * priority, and its calls wait for the CPU while the scheduler works). */
void ls_watchdog_count_cpu_time(void);
/* The hook the watchdog sets: raises "plugin exceeded its time budget". */
void ls_watchdog_hook(lua_State *L, lua_Debug *ar);

#endif
