/*
 * decode_extra.h: the second pass of pod and node decoding (decode_pod_extra.c),
 * for the fields policy plugins read. Internal to the model: decode.c calls
 * these once the first pass has succeeded, with the same arena and context.
 */
#ifndef LUASCHED_DECODE_EXTRA_H
#define LUASCHED_DECODE_EXTRA_H

#include "labels_internal.h"

bool ls_pod_decode_extra(const struct cJSON *obj, ls_pod *pod, ls_arena *a, const ls_decode_ctx *ctx,
                         ls_error *err);
bool ls_node_decode_extra(const struct cJSON *obj, ls_node *node, ls_arena *a, const ls_decode_ctx *ctx,
                          ls_error *err);

#endif
