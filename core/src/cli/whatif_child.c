/*
 * whatif_child.c: the forked what-if evaluator (see whatif_child.h and
 * whatif_worker.c): it answers the questions it was forked with, then each
 * batch written to its question pipe, each answer on its answer pipe, every
 * question under its deadline; it ends at the end of the question pipe or
 * after LS_WHATIF_WARM_IDLE_MS without a batch.
 */
#include "cli/whatif_child.h"
#include "worker/channel.h"
#include "framework/runtime_internal.h"
#include "framework/watchdog.h"
#include "scheduler/attempt.h"
#include "scheduler/extender.h"
#include "worker/supervise.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *too_large(size_t len)
{
    char *answer = ls_xmalloc(300);
    snprintf(answer, 300,
             "{\"kind\":\"WhatIfAnswer\",\"error\":\"the answer is %zu bytes, over the %d a worker may "
             "send: ask with \\\"explain\\\": false or about fewer pods\"}",
             len, LS_WHATIF_MAX_ANSWER);
    return answer;
}

char *ls_whatif_answer_capped(ls_whatif *wi, ls_scheduler *live, const char *question, int *status)
{
    *status = 500;
    char *answer = ls_whatif_answer(wi, live, question, strlen(question), status);
    size_t len = strlen(answer);
    if (len > LS_WHATIF_MAX_ANSWER) {
        free(answer);
        answer = too_large(len);
        *status = 400;
    }
    return answer;
}

/* Past a question's deadline: say which plugin runs, and end. */
static void on_deadline(int sig)
{
    (void)sig;
    ls_rt_describe_running();
    ls_worker_page_say_why("past the what-if deadline");
    _exit(0);
}

static cJSON *refuse_extenders(void *ud, const char *url, const char *verb, const char *body, char **msg)
{
    (void)ud;
    (void)verb;
    (void)body;
    size_t n = strlen(url) + 160;
    *msg = ls_xmalloc(n);
    snprintf(*msg, n, "extender %s cannot be called from a forked what-if evaluator (no channel)", url);
    return NULL;
}

static void arm(timer_t t, long ms)
{
    struct itimerspec its = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000L}};
    timer_settime(t, 0, &its, NULL);
}

typedef struct child_timers {
    timer_t soft, hard;
} child_timers;

/* Answers `questions` (char *), numbering them from *index. */
static void answer_batch(const ls_whatif_child *c, char *const *questions, uint32_t n, const child_timers *t,
                         uint32_t *index)
{
    for (uint32_t i = 0; i < n; i++) {
        long deadline = ls_whatif_deadline_ms(questions[i]);
        arm(t->soft, deadline);
        arm(t->hard, deadline + LS_WHATIF_KILL_GRACE_MS);
        int status;
        char *answer = ls_whatif_answer_capped(c->wi, c->live, questions[i], &status);
        arm(t->soft, 0);   /* disarmed: a warm evaluator waits for more */
        arm(t->hard, 0);
        uint32_t head[3] = {(*index)++, (uint32_t)status, (uint32_t)strlen(answer)};
        if (!ls_fd_write_all(c->answers, head, sizeof head) || !ls_fd_write_all(c->answers, answer, head[2]))
            _exit(1);
        free(answer);
    }
}

/* The next batch, whole (questions NUL-terminated in *buf); false at EOF, at
 * a batch cut short, or after LS_WHATIF_WARM_IDLE_MS without one. */
static bool read_batch(int fd, ls_whatif_batch_head *h, char **buf)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int ready;
    while ((ready = poll(&pfd, 1, LS_WHATIF_WARM_IDLE_MS)) < 0 && errno == EINTR) {
    }
    if (ready <= 0 || !ls_fd_read_all(fd, h, sizeof *h, NULL))
        return false;
    *buf = ls_xmalloc((size_t)h->bytes + 1);
    if (!ls_fd_read_all(fd, *buf, h->bytes, NULL)) {
        free(*buf);
        return false;
    }
    (*buf)[h->bytes] = 0;
    return true;
}

/* Splits a batch's questions in place: each length is overwritten by the
 * previous question's terminating NUL. */
static uint32_t split_batch(char *buf, const ls_whatif_batch_head *h, char **out)
{
    size_t at = 0;
    uint32_t n = 0;
    while (n < h->count && at + 4 <= h->bytes) {
        uint32_t len;
        memcpy(&len, buf + at, 4);
        if (len > h->bytes - at - 4)
            break;
        buf[at] = 0;   /* ends the question before it */
        out[n++] = buf + at + 4;
        at += 4 + len;
    }
    return n;
}

void ls_whatif_child_main(const ls_whatif_child *c)
{
    ls_worker_page_self = c->progress;   /* never the supervisor's page */
    /* nor its channel: the supervisor sees the worker's end when the worker's
     * copy closes, not when this one's deadline comes */
    close(LS_WORKER_CHAN_FD);
    for (uint32_t i = 0; i < c->n_close; i++)
        if (c->close_fds[i] >= 0)
            close(c->close_fds[i]);
    /* At idle priority (its watchdog threads too, started below): it runs on
     * the CPU time the scheduler leaves, so questions asked while pods are
     * being scheduled slow the scheduling only by the fork; its plugin calls
     * then wait for the CPU, so their time budgets count CPU time. */
    struct sched_param idle = {0};
    if (sched_setscheduler(0, SCHED_IDLE, &idle) == 0)
        ls_watchdog_count_cpu_time();
    ls_extender_set_transport(refuse_extenders, NULL);
    signal(SIGALRM, on_deadline);
    struct sigevent describe = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    struct sigevent end = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGKILL};
    child_timers t;
    if (!ls_watchdog_restart_after_fork() || timer_create(CLOCK_MONOTONIC, &describe, &t.soft) != 0 ||
        timer_create(CLOCK_MONOTONIC, &end, &t.hard) != 0)
        _exit(1);
    uint32_t index = 0;
    answer_batch(c, c->first, c->n_first, &t, &index);
    ls_whatif_batch_head h;
    char *buf;
    while (read_batch(c->questions, &h, &buf)) {
        char **qs = ls_xmalloc((size_t)(h.count + 1) * sizeof *qs);
        uint32_t n = split_batch(buf, &h, qs);
        if (n != h.count)
            _exit(1);
        ls_scheduler_env(c->live)->clock_ms = h.clock_ms;   /* the only live state that moved meanwhile */
        answer_batch(c, qs, n, &t, &index);
        free(qs);
        free(buf);
    }
    _exit(LS_WHATIF_EXIT_IDLE);
}

char *ls_whatif_batch_encode(char *const *questions, uint32_t n, uint64_t clock_ms, size_t cap, size_t *len)
{
    size_t total = sizeof(ls_whatif_batch_head);
    for (uint32_t i = 0; i < n; i++)
        total += 4 + strlen(questions[i]);
    if (total > cap || total - sizeof(ls_whatif_batch_head) > UINT32_MAX)
        return NULL;
    char *buf = ls_xmalloc(total);
    ls_whatif_batch_head h = {(uint32_t)(total - sizeof h), n, clock_ms};
    memcpy(buf, &h, sizeof h);
    size_t at = sizeof h;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len_i = (uint32_t)strlen(questions[i]);
        memcpy(buf + at, &len_i, 4);
        memcpy(buf + at + 4, questions[i], len_i);
        at += 4 + len_i;
    }
    *len = total;
    return buf;
}
