/*
 * kcluster_link.c: the worker's end of the supervisor's channel (see
 * kcluster_link.h).
 */
#include "client/kcluster_link.h"

#include "luasched/base.h"
#include "luasched/log.h"
#include "server/metrics.h"
#include "worker/channel.h"
#include "worker/jsonbin.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The supervisor is trusted: its frames may be as large as an object is. */
enum { MAX_INCOMING = 1024 * 1024 * 1024 };

struct kc_link {
    int fd;
    kc_link_sink sink;
    pthread_t reader;
    pthread_mutex_t send_mu;
    pthread_mutex_t mu;           /* guards what follows */
    pthread_cond_t changed;
    bool synced, gone;
    volatile sig_atomic_t *stop_on_gone;
    ls_metrics *metrics;
    kc_link_whatif_fn whatif;     /* what-if questions (called on the reader thread); NULL: refused */
    void *whatif_ud;
    uint32_t next_request;
    uint32_t reply_id;            /* the last reply */
    bool reply_ok;
    char *reply_text;             /* malloc'd */
};

static bool send_fields(kc_link *l, uint8_t type, const char *const *f, uint32_t n);

static void on_object(kc_link *l, const ls_chan_msg *m)
{
    if (m->n != 3 || !m->blob)
        return;
    cJSON *json = ls_jsonbin_decode(m->blob, m->blob_len);
    if (json)
        l->sink.object(l->sink.ud, m->f[0][0], m->f[1], m->f[2], json);
    else
        ls_log_error("Skipping an object whose binary form is malformed", "kind", m->f[2]);
    cJSON_Delete(json);
}

static void answer_metrics(kc_link *l, const ls_chan_msg *m)
{
    pthread_mutex_lock(&l->mu);
    ls_metrics *metrics = l->metrics;
    pthread_mutex_unlock(&l->mu);
    char *text = metrics ? ls_metrics_render(metrics) : NULL;
    const char *f[] = {m->n ? m->f[0] : "0", text ? text : ""};
    ls_chan_send(l->fd, &l->send_mu, LS_CH_METRICS, f, 2);
    free(text);
}

static void on_whatif(kc_link *l, const ls_chan_msg *m)
{
    if (m->n != 2)
        return;
    pthread_mutex_lock(&l->mu);
    kc_link_whatif_fn fn = l->whatif;
    void *ud = l->whatif_ud;
    pthread_mutex_unlock(&l->mu);
    if (fn) {
        fn(ud, m->f[0], m->f[1]);
        return;
    }
    const char *f[] = {m->f[0], "503", "{\"error\":\"the scheduler is not answering what-if questions yet\"}"};
    ls_chan_send(l->fd, &l->send_mu, LS_CH_WHATIF, f, 3);
}

static void on_reply(kc_link *l, const ls_chan_msg *m)
{
    if (m->n != 3)
        return;
    pthread_mutex_lock(&l->mu);
    l->reply_id = (uint32_t)strtoul(m->f[0], NULL, 10);
    l->reply_ok = strcmp(m->f[1], "ok") == 0;
    free(l->reply_text);
    l->reply_text = ls_xstrdup(m->f[2]);
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->mu);
}

static void dispatch(kc_link *l, const ls_chan_msg *m)
{
    switch (m->type) {
    case LS_CH_OBJECT: on_object(l, m); break;
    case LS_CH_BIND_RESULT:
        if (m->n == 3)
            l->sink.bind_result(l->sink.ud, m->f[0], strcmp(m->f[1], "ok") == 0, m->f[2]);
        break;
    case LS_CH_PREEMPT_FAILED:
        if (m->n == 2)
            l->sink.preempt_failed(l->sink.ud, m->f[0], m->f[1]);
        break;
    case LS_CH_REPLY: on_reply(l, m); break;
    case LS_CH_METRICS_ASK: answer_metrics(l, m); break;
    case LS_CH_WHATIF_ASK: on_whatif(l, m); break;
    case LS_CH_SYNCED:
        pthread_mutex_lock(&l->mu);
        l->synced = true;
        pthread_cond_broadcast(&l->changed);
        pthread_mutex_unlock(&l->mu);
        break;
    default: break;
    }
}

static void *read_loop(void *arg)
{
    kc_link *l = arg;
    ls_chan_reader rd;
    ls_chan_reader_init(&rd, l->fd);
    for (;;) {
        ls_chan_msg m;
        int rc = ls_chan_read(&rd, &m, MAX_INCOMING);
        if (rc <= 0)
            break;
        dispatch(l, &m);
        ls_chan_msg_free(&m);
    }
    ls_chan_reader_free(&rd);
    pthread_mutex_lock(&l->mu);
    l->gone = true;
    if (l->stop_on_gone)
        *l->stop_on_gone = 1;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

kc_link *kc_link_new(int fd, const kc_link_sink *sink)
{
    kc_link *l = ls_xcalloc(1, sizeof *l);
    l->fd = fd;
    l->sink = *sink;
    pthread_mutex_init(&l->send_mu, NULL);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->changed, NULL);
    if (pthread_create(&l->reader, NULL, read_loop, l) != 0) {
        free(l);
        return NULL;
    }
    return l;
}

void kc_link_free(kc_link *l)
{
    if (!l)
        return;
    shutdown(l->fd, SHUT_RDWR);
    pthread_join(l->reader, NULL);
    close(l->fd);
    free(l->reply_text);
    pthread_cond_destroy(&l->changed);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->send_mu);
    free(l);
}

void kc_link_set_metrics(kc_link *l, ls_metrics *m)
{
    pthread_mutex_lock(&l->mu);
    l->metrics = m;
    pthread_mutex_unlock(&l->mu);
}

void kc_link_set_whatif(kc_link *l, kc_link_whatif_fn fn, void *ud)
{
    pthread_mutex_lock(&l->mu);
    l->whatif = fn;
    l->whatif_ud = ud;
    pthread_mutex_unlock(&l->mu);
}

bool kc_link_whatif_answer(kc_link *l, const char *id, int status, const char *answer)
{
    char code[16];
    snprintf(code, sizeof code, "%d", status);
    const char *f[] = {id, code, answer};
    return send_fields(l, LS_CH_WHATIF, f, 3);
}

void kc_link_on_gone(kc_link *l, volatile sig_atomic_t *stop)
{
    pthread_mutex_lock(&l->mu);
    l->stop_on_gone = stop;
    if (l->gone)
        *stop = 1;
    pthread_mutex_unlock(&l->mu);
}

bool kc_link_wait_synced(kc_link *l, volatile sig_atomic_t *stop)
{
    pthread_mutex_lock(&l->mu);
    while (!l->synced && !l->gone && !(stop && *stop)) {
        struct timespec ts = ls_realtime_after_ms(100);
        pthread_cond_timedwait(&l->changed, &l->mu, &ts);
    }
    bool ok = l->synced;
    pthread_mutex_unlock(&l->mu);
    return ok;
}

static bool send_fields(kc_link *l, uint8_t type, const char *const *f, uint32_t n)
{
    return ls_chan_send(l->fd, &l->send_mu, type, f, n);
}

bool kc_link_hello(kc_link *l, const char *configz, const char *wants, const char *const *custom, uint32_t n)
{
    const char *f[LS_CHAN_MAX_FIELDS] = {configz, wants};
    uint32_t k = 2;
    for (uint32_t i = 0; i < n && k < LS_CHAN_MAX_FIELDS; i++)
        f[k++] = custom[i];
    return send_fields(l, LS_CH_HELLO, f, k);
}

bool kc_link_configz(kc_link *l, const char *configz)
{
    const char *f[] = {configz};
    return send_fields(l, LS_CH_CONFIGZ, f, 1);
}

bool kc_link_bind(kc_link *l, const char *ns, const char *name, const char *uid, const char *node,
                  const char *scheduler_name)
{
    const char *f[] = {ns, name, uid, node, scheduler_name};
    return send_fields(l, LS_CH_BIND, f, 5);
}

bool kc_link_event(kc_link *l, const ls_event_spec *ev)
{
    const char *f[] = {ev->ns, ev->name, ev->uid, ev->type, ev->reason, ev->action, ev->note,
                       ev->reporting_controller, ev->resource_version, ev->related_ns, ev->related_name,
                       ev->related_uid};
    return send_fields(l, LS_CH_EVENT, f, 12);
}

bool kc_link_pod_status(kc_link *l, const char *ns, const char *name, const ls_pod_status_patch *p)
{
    static const char *const modes[] = {"keep", "set", "clear"};
    const char *f[] = {ns, name, p->condition_reason, p->condition_message, modes[p->nominate], p->node};
    return send_fields(l, LS_CH_POD_STATUS, f, 6);
}

bool kc_link_preempt(kc_link *l, const char *ns, const char *name, const char *uid, const char *message,
                     const char *preemptor_uid)
{
    const char *f[] = {ns, name, uid, message, preemptor_uid};
    return send_fields(l, LS_CH_PREEMPT, f, 5);
}

bool kc_link_patch_object(kc_link *l, const char *kind, const char *ns, const char *name, const char *patch)
{
    const char *f[] = {kind, ns, name, patch};
    return send_fields(l, LS_CH_OBJECT_PATCH, f, 4);
}

/* A synchronous write waits this long for the supervisor's answer. */
enum { REPLY_TIMEOUT_MS = 30000 };

/* A request the supervisor answers: sends fields (the id first, filled in
 * here), waits for the reply; its text (malloc'd) in *text. */
static bool ask(kc_link *l, uint8_t type, const char **f, uint32_t n, char **text)
{
    pthread_mutex_lock(&l->mu);
    uint32_t id = ++l->next_request;
    pthread_mutex_unlock(&l->mu);
    char id_text[16];
    snprintf(id_text, sizeof id_text, "%u", id);
    f[0] = id_text;
    if (!send_fields(l, type, f, n)) {
        *text = ls_xstrdup("the supervisor is gone");
        return false;
    }
    struct timespec until = ls_realtime_after_ms(REPLY_TIMEOUT_MS);
    pthread_mutex_lock(&l->mu);
    int rc = 0;
    while (l->reply_id != id && !l->gone && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&l->changed, &l->mu, &until);
    bool answered = l->reply_id == id;
    bool ok = answered && l->reply_ok;
    *text = ls_xstrdup(answered && l->reply_text ? l->reply_text : "the supervisor did not answer");
    pthread_mutex_unlock(&l->mu);
    return ok;
}

bool kc_link_patch_status(kc_link *l, const char *kind, const char *ns, const char *name, const char *patch,
                          ls_error *err)
{
    const char *f[] = {NULL, kind, ns, name, patch};
    char *text;
    bool ok = ask(l, LS_CH_STATUS_PATCH, f, 5, &text);
    if (!ok)
        ls_errorf(err, "%s", text);
    free(text);
    return ok;
}

bool kc_link_create_claim(kc_link *l, const char *ns, const char *claim, char **created, ls_error *err)
{
    const char *f[] = {NULL, ns, claim};
    char *text;
    *created = NULL;
    if (!ask(l, LS_CH_CREATE_CLAIM, f, 3, &text)) {
        ls_errorf(err, "%s", text);
        free(text);
        return false;
    }
    *created = text;
    return true;
}

cJSON *kc_link_extender(kc_link *l, const char *url, const char *verb, const char *body, char **msg)
{
    const char *f[] = {NULL, url, verb, body};
    char *text;
    if (!ask(l, LS_CH_EXTENDER, f, 4, &text)) {
        *msg = text;
        return NULL;
    }
    cJSON *result = cJSON_Parse(text);
    if (!result)
        *msg = ls_xstrdup("the supervisor's answer of the extender is not JSON");
    free(text);
    return result;
}
