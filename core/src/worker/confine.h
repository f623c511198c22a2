/*
 * confine.h: what a worker process gives up before any plugin code runs
 * (docs/plugins/worker.md "Limits"): every file descriptor but the ones it
 * keeps, its memory beyond a limit of its own (RLIMIT_AS), core dumps, new
 * privileges (PR_SET_NO_NEW_PRIVS), and every system call outside an allow
 * list (a seccomp filter: no execve, no socket, connect or bind, no open for
 * writing or creating, no ptrace or process_vm_*, no mapping of a file as
 * code). What is not allowed fails with EPERM.
 */
#ifndef LS_WORKER_CONFINE_H
#define LS_WORKER_CONFINE_H

#include "luasched/base.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ls_confine_options {
    const int *keep_fds;          /* besides 0, 1 and 2 */
    int n_keep;
    bool keep_open;               /* close nothing: the command's own files (its outputs among them) stay */
    bool allow_network;           /* sockets and connect stay allowed (HTTP extenders) */
    uint64_t memory_limit;        /* bytes of address space; 0: none */
} ls_confine_options;

bool ls_worker_confine(const ls_confine_options *o, ls_error *err);

/* A forked worker of `simulate`, `check`, `explain` or `compare`
 * (cli/supervised.c) confines itself when its first plugin code is about to
 * run, after the command has read its inputs and opened its output files
 * (the filter refuses any open for writing from then on):
 * ls_worker_confine_later() records the options, ls_worker_confine_due()
 * (the runtime calls it before it loads any plugin) applies them once. */
void ls_worker_confine_later(const ls_confine_options *o);
/* The confinement recorded keeps the network (sockets, connect, send and
 * receive): a configuration with HTTP extenders, which the command calls
 * itself. Nothing when no confinement is pending. */
void ls_worker_confine_allow_network(void);
bool ls_worker_confine_due(ls_error *err);
bool ls_worker_confined(void);
/* The address-space limit the process confined itself to (0: none). */
uint64_t ls_worker_memory_limit(void);

#endif
