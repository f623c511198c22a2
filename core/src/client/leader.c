/*
 * leader.c: Lease-based leader election. See leader.h.
 */
#include "client/leader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "client/kutil.h"

struct ls_leader {
    ls_kclient *client;
    ls_leader_callbacks cb;
    ls_arena strings;          /* owns ns, name, identity and the two paths */
    const char *ns, *name, *identity;
    const char *lease_path, *leases_path;
    long lease_ms, renew_ms, retry_ms;
    int lease_seconds;
    bool release_on_stop;

    ls_kthread worker;
    atomic_int stop;
    atomic_int leader;
    atomic_int lost;

    pthread_mutex_t lock;      /* observed record, for readers on other threads */
    char *observed_spec;       /* the spec as last seen, printed */
    char observed_holder[256];
    int64_t observed_ms;       /* our clock when the record last changed */
    bool known;
};

ls_leader *ls_leader_new(ls_kclient *c, const ls_leader_options *opt, const ls_leader_callbacks *cb,
                         ls_error *err)
{
    ls_leader_options o = opt ? *opt : (ls_leader_options){0};
    long lease = o.lease_duration_ms > 0 ? o.lease_duration_ms : 15000;
    long renew = o.renew_deadline_ms > 0 ? o.renew_deadline_ms : 10000;
    long retry = o.retry_period_ms > 0 ? o.retry_period_ms : 2000;
    if (!c || renew >= lease || retry >= renew) {
        ls_errorf(err, "leader election: need leaseDuration (%ld ms) > renewDeadline (%ld ms) > retryPeriod (%ld ms)",
                  lease, renew, retry);
        return NULL;
    }
    ls_leader *l = ls_xcalloc(1, sizeof *l);
    l->client = c;
    if (cb)
        l->cb = *cb;
    ls_arena_init(&l->strings);
    l->ns = ls_arena_strdup(&l->strings, o.ns && *o.ns ? o.ns : "kube-system");
    l->name = ls_arena_strdup(&l->strings, o.name && *o.name ? o.name : "kube-scheduler");
    if (o.identity && *o.identity) {
        l->identity = ls_arena_strdup(&l->strings, o.identity);
    } else {
        char host[200] = "", uuid[37];
        gethostname(host, sizeof host - 1);
        ls_kutil_uuid(uuid);
        l->identity = ls_arena_printf(&l->strings, "%s_%s", host, uuid);
    }
    l->leases_path = ls_arena_printf(&l->strings, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
    l->lease_path = ls_arena_printf(&l->strings, "%s/%s", l->leases_path, l->name);
    l->lease_ms = lease;
    l->renew_ms = renew;
    l->retry_ms = retry;
    l->lease_seconds = (int)((lease + 999) / 1000);
    l->release_on_stop = o.release_on_stop;
    pthread_mutex_init(&l->lock, NULL);
    return l;
}

/* Records the spec as seen now; reports a change of holder. */
static void observe(ls_leader *l, const cJSON *spec)
{
    char *printed = cJSON_PrintUnformatted(spec);
    const char *holder = ls_kutil_json_str(spec, "holderIdentity");
    bool new_holder = false;
    pthread_mutex_lock(&l->lock);
    if (!l->observed_spec || !printed || strcmp(printed, l->observed_spec) != 0) {
        free(l->observed_spec);
        l->observed_spec = printed;
        printed = NULL;
        l->observed_ms = ls_kutil_now_ms();
        if (holder && *holder && strcmp(holder, l->observed_holder) != 0)
            new_holder = true;
        snprintf(l->observed_holder, sizeof l->observed_holder, "%s", holder ? holder : "");
        l->known = l->known || (holder && *holder);
    }
    pthread_mutex_unlock(&l->lock);
    free(printed);
    if (new_holder && l->cb.on_new_leader)
        l->cb.on_new_leader(l->cb.ud, holder);
}

static void fill_spec(ls_leader *l, cJSON *spec, const cJSON *old, bool keep_acquire, const char *holder)
{
    char now[32];
    ls_kutil_micro_time(now);
    const char *acq = keep_acquire ? ls_kutil_json_str(old, "acquireTime") : NULL;
    const cJSON *tr = old ? cJSON_GetObjectItemCaseSensitive(old, "leaseTransitions") : NULL;
    int transitions = cJSON_IsNumber(tr) ? tr->valueint : 0;
    if (old && !keep_acquire)
        transitions++;
    static const char *const keys[] = {"holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
                                       "leaseTransitions"};
    char acq_copy[64];
    snprintf(acq_copy, sizeof acq_copy, "%s", acq ? acq : now);
    for (size_t i = 0; i < 5; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(spec, keys[i]);
    cJSON_AddStringToObject(spec, "holderIdentity", holder);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", holder[0] ? l->lease_seconds : 1);
    cJSON_AddStringToObject(spec, "acquireTime", acq_copy);
    cJSON_AddStringToObject(spec, "renewTime", now);
    cJSON_AddNumberToObject(spec, "leaseTransitions", transitions);
}

static bool lease_request(ls_leader *l, const char *method, const char *path, cJSON *body, long timeout_ms,
                 bool cancellable, long *status, cJSON **answer)
{
    char *text = cJSON_PrintUnformatted(body);
    ls_krequest req = {.method = method, .path = path, .content_type = body ? "application/json" : NULL,
                       .body = text, .len = text ? strlen(text) : 0, .cancel = cancellable ? &l->stop : NULL,
                       .timeout_ms = timeout_ms, .max_attempts = 1};
    ls_kresponse r;
    ls_error e = {{0}};
    bool got = ls_kclient_do(l->client, &req, &r, &e);
    free(text);
    *status = got ? r.status : 0;
    if (answer)
        *answer = got && r.status >= 200 && r.status < 300 ? cJSON_ParseWithLength(r.body, r.len) : NULL;
    ls_kresponse_free(&r);
    return got;
}

/* Sends the lease (POST to create, PUT to update) and, when the server answers
 * with the status expected, observes the spec it kept. Consumes lease. */
static bool write_lease(ls_leader *l, const char *method, const char *path, cJSON *lease, long timeout_ms,
                        long expected)
{
    long status;
    cJSON *answer = NULL;
    bool ok = lease_request(l, method, path, lease, timeout_ms, true, &status, &answer) && status == expected;
    if (ok)
        observe(l, cJSON_GetObjectItemCaseSensitive(answer ? answer : lease, "spec"));
    cJSON_Delete(answer);
    cJSON_Delete(lease);
    return ok;
}

static bool create_lease(ls_leader *l, long timeout_ms)
{
    cJSON *lease = cJSON_CreateObject();
    cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(lease, "kind", "Lease");
    cJSON *meta = cJSON_AddObjectToObject(lease, "metadata");
    cJSON_AddStringToObject(meta, "name", l->name);
    cJSON_AddStringToObject(meta, "namespace", l->ns);
    cJSON *spec = cJSON_AddObjectToObject(lease, "spec");
    fill_spec(l, spec, NULL, false, l->identity);
    return write_lease(l, "POST", l->leases_path, lease, timeout_ms, 201);
}

/* One tryAcquireOrRenew: true when we hold the lease afterwards. */
static bool try_acquire_or_renew(ls_leader *l, long timeout_ms)
{
    long status;
    cJSON *lease = NULL;
    if (!lease_request(l, "GET", l->lease_path, NULL, timeout_ms, true, &status, &lease))
        return false;
    if (status == 404)
        return create_lease(l, timeout_ms);
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!lease || !cJSON_IsObject(spec)) {
        if (lease && !spec)
            spec = cJSON_AddObjectToObject(lease, "spec");
        else {
            cJSON_Delete(lease);
            return false;
        }
    }
    observe(l, spec);
    const char *holder = ls_kutil_json_str(spec, "holderIdentity");
    bool mine = holder && strcmp(holder, l->identity) == 0;
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
    int64_t dur_ms = cJSON_IsNumber(dur) && dur->valuedouble > 0 ? (int64_t)(dur->valuedouble * 1000) : l->lease_ms;
    pthread_mutex_lock(&l->lock);
    bool held = holder && *holder && !mine && l->observed_ms + dur_ms > ls_kutil_now_ms();
    pthread_mutex_unlock(&l->lock);
    if (held) {
        cJSON_Delete(lease);
        return false;
    }
    cJSON *old = cJSON_Duplicate(spec, true);
    fill_spec(l, spec, old, mine, l->identity);
    cJSON_Delete(old);
    return write_lease(l, "PUT", l->lease_path, lease, timeout_ms, 200);
}

static void release(ls_leader *l)
{
    long status;
    cJSON *lease = NULL;
    if (!lease_request(l, "GET", l->lease_path, NULL, l->renew_ms, false, &status, &lease) || !lease) {
        cJSON_Delete(lease);
        return;
    }
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    const char *holder = ls_kutil_json_str(spec, "holderIdentity");
    if (holder && strcmp(holder, l->identity) == 0) {
        /* client-go's release: no holder, leaseDurationSeconds 1, acquireTime
         * and renewTime now, leaseTransitions kept. */
        cJSON *old = cJSON_Duplicate(spec, true);
        fill_spec(l, spec, old, true, "");
        cJSON_Delete(old);
        const char *renewed = ls_kutil_json_str(spec, "renewTime");
        cJSON_ReplaceItemInObjectCaseSensitive(spec, "acquireTime", cJSON_CreateString(renewed ? renewed : ""));
        lease_request(l, "PUT", l->lease_path, lease, l->renew_ms, false, &status, NULL);
    }
    cJSON_Delete(lease);
}

static bool acquire(ls_leader *l)
{
    while (!atomic_load(&l->stop)) {
        if (try_acquire_or_renew(l, l->renew_ms))
            return true;
        /* wait.JitterUntil(retryPeriod, 1.2): retry × [1, 2.2) */
        int64_t wait = l->retry_ms + (int64_t)((double)l->retry_ms * 1.2 * (double)(ls_kutil_rand() % 1000) / 1000.0);
        ls_kutil_sleep_ms(wait, &l->stop);
    }
    return false;
}

/* Renews until stopped (true) or until renew_deadline passes without a
 * successful renewal (false). */
static bool renew(ls_leader *l)
{
    int64_t last_ok = ls_kutil_now_ms();
    while (!atomic_load(&l->stop)) {
        int64_t left = l->renew_ms - (ls_kutil_now_ms() - last_ok);
        if (left <= 0)
            return false;
        if (try_acquire_or_renew(l, left < 100 ? 100 : left)) {
            last_ok = ls_kutil_now_ms();
        } else if (ls_kutil_now_ms() - last_ok >= l->renew_ms) {
            return atomic_load(&l->stop) != 0;
        }
        ls_kutil_sleep_ms(l->retry_ms, &l->stop);
    }
    return true;
}

static void *run(void *arg)
{
    ls_leader *l = arg;
    if (!acquire(l))
        return NULL;
    atomic_store(&l->leader, 1);
    if (l->cb.on_started_leading)
        l->cb.on_started_leading(l->cb.ud);
    bool stopped = renew(l);
    atomic_store(&l->leader, 0);
    if (!stopped)
        atomic_store(&l->lost, 1);
    else if (l->release_on_stop)
        release(l);
    if (l->cb.on_stopped_leading)
        l->cb.on_stopped_leading(l->cb.ud);
    return NULL;
}

bool ls_leader_start(ls_leader *l, ls_error *err)
{
    return ls_kthread_start(&l->worker, run, l, "leader election", err);
}

void ls_leader_stop(ls_leader *l)
{
    ls_kthread_stop(&l->worker, &l->stop);
}

void ls_leader_free(ls_leader *l)
{
    if (!l)
        return;
    ls_leader_stop(l);
    pthread_mutex_destroy(&l->lock);
    free(l->observed_spec);
    ls_arena_free(&l->strings);
    free(l);
}

bool ls_leader_is_leader(ls_leader *l)
{
    return atomic_load(&l->leader) != 0;
}

bool ls_leader_lost(ls_leader *l)
{
    return atomic_load(&l->lost) != 0;
}

bool ls_leader_leader_known(ls_leader *l)
{
    pthread_mutex_lock(&l->lock);
    bool k = l->known;
    pthread_mutex_unlock(&l->lock);
    return k;
}

void ls_leader_current(ls_leader *l, char *out, size_t cap)
{
    pthread_mutex_lock(&l->lock);
    snprintf(out, cap, "%s", l->observed_holder);
    pthread_mutex_unlock(&l->lock);
}

const char *ls_leader_identity(const ls_leader *l)
{
    return l->identity;
}
