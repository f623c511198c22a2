/*
 * whatif.h: the what-if API (docs/operations/what-if.md): questions about a
 * pod, a transaction of pods, a gang or a template's replicas, asked of the
 * running scheduler's state, optionally changed (nodes added, cordoned,
 * drained or removed, pods removed), answered with the decision the
 * scheduler would make and its reasons. Nothing reaches the cluster.
 */
#ifndef LS_CLI_WHATIF_H
#define LS_CLI_WHATIF_H

#include "luasched/cache.h"
#include "luasched/scheduler.h"

#include <cjson/cJSON.h>

typedef struct ls_whatif ls_whatif;

/* Takes the evaluator: a scheduler built from the live configuration with
 * tracing on and a source that writes nothing. */
ls_whatif *ls_whatif_new(ls_scheduler *evaluator);
void ls_whatif_free(ls_whatif *wi);
ls_scheduler *ls_whatif_evaluator(ls_whatif *wi);
/* One question (the request's JSON) answered on the live scheduler's state,
 * between two of its cycles; the answer's JSON (malloc'd) and its HTTP status
 * (200, or 400 for a request that is not a question, with {"error": ...}). */
char *ls_whatif_answer(ls_whatif *wi, ls_scheduler *live, const char *body, size_t len, int *status);
/* A question's deadline: its "timeoutSeconds", at most (and by default)
 * LS_WHATIF_DEADLINE_MS (the supervisor waits 30 s for an answer, run.c). */
enum { LS_WHATIF_DEADLINE_MS = 25000 };
long ls_whatif_deadline_ms(const char *body);
/* {"apiVersion", "kind": "WhatIfAnswer", "error": msg}, malloc'd: the answer
 * to a question that could not be answered. */
char *ls_whatif_error_json(const char *msg);

/* ---- whatif_changes.c: the cluster a question with "changes" runs on */

typedef struct ls_whatif_view ls_whatif_view;
/* A copy of the live cache (nodes, bound and assumed pods) with the request's
 * "changes" applied; NULL with err naming the field on a bad change. */
ls_whatif_view *ls_whatif_view_new(ls_scheduler *live, const cJSON *changes, uint32_t first_id, ls_error *err);
void ls_whatif_view_free(ls_whatif_view *v);
ls_cache *ls_whatif_view_cache(ls_whatif_view *v);
/* The view's snapshot, brought up to date with its cache. */
ls_snapshot *ls_whatif_view_snapshot(ls_whatif_view *v);

#endif
