/*
 * log_limit.h: a per-key rate limit for log lines (log_limit.c).
 */
#ifndef LS_LOG_LIMIT_H
#define LS_LOG_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ls_log_limiter ls_log_limiter;

ls_log_limiter *ls_log_limiter_new(double window_seconds);
void ls_log_limiter_free(ls_log_limiter *l);
/* Whether a line for `key` may be written at `now` (seconds): the first one,
 * then one per window. When true, *suppressed is how many lines of the key
 * were held back since the last one written. */
bool ls_log_limiter_allow(ls_log_limiter *l, const char *key, double now, uint64_t *suppressed);

#endif
