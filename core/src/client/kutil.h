/*
 * kutil.h: small helpers the client modules share (internal): files, base64,
 * Kubernetes time stamps, jittered random numbers, URL query encoding.
 */
#ifndef LS_CLIENT_KUTIL_H
#define LS_CLIENT_KUTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "luasched/base.h"

#include <stdio.h>

/* Reads a whole file into a NUL-terminated heap buffer; *len gets the size
 * without the NUL. Errors read "PATH: strerror". */
char *ls_kutil_read_file(const char *path, size_t *len, ls_error *err);
/* Standard base64 (padding optional, whitespace ignored); NULL on bad input.
 * The result is NUL-terminated; *len is its size without the NUL. */
char *ls_kutil_base64_decode(const char *in, size_t in_len, size_t *len);

/* RFC 3339 in UTC: with microseconds ("2026-01-02T03:04:05.123456Z", a
 * Kubernetes MicroTime) or without ("2026-01-02T03:04:05Z", a metav1.Time). */
void ls_kutil_micro_time(char out[32]);
void ls_kutil_time(char out[32]);

/* Monotonic milliseconds, for intervals. */
int64_t ls_kutil_now_ms(void);
/* Sleeps ms in small steps and returns early (false) once *stop is non-zero. */
bool ls_kutil_sleep_ms(int64_t ms, const atomic_int *stop);

/* A module's background thread (informer, leader election): started once,
 * stopped by setting the module's stop flag and joined once. */
typedef struct ls_kthread {
    pthread_t thread;
    bool started, joined;
} ls_kthread;
/* Errors read "WHO: already started" / "WHO: cannot start its thread". */
bool ls_kthread_start(ls_kthread *t, void *(*fn)(void *), void *arg, const char *who, ls_error *err);
/* Sets *stop, then joins the thread if it runs. Idempotent. */
void ls_kthread_stop(ls_kthread *t, atomic_int *stop);

/* Thread-safe random numbers (a per-thread generator seeded from the clock,
 * the thread and /dev/urandom when readable). */
uint64_t ls_kutil_rand(void);
/* d scaled by a factor in [1 - jitter/2, 1 + jitter/2). */
int64_t ls_kutil_jitter_ms(int64_t d, double jitter);
/* A random (version 4) UUID, lower-case, 36 characters + NUL. */
void ls_kutil_uuid(char out[37]);

/* The "message" of a Kubernetes Status body, else the start of the body, else
 * "HTTP <status>", into out. */
void ls_kutil_status_message(long status, const char *body, size_t len, char *out, size_t cap);

/* Appends s percent-encoded for a URL query value. */
void ls_buf_add_query(ls_buf *b, const char *s);

/* A hash map from strings (copied) to pointers, chained. */
typedef struct ls_kmap_entry {
    char *key;
    void *value;
    struct ls_kmap_entry *next;
    uint64_t seq;       /* insertion order (ls_kmap_in_order) */
} ls_kmap_entry;
typedef struct ls_kmap {
    ls_kmap_entry **buckets;
    uint32_t cap, len;
    uint64_t next_seq;
} ls_kmap;
void ls_kmap_init(ls_kmap *m);
void *ls_kmap_get(const ls_kmap *m, const char *key);
/* Returns the value it replaces (NULL when the key is new). */
void *ls_kmap_put(ls_kmap *m, const char *key, void *value);
/* Returns the removed value (NULL when absent). */
void *ls_kmap_remove(ls_kmap *m, const char *key);
/* free_value (may be NULL) is called on every value, NULL ones included. */
void ls_kmap_free(ls_kmap *m, void (*free_value)(void *));
/* The entries in insertion order (m->len of them, malloc'd; the caller frees
 * the array). */
ls_kmap_entry **ls_kmap_in_order(const ls_kmap *m);
/* Iteration: for (i < m->cap) for (ls_kmap_entry *e = m->buckets[i]; e; e = e->next) */

/* A string member of a JSON object, NULL when absent or not a string. */
const char *ls_kutil_json_str(const cJSON *obj, const char *key);
/* obj.metadata.<key> as a string, NULL when absent. */
const char *ls_kutil_meta_str(const cJSON *obj, const char *key);

#endif
