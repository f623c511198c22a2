/*
 * whatif_worker.c: what-if questions in `luasched run`'s worker, answered
 * beside the scheduling loop.
 *
 * The channel's reader thread files each question (its request id and JSON)
 * and wakes the loop. Between two cycles (ls_whatif_worker_serve, from the
 * loop's progress call) the scheduling thread takes every filed question and
 * fork()s a disposable evaluator: the child sees a copy-on-write image of
 * the state at that point (the cache with its assumed pods, nominations,
 * waiting pods, the random state, the evaluator's Lua states) and answers the
 * questions one after the other over a pipe, then exits; the loop goes on at
 * once and pays only the fork (its pause is each answer's "loopPauseMs").
 * One evaluator runs at a time; questions filed meanwhile wait for the next,
 * and, while pods wait to be scheduled, forks are spaced so that the loop
 * spends at most 1/FORK_SPACING of its time forking (questions that come
 * faster wait and share a fork).
 *
 * The child inherits the worker's confinement (seccomp filter, limits; the
 * filter allows fork()'s exact clone for this, worker/confine.c); its
 * watchdogs watch again from threads of its own, so every plugin call keeps
 * its budgets, and its calls are described on a page of its own, never on
 * the supervisor's. A question that runs past its deadline (25 s, or its
 * "timeoutSeconds") ends the child (a timer's signal, then SIGKILL): the
 * answer is an error naming the plugin that was running, and the questions
 * after it go to the next child. A collector thread reads the answers,
 * passes them to the supervisor and reaps the child.
 *
 * Answered on the scheduling thread instead, between two cycles: with
 * --whatif-evaluator=loop, when fork() fails, and when the configuration
 * calls HTTP extenders (their calls go over the worker's channel, whose
 * reader thread a child does not have).
 */
#include "cli/whatif_worker.h"
#include "cli/whatif.h"
#include "client/kcluster.h"
#include "framework/runtime_internal.h"
#include "scheduler/attempt.h"
#include "framework/watchdog.h"
#include "luasched/log.h"
#include "scheduler/extender.h"
#include "worker/page.h"
#include "worker/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Past 16 MiB a worker's message ends it (run_supervise.c): a larger answer
 * (explain tables of many pods on many nodes) is refused instead. The
 * evaluator gets SIGKILL a second after a question's deadline, if the
 * deadline's own signal did not end it. */
enum { MAX_FILED = 256, MAX_ANSWER = 15 * 1024 * 1024, KILL_GRACE_MS = 1000 };
/* After a fork that paused the loop P ms, the next waits until FORK_SPACING * P
 * ms after it began: the loop spends at most 1/FORK_SPACING of its time
 * forking, however many questions come (they wait and go together). */
enum { FORK_SPACING = 20 };

typedef struct filed {
    char *id, *question;
} filed;

struct ls_whatif_worker {
    ls_whatif *wi;
    ls_kcluster *kc;
    pthread_mutex_t mu;
    pthread_cond_t changed;
    ls_vec inbox;              /* filed, guarded by mu */
    /* the evaluator running now, guarded by mu */
    bool busy, stop;
    ls_vec asked;              /* filed: what it answers, in order */
    int fd;                    /* the read end of its pipe; -1 while none is handed over */
    pid_t pid;
    double pause_ms;           /* the fork's pause of the scheduling loop */
    double next_fork_ms;       /* monotonic ms before which no evaluator is forked */
    pthread_t collector;
    bool collecting;
    ls_worker_page *progress;  /* the child's page: the call it runs (shared) */
    int stop_pipe[2];          /* written when the worker ends: the collector stops reading at once */
    bool warned_fork;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void free_filed(ls_vec *v)
{
    for (uint32_t i = 0; i < v->len; i++) {
        free(LS_VEC_AT(v, filed, i).id);
        free(LS_VEC_AT(v, filed, i).question);
    }
    ls_vec_free(v);
}

static char *too_large(size_t len)
{
    char *answer = ls_xmalloc(300);
    snprintf(answer, 300,
             "{\"kind\":\"WhatIfAnswer\",\"error\":\"the answer is %zu bytes, over the %d a worker may "
             "send: ask with \\\"explain\\\": false or about fewer pods\"}",
             len, MAX_ANSWER);
    return answer;
}

/* One question answered in this process (the child, or the fallback). */
static char *answer_one(ls_whatif_worker *ww, ls_scheduler *live, const filed *f, int *status)
{
    *status = 500;
    char *answer = ls_whatif_answer(ww->wi, live, f->question, strlen(f->question), status);
    size_t len = strlen(answer);
    if (len > MAX_ANSWER) {
        free(answer);
        answer = too_large(len);
        *status = 400;
    }
    return answer;
}

/* The answer with "loopPauseMs" added (an object's JSON: before its last brace). */
static void send_answer(ls_whatif_worker *ww, const char *id, int status, const char *answer, double pause_ms)
{
    size_t len = strlen(answer);
    if (status != 200 || pause_ms < 0 || len < 2 || answer[len - 1] != '}') {
        ls_kcluster_whatif_answer(ww->kc, id, status, answer);
        return;
    }
    char *with = ls_xmalloc(len + 48);
    snprintf(with, len + 48, "%.*s,\"loopPauseMs\":%.3f}", (int)(len - 1), answer, pause_ms);
    ls_kcluster_whatif_answer(ww->kc, id, status, with);
    free(with);
}

/* ---- the child */

static bool write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
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

/* Each answer is [uint32 index][int32 status][uint32 length][JSON]. */
static _Noreturn void child_main(ls_whatif_worker *ww, ls_scheduler *live, const ls_vec *asked, int fd)
{
    ls_worker_page_self = ww->progress;   /* never the supervisor's page */
    /* nor its channel: the supervisor sees the worker's end when the worker's
     * copy closes, not when this one's deadline comes */
    close(LS_WORKER_CHAN_FD);
    close(ww->stop_pipe[0]);
    close(ww->stop_pipe[1]);
    ls_extender_set_transport(refuse_extenders, NULL);
    signal(SIGALRM, on_deadline);
    struct sigevent describe = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    struct sigevent end = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGKILL};
    timer_t soft, hard;
    if (!ls_watchdog_restart_after_fork() || timer_create(CLOCK_MONOTONIC, &describe, &soft) != 0 ||
        timer_create(CLOCK_MONOTONIC, &end, &hard) != 0)
        _exit(1);
    for (uint32_t i = 0; i < asked->len; i++) {
        long deadline = ls_whatif_deadline_ms(LS_VEC_AT(asked, filed, i).question);
        arm(soft, deadline);
        arm(hard, deadline + KILL_GRACE_MS);
        int status;
        char *answer = answer_one(ww, live, &LS_VEC_AT(asked, filed, i), &status);
        uint32_t head[3] = {i, (uint32_t)status, (uint32_t)strlen(answer)};
        if (!write_all(fd, head, sizeof head) || !write_all(fd, answer, head[2]))
            _exit(1);
        free(answer);
    }
    _exit(0);
}

/* ---- the collector (a thread of the worker) */

/* False at the deadline, at the end of the pipe, or when the worker ends. */
static bool read_all(const ls_whatif_worker *ww, int fd, void *data, size_t len, double deadline)
{
    char *p = data;
    while (len) {
        int left = (int)(deadline - now_ms());
        struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = ww->stop_pipe[0], .events = POLLIN}};
        if (left <= 0 || poll(pfd, 2, left) <= 0 || pfd[1].revents)
            return false;
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* How the child ended, for the question it was answering. */
static char *ended_answer(ls_whatif_worker *ww, const filed *f, int wstatus)
{
    ls_worker_page *p = ww->progress;
    char call[800];
    ls_worker_page_call(p, call, sizeof call);
    const char *plugin = p->plugin[0] ? p->plugin : "(no plugin call)";
    char why[200];
    if (p->why[0] || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL))
        snprintf(why, sizeof why, "the question ran past its deadline of %ld ms", ls_whatif_deadline_ms(f->question));
    else if (WIFSIGNALED(wstatus))
        snprintf(why, sizeof why, "the what-if evaluator ended on signal %d", WTERMSIG(wstatus));
    else
        snprintf(why, sizeof why, "the what-if evaluator ended (status %d) before answering",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(a, "kind", "WhatIfAnswer");
    char msg[1200];
    snprintf(msg, sizeof msg, "%s, in plugin %s (%s)", why, plugin, call[0] ? call : "-");
    cJSON_AddStringToObject(a, "error", msg);
    cJSON_AddStringToObject(a, "plugin", plugin);
    char *text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* Reads one child's answers; what it did not answer goes back to the inbox
 * (the question it was on, answered with how it ended). */
static void collect(ls_whatif_worker *ww, int fd, pid_t pid, ls_vec *asked, double pause_ms)
{
    uint32_t answered = 0;
    for (;;) {
        uint32_t head[3];
        double deadline = now_ms() + LS_WHATIF_DEADLINE_MS + 2 * KILL_GRACE_MS;
        if (!read_all(ww, fd, head, sizeof head, deadline) || head[0] != answered || head[2] > MAX_ANSWER + 1024)
            break;
        char *answer = ls_xmalloc((size_t)head[2] + 1);
        bool whole = read_all(ww, fd, answer, head[2], deadline);
        answer[whole ? head[2] : 0] = 0;
        if (whole)
            send_answer(ww, LS_VEC_AT(asked, filed, answered).id, (int)head[1], answer, pause_ms);
        free(answer);
        if (!whole)
            break;
        answered++;
    }
    close(fd);
    int wstatus = 0;
    pthread_mutex_lock(&ww->mu);
    bool stopping = ww->stop;
    pthread_mutex_unlock(&ww->mu);
    if (stopping) {   /* the evaluator ends by its own deadline (or its next write), unwaited for */
        waitpid(pid, &wstatus, WNOHANG);
        free_filed(asked);
        return;
    }
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (answered < asked->len) {
        char *text = ended_answer(ww, &LS_VEC_AT(asked, filed, answered), wstatus);
        ls_log_warning("A what-if question ended its evaluator", "err", text);
        send_answer(ww, LS_VEC_AT(asked, filed, answered).id, 200, text, -1);
        free(text);
        LS_VEC_AT(asked, filed, answered).id[0] = 0;   /* answered */
    }
    pthread_mutex_lock(&ww->mu);
    for (uint32_t i = answered + 1; i < asked->len; i++) {   /* to the next evaluator */
        filed *f = ls_vec_push(&ww->inbox);
        *f = LS_VEC_AT(asked, filed, i);
        LS_VEC_AT(asked, filed, i) = (filed){0};
    }
    pthread_mutex_unlock(&ww->mu);
    free_filed(asked);
}

/* Until an evaluator is handed over (mu held): questions that wait for the
 * fork spacing wake the loop when it has passed. */
static void wait_for_evaluator(ls_whatif_worker *ww)
{
    while (!ww->stop && ww->fd < 0) {
        double early = ww->next_fork_ms - now_ms();
        if (!ww->inbox.len || ww->busy || early <= 0) {
            pthread_cond_wait(&ww->changed, &ww->mu);
            continue;
        }
        struct timespec until = ls_realtime_after_ms((long)early + 1);
        pthread_cond_timedwait(&ww->changed, &ww->mu, &until);
        if (ww->fd < 0 && ww->inbox.len && !ww->busy && ww->next_fork_ms <= now_ms()) {
            pthread_mutex_unlock(&ww->mu);
            ls_kcluster_wake(ww->kc);
            pthread_mutex_lock(&ww->mu);
        }
    }
}

static void *collector(void *arg)
{
    ls_whatif_worker *ww = arg;
    pthread_mutex_lock(&ww->mu);
    for (;;) {
        wait_for_evaluator(ww);
        if (ww->fd < 0)
            break;
        int fd = ww->fd;
        pid_t pid = ww->pid;
        double pause = ww->pause_ms;
        ls_vec asked = ww->asked;
        ls_vec_init(&ww->asked, sizeof(filed));
        ww->fd = -1;
        pthread_mutex_unlock(&ww->mu);
        collect(ww, fd, pid, &asked, pause);
        pthread_mutex_lock(&ww->mu);
        ww->busy = false;
        bool more = ww->inbox.len > 0;
        pthread_cond_broadcast(&ww->changed);
        pthread_mutex_unlock(&ww->mu);
        if (more)
            ls_kcluster_wake(ww->kc);
        pthread_mutex_lock(&ww->mu);
    }
    pthread_mutex_unlock(&ww->mu);
    return NULL;
}

/* ---- the worker's side */

static void file_question(void *ud, const char *id, const char *question)
{
    ls_whatif_worker *ww = ud;
    pthread_mutex_lock(&ww->mu);
    bool full = ww->inbox.len >= MAX_FILED;
    if (!full) {
        filed *f = ls_vec_push(&ww->inbox);
        f->id = ls_xstrdup(id);
        f->question = ls_xstrdup(question);
        pthread_cond_broadcast(&ww->changed);   /* the collector times the next fork */
    }
    pthread_mutex_unlock(&ww->mu);
    if (full)
        ls_kcluster_whatif_answer(ww->kc, id, 429, "{\"error\":\"too many what-if questions waiting (256)\"}");
    else
        ls_kcluster_wake(ww->kc);
}

ls_whatif_worker *ls_whatif_worker_new(ls_kcluster *kc, ls_scheduler *evaluator, bool fork)
{
    ls_whatif_worker *ww = ls_xcalloc(1, sizeof *ww);
    ww->wi = ls_whatif_new(evaluator);
    ww->kc = kc;
    ww->fd = -1;
    pthread_mutex_init(&ww->mu, NULL);
    pthread_cond_init(&ww->changed, NULL);
    ls_vec_init(&ww->inbox, sizeof(filed));
    ls_vec_init(&ww->asked, sizeof(filed));
    void *page = mmap(NULL, sizeof(ls_worker_page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ww->progress = page == MAP_FAILED ? NULL : page;
    bool piped = pipe2(ww->stop_pipe, O_CLOEXEC) == 0;
    if (!piped)
        ww->stop_pipe[0] = ww->stop_pipe[1] = -1;
    ww->collecting = fork && piped && ww->progress && pthread_create(&ww->collector, NULL, collector, ww) == 0;
    ls_intern_guard_fork();
    ls_log_guard_fork();
    ls_kcluster_serve_whatif(kc, file_question, ww);
    return ww;
}

/* The fallback: every question answered here, between two cycles. */
static void answer_here(ls_whatif_worker *ww, ls_scheduler *live, ls_vec *taken)
{
    for (uint32_t i = 0; i < taken->len; i++) {
        filed *f = &LS_VEC_AT(taken, filed, i);
        int status;
        char *answer = answer_one(ww, live, f, &status);
        ls_kcluster_whatif_answer(ww->kc, f->id, status, answer);
        free(answer);
    }
    free_filed(taken);
}

/* Forks the evaluator for `taken`; false (nothing started) when it cannot. */
static bool fork_evaluator(ls_whatif_worker *ww, ls_scheduler *live, ls_vec *taken)
{
    int p[2];
    if (!ww->collecting || pipe2(p, O_CLOEXEC) != 0)
        return false;
    memset(ww->progress, 0, sizeof *ww->progress);
    double began = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child_main(ww, live, taken, p[1]);
    }
    double pause = now_ms() - began;
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        if (!ww->warned_fork)
            ls_log_warning("Cannot fork the what-if evaluator: answering between cycles", "err", strerror(errno));
        ww->warned_fork = true;
        return false;
    }
    pthread_mutex_lock(&ww->mu);
    ww->asked = *taken;
    ww->fd = p[0];
    ww->pid = pid;
    ww->pause_ms = pause;
    ww->next_fork_ms = began + FORK_SPACING * pause;
    pthread_cond_broadcast(&ww->changed);
    pthread_mutex_unlock(&ww->mu);
    return true;
}

void ls_whatif_worker_serve(ls_whatif_worker *ww, ls_scheduler *live, uint64_t queued)
{
    if (!ww)
        return;
    pthread_mutex_lock(&ww->mu);
    bool spaced = ww->collecting && queued && now_ms() < ww->next_fork_ms;   /* an idle loop has time */
    if (ww->busy || !ww->inbox.len || spaced) {
        pthread_mutex_unlock(&ww->mu);
        return;
    }
    ls_vec taken = ww->inbox;
    ls_vec_init(&ww->inbox, sizeof(filed));
    ww->busy = true;
    pthread_mutex_unlock(&ww->mu);
    ls_scheduler *evaluator = ls_whatif_evaluator(ww->wi);
    ls_scheduler_reload_if_changed(evaluator, false);
    /* an extender is called over the channel, whose reader a child lacks */
    if (!ls_scheduler_env(evaluator)->extenders && fork_evaluator(ww, live, &taken))
        return;
    answer_here(ww, live, &taken);
    pthread_mutex_lock(&ww->mu);
    ww->busy = false;
    pthread_mutex_unlock(&ww->mu);
}

void ls_whatif_worker_free(ls_whatif_worker *ww)
{
    if (!ww)
        return;
    ls_kcluster_serve_whatif(ww->kc, NULL, NULL);
    if (ww->collecting) {
        pthread_mutex_lock(&ww->mu);
        ww->stop = true;
        pthread_cond_broadcast(&ww->changed);
        pthread_mutex_unlock(&ww->mu);
        ssize_t n = write(ww->stop_pipe[1], "x", 1);   /* a collector in poll returns */
        (void)n;
        pthread_join(ww->collector, NULL);
    }
    if (ww->stop_pipe[0] >= 0) {
        close(ww->stop_pipe[0]);
        close(ww->stop_pipe[1]);
    }
    free_filed(&ww->inbox);
    free_filed(&ww->asked);
    if (ww->progress)
        munmap(ww->progress, sizeof *ww->progress);
    pthread_cond_destroy(&ww->changed);
    pthread_mutex_destroy(&ww->mu);
    ls_whatif_free(ww->wi);
    free(ww);
}
