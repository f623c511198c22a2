/*
 * base.h: what every module shares: interned strings, arenas, and errors that
 * carry their context (file, line, field) up to the one place that prints them.
 *
 * Text between "ffi:begin" and "ffi:end" markers is also the LuaJIT cdef: the
 * build concatenates those blocks into lua/luasched/cdefs.lua, so C and Lua can
 * never disagree on a layout. Keep those blocks free of includes and of macros
 * other than the function-like ones these headers define (X-macro lists),
 * which the generator expands (core/gen_cdefs.lua).
 */
#ifndef LUASCHED_BASE_H
#define LUASCHED_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

/* LS_ABI_VERSION: a hash of the FFI-visible text of the public headers,
 * generated at build time by core/gen_cdefs.lua, so it changes whenever a
 * layout or signature Lua sees does; lua/luasched refuses to run against a
 * library whose number differs. */
#include "luasched/abi.h"

/* ffi:begin */
/* An interned string. 0 is "no string" (an absent field); "" has its own id. */
typedef uint32_t ls_str;

int ls_abi_version(void);
ls_str ls_intern_lookup(const char *s, size_t len);  /* 0 if never interned */
ls_str ls_intern(const char *s, size_t len);
/* ls_intern for plugin code (ls.intern, statuses): interned strings are never
 * freed, so what plugins add is capped per account (a profile's scheduler
 * name: bytes, entry overhead counted, against `cap`, the profile's Lua memory
 * limit); 0 once a new string would pass the account's cap. A string made so
 * is marked plugin-made until the runtime interns it too (ls_str_plugin_made):
 * a profile reads such an id only if it made it itself (lua/luasched.lua). */
ls_str ls_intern_plugin(const char *s, size_t len, ls_str account, uint64_t cap);
uint64_t ls_intern_plugin_bytes(ls_str account);   /* what the account's plugins interned */
bool ls_str_plugin_made(ls_str id);
const char *ls_str_get(ls_str id);                    /* "" for 0 */
uint32_t ls_str_len(ls_str id);

/* An error with its context. Functions that can fail take an ls_error * and
 * return false / NULL; the caller adds context or prints. */
typedef struct ls_error {
    char msg[1024];
} ls_error;

/* CLOCK_MONOTONIC in seconds (the sampled plugin durations time with it). */
double ls_monotonic_seconds(void);

/* The CLOCK_REALTIME instant `ms` milliseconds from now: the deadline
 * pthread_cond_timedwait takes (its condition uses the default clock). */
struct timespec ls_realtime_after_ms(long ms);

/* The candidate closest to `word` (another case, a prefix of three letters or
 * more, or an edit distance within a third of its length), for "did you
 * mean": NULL when none is close. One rule for every misspelling message. */
const char *ls_did_you_mean(const char *word, const char *const *candidates, size_t n);

/* The candidate `word` misspells as an identifier (case and underscores
 * ignored, one edit at most, none under four letters, no prefix rule): a
 * plugin's P:filtr or P:preFilter for a hook. NULL when none. */
const char *ls_misspelling_of(const char *word, const char *const *candidates, size_t n);
/* ffi:end */

/* ls_intern for the runtime's private keys (the status registry's): marked
 * plugin-made unless the runtime interned the text already, so no profile's
 * ls.str reads it. */
ls_str ls_intern_hidden(const char *s, size_t len);

ls_str ls_intern_cstr(const char *s);
/* The intern table's lock is held across fork() from now on (a child
 * forked while another thread interns would find it taken forever). */
void ls_intern_guard_fork(void);
void ls_intern_reset(void);      /* frees the table: only at process exit / in tests */
uint32_t ls_intern_count(void);

/* Bump allocator: objects that live and die together (one pod, one config) share
 * an arena, so freeing them is one call and nothing can leak piecemeal. */
typedef struct ls_arena_chunk ls_arena_chunk;
typedef struct ls_arena {
    ls_arena_chunk *head;
    size_t used_bytes;
} ls_arena;

void ls_arena_init(ls_arena *a);
void *ls_arena_alloc(ls_arena *a, size_t size);          /* zeroed, 16-aligned */
void *ls_arena_memdup(ls_arena *a, const void *p, size_t size);
char *ls_arena_strdup(ls_arena *a, const char *s);
char *ls_arena_strdup_opt(ls_arena *a, const char *s);  /* NULL stays NULL */
char *ls_arena_printf(ls_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ls_arena_free(ls_arena *a);

bool ls_errorf(ls_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool ls_verrorf(ls_error *err, const char *fmt, va_list ap);
/* The message "where: message", or the bare message when where is NULL or "". */
bool ls_verror_at(ls_error *err, const char *where, const char *fmt, va_list ap);
/* Prepends "prefix: " to an existing message. */
bool ls_error_prefix(ls_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Growable array of fixed-size items (owner frees with ls_vec_free). */
typedef struct ls_vec {
    void *data;
    uint32_t len, cap;
    uint32_t item_size;
} ls_vec;

void ls_vec_init(ls_vec *v, uint32_t item_size);
void *ls_vec_push(ls_vec *v);                 /* returns a zeroed slot */
void ls_vec_free(ls_vec *v);
#define LS_VEC_AT(v, type, i) (((type *)(v)->data)[i])

/* Critical sections: code that takes locks or allocates (malloc, the intern
 * table) while running on behalf of a plugin. The Lua watchdog never cuts a
 * runaway plugin off inside one: it defers until the outermost section ends.
 * Sections are counted per thread. */
void ls_critical_enter(void);
void ls_critical_leave(void);
/* From a signal handler: run f now if outside any section (returns false), or
 * at the end of the current one (returns true). */
bool ls_critical_defer(void (*f)(void));
/* True while this thread is inside a critical section. */
bool ls_critical_active(void);

/* Called before the process ends for want of memory (ls_x* below, the Lua
 * allocator in a worker): a worker process describes the plugin call running
 * in its shared page, so that its supervisor can say why it ended. */
extern void (*ls_out_of_memory_hook)(size_t bytes);
/* Says "out of memory (N bytes)" on stderr, calls the hook, and aborts. */
_Noreturn void ls_out_of_memory(size_t bytes);
void *ls_xmalloc(size_t n);
void *ls_xcalloc(size_t n, size_t size);
void *ls_xrealloc(void *p, size_t n);
char *ls_xstrdup(const char *s);
/* The first n bytes of s (which need not be NUL-terminated) as a heap string. */
char *ls_xstrndup(const char *s, size_t n);
/* The non-empty pieces of a sep-separated list, as heap strings into out (at
 * most max of them, in order); returns how many. */
size_t ls_split(const char *list, char sep, char **out, size_t max);
/* Frees n heap strings and the array that holds them (either may be NULL). */
void ls_strv_free(char **v, size_t n);

/* A growable byte buffer, kept NUL-terminated (data is NULL until the first
 * add): the API client's URLs and bodies, the HTTP server's responses. */
typedef struct ls_buf {
    char *data;
    size_t len, cap;
} ls_buf;
/* Room for n more bytes (and a NUL) at the end of b: where they go; the
 * length is not moved (the caller writes, then adds to b->len). */
char *ls_buf_reserve(ls_buf *b, size_t n);
void ls_buf_add(ls_buf *b, const void *p, size_t n);
void ls_buf_adds(ls_buf *b, const char *s);
void ls_buf_addf(ls_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ls_buf_free(ls_buf *b);

/* The rest of an open stream, read through EOF rather than trusting a size (so
 * pipes and /dev/stdin work), NUL-terminated in a heap buffer; *len gets the
 * size without the NUL. NULL on a read error, with errno as the read left it. */
char *ls_read_stream(FILE *f, size_t *len);

#endif
