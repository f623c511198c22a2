/*
 * client.h: the Kubernetes API client in one include (internal).
 *
 *   kubeconfig.h  where the API server is and how to authenticate
 *   http.h        ls_kclient: one per process, thread-safe; rate limit, retries, cancel
 *   watch.h       the watch-stream framing decoder (pure, fuzzed)
 *   informer.h    ls_informer: list+watch of one resource into a store, handlers on its thread
 *   writer.h      ls_writer: bindings, events, pod status, preemption on a worker pool
 *   leader.h      ls_leader: Lease leader election on its own thread
 *
 * Typical wiring (what `luasched run` does):
 *
 *   ls_kubeconfig cfg;            ls_kubeconfig_resolve(path, context, master, &cfg, &err);
 *   ls_kclient *c =               ls_kclient_new(&cfg, &(ls_kclient_options){.qps = 50, .burst = 100}, &err);
 *   ls_kubeconfig_free(&cfg);     (the client keeps its own copy)
 *   ls_leader *l =                ls_leader_new(c, &lopts, &callbacks, &err); ls_leader_start(l, &err);
 *   ls_informer *pods =           ls_informer_new(c, &(ls_informer_options){.version = "v1",
 *                                   .resource = "pods",
 *                                   .field_selector = "status.phase!=Succeeded,status.phase!=Failed"},
 *                                   &handlers, &err);
 *   ls_informer_start(pods, &err); ls_informer_wait_synced(pods, ...);
 *   ls_writer *w =                ls_writer_new(c, &(ls_writer_options){.workers = 4}, &err);
 *   ... ls_writer_bind(w, ns, name, uid, node, done, ud) ...
 *
 * Shutdown order: ls_leader_free first when it should release the Lease
 * (release_on_stop needs a working client), then ls_kclient_cancel(c)
 * (optional: makes every request return at once), ls_informer_free,
 * ls_writer_drain + ls_writer_free, and ls_kclient_free(c) last.
 */
#ifndef LS_CLIENT_CLIENT_H
#define LS_CLIENT_CLIENT_H

#include "client/http.h"
#include "client/informer.h"
#include "client/kubeconfig.h"
#include "client/leader.h"
#include "client/watch.h"
#include "client/writer.h"

#endif
