/*
 * fuzz_watch.c: the watch-stream framing decoder (client/watch.c) on raw
 * bytes. The first byte picks a chunk size, so the same stream is also seen
 * split at odd places; the first line then decides nothing special. Checks:
 * no crash or leak, every delivered event has an object, and decoding the
 * same bytes in one chunk or in pieces delivers the same number of events.
 */
#include "fuzz_common.h"

#include "client/watch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static bool count(void *ud, ls_watch_event *ev, ls_error *err)
{
    (void)err;
    FUZZ_CHECK(cJSON_IsObject(ev->object), "event of type %s without an object", ls_watch_type_name(ev->type));
    FUZZ_CHECK(strcmp(ls_watch_type_name(ev->type), "?") != 0, "unknown type %d", (int)ev->type);
    (*(size_t *)ud)++;
    return true;
}

static size_t decode(const uint8_t *data, size_t size, size_t chunk, size_t max_line)
{
    ls_watch_decoder *d = ls_watch_decoder_new(max_line);
    size_t n = 0;
    ls_error err = {{0}};
    for (size_t off = 0; off < size; off += chunk) {
        size_t len = size - off < chunk ? size - off : chunk;
        /* A copy per chunk, so a read past a chunk is an ASan report. */
        char *piece = malloc(len ? len : 1);
        memcpy(piece, data + off, len);
        if (!ls_watch_feed(d, piece, len, count, &n, &err))
            FUZZ_CHECK(err.msg[0] != '\0', "failure without a message");
        free(piece);
    }
    ls_watch_finish(d, count, &n, &err);
    FUZZ_CHECK(ls_watch_count(d) == n, "count %zu, delivered %zu", ls_watch_count(d), n);
    ls_watch_decoder_free(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = (size_t)data[0] % 17 + 1;
    data++;
    size--;
    size_t whole = decode(data, size, size ? size : 1, 0);
    size_t pieces = decode(data, size, chunk, 0);
    FUZZ_CHECK(whole == pieces, "one chunk gave %zu events, chunks of %zu gave %zu", whole, chunk, pieces);
    decode(data, size, chunk, 64);   /* the size limit hit mid-line */
    return 0;
}
