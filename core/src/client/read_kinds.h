/*
 * read_kinds.h: the kinds the scheduler reads from a cluster (internal), in
 * one table for the commands that read a live cluster whole: `luasched
 * record` (core/src/cli/record.c) and the live `luasched explain`
 * (core/src/cli/explain_live.c). `luasched run` watches the same kinds, the
 * DRA and PodGroup ones through the plugins that register for them
 * (client/kcluster.c).
 */
#ifndef LS_CLIENT_READ_KINDS_H
#define LS_CLIENT_READ_KINDS_H

#include <stddef.h>

typedef struct ls_read_kind {
    const char *group, *version, *resource, *kind, *api_version;
} ls_read_kind;

/* Namespaces and PriorityClasses first (what admission of the others needs),
 * Pods last. */
extern const ls_read_kind LS_READ_KINDS[];
extern const size_t LS_N_READ_KINDS;

#endif
