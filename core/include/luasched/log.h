/*
 * log.h: klog-style structured logs. A line is a message plus key/value pairs,
 * written as klog text:
 *   I1122 07:26:03.123456   12345 cycle.c:88] "Successfully bound pod to node" pod="default/web-0" node="n1"
 * or, with --logging-format json, one JSON object per line:
 *   {"ts":1763796363.123456,"caller":"cycle.c:88","msg":"Successfully bound pod to node","v":0,"pod":"default/web-0","node":"n1"}
 * Info lines carry a verbosity and are written only when it is at most the
 * level given by -v; errors are always written. Safe from any thread.
 */
#ifndef LUASCHED_LOG_H
#define LUASCHED_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum ls_log_format { LS_LOG_TEXT = 0, LS_LOG_JSON } ls_log_format;

/* Defaults: verbosity 0, text, stderr. */
void ls_log_setup(int verbosity, ls_log_format format, FILE *out);
int ls_log_verbosity(void);
/* The log's lock is held across fork() from now on (a child forked while
 * another thread writes a line would find it taken forever). */
void ls_log_guard_fork(void);
static inline bool ls_log_enabled(int v) { return v <= ls_log_verbosity(); }
/* "text" or "json"; false for anything else. */
bool ls_log_parse_format(const char *name, ls_log_format *out);

/* Key/value pairs follow msg as strings and end with NULL. */
void ls_log_write(char severity, int v, const char *file, int line, const char *msg, ...)
    __attribute__((sentinel));

/* klog.KObj: an object reference as a value, written "ns/name" in text and
 * {"name":...,"namespace":...} in JSON, as klog does. Fills buf (a marker
 * byte, then ns/name) and returns it. */
#define LS_LOG_KOBJ_MARK '\x1d'
const char *ls_log_kobj(char *buf, size_t cap, const char *ns, const char *name);

#define ls_log_info(v, ...)                                                                                \
    do {                                                                                                   \
        if (ls_log_enabled(v))                                                                             \
            ls_log_write('I', (v), __FILE__, __LINE__, __VA_ARGS__, (const char *)0);                      \
    } while (0)
#define ls_log_warning(...) ls_log_write('W', 0, __FILE__, __LINE__, __VA_ARGS__, (const char *)0)
#define ls_log_error(...) ls_log_write('E', 0, __FILE__, __LINE__, __VA_ARGS__, (const char *)0)

#endif
