/*
 * config_internal.h: what the parts of the configuration code share: the
 * plugin sets as written, the parse context that gathers every problem with
 * its file, line and field path, the field readers, and Go durations.
 */
#ifndef LS_CONFIG_INTERNAL_H
#define LS_CONFIG_INTERNAL_H

#include "luasched/config.h"
#include "luasched/map.h"
#include "model/doc.h"

#include <cjson/cJSON.h>

#define LS_API_VERSION "kubescheduler.config.k8s.io/v1"
#define LS_DEFAULT_SCHEDULER "default-scheduler"

enum { SET_MULTI_POINT = LS_EP_COUNT, SET_COUNT };

typedef struct plugin_set {
    ls_vec enabled;    /* ls_plugin_ref */
    ls_vec disabled;   /* ls_str */
} plugin_set;

typedef struct raw_profile {
    plugin_set sets[SET_COUNT];
    ls_map name_lines;   /* interned plugin name -> the line it is first named on (uintptr_t) */
} raw_profile;

typedef struct parse_ctx {
    const ls_doc_set *doc;   /* NULL for the built-in default */
    const char *source;
    ls_vec *problems;        /* char * */
    ls_error *err;           /* gets the first problem */
    ls_arena *text;          /* the configuration's: owns the strings read */
} parse_ctx;

/* Records "source:line: path: what" (no ":line" when unknown). Returns false. */
bool ls_cfg_problem(const parse_ctx *pc, const cJSON *item, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records "source: what" (a problem without a field). Returns false. */
bool ls_cfg_problem_plain(ls_vec *problems, ls_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ls_cfg_problems_free(ls_vec *problems);

/* snprintf for field paths (cut at the buffer, never an overflow). */
void ls_cfg_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "unknown field" for every member of obj not in known (NULL-terminated). */
bool ls_cfg_known_fields(const parse_ctx *pc, const cJSON *obj, const char *prefix, const char *const *known);
/* An object of only the known fields: when obj is not an object, the problem
 * "path: not_object" and false; otherwise its fields checked (path + "." +
 * field) and true. */
bool ls_cfg_object(const parse_ctx *pc, const cJSON *obj, const char *path, const char *not_object,
                   const char *const *known);
/* A list: calls item(pc, element, "path[i]", ctx) for each element. Missing or
 * null is an empty list; anything else is the problem "expected a list of what". */
typedef void (*ls_cfg_item_fn)(const parse_ctx *pc, const cJSON *e, const char *path, void *ctx);
void ls_cfg_each(const parse_ctx *pc, const cJSON *list, const char *path, const char *what, ls_cfg_item_fn item,
                 void *ctx);
/* Readers: an absent or null member leaves *out alone; a value of the wrong
 * type is a problem (and leaves *out alone). Paths are prefix + key. */
bool ls_cfg_int32(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, int32_t *out);
bool ls_cfg_int64(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, int64_t *out);
bool ls_cfg_bool(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, bool *out);
/* Replaces *out with a copy of the string (owned by pc->text). */
bool ls_cfg_string(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, char **out);
/* The line of obj[key] if present, else of obj. */
const cJSON *ls_cfg_at(const cJSON *obj, const char *key);

/* Parse and validate the sections other than the profiles. */
void ls_cfg_parse_leader_election(ls_config *cfg, const parse_ctx *pc, const cJSON *root);
void ls_cfg_parse_client_connection(ls_config *cfg, const parse_ctx *pc, const cJSON *root);
void ls_cfg_parse_luasched(ls_config *cfg, const parse_ctx *pc, const cJSON *root);
/* A profile's own luasched section (time and instruction budgets). */
void ls_cfg_parse_profile_luasched(const parse_ctx *pc, const cJSON *profile, const char *path, ls_profile *prof);
void ls_cfg_set_defaults(ls_config *cfg);
/* config_extenders.c: `extenders:` read and validated as upstream
 * (validateExtenders), freed, and written back (--write-config-to). */
void ls_cfg_parse_extenders(ls_config *cfg, const parse_ctx *pc, const cJSON *root);
cJSON *ls_cfg_extenders_json(const ls_config *cfg);

/* Go's time.ParseDuration and Duration.String. */
bool ls_go_duration_parse(const char *s, int64_t *ns);
void ls_go_duration_format(int64_t ns, char *buf, size_t len);

/* mergePluginSet of upstream's default multiPoint set (what luasched ships)
 * with the user's multiPoint set: ls_plugin_ref into out. */
void ls_cfg_merge_default_multi_point(const plugin_set *user, ls_vec *out);

/* The workload scheduling points of v1.37's Plugins (1.36: placementGenerate,
 * placementScore; 1.37: podGroupPostFilter), read and written empty only.
 * NULL-terminated. (placementFeasible is v1.38's.) */
extern const char *const LS_CFG_WORKLOAD_POINTS[];
bool ls_cfg_is_workload_point(const char *key);

#endif
