/*
 * doc_json.c: JSON documents. cJSON builds the tree; a strict scanner walks
 * the same text alongside it to attach lines and number text, and, when cJSON
 * refuses the input, to say where and what was expected.
 */
#include "model/doc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON: cJSON builds the tree; a strict scanner walks the same text
 * alongside it to attach lines and number text, and, when cJSON refuses the
 * input, to say where and what was expected (cJSON only gives a position). */

typedef struct json_scan {
    const char *p, *end;
    int line;
    ls_doc_set *set;
    const char *problem;   /* what was expected at p, on failure */
    const cJSON *dup;      /* or: the member repeating a key */
} json_scan;

static int js_peek(const json_scan *s)
{
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

static bool js_is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static void js_ws(json_scan *s)
{
    for (; s->p < s->end; s->p++) {
        char c = *s->p;
        if (c == '\n')
            s->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
    }
}

static bool js_fail(json_scan *s, const char *problem)
{
    s->problem = problem;
    return false;
}

static bool js_value(json_scan *s, cJSON *node, int depth);

static bool js_escape(json_scan *s)
{
    const char *backslash = s->p++;
    int c = js_peek(s);
    if (c > 0 && strchr("\"\\/bfnrt", c)) {
        s->p++;
        return true;
    }
    if (c == 'u' && s->end - s->p > 4 && ls_doc_span(s->p + 1, 4, DOC_DIGITS "abcdefABCDEF") == 4) {
        s->p += 5;
        return true;
    }
    s->p = backslash;
    return js_fail(s, "invalid escape sequence in string");
}

static bool js_string(json_scan *s)
{
    const char *open = s->p++;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            s->p++;
            return true;
        }
        if (c == '\n')
            break;
        if (c < 0x20)
            return js_fail(s, "control character in string (it must be escaped)");
        if (c == '\\') {
            if (!js_escape(s))
                return false;
        } else {
            s->p++;
        }
    }
    s->p = open;
    return js_fail(s, "unterminated string");
}

static void js_digits(json_scan *s)
{
    while (js_is_digit(js_peek(s)))
        s->p++;
}

static bool js_number(json_scan *s, cJSON *node)
{
    const char *start = s->p;
    if (js_peek(s) == '-')
        s->p++;
    if (js_peek(s) == '0')
        s->p++;
    else if (js_is_digit(js_peek(s)))
        js_digits(s);
    else
        return js_fail(s, "invalid number: expected a digit");
    if (js_peek(s) == '.') {
        s->p++;
        if (!js_is_digit(js_peek(s)))
            return js_fail(s, "invalid number: expected a digit after '.'");
        js_digits(s);
    }
    if (js_peek(s) == 'e' || js_peek(s) == 'E') {
        s->p++;
        if (js_peek(s) == '+' || js_peek(s) == '-')
            s->p++;
        if (!js_is_digit(js_peek(s)))
            return js_fail(s, "invalid number: expected a digit in the exponent");
        js_digits(s);
    }
    if (node)
        ls_doc_number_text(node, start, (size_t)(s->p - start));
    return true;
}

static bool js_literal(json_scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return js_fail(s, "expected a value");
    s->p += n;
    return true;
}

/* Steps over the opening bracket; true, with the closing one consumed too,
 * when the object or array is empty. */
static bool js_empty(json_scan *s, char close)
{
    s->p++;
    js_ws(s);
    if (js_peek(s) != close)
        return false;
    s->p++;
    return true;
}

/* After a member or an element: a ',' (*more) or the closing bracket, consumed
 * either way; anything else fails with expected. */
static bool js_next_item(json_scan *s, char close, const char *expected, bool *more)
{
    js_ws(s);
    *more = js_peek(s) == ',';
    if (!*more && js_peek(s) != close)
        return js_fail(s, expected);
    s->p++;
    return true;
}

static bool js_object(json_scan *s, cJSON *node, int depth)
{
    if (js_empty(s, '}'))
        return true;
    cJSON *child = node ? node->child : NULL;
    for (bool first = true, more = true; more; first = false, child = child ? child->next : NULL) {
        js_ws(s);
        if (js_peek(s) != '"')
            return js_fail(s, first ? "expected a string key or '}'" : "expected a string key");
        int key_line = s->line;
        if (!js_string(s))
            return false;
        js_ws(s);
        if (js_peek(s) != ':')
            return js_fail(s, "expected ':'");
        s->p++;
        if (!js_value(s, child, depth + 1))
            return false;
        if (child)
            ls_doc_set_line(s->set, child, key_line);
        if (!js_next_item(s, '}', "expected ',' or '}'", &more))
            return false;
    }
    s->dup = node ? ls_doc_find_duplicate(node) : NULL;
    return s->dup == NULL;
}

static bool js_array(json_scan *s, cJSON *node, int depth)
{
    if (js_empty(s, ']'))
        return true;
    cJSON *child = node ? node->child : NULL;
    for (bool more = true; more; child = child ? child->next : NULL)
        if (!js_value(s, child, depth + 1) || !js_next_item(s, ']', "expected ',' or ']'", &more))
            return false;
    return true;
}

static bool js_node_matches(const cJSON *node, int c)
{
    switch (c) {
    case '{':
        return cJSON_IsObject(node);
    case '[':
        return cJSON_IsArray(node);
    case '"':
        return cJSON_IsString(node);
    case 't':
    case 'f':
        return cJSON_IsBool(node);
    case 'n':
        return cJSON_IsNull(node);
    default:
        return cJSON_IsNumber(node);
    }
}

/* node is cJSON's tree for this value, or NULL when only diagnosing. If the
 * two ever disagree the annotation stops there rather than guess. */
static bool js_value(json_scan *s, cJSON *node, int depth)
{
    js_ws(s);
    int c = js_peek(s);
    if (node && !js_node_matches(node, c))
        node = NULL;
    if (node)
        ls_doc_set_line(s->set, node, s->line);
    if ((c == '{' || c == '[') && depth >= DOC_MAX_DEPTH)
        return js_fail(s, "nesting too deep");
    switch (c) {
    case '{':
        return js_object(s, node, depth);
    case '[':
        return js_array(s, node, depth);
    case '"':
        return js_string(s);
    case 't':
        return js_literal(s, "true");
    case 'f':
        return js_literal(s, "false");
    case 'n':
        return js_literal(s, "null");
    default:
        if (c == '-' || js_is_digit(c))
            return js_number(s, node);
        return js_fail(s, "expected a value");
    }
}

static bool js_document(json_scan *s, cJSON *root)
{
    if (!js_value(s, root, 0))
        return false;
    js_ws(s);
    return s->p == s->end || js_fail(s, "expected end of input after the JSON value");
}

bool ls_doc_parse_json(ls_doc_set *d, const char *text, size_t len, ls_error *err)
{
    const char *stop = NULL;
    /* Not "require_null_terminated": cJSON then wants a NUL inside len. The
     * scanner rejects trailing text instead. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &stop, false);
    json_scan s = {.p = text, .end = text + len, .line = 1, .set = d};
    if (js_document(&s, root) && root)
        return ls_doc_add_root(d, root, false, err);
    if (s.dup) {
        ls_doc_fail_line(d, err, ls_doc_line(d, s.dup), "duplicate key \"%s\"", s.dup->string);
        cJSON_Delete(root);
        return false;
    }
    cJSON_Delete(root);
    size_t line, col;
    if (s.problem) {
        ls_doc_position(text, s.p, &line, &col);
        return ls_doc_fail_pos(d, err, line, col, "invalid JSON: %s", s.problem);
    }
    /* Valid by our reading yet refused by cJSON (e.g. a number too long for
     * its buffer): all we have is where it stopped. */
    ls_doc_position(text, stop && stop >= text && stop <= text + len ? stop : text, &line, &col);
    return ls_doc_fail_pos(d, err, line, col, "invalid JSON (not accepted by the JSON parser)");
}

