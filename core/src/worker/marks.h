/*
 * marks.h: pods a supervised command's earlier worker died on
 * (docs/plugins/worker.md). The supervisor of `simulate`, `explain` and
 * `compare` records them before it starts the worker again (the fork copies
 * them); that worker's scheduler fails such a pod at once as an Error of the
 * plugin that was running, so that the run completes with a report.
 */
#ifndef LS_WORKER_MARKS_H
#define LS_WORKER_MARKS_H

/* Records "ns/name" with the Error message it gets. */
void ls_worker_mark_pod(const char *pod, const char *message);
/* The message of a marked pod, or NULL (one test when nothing is marked). */
const char *ls_worker_marked(const char *ns, const char *name);

#endif
