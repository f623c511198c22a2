/*
 * buf.c: the growable NUL-terminated byte buffer (ls_buf) the API client
 * builds its URLs and bodies in and the HTTP server its responses in.
 */
#include "luasched/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ls_buf_reserve(ls_buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = ls_xrealloc(b->data, cap);
        b->cap = cap;
    }
    return b->data + b->len;
}

void ls_buf_add(ls_buf *b, const void *p, size_t n)
{
    char *end = ls_buf_reserve(b, n);
    if (n)
        memcpy(end, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ls_buf_adds(ls_buf *b, const char *s)
{
    ls_buf_add(b, s, strlen(s));
}

void ls_buf_addf(ls_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        ls_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = ls_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ls_buf_add(b, big, (size_t)n);
    free(big);
}

void ls_buf_free(ls_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
