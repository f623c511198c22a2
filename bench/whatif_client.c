/*
 * whatif_client.c: the what-if bench's question client (bench/whatif.sh),
 * one light process: libcurl's multi interface, one thread.
 *
 * usage: luasched_whatif_client URL TOKEN PODS.jsonl QPS [CONNECTIONS]
 *
 * Opens CONNECTIONS (default 64) keep-alive HTTPS connections (a GET of
 * /livez on each, all at once), says "connected" on standard error, and
 * starts asking when it gets SIGUSR1 (the bench opens them before its
 * measured window: a TLS handshake is a cost of connecting, not of a
 * question). Then it sends single-pod questions ("explain": false, the pods
 * of PODS.jsonl round robin) to URL at QPS a second on a fixed schedule
 * (question i is due i/QPS seconds after SIGUSR1), whether or not earlier
 * answers have come: at most CONNECTIONS are in flight, one per connection
 * (the scheduler answers one question of a connection at a time), and the
 * ones due meanwhile are sent as answers free connections. Each
 * answer is one line on standard output: the HTTP status, the answer's
 * "loopPauseMs" and its "elapsedMs" (the evaluator's time for it), "-" for
 * one it does not have, and the round trip in ms (from when it was sent). SIGUSR2 pauses the questions, and resumes them
 * (their schedule starting again then). Runs until SIGTERM.
 *
 * It replaced a Python client that cost the bench's 2-core machine about a
 * millisecond of CPU per question, which the scheduler's throughput paid for.
 */
#include <curl/curl.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static volatile sig_atomic_t go, stop, paused;

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

static void on_usr2(int sig)
{
    (void)sig;
    paused = !paused;
}

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "whatif_client: out of memory\n");
        exit(1);
    }
    return q;
}

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    buf *b = ud;
    size_t len = size * n;
    if (b->len + len + 1 > b->cap) {
        b->cap = (b->len + len + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
    return len;
}

/* The number after "key": in the answer, or "-". */
static void field(const buf *b, const char *key, char *out, size_t cap)
{
    const char *at = b->data ? strstr(b->data, key) : NULL;
    snprintf(out, cap, "-");
    if (!at)
        return;
    at += strlen(key);
    size_t n = strspn(at, "0123456789.eE+-");
    if (n && n < cap)
        snprintf(out, cap, "%.*s", (int)n, at);
}

/* The questions: one request body per line of PODS.jsonl. */
static char **read_questions(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char **qs = NULL;
    size_t n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!len)
            continue;
        qs = xrealloc(qs, (n + 1) * sizeof *qs);
        size_t q = (size_t)len + 64;
        qs[n] = xrealloc(NULL, q);
        snprintf(qs[n], q, "{\"pod\":%s,\"explain\":false}", line);
        n++;
    }
    free(line);
    fclose(f);
    if (!n) {
        fprintf(stderr, "whatif_client: no pods in %s\n", path);
        exit(1);
    }
    *count = n;
    return qs;
}

typedef struct transfer {
    CURL *easy;
    buf body;
} transfer;

static transfer *start(CURLM *multi, const char *url, struct curl_slist *headers, const char *post)
{
    transfer *t = calloc(1, sizeof *t);
    if (!t || !(t->easy = curl_easy_init())) {
        fprintf(stderr, "whatif_client: cannot make a transfer\n");
        exit(1);
    }
    curl_easy_setopt(t->easy, CURLOPT_URL, url);
    curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(t->easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(t->easy, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(t->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, &t->body);
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);   /* no sigaction around every call */
    if (post)
        curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, post);
    curl_multi_add_handle(multi, t->easy);
    return t;
}

/* Finished transfers: answers printed (print) and freed; how many ended. */
static int reap(CURLM *multi, int print)
{
    int left, ended = 0;
    CURLMsg *m;
    while ((m = curl_multi_info_read(multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        transfer *t;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        long status = 0;
        curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        if (m->data.result != CURLE_OK) {
            fprintf(stderr, "whatif_client: %s\n", curl_easy_strerror(m->data.result));
            exit(1);
        }
        if (print) {
            char pause[32], elapsed[32];
            field(&t->body, "\"loopPauseMs\":", pause, sizeof pause);
            field(&t->body, "\"elapsedMs\":", elapsed, sizeof elapsed);
            curl_off_t total_us = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_TOTAL_TIME_T, &total_us);
            printf("%ld %s %s %.3f\n", status, pause, elapsed, (double)total_us / 1000);
            fflush(stdout);
        }
        curl_multi_remove_handle(multi, m->easy_handle);
        curl_easy_cleanup(m->easy_handle);
        free(t->body.data);
        free(t);
        ended++;
    }
    return ended;
}

/* Runs the multi until `want` transfers have ended or `until` (seconds)
 * comes; how many ended. */
static int run_until(CURLM *multi, int want, double until, int print)
{
    int ended = 0, running;
    for (;;) {
        curl_multi_perform(multi, &running);
        ended += reap(multi, print);
        double left = until - now_s();
        if ((want && ended >= want) || left <= 0 || stop)
            return ended;
        curl_multi_poll(multi, NULL, 0, (int)(left * 1000) + 1, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s URL TOKEN PODS.jsonl QPS [CONNECTIONS]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    double qps = atof(argv[4]);
    long conns = argc > 5 ? atol(argv[5]) : 64;
    if (qps <= 0 || conns <= 0) {
        fprintf(stderr, "whatif_client: QPS and CONNECTIONS must be positive\n");
        return 2;
    }
    size_t n_questions;
    char **questions = read_questions(argv[3], &n_questions);
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, on_usr2);
    signal(SIGTERM, on_term);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char auth[512];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", argv[2]);
    struct curl_slist *headers = curl_slist_append(NULL, auth);
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, conns);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, conns);
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);

    /* the connections, opened at once and kept */
    char livez[1024];
    const char *path = strstr(strstr(url, "://") ? strstr(url, "://") + 3 : url, "/");
    snprintf(livez, sizeof livez, "%.*s/livez", (int)(path ? path - url : (long)strlen(url)), url);
    for (long i = 0; i < conns; i++)
        start(multi, livez, headers, NULL);
    if (run_until(multi, (int)conns, now_s() + 60, 0) < conns) {
        fprintf(stderr, "whatif_client: could not open %ld connections\n", conns);
        return 1;
    }
    fprintf(stderr, "connected\n");
    while (!go && !stop) {
        struct timespec pause = {0, 50 * 1000000L};
        nanosleep(&pause, NULL);
    }
    /* Question i is due at i/QPS; at most `conns` are in the multi at once
     * (one per connection: libcurl would spin on transfers waiting for one),
     * the ones due meanwhile wait here and go as answers come. */
    double began = now_s();
    size_t sent = 0;
    long in_flight = 0;
    while (!stop) {
        if (paused) {   /* answers still come; the schedule starts again on resuming */
            in_flight -= run_until(multi, 0, now_s() + 0.05, 1);
            began = now_s() - (double)sent / qps;
            continue;
        }
        size_t due = (size_t)((now_s() - began) * qps) + 1;
        for (; sent < due && in_flight < conns; sent++, in_flight++)
            start(multi, url, headers, questions[sent % n_questions]);
        double next = sent < due ? now_s() + 1 : began + (double)sent / qps;
        in_flight -= run_until(multi, sent < due ? 1 : 0, next, 1);
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    for (size_t i = 0; i < n_questions; i++)
        free(questions[i]);
    free(questions);
    curl_global_cleanup();
    return 0;
}
