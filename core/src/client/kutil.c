/*
 * kutil.c: helpers shared by the client modules. See kutil.h.
 */
#include "client/kutil.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

char *ls_kutil_read_file(const char *path, size_t *len, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_errorf(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = ls_read_stream(f, len);
    fclose(f);
    if (!text)
        ls_errorf(err, "%s: read error", path);
    return text;
}

bool ls_kthread_start(ls_kthread *t, void *(*fn)(void *), void *arg, const char *who, ls_error *err)
{
    if (t->started)
        return ls_errorf(err, "%s: already started", who);
    if (pthread_create(&t->thread, NULL, fn, arg) != 0)
        return ls_errorf(err, "%s: cannot start its thread", who);
    t->started = true;
    return true;
}

void ls_kthread_stop(ls_kthread *t, atomic_int *stop)
{
    atomic_store(stop, 1);
    if (t->started && !t->joined) {
        pthread_join(t->thread, NULL);
        t->joined = true;
    }
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

char *ls_kutil_base64_decode(const char *in, size_t in_len, size_t *len)
{
    char *out = ls_xmalloc(in_len / 4 * 3 + 4);
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    for (size_t i = 0; i < in_len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (bits >= 6 || pad > 2) {   /* a lone sextet cannot end valid base64 */
        free(out);
        return NULL;
    }
    out[n] = '\0';
    *len = n;
    return out;
}

static void format_time(char out[32], bool micro)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    char tmp[64];
    if (micro)
        snprintf(tmp, sizeof tmp, "%s.%06dZ", base, (int)(ts.tv_nsec / 1000));
    else
        snprintf(tmp, sizeof tmp, "%sZ", base);
    snprintf(out, 32, "%.31s", tmp);
}

void ls_kutil_micro_time(char out[32])
{
    format_time(out, true);
}

void ls_kutil_time(char out[32])
{
    format_time(out, false);
}

int64_t ls_kutil_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ls_kutil_sleep_ms(int64_t ms, const atomic_int *stop)
{
    int64_t end = ls_kutil_now_ms() + ms;
    for (;;) {
        if (stop && atomic_load(stop))
            return false;
        int64_t left = end - ls_kutil_now_ms();
        if (left <= 0)
            return true;
        if (left > 20)
            left = 20;   /* short steps: a stop is noticed within 20 ms */
        struct timespec ts = {0, (long)left * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static _Thread_local uint64_t rng_state;

static uint64_t seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1)
            s = 0;
        fclose(f);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&rng_state;
    return s ? s : 0x853c49e6748fea9bull;
}

uint64_t ls_kutil_rand(void)
{
    if (!rng_state)
        rng_state = seed();
    /* xorshift64*: plenty for jitter and identities; not for secrets. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

int64_t ls_kutil_jitter_ms(int64_t d, double jitter)
{
    double u = (double)(ls_kutil_rand() >> 11) / 9007199254740992.0;   /* [0, 1) */
    return (int64_t)((double)d * (1.0 - jitter / 2 + jitter * u));
}

void ls_kutil_uuid(char out[37])
{
    uint8_t b[16];
    uint64_t hi = ls_kutil_rand(), lo = ls_kutil_rand();
    memcpy(b, &hi, 8);
    memcpy(b + 8, &lo, 8);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

void ls_kutil_status_message(long status, const char *body, size_t len, char *out, size_t cap)
{
    cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const char *msg = ls_kutil_json_str(j, "message");
    if (msg && *msg) {
        snprintf(out, cap, "%s", msg);
    } else if (body && len) {
        size_t n = len < cap - 1 ? len : cap - 1;
        for (size_t i = 0; i < n; i++)
            out[i] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : ' ';
        out[n] = '\0';
        while (n > 0 && out[n - 1] == ' ')
            out[--n] = '\0';
    } else {
        snprintf(out, cap, "HTTP %ld", status);
    }
    cJSON_Delete(j);
}

void ls_buf_add_query(ls_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~') {
            ls_buf_add(b, (const char *)p, 1);
        } else {
            char enc[3] = {'%', hex[c >> 4], hex[c & 15]};
            ls_buf_add(b, enc, 3);
        }
    }
}

const char *ls_kutil_json_str(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *ls_kutil_meta_str(const cJSON *obj, const char *key)
{
    return ls_kutil_json_str(obj ? cJSON_GetObjectItemCaseSensitive(obj, "metadata") : NULL, key);
}

static uint32_t kmap_hash(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

void ls_kmap_init(ls_kmap *m)
{
    m->cap = 64;
    m->len = 0;
    m->buckets = ls_xcalloc(m->cap, sizeof *m->buckets);
}

static void kmap_grow(ls_kmap *m)
{
    uint32_t cap = m->cap * 2;
    ls_kmap_entry **b = ls_xcalloc(cap, sizeof *b);
    for (uint32_t i = 0; i < m->cap; i++) {
        for (ls_kmap_entry *e = m->buckets[i], *next; e; e = next) {
            next = e->next;
            uint32_t h = kmap_hash(e->key) & (cap - 1);
            e->next = b[h];
            b[h] = e;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->cap = cap;
}

static ls_kmap_entry **kmap_slot(const ls_kmap *m, const char *key)
{
    ls_kmap_entry **p = &m->buckets[kmap_hash(key) & (m->cap - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

void *ls_kmap_get(const ls_kmap *m, const char *key)
{
    ls_kmap_entry *e = *kmap_slot(m, key);
    return e ? e->value : NULL;
}

void *ls_kmap_put(ls_kmap *m, const char *key, void *value)
{
    ls_kmap_entry **p = kmap_slot(m, key);
    if (*p) {
        void *old = (*p)->value;
        (*p)->value = value;
        return old;
    }
    ls_kmap_entry *e = ls_xcalloc(1, sizeof *e);
    e->key = ls_xstrdup(key);
    e->value = value;
    e->seq = m->next_seq++;
    *p = e;
    if (++m->len > m->cap)   /* load factor 1: chains stay short */
        kmap_grow(m);
    return NULL;
}

static int by_insertion(const void *a, const void *b)
{
    uint64_t x = (*(ls_kmap_entry *const *)a)->seq, y = (*(ls_kmap_entry *const *)b)->seq;
    return x < y ? -1 : x > y;
}

ls_kmap_entry **ls_kmap_in_order(const ls_kmap *m)
{
    ls_kmap_entry **out = ls_xcalloc(m->len + 1, sizeof *out);
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->cap; i++)
        for (ls_kmap_entry *e = m->buckets[i]; e; e = e->next)
            out[n++] = e;
    qsort(out, n, sizeof *out, by_insertion);
    return out;
}

void *ls_kmap_remove(ls_kmap *m, const char *key)
{
    ls_kmap_entry **p = kmap_slot(m, key);
    ls_kmap_entry *e = *p;
    if (!e)
        return NULL;
    *p = e->next;
    void *value = e->value;
    free(e->key);
    free(e);
    m->len--;
    return value;
}

void ls_kmap_free(ls_kmap *m, void (*free_value)(void *))
{
    for (uint32_t i = 0; i < m->cap; i++) {
        for (ls_kmap_entry *e = m->buckets[i], *next; e; e = next) {
            next = e->next;
            if (free_value)
                free_value(e->value);
            free(e->key);
            free(e);
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->cap = m->len = 0;
}
