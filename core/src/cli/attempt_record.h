/*
 * attempt_record.h: the JSON record of each pod's scheduling attempts, kept
 * while a simulation runs (see attempt_record.c).
 */
#ifndef LS_ATTEMPT_RECORD_H
#define LS_ATTEMPT_RECORD_H

#include "luasched/scheduler.h"

#include <cjson/cJSON.h>

typedef struct ls_attempt_record ls_attempt_record;

ls_attempt_record *ls_attempt_record_new(uint32_t num_pods);
void ls_attempt_record_free(ls_attempt_record *r);
/* The simulation's attempt observer (ud is the record). */
void ls_attempt_record_observe(void *ud, const ls_attempt *a, const ls_cycle *c, const ls_scheduler *s);
/* The pod's record (the caller owns it), NULL when it had no attempt. */
cJSON *ls_attempt_record_take(ls_attempt_record *r, uint32_t pod_id);
/* The record of a pod that scheduling gates kept from any attempt. */
cJSON *ls_attempt_record_unattempted(const ls_pod *pod, const char *gate_message);

#endif
