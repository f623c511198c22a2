/*
 * test_channel_read.c: what makes the supervisor/worker boundary cheap keeps
 * its checks (docs/plugins/worker.md, "The cost of the boundary"): an
 * object's binary tree form (worker/jsonbin.h) gives back the tree it was
 * made of and refuses bytes that are not one; a channel reader that reads
 * ahead returns the frames that were sent, whole, in order, whatever the
 * reads cut, with the same limits as one frame at a time.
 */
#include "test.h"
#include "worker/channel.h"
#include "worker/jsonbin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Every kind of value, nested, with escapes, UTF-8, an empty key, numbers
 * past int's range and fractions. */
static const char DOC[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\\\"q\\\\\",\"labels\":{\"\":\"empty key\","
    "\"zone\":\"caf\\u00e9 \xe2\x82\xac\"}},\"spec\":{\"priority\":-2147483649,\"ratio\":0.125,\"big\":1e300,"
    "\"on\":true,\"off\":false,\"none\":null,\"empty\":{},\"list\":[],\"nested\":[[1,[2,[3]]],{\"a\":[null]}]}}";

static void test_round_trip(void)
{
    cJSON *doc = cJSON_Parse(DOC);
    CHECK(doc != NULL);
    ls_buf b = {0};
    ls_jsonbin_encode(doc, &b);
    cJSON *back = ls_jsonbin_decode(b.data, b.len);
    CHECK(back != NULL);
    CHECK(cJSON_Compare(doc, back, true));
    char *a = cJSON_PrintUnformatted(doc), *c = cJSON_PrintUnformatted(back);
    CHECK_STR(c, a);
    free(a);
    free(c);
    /* numbers as cJSON_Parse gives them: the double, and int's saturation */
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(back, "spec");
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(spec, "priority")->valueint, -2147483647 - 1);
    CHECK(cJSON_GetObjectItemCaseSensitive(spec, "ratio")->valuedouble == 0.125);
    /* linked as the parser links children: adding after the last one works
     * (decode() adds a kind to list items that lack one) */
    cJSON_AddStringToObject(back, "added", "last");
    CHECK(cJSON_GetArrayItem(back, 4) != NULL);
    CHECK_STR(cJSON_GetArrayItem(back, 4)->valuestring, "last");
    CHECK(cJSON_GetObjectItemCaseSensitive(back, "added")->prev == cJSON_GetArrayItem(back, 3));
    cJSON_Delete(back);
    /* a scalar alone is a tree too */
    cJSON *s = cJSON_CreateString("x");
    b.len = 0;
    ls_jsonbin_encode(s, &b);
    cJSON *s2 = ls_jsonbin_decode(b.data, b.len);
    CHECK(cJSON_IsString(s2));
    CHECK_STR(s2->valuestring, "x");
    cJSON_Delete(s);
    cJSON_Delete(s2);
    ls_buf_free(&b);
    cJSON_Delete(doc);
}

static void test_refusals(void)
{
    cJSON *doc = cJSON_Parse(DOC);
    ls_buf b = {0};
    ls_jsonbin_encode(doc, &b);
    /* every cut short form, and one with a byte after the end */
    int accepted = 0;
    for (size_t n = 0; n < b.len; n++) {
        cJSON *j = ls_jsonbin_decode(b.data, n);
        accepted += j != NULL;
        cJSON_Delete(j);
    }
    CHECK_INT(accepted, 0);
    char *longer = malloc(b.len + 1);
    memcpy(longer, b.data, b.len);
    longer[b.len] = 0;
    CHECK(ls_jsonbin_decode(longer, b.len + 1) == NULL);
    /* an unknown tag */
    longer[0] = 7;
    CHECK(ls_jsonbin_decode(longer, b.len) == NULL);
    free(longer);
    /* an array that claims more children than its bytes could hold */
    const unsigned char many[] = {5, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0};
    CHECK(ls_jsonbin_decode(many, sizeof many) == NULL);
    /* a string longer than what is left */
    const unsigned char text[] = {4, 9, 'a', 'b'};
    CHECK(ls_jsonbin_decode(text, sizeof text) == NULL);
    /* nested deeper than cJSON parses: refused; at the limit: taken */
    for (int depth = CJSON_NESTING_LIMIT; depth <= CJSON_NESTING_LIMIT + 1; depth++) {
        size_t len = (size_t)depth * 2 + 1;
        unsigned char *deep = malloc(len);
        for (int i = 0; i < depth; i++)
            deep[2 * i] = 5, deep[2 * i + 1] = 1;   /* an array of one child */
        deep[len - 1] = 0;                         /* null */
        cJSON *j = ls_jsonbin_decode(deep, len);
        CHECK((j != NULL) == (depth == CJSON_NESTING_LIMIT));
        cJSON_Delete(j);
        free(deep);
    }
    ls_buf_free(&b);
    cJSON_Delete(doc);
}

typedef struct writer_arg {
    int fd;
    const char *data;
    size_t len, step;
} writer_arg;

/* Writes data in pieces of `step` bytes, each its own write. */
static void *write_in_pieces(void *p)
{
    writer_arg *w = p;
    for (size_t at = 0; at < w->len; at += w->step) {
        size_t n = w->len - at < w->step ? w->len - at : w->step;
        if (!ls_fd_write_all(w->fd, w->data + at, n))
            break;
        usleep(200);
    }
    return NULL;
}

static void test_reader(void)
{
    int sv[2];
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    /* frames of one write: one read takes them, the rest wait in the reader */
    ls_buf out = {0};
    const char *bind[] = {"default", "p1", "uid-1", "node-1", "default-scheduler"};
    const char *obj[] = {"add", "pod", "Pod"};
    const char blob[] = {1, 0, 2, 0, 3};   /* NULs inside: the blob is not text */
    CHECK(ls_chan_frame(&out, LS_CH_BIND, bind, 5, NULL, 0));
    CHECK(ls_chan_frame(&out, LS_CH_OBJECT, obj, 3, blob, sizeof blob));
    CHECK(ls_chan_frame(&out, LS_CH_SYNCED, NULL, 0, NULL, 0));
    CHECK(ls_fd_write_all(sv[0], out.data, out.len));
    ls_chan_reader rd;
    ls_chan_reader_init(&rd, sv[1]);
    CHECK(!ls_chan_reader_ready(&rd));
    ls_chan_msg m;
    CHECK_INT(ls_chan_read(&rd, &m, 1024), 1);
    CHECK_INT(m.type, LS_CH_BIND);
    CHECK_INT(m.n, 5);
    CHECK_STR(m.f[4], "default-scheduler");
    CHECK(m.blob == NULL);
    ls_chan_msg_free(&m);
    CHECK(ls_chan_reader_ready(&rd));
    CHECK_INT(ls_chan_read(&rd, &m, 1024), 1);
    CHECK_INT(m.type, LS_CH_OBJECT);
    CHECK_INT(m.n, 3);
    CHECK_STR(m.f[2], "Pod");
    CHECK_INT((int)m.blob_len, (int)sizeof blob);
    CHECK(memcmp(m.blob, blob, sizeof blob) == 0);
    ls_chan_msg_free(&m);
    CHECK_INT(ls_chan_read(&rd, &m, 1024), 1);
    CHECK_INT(m.type, LS_CH_SYNCED);
    CHECK_INT(m.n, 0);
    ls_chan_msg_free(&m);
    CHECK(!ls_chan_reader_ready(&rd));
    /* a frame larger than the read-ahead, then a small one, written in
     * pieces of 4093 and of 40000 bytes; and the small one alone in pieces
     * of 3 (its length cut too): whole and in order */
    size_t big = 300 * 1024;
    char *text = malloc(big + 1);
    memset(text, 'x', big);
    text[big] = 0;
    const char *f[] = {text, "after"};
    const size_t steps[] = {4093, 40000, 3};
    for (int i = 0; i < 3; i++) {
        out.len = 0;
        if (steps[i] != 3)
            CHECK(ls_chan_frame(&out, LS_CH_EVENT, f, 2, NULL, 0));
        CHECK(ls_chan_frame(&out, LS_CH_BIND, bind, 5, NULL, 0));
        writer_arg w = {sv[0], out.data, out.len, steps[i]};
        pthread_t t;
        pthread_create(&t, NULL, write_in_pieces, &w);
        if (steps[i] != 3) {
            CHECK_INT(ls_chan_read(&rd, &m, 1 << 20), 1);
            CHECK_INT(m.type, LS_CH_EVENT);
            CHECK_INT((int)strlen(m.f[0]), (int)big);
            CHECK_STR(m.f[1], "after");
            ls_chan_msg_free(&m);
        }
        CHECK_INT(ls_chan_read(&rd, &m, 1 << 20), 1);
        CHECK_INT(m.type, LS_CH_BIND);
        CHECK_STR(m.f[1], "p1");
        ls_chan_msg_free(&m);
        pthread_join(t, NULL);
    }
    free(text);
    /* over the reader's limit: refused before the body is read */
    out.len = 0;
    CHECK(ls_chan_frame(&out, LS_CH_BIND, bind, 5, NULL, 0));
    CHECK(ls_fd_write_all(sv[0], out.data, out.len));
    CHECK_INT(ls_chan_read(&rd, &m, 16), -1);
    ls_chan_reader_free(&rd);
    close(sv[0]);
    close(sv[1]);
    /* an object frame with fewer than its three fields is malformed */
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ls_chan_reader_init(&rd, sv[1]);
    out.len = 0;
    CHECK(ls_chan_frame(&out, LS_CH_OBJECT, obj, 2, NULL, 0));
    CHECK(ls_fd_write_all(sv[0], out.data, out.len));
    CHECK_INT(ls_chan_read(&rd, &m, 1024), -1);
    ls_chan_reader_free(&rd);
    close(sv[1]);
    close(sv[0]);
    /* the peer closed: 0 between frames, -1 within one */
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ls_chan_reader_init(&rd, sv[1]);
    out.len = 0;
    CHECK(ls_chan_frame(&out, LS_CH_SYNCED, NULL, 0, NULL, 0));
    CHECK(ls_chan_frame(&out, LS_CH_BIND, bind, 5, NULL, 0));
    CHECK(ls_fd_write_all(sv[0], out.data, out.len - 3));
    close(sv[0]);
    CHECK_INT(ls_chan_read(&rd, &m, 1024), 1);
    ls_chan_msg_free(&m);
    CHECK_INT(ls_chan_read(&rd, &m, 1024), -1);
    ls_chan_reader_free(&rd);
    close(sv[1]);
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ls_chan_reader_init(&rd, sv[1]);
    close(sv[0]);
    CHECK_INT(ls_chan_read(&rd, &m, 1024), 0);
    ls_chan_reader_free(&rd);
    close(sv[1]);
    ls_buf_free(&out);
}

int main(void)
{
    test_round_trip();
    test_refusals();
    test_reader();
    TEST_MAIN_END();
}
