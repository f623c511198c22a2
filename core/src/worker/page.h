/*
 * page.h: the page the worker shares with its supervisor (docs/plugins/worker.md).
 *
 * The worker writes it with plain stores, never a system call: the
 * scheduling loop's heartbeat (each pass), the start and budget of the
 * plugin call running now (the watchdog's arm and disarm), and, when a call
 * overruns its budget or a fatal signal arrives, which profile, plugin,
 * extension point and pod the call was for. The supervisor reads it to tell
 * a hung worker from a busy one and to say, when it ends a worker, what was
 * running. Both see it through a memfd mapped MAP_SHARED.
 */
#ifndef LS_WORKER_PAGE_H
#define LS_WORKER_PAGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ls_worker_page {
    atomic_uint_fast64_t heartbeat_ms;     /* CLOCK_MONOTONIC ms of the loop's last pass; 0 before the first */
    atomic_uint_fast64_t waiting;          /* pods queued at that pass */
    atomic_uint_fast64_t call_started_ms;  /* 0: no plugin call runs */
    atomic_uint_fast64_t call_budget_ms;
    atomic_uint_fast32_t described;        /* odd while the fields below are written */
    char profile[128], plugin[128], point[64], pod[320];
    char where[240];                       /* the plugin's hook and its file:line ("filter at f.lua:4"), or "" */
    char code_of[128];                     /* the plugin whose code runs in the call, when it is not `plugin`
                                            * (another plugin's code in its call), or "" */
    char code_at[256];                     /* that code's file:line */
    char why[256];                         /* a fatal signal */
    atomic_uint_fast64_t why_ms;           /* when why was written */
} ls_worker_page;

/* The supervisor's side: a new page and the fd the worker maps it from
 * (inherited across exec). NULL on failure. */
ls_worker_page *ls_worker_page_create(int *fd);
/* The worker's side: maps the page of fd as this process's own page. */
ls_worker_page *ls_worker_page_attach(int fd);
void ls_worker_page_free(ls_worker_page *p);
/* Clears what a previous worker wrote (before a new one starts). */
void ls_worker_page_reset(ls_worker_page *p);

/* This process's page when it is a worker, else NULL: what the runtime and
 * the watchdog write to. */
extern ls_worker_page *ls_worker_page_self;

/* Monotonic milliseconds (the clock both processes share). */
uint64_t ls_worker_now_ms(void);
/* Writes the description of the call (async-signal-safe: stores only). */
void ls_worker_page_describe(const char *profile, const char *plugin, const char *point, const char *pod_ns,
                             const char *pod_name, const char *where);
void ls_worker_page_say_why(const char *why);
/* The plugin whose code runs in the described call when it is another
 * plugin's, and where (the watchdog's signal found it; async-signal-safe). */
void ls_worker_page_blame(const char *plugin, const char *at);
/* The plugin a worker ended in a call is counted against: whose code ran
 * (code_of) when known, else the call's plugin. */
const char *ls_worker_page_culprit(const ls_worker_page *p);
/* "profile/plugin/point/pod" of the last description, then " in <hook at
 * file:line>" when known, then ': plugin "X" (file:line, its code run in
 * Y's call)' when another plugin's code ran in it; "" when none. */
void ls_worker_page_call(const ls_worker_page *p, char *out, size_t cap);

#endif
