/*
 * run_supervise.c: `luasched run`'s supervisor watching its worker
 * (docs/plugins/worker.md): the worker started with only its channel and the
 * page, its hello taken (the completed configuration, what to watch), its
 * messages read and handed to the relay's checks (or an extender call made
 * for it), a call past its budget plus the grace ended, a worker that ended
 * replaced and fed again, its death counted against the pod it ran for.
 */
#include "cli/cli.h"
#include "cli/run_internal.h"
#include "cli/whatif_relay.h"
#include "luasched/log.h"
#include "scheduler/extender.h"

#include <cjson/cJSON.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the worker, seen from the supervisor */

/* The supervisor reads at most this much in one message of its worker. */
enum { MAX_WORKER_MESSAGE = 16 * 1024 * 1024, POLL_MS = 20, MAX_DRAIN = 64 };
/* While messages keep coming, the worker's page and process are looked at
 * this often (not after every message: a binding each few hundred µs made
 * that a wait4 and the page's reads per pod). */
enum { WATCH_MS = 5 };
/* The largest /configz a worker may send. */
enum { MAX_CONFIGZ = 4 * 1024 * 1024 };

bool ls_run_spawn_worker(run_state *r, ls_error *err)
{
    if (!ls_child_spawn_exec(&r->worker, ls_cli_argv0, r->worker_argv, err))
        return false;
    ls_chan_reader_free(&r->worker_rd);   /* what the last worker left unread is not this one's */
    ls_chan_reader_init(&r->worker_rd, r->worker.chan);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)r->worker.pid);
    ls_log_info(1, "Started the worker process", "pid", pid);
    return true;
}

static void set_configz(run_state *r, const char *configz)
{
    free(r->configz);
    r->configz = ls_xstrdup(configz);
    if (r->server)
        ls_health_server_set_configz(r->server, r->configz);
}

/* A hello: the completed configuration and what to watch. */
static bool take_hello(run_state *r, const ls_chan_msg *m, ls_error *err)
{
    if (m->n < 2)
        return ls_errorf(err, "the worker's hello has %u fields", m->n);
    set_configz(r, m->f[0]);   /* a restarted worker read the configuration again */
    return ls_relay_want(r->relay, m->f[1], m->f + 2, m->n - 2, err);
}

/* A new /configz body: the worker's after a successful hot reload. */
static bool take_configz(run_state *r, const ls_chan_msg *m, char *why, size_t cap)
{
    cJSON *j = m->n == 1 && strlen(m->f[0]) <= MAX_CONFIGZ ? cJSON_Parse(m->f[0]) : NULL;
    bool ok = cJSON_IsObject(j);
    cJSON_Delete(j);
    if (!ok)
        snprintf(why, cap, "a configz message that is not one JSON object of at most %d bytes", MAX_CONFIGZ);
    else
        set_configz(r, m->f[0]);
    return ok;
}

/* Waits for the first worker's hello; false when it ended first (it said why). */
bool ls_run_await_hello(run_state *r, int *rc)
{
    while (!r->stop) {
        struct pollfd p = {.fd = r->worker.chan, .events = POLLIN};
        if (!ls_chan_reader_ready(&r->worker_rd) && poll(&p, 1, 100) <= 0)
            continue;
        ls_chan_msg m;
        if (ls_chan_read(&r->worker_rd, &m, MAX_WORKER_MESSAGE) <= 0)
            break;
        ls_error err;
        bool ok = m.type == LS_CH_HELLO && take_hello(r, &m, &err);
        ls_chan_msg_free(&m);
        if (ok)
            return true;
        ls_log_error("Error creating the scheduler", "err", m.type == LS_CH_HELLO ? err.msg : "no hello");
        break;
    }
    char how[1024];
    ls_child_kill(&r->worker, "it did not start");
    ls_child_ended(&r->worker, true, how, sizeof how);
    *rc = LS_EXIT_USAGE;
    return false;
}

/* The worker ended: say why (naming the call), count it against the pod,
 * and start another one fed from the informers' state. */
static void replace_worker(run_state *r, const char *how)
{
    ls_worker_page *pg = r->worker.page;
    char pod[sizeof pg->pod], plugin[sizeof pg->plugin], point[sizeof pg->point], culprit[sizeof pg->code_of];
    snprintf(pod, sizeof pod, "%s", pg->pod);
    snprintf(plugin, sizeof plugin, "%s", pg->plugin);
    snprintf(point, sizeof point, "%s", pg->point);
    /* counted against the plugin whose code ran (another plugin's code in
     * the call's: `how` names both), the pod's Error worded by the call's */
    snprintf(culprit, sizeof culprit, "%s", ls_worker_page_culprit(pg));
    ls_relay_detach(r->relay);
    ls_log_error("The worker process ended; starting another", "reason", how, "plugin", culprit[0] ? culprit : "-",
                 "pod", pod[0] ? pod : "-");
    ls_relay_worker_ended(r->relay, pod, plugin, point, how);
    ls_run_count_worker_end(culprit, how);
    r->restarts++;
    /* a worker that dies at once again and again is not restarted in a busy loop */
    if (ls_worker_now_ms() - r->worker.started_ms < 1000)
        usleep(500 * 1000);
    ls_error err;
    if (!ls_run_spawn_worker(r, &err)) {
        ls_log_error("Cannot start the worker process", "err", err.msg);
        r->stop = 1;
    }
}

/* An extender call the worker asks for: only a configured extender and one
 * of its verbs (ls_extenders_send_to checks both). */
static void call_extender(run_state *r, const ls_chan_msg *m)
{
    char *msg = NULL;
    cJSON *result = ls_extenders_send_to(r->extenders, m->f[1], m->f[2], m->f[3], &msg);
    char *text = result ? cJSON_PrintUnformatted(result) : NULL;
    ls_relay_reply(r->relay, m->f[0], result != NULL, result ? text : msg);   /* under the channel's lock */
    cJSON_Delete(result);
    free(text);
    free(msg);
}

/* One message of the worker; a message it may not send ends it. */
static void take_message(run_state *r, const ls_chan_msg *m)
{
    char why[700];
    ls_error err;
    if (m->type == LS_CH_HELLO) {   /* a restarted worker is built: feed it */
        if (take_hello(r, m, &err))
            ls_relay_attach(r->relay, r->worker.chan, true);
        else
            ls_child_kill(&r->worker, err.msg);
        return;
    }
    if (m->type == LS_CH_WHATIF && m->n == 3) {
        ls_whatif_relay_answered(r->whatif, m->f[0], m->f[1], m->f[2]);
        return;
    }
    if (m->type == LS_CH_EXTENDER && m->n == 4) {
        call_extender(r, m);
        return;
    }
    bool ok = m->type == LS_CH_CONFIGZ ? take_configz(r, m, why, sizeof why)
                                       : ls_relay_handle(r->relay, m, why, sizeof why);
    if (!ok) {
        char text[800];
        snprintf(text, sizeof text, "it sent %s", why);
        ls_log_error("Ending the worker: a message it may not send", "err", why);
        ls_child_kill(&r->worker, text);
    }
}

/* The worker's messages until its channel is quiet; true when it was quiet
 * for POLL_MS, ended or failed (time to watch the worker), false when
 * messages were read until it was empty or MAX_DRAIN were. */
static bool drain_channel(run_state *r)
{
    for (int n = 0; n < MAX_DRAIN; n++) {
        if (r->worker.chan < 0)
            return true;
        struct pollfd p = {.fd = r->worker.chan, .events = POLLIN};
        if (!ls_chan_reader_ready(&r->worker_rd) && poll(&p, 1, n == 0 ? POLL_MS : 0) <= 0)
            return n == 0;
        ls_chan_msg m;
        int rc = ls_chan_read(&r->worker_rd, &m, MAX_WORKER_MESSAGE);
        if (rc < 0)
            ls_child_kill(&r->worker, "it sent a malformed or oversized frame");
        if (rc <= 0)
            return true;
        take_message(r, &m);
        ls_chan_msg_free(&m);
    }
    return false;
}

static void watch_worker(const run_opts *o, run_state *r)
{
    ls_worker_page *pg = r->worker.page;
    atomic_store(&r->health.progress_ms, atomic_load(&pg->heartbeat_ms));
    atomic_store(&r->health.waiting, atomic_load(&pg->waiting));
    char how[1200];
    if (ls_child_ended(&r->worker, false, how, sizeof how)) {   /* first: how it ended is the news */
        replace_worker(r, how);
        return;
    }
    char why[1024];
    if (ls_child_overdue(&r->worker, (uint64_t)(o->worker_grace_ns / 1000000), why, sizeof why))
        ls_child_kill(&r->worker, why);
    else if (ls_relay_send_failed(r->relay))
        ls_child_kill(&r->worker, "it did not read its channel for 5 s: its state is behind");
    if (r->reload && r->worker.pid > 0) {
        r->reload = 0;
        kill(r->worker.pid, SIGHUP);
    }
    ls_relay_tick(r->relay);
}

void ls_run_supervise(const run_opts *o, run_state *r)
{
    while (!r->stop) {
        bool quiet = drain_channel(r);
        uint64_t now = ls_worker_now_ms();
        if (quiet || now - r->watched_ms >= WATCH_MS) {
            r->watched_ms = now;
            watch_worker(o, r);
        }
    }
    /* a graceful stop: the worker ends its loop; its last writes still come */
    if (r->worker.pid > 0)
        kill(r->worker.pid, SIGTERM);
    uint64_t until = ls_worker_now_ms() + 500;   /* then it is killed: a stop within 2 s */
    char how[1200];
    while (r->worker.pid > 0 && ls_worker_now_ms() < until) {
        drain_channel(r);
        if (ls_child_ended(&r->worker, false, how, sizeof how))
            break;
    }
}
