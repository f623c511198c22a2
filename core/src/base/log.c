/*
 * log.c: klog-style structured logs (see luasched/log.h). A line is built in
 * one growing buffer and written with one fwrite under a lock, so lines from informer,
 * writer and scheduling threads never interleave.
 */
#include "luasched/log.h"

#include "luasched/base.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct {
    int verbosity;
    ls_log_format format;
    FILE *out;
} log_cfg = {0, LS_LOG_TEXT, NULL};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* Held across fork() once asked (ls_log_guard_fork): a child forked while
 * another thread writes a line would otherwise find the lock taken forever. */
static void log_lock_take(void)
{
    pthread_mutex_lock(&log_lock);
}

static void log_lock_give(void)
{
    pthread_mutex_unlock(&log_lock);
}

static void log_guard_install(void)
{
    pthread_atfork(log_lock_take, log_lock_give, log_lock_give);
}

void ls_log_guard_fork(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, log_guard_install);
}

void ls_log_setup(int verbosity, ls_log_format format, FILE *out)
{
    log_cfg.verbosity = verbosity;
    log_cfg.format = format;
    log_cfg.out = out;
}

int ls_log_verbosity(void)
{
    return log_cfg.verbosity;
}

bool ls_log_parse_format(const char *name, ls_log_format *out)
{
    if (strcmp(name, "text") == 0)
        *out = LS_LOG_TEXT;
    else if (strcmp(name, "json") == 0)
        *out = LS_LOG_JSON;
    else
        return false;
    return true;
}

typedef struct line_buf {
    char *data;
    size_t len, cap;
} line_buf;

static void reserve(line_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    while (b->len + more + 1 > b->cap)
        b->cap = b->cap ? b->cap * 2 : 512;
    b->data = ls_xrealloc(b->data, b->cap);
}

static void put_char(line_buf *b, char c)
{
    reserve(b, 1);
    b->data[b->len++] = c;
}

static void put_str(line_buf *b, const char *s)
{
    while (*s)
        put_char(b, *s++);
}

static void put_fmt(line_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(line_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* A Go-style quoted string: both klog's text values and JSON strings escape
 * quotes, backslashes and control characters the same way. */
static void put_quoted(line_buf *b, const char *s)
{
    put_char(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put_char(b, '\\');
            put_char(b, (char)c);
        } else if (c == '\n') {
            put_str(b, "\\n");
        } else if (c == '\t') {
            put_str(b, "\\t");
        } else if (c < 0x20) {
            put_fmt(b, "\\u%04x", c);
        } else {
            put_char(b, (char)c);
        }
    }
    put_char(b, '"');
}

const char *ls_log_kobj(char *buf, size_t cap, const char *ns, const char *name)
{
    if (ns && *ns)
        snprintf(buf, cap, "%c%s/%s", LS_LOG_KOBJ_MARK, ns, name ? name : "");
    else
        snprintf(buf, cap, "%c%s", LS_LOG_KOBJ_MARK, name ? name : "");
    return buf;
}

/* A value: an object reference (ls_log_kobj) as klog writes KObj, else a
 * quoted string. */
static void put_value(line_buf *b, const char *value, bool json)
{
    if (!value || value[0] != LS_LOG_KOBJ_MARK) {
        put_quoted(b, value ? value : "<nil>");
        return;
    }
    const char *ref = value + 1;
    if (!json) {
        put_quoted(b, ref);
        return;
    }
    const char *slash = strchr(ref, '/');
    put_str(b, "{\"name\":");
    put_quoted(b, slash ? slash + 1 : ref);
    if (slash) {
        char ns[300];
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - ref), ref);
        put_str(b, ",\"namespace\":");
        put_quoted(b, ns);
    }
    put_char(b, '}');
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void text_header(line_buf *b, char severity, const char *file, int line)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    put_fmt(b, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] ", severity, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
            tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, (long)syscall(SYS_gettid), base_name(file), line);
}

static void json_header(line_buf *b, char severity, int v, const char *file, int line, const char *msg)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    put_fmt(b, "{\"ts\":%ld.%06ld,\"caller\":\"%s:%d\",\"msg\":", (long)ts.tv_sec, ts.tv_nsec / 1000,
            base_name(file), line);
    put_quoted(b, msg);
    if (severity == 'I')
        put_fmt(b, ",\"v\":%d", v);
}

void ls_log_write(char severity, int v, const char *file, int line, const char *msg, ...)
{
    line_buf b = {0};
    bool json = log_cfg.format == LS_LOG_JSON;
    if (json) {
        json_header(&b, severity, v, file, line, msg);
    } else {
        text_header(&b, severity, file, line);
        put_quoted(&b, msg);
    }
    va_list ap;
    va_start(ap, msg);
    for (const char *key; (key = va_arg(ap, const char *));) {
        const char *value = va_arg(ap, const char *);
        if (json) {
            put_char(&b, ',');
            put_quoted(&b, key);
            put_char(&b, ':');
        } else {
            put_char(&b, ' ');
            put_str(&b, key);
            put_char(&b, '=');
        }
        put_value(&b, value, json);
    }
    va_end(ap);
    if (json)
        put_char(&b, '}');
    put_char(&b, '\n');
    FILE *out = log_cfg.out ? log_cfg.out : stderr;
    pthread_mutex_lock(&log_lock);
    fwrite(b.data, 1, b.len, out);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
    free(b.data);
}
