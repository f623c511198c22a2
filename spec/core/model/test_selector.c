/*
 * test_selector.c: labels, label selectors, node selectors (node affinity) and
 * taint tolerations (core/src/model/labels.c), through the public API and the
 * decoder that compiles them.
 */
#include "luasched/model.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "test.h"
#include "test_json.h"

static ls_node_obj *node_from(const char *text)
{
    cJSON *j = json(text);
    ls_error err = {{0}};
    ls_node_obj *n = ls_node_decode(j, NULL, &err);
    cJSON_Delete(j);
    if (!n)
        fprintf(stderr, "node decode failed: %s\n", err.msg);
    return n;
}

static ls_pod_obj *pod_from(const char *text, ls_error *err)
{
    cJSON *j = json(text);
    ls_pod_obj *p = ls_pod_decode(j, NULL, err);
    cJSON_Delete(j);
    return p;
}

/* A node with the given labels (a JSON object body, single-quoted). */
static ls_node_obj *labelled_node(const char *name, const char *labels)
{
    char text[1024];
    snprintf(text, sizeof text, "{'metadata':{'name':'%s','labels':{%s}}}", name, labels);
    return node_from(text);
}

/* Compiles a selector, checks that it matched the labels of a node. */
static bool sel_matches(const char *sel_text, const char *labels)
{
    ls_arena a;
    ls_arena_init(&a);
    ls_selector sel;
    ls_error err = {{0}};
    cJSON *j = json(sel_text);
    bool ok = ls_selector_compile(j, &a, &sel, "sel", &err);
    if (!ok)
        fprintf(stderr, "selector compile failed: %s\n", err.msg);
    ls_node_obj *n = labelled_node("n", labels);
    bool m = ok && n && ls_selector_matches(&sel, &n->node.labels);
    ls_node_obj_free(n);
    cJSON_Delete(j);
    ls_arena_free(&a);
    return m;
}

#define SEL_ERROR(sel_text, needle)                                         \
    do {                                                                    \
        ls_arena a_;                                                        \
        ls_arena_init(&a_);                                                 \
        ls_selector s_;                                                     \
        ls_error e_ = {{0}};                                                \
        cJSON *j_ = json(sel_text);                                         \
        CHECK(!ls_selector_compile(j_, &a_, &s_, "sel", &e_));              \
        CHECK_CONTAINS(e_.msg, needle);                                     \
        cJSON_Delete(j_);                                                   \
        ls_arena_free(&a_);                                                 \
    } while (0)

#define POD_ERROR(text, needle)                                             \
    do {                                                                    \
        ls_error e_ = {{0}};                                                \
        ls_pod_obj *p_ = pod_from(text, &e_);                               \
        CHECK(p_ == NULL);                                                  \
        CHECK_CONTAINS(e_.msg, needle);                                     \
        ls_pod_obj_free(p_);                                                \
    } while (0)

static void test_labels_sorted_and_found(void)
{
    /* Intern in reverse alphabetical order so id order differs from text order. */
    ls_str zk = ls_intern_cstr("zz-key"), mk = ls_intern_cstr("mm-key"), ak = ls_intern_cstr("aa-key");
    ls_node_obj *n = labelled_node("n1", "'aa-key':'1','zz-key':'3','mm-key':'2'");
    CHECK(n != NULL);
    if (!n)
        return;
    const ls_labels *l = &n->node.labels;
    CHECK_INT(l->n, 3);
    for (uint32_t i = 1; i < l->n; i++)
        CHECK(l->items[i - 1].key < l->items[i].key);
    CHECK_INT(l->items[0].key, zk);
    CHECK_STR(ls_str_get(ls_labels_get(l, ak)), "1");
    CHECK_STR(ls_str_get(ls_labels_get(l, mk)), "2");
    CHECK_STR(ls_str_get(ls_labels_get(l, zk)), "3");
    CHECK_INT(ls_labels_get(l, ls_intern_cstr("absent")), 0);
    CHECK(ls_labels_has(l, ak));
    CHECK(!ls_labels_has(l, ls_intern_cstr("absent")));
    CHECK(!ls_labels_has(l, 0));
    ls_node_obj_free(n);

    /* An empty value is a present label, distinct from a missing one. */
    n = labelled_node("n2", "'empty':''");
    CHECK(ls_labels_has(&n->node.labels, ls_intern_cstr("empty")));
    CHECK_STR(ls_str_get(ls_labels_get(&n->node.labels, ls_intern_cstr("empty"))), "");
    CHECK(ls_labels_get(&n->node.labels, ls_intern_cstr("empty")) != 0);
    ls_node_obj_free(n);

    /* Duplicate keys: the last one wins, as Go's JSON decoding does. */
    n = labelled_node("n3", "'dup':'first','dup':'second'");
    CHECK_INT(n->node.labels.n, 1);
    CHECK_STR(ls_str_get(ls_labels_get(&n->node.labels, ls_intern_cstr("dup"))), "second");
    ls_node_obj_free(n);
}

static void test_null_and_empty_selectors(void)
{
    ls_arena a;
    ls_arena_init(&a);
    ls_selector sel;
    ls_error err = {{0}};
    ls_labels none = {0, NULL};
    CHECK(ls_selector_compile(NULL, &a, &sel, "sel", &err));
    CHECK_INT(sel.match_nothing, 1);
    CHECK(!ls_selector_matches(&sel, &none));

    cJSON *null = json("null");
    CHECK(ls_selector_compile(null, &a, &sel, "sel", &err));
    CHECK_INT(sel.match_nothing, 1);
    cJSON_Delete(null);

    cJSON *empty = json("{}");
    CHECK(ls_selector_compile(empty, &a, &sel, "sel", &err));
    CHECK_INT(sel.match_nothing, 0);
    CHECK_INT(sel.n, 0);
    CHECK(ls_selector_matches(&sel, &none));
    cJSON_Delete(empty);
    ls_arena_free(&a);

    CHECK(sel_matches("{}", "'any':'thing'"));
    CHECK(sel_matches("{'matchLabels':{},'matchExpressions':[]}", "'any':'thing'"));
}

static void test_selector_operators(void)
{
    const char *ml = "{'matchLabels':{'app':'web'}}";
    CHECK(sel_matches(ml, "'app':'web','x':'y'"));
    CHECK(!sel_matches(ml, "'app':'db'"));
    CHECK(!sel_matches(ml, ""));

    const char *in = "{'matchExpressions':[{'key':'tier','operator':'In','values':['a','b']}]}";
    CHECK(sel_matches(in, "'tier':'a'"));
    CHECK(sel_matches(in, "'tier':'b'"));
    CHECK(!sel_matches(in, "'tier':'c'"));
    CHECK(!sel_matches(in, "'other':'a'"));

    const char *notin = "{'matchExpressions':[{'key':'tier','operator':'NotIn','values':['a']}]}";
    CHECK(!sel_matches(notin, "'tier':'a'"));
    CHECK(sel_matches(notin, "'tier':'b'"));
    CHECK(sel_matches(notin, ""));   /* absent key matches NotIn */

    const char *exists = "{'matchExpressions':[{'key':'gpu','operator':'Exists'}]}";
    CHECK(sel_matches(exists, "'gpu':''"));
    CHECK(sel_matches(exists, "'gpu':'yes'"));
    CHECK(!sel_matches(exists, "'cpu':'yes'"));

    const char *dne = "{'matchExpressions':[{'key':'gpu','operator':'DoesNotExist','values':[]}]}";
    CHECK(!sel_matches(dne, "'gpu':'yes'"));
    CHECK(sel_matches(dne, "'cpu':'yes'"));
    CHECK(sel_matches(dne, ""));

    /* Requirements are ANDed, matchLabels with matchExpressions. */
    const char *both = "{'matchLabels':{'app':'web'},'matchExpressions':[{'key':'env','operator':'NotIn','values':['prod']}]}";
    CHECK(sel_matches(both, "'app':'web','env':'dev'"));
    CHECK(sel_matches(both, "'app':'web'"));
    CHECK(!sel_matches(both, "'app':'web','env':'prod'"));
    CHECK(!sel_matches(both, "'app':'db','env':'dev'"));

    /* In with an empty-string value matches a label with an empty value only. */
    const char *empty_val = "{'matchExpressions':[{'key':'k','operator':'In','values':['']}]}";
    CHECK(sel_matches(empty_val, "'k':''"));
    CHECK(!sel_matches(empty_val, "'k':'x'"));
    CHECK(!sel_matches(empty_val, ""));
}

static void test_selector_compiled_form(void)
{
    /* Values sorted by id (and deduplicated), requirements by key id. */
    ls_str v3 = ls_intern_cstr("val-3"), v2 = ls_intern_cstr("val-2"), v1 = ls_intern_cstr("val-1");
    ls_str kz = ls_intern_cstr("sel-key-z"), ka = ls_intern_cstr("sel-key-a");
    cJSON *j = json("{'matchLabels':{'sel-key-a':'x'},'matchExpressions':["
                    "{'key':'sel-key-z','operator':'In','values':['val-1','val-2','val-3','val-2']},"
                    "{'key':'sel-key-a','operator':'Exists'}]}");
    ls_arena a;
    ls_arena_init(&a);
    ls_selector sel;
    ls_error err = {{0}};
    CHECK(ls_selector_compile(j, &a, &sel, "sel", &err));
    CHECK_INT(sel.n, 3);
    CHECK_INT(sel.reqs[0].key, kz);   /* interned first, so the smallest id */
    CHECK_INT(sel.reqs[0].op, LS_OP_IN);
    CHECK_INT(sel.reqs[0].n_values, 3);
    CHECK_INT(sel.reqs[0].values[0], v3);
    CHECK_INT(sel.reqs[0].values[1], v2);
    CHECK_INT(sel.reqs[0].values[2], v1);
    /* Equal keys keep source order: matchLabels first. */
    CHECK_INT(sel.reqs[1].key, ka);
    CHECK_INT(sel.reqs[1].op, LS_OP_IN);
    CHECK_INT(sel.reqs[2].key, ka);
    CHECK_INT(sel.reqs[2].op, LS_OP_EXISTS);
    cJSON_Delete(j);
    ls_arena_free(&a);
}

static void test_selector_errors(void)
{
    SEL_ERROR("[]", "sel: expected an object");
    SEL_ERROR("{'matchLabels':[]}", "sel.matchLabels: expected an object");
    SEL_ERROR("{'matchLabels':{'app':3}}", "sel.matchLabels.app: expected a string");
    SEL_ERROR("{'matchExpressions':{}}", "sel.matchExpressions: expected an array");
    SEL_ERROR("{'matchExpressions':['x']}", "sel.matchExpressions[0]: expected an object");
    SEL_ERROR("{'matchExpressions':[{'operator':'Exists'}]}", "sel.matchExpressions[0].key: required");
    SEL_ERROR("{'matchExpressions':[{'key':'k'}]}", "sel.matchExpressions[0].operator: required");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'In'}]}",
              "sel.matchExpressions[0].values: must be non-empty for operator In");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'Exists'},{'key':'k','operator':'NotIn','values':[]}]}",
              "sel.matchExpressions[1].values: must be non-empty for operator NotIn");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'Exists','values':['a']}]}",
              "sel.matchExpressions[0].values: must be empty for operator Exists");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'DoesNotExist','values':['a']}]}",
              "must be empty for operator DoesNotExist");
    /* Gt/Lt belong to node selectors, not to label selectors. */
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'Gt','values':['1']}]}",
              "sel.matchExpressions[0].operator: unknown operator \"Gt\"");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'in','values':['a']}]}", "unknown operator \"in\"");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'In','values':'a'}]}",
              "sel.matchExpressions[0].values: expected an array");
    SEL_ERROR("{'matchExpressions':[{'key':'k','operator':'In','values':['a',1]}]}",
              "sel.matchExpressions[0].values[1]: expected a string");
    SEL_ERROR("{'matchExpressions':[{'key':7,'operator':'Exists'}]}", "sel.matchExpressions[0].key: expected a string");
}

/* ---- node affinity -------------------------------------------------------- */

/* A pod whose spec.affinity.nodeAffinity.required is the given terms. */
static ls_pod_obj *pod_with_terms(const char *terms, const char *node_selector)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{'metadata':{'name':'p'},'spec':{%s%s%s"
             "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
             "{'nodeSelectorTerms':[%s]}}}}}",
             node_selector ? "'nodeSelector':{" : "", node_selector ? node_selector : "",
             node_selector ? "}," : "", terms);
    ls_error err = {{0}};
    ls_pod_obj *p = pod_from(text, &err);
    if (!p)
        fprintf(stderr, "pod decode failed: %s\n", err.msg);
    return p;
}

static bool affinity_matches(const char *terms, const char *node_selector, const char *name, const char *labels)
{
    ls_pod_obj *p = pod_with_terms(terms, node_selector);
    ls_node_obj *n = labelled_node(name, labels);
    bool m = p && n && ls_pod_matches_node_affinity(&p->pod, &n->node);
    ls_pod_obj_free(p);
    ls_node_obj_free(n);
    return m;
}

static void test_node_selector_only(void)
{
    ls_error err = {{0}};
    ls_pod_obj *p = pod_from("{'metadata':{'name':'p'},'spec':{'nodeSelector':{'disk':'ssd','zone':'a'}}}", &err);
    ls_node_obj *yes = labelled_node("n1", "'disk':'ssd','zone':'a','x':'y'");
    ls_node_obj *partial = labelled_node("n2", "'disk':'ssd'");
    ls_node_obj *wrong = labelled_node("n3", "'disk':'hdd','zone':'a'");
    CHECK(p && !p->pod.has_required_node_affinity);
    CHECK(ls_pod_matches_node_affinity(&p->pod, &yes->node));
    CHECK(!ls_pod_matches_node_affinity(&p->pod, &partial->node));
    CHECK(!ls_pod_matches_node_affinity(&p->pod, &wrong->node));
    ls_pod_obj_free(p);

    /* No nodeSelector and no affinity: every node. */
    p = pod_from("{'metadata':{'name':'p'}}", &err);
    CHECK(ls_pod_matches_node_affinity(&p->pod, &partial->node));
    ls_pod_obj_free(p);
    ls_node_obj_free(yes);
    ls_node_obj_free(partial);
    ls_node_obj_free(wrong);
}

static void test_node_affinity_terms(void)
{
    const char *t_a = "{'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}";
    const char *t_b_gpu = "{'matchExpressions':[{'key':'zone','operator':'In','values':['b']},"
                          "{'key':'gpu','operator':'Exists'}]}";
    char two[1024];
    snprintf(two, sizeof two, "%s,%s", t_a, t_b_gpu);
    /* Terms ORed, expressions ANDed. */
    CHECK(affinity_matches(two, NULL, "n", "'zone':'a'"));
    CHECK(affinity_matches(two, NULL, "n", "'zone':'b','gpu':'1'"));
    CHECK(!affinity_matches(two, NULL, "n", "'zone':'b'"));
    CHECK(!affinity_matches(two, NULL, "n", "'zone':'c','gpu':'1'"));
    /* nodeSelector AND required terms. */
    CHECK(affinity_matches(two, "'disk':'ssd'", "n", "'zone':'a','disk':'ssd'"));
    CHECK(!affinity_matches(two, "'disk':'ssd'", "n", "'zone':'a'"));
    CHECK(!affinity_matches(two, "'disk':'ssd'", "n", "'zone':'c','disk':'ssd'"));

    /* NotIn / DoesNotExist match when the label is missing. */
    CHECK(affinity_matches("{'matchExpressions':[{'key':'zone','operator':'NotIn','values':['a']}]}", NULL, "n", ""));
    CHECK(affinity_matches("{'matchExpressions':[{'key':'spot','operator':'DoesNotExist'}]}", NULL, "n", "'x':'y'"));
    CHECK(!affinity_matches("{'matchExpressions':[{'key':'spot','operator':'DoesNotExist'}]}", NULL, "n", "'spot':''"));
}

static void test_node_affinity_gt_lt(void)
{
    const char *gt4 = "{'matchExpressions':[{'key':'cores','operator':'Gt','values':['4']}]}";
    const char *gt8 = "{'matchExpressions':[{'key':'cores','operator':'Gt','values':['8']}]}";
    const char *lt10 = "{'matchExpressions':[{'key':'cores','operator':'Lt','values':['10']}]}";
    const char *ltneg = "{'matchExpressions':[{'key':'t','operator':'Lt','values':['-5']}]}";
    CHECK(affinity_matches(gt4, NULL, "n", "'cores':'8'"));
    CHECK(!affinity_matches(gt8, NULL, "n", "'cores':'8'"));   /* strictly greater */
    CHECK(affinity_matches(lt10, NULL, "n", "'cores':'8'"));
    CHECK(!affinity_matches(lt10, NULL, "n", "'cores':'10'"));
    CHECK(affinity_matches(ltneg, NULL, "n", "'t':'-6'"));
    CHECK(!affinity_matches(ltneg, NULL, "n", "'t':'-5'"));
    CHECK(affinity_matches(gt4, NULL, "n", "'cores':'+5'"));
    /* A label that is not an integer, or missing, does not match. */
    CHECK(!affinity_matches(gt4, NULL, "n", "'cores':'many'"));
    CHECK(!affinity_matches(gt4, NULL, "n", "'cores':' 8'"));
    CHECK(!affinity_matches(gt4, NULL, "n", "'cores':''"));
    CHECK(!affinity_matches(gt4, NULL, "n", "'cores':'99999999999999999999'"));
    CHECK(!affinity_matches(gt4, NULL, "n", ""));
    CHECK(!affinity_matches(lt10, NULL, "n", ""));

    ls_pod_obj *p = pod_with_terms(gt4, NULL);
    CHECK(p && p->pod.required_node_affinity.terms[0].exprs.reqs[0].op == LS_OP_GT);
    CHECK(p && p->pod.required_node_affinity.terms[0].exprs.reqs[0].number == 4);
    ls_pod_obj_free(p);
}

static void test_node_affinity_match_fields(void)
{
    const char *in = "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}";
    const char *notin = "{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n1']}]}";
    CHECK(affinity_matches(in, NULL, "n1", ""));
    CHECK(!affinity_matches(in, NULL, "n2", ""));
    CHECK(!affinity_matches(notin, NULL, "n1", ""));
    CHECK(affinity_matches(notin, NULL, "n2", ""));
    /* Fields and expressions in one term are ANDed. */
    const char *mixed = "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}],"
                        "'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}";
    CHECK(affinity_matches(mixed, NULL, "n1", "'zone':'a'"));
    CHECK(!affinity_matches(mixed, NULL, "n1", "'zone':'b'"));
    CHECK(!affinity_matches(mixed, NULL, "n2", "'zone':'a'"));

    ls_pod_obj *p = pod_with_terms(in, NULL);
    const ls_node_selector_term *t = p ? &p->pod.required_node_affinity.terms[0] : NULL;
    CHECK(t && t->fields.n == 1 && t->exprs.n == 0);
    CHECK(t && t->fields.reqs[0].key == ls_intern_cstr("metadata.name"));
    ls_pod_obj_free(p);
}

static void test_node_affinity_empty_terms(void)
{
    /* A term with nothing in it matches no node, even alongside nothing else. */
    CHECK(!affinity_matches("{}", NULL, "n", "'zone':'a'"));
    CHECK(!affinity_matches("{'matchExpressions':[],'matchFields':[]}", NULL, "n", "'zone':'a'"));
    /* ...but does not stop another term from matching. */
    CHECK(affinity_matches("{},{'matchExpressions':[{'key':'zone','operator':'Exists'}]}", NULL, "n", "'zone':'a'"));

    ls_node_obj *n = labelled_node("n", "'zone':'a'");
    ls_node_selector empty = {0, NULL};
    CHECK(!ls_node_selector_matches(&empty, &n->node));
    ls_node_obj_free(n);
}

static void test_node_affinity_errors(void)
{
    const char *pre = "{'metadata':{'name':'p'},'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':";
    char text[2048];
#define TERMS_ERROR(terms, needle)                                   \
    do {                                                             \
        snprintf(text, sizeof text, "%s{'nodeSelectorTerms':[%s]}}}}}", pre, terms); \
        POD_ERROR(text, needle);                                     \
    } while (0)
    const char *path = "pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                       "nodeSelectorTerms[0].matchExpressions[0].values: must have exactly one value for operator Gt";
    TERMS_ERROR("{'matchExpressions':[{'key':'c','operator':'Gt','values':['1','2']}]}", path);
    TERMS_ERROR("{'matchExpressions':[{'key':'c','operator':'Lt','values':[]}]}",
                "must have exactly one value for operator Lt");
    TERMS_ERROR("{'matchExpressions':[{'key':'c','operator':'Gt','values':['four']}]}",
                "nodeSelectorTerms[0].matchExpressions[0].values: Gt needs an integer, got \"four\"");
    TERMS_ERROR("{'matchExpressions':[{'key':'c','operator':'Near','values':['x']}]}",
                "operator: unknown operator \"Near\" (expected In, NotIn, Exists, DoesNotExist, Gt or Lt)");
    TERMS_ERROR("{},{'matchFields':[{'key':'metadata.labels','operator':'In','values':['x']}]}",
                "nodeSelectorTerms[1].matchFields[0].key: unsupported field \"metadata.labels\" (only metadata.name)");
    TERMS_ERROR("{'matchFields':[{'key':'metadata.name','operator':'Exists'}]}",
                "nodeSelectorTerms[0].matchFields[0].operator: operator Exists is not supported for matchFields");
    TERMS_ERROR("{'matchFields':[{'key':'metadata.name','operator':'In','values':['a','b']}]}",
                "nodeSelectorTerms[0].matchFields[0].values: must have exactly one value");
    TERMS_ERROR("'x'", "nodeSelectorTerms[0]: expected an object");
    TERMS_ERROR("", "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must have at least one node selector term");
#undef TERMS_ERROR
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
              "[{'weight':0,'preference':{}}]}}}}",
              "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be in the range 1-100");
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'nodeSelector':{'a':1}}}", "spec.nodeSelector.a: expected a string");
}

static void test_preferred_node_terms(void)
{
    ls_error err = {{0}};
    ls_pod_obj *p = pod_from("{'metadata':{'name':'p'},'spec':{'affinity':{'nodeAffinity':{"
                             "'preferredDuringSchedulingIgnoredDuringExecution':["
                             "{'weight':10,'preference':{'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}},"
                             "{'weight':90,'preference':{}}]}}}}", &err);
    CHECK(p != NULL);
    if (!p)
        return;
    ls_node_obj *n = labelled_node("n", "'zone':'a'");
    CHECK_INT(p->pod.n_preferred_node_affinity, 2);
    CHECK_INT(p->pod.preferred_node_affinity[0].weight, 10);
    CHECK(ls_node_selector_term_matches(&p->pod.preferred_node_affinity[0].term, &n->node));
    CHECK(!ls_node_selector_term_matches(&p->pod.preferred_node_affinity[1].term, &n->node));
    CHECK(!p->pod.has_required_node_affinity);
    CHECK(ls_pod_matches_node_affinity(&p->pod, &n->node));
    ls_node_obj_free(n);
    ls_pod_obj_free(p);
}

/* ---- tolerations -------------------------------------------------------------- */

static ls_taint taint(const char *key, const char *value, uint8_t effect)
{
    return (ls_taint){ls_intern_cstr(key), value ? ls_intern_cstr(value) : 0, effect};
}

static ls_toleration tol(const char *key, uint8_t op, const char *value, uint8_t effect)
{
    return (ls_toleration){key ? ls_intern_cstr(key) : 0, value ? ls_intern_cstr(value) : 0, op, effect};
}

static void test_toleration_effects(void)
{
    /* Every (toleration effect, taint effect) pair, for both operators. */
    for (uint8_t te = LS_EFFECT_ALL; te <= LS_EFFECT_NO_EXECUTE; te++) {
        for (uint8_t e = LS_EFFECT_NO_SCHEDULE; e <= LS_EFFECT_NO_EXECUTE; e++) {
            ls_taint t = taint("k", "v", e);
            bool want = te == LS_EFFECT_ALL || te == e;
            ls_toleration eq = tol("k", LS_TOL_EQUAL, "v", te);
            ls_toleration ex = tol("k", LS_TOL_EXISTS, NULL, te);
            ls_toleration any = tol(NULL, LS_TOL_EXISTS, NULL, te);
            CHECK_INT(ls_toleration_tolerates(&eq, &t), want);
            CHECK_INT(ls_toleration_tolerates(&ex, &t), want);
            CHECK_INT(ls_toleration_tolerates(&any, &t), want);
        }
    }
}

static void test_toleration_keys_and_values(void)
{
    ls_taint t = taint("dedicated", "gpu", LS_EFFECT_NO_SCHEDULE);
    ls_taint novalue = taint("dedicated", NULL, LS_EFFECT_NO_SCHEDULE);
    ls_taint emptyvalue = taint("dedicated", "", LS_EFFECT_NO_SCHEDULE);

    ls_toleration eq = tol("dedicated", LS_TOL_EQUAL, "gpu", LS_EFFECT_ALL);
    ls_toleration eq_other = tol("dedicated", LS_TOL_EQUAL, "cpu", LS_EFFECT_ALL);
    ls_toleration eq_novalue = tol("dedicated", LS_TOL_EQUAL, NULL, LS_EFFECT_ALL);
    ls_toleration eq_empty = tol("dedicated", LS_TOL_EQUAL, "", LS_EFFECT_ALL);
    ls_toleration other_key = tol("special", LS_TOL_EQUAL, "gpu", LS_EFFECT_ALL);
    ls_toleration exists = tol("dedicated", LS_TOL_EXISTS, NULL, LS_EFFECT_ALL);
    ls_toleration exists_other = tol("special", LS_TOL_EXISTS, NULL, LS_EFFECT_ALL);
    ls_toleration exists_empty_key = tol("", LS_TOL_EXISTS, NULL, LS_EFFECT_ALL);
    ls_toleration wildcard_ns = tol(NULL, LS_TOL_EXISTS, NULL, LS_EFFECT_NO_SCHEDULE);

    CHECK(ls_toleration_tolerates(&eq, &t));
    CHECK(!ls_toleration_tolerates(&eq_other, &t));      /* Equal needs the same value */
    CHECK(!ls_toleration_tolerates(&eq_novalue, &t));
    CHECK(ls_toleration_tolerates(&eq_novalue, &novalue));
    CHECK(ls_toleration_tolerates(&eq_novalue, &emptyvalue));   /* absent == "" */
    CHECK(ls_toleration_tolerates(&eq_empty, &novalue));
    CHECK(!ls_toleration_tolerates(&eq, &novalue));
    CHECK(!ls_toleration_tolerates(&other_key, &t));
    CHECK(ls_toleration_tolerates(&exists, &t));         /* Exists ignores the value */
    CHECK(ls_toleration_tolerates(&exists, &novalue));
    CHECK(!ls_toleration_tolerates(&exists_other, &t));
    CHECK(ls_toleration_tolerates(&exists_empty_key, &t));
    CHECK(ls_toleration_tolerates(&wildcard_ns, &t));
    CHECK(!ls_toleration_tolerates(&wildcard_ns, &(ls_taint){t.key, t.value, LS_EFFECT_NO_EXECUTE}));

    ls_toleration list[] = {other_key, eq_other, exists};
    CHECK(ls_tolerations_tolerate(list, 3, &t));
    CHECK(!ls_tolerations_tolerate(list, 2, &t));
    CHECK(!ls_tolerations_tolerate(NULL, 0, &t));
}

static void test_untolerated_taint_search(void)
{
    ls_taint taints[] = {
        taint("a", "1", LS_EFFECT_PREFER_NO_SCHEDULE),
        taint("b", "2", LS_EFFECT_NO_SCHEDULE),
        taint("c", "3", LS_EFFECT_NO_EXECUTE),
    };
    uint32_t hard = (1u << LS_EFFECT_NO_SCHEDULE) | (1u << LS_EFFECT_NO_EXECUTE);
    uint32_t soft = 1u << LS_EFFECT_PREFER_NO_SCHEDULE;
    CHECK_INT(ls_find_untolerated_taint(taints, 3, NULL, 0, hard), 1);
    CHECK_INT(ls_find_untolerated_taint(taints, 3, NULL, 0, soft), 0);
    CHECK_INT(ls_find_untolerated_taint(taints, 3, NULL, 0, 1u << LS_EFFECT_NO_EXECUTE), 2);
    CHECK_INT(ls_find_untolerated_taint(taints, 3, NULL, 0, 0), -1);
    CHECK_INT(ls_find_untolerated_taint(NULL, 0, NULL, 0, hard), -1);

    ls_toleration tol_b[] = {tol("b", LS_TOL_EQUAL, "2", LS_EFFECT_NO_SCHEDULE)};
    CHECK_INT(ls_find_untolerated_taint(taints, 3, tol_b, 1, hard), 2);
    CHECK_INT(ls_find_untolerated_taint(taints, 3, tol_b, 1, soft), 0);

    ls_toleration tol_bc[] = {tol("b", LS_TOL_EXISTS, NULL, LS_EFFECT_ALL), tol("c", LS_TOL_EQUAL, "3", LS_EFFECT_ALL)};
    CHECK_INT(ls_find_untolerated_taint(taints, 3, tol_bc, 2, hard), -1);
    CHECK_INT(ls_find_untolerated_taint(taints, 3, tol_bc, 2, soft | hard), 0);

    ls_toleration all[] = {tol(NULL, LS_TOL_EXISTS, NULL, LS_EFFECT_ALL)};
    CHECK_INT(ls_find_untolerated_taint(taints, 3, all, 1, soft | hard), -1);

    /* A toleration for the wrong effect does not help. */
    ls_toleration wrong[] = {tol("b", LS_TOL_EQUAL, "2", LS_EFFECT_NO_EXECUTE)};
    CHECK_INT(ls_find_untolerated_taint(taints, 3, wrong, 1, hard), 1);
}

static void test_decoded_tolerations_and_taints(void)
{
    ls_error err = {{0}};
    ls_pod_obj *p = pod_from("{'metadata':{'name':'p'},'spec':{'tolerations':["
                             "{'key':'a','value':'1'},"
                             "{'key':'b','operator':'Exists','effect':'NoExecute'},"
                             "{'operator':'Exists'},"
                             "{'key':'c','operator':'Equal','value':'','effect':'PreferNoSchedule','tolerationSeconds':30}]}}",
                             &err);
    ls_node_obj *n = node_from("{'metadata':{'name':'n'},'spec':{'taints':["
                               "{'key':'a','value':'1','effect':'NoSchedule'},"
                               "{'key':'c','effect':'PreferNoSchedule'}]}}");
    CHECK(p && n);
    if (!p || !n) {
        ls_pod_obj_free(p);
        ls_node_obj_free(n);
        return;
    }
    const ls_toleration *t = p->pod.tolerations;
    CHECK_INT(p->pod.n_tolerations, 4);
    CHECK_INT(t[0].op, LS_TOL_EQUAL);      /* default operator */
    CHECK_INT(t[0].effect, LS_EFFECT_ALL); /* no effect: all effects */
    CHECK_INT(t[1].op, LS_TOL_EXISTS);
    CHECK_INT(t[1].effect, LS_EFFECT_NO_EXECUTE);
    CHECK_INT(t[2].key, 0);
    CHECK_INT(t[3].effect, LS_EFFECT_PREFER_NO_SCHEDULE);
    CHECK_INT(t[3].value, 0);              /* "" reads as absent */
    CHECK_INT(n->node.n_taints, 2);
    CHECK_INT(n->node.taints[0].effect, LS_EFFECT_NO_SCHEDULE);
    CHECK_INT(n->node.taints[1].value, 0);
    CHECK(ls_toleration_tolerates(&t[0], &n->node.taints[0]));
    CHECK(ls_toleration_tolerates(&t[3], &n->node.taints[1]));
    CHECK_INT(ls_find_untolerated_taint(n->node.taints, 2, t, 2, ~0u), 1);
    ls_pod_obj_free(p);
    ls_node_obj_free(n);

    POD_ERROR("{'metadata':{'name':'p'},'spec':{'tolerations':[{'key':'a','effect':'NoRun'}]}}",
              "pod default/p: spec.tolerations[0].effect: unknown value \"NoRun\" (expected NoSchedule, PreferNoSchedule or NoExecute)");
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'tolerations':[{},{'key':'a','operator':'Has'}]}}",
              "spec.tolerations[0].operator: must be Exists when key is empty");
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'tolerations':[{'key':'a','operator':'Has'}]}}",
              "spec.tolerations[0].operator: unknown value \"Has\" (expected Equal or Exists)");
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'tolerations':[{'key':'a','operator':'Exists','value':'x'}]}}",
              "spec.tolerations[0].value: must be empty when operator is Exists");
    POD_ERROR("{'metadata':{'name':'p'},'spec':{'tolerations':{}}}", "spec.tolerations: expected an array");
}

int main(void)
{
    test_labels_sorted_and_found();
    test_null_and_empty_selectors();
    test_selector_operators();
    test_selector_compiled_form();
    test_selector_errors();
    test_node_selector_only();
    test_node_affinity_terms();
    test_node_affinity_gt_lt();
    test_node_affinity_match_fields();
    test_node_affinity_empty_terms();
    test_node_affinity_errors();
    test_preferred_node_terms();
    test_toleration_effects();
    test_toleration_keys_and_values();
    test_untolerated_taint_search();
    test_decoded_tolerations_and_taints();
    ls_intern_reset();
    TEST_MAIN_END();
}
