/*
 * timeline.h: a simulation's timeline, written in the cluster file as a
 * document of our own:
 *
 *   apiVersion: luasched.io/v1alpha1
 *   kind: Timeline
 *   steps:
 *   - at: 60s
 *     create: {apiVersion: v1, kind: Node, metadata: {name: n4}, ...}
 *   - at: 2m
 *     patch: {kind: Node, metadata: {name: n1, labels: {disk: ssd}}}   # JSON merge patch
 *   - at: 150s
 *     update: {...the whole new object...}
 *   - at: 3m
 *     delete: {kind: Pod, metadata: {namespace: default, name: web-1}}
 *
 * Steps run in time order (file order for equal times) on the simulation's
 * virtual clock.
 */
#ifndef LS_SIM_TIMELINE_H
#define LS_SIM_TIMELINE_H

#include "luasched/base.h"
#include "model/doc.h"

typedef enum ls_step_op { LS_STEP_CREATE, LS_STEP_UPDATE, LS_STEP_PATCH, LS_STEP_DELETE } ls_step_op;

typedef struct ls_step {
    uint64_t at_ms;
    ls_step_op op;
    cJSON *body;            /* owned */
    char *where;            /* "file:line" of the step, for errors */
    uint32_t order;         /* file order, for equal times */
} ls_step;

typedef struct ls_timeline {
    ls_vec steps;           /* ls_step, sorted by (at_ms, order) once sealed */
    uint32_t next;          /* the first step not played yet */
} ls_timeline;

void ls_timeline_init(ls_timeline *t);
void ls_timeline_free(ls_timeline *t);
bool ls_timeline_is_document(const cJSON *doc);
/* Adds the steps of a Timeline document. Errors name the file, line and field. */
bool ls_timeline_add(ls_timeline *t, const ls_doc_set *doc, const cJSON *obj, ls_error *err);
void ls_timeline_seal(ls_timeline *t);
/* The next step due at or before now_ms, or NULL. */
const ls_step *ls_timeline_next_due(ls_timeline *t, uint64_t now_ms);
bool ls_timeline_next_time(const ls_timeline *t, uint64_t *at_ms);
uint32_t ls_timeline_len(const ls_timeline *t);

/* "90s", "1m30s", "500ms", "2h", or a number of seconds. */
bool ls_duration_parse(const cJSON *v, uint64_t *ms);
/* RFC 7386 JSON merge patch: applies patch onto target in place. */
void ls_json_merge_patch(cJSON *target, const cJSON *patch);

#endif
