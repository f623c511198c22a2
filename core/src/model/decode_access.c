/*
 * decode_access.c: what every part of the Pod and Node decoders reads JSON
 * with (decode_internal.h): the field path, errors naming the source line,
 * the object and the field, typed access to members with the API server's
 * validation, labels, quantities and resource lists, selectors, and the one
 * list decoder every repeated field goes through.
 */
#include "decode_internal.h"
#include "labels_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoder state, field paths and errors -------------------------------- */

void dec_init(dec *d, const ls_decode_ctx *ctx, ls_error *err, ls_arena *a, const char *kind)
{
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->err = err;
    d->a = a;
    d->kind = kind;
}

static size_t dec_path_push(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the path and returns the mark to pop back to. An error leaves the
 * path as it is, so the message names the field that failed. */
static size_t dec_path_push(dec *d, const char *fmt, ...)
{
    size_t mark = d->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->len, sizeof d->path - d->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->len += (size_t)n < sizeof d->path - d->len ? (size_t)n : sizeof d->path - d->len - 1;
    return mark;
}

size_t dec_path_field(dec *d, const char *name)
{
    return d->len ? dec_path_push(d, ".%s", name) : dec_path_push(d, "%s", name);
}

static size_t dec_path_index(dec *d, int i)
{
    return dec_path_push(d, "[%d]", i);
}

void dec_path_pop(dec *d, size_t mark)
{
    d->len = mark;
    d->path[mark] = '\0';
}

void dec_location(const ls_decode_ctx *c, const cJSON *at, char *out, size_t cap)
{
    const char *src = c && c->source ? c->source : NULL;
    int line = c && c->line_of && at ? c->line_of(at, c->line_ud) : 0;
    out[0] = '\0';
    if (src && line > 0)
        snprintf(out, cap, "%s:%d: ", src, line);
    else if (src)
        snprintf(out, cap, "%s: ", src);
    else if (line > 0)
        snprintf(out, cap, "line %d: ", line);
}

/* "file:line: pod ns/name: path: msg"; parts that are unknown are left out. */
static bool report(dec *d, const cJSON *at, const char *path, const char *msg)
{
    char loc[320];
    dec_location(d->ctx, at, loc, sizeof loc);
    return ls_errorf(d->err, "%s%s%s%s%s%s: %s", loc, d->kind, *d->who ? " " : "", d->who,
                     *path ? ": " : "", path, msg);
}

bool dec_fail(dec *d, const cJSON *at, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return report(d, at, d->path, msg);
}

/* For messages that already carry their own field path (selector compiling). */
static bool dec_fail_scratch(dec *d, const cJSON *at)
{
    return report(d, at, "", d->scratch.msg);
}

/* ---- typed access to JSON members ----------------------------------------- */

/* A JSON null reads as an absent field, as in Kubernetes. */
uint32_t dec_size_of(const cJSON *j)
{
    return j ? (uint32_t)cJSON_GetArraySize(j) : 0;
}

/* Fails on obj.name, at the member's line (or the object's when it is absent). */
bool dec_fail_member(dec *d, const cJSON *obj, const char *name, const char *msg)
{
    const cJSON *j = ls_json_member(obj, name);
    dec_path_field(d, name);
    return dec_fail(d, j ? j : obj, "%s", msg);
}

bool dec_get_object(dec *d, const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *j = ls_json_member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsObject(j))
        return dec_fail_member(d, obj, name, "expected an object");
    *out = j;
    return true;
}

bool dec_get_array(dec *d, const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *j = ls_json_member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsArray(j))
        return dec_fail_member(d, obj, name, "expected an array");
    *out = j;
    return true;
}

bool dec_get_text(dec *d, const cJSON *obj, const char *name, const char **out)
{
    const cJSON *j = ls_json_member(obj, name);
    *out = NULL;
    if (j && !cJSON_IsString(j))
        return dec_fail_member(d, obj, name, "expected a string");
    *out = j ? j->valuestring : NULL;
    return true;
}

/* Interned string member; absent and "" both leave *out as it was, since
 * Kubernetes gives an empty string field the same meaning as a missing one. */
bool dec_get_str(dec *d, const cJSON *obj, const char *name, ls_str *out)
{
    const char *s;
    if (!dec_get_text(d, obj, name, &s))
        return false;
    if (s && *s)
        *out = ls_intern_cstr(s);
    return true;
}

bool dec_require_str(dec *d, const cJSON *obj, const char *name, ls_str *out)
{
    *out = 0;
    if (!dec_get_str(d, obj, name, out))
        return false;
    return *out ? true : dec_fail_member(d, obj, name, "required");
}

bool dec_get_bool(dec *d, const cJSON *obj, const char *name, uint8_t *out)
{
    const cJSON *j = ls_json_member(obj, name);
    if (j && !cJSON_IsBool(j))
        return dec_fail_member(d, obj, name, "expected a boolean");
    if (j)
        *out = cJSON_IsTrue(j) ? 1 : 0;
    return true;
}

/* The YAML loader keeps a number's source text in valuestring: read that when it
 * is a plain decimal (exact beyond 2^53), else the double if it is integral. */
static bool json_int64(const cJSON *j, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    if (j->valuestring && ls_parse_int64(j->valuestring, out))
        return true;
    double v = j->valuedouble;
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return false;
    int64_t i = (int64_t)v;
    if ((double)i != v)
        return false;
    *out = i;
    return true;
}

bool dec_get_int64(dec *d, const cJSON *obj, const char *name, int64_t *out, bool *present)
{
    const cJSON *j = ls_json_member(obj, name);
    if (present)
        *present = j != NULL;
    if (j && !json_int64(j, out))
        return dec_fail_member(d, obj, name, "expected an integer");
    return true;
}

bool dec_get_int32(dec *d, const cJSON *obj, const char *name, int32_t *out, bool *present)
{
    int64_t v = *out;
    if (!dec_get_int64(d, obj, name, &v, present))
        return false;
    if (v < INT32_MIN || v > INT32_MAX)
        return dec_fail_member(d, obj, name, "expected an integer (32-bit)");
    *out = (int32_t)v;
    return true;
}

/* "A, B or C" from the non-NULL names. */
static const char *join_names(const char *const *names, int n, char *buf, size_t size)
{
    int total = 0, k = 0;
    for (int i = 0; i < n; i++)
        total += names[i] != NULL;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < size; i++) {
        if (!names[i])
            continue;
        const char *sep = k == 0 ? "" : (k == total - 1 ? " or " : ", ");
        len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, names[i]);
        k++;
    }
    return buf;
}

/* A string member naming one of names[] (indexed by the enum value; NULL
 * entries are not accepted). Absent leaves *out as it was, unless required. */
bool dec_get_enum(dec *d, const cJSON *obj, const char *name, const char *const *names,
                  int n, bool required, uint8_t *out)
{
    const char *s;
    if (!dec_get_text(d, obj, name, &s))
        return false;
    if (!s || !*s)
        return required ? dec_fail_member(d, obj, name, "required") : true;
    for (int i = 0; i < n; i++) {
        if (names[i] && strcmp(names[i], s) == 0) {
            *out = (uint8_t)i;
            return true;
        }
    }
    char expected[256], msg[512];
    snprintf(msg, sizeof msg, "unknown value \"%.200s\" (expected %s)", s,
             join_names(names, n, expected, sizeof expected));
    return dec_fail_member(d, obj, name, msg);
}

bool dec_get_time(dec *d, const cJSON *obj, const char *name, int64_t *out)
{
    const char *s;
    if (!dec_get_text(d, obj, name, &s))
        return false;
    if (!s)
        return true;
    if (ls_time_parse(s, out))
        return true;
    char msg[400];
    snprintf(msg, sizeof msg, "invalid time \"%.200s\" (expected RFC 3339, e.g. 2006-01-02T15:04:05Z)", s);
    return dec_fail_member(d, obj, name, msg);
}

/* ---- labels and quantities ------------------------------------------------- */

bool dec_labels(dec *d, const cJSON *obj, const char *name, ls_labels *out)
{
    const cJSON *j, *bad = NULL;
    if (!dec_get_object(d, obj, name, &j))
        return false;
    if (!j)
        return true;
    size_t mark = dec_path_field(d, name);
    if (!ls_labels_from_json(j, d->a, out, &bad)) {
        dec_path_field(d, bad->string);
        return dec_fail(d, bad, "expected a string");
    }
    dec_path_pop(d, mark);
    return true;
}

/* Prints a JSON number with the fewest digits that read back the same, so
 * cpu: 0.1 stays "0.1" and is not rounded up from 0.10000000000000001. */
static const char *number_text(const cJSON *j, char *buf, size_t size)
{
    if (j->valuestring)
        return j->valuestring;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, j->valuedouble);
        if (strtod(buf, NULL) == j->valuedouble)
            break;
    }
    return buf;
}

static bool dec_quantity(dec *d, const cJSON *j, int scale, int64_t *out)
{
    char buf[64];
    const char *text;
    if (cJSON_IsString(j))
        text = j->valuestring;
    else if (cJSON_IsNumber(j))
        text = number_text(j, buf, sizeof buf);
    else
        return dec_fail(d, j, "expected a quantity (a string or a number)");
    if (!ls_quantity_parse(text, scale, out, &d->scratch))
        return dec_fail(d, j, "%s", d->scratch.msg);
    if (*out < 0)
        return dec_fail(d, j, "invalid quantity \"%.200s\": must not be negative", text);
    return true;
}

/* A ResourceList: cpu in millicores, everything else in units. Unknown names
 * get a registry slot; *set (may be NULL) gets a bit per slot given. */
bool dec_resources(dec *d, const cJSON *obj, const char *name, ls_resources *out, uint32_t *set)
{
    const cJSON *j;
    if (!dec_get_object(d, obj, name, &j))
        return false;
    if (!j)
        return true;
    size_t mark = dec_path_field(d, name);
    const cJSON *item;
    cJSON_ArrayForEach(item, j) {
        size_t m = dec_path_field(d, item->string);
        int64_t v;
        /* Parse before registering, so a typo'd value does not use up a slot. */
        if (!dec_quantity(d, item, strcmp(item->string, "cpu") == 0 ? 3 : 0, &v))
            return false;
        int32_t slot = ls_resource_intern(item->string, &d->scratch);
        if (slot < 0)
            return dec_fail(d, item, "%s", d->scratch.msg);
        out->v[slot] = v;
        if (set)
            *set |= 1u << slot;
        dec_path_pop(d, m);
    }
    dec_path_pop(d, mark);
    return true;
}

bool dec_selector(dec *d, const cJSON *obj, const char *name, ls_selector *out)
{
    const cJSON *bad = NULL;
    size_t mark = dec_path_field(d, name);
    if (!ls_selector_compile_at(ls_json_member(obj, name), d->a, out, d->path, &d->scratch, &bad))
        return dec_fail_scratch(d, bad ? bad : obj);
    dec_path_pop(d, mark);
    return true;
}

bool dec_node_term(dec *d, const cJSON *j, const cJSON *parent, ls_node_selector_term *out)
{
    const cJSON *bad = NULL;
    if (!ls_node_selector_term_compile(j, d->a, out, d->path, &d->scratch, &bad))
        return dec_fail_scratch(d, bad ? bad : parent);
    return true;
}

/* ---- lists --------------------------------------------------------------------- */

/* Every element of arr (NULL: none), each at its path [i]; an error leaves the
 * path at the element that failed. out may be NULL (a list only read). */
bool dec_items(dec *d, const cJSON *arr, size_t item_size, decode_item_fn fn, void *ctx, list_out *out)
{
    char *items = item_size ? ls_arena_alloc(d->a, dec_size_of(arr) * item_size) : NULL;
    uint32_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr) {
        size_t m = dec_path_index(d, (int)i);
        if (!fn(d, j, items ? items + i * item_size : NULL, ctx))
            return false;
        dec_path_pop(d, m);
        i++;
    }
    if (out) {
        out->items = items;
        out->n = i;
    }
    return true;
}

/* obj.name, a list (absent: no elements), decoded by fn under its field path. */
bool dec_list(dec *d, const cJSON *obj, const char *name, size_t item_size, decode_item_fn fn, void *ctx,
              list_out *out)
{
    const cJSON *arr;
    if (!dec_get_array(d, obj, name, &arr))
        return false;
    size_t mark = dec_path_field(d, name);
    if (!dec_items(d, arr, item_size, fn, ctx, out))
        return false;
    dec_path_pop(d, mark);
    return true;
}

bool dec_list_to(dec *d, const cJSON *obj, const char *name, size_t item_size, decode_item_fn fn, void *ctx,
                 uint32_t *n, void *items)
{
    list_out l;
    if (!dec_list(d, obj, name, item_size, fn, ctx, &l))
        return false;
    *n = l.n;
    memcpy(items, &l.items, sizeof l.items);
    return true;
}

static bool decode_string_item(dec *d, const cJSON *item, void *out, void *ctx)
{
    (void)ctx;
    if (!cJSON_IsString(item))
        return dec_fail(d, item, "expected a string");
    *(ls_str *)out = ls_intern_cstr(item->valuestring);
    return true;
}

/* An array of strings into interned ids (in the arena); absent leaves *n and *out. */
bool dec_strings(dec *d, const cJSON *obj, const char *name, uint32_t *n, const ls_str **out)
{
    const cJSON *arr;
    if (!dec_get_array(d, obj, name, &arr))
        return false;
    return !arr || dec_list_to(d, obj, name, sizeof(ls_str), decode_string_item, NULL, n, out);
}
