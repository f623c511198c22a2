/*
 * fuzz_common.h: what the libFuzzer targets in spec/fuzz share.
 *
 * A target must free everything it is handed (LeakSanitizer runs), and must
 * abort only on a real bug: FUZZ_CHECK is for invariants the headers promise.
 */
#ifndef LS_FUZZ_COMMON_H
#define LS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luasched/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond, ...)                                                        \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: invariant failed: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* The input as a C string (it may hold NULs; the copy ends at the first). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The intern table only grows, and every run adds the input's strings to it.
 * It is emptied once it holds this many, which keeps a long run well inside
 * libFuzzer's -rss_limit_mb (2048 by default) without resetting on every run
 * (a reset per run would hide bugs that need a populated table). */
#ifndef FUZZ_INTERN_LIMIT
#define FUZZ_INTERN_LIMIT 200000
#endif

/* After a reset "*" is interned first again: config.c caches its id in a
 * static (ls_str star), which must keep naming "*" across resets. Call this
 * before anything else interns, and at the start of every run. */
static inline void fuzz_intern_prepare(void)
{
    if (ls_intern_count() > FUZZ_INTERN_LIMIT)
        ls_intern_reset();
    if (ls_intern_count() == 0)
        ls_intern_cstr("*");
}

/* An upper bound on the line any node of an input can start on: every line
 * break (whatever the encoding) takes at least one byte. */
static inline int fuzz_max_line(size_t size)
{
    return size > (size_t)INT32_MAX - 1 ? INT32_MAX : (int)size + 1;
}

#endif
