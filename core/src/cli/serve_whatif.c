/*
 * serve_whatif.c: POST /whatif on `luasched simulate --serve`
 * (docs/operations/what-if.md "On simulate --serve").
 *
 * `simulate --serve` runs no scheduler and no plugin code of its own: the
 * served API is in this process, threads and all. So each question is
 * answered by an evaluator process of its own, started from this executable
 * (posix_spawn of /proc/self/exe: nothing of this process's threads or
 * locks is inherited) as `luasched simulate --whatif-stdin [--config FILE]
 * [--plugin-path DIRS] [--plugin-timeout MS] --seed N served-cluster`. That is a simulate command,
 * so it runs its plugin code in simulate's supervised, confined worker
 * (supervised.c: seccomp, memory limit, the plugin budgets and the watchdog).
 *
 * On its standard input it gets the question (its length in bytes on the
 * first line, then the JSON) and then the served store's state as it is when
 * the question comes: one JSON List of every object of the kinds the
 * scheduler reads (client/read_kinds.h) and of the pods that have not
 * terminated, bound ones on their nodes. It loads that into a scheduler of
 * the configuration (seeded with --seed, as a fresh `luasched run --seed N`
 * starts), does not run it, and asks the what-if evaluator
 * (whatif_answer.c) the question against it; it writes the HTTP status on a
 * line, then the answer. Nothing reaches the served store.
 *
 * A question past its deadline (ls_whatif_deadline_ms, timed by the
 * evaluator from when it starts answering) ends the evaluator, which names
 * the plugin call it was in on its standard error (DEADLINE_MARK): the answer
 * is run's, an error naming the plugin. At most MAX_EVALUATORS questions are
 * answered at once (more get 429); an evaluator still there START_MS after
 * the deadline (building its scheduler, or not ending) is killed with its
 * process group, and the question gets 504 with its last words.
 * When the server stops, the evaluators are killed and their questions get
 * 503 at once (the HTTP server's stop waits for its handlers).
 */
#include "cli/serve_whatif.h"
#include "cli/cli.h"
#include "cli/whatif.h"
#include "client/read_kinds.h"
#include "framework/runtime_internal.h"
#include "worker/page.h"
#include "scheduler/whatif_eval.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A stop waits up to STOP_WAIT_MS for the killed evaluators' questions to
 * get their 503. */
enum { MAX_EVALUATORS = 4, START_MS = 15000, STDERR_KEPT = 4000, STOP_WAIT_MS = 2000 };
/* The evaluator's line on its standard error when a question runs past its
 * deadline: "<mark>plugin=NAME call=CALL". */
#define DEADLINE_MARK "luasched-whatif-deadline "
/* An answer over this is refused (the evaluator killed), as run's over 15 MiB. */
#define MAX_ANSWER (64u << 20)

#define NOT_TERMINATED "status.phase!=Succeeded,status.phase!=Failed"

struct ls_serve_whatif {
    ls_api *api;
    ls_serve_whatif_opts o;
    char seed[24];
    pthread_mutex_t mu;   /* guards the two below */
    pid_t running[MAX_EVALUATORS];   /* the evaluators now (process groups); 0: a free slot */
    bool stopping;
};

ls_serve_whatif *ls_serve_whatif_new(ls_api *api, const ls_serve_whatif_opts *o)
{
    ls_serve_whatif *sw = ls_xcalloc(1, sizeof *sw);
    sw->api = api;
    sw->o = *o;
    snprintf(sw->seed, sizeof sw->seed, "%llu", (unsigned long long)o->seed);
    pthread_mutex_init(&sw->mu, NULL);
    return sw;
}

void ls_serve_whatif_free(ls_serve_whatif *sw)
{
    if (!sw)
        return;
    pthread_mutex_destroy(&sw->mu);
    free(sw);
}

/* ---- the served store's state, as the evaluator's cluster */

static void add_items(ls_buf *b, cJSON *list, const ls_read_kind *k, uint32_t *n)
{
    cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(item, "metadata"), "managedFields");
        cJSON_DeleteItemFromObjectCaseSensitive(item, "kind");
        cJSON_DeleteItemFromObjectCaseSensitive(item, "apiVersion");
        cJSON_AddStringToObject(item, "apiVersion", k->api_version);
        cJSON_AddStringToObject(item, "kind", k->kind);
        char *doc = cJSON_PrintUnformatted(item);
        ls_buf_adds(b, (*n)++ ? ",\n" : "");
        ls_buf_adds(b, doc);
        free(doc);
    }
}

/* One JSON List of the kinds the scheduler reads, as `run`'s informers list
 * them (pods that have not terminated); kinds the store does not serve (its
 * --serve-as) are left out. */
static void store_state(ls_api *api, ls_buf *b)
{
    ls_buf_adds(b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
    uint32_t n = 0;
    for (size_t i = 0; i < LS_N_READ_KINDS; i++) {
        const ls_read_kind *k = &LS_READ_KINDS[i];
        const ls_api_resource *r = ls_api_resource_find(k->group, k->version, k->resource);
        if (!r)
            continue;
        ls_api_list_opts lo = {.field_selector = strcmp(k->kind, "Pod") == 0 ? NOT_TERMINATED : NULL};
        cJSON *list = NULL;
        if (ls_api_list(api, r, NULL, &lo, &list) == 200)
            add_items(b, list, k, &n);
        cJSON_Delete(list);
    }
    ls_buf_adds(b, "]}\n");
}

/* ---- one evaluator */

typedef struct evaluation {
    pid_t pid;
    int in, out, err;     /* this side's ends; -1 once closed */
    ls_buf input;         /* what goes to its standard input */
    size_t written;
    ls_buf output, errors;
    bool stopped;         /* killed by the server's stop */
} evaluation;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Its process group is killed at a stop from now on; false (and killed) when
 * the stop came first. */
static bool watch_evaluator(ls_serve_whatif *sw, int slot, pid_t pid)
{
    pthread_mutex_lock(&sw->mu);
    sw->running[slot] = pid;
    bool stopping = sw->stopping;
    pthread_mutex_unlock(&sw->mu);
    if (stopping)
        kill(-pid, SIGKILL);
    return !stopping;
}

static bool start(const ls_serve_whatif *sw, evaluation *ev)
{
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return false;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return false;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return false;
    }
    const char *argv[14];
    int n = 0;
    argv[n++] = "luasched";
    argv[n++] = "simulate";
    argv[n++] = "--whatif-stdin";
    argv[n++] = "--seed";
    argv[n++] = sw->seed;
    if (sw->o.config)
        argv[n++] = "--config", argv[n++] = sw->o.config;
    if (sw->o.plugin_path)
        argv[n++] = "--plugin-path", argv[n++] = sw->o.plugin_path;
    if (sw->o.plugin_timeout)
        argv[n++] = "--plugin-timeout", argv[n++] = sw->o.plugin_timeout;
    argv[n++] = "served-cluster";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);   /* its own group: a kill at the deadline reaches its worker too */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setsigmask(&at, &none);
    int rc = posix_spawn(&ev->pid, "/proc/self/exe", &fa, &at, (char *const *)argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]), close(out[1]), close(err[1]);
    ev->in = in[1], ev->out = out[0], ev->err = err[0];
    if (rc != 0) {
        close_fd(&ev->in), close_fd(&ev->out), close_fd(&ev->err);
        errno = rc;
        return false;
    }
    fcntl(ev->in, F_SETFL, O_NONBLOCK);
    return true;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads what is there; false at the end of the pipe. */
static bool drain(int fd, ls_buf *into, size_t keep)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0)
        return false;
    ls_buf_add(into, chunk, (size_t)n);
    if (keep && into->len > 2 * keep) {   /* only the last `keep` bytes matter */
        memmove(into->data, into->data + into->len - keep, keep);
        into->len = keep;
    }
    return true;
}

static void feed(evaluation *ev)
{
    ssize_t n = write(ev->in, ev->input.data + ev->written, ev->input.len - ev->written);
    if (n > 0)
        ev->written += (size_t)n;
    if ((n < 0 && errno != EINTR && errno != EAGAIN) || ev->written == ev->input.len)
        close_fd(&ev->in);
}

/* Until both of its output pipes end, or the deadline: false at the deadline
 * or past MAX_ANSWER. */
static bool converse(evaluation *ev, double deadline)
{
    while (ev->out >= 0 || ev->err >= 0) {
        if (ev->output.len > MAX_ANSWER)
            return false;
        struct pollfd p[3] = {{.fd = ev->in, .events = POLLOUT}, {.fd = ev->out, .events = POLLIN},
                              {.fd = ev->err, .events = POLLIN}};
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            return false;
        if (poll(p, 3, left) < 0 && errno != EINTR)
            return false;
        if (p[0].revents)
            feed(ev);
        if (p[1].revents && !drain(ev->out, &ev->output, 0))
            close_fd(&ev->out);
        if (p[2].revents && !drain(ev->err, &ev->errors, STDERR_KEPT))
            close_fd(&ev->err);
    }
    return true;
}

/* The evaluator's last lines on its standard error, for an answer's error. */
static const char *last_words(ls_buf *errors)
{
    ls_buf_add(errors, "", 1);
    char *s = errors->data;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        s[--n] = 0;
    return n > STDERR_KEPT ? s + n - STDERR_KEPT : n ? s : "(nothing on its standard error)";
}

/* The evaluator's DEADLINE_MARK line as run's answer for a question past its
 * deadline (whatif_worker.c); NULL when it wrote none. */
static char *past_deadline(ls_buf *errors, long deadline_ms)
{
    ls_buf_add(errors, "", 1);
    const char *mark = strstr(errors->data, DEADLINE_MARK "plugin=");
    if (!mark)
        return NULL;
    const char *plugin = mark + strlen(DEADLINE_MARK "plugin="), *call = strstr(plugin, " call=");
    if (!call)
        return NULL;
    size_t call_len = strcspn(call + 6, "\n");
    char name[200], what[900], msg[1300];
    snprintf(name, sizeof name, "%.*s", (int)(call - plugin), plugin);
    snprintf(what, sizeof what, "%.*s", (int)call_len, call + 6);
    snprintf(msg, sizeof msg, "the question ran past its deadline of %ld ms, in plugin %s (%s)", deadline_ms,
             name[0] ? name : "(no plugin call)", what[0] ? what : "-");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "apiVersion", "luasched.io/v1alpha1");
    cJSON_AddStringToObject(a, "kind", "WhatIfAnswer");
    cJSON_AddStringToObject(a, "error", msg);
    cJSON_AddStringToObject(a, "plugin", name[0] ? name : "(no plugin call)");
    char *text = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return text;
}

/* "STATUS\nJSON" from the evaluator, or an error of how it ended. */
static char *verdict(evaluation *ev, bool in_time, int wstatus, long deadline_ms, int *status)
{
    if (ev->stopped) {
        *status = 503;
        return ls_whatif_error_json("the served cluster is stopping");
    }
    ls_buf_add(&ev->output, "", 1);
    char *end = NULL;
    long code = strtol(ev->output.data, &end, 10);
    if (in_time && end && *end == '\n' && code >= 200 && code <= 599 && end[1]) {
        *status = (int)code;
        return ls_xstrdup(end + 1);
    }
    char *late = in_time ? past_deadline(&ev->errors, deadline_ms) : NULL;
    if (late) {
        *status = 200;
        return late;
    }
    char msg[STDERR_KEPT + 300];
    if (ev->output.len > MAX_ANSWER) {
        snprintf(msg, sizeof msg, "the answer is over %u bytes: ask with \"explain\": false or about fewer pods",
                 MAX_ANSWER);
        *status = 400;
        return ls_whatif_error_json(msg);
    }
    if (!in_time)
        snprintf(msg, sizeof msg, "the question ran past its deadline of %ld ms (the evaluator was ended): %s",
                 deadline_ms, last_words(&ev->errors));
    else
        snprintf(msg, sizeof msg, "the what-if evaluator ended (%s %d) before answering: %s",
                 WIFSIGNALED(wstatus) ? "signal" : "status",
                 WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
                 last_words(&ev->errors));
    *status = in_time ? 500 : 504;
    return ls_whatif_error_json(msg);
}

static char *evaluate(ls_serve_whatif *sw, int slot, const char *body, size_t len, int *status)
{
    evaluation ev = {.in = -1, .out = -1, .err = -1};
    ls_buf_addf(&ev.input, "%zu\n", len);
    ls_buf_add(&ev.input, body, len);
    store_state(sw->api, &ev.input);
    long deadline_ms = ls_whatif_deadline_ms(body);
    char *answer;
    if (!start(sw, &ev)) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot start the what-if evaluator: %s", strerror(errno));
        *status = 500;
        answer = ls_whatif_error_json(msg);
    } else {
        bool in_time = watch_evaluator(sw, slot, ev.pid) && converse(&ev, now_ms() + (double)deadline_ms + START_MS);
        if (!in_time)
            kill(-ev.pid, SIGKILL);
        int wstatus = 0;
        while (waitpid(ev.pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
        pthread_mutex_lock(&sw->mu);
        ev.stopped = sw->stopping;
        pthread_mutex_unlock(&sw->mu);
        answer = verdict(&ev, in_time, wstatus, deadline_ms, status);
    }
    close_fd(&ev.in), close_fd(&ev.out), close_fd(&ev.err);
    ls_buf_free(&ev.input);
    ls_buf_free(&ev.output);
    ls_buf_free(&ev.errors);
    return answer;
}

char *ls_serve_whatif_ask(void *ud, const char *body, size_t len, int *status)
{
    ls_serve_whatif *sw = ud;
    int slot = -1;
    pthread_mutex_lock(&sw->mu);
    for (int i = 0; i < MAX_EVALUATORS && slot < 0 && !sw->stopping; i++)
        if (!sw->running[i])
            slot = i, sw->running[i] = -1;   /* taken; its pid comes once started */
    bool stopping = sw->stopping;
    pthread_mutex_unlock(&sw->mu);
    if (stopping) {
        *status = 503;
        return ls_whatif_error_json("the served cluster is stopping");
    }
    if (slot < 0) {
        *status = 429;
        return ls_whatif_error_json("too many what-if questions at once (4): ask again when one is answered");
    }
    char *answer = evaluate(sw, slot, body, len, status);
    pthread_mutex_lock(&sw->mu);
    sw->running[slot] = 0;
    pthread_mutex_unlock(&sw->mu);
    return answer;
}

static int in_flight(ls_serve_whatif *sw)
{
    int n = 0;
    pthread_mutex_lock(&sw->mu);
    for (int i = 0; i < MAX_EVALUATORS; i++)
        n += sw->running[i] != 0;
    pthread_mutex_unlock(&sw->mu);
    return n;
}

bool ls_serve_whatif_stop(ls_serve_whatif *sw)
{
    pthread_mutex_lock(&sw->mu);
    sw->stopping = true;
    for (int i = 0; i < MAX_EVALUATORS; i++)
        if (sw->running[i] > 0)
            kill(-sw->running[i], SIGKILL);
    pthread_mutex_unlock(&sw->mu);
    bool answered = in_flight(sw) > 0;
    for (int waited = 0; in_flight(sw) && waited < STOP_WAIT_MS; waited += 10)
        usleep(10 * 1000);
    return answered;
}

/* ---- the evaluator process: `simulate --whatif-stdin` */

bool ls_cli_wants_whatif_stdin(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--whatif-stdin") == 0)
            return true;
    return false;
}

typedef struct question {
    const ls_sim_opts *o;
    const char *text;
    size_t len;
} question;

static void say(const char *s)
{
    ssize_t n = write(STDERR_FILENO, s, strlen(s));
    (void)n;
}

/* Past the question's deadline: the call running named on standard error
 * (async-signal-safe: the page is written with stores, the rest is write). */
static void on_deadline(int sig)
{
    (void)sig;
    ls_rt_describe_running();
    char call[800] = "";
    const ls_worker_page *p = ls_worker_page_self;
    if (p)
        ls_worker_page_call(p, call, sizeof call);
    say("\n" DEADLINE_MARK "plugin=");
    say(p ? p->plugin : "");
    say(" call=");
    say(call);
    say("\n");
    _exit(LS_EXIT_FAILURE);
}

/* The deadline from now; without a timer, the server's kill remains. */
static void arm_deadline(const char *question)
{
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    timer_t t;
    long ms = ls_whatif_deadline_ms(question);
    struct itimerspec its = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000L}};
    signal(SIGALRM, on_deadline);
    if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0)
        timer_settime(t, 0, &its, NULL);
}

static void print_answer(int status, const char *answer)
{
    printf("%d\n%s\n", status, answer);
    fflush(stdout);
}

/* The evaluator: a second scheduler of the configuration (its own Lua
 * states, tracing, a source that writes nothing), asked about `live`. */
static int answer_question(void *ud, ls_scheduler *live)
{
    const question *q = ud;
    ls_config cfg;
    ls_error err;
    memset(&cfg, 0, sizeof cfg);
    if (!ls_config_load(&cfg, q->o->config, &err)) {
        ls_config_free(&cfg);
        fprintf(stderr, "luasched simulate: the what-if evaluator: %s\n", err.msg);
        return LS_EXIT_USAGE;
    }
    char *dirs = !q->o->plugin_path && cfg.luasched.plugin_dirs ? ls_xstrdup(cfg.luasched.plugin_dirs) : NULL;
    ls_sched_options so = {.seed = q->o->seed, .trace = true, .plugin_path = q->o->plugin_path ? q->o->plugin_path : dirs,
                           .plugin_timeout_ms = q->o->plugin_timeout_ms ? q->o->plugin_timeout_ms
                                                                        : cfg.luasched.plugin_timeout_ms};
    ls_sched_source none = ls_whatif_source();
    ls_scheduler *evaluator = ls_scheduler_new(&cfg, &so, &none, &err);   /* takes cfg */
    if (!evaluator) {
        fprintf(stderr, "luasched simulate: the what-if evaluator: %s\n", err.msg);
        free(dirs);
        return LS_EXIT_USAGE;
    }
    ls_whatif *wi = ls_whatif_new(evaluator);
    arm_deadline(q->text);
    int status = 500;
    char *answer = ls_whatif_answer(wi, live, q->text, q->len, &status);
    print_answer(status, answer);
    free(answer);
    ls_whatif_free(wi);
    free(dirs);
    return LS_EXIT_OK;
}

static void eval_usage(FILE *out)
{
    fprintf(out, "usage: luasched simulate --whatif-stdin [--config FILE] [--plugin-path DIRS] [--seed N] NAME\n"
                 "(internal: the evaluator of `simulate --serve`'s POST /whatif; reads the question's length,\n"
                 "the question and the cluster on standard input)\n");
}

static bool read_input(ls_buf *in)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        ls_buf_add(in, chunk, (size_t)n);
    }
    ls_buf_add(in, "", 1);
    return true;
}

int ls_cli_serve_whatif_eval(int argc, char **argv)
{
    char **args = ls_xcalloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--whatif-stdin") != 0)
            args[n++] = argv[i];
    ls_sim_opts o;
    int rc = ls_cli_parse_sim_opts(n, args, &o, 1, NULL, eval_usage);
    ls_buf in = {0};
    char *end = NULL;
    unsigned long long len = 0;
    if (rc == 0) {
        if (read_input(&in))
            len = strtoull(in.data, &end, 10);
        if (!end || *end != '\n' || len > in.len - (size_t)(end + 1 - in.data) - 1) {
            fprintf(stderr, "luasched simulate: --whatif-stdin: expected the question's length, a line, the "
                            "question and the cluster on standard input\n");
            rc = LS_EXIT_USAGE;
        }
    }
    if (rc == 0) {
        question q = {.o = &o, .text = end + 1, .len = (size_t)len};
        char *text = ls_xmalloc(q.len + 1);   /* the question NUL-terminated, as the evaluator reads it */
        memcpy(text, q.text, q.len);
        text[q.len] = 0;
        q.text = text;
        o.cluster_text = end + 1 + len;
        o.cluster_len = in.len - 1 - (size_t)(o.cluster_text - in.data);
        o.instead_of_run = answer_question;
        o.instead_ud = &q;
        rc = ls_cli_run_simulation(&o, "simulate", NULL);
        free(text);
    }
    ls_buf_free(&in);
    free(args);
    return rc < 0 ? LS_EXIT_OK : rc;
}
