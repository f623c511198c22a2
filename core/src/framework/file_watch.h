/*
 * file_watch.h: notices changes to the configuration file and the plugin
 * files (inotify on their directories, since editors replace files by
 * renaming; a mounted ConfigMap through its `..data` symlink swap).
 * Non-blocking: the scheduling loop asks between cycles.
 */
#ifndef LS_FILE_WATCH_H
#define LS_FILE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ls_file_watch ls_file_watch;

ls_file_watch *ls_file_watch_new(void);
void ls_file_watch_free(ls_file_watch *w);
/* Replaces the watched set (the config file and the plugin files of the
 * running profiles). */
void ls_file_watch_set(ls_file_watch *w, const char *const *files, uint32_t n);
/* True when a watched file was written, created, moved or deleted since the
 * last call; drains the pending notifications. */
bool ls_file_watch_changed(ls_file_watch *w);

#endif
