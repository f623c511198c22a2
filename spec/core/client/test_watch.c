/*
 * test_watch.c: the watch-stream framing decoder (client/watch.c): events
 * split at every byte boundary, several per chunk, CRLF and blank lines,
 * events larger than any chunk, malformed lines, the size limit.
 */
#include <stdlib.h>

#include "client/watch.h"
#include "test.h"

typedef struct seen {
    char log[4096];   /* "TYPE:name;" per event */
    int n;
    int stop_after;   /* the callback returns false after this many (0: never) */
} seen;

static bool collect(void *ud, ls_watch_event *ev, ls_error *err)
{
    seen *s = ud;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    size_t len = strlen(s->log);
    snprintf(s->log + len, sizeof s->log - len, "%s:%s;", ls_watch_type_name(ev->type),
             cJSON_IsString(name) ? name->valuestring : "-");
    s->n++;
    if (s->stop_after && s->n >= s->stop_after) {
        ls_errorf(err, "enough");
        return false;
    }
    return true;
}

static const char stream[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\"}}}\r\n"
    "   \r\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n"
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n";
static const char expected[] = "ADDED:a;MODIFIED:b;BOOKMARK:-;DELETED:c;ERROR:-;";

static void test_split_everywhere(void)
{
    size_t len = sizeof stream - 1;
    int failures = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        ls_watch_decoder *d = ls_watch_decoder_new(0);
        seen s = {0};
        ls_error err = {{0}};
        bool ok = ls_watch_feed(d, stream, cut, collect, &s, &err) &&
                  ls_watch_feed(d, stream + cut, len - cut, collect, &s, &err) && ls_watch_finish(d, collect, &s, &err);
        if (!ok || strcmp(s.log, expected) != 0) {
            failures++;
            fprintf(stderr, "cut %zu: %s / %s\n", cut, s.log, err.msg);
        }
        ls_watch_decoder_free(d);
    }
    CHECK_INT(failures, 0);
    /* one byte at a time, and three cuts */
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    seen s = {0};
    ls_error err = {{0}};
    for (size_t i = 0; i < len; i++)
        CHECK(ls_watch_feed(d, stream + i, 1, collect, &s, &err));
    CHECK_STR(s.log, expected);
    CHECK_INT(ls_watch_count(d), 5);
    ls_watch_decoder_free(d);
    failures = 0;
    for (size_t a = 0; a < len; a += 7) {
        for (size_t b = a; b < len; b += 5) {
            d = ls_watch_decoder_new(0);
            seen t = {0};
            bool ok = ls_watch_feed(d, stream, a, collect, &t, &err) &&
                      ls_watch_feed(d, stream + a, b - a, collect, &t, &err) &&
                      ls_watch_feed(d, stream + b, len - b, collect, &t, &err);
            if (!ok || strcmp(t.log, expected) != 0)
                failures++;
            ls_watch_decoder_free(d);
        }
    }
    CHECK_INT(failures, 0);
}

static void test_big_event(void)
{
    size_t pad = 300000;
    size_t cap = pad + 200;
    char *big = malloc(cap);
    int n = snprintf(big, cap, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\"},\"data\":\"");
    memset(big + n, 'x', pad);
    snprintf(big + n + pad, cap - (size_t)n - pad, "\"}}\n");
    size_t len = strlen(big);
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    seen s = {0};
    ls_error err = {{0}};
    for (size_t off = 0; off < len; off += 1000)
        CHECK(ls_watch_feed(d, big + off, len - off < 1000 ? len - off : 1000, collect, &s, &err));
    CHECK_STR(s.log, "ADDED:big;");
    ls_watch_decoder_free(d);

    /* over the limit: reported once, the next event still decoded */
    d = ls_watch_decoder_new(1000);
    seen t = {0};
    bool ok = true;
    for (size_t off = 0; off < len; off += 333)
        ok = ls_watch_feed(d, big + off, len - off < 333 ? len - off : 333, collect, &t, &err) && ok;
    CHECK(!ok);
    CHECK_CONTAINS(err.msg, "larger than 1000 bytes");
    CHECK(ls_watch_feed(d, stream, 80, collect, &t, &err));
    CHECK_STR(t.log, "ADDED:a;");
    ls_watch_decoder_free(d);
    free(big);
}

static void expect_bad(const char *line, const char *msg)
{
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    seen s = {0};
    ls_error err = {{0}};
    char buf[512];
    /* the bad line sits between two good ones, in one chunk */
    snprintf(buf, sizeof buf, "%s%s\n%s", "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}}\n", line,
             "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"y\"}}}\n");
    CHECK(!ls_watch_feed(d, buf, strlen(buf), collect, &s, &err));
    CHECK_CONTAINS(err.msg, msg);
    CHECK_STR(s.log, "ADDED:x;DELETED:y;");
    ls_watch_decoder_free(d);
}

static void test_malformed(void)
{
    expect_bad("not json", "not a JSON object");
    expect_bad("[1,2]", "not a JSON object");
    expect_bad("{\"type\":\"ADDED\"", "not a JSON object");
    expect_bad("{\"type\":\"EXPLODED\",\"object\":{}}", "without a known \"type\"");
    expect_bad("{\"object\":{}}", "without a known \"type\"");
    expect_bad("{\"type\":7,\"object\":{}}", "without a known \"type\"");
    expect_bad("{\"type\":\"ADDED\"}", "ADDED event without an \"object\"");
    expect_bad("{\"type\":\"ADDED\",\"object\":\"s\"}", "ADDED event without an \"object\"");

    /* a partial line at the end of the stream */
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    seen s = {0};
    ls_error err = {{0}};
    CHECK(ls_watch_feed(d, "{\"type\":\"ADDED\",\"obj", 20, collect, &s, &err));
    CHECK(!ls_watch_finish(d, collect, &s, &err));
    CHECK_CONTAINS(err.msg, "not a JSON object");
    CHECK(ls_watch_finish(d, collect, &s, &err));   /* consumed */
    /* a last line without its newline is still an event */
    CHECK(ls_watch_feed(d, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"z\"}}}", 51, collect, &s, &err));
    CHECK_INT(s.n, 0);
    CHECK(ls_watch_finish(d, collect, &s, &err));
    CHECK_STR(s.log, "ADDED:z;");
    /* NUL bytes inside a line */
    CHECK(!ls_watch_feed(d, "{\"type\"\0:1}\n", 12, collect, &s, &err));
    ls_watch_decoder_free(d);
}

static void test_handler_stops(void)
{
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    seen s = {.stop_after = 2};
    ls_error err = {{0}};
    CHECK(!ls_watch_feed(d, stream, sizeof stream - 1, collect, &s, &err));
    CHECK_STR(err.msg, "enough");
    CHECK_STR(s.log, "ADDED:a;MODIFIED:b;");
    ls_watch_decoder_free(d);
}

static bool steal(void *ud, ls_watch_event *ev, ls_error *err)
{
    (void)err;
    *(cJSON **)ud = ev->object;
    ev->object = NULL;
    return true;
}

static void test_ownership(void)
{
    ls_watch_decoder *d = ls_watch_decoder_new(0);
    cJSON *kept = NULL;
    ls_error err = {{0}};
    CHECK(ls_watch_feed(d, stream, 80, steal, &kept, &err));
    CHECK(kept != NULL);
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(kept, "metadata"), "name")->valuestring,
              "a");
    cJSON_Delete(kept);
    ls_watch_decoder_free(d);
}

int main(void)
{
    test_split_everywhere();
    test_big_event();
    test_malformed();
    test_handler_stops();
    test_ownership();
    TEST_MAIN_END();
}
