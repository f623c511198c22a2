/*
 * labels_internal.h: what labels.c offers the decoder beyond the public API.
 * Not installed and not part of the FFI; only core/src/model uses it.
 */
#ifndef LUASCHED_LABELS_INTERNAL_H
#define LUASCHED_LABELS_INTERNAL_H

#include "luasched/model.h"

struct cJSON;

/* ls_selector_compile, and on failure *bad is the JSON item at fault, so the
 * caller can report its line. */
bool ls_selector_compile_at(const struct cJSON *json, ls_arena *a, ls_selector *out,
                            const char *field_path, ls_error *err, const struct cJSON **bad);

/* Compiles a v1 NodeSelectorTerm (matchExpressions with Gt/Lt, matchFields on
 * metadata.name). A NULL json gives the empty term, which matches no node. */
bool ls_node_selector_term_compile(const struct cJSON *json, ls_arena *a, ls_node_selector_term *out,
                                   const char *field_path, ls_error *err, const struct cJSON **bad);

/* ANDs extra requirements into a compiled selector (matchLabelKeys merging).
 * A null selector stays null: it matches nothing either way. */
void ls_selector_and(ls_selector *sel, const ls_requirement *extra, uint32_t n, ls_arena *a);

/* Sorts labels by key id in place; for a repeated key the last one wins, as a
 * JSON object with duplicate keys decodes in Go. Updates *n. */
void ls_labels_sort(ls_label *items, uint32_t *n);

/* A JSON object of string values (metadata.labels, a nodeSelector) into sorted
 * labels in the arena; false with *bad the first member that is not a string. */
bool ls_labels_from_json(const struct cJSON *map, ls_arena *a, ls_labels *out, const struct cJSON **bad);

/* Go's strconv.ParseInt(s, 10, 64): optional sign and decimal digits only;
 * false on anything else or on overflow. */
bool ls_parse_int64(const char *s, int64_t *out);

#endif
