/*
 * page.c: the page shared by the supervisor and its worker (see page.h).
 */

#include "worker/page.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

ls_worker_page *ls_worker_page_self;

uint64_t ls_worker_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static ls_worker_page *map_page(int fd)
{
    void *p = mmap(NULL, sizeof(ls_worker_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

ls_worker_page *ls_worker_page_create(int *fd)
{
    *fd = memfd_create("luasched-worker-page", 0);
    if (*fd < 0)
        return NULL;
    if (ftruncate(*fd, sizeof(ls_worker_page)) != 0) {
        close(*fd);
        *fd = -1;
        return NULL;
    }
    ls_worker_page *p = map_page(*fd);
    if (!p) {
        close(*fd);
        *fd = -1;
    }
    return p;
}

ls_worker_page *ls_worker_page_attach(int fd)
{
    ls_worker_page_self = map_page(fd);
    return ls_worker_page_self;
}

void ls_worker_page_free(ls_worker_page *p)
{
    if (p)
        munmap(p, sizeof *p);
}

void ls_worker_page_reset(ls_worker_page *p)
{
    memset(p, 0, sizeof *p);
}

/* strncpy's effect without a libc call that might not be signal-safe. */
static void copy(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < cap; i++)
        dst[i] = src[i];
    dst[i] = 0;
}

void ls_worker_page_describe(const char *profile, const char *plugin, const char *point, const char *pod_ns,
                             const char *pod_name, const char *where)
{
    ls_worker_page *p = ls_worker_page_self;
    if (!p)
        return;
    atomic_fetch_add(&p->described, 1);
    copy(p->profile, sizeof p->profile, profile);
    copy(p->plugin, sizeof p->plugin, plugin);
    copy(p->point, sizeof p->point, point);
    copy(p->where, sizeof p->where, where);
    p->code_of[0] = p->code_at[0] = 0;
    size_t n = 0;
    if (pod_name && *pod_name) {
        copy(p->pod, sizeof p->pod, pod_ns && *pod_ns ? pod_ns : "");
        n = strlen(p->pod);
        if (n && n + 1 < sizeof p->pod)
            p->pod[n++] = '/';
        copy(p->pod + n, sizeof p->pod - n, pod_name);
    } else {
        p->pod[0] = 0;
    }
    atomic_fetch_add(&p->described, 1);
}

void ls_worker_page_blame(const char *plugin, const char *at)
{
    ls_worker_page *p = ls_worker_page_self;
    if (!p)
        return;
    atomic_fetch_add(&p->described, 1);
    copy(p->code_of, sizeof p->code_of, plugin);
    copy(p->code_at, sizeof p->code_at, at);
    atomic_fetch_add(&p->described, 1);
}

const char *ls_worker_page_culprit(const ls_worker_page *p)
{
    return p->code_of[0] ? p->code_of : p->plugin;
}

void ls_worker_page_say_why(const char *why)
{
    if (!ls_worker_page_self)
        return;
    copy(ls_worker_page_self->why, sizeof ls_worker_page_self->why, why);
    atomic_store(&ls_worker_page_self->why_ms, ls_worker_now_ms());
}

void ls_worker_page_call(const ls_worker_page *p, char *out, size_t cap)
{
    if (!p->plugin[0] && !p->pod[0]) {
        out[0] = 0;
        return;
    }
    if (!p->profile[0] && !p->pod[0]) {   /* outside a cycle: what the runtime was doing, as it noted it */
        if (p->where[0])
            snprintf(out, cap, "plugin \"%s\" (%s)", p->plugin, p->where);
        else
            snprintf(out, cap, "%s", p->plugin);
        return;
    }
    int n = snprintf(out, cap, "%s/%s/%s/%s%s%s", p->profile[0] ? p->profile : "-", p->plugin[0] ? p->plugin : "-",
                     p->point[0] ? p->point : "-", p->pod[0] ? p->pod : "-", p->where[0] ? " in " : "", p->where);
    if (p->code_of[0] && n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, ": plugin \"%s\" (%s, its code run in %s's call)", p->code_of, p->code_at,
                 p->plugin[0] ? p->plugin : "another plugin");
}
