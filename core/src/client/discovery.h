/*
 * discovery.h: what the API server serves (internal), read as client-go's
 * discovery reads it: GET /version, /api and /apis, then the resource list of
 * each group version asked about (/api/v1, /apis/GROUP/VERSION), fetched once
 * and kept. `luasched run`, `record` and live `explain` read it at start so
 * that they watch only what is there and turn off what depends on an API the
 * server does not serve (client/api_needs.c says what depends on what).
 *
 * Used from one thread (start-up); not thread-safe.
 */
#ifndef LS_CLIENT_DISCOVERY_H
#define LS_CLIENT_DISCOVERY_H

#include "client/http.h"
#include "luasched/base.h"

typedef struct ls_discovery ls_discovery;

/* NULL (err names the path and the HTTP status) when /api or /apis cannot be
 * read: without them nothing can be decided. /version is optional (some
 * servers hide it); its gitVersion is kept for the logs. */
ls_discovery *ls_discovery_fetch(ls_kclient *c, ls_error *err);
void ls_discovery_free(ls_discovery *d);

/* What the server serves, small enough for a command line, for `run`'s
 * worker (which has no network): "VERSION|GV,GV,..." of the server's
 * gitVersion and every group version listed by /api and /apis ("v1",
 * "apps/v1"). The caller frees it. */
char *ls_discovery_served_list(const ls_discovery *d);
/* A discovery read back from that text: NULL (err says what is wrong) when it
 * is not of that form (at most 64 KiB and 512 group versions, names of
 * [a-z0-9.-]). It answers by group version only: a resource of a served group
 * version counts as served. Nothing is fetched. */
ls_discovery *ls_discovery_from_list(const char *text, ls_error *err);

/* The server's gitVersion ("v1.28.15"), or "" when /version was not readable. */
const char *ls_discovery_server_version(const ls_discovery *d);
/* Whether GROUP/VERSION ("" for the core group) is listed by /api or /apis. */
bool ls_discovery_serves_group_version(const ls_discovery *d, const char *group, const char *version);
/* Whether the group version serves the resource (its plural). The group
 * version's resource list is fetched the first time; a list that cannot be
 * read (an aggregated API whose server is down answers 503) counts as not
 * serving, and the reason noted says so. */
bool ls_discovery_serves(ls_discovery *d, const char *group, const char *version, const char *resource);
/* The kind of a served resource ("PodGroup"), or NULL when not served. */
const char *ls_discovery_kind(ls_discovery *d, const char *group, const char *version, const char *resource);
/* The same for "plural.version.group" (the name plugins' events tables and
 * object_data use); a name without two dots is a core kind and is served. */
bool ls_discovery_serves_name(ls_discovery *d, const char *name);

/* What was turned off because the server does not serve its API, gathered
 * for one warning: `what` ("plugin DynamicResources", "watch of
 * csistoragecapacities.v1.storage.k8s.io") and the API missing, the group
 * version, or its resource when `resource` is not NULL: noted as "WHAT
 * (resource.k8s.io/v1 not served)", or "WHAT (metrics.k8s.io/v1beta1:
 * discovery failed: HTTP 503)" when its resource list could not be read. The
 * same entry noted twice counts once. */
void ls_discovery_note_off(ls_discovery *d, const char *what, const char *group, const char *version,
                           const char *resource);
uint32_t ls_discovery_off_count(const ls_discovery *d);
/* "WHAT (API not served); ..." of everything noted; the caller frees it. */
char *ls_discovery_off_text(const ls_discovery *d);
/* Logs the one warning naming the server's version, everything turned off
 * and why; nothing when nothing was. */
void ls_discovery_warn(const ls_discovery *d);

#endif
