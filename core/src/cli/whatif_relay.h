/*
 * whatif_relay.h: `luasched run`'s supervisor side of /whatif: each question
 * goes to the worker with a request id, and the HTTP thread that asked waits
 * for the answer with that id (see whatif_relay.c).
 */
#ifndef LS_CLI_WHATIF_RELAY_H
#define LS_CLI_WHATIF_RELAY_H

#include "client/relay.h"

typedef struct ls_whatif_relay ls_whatif_relay;

ls_whatif_relay *ls_whatif_relay_new(ls_relay *relay);
void ls_whatif_relay_free(ls_whatif_relay *wr);
/* The worker's answer (JSON, malloc'd) and its HTTP status; 503 when no
 * worker is attached, 504 when none came within timeout_ms. */
char *ls_whatif_relay_ask(ls_whatif_relay *wr, const char *question, long timeout_ms, int *status);
/* The scheduler stops: questions waiting and to come are answered 503 at once
 * (a forked evaluator may be in the middle of a long question). */
void ls_whatif_relay_close(ls_whatif_relay *wr);
/* An answer from the worker (the supervisor's channel thread). */
void ls_whatif_relay_answered(ls_whatif_relay *wr, const char *id, const char *status, const char *answer);

#endif
