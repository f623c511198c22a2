/*
 * base.c: string interning, arenas, growable vectors and error formatting.
 *
 * The intern table is process-wide: ids are compared across pods, nodes,
 * selectors and plugins, so one table is the point. Decoding on informer
 * threads interns while the scheduling thread reads (see below).
 */
#include "luasched/base.h"

#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void (*ls_out_of_memory_hook)(size_t bytes);

_Noreturn void ls_out_of_memory(size_t bytes)
{
    if (ls_out_of_memory_hook)
        ls_out_of_memory_hook(bytes);
    fprintf(stderr, "luasched: out of memory (%zu bytes)\n", bytes);
    abort();
}

void *ls_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ls_out_of_memory(n);
    return p;
}

void *ls_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        ls_out_of_memory(n * size);
    return p;
}

void *ls_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ls_out_of_memory(n);
    return q;
}

char *ls_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(ls_xmalloc(n), s, n);
}

char *ls_xstrndup(const char *s, size_t n)
{
    char *p = ls_xmalloc(n + 1);
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

size_t ls_split(const char *list, char sep, char **out, size_t max)
{
    size_t count = 0;
    for (const char *p = list; *p && count < max;) {
        const char *end = strchr(p, sep);
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n)
            out[count++] = ls_xstrndup(p, n);
        p += n + (end ? 1 : 0);
    }
    return count;
}

void ls_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- critical sections (see base.h) */

/* Per thread: the watchdog's signal goes to the scheduling thread and asks
 * whether that thread is inside a section. One counter shared by every thread
 * (informer threads intern strings too) lost updates under the race and could
 * stay above zero, deferring the cut-off of a runaway plugin forever. */
/* initial-exec: a plain %fs-relative access instead of a __tls_get_addr call
 * (the allocator of every Lua state enters a section per block); 16 bytes of
 * the static TLS surplus when the library is dlopen'ed (the Lua specs). */
#define LS_TLS_IE __attribute__((tls_model("initial-exec")))
static _Thread_local volatile sig_atomic_t critical_depth LS_TLS_IE;
static _Thread_local void (*volatile critical_deferred)(void) LS_TLS_IE;

void ls_critical_enter(void)
{
    critical_depth++;
}

void ls_critical_leave(void)
{
    if (--critical_depth == 0 && critical_deferred) {
        void (*f)(void) = critical_deferred;
        critical_deferred = NULL;
        f();
    }
}

bool ls_critical_active(void)
{
    return critical_depth > 0;
}

bool ls_critical_defer(void (*f)(void))
{
    if (critical_depth > 0) {
        critical_deferred = f;
        return true;
    }
    return false;
}

/* ---- interning: open addressing on FNV-1a, strings stored with their length
 *
 * Informer threads decode objects (and so intern strings) while the scheduling
 * thread reads them. Writers and slot lookups take a mutex; ls_str_get stays
 * lock-free because entries live in chunks that never move once published, and
 * the count is stored with release order after an entry is complete. */

#include <pthread.h>
#include <stdatomic.h>

enum { INTERN_CHUNK_BITS = 14, INTERN_CHUNK = 1u << INTERN_CHUNK_BITS, INTERN_MAX_CHUNKS = 1u << 14 };

typedef struct intern_entry {
    char *str;
    uint32_t len;
    uint32_t hash;
    bool plugin_only;   /* made by plugin code and never by the runtime (ls_str_plugin_made) */
} intern_entry;

static struct {
    intern_entry *chunks[INTERN_MAX_CHUNKS]; /* entry id lives in chunks[id >> BITS]; id 0 is the null string */
    _Atomic uint32_t count;
    uint32_t *slots;         /* id per slot, 0 = empty */
    uint32_t nslots;
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork() from one thread while another interns (a channel's reader decoding
 * an object): the child would find the lock taken forever. Held across the
 * fork instead (the what-if evaluator, cli/whatif_worker.c). */
static void intern_lock_take(void)
{
    pthread_mutex_lock(&intern_lock);
}

static void intern_lock_give(void)
{
    pthread_mutex_unlock(&intern_lock);
}

static void intern_guard_install(void)
{
    pthread_atfork(intern_lock_take, intern_lock_give, intern_lock_give);
}

void ls_intern_guard_fork(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, intern_guard_install);
}

static intern_entry *intern_entry_at(uint32_t id)
{
    return &interned.chunks[id >> INTERN_CHUNK_BITS][id & (INTERN_CHUNK - 1)];
}

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)s[i];
        h *= 16777619u;
    }
    return h;
}

static void intern_grow_slots(uint32_t count)
{
    uint32_t n = interned.nslots ? interned.nslots * 2 : 1024;
    uint32_t *slots = ls_xcalloc(n, sizeof *slots);
    for (uint32_t id = 1; id < count; id++) {
        uint32_t i = intern_entry_at(id)->hash & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id;
    }
    free(interned.slots);
    interned.slots = slots;
    interned.nslots = n;
}

static uint32_t *intern_find_slot(const char *s, size_t len, uint32_t h)
{
    uint32_t mask = interned.nslots - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t id = interned.slots[i];
        if (!id)
            return &interned.slots[i];
        const intern_entry *e = intern_entry_at(id);
        if (e->hash == h && e->len == len && memcmp(e->str, s, len) == 0)
            return &interned.slots[i];
    }
}

ls_str ls_intern_lookup(const char *s, size_t len)
{
    pthread_mutex_lock(&intern_lock);
    ls_str id = interned.nslots ? *intern_find_slot(s, len, hash_bytes(s, len)) : 0;
    pthread_mutex_unlock(&intern_lock);
    return id;
}

static ls_str intern_locked(const char *s, size_t len);

ls_str ls_intern(const char *s, size_t len)
{
    ls_critical_enter();
    pthread_mutex_lock(&intern_lock);
    ls_str id = intern_locked(s, len);
    intern_entry_at(id)->plugin_only = false;   /* the runtime's now: cluster data every profile reads */
    pthread_mutex_unlock(&intern_lock);
    ls_critical_leave();
    return id;
}

/* What plugins interned (base.h), per account (a profile): a profile that
 * interns without bound stops at its own cap, never at another's. */
enum { PLUGIN_ACCOUNTS = 64 };
static struct {
    ls_str account;
    size_t bytes;
} plugin_accounts[PLUGIN_ACCOUNTS];   /* under intern_lock; past 64 profiles the last slot is shared */

static size_t *account_bytes(ls_str account)
{
    for (int i = 0; i < PLUGIN_ACCOUNTS - 1; i++) {
        if (plugin_accounts[i].account == account || !plugin_accounts[i].account) {
            plugin_accounts[i].account = account;
            return &plugin_accounts[i].bytes;
        }
    }
    return &plugin_accounts[PLUGIN_ACCOUNTS - 1].bytes;
}

ls_str ls_intern_plugin(const char *s, size_t len, ls_str account, uint64_t cap)
{
    ls_critical_enter();
    pthread_mutex_lock(&intern_lock);
    ls_str id = interned.nslots ? *intern_find_slot(s, len, hash_bytes(s, len)) : 0;
    if (!id) {
        size_t cost = len + 1 + sizeof(intern_entry) + 2 * sizeof(uint32_t);
        size_t *bytes = account_bytes(account);
        if (len == 0 || *bytes + cost <= cap) {
            *bytes += cost;
            id = intern_locked(s, len);
            intern_entry_at(id)->plugin_only = len > 0;
        }
    }
    pthread_mutex_unlock(&intern_lock);
    ls_critical_leave();
    return id;
}

ls_str ls_intern_hidden(const char *s, size_t len)
{
    ls_critical_enter();
    pthread_mutex_lock(&intern_lock);
    ls_str id = interned.nslots ? *intern_find_slot(s, len, hash_bytes(s, len)) : 0;
    if (!id) {
        id = intern_locked(s, len);
        intern_entry_at(id)->plugin_only = len > 0;
    }
    pthread_mutex_unlock(&intern_lock);
    ls_critical_leave();
    return id;
}

uint64_t ls_intern_plugin_bytes(ls_str account)
{
    pthread_mutex_lock(&intern_lock);
    uint64_t n = *account_bytes(account);
    pthread_mutex_unlock(&intern_lock);
    return n;
}

bool ls_str_plugin_made(ls_str id)
{
    if (!id || id >= atomic_load_explicit(&interned.count, memory_order_acquire))
        return false;
    return intern_entry_at(id)->plugin_only;
}

static ls_str intern_locked(const char *s, size_t len)
{
    uint32_t count = atomic_load_explicit(&interned.count, memory_order_relaxed);
    if (!count)
        count = 1;
    if ((count + 1) * 2 > interned.nslots)
        intern_grow_slots(count);
    uint32_t h = hash_bytes(s, len);
    uint32_t *slot = intern_find_slot(s, len, h);
    if (*slot)
        return *slot;
    if ((count >> INTERN_CHUNK_BITS) >= INTERN_MAX_CHUNKS) {
        fprintf(stderr, "luasched: too many distinct strings (%u)\n", count);
        abort();
    }
    intern_entry **chunk = &interned.chunks[count >> INTERN_CHUNK_BITS];
    if (!*chunk)
        *chunk = ls_xcalloc(INTERN_CHUNK, sizeof **chunk);
    intern_entry *e = intern_entry_at(count);
    e->str = ls_xmalloc(len + 1);
    memcpy(e->str, s, len);
    e->str[len] = '\0';
    e->len = (uint32_t)len;
    e->hash = h;
    *slot = count;
    atomic_store_explicit(&interned.count, count + 1, memory_order_release);
    return count;
}

ls_str ls_intern_cstr(const char *s)
{
    return s ? ls_intern(s, strlen(s)) : 0;
}

const char *ls_str_get(ls_str id)
{
    if (!id || id >= atomic_load_explicit(&interned.count, memory_order_acquire))
        return "";
    return intern_entry_at(id)->str;
}

uint32_t ls_str_len(ls_str id)
{
    if (!id || id >= atomic_load_explicit(&interned.count, memory_order_acquire))
        return 0;
    return intern_entry_at(id)->len;
}

uint32_t ls_intern_count(void)
{
    uint32_t count = atomic_load(&interned.count);
    return count ? count - 1 : 0;
}

void ls_intern_reset(void)
{
    pthread_mutex_lock(&intern_lock);
    uint32_t count = atomic_load(&interned.count);
    for (uint32_t id = 1; id < count; id++)
        free(intern_entry_at(id)->str);
    for (uint32_t c = 0; c < INTERN_MAX_CHUNKS && interned.chunks[c]; c++)
        free(interned.chunks[c]);
    free(interned.slots);
    memset(interned.chunks, 0, sizeof interned.chunks);
    memset(plugin_accounts, 0, sizeof plugin_accounts);
    atomic_store(&interned.count, 0);
    interned.slots = NULL;
    interned.nslots = 0;
    pthread_mutex_unlock(&intern_lock);
}

int ls_abi_version(void)
{
    return LS_ABI_VERSION;
}

char *ls_read_stream(FILE *f, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = ls_xmalloc(cap);
    for (;;) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f)) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (feof(f))
            break;
        if (n == cap - 1)
            buf = ls_xrealloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

double ls_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec ls_realtime_after_ms(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

/* ---- arenas */

struct ls_arena_chunk {
    ls_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void ls_arena_init(ls_arena *a)
{
    a->head = NULL;
    a->used_bytes = 0;
}

void *ls_arena_alloc(ls_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    ls_arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > 1024 ? size : 1024;
        c = ls_xmalloc(sizeof *c + cap);
        c->size = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used_bytes += size;
    memset(p, 0, size);
    return p;
}

void *ls_arena_memdup(ls_arena *a, const void *p, size_t size)
{
    void *q = ls_arena_alloc(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

char *ls_arena_strdup(ls_arena *a, const char *s)
{
    return ls_arena_memdup(a, s, strlen(s) + 1);
}

char *ls_arena_strdup_opt(ls_arena *a, const char *s)
{
    return s ? ls_arena_strdup(a, s) : NULL;
}

char *ls_arena_printf(ls_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = ls_arena_alloc(a, (size_t)(n > 0 ? n : 0) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    va_end(ap);
    return s;
}

void ls_arena_free(ls_arena *a)
{
    ls_arena_chunk *c = a->head;
    while (c) {
        ls_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_bytes = 0;
}

/* ---- errors */

bool ls_verrorf(ls_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return false;
}

bool ls_errorf(ls_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_verrorf(err, fmt, ap);
    va_end(ap);
    return false;
}

bool ls_verror_at(ls_error *err, const char *where, const char *fmt, va_list ap)
{
    if (!err)
        return false;
    char msg[sizeof err->msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    bool at = where && *where;
    if (snprintf(err->msg, sizeof err->msg, "%s%s%s", at ? where : "", at ? ": " : "", msg) < 0)
        err->msg[0] = 0;
    return false;
}

bool ls_error_prefix(ls_error *err, const char *fmt, ...)
{
    if (!err)
        return false;
    char prefix[512], joined[sizeof prefix + sizeof err->msg + 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    /* Longer messages are cut at the buffer: the start (the context) matters most. */
    size_t n = strlen(joined);
    if (n >= sizeof err->msg)
        n = sizeof err->msg - 1;
    memcpy(err->msg, joined, n);
    err->msg[n] = '\0';
    return false;
}

/* ---- vectors */

void ls_vec_init(ls_vec *v, uint32_t item_size)
{
    v->data = NULL;
    v->len = v->cap = 0;
    v->item_size = item_size;
}

void *ls_vec_push(ls_vec *v)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->data = ls_xrealloc(v->data, (size_t)v->cap * v->item_size);
    }
    void *slot = (char *)v->data + (size_t)v->len * v->item_size;
    memset(slot, 0, v->item_size);
    v->len++;
    return slot;
}

void ls_vec_free(ls_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}
