/*
 * watch.c: newline-delimited JSON framing of watch streams. See watch.h.
 *
 * Bytes are decoded straight from the caller's chunk when a line lies wholly
 * inside it; only a line split across chunks is copied into the buffer, so a
 * busy stream of small events costs no copy.
 */
#include "client/watch.h"

#include <stdlib.h>
#include <string.h>

#define LS_WATCH_DEFAULT_MAX_LINE ((size_t)64 << 20)

struct ls_watch_decoder {
    char *buf;
    size_t len, cap;
    size_t max_line;
    bool skipping;   /* inside a line already reported as too long */
    size_t events;
};

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

const char *ls_watch_type_name(ls_watch_type t)
{
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "?";
}

ls_watch_decoder *ls_watch_decoder_new(size_t max_line)
{
    ls_watch_decoder *d = ls_xcalloc(1, sizeof *d);
    d->max_line = max_line ? max_line : LS_WATCH_DEFAULT_MAX_LINE;
    return d;
}

void ls_watch_decoder_free(ls_watch_decoder *d)
{
    if (!d)
        return;
    free(d->buf);
    free(d);
}

void ls_watch_reset(ls_watch_decoder *d)
{
    d->len = 0;
    d->skipping = false;
}

size_t ls_watch_count(const ls_watch_decoder *d)
{
    return d->events;
}

static bool parse_type(const cJSON *t, ls_watch_type *out)
{
    if (!cJSON_IsString(t))
        return false;
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        if (strcmp(t->valuestring, type_names[i]) == 0) {
            *out = (ls_watch_type)i;
            return true;
        }
    }
    return false;
}

/* A short, printable excerpt of a bad line for the error message. */
static void excerpt(const char *line, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < cap; i++)
        out[n++] = (line[i] >= 0x20 && line[i] < 0x7f) ? line[i] : '?';
    out[n] = '\0';
}

typedef enum { LINE_OK, LINE_BAD, LINE_STOP } line_result;

/* Decodes one line (without its "\n"; a trailing "\r" is dropped here). */
static line_result decode_line(ls_watch_decoder *d, const char *line, size_t len, ls_watch_event_fn fn,
                               void *ud, ls_error *err)
{
    if (len && line[len - 1] == '\r')
        len--;
    size_t lead = 0;
    while (lead < len && (line[lead] == ' ' || line[lead] == '\t' || line[lead] == '\r'))
        lead++;
    if (lead == len)
        return LINE_OK;   /* blank line: keep-alive padding */
    char ex[64];
    cJSON *root = cJSON_ParseWithLength(line, len);
    if (!root || !cJSON_IsObject(root)) {
        excerpt(line + lead, len - lead, ex, sizeof ex);
        ls_errorf(err, "watch stream: event is not a JSON object: \"%s\"", ex);
        cJSON_Delete(root);
        return LINE_BAD;
    }
    ls_watch_event ev;
    if (!parse_type(cJSON_GetObjectItemCaseSensitive(root, "type"), &ev.type)) {
        excerpt(line + lead, len - lead, ex, sizeof ex);
        ls_errorf(err, "watch stream: event without a known \"type\": \"%s\"", ex);
        cJSON_Delete(root);
        return LINE_BAD;
    }
    ev.object = cJSON_DetachItemFromObjectCaseSensitive(root, "object");
    cJSON_Delete(root);
    if (!cJSON_IsObject(ev.object)) {
        ls_errorf(err, "watch stream: %s event without an \"object\" object", ls_watch_type_name(ev.type));
        cJSON_Delete(ev.object);
        return LINE_BAD;
    }
    d->events++;
    ls_error cb_err = {{0}};
    bool go_on = fn(ud, &ev, &cb_err);
    cJSON_Delete(ev.object);
    if (!go_on) {
        if (cb_err.msg[0])
            *err = cb_err;
        else
            ls_errorf(err, "watch stream: stopped by the event handler");
        return LINE_STOP;
    }
    return LINE_OK;
}

static void buf_append(ls_watch_decoder *d, const char *p, size_t n)
{
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        d->buf = ls_xrealloc(d->buf, cap);
        d->cap = cap;
    }
    memcpy(d->buf + d->len, p, n);
    d->len += n;
}

/* Remembers the first problem of a chunk; later ones are dropped. */
static void note_bad(bool *bad, ls_error *first, const ls_error *e)
{
    if (!*bad)
        *first = *e;
    *bad = true;
}

bool ls_watch_feed(ls_watch_decoder *d, const char *data, size_t len, ls_watch_event_fn fn, void *ud,
                   ls_error *err)
{
    bool bad = false;
    ls_error e = {{0}};
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) : len;
        if (d->skipping) {
            if (nl)
                d->skipping = false;
        } else if (d->len + take > d->max_line) {
            ls_errorf(&e, "watch stream: event larger than %zu bytes", d->max_line);
            note_bad(&bad, err, &e);
            d->len = 0;
            d->skipping = nl == NULL;
        } else if (!nl) {
            buf_append(d, data, take);
        } else {
            line_result r;
            if (d->len == 0) {
                r = decode_line(d, data, take, fn, ud, &e);
            } else {
                buf_append(d, data, take);
                r = decode_line(d, d->buf, d->len, fn, ud, &e);
                d->len = 0;
            }
            if (r == LINE_STOP) {
                *err = e;
                return false;
            }
            if (r == LINE_BAD)
                note_bad(&bad, err, &e);
        }
        if (!nl)
            break;
        data = nl + 1;
        len -= take + 1;
    }
    return !bad;
}

bool ls_watch_finish(ls_watch_decoder *d, ls_watch_event_fn fn, void *ud, ls_error *err)
{
    if (d->skipping) {
        ls_watch_reset(d);
        return true;   /* already reported by ls_watch_feed */
    }
    if (d->len == 0)
        return true;
    line_result r = decode_line(d, d->buf, d->len, fn, ud, err);
    d->len = 0;
    return r == LINE_OK;
}
