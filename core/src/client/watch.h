/*
 * watch.h: the framing decoder of a Kubernetes watch stream (internal).
 *
 * A watch answers with newline-delimited JSON, one event per line:
 *   {"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR","object":{...}}
 * The decoder is pure (no network, no threads) so it can be fuzzed: feed it
 * the bytes as they arrive, split anywhere; it calls back once per complete
 * event. Lines may end in "\n" or "\r\n"; blank lines are skipped; a line may
 * be larger than any read buffer (it grows up to max_line bytes).
 */
#ifndef LS_CLIENT_WATCH_H
#define LS_CLIENT_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "luasched/base.h"

typedef enum ls_watch_type {
    LS_WATCH_ADDED,
    LS_WATCH_MODIFIED,
    LS_WATCH_DELETED,
    LS_WATCH_BOOKMARK,
    LS_WATCH_ERROR,
} ls_watch_type;

typedef struct ls_watch_event {
    ls_watch_type type;
    /* The event's "object" (a Status for ERROR). Owned by the decoder and freed
     * when the callback returns, unless the callback takes it: it may set
     * object to NULL after keeping the pointer (then it must cJSON_Delete it). */
    cJSON *object;
} ls_watch_event;

/* Returns false to stop decoding: ls_watch_feed then returns false with the
 * message the callback wrote into err (or "stopped by the event handler"). */
typedef bool (*ls_watch_event_fn)(void *ud, ls_watch_event *ev, ls_error *err);

typedef struct ls_watch_decoder ls_watch_decoder;

/* max_line: the largest event accepted in bytes (0: 64 MiB). */
ls_watch_decoder *ls_watch_decoder_new(size_t max_line);
void ls_watch_decoder_free(ls_watch_decoder *d);
/* Feeds len bytes. Complete lines are decoded in order and handed to fn.
 * A malformed line (not JSON, not an object, unknown or missing type, missing
 * object) or a line over max_line is skipped and the rest of the chunk is
 * still decoded; the call then returns false with the first such problem in
 * err. Feeding can go on afterwards. When fn returns false, decoding stops at
 * once (the rest of the chunk is dropped) and the call returns false. */
bool ls_watch_feed(ls_watch_decoder *d, const char *data, size_t len, ls_watch_event_fn fn, void *ud,
                   ls_error *err);
/* End of stream: true if no partial line is pending (a trailing line without
 * its newline is decoded here, as the API server always ends with one). */
bool ls_watch_finish(ls_watch_decoder *d, ls_watch_event_fn fn, void *ud, ls_error *err);
/* Forgets any partial line (for reuse on a new connection). */
void ls_watch_reset(ls_watch_decoder *d);
/* Events decoded since creation. */
size_t ls_watch_count(const ls_watch_decoder *d);

const char *ls_watch_type_name(ls_watch_type t);

#endif
