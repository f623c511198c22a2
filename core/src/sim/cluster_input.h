/*
 * cluster_input.h: what a cluster file's Pods and Nodes say that the
 * scheduler would silently get wrong (cluster_input.c): unknown fields, a pod
 * without containers, a node whose allocatable lacks pods, cpu or memory.
 */
#ifndef LS_CLUSTER_INPUT_H
#define LS_CLUSTER_INPUT_H

#include "luasched/base.h"
#include "model/doc.h"

struct cJSON;

/* Appends one warning (char *, owned by the vector) per problem of `obj`, a
 * Pod or Node document of `doc`, each "file:line: Kind name: what". */
void ls_cluster_input_warnings(ls_vec *warnings, const struct cJSON *obj, const ls_doc_set *doc);

#endif
