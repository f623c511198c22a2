/*
 * serve_whatif.h: POST /whatif on `luasched simulate --serve` (see
 * serve_whatif.c, docs/operations/what-if.md "On simulate --serve").
 */
#ifndef LS_CLI_SERVE_WHATIF_H
#define LS_CLI_SERVE_WHATIF_H

#include "sim/apiserver.h"

typedef struct ls_serve_whatif ls_serve_whatif;

typedef struct ls_serve_whatif_opts {
    const char *config;        /* --config; NULL: the default profile */
    const char *plugin_path;   /* --plugin-path; NULL: the configuration's */
    const char *plugin_timeout;   /* --plugin-timeout MS; NULL: the configuration's */
    uint64_t seed;             /* --seed: the evaluator's tie-breaking */
} ls_serve_whatif_opts;

/* The strings of o are borrowed for the server's lifetime. */
ls_serve_whatif *ls_serve_whatif_new(ls_api *api, const ls_serve_whatif_opts *o);
void ls_serve_whatif_free(ls_serve_whatif *sw);
/* One question answered over the served store's state now: the answer's
 * JSON (malloc'd) and its HTTP status (ls_api_serve_opts.whatif). */
char *ls_serve_whatif_ask(void *sw, const char *body, size_t len, int *status);
/* The server stops: evaluators running are killed, their questions and
 * those to come answered 503 at once. Before the HTTP server's stop; true
 * when questions were being answered (their 503s are on their way). */
bool ls_serve_whatif_stop(ls_serve_whatif *sw);

#endif
