/*
 * doc.h: the document loader (internal). Every input file (cluster manifests,
 * KubeSchedulerConfiguration, kubeconfig) is read here, as JSON or YAML, into
 * cJSON trees, so that the decoders downstream only ever see one format and
 * can still name the file and line an error comes from.
 *
 * What the trees look like:
 *  - YAML is converted the way Kubernetes converts it to JSON: mappings become
 *    objects, sequences arrays; plain scalars are typed (null, ~ and empty are
 *    null; true/false in any of the three spellings are booleans; integers,
 *    including 0x/0o/leading-zero octal, and floats are numbers); quoted and
 *    block scalars, and anything tagged !!str, stay strings. Aliases are
 *    expanded into copies, and "<<" merge keys are applied.
 *  - Number nodes (from YAML and from JSON alike) also carry their source text
 *    in valuestring ("1e3", "0.1", "123456789012345678901"), so quantities can
 *    be read exactly rather than through a double. Hex and octal integers carry
 *    their decimal spelling instead, which is what Kubernetes would see.
 *    cJSON_Delete and cJSON_Duplicate both handle that field on numbers; only
 *    cJSON_SetNumberHelper would leave it stale.
 *  - A "kind: ...List" document with an "items" array is replaced by its items.
 *
 * Everything belongs to the ls_doc_set: the trees returned by ls_doc_get stay
 * valid until ls_doc_free, and must not be freed or re-parented by callers.
 */
#ifndef LS_MODEL_DOC_H
#define LS_MODEL_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "luasched/base.h"

typedef struct ls_doc_set ls_doc_set;

/* Reads a file holding JSON or YAML, told apart by content: a first non-blank
 * character '{' or '[' means JSON, anything else YAML. YAML may hold several
 * documents ("---"); empty (and null) documents are skipped. A document that is
 * an object whose "kind" ends in "List" and that has an "items" array is
 * replaced by its items; for "FooList" each item missing "kind" gets "Foo" and
 * one missing "apiVersion" gets the list's, while items of a plain "List" keep
 * what they have. A top-level document that is not an object is an error.
 * Errors read "file:line:col: what was expected" and the result is NULL. */
ls_doc_set *ls_doc_load_file(const char *path, ls_error *err);
/* The file's text, NUL-terminated in a heap buffer (*len without the NUL),
 * read through EOF rather than trusting a size, so pipes and /dev/stdin work;
 * NULL with "path: cannot read file: reason" in err. */
char *ls_doc_read_file(const char *path, size_t *len, ls_error *err);
/* The same on text in memory; source_name is what errors and ls_doc_source
 * show (NULL gives "<input>"). The text need not be NUL-terminated. */
ls_doc_set *ls_doc_parse(const char *text, size_t len, const char *source_name, ls_error *err);

uint32_t ls_doc_count(const ls_doc_set *d);
/* The i-th object (after List expansion); NULL when out of range. */
const cJSON *ls_doc_get(const ls_doc_set *d, uint32_t i);
/* 1-based line where item starts, for any node of any tree in the set; 0 when
 * unknown (NULL, a node from elsewhere). An object member counts from its key,
 * so "resources:" with a nested mapping below it reports the key's line. A
 * copy made by an alias reports the alias's line at its root and the anchored
 * original's lines below it; "kind"/"apiVersion" filled in by List expansion
 * report the item's line. */
int ls_doc_line(const ls_doc_set *d, const cJSON *item);
/* The source name given to ls_doc_parse, or the path. */
const char *ls_doc_source(const ls_doc_set *d);
void ls_doc_free(ls_doc_set *d);

/* obj[name], with a JSON null read as absent (as Kubernetes reads it); NULL
 * also when obj is NULL or not an object. */
const cJSON *ls_json_member(const cJSON *obj, const char *name);
/* The string at obj.a.b (obj.a when b is NULL), or NULL. */
const char *ls_json_text(const cJSON *obj, const char *a, const char *b);
/* parent[key] as an object: a member of another type is replaced by an empty
 * object, a missing one added. For building and patching objects. */
cJSON *ls_json_child_object(cJSON *parent, const char *key);
/* obj[key] = value, a string (an existing member is removed first, so value
 * must not live in it). */
void ls_json_set_string(cJSON *obj, const char *key, const char *value);

/* Adapter matching ls_decode_ctx.line_of in luasched/model.h: ud is the
 * ls_doc_set *. */
int ls_doc_line_of(const cJSON *item, void *ud);

#endif
