/*
 * fit_error.h: upstream's FitError message, "0/N nodes are available: ...",
 * built from a failed cycle's node statuses.
 */
#ifndef LS_FIT_ERROR_H
#define LS_FIT_ERROR_H

#include "luasched/framework.h"

/* PreFilter rejected the pod: "0/N nodes are available: <msg>." (caller frees) */
char *ls_fit_error_prefilter(const ls_cycle *c, const char *prefilter_msg);
/* No node passed Filter: reasons counted over the nodes, sorted as strings. */
char *ls_fit_error_filter(const ls_cycle *c);
/* Reserve or Permit rejected the chosen node: NumAllNodes is 1. */
char *ls_fit_error_single(uint32_t status_id);

#endif
