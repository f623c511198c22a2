/*
 * run_worker_ends.c: the supervisor's count of the worker processes it
 * replaced, by the plugin in whose call the worker ended ("" outside any
 * plugin call) and why: `luasched_worker_restarts_total{plugin,reason}` on
 * run's /metrics, after the worker's own metrics (docs/operations/metrics.md).
 * Counted on the supervising thread, read by the server's threads.
 */
#include "cli/run_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { MAX_ROWS = 64 };

static const char *const REASONS[] = {"hang", "signal", "out_of_memory", "protocol", "exit"};
enum { N_REASONS = sizeof REASONS / sizeof *REASONS };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct { char plugin[128]; uint64_t n[N_REASONS]; } rows[MAX_ROWS];
static unsigned n_rows;

/* Why a worker ended, from the supervisor's words for it (supervise.c's). */
static unsigned reason_of(const char *how)
{
    if (strstr(how, "out of memory"))
        return 2;
    if (strstr(how, "it sent "))
        return 3;
    if (strncmp(how, "killed by the supervisor", 24) == 0)
        return 0;
    if (strncmp(how, "died of signal", 14) == 0)
        return 1;
    return 4;
}

void ls_run_count_worker_end(const char *plugin, const char *how)
{
    pthread_mutex_lock(&mu);
    unsigned i = 0;
    while (i < n_rows && strcmp(rows[i].plugin, plugin) != 0)
        i++;
    if (i == n_rows && n_rows < MAX_ROWS)   /* past 64 plugins, the last row takes the rest */
        snprintf(rows[n_rows++].plugin, sizeof rows[0].plugin, "%s", plugin);
    if (i >= n_rows)
        i = n_rows - 1;
    rows[i].n[reason_of(how)]++;
    pthread_mutex_unlock(&mu);
}

/* A label value as the exposition format wants it (\\, \" and \n escaped). */
static void put_label(ls_buf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            ls_buf_add(b, "\\", 1);
        if (*v == '\n') {
            ls_buf_adds(b, "\\n");
            continue;
        }
        ls_buf_add(b, v, 1);
    }
}

void ls_run_worker_ends_text(ls_buf *b)
{
    ls_buf_adds(b, "# HELP luasched_worker_restarts_total Worker processes the supervisor replaced, by the plugin in "
                   "whose call the worker ended (empty outside any plugin call) and why (hang, signal, "
                   "out_of_memory, protocol, exit).\n# TYPE luasched_worker_restarts_total counter\n");
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < n_rows; i++)
        for (unsigned k = 0; k < N_REASONS; k++) {
            if (!rows[i].n[k])
                continue;
            ls_buf_adds(b, "luasched_worker_restarts_total{plugin=\"");
            put_label(b, rows[i].plugin);
            ls_buf_addf(b, "\",reason=\"%s\"} %llu\n", REASONS[k], (unsigned long long)rows[i].n[k]);
        }
    pthread_mutex_unlock(&mu);
}
