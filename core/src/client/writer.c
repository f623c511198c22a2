/*
 * writer.c: asynchronous API writes on a small worker pool. See writer.h.
 *
 * Bodies are built when a job is submitted (on the caller's thread), so that
 * time stamps say when the scheduler decided, not when a worker got to it.
 *
 * Two lanes: events and pod status patches go before bindings and
 * preemptions, and two more workers serve events and status patches alone,
 * so that the record keeps up with the bindings (a Scheduled event is
 * submitted when its binding completes: in one FIFO it would wait behind
 * every queued binding). Events go through their own client when one is
 * given (kube-scheduler's separate event client, with its own rate limit).
 */
#include "client/writer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "client/kutil.h"
#include "luasched/base.h"

#define LS_NOTE_LIMIT 1024   /* events.k8s.io note limit (NoteLengthLimit) */
#define LS_SERIES_WINDOW_MS (6 * 60 * 1000)      /* client-go finishTime */
#define LS_SERIES_HEARTBEAT_MS (30 * 60 * 1000)  /* client-go refreshTime */
#define LS_SERIES_SWEEP_EVERY 256

/* One request of a job: method and content type are static strings, path
 * and body belong to the job. */
typedef struct request {
    const char *method, *content_type;
    char *path, *body;
} request;

typedef struct job {
    ls_write_kind kind;
    char *ns, *name;
    request req;        /* the request (PREEMPT: the status patch); no method: nothing to send */
    request then;       /* PREEMPT: the DELETE that follows */
    request fallback;   /* EVENT series: POST when the PATCH finds no Event */
    ls_write_done_fn done;
    void *ud;
    struct job *next;
} job;

typedef struct lane {
    job *head, *tail;
} lane;

enum { LANE_RECORD, LANE_WRITE, LANES };   /* events and status first, then bindings and preemptions */
#define LS_RECORD_WORKERS 2

typedef struct worker_arg {
    struct ls_writer *w;
    bool record_only;
} worker_arg;

struct ls_writer {
    ls_kclient *client, *events_client;
    char *controller, *instance;
    int n_workers;
    pthread_t *workers;
    worker_arg args[2];
    pthread_mutex_t lock;
    pthread_cond_t wake;      /* a job arrived or the drain began */
    pthread_cond_t idle;      /* a job finished */
    lane lanes[LANES];
    int in_flight;
    bool draining;            /* no new work from the scheduler; queued jobs still run */
    bool closed, drained;     /* closed: past the drain's deadline, every submit refused */
    atomic_int cancel;        /* set when the drain deadline passes */
    ls_writer_stats stats;

    bool series_on;
    pthread_mutex_t series_lock;
    ls_kmap series;           /* event key -> series_entry */
    unsigned long series_calls;
};

/* One event as created, and how often it has happened since. */
typedef struct series_entry {
    cJSON *event;             /* the created Event (to create it again if it vanished) */
    int count;
    int64_t last_ms, written_ms;
} series_entry;

static void series_entry_free(void *p)
{
    series_entry *e = p;
    if (e)
        cJSON_Delete(e->event);
    free(e);
}

static char *xdup(const char *s)
{
    return s ? ls_xstrdup(s) : NULL;
}

/* The request; path and body are the job's from here on. */
static void request_set(request *r, const char *method, char *path, const char *content_type, char *body)
{
    *r = (request){.method = method, .content_type = content_type, .path = path, .body = body};
}

static void request_free(request *r)
{
    free(r->path);
    free(r->body);
}

static void job_free(job *j)
{
    free(j->ns);
    free(j->name);
    request_free(&j->req);
    request_free(&j->then);
    request_free(&j->fallback);
    free(j);
}

static void finish(ls_writer *w, job *j, ls_write_outcome outcome, long status, int attempts, const char *msg)
{
    ls_write_result r = {.kind = j->kind, .outcome = outcome, .status = status, .attempts = attempts,
                         .message = msg ? msg : "", .ns = j->ns ? j->ns : "", .name = j->name ? j->name : ""};
    if (j->done)
        j->done(j->ud, &r);
    pthread_mutex_lock(&w->lock);
    w->stats.done++;
    if (outcome != LS_WRITE_OK)
        w->stats.failed++;
    pthread_mutex_unlock(&w->lock);
}

/* One request of a job; fills outcome, status, attempts, message. */
static void send_one(ls_writer *w, ls_kclient *client, const request *rq, ls_write_outcome *outcome, long *status,
                     int *attempts, char *msg, size_t cap)
{
    ls_krequest req = {.method = rq->method, .path = rq->path, .content_type = rq->content_type, .body = rq->body,
                       .len = rq->body ? strlen(rq->body) : 0, .cancel = &w->cancel};
    ls_kresponse r;
    ls_error e = {{0}};
    bool got = ls_kclient_do(client, &req, &r, &e);
    *status = r.status;
    *attempts = r.attempts;
    msg[0] = '\0';
    if (!got) {
        *outcome = r.cancelled ? LS_WRITE_CANCELLED : LS_WRITE_FAILED;
        snprintf(msg, cap, "%s", e.msg);
    } else if (r.status >= 200 && r.status < 300) {
        *outcome = LS_WRITE_OK;
    } else {
        *outcome = r.status == 409 ? LS_WRITE_CONFLICT : r.status == 404 ? LS_WRITE_NOT_FOUND : LS_WRITE_FAILED;
        ls_kutil_status_message(r.status, r.body, r.len, msg, cap);
    }
    ls_kresponse_free(&r);
}

static void run_job(ls_writer *w, job *j)
{
    ls_write_outcome oc;
    long status;
    int attempts;
    char msg[1200];
    if (!j->req.method) {
        finish(w, j, LS_WRITE_OK, 0, 0, "counted in the event series");
        return;
    }
    ls_kclient *client = j->kind == LS_WRITE_EVENT ? w->events_client : w->client;
    send_one(w, client, &j->req, &oc, &status, &attempts, msg, sizeof msg);
    if (j->fallback.method && oc == LS_WRITE_NOT_FOUND)
        send_one(w, client, &j->fallback, &oc, &status, &attempts, msg, sizeof msg);
    if (j->kind == LS_WRITE_BIND && oc == LS_WRITE_CONFLICT && attempts > 1) {
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof msg - n, " (after a retried request: our first attempt may have bound it)");
    }
    if (j->kind == LS_WRITE_PREEMPT) {
        if (oc == LS_WRITE_NOT_FOUND) {
            finish(w, j, LS_WRITE_OK, status, attempts, "already gone");
            return;
        }
        if (oc == LS_WRITE_OK)
            send_one(w, w->client, &j->then, &oc, &status, &attempts, msg, sizeof msg);
        if (oc == LS_WRITE_NOT_FOUND) {
            finish(w, j, LS_WRITE_OK, status, attempts, "already gone");
            return;
        }
    }
    finish(w, j, oc, status, attempts, msg);
}

static int lane_of(ls_write_kind kind)
{
    return kind == LS_WRITE_EVENT || kind == LS_WRITE_POD_STATUS ? LANE_RECORD : LANE_WRITE;
}

/* Under the lock: the next job a worker may take (record-only workers take
 * only events and status patches), or NULL. */
static job *take(ls_writer *w, bool record_only)
{
    for (int l = 0; l < (record_only ? 1 : LANES); l++) {
        lane *q = &w->lanes[l];
        job *j = q->head;
        if (!j)
            continue;
        q->head = j->next;
        if (!q->head)
            q->tail = NULL;
        w->stats.queued--;
        return j;
    }
    return NULL;
}

static void *worker(void *arg)
{
    worker_arg *wa = arg;
    ls_writer *w = wa->w;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        job *j;
        while (!(j = take(w, wa->record_only)) && !w->draining)
            pthread_cond_wait(&w->wake, &w->lock);
        if (!j) {
            /* Draining: a job that is still running may queue another (a
             * binding's Scheduled event), so stop only when nothing runs. */
            if (w->in_flight == 0 || w->closed)
                break;
            pthread_cond_wait(&w->wake, &w->lock);
            continue;
        }
        w->in_flight++;
        pthread_mutex_unlock(&w->lock);
        run_job(w, j);
        job_free(j);
        pthread_mutex_lock(&w->lock);
        w->in_flight--;
        pthread_cond_broadcast(&w->idle);
        pthread_cond_broadcast(&w->wake);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

ls_writer *ls_writer_new(ls_kclient *c, const ls_writer_options *opt, ls_error *err)
{
    if (!c) {
        ls_errorf(err, "writer: no API client");
        return NULL;
    }
    ls_writer *w = ls_xcalloc(1, sizeof *w);
    w->client = c;
    w->events_client = opt && opt->events_client ? opt->events_client : c;
    w->controller = ls_xstrdup(opt && opt->reporting_controller ? opt->reporting_controller : "default-scheduler");
    if (opt && opt->reporting_instance) {
        w->instance = ls_xstrdup(opt->reporting_instance);
    } else {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        ls_buf b = {0};
        ls_buf_addf(&b, "%s-%s", w->controller, host);
        w->instance = b.data;
    }
    w->n_workers = (opt && opt->workers > 0 ? opt->workers : 4) + LS_RECORD_WORKERS;
    w->args[0] = (worker_arg){.w = w, .record_only = false};
    w->args[1] = (worker_arg){.w = w, .record_only = true};
    w->series_on = !(opt && opt->no_event_series);
    pthread_mutex_init(&w->series_lock, NULL);
    ls_kmap_init(&w->series);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->idle, NULL);
    w->workers = ls_xcalloc((size_t)w->n_workers, sizeof *w->workers);
    for (int i = 0; i < w->n_workers; i++) {
        worker_arg *wa = &w->args[i < LS_RECORD_WORKERS ? 1 : 0];
        if (pthread_create(&w->workers[i], NULL, worker, wa) != 0) {
            w->n_workers = i;
            ls_writer_free(w);
            ls_errorf(err, "writer: cannot start worker threads");
            return NULL;
        }
    }
    return w;
}

static bool submit(ls_writer *w, job *j)
{
    pthread_mutex_lock(&w->lock);
    if (w->closed) {
        pthread_mutex_unlock(&w->lock);
        job_free(j);
        return false;
    }
    lane *q = &w->lanes[lane_of(j->kind)];
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    w->stats.queued++;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return true;
}

/* Under the lock: every queued job, in one list (the lanes emptied). */
static job *take_all_queued(ls_writer *w)
{
    job *all = NULL, **tail = &all;
    for (int l = 0; l < LANES; l++) {
        *tail = w->lanes[l].head;
        while (*tail)
            tail = &(*tail)->next;
        w->lanes[l].head = w->lanes[l].tail = NULL;
    }
    w->stats.queued = 0;
    return all;
}

static bool anything_queued(const ls_writer *w)
{
    for (int l = 0; l < LANES; l++)
        if (w->lanes[l].head)
            return true;
    return false;
}

bool ls_writer_drain(ls_writer *w, long timeout_ms)
{
    pthread_mutex_lock(&w->lock);
    if (w->drained) {
        pthread_mutex_unlock(&w->lock);
        return true;
    }
    w->draining = true;
    pthread_cond_broadcast(&w->wake);
    struct timespec until = ls_realtime_after_ms(timeout_ms);
    bool timed_out = false;
    while ((anything_queued(w) || w->in_flight > 0) && !timed_out)
        timed_out = pthread_cond_timedwait(&w->idle, &w->lock, &until) != 0;
    w->closed = true;
    job *queued = take_all_queued(w);
    bool clean = !queued && w->in_flight == 0;
    if (w->in_flight > 0)
        atomic_store(&w->cancel, 1);   /* requests notice within ~100 ms */
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    unsigned long cut = 0;
    while (queued) {
        job *next = queued->next;
        finish(w, queued, LS_WRITE_CANCELLED, 0, 0, "the writer stopped before the request was sent");
        job_free(queued);
        queued = next;
        cut++;
    }
    for (int i = 0; i < w->n_workers; i++)
        pthread_join(w->workers[i], NULL);
    pthread_mutex_lock(&w->lock);
    w->stats.cut_at_stop += cut;
    w->drained = true;
    pthread_mutex_unlock(&w->lock);
    return clean;
}

void ls_writer_free(ls_writer *w)
{
    if (!w)
        return;
    ls_writer_drain(w, 5000);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->series_lock);
    ls_kmap_free(&w->series, series_entry_free);
    free(w->workers);
    free(w->controller);
    free(w->instance);
    free(w);
}

void ls_writer_get_stats(ls_writer *w, ls_writer_stats *out)
{
    pthread_mutex_lock(&w->lock);
    *out = w->stats;
    pthread_mutex_unlock(&w->lock);
}

/* ---- jobs ---- */

static char *print_and_delete(cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s) {
        fprintf(stderr, "luasched: out of memory printing JSON\n");
        abort();
    }
    return s;
}

static job *new_job(ls_write_kind kind, const char *ns, const char *name, ls_write_done_fn done, void *ud)
{
    job *j = ls_xcalloc(1, sizeof *j);
    j->kind = kind;
    j->ns = xdup(ns);
    j->name = xdup(name);
    j->done = done;
    j->ud = ud;
    return j;
}

static char *pod_path(const char *ns, const char *name, const char *sub)
{
    ls_buf b = {0};
    ls_buf_addf(&b, "/api/v1/namespaces/%s/pods/%s%s", ns, name, sub);
    return b.data;
}

bool ls_writer_bind(ls_writer *w, const char *ns, const char *name, const char *uid, const char *node,
                    ls_write_done_fn done, void *ud)
{
    if (!ns || !name || !node)
        return false;
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "apiVersion", "v1");
    cJSON_AddStringToObject(b, "kind", "Binding");
    cJSON *meta = cJSON_AddObjectToObject(b, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    if (uid && *uid)
        cJSON_AddStringToObject(meta, "uid", uid);
    cJSON *target = cJSON_AddObjectToObject(b, "target");
    cJSON_AddStringToObject(target, "kind", "Node");
    cJSON_AddStringToObject(target, "name", node);
    job *j = new_job(LS_WRITE_BIND, ns, name, done, ud);
    request_set(&j->req, "POST", pod_path(ns, name, "/binding"), "application/json", print_and_delete(b));
    return submit(w, j);
}

void ls_writer_scheduled_note(const char *ns, const char *name, const char *node, char *out, size_t cap)
{
    snprintf(out, cap, "Successfully assigned %s/%s to %s", ns, name, node);
}

void ls_writer_preempted_note(const char *preemptor_uid, const char *node, char *out, size_t cap)
{
    snprintf(out, cap, "Preempted by pod %s on node %s", preemptor_uid, node);
}

/* The note cut to the API's limit the way upstream cuts it (" ..."),
 * without splitting a UTF-8 sequence. */
static void add_note(cJSON *ev, const char *note)
{
    size_t n = strlen(note);
    if (n <= LS_NOTE_LIMIT) {
        cJSON_AddStringToObject(ev, "note", note);
        return;
    }
    size_t keep = LS_NOTE_LIMIT - 4;
    while (keep > 0 && ((unsigned char)note[keep] & 0xc0) == 0x80)
        keep--;
    char *cut = ls_xmalloc(keep + 5);
    memcpy(cut, note, keep);
    memcpy(cut + keep, " ...", 5);
    cJSON_AddStringToObject(ev, "note", cut);
    free(cut);
}

/* Drops series not seen for the window (client-go's finishSeries, lazily). */
static void sweep_series(ls_writer *w, int64_t now)
{
    ls_vec stale;
    ls_vec_init(&stale, sizeof(char *));
    for (uint32_t i = 0; i < w->series.cap; i++)
        for (ls_kmap_entry *e = w->series.buckets[i]; e; e = e->next)
            if (now - ((series_entry *)e->value)->last_ms > LS_SERIES_WINDOW_MS)
                *(char **)ls_vec_push(&stale) = ls_xstrdup(e->key);
    for (uint32_t i = 0; i < stale.len; i++) {
        series_entry_free(ls_kmap_remove(&w->series, LS_VEC_AT(&stale, char *, i)));
        free(LS_VEC_AT(&stale, char *, i));
    }
    ls_vec_free(&stale);
}

static char *series_patch(int count, const char *now)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *series = cJSON_AddObjectToObject(patch, "series");
    cJSON_AddNumberToObject(series, "count", count);
    cJSON_AddStringToObject(series, "lastObservedTime", now);
    return print_and_delete(patch);
}

/* Decides what the event ev (taken) becomes: a new Event (POST), a series
 * update (PATCH, with a POST of the whole Event should it be gone), or
 * nothing but a count (j->req.method stays NULL). */
static void plan_series(ls_writer *w, const char *key, cJSON *ev, const char *events_path, job *j)
{
    int64_t now = ls_kutil_now_ms();
    char now_text[32];
    ls_kutil_micro_time(now_text);
    pthread_mutex_lock(&w->series_lock);
    if (++w->series_calls % LS_SERIES_SWEEP_EVERY == 0)
        sweep_series(w, now);
    series_entry *se = ls_kmap_get(&w->series, key);
    if (se && now - se->last_ms > LS_SERIES_WINDOW_MS) {
        series_entry_free(ls_kmap_remove(&w->series, key));
        se = NULL;
    }
    if (!se) {
        se = ls_xcalloc(1, sizeof *se);
        se->event = cJSON_Duplicate(ev, true);
        se->count = 1;
        se->last_ms = se->written_ms = now;
        ls_kmap_put(&w->series, key, se);
        request_set(&j->req, "POST", ls_xstrdup(events_path), "application/json", print_and_delete(ev));
        pthread_mutex_unlock(&w->series_lock);
        return;
    }
    cJSON_Delete(ev);
    se->count++;
    se->last_ms = now;
    if (se->count == 2 || now - se->written_ms >= LS_SERIES_HEARTBEAT_MS) {
        se->written_ms = now;
        const char *name = ls_kutil_meta_str(se->event, "name");
        ls_buf p = {0};
        ls_buf_addf(&p, "%s/%s", events_path, name ? name : "");
        request_set(&j->req, "PATCH", p.data, "application/strategic-merge-patch+json",
                    series_patch(se->count, now_text));
        cJSON *again = cJSON_Duplicate(se->event, true);
        cJSON *series = cJSON_AddObjectToObject(again, "series");
        cJSON_AddNumberToObject(series, "count", se->count);
        cJSON_AddStringToObject(series, "lastObservedTime", now_text);
        request_set(&j->fallback, "POST", ls_xstrdup(events_path), "application/json", print_and_delete(again));
    }
    pthread_mutex_unlock(&w->series_lock);
}

bool ls_writer_record_event(ls_writer *w, const ls_event_spec *e, ls_write_done_fn done, void *ud)
{
    if (!e || !e->ns || !e->name || !e->reason)
        return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char ev_name[400], now[32];
    snprintf(ev_name, sizeof ev_name, "%.300s.%llx", e->name,
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    ls_kutil_micro_time(now);
    const char *controller = e->reporting_controller ? e->reporting_controller : w->controller;
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "apiVersion", "events.k8s.io/v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON *meta = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(meta, "name", ev_name);
    cJSON_AddStringToObject(meta, "namespace", e->ns);
    cJSON_AddStringToObject(ev, "eventTime", now);
    cJSON_AddStringToObject(ev, "reportingController", controller);
    cJSON_AddStringToObject(ev, "reportingInstance", w->instance);
    cJSON_AddStringToObject(ev, "action", e->action ? e->action : "Scheduling");
    cJSON_AddStringToObject(ev, "reason", e->reason);
    cJSON_AddStringToObject(ev, "type", e->type ? e->type : "Normal");
    cJSON *reg = cJSON_AddObjectToObject(ev, "regarding");
    cJSON_AddStringToObject(reg, "apiVersion", "v1");
    cJSON_AddStringToObject(reg, "kind", "Pod");
    cJSON_AddStringToObject(reg, "namespace", e->ns);
    cJSON_AddStringToObject(reg, "name", e->name);
    if (e->uid && *e->uid)
        cJSON_AddStringToObject(reg, "uid", e->uid);
    if (e->resource_version && *e->resource_version)
        cJSON_AddStringToObject(reg, "resourceVersion", e->resource_version);
    if (e->related_name && *e->related_name) {
        cJSON *rel = cJSON_AddObjectToObject(ev, "related");
        cJSON_AddStringToObject(rel, "apiVersion", "v1");
        cJSON_AddStringToObject(rel, "kind", "Pod");
        cJSON_AddStringToObject(rel, "namespace", e->related_ns ? e->related_ns : e->ns);
        cJSON_AddStringToObject(rel, "name", e->related_name);
        if (e->related_uid && *e->related_uid)
            cJSON_AddStringToObject(rel, "uid", e->related_uid);
    }
    add_note(ev, e->note ? e->note : "");
    job *j = new_job(LS_WRITE_EVENT, e->ns, e->name, done, ud);
    ls_buf p = {0};
    ls_buf_addf(&p, "/apis/events.k8s.io/v1/namespaces/%s/events", e->ns);
    if (!w->series_on) {
        request_set(&j->req, "POST", p.data, "application/json", print_and_delete(ev));
        return submit(w, j);
    }
    ls_buf key = {0};
    ls_buf_addf(&key, "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s", e->type ? e->type : "Normal", e->action ? e->action : "",
                 e->reason, controller, w->instance, e->ns, e->name, e->uid ? e->uid : "",
                 e->resource_version ? e->resource_version : "", e->related_name ? e->related_name : "",
                 e->related_uid ? e->related_uid : "");
    plan_series(w, key.data, ev, p.data, j);
    ls_buf_free(&key);
    ls_buf_free(&p);
    return submit(w, j);
}

static void add_condition(cJSON *status, const char *type, const char *value, const char *reason,
                          const char *message)
{
    char now[32];
    ls_kutil_time(now);
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);   /* conditions merge by type */
    cJSON_AddStringToObject(c, "status", value);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message ? message : "");
    cJSON_AddStringToObject(c, "lastTransitionTime", now);
    cJSON_AddItemToArray(conds, c);
}

bool ls_writer_patch_pod_status(ls_writer *w, const char *ns, const char *name, const ls_pod_status_patch *p,
                                ls_write_done_fn done, void *ud)
{
    if (!ns || !name || !p || (!p->condition_reason && p->nominate == LS_NOMINATE_KEEP))
        return false;
    if (p->nominate == LS_NOMINATE_SET && (!p->node || !*p->node))
        return false;
    cJSON *patch = cJSON_CreateObject();
    cJSON *status = cJSON_AddObjectToObject(patch, "status");
    if (p->condition_reason)
        add_condition(status, "PodScheduled", "False", p->condition_reason, p->condition_message);
    if (p->nominate == LS_NOMINATE_SET)
        cJSON_AddStringToObject(status, "nominatedNodeName", p->node);
    else if (p->nominate == LS_NOMINATE_CLEAR)
        cJSON_AddNullToObject(status, "nominatedNodeName");   /* null deletes the field in a merge patch */
    job *j = new_job(LS_WRITE_POD_STATUS, ns, name, done, ud);
    request_set(&j->req, "PATCH", pod_path(ns, name, "/status"), "application/strategic-merge-patch+json",
                print_and_delete(patch));
    return submit(w, j);
}

bool ls_writer_patch_object(ls_writer *w, const char *path, const char *ns, const char *name,
                            const char *merge_patch, ls_write_done_fn done, void *ud)
{
    if (!path || !name || !merge_patch)
        return false;
    job *j = new_job(LS_WRITE_OBJECT_PATCH, ns, name, done, ud);
    request_set(&j->req, "PATCH", ls_xstrdup(path), "application/merge-patch+json", ls_xstrdup(merge_patch));
    return submit(w, j);
}

bool ls_writer_set_pod_condition(ls_writer *w, const char *ns, const char *name, const char *reason,
                                 const char *message, ls_write_done_fn done, void *ud)
{
    ls_pod_status_patch p = {.condition_reason = reason, .condition_message = message};
    return reason && ls_writer_patch_pod_status(w, ns, name, &p, done, ud);
}

bool ls_writer_set_nominated_node(ls_writer *w, const char *ns, const char *name, const char *node_or_null,
                                  ls_write_done_fn done, void *ud)
{
    ls_pod_status_patch p = {.nominate = node_or_null && *node_or_null ? LS_NOMINATE_SET : LS_NOMINATE_CLEAR,
                             .node = node_or_null};
    return ls_writer_patch_pod_status(w, ns, name, &p, done, ud);
}

bool ls_writer_preempt_victim(ls_writer *w, const char *ns, const char *name, const char *uid,
                              const char *message, ls_write_done_fn done, void *ud)
{
    if (!ns || !name)
        return false;
    char def[512];
    snprintf(def, sizeof def, "%s: preempting to accommodate a higher priority pod", w->controller);
    cJSON *patch = cJSON_CreateObject();
    cJSON *status = cJSON_AddObjectToObject(patch, "status");
    add_condition(status, "DisruptionTarget", "True", "PreemptionByScheduler", message ? message : def);
    cJSON *del = cJSON_CreateObject();
    cJSON_AddStringToObject(del, "apiVersion", "v1");
    cJSON_AddStringToObject(del, "kind", "DeleteOptions");
    if (uid && *uid)   /* never delete a new pod that reused the victim's name */
        cJSON_AddStringToObject(cJSON_AddObjectToObject(del, "preconditions"), "uid", uid);
    job *j = new_job(LS_WRITE_PREEMPT, ns, name, done, ud);
    request_set(&j->req, "PATCH", pod_path(ns, name, "/status"), "application/strategic-merge-patch+json",
                print_and_delete(patch));
    request_set(&j->then, "DELETE", pod_path(ns, name, ""), "application/json", print_and_delete(del));
    return submit(w, j);
}
