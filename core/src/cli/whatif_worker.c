/*
 * whatif_worker.c: what-if questions in `luasched run`'s worker, answered
 * beside the scheduling loop.
 *
 * The channel's reader thread files each question (its request id and JSON)
 * and wakes the loop. Between two cycles (ls_whatif_worker_serve, from the
 * loop's progress call) the scheduling thread takes every filed question and
 * hands them to an evaluator: a copy of the worker made by fork(), which sees
 * a copy-on-write image of the state at that point (the cache with its
 * assumed pods, nominations, waiting pods, the random state, the evaluator's
 * Lua states) and answers the questions one after the other over a pipe; the
 * loop goes on at once and pays only the hand-over (each answer's
 * "loopPauseMs").
 *
 * The evaluator stays warm: having answered, it waits on its question pipe
 * for more (ending at EOF, or after 30 s without a question: whatif_child.c). When
 * questions come and nothing it reads has changed since it was forked (the
 * live_version below: every cache's generation, the events the cluster
 * source applied, cycles started, waiting pods' changes, reloads of the live
 * scheduler and of the evaluator), the loop writes them to the warm one (no
 * fork: its pages are private already, so it answers about as fast as the
 * loop would); otherwise it retires it (closes its question pipe: it ends)
 * and forks a fresh one. The loop never blocks on that pipe: it is written
 * non-blocking, and a warm evaluator is used only when the whole batch fits
 * in its (empty) pipe; else a fresh one is forked. One evaluator answers at
 * a time; questions filed meanwhile wait for it to finish, and, while pods
 * wait to be scheduled, forks are paid from a budget: a fork's pause and
 * its evaluator's whole CPU time (read from its rusage when reaped) may use
 * at most 1/COST_SHARE of the time, or one fork every --whatif-max-wait
 * (questions that come faster wait and share a fork).
 *
 * The child inherits the worker's confinement (seccomp filter, limits; the
 * filter allows fork()'s exact clone for this, worker/confine.c); its
 * watchdogs watch again from threads of its own, so every plugin call keeps
 * its budgets, and its calls are described on a page of its own, never on
 * the supervisor's. A question that runs past its deadline (25 s, or its
 * "timeoutSeconds") ends the child (a timer's signal, then SIGKILL): the
 * answer is an error naming the plugin that was running, and the questions
 * after it go to the next child. A collector thread reads the answers of
 * one child after the other across its batches (a running index per child),
 * passes them to the supervisor and reaps the children.
 *
 * Answered on the scheduling thread instead, between two cycles: with
 * --whatif-evaluator=loop, when fork() fails, and when the configuration
 * calls HTTP extenders (their calls go over the worker's channel, whose
 * reader thread a child does not have).
 *
 * Over 800 lines on purpose: the reader thread's filing, the loop's hand-over
 * and budget, and the collector are three sides of one mutex-guarded struct
 * (the queue of questions, the evaluator in use, the credit); split, each
 * file would need that struct's internals and its locking rules. What a child
 * does once forked is its own file (whatif_child.c).
 */
#include "cli/whatif_worker.h"
#include "cli/whatif_child.h"
#include "client/kcluster.h"
#include "framework/waiting_pods.h"
#include "scheduler/attempt.h"
#include "luasched/cache.h"
#include "luasched/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* At most MAX_FILED questions wait. */
enum { MAX_FILED = 256 };
/* While pods wait, forked evaluators cost at most 1/COST_SHARE of the time:
 * a credit grows by 1/COST_SHARE ms a ms (to at most CREDIT_CAP_MS); each
 * fork spends the loop's pause and, once reaped, the evaluator's whole CPU
 * time (answering, its copy-on-write faults, its exit). A fork waits for
 * the credit, and questions wait and share it, however many come; no
 * question waits more than --whatif-max-wait for its fork. An idle loop forks at
 * once (spending credit too). */
enum { COST_SHARE = 50, CREDIT_CAP_MS = 100 };
/* A warm evaluator's question pipe is asked to hold QUESTION_PIPE_BYTES (the
 * kernel may give less: /proc/sys/fs/pipe-max-size). The collector looks at
 * an idle evaluator (and the forks it waits to reap) every IDLE_POLL_MS. */
enum { QUESTION_PIPE_BYTES = 1 << 20, IDLE_POLL_MS = 1000 };

typedef struct filed {
    char *id, *question;
    double filed_ms;           /* when it was filed (monotonic) */
    double pause_ms;           /* what handing it over paused the loop */
} filed;

/* What an evaluator reads of the live state, as counters that move whenever
 * it changes: a warm evaluator answers only while all are as they were when
 * it was forked. Nominations change in cycles or by events. */
typedef struct live_version {
    uint64_t generation;       /* every cache's NodeInfos, trees, snapshots (ls_cache_generation) */
    uint64_t applied;          /* pods, nodes and objects applied by the cluster source */
    uint64_t cycles;           /* cycles started: random state, round-robin start, assumed pods */
    uint64_t waiting;          /* waiting pods added, allowed, rejected, taken */
    uint64_t reloads, evaluator_reloads;
} live_version;

/* One forked evaluator as the collector sees it (guarded by mu). */
typedef struct evaluator {
    pid_t pid;
    int answers;               /* the read end of its answer pipe; -1: none */
    uint32_t serial;
    ls_vec asked;              /* filed: handed to it and not answered yet, in order */
    uint32_t answered;         /* the running index of its next answer */
    double since_ms;           /* questions outstanding: when the last was handed over or answered */
} evaluator;

struct ls_whatif_worker {
    ls_whatif *wi;             /* NULL until the first question is handed over */
    ls_whatif_build_fn build;
    void *build_ud;
    ls_kcluster *kc;
    pthread_mutex_t mu;
    pthread_cond_t changed;
    ls_vec inbox;              /* filed, guarded by mu */
    /* guarded by mu */
    bool busy, stop;           /* busy: an evaluator (or the loop) has questions outstanding */
    evaluator cur;             /* the collector's */
    evaluator next;            /* forked, not yet taken by the collector */
    uint32_t alive;            /* serial of the evaluator that may take more questions; 0 none */
    double credit_ms;          /* CPU ms forked evaluators may still spend (below 0: owed) */
    double credit_at;          /* monotonic ms when it was last accrued */
    uint64_t max_wait_ms;      /* --whatif-max-wait: a question's longest wait for its fork while pods wait */
    /* the scheduling thread's */
    int questions;             /* the write end of the warm evaluator's question pipe; -1 none */
    uint32_t warm, serials;    /* the warm evaluator's serial; the last one given */
    size_t question_cap;       /* its pipe's capacity */
    live_version forked_at;
    bool warned_fork;
    pthread_t collector;
    bool collecting;
    ls_worker_page *progress;  /* the child's page: the call it runs (shared) */
    int nudge[2];              /* non-blocking: wakes the collector (a new evaluator; the worker ends) */
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

/* Moves every entry of `from` to the end of `to`; `from` is left empty. */
static void move_filed(ls_vec *to, ls_vec *from, uint32_t first)
{
    for (uint32_t i = first; i < from->len; i++) {
        *(filed *)ls_vec_push(to) = LS_VEC_AT(from, filed, i);
        LS_VEC_AT(from, filed, i) = (filed){0};
    }
    free_filed(from);
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

/* ---- the cost budget (mu held) */

static void accrue(ls_whatif_worker *ww)
{
    double now = now_ms();
    ww->credit_ms += (now - ww->credit_at) / COST_SHARE;
    if (ww->credit_ms > CREDIT_CAP_MS)
        ww->credit_ms = CREDIT_CAP_MS;
    ww->credit_at = now;
}

/* When questions (the first filed at first_ms) may have a fork while pods
 * wait: once the credit is paid back, or when the first has waited max_wait_ms. */
static double fork_due_after(ls_whatif_worker *ww, double first_ms)
{
    accrue(ww);
    double by_credit = ww->credit_at + (ww->credit_ms < 0 ? -ww->credit_ms * COST_SHARE : 0);
    double by_wait = first_ms + (double)ww->max_wait_ms;
    return by_credit < by_wait ? by_credit : by_wait;
}

/* The same for the filed questions; 0 with none filed. */
static double fork_due_ms(ls_whatif_worker *ww)
{
    return ww->inbox.len ? fork_due_after(ww, LS_VEC_AT(&ww->inbox, filed, 0).filed_ms) : 0;
}

/* A reaped child's CPU time, in ms. */
static double cpu_ms_of(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

/* Spends what an evaluator cost: its CPU time, from its rusage when reaped. */
static void spend(ls_whatif_worker *ww, const struct rusage *ru)
{
    double cpu_ms = cpu_ms_of(ru);
    accrue(ww);
    ww->credit_ms -= cpu_ms;
    if (ls_log_enabled(4)) {
        char cpu[32], credit[32];
        snprintf(cpu, sizeof cpu, "%.1f", cpu_ms);
        snprintf(credit, sizeof credit, "%.1f", ww->credit_ms);
        ls_log_info(4, "What-if evaluator reaped", "cpuMs", cpu, "creditMs", credit);
    }
}

static void nudge(ls_whatif_worker *ww)
{
    ssize_t n = write(ww->nudge[1], "x", 1);   /* full: a nudge is pending already */
    (void)n;
}

/* ---- the collector (a thread of the worker) */

/* Drains the nudges; true when the worker ends. */
static bool nudged_to_stop(ls_whatif_worker *ww)
{
    char drain[64];
    while (read(ww->nudge[0], drain, sizeof drain) > 0) {
    }
    pthread_mutex_lock(&ww->mu);
    bool stop = ww->stop;
    pthread_mutex_unlock(&ww->mu);
    return stop;
}

/* False at the deadline, at the end of the pipe, or when the worker ends. */
static bool read_all(ls_whatif_worker *ww, int fd, void *data, size_t len, double deadline)
{
    char *p = data;
    while (len) {
        int left = (int)(deadline - now_ms());
        struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = ww->nudge[0], .events = POLLIN}};
        if (left <= 0 || poll(pfd, 2, left) < 0)
            return false;
        if (pfd[1].revents && nudged_to_stop(ww))
            return false;
        if (!pfd[0].revents)
            continue;
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

/* How the child ended, for the question it was answering; `ru` its resource
 * usage (at idle priority a child may pass a deadline for want of the CPU). */
static char *ended_answer(ls_whatif_worker *ww, const filed *f, int wstatus, const struct rusage *ru)
{
    ls_worker_page *p = ww->progress;
    char call[800];
    ls_worker_page_call(p, call, sizeof call);
    const char *plugin = p->plugin[0] ? p->plugin : "(no plugin call)";
    char why[300];
    long deadline = ls_whatif_deadline_ms(f->question);
    double cpu = cpu_ms_of(ru);
    if ((p->why[0] || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)) && cpu < (double)deadline / 2)
        snprintf(why, sizeof why, "the question ran past its deadline of %ld ms waiting for the CPU (the what-if "
                 "evaluator runs at idle priority and had %.0f ms of it: the machine was busy)", deadline, cpu);
    else if (p->why[0] || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL))
        snprintf(why, sizeof why, "the question ran past its deadline of %ld ms", deadline);
    else if (WIFSIGNALED(wstatus))
        snprintf(why, sizeof why, "the what-if evaluator ended on signal %d", WTERMSIG(wstatus));
    else
        snprintf(why, sizeof why, "the what-if evaluator ended (status %d) before answering",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(a, "kind", "WhatIfAnswer");
    char msg[sizeof why + sizeof call + 400];
    snprintf(msg, sizeof msg, "%s, in plugin %s (%s)", why, plugin, call[0] ? call : "-");
    cJSON_AddStringToObject(a, "error", msg);
    cJSON_AddStringToObject(a, "plugin", plugin);
    char *text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* The evaluator's last batch is answered (mu held): the loop may hand more over. */
static void idle_again(ls_whatif_worker *ww)
{
    ww->busy = false;
    pthread_cond_broadcast(&ww->changed);
    if (ww->inbox.len)
        ls_kcluster_wake(ww->kc);
}

/* Reads the current evaluator's next answer and passes it on: false when it
 * ended (or its answer did not come by the deadline, or the worker ends). */
static bool collect_one(ls_whatif_worker *ww)
{
    pthread_mutex_lock(&ww->mu);
    int fd = ww->cur.answers;
    uint32_t expected = ww->cur.answered;
    bool outstanding = ww->cur.asked.len > 0;
    double deadline = ww->cur.since_ms + LS_WHATIF_DEADLINE_MS + 2 * LS_WHATIF_KILL_GRACE_MS;
    double due = !ww->busy && ww->next.answers < 0 ? fork_due_ms(ww) : 0;   /* spaced questions */
    pthread_mutex_unlock(&ww->mu);
    double now = now_ms();
    int wait = outstanding ? (int)(deadline - now) : IDLE_POLL_MS;
    if (due > now && due - now + 1 < wait)
        wait = (int)(due - now) + 1;
    struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = ww->nudge[0], .events = POLLIN}};
    int ready = poll(pfd, 2, wait < 0 ? 0 : wait);
    if (ready < 0)
        return errno == EINTR;
    if (pfd[1].revents && nudged_to_stop(ww))
        return false;
    if (!pfd[0].revents) {
        if (due > 0 && now_ms() >= due)   /* the credit is back, or the first waited long enough */
            ls_kcluster_wake(ww->kc);
        return !outstanding || now_ms() < deadline;
    }
    pthread_mutex_lock(&ww->mu);   /* the loop may have handed questions over meanwhile */
    expected = ww->cur.answered;
    outstanding = ww->cur.asked.len > 0;
    pthread_mutex_unlock(&ww->mu);
    uint32_t head[3];
    deadline = now_ms() + LS_WHATIF_DEADLINE_MS + 2 * LS_WHATIF_KILL_GRACE_MS;
    if (!outstanding || !read_all(ww, fd, head, sizeof head, deadline) || head[0] != expected ||
        head[2] > LS_WHATIF_MAX_ANSWER + 1024)
        return false;
    char *answer = ls_xmalloc((size_t)head[2] + 1);
    if (!read_all(ww, fd, answer, head[2], deadline)) {
        free(answer);
        return false;
    }
    answer[head[2]] = 0;
    pthread_mutex_lock(&ww->mu);
    filed f = LS_VEC_AT(&ww->cur.asked, filed, 0);
    ls_vec *asked = &ww->cur.asked;
    memmove(asked->data, &LS_VEC_AT(asked, filed, 1), (size_t)(asked->len - 1) * sizeof(filed));
    asked->len--;
    ww->cur.answered++;
    ww->cur.since_ms = now_ms();
    pthread_mutex_unlock(&ww->mu);
    send_answer(ww, f.id, (int)head[1], answer, f.pause_ms);
    free(answer);
    free(f.id);
    free(f.question);
    pthread_mutex_lock(&ww->mu);
    if (!ww->cur.asked.len)
        idle_again(ww);
    pthread_mutex_unlock(&ww->mu);
    return true;
}

/* The current evaluator ended (mu not held): reaped; the question it was
 * on answered with how it ended, the ones after it back to the inbox (all of
 * them when it ended idle: it had not read them). */
static void end_current(ls_whatif_worker *ww)
{
    pthread_mutex_lock(&ww->mu);
    evaluator ev = ww->cur;
    ww->cur = (evaluator){.answers = -1};
    ls_vec_init(&ww->cur.asked, sizeof(filed));
    if (ww->alive == ev.serial)
        ww->alive = 0;
    bool stopping = ww->stop;
    pthread_mutex_unlock(&ww->mu);
    close(ev.answers);
    int wstatus = 0;
    struct rusage ru;
    if (stopping) {   /* the evaluator ends by its own deadline (or its next write), unwaited for */
        waitpid(ev.pid, &wstatus, WNOHANG);
        free_filed(&ev.asked);
        return;
    }
    while (wait4(ev.pid, &wstatus, 0, &ru) < 0) {
        if (errno != EINTR) {
            memset(&ru, 0, sizeof ru);
            break;
        }
    }
    pthread_mutex_lock(&ww->mu);
    spend(ww, &ru);
    pthread_mutex_unlock(&ww->mu);
    uint32_t requeue = 0;
    bool idle = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == LS_WHATIF_EXIT_IDLE;
    if (ev.asked.len && !idle) {
        filed *f = &LS_VEC_AT(&ev.asked, filed, 0);
        char *text = ended_answer(ww, f, wstatus, &ru);
        ls_log_warning("A what-if question ended its evaluator", "err", text);
        send_answer(ww, f->id, 200, text, -1);
        free(text);
        requeue = 1;
    }
    pthread_mutex_lock(&ww->mu);
    bool had = ev.asked.len > 0;
    move_filed(&ww->inbox, &ev.asked, requeue);   /* to the next evaluator */
    if (had)
        idle_again(ww);
    pthread_mutex_unlock(&ww->mu);
}

/* Forks retired while idle, reaped (and their cost spent) once they have
 * ended (mu held). */
static void reap_retired(ls_whatif_worker *ww, ls_vec *pids)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < pids->len; i++) {
        pid_t pid = LS_VEC_AT(pids, pid_t, i);
        int wstatus;
        struct rusage ru;
        pid_t got = wait4(pid, &wstatus, WNOHANG, &ru);
        if (got == 0) {
            LS_VEC_AT(pids, pid_t, kept++) = pid;
        } else if (got == pid) {
            spend(ww, &ru);
        }
    }
    pids->len = kept;
}

/* Until an evaluator is handed over (mu held): questions that wait for the
 * budget wake the loop when their fork is due. */
static void wait_for_evaluator(ls_whatif_worker *ww, bool reaping)
{
    double early = fork_due_ms(ww) - now_ms();
    if (!ww->inbox.len || ww->busy || early <= 0) {
        if (!reaping) {
            pthread_cond_wait(&ww->changed, &ww->mu);
            return;
        }
        early = IDLE_POLL_MS;
    }
    struct timespec until = ls_realtime_after_ms((long)early + 1);
    pthread_cond_timedwait(&ww->changed, &ww->mu, &until);
    if (ww->next.answers < 0 && ww->inbox.len && !ww->busy && fork_due_ms(ww) <= now_ms()) {
        pthread_mutex_unlock(&ww->mu);
        ls_kcluster_wake(ww->kc);
        pthread_mutex_lock(&ww->mu);
    }
}

/* The evaluator forked last replaces an idle (retired) current one: that
 * one's answers are not read any more, and it is reaped once it has ended. */
static void take_next(ls_whatif_worker *ww, ls_vec *retired)
{
    if (ww->cur.answers >= 0) {
        close(ww->cur.answers);
        *(pid_t *)ls_vec_push(retired) = ww->cur.pid;
        free_filed(&ww->cur.asked);
    }
    ww->cur = ww->next;
    ww->next = (evaluator){.answers = -1};
    ls_vec_init(&ww->next.asked, sizeof(filed));
}

static void *collector(void *arg)
{
    ls_whatif_worker *ww = arg;
    ls_vec retired;
    ls_vec_init(&retired, sizeof(pid_t));
    pthread_mutex_lock(&ww->mu);
    while (!ww->stop) {
        reap_retired(ww, &retired);
        if (ww->next.answers >= 0 && (ww->cur.answers < 0 || !ww->cur.asked.len))
            take_next(ww, &retired);
        if (ww->cur.answers < 0) {
            wait_for_evaluator(ww, retired.len > 0);
            continue;
        }
        pthread_mutex_unlock(&ww->mu);
        if (!collect_one(ww))
            end_current(ww);
        pthread_mutex_lock(&ww->mu);
    }
    if (ww->next.answers >= 0)
        take_next(ww, &retired);
    pthread_mutex_unlock(&ww->mu);
    if (ww->cur.answers >= 0)
        end_current(ww);
    pthread_mutex_lock(&ww->mu);
    reap_retired(ww, &retired);   /* the ones still ending are left to end unwaited for */
    pthread_mutex_unlock(&ww->mu);
    ls_vec_free(&retired);
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
        f->filed_ms = now_ms();
        pthread_cond_broadcast(&ww->changed);   /* the collector times the next fork */
    }
    pthread_mutex_unlock(&ww->mu);
    if (full)
        ls_kcluster_whatif_answer(ww->kc, id, 429, "{\"error\":\"too many what-if questions waiting (256)\"}");
    else
        ls_kcluster_wake(ww->kc);
}

ls_whatif_worker *ls_whatif_worker_new(ls_kcluster *kc, ls_whatif_build_fn build, void *build_ud, bool fork,
                                       uint64_t max_wait_ms)
{
    ls_whatif_worker *ww = ls_xcalloc(1, sizeof *ww);
    ww->max_wait_ms = max_wait_ms;
    ww->build = build;
    ww->build_ud = build_ud;
    ww->kc = kc;
    ww->questions = -1;
    ww->credit_at = now_ms();
    ww->cur.answers = ww->next.answers = -1;
    pthread_mutex_init(&ww->mu, NULL);
    pthread_cond_init(&ww->changed, NULL);
    ls_vec_init(&ww->inbox, sizeof(filed));
    ls_vec_init(&ww->cur.asked, sizeof(filed));
    ls_vec_init(&ww->next.asked, sizeof(filed));
    void *page = mmap(NULL, sizeof(ls_worker_page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ww->progress = page == MAP_FAILED ? NULL : page;
    bool piped = pipe2(ww->nudge, O_CLOEXEC | O_NONBLOCK) == 0;
    if (!piped)
        ww->nudge[0] = ww->nudge[1] = -1;
    ww->collecting = fork && piped && ww->progress && pthread_create(&ww->collector, NULL, collector, ww) == 0;
    ls_intern_guard_fork();
    ls_log_guard_fork();
    ls_kcluster_serve_whatif(kc, file_question, ww);
    return ww;
}

/* The evaluator, built with the first question (scheduling thread): false
 * when its build failed, every question taken answered with the reason. */
static bool have_evaluator(ls_whatif_worker *ww, ls_vec *taken)
{
    if (ww->wi)
        return true;
    ls_error err = {0};
    ls_scheduler *evaluator = ww->build(ww->build_ud, &err);
    if (evaluator) {
        ww->wi = ls_whatif_new(evaluator);
        return true;
    }
    ls_log_error("Building the what-if evaluator failed", "err", err.msg);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(a, "kind", "WhatIfAnswer");
    char msg[sizeof err.msg + 64];
    snprintf(msg, sizeof msg, "the what-if evaluator could not be built: %s", err.msg);
    cJSON_AddStringToObject(a, "error", msg);
    char *text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    for (uint32_t i = 0; i < taken->len; i++)
        ls_kcluster_whatif_answer(ww->kc, LS_VEC_AT(taken, filed, i).id, 503, text);
    free(text);
    free_filed(taken);
    return false;
}

/* The fallback: every question answered here, between two cycles. */
static void answer_here(ls_whatif_worker *ww, ls_scheduler *live, ls_vec *taken)
{
    for (uint32_t i = 0; i < taken->len; i++) {
        filed *f = &LS_VEC_AT(taken, filed, i);
        int status;
        char *answer = ls_whatif_answer_capped(ww->wi, live, f->question, &status);
        ls_kcluster_whatif_answer(ww->kc, f->id, status, answer);
        free(answer);
    }
    free_filed(taken);
}

static live_version read_version(const ls_whatif_worker *ww, const ls_scheduler *live)
{
    ls_scheduler *evaluator = ls_whatif_evaluator(ww->wi);
    ls_sched_env *env = ls_scheduler_env((ls_scheduler *)live);
    return (live_version){.generation = ls_cache_generation(), .applied = ls_kcluster_applied(ww->kc),
                          .cycles = ls_scheduler_cycles(live), .waiting = env->waiting->changes,
                          .reloads = ls_scheduler_reloads(live, true) + ls_scheduler_reloads(live, false),
                          .evaluator_reloads = ls_scheduler_reloads(evaluator, true) +
                                               ls_scheduler_reloads(evaluator, false)};
}

/* The warm evaluator takes no more questions: at the end of its question
 * pipe it ends. */
static void retire_warm(ls_whatif_worker *ww)
{
    if (ww->questions < 0)
        return;
    close(ww->questions);
    ww->questions = -1;
    pthread_mutex_lock(&ww->mu);
    if (ww->alive == ww->warm)
        ww->alive = 0;
    pthread_mutex_unlock(&ww->mu);
}

/* Hands `taken` to the warm evaluator when nothing it reads has changed
 * and the batch fits in its pipe; false (it is retired) otherwise. A write
 * that fails or falls short ends it (the end of its pipe comes mid-batch):
 * the collector puts what it did not answer back in the inbox. */
static bool ask_warm(ls_whatif_worker *ww, ls_scheduler *live, ls_vec *taken)
{
    if (ww->questions < 0)
        return false;
    double began = now_ms();
    live_version v = read_version(ww, live);
    size_t len = 0;
    char *batch = NULL;
    if (!memcmp(&v, &ww->forked_at, sizeof v)) {
        char **qs = ls_xmalloc((size_t)(taken->len + 1) * sizeof *qs);
        for (uint32_t i = 0; i < taken->len; i++)
            qs[i] = LS_VEC_AT(taken, filed, i).question;
        batch = ls_whatif_batch_encode(qs, taken->len, ls_scheduler_env(live)->clock_ms, ww->question_cap, &len);
        free(qs);
    }
    pthread_mutex_lock(&ww->mu);
    bool ok = batch && ww->alive == ww->warm && ww->cur.serial == ww->warm && ww->next.answers < 0;
    if (ok) {
        double pause = now_ms() - began;
        for (uint32_t i = 0; i < taken->len; i++)
            LS_VEC_AT(taken, filed, i).pause_ms = pause;
        move_filed(&ww->cur.asked, taken, 0);
        ww->cur.since_ms = now_ms();
    }
    pthread_mutex_unlock(&ww->mu);
    if (!ok) {
        free(batch);
        retire_warm(ww);
        return false;
    }
    ssize_t n = write(ww->questions, batch, len);
    free(batch);
    if (n != (ssize_t)len)
        retire_warm(ww);
    return true;
}

/* A pipe the scheduling thread writes without ever blocking, as large as the
 * kernel allows up to QUESTION_PIPE_BYTES. */
static size_t open_question_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return 0;
    fcntl(p[1], F_SETPIPE_SZ, QUESTION_PIPE_BYTES);
    int cap = fcntl(p[1], F_GETPIPE_SZ);
    if (cap <= 0 || fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    return (size_t)cap;
}

/* In the child just forked (the worker's mu held by its only thread). */
static _Noreturn void start_child(ls_whatif_worker *ww, ls_scheduler *live, const ls_vec *taken, const int ap[2],
                                  const int qp[2])
{
    char **first = ls_xmalloc((size_t)(taken->len + 1) * sizeof *first);
    for (uint32_t i = 0; i < taken->len; i++)
        first[i] = LS_VEC_AT(taken, filed, i).question;
    /* not the worker's ends, nor the retired evaluator's answers, which the collector may still hold */
    ls_whatif_child c = {.wi = ww->wi, .live = live, .progress = ww->progress, .first = first, .n_first = taken->len,
                         .answers = ap[1], .questions = qp[0],
                         .close_fds = {ap[0], qp[1], ww->nudge[0], ww->nudge[1]}, .n_close = 4};
    if (ww->cur.answers >= 0)
        close(ww->cur.answers);
    ls_whatif_child_main(&c);
}

/* Forks an evaluator for `taken`; false (nothing started) when it cannot. */
static bool fork_evaluator(ls_whatif_worker *ww, ls_scheduler *live, ls_vec *taken)
{
    int ap[2], qp[2];
    if (!ww->collecting || pipe2(ap, O_CLOEXEC) != 0)
        return false;
    size_t cap = open_question_pipe(qp);
    if (!cap) {
        close(ap[0]);
        close(ap[1]);
        return false;
    }
    live_version at = read_version(ww, live);
    memset(ww->progress, 0, sizeof *ww->progress);
    /* held across the fork: the child's copy of cur (the fd it closes) is whole */
    pthread_mutex_lock(&ww->mu);
    double began = now_ms();
    pid_t pid = fork();
    if (pid == 0)
        start_child(ww, live, taken, ap, qp);
    double pause = now_ms() - began;
    pthread_mutex_unlock(&ww->mu);
    close(ap[1]);
    close(qp[0]);
    if (pid < 0) {
        close(ap[0]);
        close(qp[1]);
        if (!ww->warned_fork)
            ls_log_warning("Cannot fork the what-if evaluator: answering between cycles", "err", strerror(errno));
        ww->warned_fork = true;
        return false;
    }
    for (uint32_t i = 0; i < taken->len; i++)
        LS_VEC_AT(taken, filed, i).pause_ms = pause;
    if (ls_log_enabled(4)) {
        char n[16], ms[32];
        snprintf(n, sizeof n, "%u", taken->len);
        snprintf(ms, sizeof ms, "%.2f", pause);
        ls_log_info(4, "What-if evaluator forked", "questions", n, "pauseMs", ms);
    }
    ww->questions = qp[1];
    ww->question_cap = cap;
    ww->forked_at = at;
    if (!++ww->serials)   /* 0 is no evaluator */
        ww->serials = 1;
    ww->warm = ww->serials;
    pthread_mutex_lock(&ww->mu);
    ww->next = (evaluator){.pid = pid, .answers = ap[0], .serial = ww->warm, .since_ms = now_ms()};
    ls_vec_init(&ww->next.asked, sizeof(filed));
    move_filed(&ww->next.asked, taken, 0);
    ww->alive = ww->warm;
    accrue(ww);
    ww->credit_ms -= pause;
    pthread_cond_broadcast(&ww->changed);
    pthread_mutex_unlock(&ww->mu);
    nudge(ww);
    return true;
}

/* Pods that keep the scheduler busy: ready to be scheduled or in their
 * cycles, and assumed ones whose binding is on its way (the supervisor posts
 * it; its outcome comes back to the loop), but not those a Permit holds. Pods
 * that wait out a backoff, or an event as unschedulable, do not count. */
static uint32_t busy_pods(ls_scheduler *live)
{
    ls_sched_env *env = ls_scheduler_env(live);
    ls_queue_counts counts = ls_squeue_counts(env->queue);
    uint32_t assumed = ls_cache_assumed_count(env->cache), held = ls_waiting_pods_count(env->waiting);
    return counts.active + counts.in_flight + (assumed > held ? assumed - held : 0);
}

void ls_whatif_worker_serve(ls_whatif_worker *ww, ls_scheduler *live)
{
    if (!ww)
        return;
    uint32_t queued = busy_pods(live);
    /* Retired as soon as the state moves: while it lives, each page the loop
     * writes first is copied (shared with it), and it could answer nothing. */
    if (ww->questions >= 0) {
        live_version v = read_version(ww, live);
        if (memcmp(&v, &ww->forked_at, sizeof v))
            retire_warm(ww);
    }
    pthread_mutex_lock(&ww->mu);
    bool warm = ww->questions >= 0 && ww->alive == ww->warm;
    /* an idle loop has time; a warm evaluator costs no fork */
    bool spaced = ww->collecting && queued && !warm && now_ms() < fork_due_ms(ww);
    if (ww->busy || !ww->inbox.len || spaced) {
        pthread_mutex_unlock(&ww->mu);
        return;
    }
    ls_vec taken = ww->inbox;
    ls_vec_init(&ww->inbox, sizeof(filed));
    ww->busy = true;
    pthread_mutex_unlock(&ww->mu);
    if (!have_evaluator(ww, &taken)) {
        pthread_mutex_lock(&ww->mu);
        ww->busy = false;
        pthread_mutex_unlock(&ww->mu);
        return;
    }
    ls_scheduler *evaluator = ls_whatif_evaluator(ww->wi);
    ls_scheduler_reload_if_changed(evaluator, false);
    /* an extender is called over the channel, whose reader a child lacks */
    if (!ls_scheduler_env(evaluator)->extenders) {
        if (ask_warm(ww, live, &taken))
            return;
        pthread_mutex_lock(&ww->mu);
        spaced = ww->collecting && queued && now_ms() < fork_due_after(ww, LS_VEC_AT(&taken, filed, 0).filed_ms);
        if (spaced) {   /* the warm one could not take them: they wait for the next fork */
            move_filed(&ww->inbox, &taken, 0);
            ww->busy = false;
        }
        pthread_mutex_unlock(&ww->mu);
        if (spaced || fork_evaluator(ww, live, &taken))
            return;
    }
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
    retire_warm(ww);
    if (ww->collecting) {
        pthread_mutex_lock(&ww->mu);
        ww->stop = true;
        pthread_cond_broadcast(&ww->changed);
        pthread_mutex_unlock(&ww->mu);
        nudge(ww);   /* a collector in poll returns */
        pthread_join(ww->collector, NULL);
    }
    if (ww->nudge[0] >= 0) {
        close(ww->nudge[0]);
        close(ww->nudge[1]);
    }
    free_filed(&ww->inbox);
    free_filed(&ww->cur.asked);
    free_filed(&ww->next.asked);
    if (ww->progress)
        munmap(ww->progress, sizeof *ww->progress);
    pthread_cond_destroy(&ww->changed);
    pthread_mutex_destroy(&ww->mu);
    ls_whatif_free(ww->wi);
    free(ww);
}
