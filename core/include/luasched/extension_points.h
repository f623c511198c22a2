/*
 * extension_points.h: the one table of the extension points and of the other
 * hooks a plugin defines. C reads it through LS_EP_* and ls_ext_point_info_of
 * (config keys, metrics labels, the dispatch functions it calls, the plugin
 * list each call runs); Lua reads the same rows at load through the FFI
 * (lua/luasched/points.lua). Adding an extension point is one row here plus
 * its runner (a function of that hook's name in lua/luasched/dispatch.lua and
 * the call in the scheduling cycle).
 *
 * core/gen_cdefs.lua expands the function-like macros of the public headers in
 * the ffi blocks, so the enum below is the same text for C and for LuaJIT.
 */
#ifndef LUASCHED_EXTENSION_POINTS_H
#define LUASCHED_EXTENSION_POINTS_H

#include <stdint.h>

/* The points a profile configures, in upstream's order (the run order):
 * X(ID, name as upstream's metrics and messages spell it, the plugin's Lua
 *   hook and dispatch.lua's function, the config key, 1 when the point's
 *   plugins can reject a pod so their cluster events matter). */
#define LS_EXTENSION_POINTS(X) \
    X(PRE_ENQUEUE, "PreEnqueue", "pre_enqueue", "preEnqueue", 1) \
    X(QUEUE_SORT, "QueueSort", "sort_key", "queueSort", 0) \
    X(PRE_FILTER, "PreFilter", "pre_filter", "preFilter", 1) \
    X(FILTER, "Filter", "filter", "filter", 1) \
    X(POST_FILTER, "PostFilter", "post_filter", "postFilter", 0) \
    X(PRE_SCORE, "PreScore", "pre_score", "preScore", 0) \
    X(SCORE, "Score", "score", "score", 0) \
    X(RESERVE, "Reserve", "reserve", "reserve", 1) \
    X(PERMIT, "Permit", "permit", "permit", 1) \
    X(PRE_BIND, "PreBind", "pre_bind", "preBind", 0) \
    X(BIND, "Bind", "bind", "bind", 0) \
    X(POST_BIND, "PostBind", "post_bind", "postBind", 0)

/* The other hooks, each run over the plugin list of a point:
 * X(ID, name (metrics label), the Lua hook, that point's ID, 1 when defining
 *   this hook alone puts a plugin at the point (multiPoint expansion)).
 * NORMALIZE_SCORE comes first: LS_EP_NORMALIZE_SCORE == LS_EP_COUNT, the
 * index the sampled plugin durations have used for it. */
#define LS_EXTENSION_HOOKS(X) \
    X(NORMALIZE_SCORE, "ScoreExtensionNormalize", "normalize_score", SCORE, 0) \
    X(UNRESERVE, "Unreserve", "unreserve", RESERVE, 0) \
    X(PRE_BIND_PRE_FLIGHT, "PreBindPreFlight", "pre_bind_pre_flight", PRE_BIND, 0) \
    X(LESS, "QueueSort", "less", QUEUE_SORT, 1) \
    X(ADD_POD, "AddPod", "add_pod", PRE_FILTER, 0) \
    X(REMOVE_POD, "RemovePod", "remove_pod", PRE_FILTER, 0)

/* ffi:begin */
#define LS_EP_ENUMERATOR(id, ...) LS_EP_##id,
#define LS_EP_PLUS_ONE(...) + 1
enum {
    LS_EXTENSION_POINTS(LS_EP_ENUMERATOR)
    LS_EXTENSION_HOOKS(LS_EP_ENUMERATOR)
    LS_EP_HOOK_COUNT
};
/* The configured points are LS_EP_* below LS_EP_COUNT (profile plugin lists). */
enum { LS_EP_COUNT = 0 LS_EXTENSION_POINTS(LS_EP_PLUS_ONE) };

typedef struct ls_ext_point_info {
    const char *name;         /* "PreFilter", "Unreserve", ... */
    const char *hook;         /* "pre_filter", "unreserve", ... */
    const char *config_key;   /* "preFilter"; NULL for a hook that is not a point */
    int32_t point;            /* LS_EP_* whose plugin list runs the hook (itself for a point) */
    uint8_t implements;       /* defining the hook alone puts a plugin at `point` */
    uint8_t rejects;          /* the point's plugins can reject a pod (their events matter) */
} ls_ext_point_info;

/* Row `ep` of the table, 0 <= ep < LS_EP_HOOK_COUNT; NULL otherwise. */
const ls_ext_point_info *ls_ext_point_info_of(int ep);
/* ffi:end */

#endif
