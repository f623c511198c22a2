/*
 * jsonbin.h: a parsed JSON tree (cJSON) in a compact binary form, as the
 * supervisor sends the informers' objects to the worker (docs/plugins/worker.md,
 * "The cost of the boundary"). Printing a tree as JSON text and parsing it again
 * cost most of a watch event's time across the channel (number formatting and
 * parsing, string escaping); this form copies strings and numbers as they are.
 *
 * The form, in preorder: each value is a tag byte (JB_NULL ... JB_OBJECT), a
 * member of an object then its key (length, bytes), then its payload: a number
 * as its 8-byte double, a string as its length and bytes, an array or an object
 * as its count of children, which follow. Lengths and counts are unsigned
 * LEB128. Both ends are one build of luasched on one machine.
 */
#ifndef LS_WORKER_JSONBIN_H
#define LS_WORKER_JSONBIN_H

#include "luasched/base.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* Appends the form of json to out. */
void ls_jsonbin_encode(const cJSON *json, ls_buf *out);
/* The tree of data[0..len) (the caller deletes it); NULL when the bytes are
 * not one whole value of the form: truncated, trailing bytes, an unknown tag,
 * nested deeper than cJSON parses (CJSON_NESTING_LIMIT), a count larger than
 * the bytes left could hold. */
cJSON *ls_jsonbin_decode(const void *data, size_t len);

#endif
