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

bool ls_chan_send(int fd, pthread_mutex_t *mu, uint8_t type, const char *const *fields, uint32_t n)
{
    size_t total = 1;
    for (uint32_t i = 0; i < n; i++)
        total += strlen(fields[i] ? fields[i] : "") + 1;
    if (total > UINT32_MAX)
        return false;
    char *frame = ls_xmalloc(4 + total);
    uint32_t len = (uint32_t)total;
    memcpy(frame, &len, 4);
    frame[4] = (char)type;
    size_t at = 5;
    for (uint32_t i = 0; i < n; i++) {
        const char *s = fields[i] ? fields[i] : "";
        size_t l = strlen(s) + 1;
        memcpy(frame + at, s, l);
        at += l;
    }
    if (mu)
        pthread_mutex_lock(mu);
    bool ok = ls_fd_write_all(fd, frame, 4 + total);
    if (mu)
        pthread_mutex_unlock(mu);
    free(frame);
    return ok;
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
    if (!ls_fd_read_all(fd, m->buf, len, &eof)) {
        ls_chan_msg_free(m);
        return -1;
    }
    m->type = (uint8_t)m->buf[0];
    size_t at = 1;
    while (at < len) {
        const char *end = memchr(m->buf + at, 0, len - at);
        if (!end || m->n == LS_CHAN_MAX_FIELDS) {
            ls_chan_msg_free(m);
            return -1;
        }
        m->f[m->n++] = m->buf + at;
        at = (size_t)(end - m->buf) + 1;
    }
    return 1;
}

void ls_chan_msg_free(ls_chan_msg *m)
{
    free(m->buf);
    m->buf = NULL;
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
