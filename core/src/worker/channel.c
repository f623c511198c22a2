/*
 * channel.c: framed messages over the supervisor's and the worker's socket
 * (see channel.h).
 */
#include "worker/channel.h"

#include "luasched/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool ls_fd_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool ls_fd_read_all(int fd, void *data, size_t n, bool *eof)
{
    char *p = data;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (eof)
                *eof = r == 0 && got == 0;
            return false;
        }
        got += (size_t)r;
    }
    return true;
}

bool ls_chan_frame(ls_buf *out, uint8_t type, const char *const *fields, uint32_t n, const void *blob,
                   size_t blob_len)
{
    size_t total = 1 + blob_len;
    for (uint32_t i = 0; i < n; i++)
        total += strlen(fields[i] ? fields[i] : "") + 1;
    if (total > UINT32_MAX)
        return false;
    uint32_t len = (uint32_t)total;
    ls_buf_add(out, &len, 4);
    ls_buf_add(out, &type, 1);
    for (uint32_t i = 0; i < n; i++) {
        const char *s = fields[i] ? fields[i] : "";
        ls_buf_add(out, s, strlen(s) + 1);
    }
    if (blob_len)
        ls_buf_add(out, blob, blob_len);
    return true;
}

bool ls_chan_send_blob(int fd, pthread_mutex_t *mu, uint8_t type, const char *const *fields, uint32_t n,
                       const void *blob, size_t blob_len)
{
    ls_buf frame = {.data = ls_xmalloc(blob_len + 256), .cap = blob_len + 256};
    if (!ls_chan_frame(&frame, type, fields, n, blob, blob_len)) {
        ls_buf_free(&frame);
        return false;
    }
    if (mu)
        pthread_mutex_lock(mu);
    bool ok = ls_fd_write_all(fd, frame.data, frame.len);
    if (mu)
        pthread_mutex_unlock(mu);
    ls_buf_free(&frame);
    return ok;
}

bool ls_chan_send(int fd, pthread_mutex_t *mu, uint8_t type, const char *const *fields, uint32_t n)
{
    return ls_chan_send_blob(fd, mu, type, fields, n, NULL, 0);
}

/* The text fields before a type's binary tail; -1: no tail. */
static int fields_before_blob(uint8_t type)
{
    return type == LS_CH_OBJECT ? 3 : -1;
}

/* Splits m->buf (len bytes: type, fields) into m; false when malformed. */
static bool split_frame(ls_chan_msg *m, size_t len)
{
    m->type = (uint8_t)m->buf[0];
    int before_blob = fields_before_blob(m->type);
    size_t at = 1;
    while (at < len && (before_blob < 0 || m->n < (uint32_t)before_blob)) {
        const char *end = memchr(m->buf + at, 0, len - at);
        if (!end || m->n == LS_CHAN_MAX_FIELDS)
            return false;
        m->f[m->n++] = m->buf + at;
        at = (size_t)(end - m->buf) + 1;
    }
    if (before_blob >= 0) {
        if (m->n != (uint32_t)before_blob)
            return false;
        m->blob = m->buf + at;
        m->blob_len = len - at;
    }
    return true;
}

int ls_chan_recv(int fd, ls_chan_msg *m, size_t max_len)
{
    memset(m, 0, sizeof *m);
    uint32_t len;
    bool eof = false;
    if (!ls_fd_read_all(fd, (char *)&len, 4, &eof))
        return eof ? 0 : -1;
    if (len < 1 || len > max_len)
        return -1;
    m->buf = ls_xmalloc(len);
    if (!ls_fd_read_all(fd, m->buf, len, &eof) || !split_frame(m, len)) {
        ls_chan_msg_free(m);
        return -1;
    }
    return 1;
}

/* ---- reading ahead */

/* What a reader reads at once, and keeps between frames. */
enum { READ_AHEAD = 64 * 1024 };

void ls_chan_reader_init(ls_chan_reader *rd, int fd)
{
    *rd = (ls_chan_reader){.fd = fd};
}

void ls_chan_reader_free(ls_chan_reader *rd)
{
    free(rd->buf);
    ls_chan_reader_init(rd, -1);
}

/* The length of the frame at rd's head (0: not all 4 bytes read yet). */
static uint32_t head_len(const ls_chan_reader *rd)
{
    uint32_t len = 0;
    if (rd->tail - rd->head >= 4)
        memcpy(&len, rd->buf + rd->head, 4);
    return len;
}

bool ls_chan_reader_ready(const ls_chan_reader *rd)
{
    uint32_t len = head_len(rd);
    return len && rd->tail - rd->head >= 4 + (size_t)len;
}

/* Room for `need` unread bytes: the unread part moved to the front, the
 * buffer grown (or shrunk back after a large frame). */
static void make_room(ls_chan_reader *rd, size_t need)
{
    size_t unread = rd->tail - rd->head;
    if (rd->head) {
        memmove(rd->buf, rd->buf + rd->head, unread);
        rd->head = 0;
        rd->tail = unread;
    }
    size_t want = need > READ_AHEAD ? need : READ_AHEAD;
    if (rd->cap < want || (rd->cap > want && unread <= READ_AHEAD && need <= READ_AHEAD)) {
        rd->buf = ls_xrealloc(rd->buf, want);
        rd->cap = want;
    }
}

int ls_chan_read(ls_chan_reader *rd, ls_chan_msg *m, size_t max_len)
{
    memset(m, 0, sizeof *m);
    for (;;) {
        size_t unread = rd->tail - rd->head;
        uint32_t len = head_len(rd);
        if (unread >= 4 && (len < 1 || len > max_len))
            return -1;
        if (unread >= 4 && unread >= 4 + (size_t)len) {
            m->buf = ls_xmalloc(len);
            memcpy(m->buf, rd->buf + rd->head + 4, len);
            rd->head += 4 + (size_t)len;
            if (!split_frame(m, len)) {
                ls_chan_msg_free(m);
                return -1;
            }
            return 1;
        }
        if (rd->tail == rd->cap || !rd->buf || (unread >= 4 && rd->head + 4 + (size_t)len > rd->cap))
            make_room(rd, unread >= 4 ? 4 + (size_t)len : 4);
        ssize_t r = read(rd->fd, rd->buf + rd->tail, rd->cap - rd->tail);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 && unread == 0 ? 0 : -1;
        rd->tail += (size_t)r;
    }
}

void ls_chan_msg_free(ls_chan_msg *m)
{
    free(m->buf);
    m->buf = NULL;
    m->blob = NULL;
    m->blob_len = 0;
    m->n = 0;
}

const char *ls_chan_type_name(uint8_t type)
{
    static const char *const down[] = {"?", "object", "bind result", "preempt failed", "reply", "metrics ask", "synced",
                                       "whatif ask"};
    static const char *const up[] = {"hello", "bind", "event", "pod status", "preempt", "object patch",
                                     "status patch", "metrics", "extender", "configz", "whatif", "create claim"};
    if (type >= LS_CH_OBJECT && type <= LS_CH_WHATIF_ASK)
        return down[type];
    if (type >= LS_CH_HELLO && type <= LS_CH_CREATE_CLAIM)
        return up[type - LS_CH_HELLO];
    return "unknown";
}
