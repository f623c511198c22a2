/*
 * file_watch.c: see file_watch.h.
 *
 * A mounted ConfigMap is not edited in place: the kubelet's atomic writer
 * writes a new timestamped directory (..2026_01_02_03_04_05.123), points a
 * temporary symlink at it, renames that over `..data` and removes the old
 * directory; the visible files are symlinks through `..data`, so their own
 * names never see an event. A directory holding a watched file that is a
 * symlink therefore also counts a new `..data` as a change of its files.
 */
#include "framework/file_watch.h"
#include "luasched/base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct watched_dir {
    int wd;
    char *dir;
    bool follows_data_link;   /* a watched file in it is a symlink: `..data` swaps change it */
} watched_dir;

/* The kubelet's atomic writer swaps this symlink to publish a new version. */
static const char DATA_LINK[] = "..data";

struct ls_file_watch {
    int fd;
    ls_vec dirs;     /* watched_dir */
    ls_vec names;    /* char *: full paths of the watched files */
};

ls_file_watch *ls_file_watch_new(void)
{
    ls_file_watch *w = ls_xcalloc(1, sizeof *w);
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ls_vec_init(&w->dirs, sizeof(watched_dir));
    ls_vec_init(&w->names, sizeof(char *));
    return w;
}

static void clear(ls_file_watch *w)
{
    for (uint32_t i = 0; i < w->dirs.len; i++) {
        watched_dir *d = &LS_VEC_AT(&w->dirs, watched_dir, i);
        if (w->fd >= 0)
            inotify_rm_watch(w->fd, d->wd);
        free(d->dir);
    }
    w->dirs.len = 0;
    for (uint32_t i = 0; i < w->names.len; i++)
        free(LS_VEC_AT(&w->names, char *, i));
    w->names.len = 0;
}

void ls_file_watch_free(ls_file_watch *w)
{
    if (!w)
        return;
    clear(w);
    ls_vec_free(&w->dirs);
    ls_vec_free(&w->names);
    if (w->fd >= 0)
        close(w->fd);
    free(w);
}

static void watch_dir_of(ls_file_watch *w, const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    struct stat st;
    bool is_link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    for (uint32_t i = 0; i < w->dirs.len; i++) {
        watched_dir *d = &LS_VEC_AT(&w->dirs, watched_dir, i);
        if (strcmp(d->dir, dir) == 0) {
            d->follows_data_link |= is_link;
            return;
        }
    }
    int wd = inotify_add_watch(w->fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY);
    if (wd < 0)
        return;
    watched_dir *d = ls_vec_push(&w->dirs);
    d->wd = wd;
    d->dir = ls_xstrdup(dir);
    d->follows_data_link = is_link;
}

void ls_file_watch_set(ls_file_watch *w, const char *const *files, uint32_t n)
{
    clear(w);
    if (w->fd < 0)
        return;
    for (uint32_t i = 0; i < n; i++) {
        if (!files[i] || !files[i][0])
            continue;
        *(char **)ls_vec_push(&w->names) = ls_xstrdup(files[i]);
        watch_dir_of(w, files[i]);
    }
}

static bool is_watched(const ls_file_watch *w, int wd, const char *name)
{
    for (uint32_t i = 0; i < w->dirs.len; i++) {
        const watched_dir *d = &LS_VEC_AT(&w->dirs, watched_dir, i);
        if (d->wd != wd)
            continue;
        if (d->follows_data_link && strcmp(name, DATA_LINK) == 0)
            return true;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", d->dir, name);
        for (uint32_t k = 0; k < w->names.len; k++) {
            const char *f = LS_VEC_AT(&w->names, char *, k);
            if (strcmp(f, path) == 0 || (strncmp(f, "./", 2) != 0 && strcmp(d->dir, ".") == 0 && strcmp(f, name) == 0))
                return true;
        }
    }
    return false;
}

bool ls_file_watch_changed(ls_file_watch *w)
{
    if (w->fd < 0)
        return false;
    bool changed = false;
    _Alignas(struct inotify_event) char buf[4096];
    for (;;) {
        ssize_t len = read(w->fd, buf, sizeof buf);
        if (len <= 0)
            break;
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
            if (ev->len && is_watched(w, ev->wd, ev->name))
                changed = true;
            p += sizeof *ev + ev->len;
        }
    }
    return changed;
}
