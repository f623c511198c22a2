/*
 * api_needs.h: what depends on which API (internal). With the server's
 * discovery (client/discovery.h), `luasched run` turns off what needs an API
 * the server does not serve, as upstream turns off what a feature gate that
 * is off guards, and refuses to start with a plugin the configuration enables
 * explicitly that needs one (docs/operations/api-servers.md).
 */
#ifndef LS_CLIENT_API_NEEDS_H
#define LS_CLIENT_API_NEEDS_H

#include "client/discovery.h"
#include "luasched/scheduler.h"

/* Before the scheduler is built: each default plugin whose API is missing
 * (DynamicResources without resource.k8s.io/v1) becomes unavailable to the
 * configuration (ls_config_set_unavailable) and is noted for the warning. */
void ls_api_needs_apply(ls_discovery *d);
/* After: the custom resources the plugins' events tables register. A plugin
 * none of whose custom resources is served cannot work: an error naming the
 * plugin, its profile and the resources. (Resources not served of a plugin
 * that has others are not watched: client/kcluster.c notes them.) */
bool ls_api_needs_check(ls_discovery *d, const ls_scheduler *s, ls_error *err);

#endif
