/*
 * explain_hints.h: for a pod that found no node, the smallest single changes
 * that would open nodes, worked out from its cycle's Filter verdicts (live
 * explain): less of one resource (NodeResourcesFit), one more toleration
 * (TaintToleration), one nodeSelector entry less (NodeAffinity), one host
 * port less (NodePorts).
 */
#ifndef LS_CLI_EXPLAIN_HINTS_H
#define LS_CLI_EXPLAIN_HINTS_H

#include "luasched/scheduler.h"

/* Lines such as "3 nodes fit with 200m less cpu", each ending in '\n'; the
 * caller frees the text. NULL when the cycle rejected the pod before Filter
 * or no single change opens a node. */
char *ls_explain_hints(const ls_cycle *cycle, const ls_scheduler *s);

#endif
