/*
 * whatif_relay.c: see whatif_relay.h. Questions from several HTTP threads
 * may be on their way at once: each waits for the answer with its own id, on
 * a condition of its own (an answer wakes only the thread that asked it: with
 * one shared condition, each answer of a batch woke every waiting thread); an
 * answer nobody waits for any more (timed out) is dropped.
 */
#include "cli/whatif_relay.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct waiter {
    uint32_t id;
    pthread_cond_t answered;   /* signalled when its answer comes, or when the relay closes */
    bool done;
    int status;
    char *answer;
} waiter;

struct ls_whatif_relay {
    ls_relay *relay;
    pthread_mutex_t mu;
    uint32_t next_id;
    bool closed;      /* the scheduler stops: nobody waits any more */
    ls_vec waiting;   /* waiter *, guarded by mu */
};

ls_whatif_relay *ls_whatif_relay_new(ls_relay *relay)
{
    ls_whatif_relay *wr = ls_xcalloc(1, sizeof *wr);
    wr->relay = relay;
    pthread_mutex_init(&wr->mu, NULL);
    ls_vec_init(&wr->waiting, sizeof(waiter *));
    return wr;
}

void ls_whatif_relay_free(ls_whatif_relay *wr)
{
    if (!wr)
        return;
    ls_vec_free(&wr->waiting);
    pthread_mutex_destroy(&wr->mu);
    free(wr);
}

static void forget(ls_whatif_relay *wr, waiter *w)
{
    for (uint32_t i = 0; i < wr->waiting.len; i++)
        if (LS_VEC_AT(&wr->waiting, waiter *, i) == w) {
            LS_VEC_AT(&wr->waiting, waiter *, i) = LS_VEC_AT(&wr->waiting, waiter *, wr->waiting.len - 1);
            wr->waiting.len--;
            return;
        }
}

static char *error_answer(const char *msg)
{
    size_t n = strlen(msg) + 64;
    char *text = ls_xmalloc(n);
    snprintf(text, n, "{\"kind\":\"WhatIfAnswer\",\"error\":\"%s\"}", msg);
    return text;
}

char *ls_whatif_relay_ask(ls_whatif_relay *wr, const char *question, long timeout_ms, int *status)
{
    waiter w = {0};
    waiter *self = &w;
    pthread_cond_init(&w.answered, NULL);
    pthread_mutex_lock(&wr->mu);
    w.id = ++wr->next_id;
    *(waiter **)ls_vec_push(&wr->waiting) = self;
    pthread_mutex_unlock(&wr->mu);
    char id[16];
    snprintf(id, sizeof id, "%u", w.id);
    const char *f[] = {id, question};
    bool sent = ls_relay_send_to_worker(wr->relay, LS_CH_WHATIF_ASK, f, 2);
    struct timespec until = ls_realtime_after_ms(timeout_ms);
    pthread_mutex_lock(&wr->mu);
    int rc = 0;
    while (sent && !w.done && !wr->closed && rc == 0)
        rc = pthread_cond_timedwait(&w.answered, &wr->mu, &until);
    bool closed = wr->closed;
    forget(wr, self);
    pthread_mutex_unlock(&wr->mu);
    pthread_cond_destroy(&w.answered);
    if (w.done) {
        *status = w.status;
        return w.answer;
    }
    *status = sent && !closed ? 504 : 503;
    return error_answer(closed ? "the scheduler is stopping" : sent ? "the scheduler did not answer in time"
                                                                    : "no scheduler worker is running");
}

void ls_whatif_relay_close(ls_whatif_relay *wr)
{
    if (!wr)
        return;
    pthread_mutex_lock(&wr->mu);
    wr->closed = true;
    for (uint32_t i = 0; i < wr->waiting.len; i++)
        pthread_cond_signal(&LS_VEC_AT(&wr->waiting, waiter *, i)->answered);
    pthread_mutex_unlock(&wr->mu);
}

void ls_whatif_relay_answered(ls_whatif_relay *wr, const char *id, const char *status, const char *answer)
{
    if (!wr)
        return;
    uint32_t n = (uint32_t)strtoul(id, NULL, 10);
    pthread_mutex_lock(&wr->mu);
    for (uint32_t i = 0; i < wr->waiting.len; i++) {
        waiter *w = LS_VEC_AT(&wr->waiting, waiter *, i);
        if (w->id != n)
            continue;
        w->done = true;
        int code = atoi(status);
        w->status = code >= 200 && code <= 599 ? code : 502;   /* the worker is not trusted with more */
        w->answer = ls_xstrdup(answer);
        pthread_cond_signal(&w->answered);
        break;
    }
    pthread_mutex_unlock(&wr->mu);
}
