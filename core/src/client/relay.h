/*
 * relay.h: the supervisor's side of `luasched run` (docs/plugins/worker.md).
 *
 * It keeps the informers (their stores are the latest JSON of every object)
 * and the writer. Each watch event's object goes to the worker as JSON over
 * the channel; a new worker is sent the whole state from the stores, with no
 * relist. Every write the worker asks for is checked before it is made: the
 * message's fields, their sizes, the resource it may touch, and for a
 * binding that the pod is known, unbound, of that uid, not being bound
 * already (the supervisor's own double-bind guard) and the node known. A pod
 * whose plugin calls ended the worker `kill_limit` times is marked (an Error
 * condition and a FailedScheduling event naming the plugin and the kill) and
 * withheld from the worker for a back-off that doubles at each mark.
 */
#ifndef LS_CLIENT_RELAY_H
#define LS_CLIENT_RELAY_H

#include "client/discovery.h"
#include "client/http.h"
#include "worker/channel.h"

#include <signal.h>
#include <stdbool.h>

typedef struct ls_relay ls_relay;

typedef struct ls_relay_options {
    ls_kclient *client, *events_client;
    int kill_limit;             /* kills on one pod before it is marked; 0: 3 */
    long backoff_ms;            /* the first back-off of a marked pod; 0: 60 s */
    long metrics_poll_ms;       /* metrics.k8s.io list period */
    /* What the server serves: a kind it does not serve is not watched (nor
     * polled) and is noted in it for the one warning (ls_discovery_warn).
     * NULL: every kind is watched. Used from the supervisor's main thread
     * only; must outlive the relay. */
    ls_discovery *discovery;
} ls_relay_options;

ls_relay *ls_relay_new(const ls_relay_options *o, ls_error *err);
/* What a worker's hello asks for: "nodes" / "pods" metrics and custom
 * resources (plural.version.group). Feeds already there are kept; new ones
 * start at once when the relay runs. */
bool ls_relay_want(ls_relay *r, const char *metrics, const char *const *custom, uint32_t n, ls_error *err);
bool ls_relay_start(ls_relay *r, ls_error *err);
/* Waits until every informer has delivered its first list; false when *stop
 * was set first. Every 30 s of waiting, each informer not synced yet is
 * logged as an error with its resource and last error ("list: HTTP 403"). */
bool ls_relay_wait_synced(ls_relay *r, volatile sig_atomic_t *stop);
/* A worker on fd: the whole state the informers have (objects, nodes,
 * pods), then live events; with synced, the synced message after the state
 * (a worker schedules once it has it). The first worker is attached before
 * the informers start, so that their first lists reach it as they arrive,
 * and told synced once they synced and leadership was won. */
void ls_relay_attach(ls_relay *r, int fd, bool synced);
void ls_relay_send_synced(ls_relay *r);
/* The worker is gone: nothing is sent until the next attach; a binding in
 * flight stays guarded until its outcome. */
void ls_relay_detach(ls_relay *r);
/* One message of the worker: validated, then done. False when it is not a
 * message a worker may send (the caller ends that worker). */
bool ls_relay_handle(ls_relay *r, const ls_chan_msg *m, char *why, size_t cap);
/* The answer to a request of the worker (its id), sent under the channel's
 * lock as every message to the worker is. */
void ls_relay_reply(ls_relay *r, const char *id, bool ok, const char *message);
/* A worker ended during a plugin call for pod "ns/name" (may be ""): counted;
 * at the limit the pod is marked and backed off. */
void ls_relay_worker_ended(ls_relay *r, const char *pod, const char *plugin, const char *point, const char *how);
/* Gives back to the worker the pods whose back-off is over. */
void ls_relay_tick(ls_relay *r);
/* A message to the worker could not be sent whole (the channel's 5 s send
 * timeout, or the worker gone): its state is behind, it must be replaced. */
bool ls_relay_send_failed(ls_relay *r);
/* The worker's metrics (malloc'd), asked over the channel; "" after timeout. */
char *ls_relay_metrics(ls_relay *r, long timeout_ms);
/* Stops the informers and lets the writes finish (as ls_kcluster_stop). */
bool ls_relay_stop(ls_relay *r, long timeout_ms);
void ls_relay_free(ls_relay *r);

/* One message to the attached worker (what-if questions); false when none is
 * attached or the send failed. */
bool ls_relay_send_to_worker(ls_relay *r, uint8_t type, const char *const *f, uint32_t n);

#endif
