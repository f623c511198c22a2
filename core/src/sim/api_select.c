/*
 * api_select.c: label selectors (=, ==, !=, in, notin, key, !key) and field
 * selectors (=, ==, != joined by commas) on list and watch, with the API
 * server's error wording for what it cannot parse.
 */
#include "sim/api_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_EQ, OP_NEQ, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

typedef struct req {
    char *key;
    int op;
    bool field;                /* a field selector term: key is a dotted path */
    char **values;
    uint32_t n_values;
} req;

struct api_selector {
    req *reqs;
    uint32_t n;
};

static char *trimmed(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    return ls_xstrndup(s, len);
}

static req *push(api_selector *s)
{
    s->reqs = ls_xrealloc(s->reqs, (s->n + 1) * sizeof *s->reqs);
    req *r = &s->reqs[s->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static void add_value(req *r, char *v)
{
    r->values = ls_xrealloc(r->values, (r->n_values + 1) * sizeof *r->values);
    r->values[r->n_values++] = v;
}

/* "a,b, c" inside the parentheses of in/notin. */
static void parse_set(req *r, const char *s, size_t len)
{
    const char *end = s + len;
    while (s < end) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        char *v = trimmed(s, (size_t)(stop - s));
        if (*v)
            add_value(r, v);
        else
            free(v);
        s = stop + 1;
    }
}

/* One label term, e.g. "tier in (web, api)", "!canary", "app=web". */
static bool parse_label_term(api_selector *s, const char *t, size_t len)
{
    char *term = trimmed(t, len);
    bool ok = true;
    req *r = push(s);
    char *open = strchr(term, '(');
    char *op;
    if (term[0] == '!') {
        r->op = OP_NOTEXISTS;
        r->key = trimmed(term + 1, strlen(term + 1));
    } else if (open) {
        char *close = strchr(open, ')');
        char *head = trimmed(term, (size_t)(open - term));
        char *sp = strrchr(head, ' ');
        ok = close && sp && (strcmp(sp + 1, "in") == 0 || strcmp(sp + 1, "notin") == 0);
        if (ok) {
            r->op = strcmp(sp + 1, "in") == 0 ? OP_IN : OP_NOTIN;
            r->key = trimmed(head, (size_t)(sp - head));
            parse_set(r, open + 1, (size_t)(close - open - 1));
        }
        free(head);
    } else if ((op = strstr(term, "!=")) || (op = strstr(term, "==")) || (op = strchr(term, '='))) {
        r->op = op[0] == '!' ? OP_NEQ : OP_EQ;
        size_t oplen = op[0] == '=' && op[1] != '=' ? 1 : 2;
        r->key = trimmed(term, (size_t)(op - term));
        add_value(r, trimmed(op + oplen, strlen(op + oplen)));
    } else {
        r->op = OP_EXISTS;
        r->key = ls_xstrdup(term);
    }
    ok = ok && r->key && *r->key && !strpbrk(r->key, " =!()");
    free(term);
    return ok;
}

static bool parse_labels(api_selector *s, const char *text)
{
    int depth = 0;
    const char *start = text;
    for (const char *p = text;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            if (p > start && !parse_label_term(s, start, (size_t)(p - start)))
                return false;
            if (!*p)
                return true;
            start = p + 1;
        }
    }
}

static bool field_allowed(const ls_api_resource *r, const char *key)
{
    if (strcmp(key, "metadata.name") == 0 || strcmp(key, "metadata.namespace") == 0)
        return true;
    return api_list_has(r->fields, key);
}

static bool parse_fields(api_selector *s, const ls_api_resource *r, const char *text, char *msg, size_t msglen)
{
    for (const char *p = text; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *term = trimmed(p, len);
        p = end ? end + 1 : p + len;
        if (!*term) {
            free(term);
            continue;
        }
        char *op = strstr(term, "!=");
        if (!op)
            op = strstr(term, "==");
        if (!op)
            op = strchr(term, '=');
        if (!op) {
            snprintf(msg, msglen, "invalid selector: '%s'; can't understand '%s'", text, term);
            free(term);
            return false;
        }
        req *q = push(s);
        q->field = true;
        q->op = op[0] == '!' ? OP_NEQ : OP_EQ;
        size_t oplen = op[0] == '=' && op[1] != '=' ? 1 : 2;
        q->key = trimmed(term, (size_t)(op - term));
        add_value(q, trimmed(op + oplen, strlen(op + oplen)));
        free(term);
        if (!field_allowed(r, q->key)) {
            snprintf(msg, msglen, "field label not supported: %s", q->key);
            return false;
        }
    }
    return true;
}

api_selector *api_selector_parse(const ls_api_resource *r, const char *labels, const char *fields, char *msgbuf,
                                 size_t msglen)
{
    api_selector *s = ls_xcalloc(1, sizeof *s);
    if (labels && *labels && !parse_labels(s, labels)) {
        snprintf(msgbuf, msglen, "unable to parse requirement: invalid label selector: \"%s\"", labels);
        api_selector_free(s);
        return NULL;
    }
    if (fields && *fields && !parse_fields(s, r, fields, msgbuf, msglen)) {
        api_selector_free(s);
        return NULL;
    }
    return s;
}

/* A field's value as the API server's field set renders it ("" if absent). */
static const char *field_value(const cJSON *obj, const char *path, char *buf, size_t len)
{
    const cJSON *cur = obj;
    char seg[128];
    for (const char *p = path; cur && *p;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        snprintf(seg, sizeof seg, "%.*s", (int)n, p);
        cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
        p = dot ? dot + 1 : p + n;
    }
    if (cJSON_IsString(cur))
        return cur->valuestring;
    if (cJSON_IsBool(cur))
        return cJSON_IsTrue(cur) ? "true" : "false";
    if (cJSON_IsNumber(cur)) {
        /* Integers as integers; anything a long long cannot hold (converting
         * it would be undefined) as the shortest exact double. */
        double d = cur->valuedouble;
        if (d > -9.2e18 && d < 9.2e18)
            snprintf(buf, len, "%lld", (long long)d);
        else
            snprintf(buf, len, "%.17g", d);
        return buf;
    }
    return "";
}

static bool match_one(const req *r, const cJSON *obj)
{
    char buf[64];
    const char *v;
    if (r->field) {
        v = field_value(obj, r->key, buf, sizeof buf);
    } else {
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                               "labels");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels, r->key);
        v = cJSON_IsString(l) ? l->valuestring : NULL;
    }
    bool in = false;
    for (uint32_t i = 0; v && i < r->n_values; i++)
        in = in || strcmp(v, r->values[i]) == 0;
    switch (r->op) {
    case OP_EQ:
    case OP_IN: return v && in;
    case OP_NEQ:
    case OP_NOTIN: return !v || !in;
    case OP_EXISTS: return v != NULL;
    default: return v == NULL;
    }
}

bool api_selector_match(const api_selector *s, const cJSON *obj)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (!match_one(&s->reqs[i], obj))
            return false;
    return true;
}

void api_selector_free(api_selector *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++) {
        free(s->reqs[i].key);
        for (uint32_t j = 0; j < s->reqs[i].n_values; j++)
            free(s->reqs[i].values[j]);
        free(s->reqs[i].values);
    }
    free(s->reqs);
    free(s);
}
