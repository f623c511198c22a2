/*
 * leader.h: leader election on a coordination.k8s.io/v1 Lease (internal),
 * as client-go's leaderelection with a LeaseLock.
 *
 * Acquiring: every retry period (jittered up to ×2.2, JitterFactor 1.2) read
 * the Lease; create it when missing; take it when it is free (holder "") or
 * when its holder has not changed the record for leaseDurationSeconds as
 * measured by OUR clock from when we last saw the record change (the remote
 * renewTime is never compared with our clock). Taking it bumps
 * leaseTransitions and sets acquireTime; renewing keeps both. Writes are
 * optimistic (the Lease's resourceVersion; a 409 fails the try).
 * Leading: renew every retry period; when no renewal has succeeded for
 * renew_deadline, leadership is lost: on_stopped_leading runs and the
 * election thread ends (kube-scheduler exits then; the caller decides).
 */
#ifndef LS_CLIENT_LEADER_H
#define LS_CLIENT_LEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "client/http.h"
#include "luasched/base.h"

typedef struct ls_leader ls_leader;

typedef struct ls_leader_options {
    const char *ns;              /* NULL: "kube-system" */
    const char *name;            /* NULL: "kube-scheduler" */
    const char *identity;        /* NULL: "<hostname>_<uuid>" */
    long lease_duration_ms;      /* 0: 15000 (written as whole seconds, at least 1) */
    long renew_deadline_ms;      /* 0: 10000 */
    long retry_period_ms;        /* 0: 2000 */
    bool release_on_stop;        /* write holderIdentity "" when stopped while leading
                                    (kube-scheduler does not by default) */
} ls_leader_options;

/* All run on the election thread. on_stopped_leading runs only after
 * on_started_leading did (lost, or stopped while leading). on_new_leader runs
 * whenever the observed holder changes to a non-empty identity (ours too). */
typedef struct ls_leader_callbacks {
    void (*on_started_leading)(void *ud);
    void (*on_stopped_leading)(void *ud);
    void (*on_new_leader)(void *ud, const char *identity);
    void *ud;
} ls_leader_callbacks;

/* renew_deadline must be below lease_duration and above retry_period. */
ls_leader *ls_leader_new(ls_kclient *c, const ls_leader_options *opt, const ls_leader_callbacks *cb,
                         ls_error *err);
bool ls_leader_start(ls_leader *l, ls_error *err);
/* Stops the thread (cancelling its request), releasing the lease first if
 * asked to and leading. Idempotent. */
void ls_leader_stop(ls_leader *l);
void ls_leader_free(ls_leader *l);

bool ls_leader_is_leader(ls_leader *l);
/* True once some holder has been observed (us or another). */
bool ls_leader_leader_known(ls_leader *l);
/* The last observed holder ("" when none) into out. */
void ls_leader_current(ls_leader *l, char *out, size_t cap);
const char *ls_leader_identity(const ls_leader *l);
/* True when the thread ended because leadership was lost. */
bool ls_leader_lost(ls_leader *l);

#endif
