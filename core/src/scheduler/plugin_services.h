/*
 * plugin_services.h: what the stages share with the plugin services
 * (plugin_services.c, the ls_cycle_* functions of luasched/framework.h).
 */
#ifndef LS_SCHEDULER_PLUGIN_SERVICES_H
#define LS_SCHEDULER_PLUGIN_SERVICES_H

#include "scheduler/attempt.h"

/* Whether the running plugin call may ask for one more API write or eviction
 * (at most LS_MAX_PLUGIN_WRITES per call: each is queued in C); false with
 * errbuf filled when it may not. */
enum { LS_MAX_PLUGIN_WRITES = 10000 };
bool ls_env_plugin_write(ls_sched_env *e, char *errbuf, size_t errlen);

#endif
