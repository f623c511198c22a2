/*
 * fit_error.h: upstream's FitError message, "0/N nodes are available: ...",
 * built from a failed cycle's node statuses.
 */
#ifndef LS_FIT_ERROR_H
#define LS_FIT_ERROR_H

#include "luasched/framework.h"

/* ls_fit_error_prefilter and ls_fit_error_filter are in framework.h (the
 * test kit calls them too). */
/* Reserve or Permit rejected the chosen node: NumAllNodes is 1. */
char *ls_fit_error_single(uint32_t status_id);

#endif
