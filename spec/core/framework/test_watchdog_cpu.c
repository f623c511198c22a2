/*
 * test_watchdog_cpu.c: the watchdog's two clocks (core/src/framework/
 * watchdog.c). On the wall clock (the scheduler's) a call that waits past
 * its budget is cut off; with ls_watchdog_count_cpu_time (a forked what-if
 * evaluator at idle priority, whose calls wait for the CPU) the budget counts
 * the calling thread's CPU time: a call that waits is never cut off for it,
 * a call that computes still is.
 */
#include "framework/watchdog.h"

#include <lauxlib.h>
#include <lualib.h>
#include <setjmp.h>
#include <time.h>

#include "test.h"

enum { BUDGET_MS = 100 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* sleep_ms(n): waits n ms without using the CPU. */
static int sleep_ms(lua_State *L)
{
    long ms = (long)luaL_checkinteger(L, 1);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

/* Runs `code` under the watchdog with BUDGET_MS: NULL when it returned, else
 * its error (static). *wall_ms is how long it took. */
static const char *watched(ls_watchdog *w, lua_State *L, const char *code, double *wall_ms)
{
    static char err[256];
    sigjmp_buf escape;
    double began = now_ms();
    const char *result = NULL;
    if (sigsetjmp(escape, 0) == 0) {
        ls_watchdog_arm(w, L, BUDGET_MS, true, &escape);
        if (luaL_loadstring(L, code) != 0 || lua_pcall(L, 0, 0, 0) != 0) {
            snprintf(err, sizeof err, "%s", lua_tostring(L, -1));
            lua_pop(L, 1);
            result = err;
        }
    } else {
        result = "jumped out";   /* the signal stage: the call was in C (the state is not safe to use again) */
    }
    ls_watchdog_disarm(w);
    lua_sethook(L, NULL, 0, 0);
    *wall_ms = now_ms() - began;
    return result;
}

static const char WAITS[] = "sleep_ms(600) local x = 0 for i = 1, 10 do x = x + i end";
static const char COMPUTES[] = "local x = 0 while true do x = x + 1 end";

/* A state of its own per case: one left by the signal stage is not safe to
 * use again (the runtime abandons such a state, lua_heap.h). */
static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_register(L, "sleep_ms", sleep_ms);
    luaL_dostring(L, "jit.off()");   /* interpreted: the hook stage cuts a loop off */
    return L;
}

int main(void)
{
    ls_watchdog *w = ls_watchdog_new();
    CHECK(w != NULL);
    double wall;

    /* the wall clock: a call waiting in C past its budget is cut off (the
     * hook at 100 ms cannot run in C; the signal stage after its grace) */
    lua_State *L = new_state();
    const char *e = watched(w, L, WAITS, &wall);
    CHECK(e != NULL);
    CHECK(wall < 600);

    ls_watchdog_count_cpu_time();
    /* CPU time: the same wait uses almost none, and runs to its end */
    L = new_state();
    e = watched(w, L, WAITS, &wall);
    CHECK(e == NULL);
    CHECK(wall >= 600);
    /* computing is still cut off, after about its budget of CPU time */
    e = watched(w, L, COMPUTES, &wall);
    CHECK_CONTAINS(e, "plugin exceeded its time budget of 100 ms");
    CHECK(wall >= BUDGET_MS - 5);   /* the watchdog's clocks count whole ms */
    lua_close(L);

    ls_watchdog_free(w);
    TEST_MAIN_END();
}
