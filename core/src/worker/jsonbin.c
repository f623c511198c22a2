/*
 * jsonbin.c: a cJSON tree in the channel's binary form (see jsonbin.h).
 */
#include "worker/jsonbin.h"

#include <stdint.h>
#include <string.h>

enum { JB_NULL, JB_FALSE, JB_TRUE, JB_NUMBER, JB_STRING, JB_ARRAY, JB_OBJECT, JB_TAGS };

/* ---- encoding */

/* Room for n more bytes at the end of out (its length not moved). The
 * encoding writes through it rather than ls_buf_add per piece: a pod is a
 * few hundred pieces. */
static unsigned char *room(ls_buf *out, size_t n)
{
    return (unsigned char *)ls_buf_reserve(out, n);
}

static void put_uint(ls_buf *out, size_t v)
{
    unsigned char *b = room(out, 10);
    size_t n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    out->len += n;
}

static void put_bytes(ls_buf *out, const void *p, size_t n)
{
    memcpy(room(out, n), p, n);
    out->len += n;
}

static void put_text(ls_buf *out, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_uint(out, n);
    if (n)
        put_bytes(out, s, n);
}

static unsigned char tag_of(const cJSON *j)
{
    switch (j->type & 0xff) {
    case cJSON_False: return JB_FALSE;
    case cJSON_True: return JB_TRUE;
    case cJSON_Number: return JB_NUMBER;
    case cJSON_String:
    case cJSON_Raw: return JB_STRING;   /* parsed trees hold no raw JSON; kept as its text */
    case cJSON_Array: return JB_ARRAY;
    case cJSON_Object: return JB_OBJECT;
    default: return JB_NULL;
    }
}

static void encode_value(const cJSON *j, bool member, ls_buf *out)
{
    unsigned char tag = tag_of(j);
    put_bytes(out, &tag, 1);
    if (member)
        put_text(out, j->string);
    if (tag == JB_NUMBER) {
        put_bytes(out, &j->valuedouble, sizeof j->valuedouble);
    } else if (tag == JB_STRING) {
        put_text(out, j->valuestring);
    } else if (tag == JB_ARRAY || tag == JB_OBJECT) {
        size_t n = 0;
        for (const cJSON *c = j->child; c; c = c->next)
            n++;
        put_uint(out, n);
        for (const cJSON *c = j->child; c; c = c->next)
            encode_value(c, tag == JB_OBJECT, out);
    }
}

void ls_jsonbin_encode(const cJSON *json, ls_buf *out)
{
    encode_value(json, false, out);
}

/* ---- decoding */

typedef struct reader {
    const unsigned char *p, *end;
} reader;

static bool get_uint(reader *r, size_t *v)
{
    size_t x = 0;
    for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        unsigned char b = *r->p++;
        x |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* A NUL-terminated copy of the next length-prefixed text, allocated as cJSON
 * allocates (cJSON_Delete frees it). */
static char *get_text(reader *r)
{
    size_t n;
    if (!get_uint(r, &n) || n > (size_t)(r->end - r->p))
        return NULL;
    char *s = cJSON_malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}

static cJSON *decode_value(reader *r, bool member, int depth);

/* The children of an array or an object, linked as cJSON_Parse links them
 * (the first child's prev is the last one). */
static bool decode_children(reader *r, cJSON *parent, bool members, int depth)
{
    size_t n;
    /* each child takes at least its tag's byte */
    if (!get_uint(r, &n) || n > (size_t)(r->end - r->p))
        return false;
    cJSON *last = NULL;
    for (size_t i = 0; i < n; i++) {
        cJSON *c = decode_value(r, members, depth + 1);
        if (!c)
            return false;
        if (last) {
            last->next = c;
            c->prev = last;
        } else {
            parent->child = c;
        }
        last = c;
        parent->child->prev = last;
    }
    return true;
}

static cJSON *decode_value(reader *r, bool member, int depth)
{
    if (depth > CJSON_NESTING_LIMIT || r->p >= r->end || *r->p >= JB_TAGS)
        return NULL;
    unsigned char tag = *r->p++;
    cJSON *j = cJSON_CreateNull();
    if (!j)
        return NULL;
    bool ok = true;
    if (member)
        ok = (j->string = get_text(r)) != NULL;
    if (!ok) {
    } else if (tag == JB_FALSE || tag == JB_TRUE) {
        j->type = tag == JB_TRUE ? cJSON_True : cJSON_False;
    } else if (tag == JB_NUMBER) {
        double d;
        ok = (size_t)(r->end - r->p) >= sizeof d;
        if (ok) {
            memcpy(&d, r->p, sizeof d);
            r->p += sizeof d;
            j->type = cJSON_Number;
            cJSON_SetNumberHelper(j, d);
        }
    } else if (tag == JB_STRING) {
        j->type = cJSON_String;
        ok = (j->valuestring = get_text(r)) != NULL;
    } else if (tag == JB_ARRAY || tag == JB_OBJECT) {
        j->type = tag == JB_ARRAY ? cJSON_Array : cJSON_Object;
        ok = decode_children(r, j, tag == JB_OBJECT, depth);
    }
    if (!ok) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

cJSON *ls_jsonbin_decode(const void *data, size_t len)
{
    reader r = {data, (const unsigned char *)data + len};
    cJSON *j = decode_value(&r, false, 0);
    if (j && r.p != r.end) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}
