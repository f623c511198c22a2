/*
 * fields_check.h: the fields a Pod or a Node may have (the v1 API's), so a
 * cluster file's misspelt field is named instead of silently dropped.
 */
#ifndef LS_FIELDS_CHECK_H
#define LS_FIELDS_CHECK_H

#include <stddef.h>

struct cJSON;

/* A field the API type has no such member for: `at` is the member, `path`
 * its parent ("spec.containers[0].resources"), `suggestion` the closest
 * known member or NULL. */
typedef void (*ls_unknown_field_fn)(void *ud, const struct cJSON *at, const char *path, const char *suggestion);

/* Walks a Pod or Node object (by its kind) and calls `report` for each
 * unknown field; other kinds are not checked. */
void ls_check_known_fields(const struct cJSON *obj, ls_unknown_field_fn report, void *ud);

#endif
