/*
 * own_writes.c: objects a pod's attempt wrote, until their event comes
 * (own_writes.h).
 */
#include "scheduler/own_writes.h"

#include <string.h>

void ls_own_writes_note(ls_vec *writes, ls_str ns, ls_str name, uint32_t pod_id)
{
    if (writes->len >= LS_OWN_WRITES_MAX) {   /* the oldest event never came */
        memmove(writes->data, (char *)writes->data + sizeof(ls_own_write),
                (writes->len - 1) * sizeof(ls_own_write));
        writes->len--;
    }
    ls_own_write *w = ls_vec_push(writes);
    *w = (ls_own_write){.ns = ns, .name = name, .pod_id = pod_id};
}

uint32_t ls_own_writes_take(ls_vec *writes, const ls_object *obj)
{
    for (uint32_t i = 0; i < writes->len; i++) {
        ls_own_write *w = &LS_VEC_AT(writes, ls_own_write, i);
        if (w->name != obj->name || (w->ns && w->ns != obj->ns))
            continue;
        uint32_t origin = w->pod_id + 1;
        memmove(w, w + 1, (writes->len - i - 1) * sizeof *w);
        writes->len--;
        return origin;
    }
    return 0;
}
