/*
 * whatif_child.h: the forked what-if evaluator of `luasched run`'s worker
 * (whatif_child.c; how the worker uses it: whatif_worker.c).
 *
 * A batch on the question pipe is a ls_whatif_batch_head (bytes after it,
 * questions, the live clock in ms) then, per question, [uint32 length][JSON].
 * Each answer on the answer pipe is [uint32 running index][int32 status]
 * [uint32 length][JSON], the index counting from 0 over the child's life.
 */
#ifndef LS_CLI_WHATIF_CHILD_H
#define LS_CLI_WHATIF_CHILD_H

#include "cli/whatif.h"
#include "worker/page.h"

#include <stddef.h>
#include <stdint.h>

/* Past 16 MiB a worker's message ends it (run_supervise.c): a larger answer
 * (explain tables of many pods on many nodes) is refused instead. The
 * evaluator gets SIGKILL LS_WHATIF_KILL_GRACE_MS after a question's deadline,
 * if the deadline's own signal did not end it. A warm evaluator ends after
 * LS_WHATIF_WARM_IDLE_MS without a batch, or at the end of its question pipe,
 * with the exit status LS_WHATIF_EXIT_IDLE (never used otherwise: what was
 * written to it and not read goes to the next evaluator). */
enum {
    LS_WHATIF_MAX_ANSWER = 15 * 1024 * 1024,
    LS_WHATIF_KILL_GRACE_MS = 1000,
    LS_WHATIF_WARM_IDLE_MS = 30000,
    LS_WHATIF_EXIT_IDLE = 86
};

typedef struct ls_whatif_batch_head {
    uint32_t bytes, count;
    uint64_t clock_ms;
} ls_whatif_batch_head;

typedef struct ls_whatif_child {
    ls_whatif *wi;
    ls_scheduler *live;
    ls_worker_page *progress;   /* where it describes its calls (shared with the worker) */
    char *const *first;         /* the questions it was forked with */
    uint32_t n_first;
    int answers, questions;     /* its ends of the two pipes */
    int close_fds[4];           /* the worker's descriptors it must not hold (-1: none) */
    uint32_t n_close;
} ls_whatif_child;

/* In the child just forked: answers, then ends. */
_Noreturn void ls_whatif_child_main(const ls_whatif_child *c);
/* One question answered in this process (the child, or the worker's
 * fallback), an answer over LS_WHATIF_MAX_ANSWER refused (400). */
char *ls_whatif_answer_capped(ls_whatif *wi, ls_scheduler *live, const char *question, int *status);
/* The questions as one batch; NULL when it would be larger than `cap`. */
char *ls_whatif_batch_encode(char *const *questions, uint32_t n, uint64_t clock_ms, size_t cap, size_t *len);

#endif
