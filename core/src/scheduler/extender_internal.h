/*
 * extender_internal.h: what extender.c and extender_preempt.c share: one
 * extender's client and settings, the preemption candidates handed over by
 * DefaultPreemption, the POST of one verb and the pieces of the wire format.
 */
#ifndef LS_FRAMEWORK_EXTENDER_INTERNAL_H
#define LS_FRAMEWORK_EXTENDER_INTERNAL_H

#include "client/http.h"
#include "client/kutil.h"
#include "scheduler/extender.h"

#include <cjson/cJSON.h>

typedef struct ls_extender {
    const ls_extender_config *cfg;   /* owned by the scheduler's configuration */
    char *url;                       /* urlPrefix without trailing '/' */
    long timeout_ms;
    ls_kclient *client;
} ls_extender;

/* A preemption candidate: victims[first .. first + n_victims) of ls_extenders.victims. */
typedef struct extender_candidate {
    ls_str node;
    int64_t pdb_violations;
    uint32_t first, n_victims;
} extender_candidate;

/* A node an extender filtered out without a FailedNodes entry. */
#define LS_EXTENDER_DROPPED UINT32_MAX

/* One extender's score of one node: as it gave it, and weighted to the
 * plugins' range (what the total gets). */
typedef struct extender_score {
    int64_t raw, final;
} extender_score;

struct ls_extenders {
    uint32_t n;
    ls_extender *items;              /* ignorable ones last */
    ls_vec candidates;               /* extender_candidate */
    ls_vec victims;                  /* const ls_pod * */
    /* the running cycle, when tracing (explain, JSON output) */
    bool trace;
    uint32_t *verdicts;              /* per snapshot node index: 0 not asked, 1 passed, status id + 1, or DROPPED */
    uint32_t verdicts_cap;
    extender_score *scores;          /* [e * num_scored + i] */
    uint8_t *scored;                 /* per extender: gave scores this cycle */
    uint32_t scores_cap, num_scored;
};

bool ls_extender_interested(const ls_extender *e, const ls_pod *pod);
/* POSTs body to url/verb; the decoded answer, or NULL with *msg (caller
 * frees) in upstream's words: `Post "URL": why`, `failed VERB with extender
 * at URL URL, code N`. */
cJSON *ls_extender_send(const ls_extender *e, const char *verb, const char *body, char **msg);
void ls_extender_add_string(ls_buf *b, const char *s);
char *ls_extender_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error (*err, freed and cleared) from an ignorable extender is logged with
 * upstream's message at verbosity v and dropped: true then, and the caller
 * goes on to the next extender. False when there is no error or the extender
 * is not ignorable. */
bool ls_extender_skip_ignorable(const ls_extender *e, char **err, int v, const char *message);
void ls_extender_add_pod(ls_buf *b, const ls_pod *pod);

#endif
