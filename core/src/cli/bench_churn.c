/*
 * bench_churn.c: a workload's churn operation (upstream's churnOp): every
 * interval, create each template once (create), flip each template's slot
 * between created and deleted (recreate), or report node heartbeats
 * (heartbeat). Objects are made by bench_cluster.c's builders and kept in its
 * state (bench_internal.h).
 */
#include "cli/bench_internal.h"
#include "luasched/map.h"

#include <stdio.h>
#include <string.h>

static void churn_warn(const ls_error *err)
{
    static bool warned;
    if (!warned)
        fprintf(stderr, "luasched bench: warning: churn: %s (further churn errors are not shown)\n", err->msg);
    warned = true;
}

static churn_ref churn_create(bench_cluster *c, uint32_t t)
{
    const bench_churn *ch = &c->w->churn;
    cJSON *tmpl = ch->templates[t];
    const char *kind = cJSON_GetObjectItemCaseSensitive(tmpl, "kind")->valuestring;
    ls_error err;
    churn_ref ref = {REF_NONE, 0};
    if (strcmp(kind, "Pod") == 0) {
        ls_pod_obj *p = bench_make_pod(c, tmpl, ch->where[t], ch->ns, &err);
        if (p) {
            ref = (churn_ref){REF_POD, c->pods.len};
            bench_add_pod(c, bench_push_pod(c, p, BENCH_ROLE_CHURN));
        }
    } else if (strcmp(kind, "Node") == 0) {
        ls_node_obj *n = bench_make_node(c, tmpl, ch->where[t], false, NULL, NULL, &err);
        if (n) {
            ref = (churn_ref){REF_NODE, c->nodes.len};
            bench_add_node(c, n);
        }
    } else {
        char name[256];
        bench_object_name(tmpl, "object-", c->object_counter++, false, name, sizeof name);
        bench_set_name(tmpl, name, strcmp(kind, "Namespace") == 0 ? NULL : ch->ns);
        ls_object_obj *o = bench_decode_object(tmpl, ch->where[t], &err);
        if (o) {
            ref = (churn_ref){REF_OBJECT, c->objects.len};
            bench_add_object(c, o);
        }
    }
    if (ref.kind == REF_NONE)
        churn_warn(&err);
    else
        c->counts.churn_created++;
    return ref;
}

static void churn_delete(bench_cluster *c, churn_ref ref)
{
    if (ref.kind == REF_POD) {
        bench_delete_pod(c, &LS_VEC_AT(&c->pods, bench_pod, ref.index));
    } else if (ref.kind == REF_NODE) {
        bench_node *bn = &LS_VEC_AT(&c->nodes, bench_node, ref.index);
        bn->deleted = true;
        ls_map_remove(&c->node_names, bn->obj->node.name);
        ls_scheduler_on_node_delete(c->sched, &bn->obj->node);
    } else if (ref.kind == REF_OBJECT) {
        bench_object *bo = &LS_VEC_AT(&c->objects, bench_object, ref.index);
        bo->deleted = true;
        ls_scheduler_on_object_delete(c->sched, &bo->obj->obj);
    } else {
        return;
    }
    c->counts.churn_deleted++;
}

/* One tick: every template once (create), or each template's slot flips
 * between created and deleted (recreate), as upstream's churnOp does. */
/* `number` nodes (round-robin; 0: all) report a heartbeat: upstream's node
 * status update that moves only lastHeartbeatTime, which reaches the
 * scheduler as an update whose old and new versions differ in nothing it
 * reads (here, the same object twice). */
static void churn_heartbeats(bench_cluster *c)
{
    uint32_t n = c->nodes.len, count = c->w->churn.number ? c->w->churn.number : n;
    for (uint32_t i = 0; i < count && n; i++) {
        bench_node *bn = &LS_VEC_AT(&c->nodes, bench_node, c->next_heartbeat++ % n);
        if (bn->deleted)
            continue;
        ls_scheduler_on_node_update(c->sched, &bn->obj->node, &bn->obj->node);
        c->counts.churn_heartbeats++;
    }
}

void bench_churn_tick(bench_cluster *c)
{
    const bench_churn *ch = &c->w->churn;
    if (ch->mode == BENCH_CHURN_HEARTBEAT) {
        churn_heartbeats(c);
        c->counts.churn_ticks++;
        return;
    }
    uint32_t slot = ch->mode == BENCH_CHURN_RECREATE ? c->counts.churn_ticks % ch->number : 0;
    for (uint32_t t = 0; t < ch->n_templates; t++) {
        if (ch->mode == BENCH_CHURN_CREATE) {
            churn_create(c, t);
            continue;
        }
        churn_ref *ref = &c->slots[(size_t)t * ch->number + slot];
        if (ref->kind != REF_NONE) {
            churn_delete(c, *ref);
            ref->kind = REF_NONE;
        } else {
            *ref = churn_create(c, t);
        }
    }
    c->counts.churn_ticks++;
    if (ch->mode == BENCH_CHURN_CREATE && ch->number && c->counts.churn_ticks >= ch->number)
        c->churning = false;
}

/* Decodes each churn template once, so that a bad one fails before the run. */
bool bench_cluster_check_churn(bench_cluster *c, ls_error *err)
{
    const bench_churn *ch = &c->w->churn;
    for (uint32_t t = 0; c->w->has_churn && t < ch->n_templates; t++) {
        cJSON *probe = cJSON_Duplicate(ch->templates[t], 1);
        const char *kind = cJSON_GetObjectItemCaseSensitive(probe, "kind")->valuestring;
        bool namespaced = strcmp(kind, "Node") != 0 && strcmp(kind, "Namespace") != 0;
        bench_set_name(probe, "probe", namespaced ? ch->ns : NULL);
        bool ok;
        if (strcmp(kind, "Pod") == 0) {
            ls_decode_ctx ctx = bench_decode_ctx(ch->where[t]);
            ls_pod_obj *p = ls_pod_decode(probe, &ctx, err);
            ok = p != NULL;
            ls_pod_obj_free(p);
        } else if (strcmp(kind, "Node") == 0) {
            ls_decode_ctx ctx = bench_decode_ctx(ch->where[t]);
            ls_node_obj *n = ls_node_decode(probe, &ctx, err);
            ok = n != NULL;
            ls_node_obj_free(n);
        } else {
            ls_object_obj *o = bench_decode_object(probe, ch->where[t], err);
            ok = o != NULL;
            ls_object_obj_free(o);
        }
        cJSON_Delete(probe);
        if (!ok)
            return false;
    }
    return true;
}
