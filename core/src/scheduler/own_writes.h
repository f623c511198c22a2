/*
 * own_writes.h: the objects a plugin that is not built-in created or patched during a pod's
 * scheduling attempt (ls.create_object, ls.patch_object, ls.patch_status),
 * remembered until their event comes back from the cluster, so that the
 * event carries that pod as its origin (ls_cluster_event.origin_pod): it is
 * no news for that pod, whose requeue would otherwise be caused by its own
 * attempt (a Filter creating an object in every call retried its pod for
 * ever), while every other pod sees it as any other event. Bounded: the
 * oldest record goes first (an event that never came).
 */
#ifndef LS_SCHEDULER_OWN_WRITES_H
#define LS_SCHEDULER_OWN_WRITES_H

#include "luasched/base.h"
#include "luasched/objects.h"

#include <stdint.h>

enum { LS_OWN_WRITES_MAX = 256 };

typedef struct ls_own_write {
    ls_str ns, name;   /* ns 0: any namespace (a created object, named by what the cluster answered) */
    uint32_t pod_id;
} ls_own_write;

/* Pod pod_id's attempt wrote object ns/name. `writes` holds ls_own_write. */
void ls_own_writes_note(ls_vec *writes, ls_str ns, ls_str name, uint32_t pod_id);
/* The origin (pod id + 1) of the event of obj, its record dropped; 0 when no
 * attempt wrote it. */
uint32_t ls_own_writes_take(ls_vec *writes, const ls_object *obj);

#endif
