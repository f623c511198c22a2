/*
 * whatif_worker.c: what-if questions in `luasched run`'s worker. The
 * channel's reader thread files each question (its request id and JSON) and
 * wakes the scheduling loop; the scheduling thread answers every filed
 * question between two cycles (ls_whatif_worker_serve, from the loop's
 * progress call), on the live state and with the evaluator's own Lua states,
 * and sends each answer back to the supervisor.
 */
#include "cli/whatif_worker.h"
#include "cli/whatif.h"
#include "client/kcluster.h"
#include "luasched/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past 16 MiB a worker's message ends it (run_supervise.c): a larger answer
 * (explain tables of many pods on many nodes) is refused instead. */
enum { MAX_FILED = 256, MAX_ANSWER = 15 * 1024 * 1024 };

typedef struct filed {
    char *id, *question;
} filed;

struct ls_whatif_worker {
    ls_whatif *wi;
    ls_kcluster *kc;
    pthread_mutex_t mu;
    ls_vec inbox;   /* filed, guarded by mu */
};

static void file_question(void *ud, const char *id, const char *question)
{
    ls_whatif_worker *ww = ud;
    pthread_mutex_lock(&ww->mu);
    bool full = ww->inbox.len >= MAX_FILED;
    if (!full) {
        filed *f = ls_vec_push(&ww->inbox);
        f->id = ls_xstrdup(id);
        f->question = ls_xstrdup(question);
    }
    pthread_mutex_unlock(&ww->mu);
    if (full)
        ls_kcluster_whatif_answer(ww->kc, id, 429, "{\"error\":\"too many what-if questions waiting (256)\"}");
    else
        ls_kcluster_wake(ww->kc);
}

ls_whatif_worker *ls_whatif_worker_new(ls_kcluster *kc, ls_scheduler *evaluator)
{
    ls_whatif_worker *ww = ls_xcalloc(1, sizeof *ww);
    ww->wi = ls_whatif_new(evaluator);
    ww->kc = kc;
    pthread_mutex_init(&ww->mu, NULL);
    ls_vec_init(&ww->inbox, sizeof(filed));
    ls_kcluster_serve_whatif(kc, file_question, ww);
    return ww;
}

void ls_whatif_worker_serve(ls_whatif_worker *ww, ls_scheduler *live)
{
    if (!ww)
        return;
    pthread_mutex_lock(&ww->mu);
    ls_vec taken = ww->inbox;
    ls_vec_init(&ww->inbox, sizeof(filed));
    pthread_mutex_unlock(&ww->mu);
    if (taken.len)
        ls_scheduler_reload_if_changed(ls_whatif_evaluator(ww->wi), false);
    for (uint32_t i = 0; i < taken.len; i++) {
        filed *f = &LS_VEC_AT(&taken, filed, i);
        int status = 500;
        char *answer = ls_whatif_answer(ww->wi, live, f->question, strlen(f->question), &status);
        size_t len = strlen(answer);
        if (len > MAX_ANSWER) {
            free(answer);
            answer = ls_xmalloc(300);
            snprintf(answer, 300,
                     "{\"kind\":\"WhatIfAnswer\",\"error\":\"the answer is %zu bytes, over the %d a worker may "
                     "send: ask with \\\"explain\\\": false or about fewer pods\"}",
                     len, MAX_ANSWER);
            status = 400;
        }
        ls_kcluster_whatif_answer(ww->kc, f->id, status, answer);
        free(answer);
        free(f->id);
        free(f->question);
    }
    ls_vec_free(&taken);
}

void ls_whatif_worker_free(ls_whatif_worker *ww)
{
    if (!ww)
        return;
    ls_kcluster_serve_whatif(ww->kc, NULL, NULL);
    for (uint32_t i = 0; i < ww->inbox.len; i++) {
        free(LS_VEC_AT(&ww->inbox, filed, i).id);
        free(LS_VEC_AT(&ww->inbox, filed, i).question);
    }
    ls_vec_free(&ww->inbox);
    pthread_mutex_destroy(&ww->mu);
    ls_whatif_free(ww->wi);
    free(ww);
}
