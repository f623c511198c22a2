/*
 * test_doc.c: the document loader (model/doc.c): JSON and YAML into cJSON,
 * List expansion, YAML scalar typing, aliases and merges, line numbers, and the
 * exact text of every kind of error a user can meet.
 */
#include "model/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static ls_error err;

static ls_doc_set *parse(const char *text, const char *name)
{
    memset(&err, 0, sizeof err);
    return ls_doc_parse(text, strlen(text), name, &err);
}

/* Parsing must fail with exactly this message. */
static void expect_error(const char *text, const char *name, const char *msg, int line)
{
    ls_doc_set *d = parse(text, name);
    if (d)
        fprintf(stderr, "test_doc.c:%d: parse unexpectedly succeeded\n", line);
    CHECK(d == NULL);
    CHECK_STR(err.msg, msg);
    ls_doc_free(d);
}
#define EXPECT_ERROR(text, name, msg) expect_error(text, name, msg, __LINE__)

/* "a.b.0.c": members by key, array elements by index. */
static const cJSON *at(const cJSON *node, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *part = strtok(buf, "."); part && node; part = strtok(NULL, ".")) {
        if (cJSON_IsArray(node))
            node = cJSON_GetArrayItem(node, atoi(part));
        else
            node = cJSON_GetObjectItemCaseSensitive(node, part);
    }
    return node;
}

static const char *str_at(const cJSON *node, const char *path)
{
    const cJSON *n = at(node, path);
    return cJSON_IsString(n) ? n->valuestring : NULL;
}

/* The source text of a number node ("" when it is not a number). */
static const char *num_text(const cJSON *node, const char *path)
{
    const cJSON *n = at(node, path);
    return cJSON_IsNumber(n) && n->valuestring ? n->valuestring : "";
}

static void test_multi_document_yaml(void)
{
    ls_doc_set *d = parse("# a cluster\n"
                          "apiVersion: v1\n"
                          "kind: Node\n"
                          "metadata:\n"
                          "  name: n1\n"
                          "---\n"
                          "# only a comment\n"
                          "---\n"
                          "---\n"
                          "~\n"
                          "---\n"
                          "apiVersion: v1\n"
                          "kind: Pod\n"
                          "metadata:\n"
                          "  name: p1\n"
                          "...\n",
                          "multi.yaml");
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 2);
    CHECK_STR(str_at(ls_doc_get(d, 0), "kind"), "Node");
    CHECK_STR(str_at(ls_doc_get(d, 0), "metadata.name"), "n1");
    CHECK_STR(str_at(ls_doc_get(d, 1), "kind"), "Pod");
    CHECK_INT(ls_doc_line(d, ls_doc_get(d, 0)), 2);
    CHECK_INT(ls_doc_line(d, ls_doc_get(d, 1)), 12);
    CHECK(ls_doc_get(d, 2) == NULL);
    CHECK_STR(ls_doc_source(d), "multi.yaml");
    ls_doc_free(d);
}

static void test_list_expansion(void)
{
    ls_doc_set *d = parse("apiVersion: v1\n"
                          "kind: PodList\n"
                          "items:\n"
                          "- metadata:\n"
                          "    name: p1\n"
                          "- kind: Pod\n"
                          "  apiVersion: v2\n"
                          "  metadata: {name: p2}\n"
                          "---\n"
                          "apiVersion: v1\n"
                          "kind: List\n"
                          "items:\n"
                          "- kind: Node\n"
                          "  metadata:\n"
                          "    name: n1\n"
                          "- metadata: {name: nokind}\n"
                          "- kind: NodeList\n"
                          "  apiVersion: v1\n"
                          "  items:\n"
                          "  - metadata: {name: n2}\n"
                          "---\n"
                          "kind: PodList\n"
                          "items: []\n"
                          "---\n"
                          "kind: Checklist\n"
                          "items: [1]\n"
                          "---\n"
                          "kind: FooList\n"
                          "items: notalist\n",
                          "list.yaml");
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 7);
    const cJSON *p1 = ls_doc_get(d, 0);
    CHECK_STR(str_at(p1, "kind"), "Pod");              /* inferred from PodList */
    CHECK_STR(str_at(p1, "apiVersion"), "v1");         /* inherited from the list */
    CHECK_STR(str_at(p1, "metadata.name"), "p1");
    CHECK_INT(ls_doc_line(d, p1), 4);
    CHECK_INT(ls_doc_line(d, at(p1, "kind")), 4);      /* invented: the item's line */
    CHECK(p1->next == NULL && p1->prev == NULL && p1->string == NULL);   /* detached */
    const cJSON *p2 = ls_doc_get(d, 1);
    CHECK_STR(str_at(p2, "kind"), "Pod");
    CHECK_STR(str_at(p2, "apiVersion"), "v2");         /* its own wins */
    CHECK_STR(str_at(ls_doc_get(d, 2), "kind"), "Node");
    CHECK(at(ls_doc_get(d, 2), "apiVersion") == NULL); /* plain List infers nothing */
    CHECK(at(ls_doc_get(d, 3), "kind") == NULL);
    CHECK_STR(str_at(ls_doc_get(d, 3), "metadata.name"), "nokind");
    const cJSON *n2 = ls_doc_get(d, 4);                /* a list inside a List */
    CHECK_STR(str_at(n2, "kind"), "Node");
    CHECK_STR(str_at(n2, "metadata.name"), "n2");
    CHECK_INT(ls_doc_line(d, n2), 20);
    /* "Checklist" does not end in "List"; "items" not an array: not lists */
    CHECK_STR(str_at(ls_doc_get(d, 5), "kind"), "Checklist");
    CHECK_STR(str_at(ls_doc_get(d, 6), "kind"), "FooList");
    ls_doc_free(d);

    EXPECT_ERROR("kind: List\nitems:\n- kind: Pod\n- 42\n", "x.yaml",
                 "x.yaml:4: expected an object (a Kubernetes manifest), found a number");
}

static void test_scalar_typing(void)
{
    ls_doc_set *d = parse("kind: T\n"
                          "exp: 1e3\n"
                          "frac: 0.1\n"
                          "int: 42\n"
                          "neg: -3\n"
                          "plus: +4\n"
                          "dot: .5\n"
                          "ver: 1.10\n"
                          "hex: 0x1F\n"
                          "oct: 0o17\n"
                          "mode: 0644\n"
                          "big: 123456789012345678901234567890\n"
                          "dq: \"42\"\n"
                          "sq: 'true'\n"
                          "lit: |\n"
                          "  12\n"
                          "fold: >-\n"
                          "  a\n"
                          "  b\n"
                          "t1: true\n"
                          "t2: True\n"
                          "t3: TRUE\n"
                          "f1: false\n"
                          "f2: False\n"
                          "f3: FALSE\n"
                          "yes: yes\n"
                          "n1: null\n"
                          "n2: ~\n"
                          "n3:\n"
                          "n4: Null\n"
                          "s1: 1_000\n"
                          "s2: 1.2.3\n"
                          "s3: 100m\n"
                          "s4: .inf\n"
                          "tagstr: !!str 12\n"
                          "tagint: !!int \"12\"\n"
                          "tagfloat: !!float 3\n"
                          "tagbang: ! 12\n"
                          "custom: !foo 7\n"
                          "1: numeric key\n",
                          "scalars.yaml");
    CHECK(d != NULL);
    const cJSON *o = ls_doc_get(d, 0);
    CHECK(cJSON_IsNumber(at(o, "exp")));
    CHECK(at(o, "exp")->valuedouble == 1000.0);
    CHECK_STR(num_text(o, "exp"), "1e3");
    CHECK_STR(num_text(o, "frac"), "0.1");
    CHECK_STR(num_text(o, "int"), "42");
    CHECK_INT(at(o, "int")->valueint, 42);
    CHECK_STR(num_text(o, "neg"), "-3");
    CHECK_STR(num_text(o, "plus"), "+4");
    CHECK_STR(num_text(o, "dot"), ".5");
    CHECK_STR(num_text(o, "ver"), "1.10");
    CHECK_STR(num_text(o, "hex"), "31");       /* decimal spelling for 0x/0o */
    CHECK_STR(num_text(o, "oct"), "15");
    CHECK_STR(num_text(o, "mode"), "420");     /* leading-zero octal, as Kubernetes */
    CHECK(cJSON_IsNumber(at(o, "big")));
    CHECK_STR(num_text(o, "big"), "123456789012345678901234567890");
    CHECK_STR(str_at(o, "dq"), "42");
    CHECK_STR(str_at(o, "sq"), "true");
    CHECK_STR(str_at(o, "lit"), "12\n");
    CHECK_STR(str_at(o, "fold"), "a b");
    CHECK(cJSON_IsTrue(at(o, "t1")) && cJSON_IsTrue(at(o, "t2")) && cJSON_IsTrue(at(o, "t3")));
    CHECK(cJSON_IsFalse(at(o, "f1")) && cJSON_IsFalse(at(o, "f2")) && cJSON_IsFalse(at(o, "f3")));
    CHECK_STR(str_at(o, "yes"), "yes");        /* YAML 1.1 yes/no are not booleans here */
    CHECK(cJSON_IsNull(at(o, "n1")) && cJSON_IsNull(at(o, "n2")));
    CHECK(cJSON_IsNull(at(o, "n3")) && cJSON_IsNull(at(o, "n4")));
    CHECK_STR(str_at(o, "s1"), "1_000");
    CHECK_STR(str_at(o, "s2"), "1.2.3");
    CHECK_STR(str_at(o, "s3"), "100m");
    CHECK_STR(str_at(o, "s4"), ".inf");
    CHECK_STR(str_at(o, "tagstr"), "12");
    CHECK_STR(num_text(o, "tagint"), "12");
    CHECK_STR(num_text(o, "tagfloat"), "3");
    CHECK_STR(str_at(o, "tagbang"), "12");
    CHECK_STR(num_text(o, "custom"), "7");     /* unknown tags are ignored */
    CHECK_STR(str_at(o, "1"), "numeric key");

    /* Numbers survive cJSON's own copy with their text. */
    cJSON *dup = cJSON_Duplicate(at(o, "exp"), 1);
    CHECK(dup && dup->valuestring && strcmp(dup->valuestring, "1e3") == 0);
    cJSON_Delete(dup);
    ls_doc_free(d);

    EXPECT_ERROR("kind: T\nreplicas: !!int abc\n", "x.yaml",
                 "x.yaml:2:11: \"abc\" is not a valid !!int");
    d = parse("kind: T\r\nmetadata:\r\n  name: crlf\r\n", "crlf.yaml");
    CHECK(d != NULL);
    CHECK_STR(str_at(ls_doc_get(d, 0), "metadata.name"), "crlf");
    CHECK_INT(ls_doc_line(d, at(ls_doc_get(d, 0), "metadata.name")), 3);
    ls_doc_free(d);

    EXPECT_ERROR("kind: T\nok: !!bool 1\n", "x.yaml", "x.yaml:2:5: \"1\" is not a valid !!bool");
}

static void test_aliases_and_merges(void)
{
    ls_doc_set *d = parse("kind: T\n"
                          "base: &base\n"
                          "  cpu: 100m\n"
                          "  memory: 1Gi\n"
                          "  n: 2\n"
                          "copy: *base\n"
                          "list: [&one 1, *one, *base]\n"
                          "merged:\n"
                          "  <<: *base\n"
                          "  cpu: 200m\n"
                          "multi:\n"
                          "  <<: [{a: 1, b: 1}, {b: 2, c: 2}]\n"
                          "keyname: &k label\n"
                          "labels:\n"
                          "  *k : value\n",
                          "alias.yaml");
    CHECK(d != NULL);
    const cJSON *o = ls_doc_get(d, 0);
    CHECK_STR(str_at(o, "copy.cpu"), "100m");
    CHECK_STR(num_text(o, "copy.n"), "2");
    CHECK(at(o, "copy") != at(o, "base"));          /* a copy, not shared */
    CHECK(at(o, "copy.cpu") != at(o, "base.cpu"));
    CHECK_INT(ls_doc_line(d, at(o, "copy")), 6);    /* the alias's line at the root */
    CHECK_INT(ls_doc_line(d, at(o, "copy.cpu")), 3);  /* the original's below */
    CHECK_STR(num_text(o, "list.1"), "1");
    CHECK_STR(str_at(o, "list.2.memory"), "1Gi");
    CHECK_INT(ls_doc_line(d, at(o, "list.2")), 7);
    CHECK_STR(str_at(o, "merged.cpu"), "200m");     /* explicit key wins over <<, */
    CHECK_STR(str_at(o, "merged.memory"), "1Gi");   /* even when written after it */
    CHECK(at(o, "merged.<<") == NULL);
    CHECK_STR(num_text(o, "multi.a"), "1");
    CHECK_STR(num_text(o, "multi.b"), "1");         /* earlier source wins */
    CHECK_STR(num_text(o, "multi.c"), "2");
    CHECK_STR(str_at(o, "labels.label"), "value");  /* alias used as a key */
    ls_doc_free(d);

    /* Anchors do not cross documents. */
    EXPECT_ERROR("kind: A\nx: &a 1\n---\nkind: B\ny: *a\n", "x.yaml",
                 "x.yaml:5:4: undefined alias \"a\"");
    EXPECT_ERROR("kind: A\nx: &a [1, *a]\n", "x.yaml",
                 "x.yaml:2:11: alias \"a\" refers to a node that contains it");
    EXPECT_ERROR("kind: A\nb: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n", "x.yaml",
                 "x.yaml:5: duplicate key \"<<\"");
    EXPECT_ERROR("kind: A\nm:\n  <<: 5\n", "x.yaml",
                 "x.yaml:3: the value of a \"<<\" merge key must be a mapping or a sequence of "
                 "mappings");

    /* Billion laughs: each level multiplies by ten. */
    EXPECT_ERROR("kind: T\n"
                 "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
                 "laughs.yaml", "laughs.yaml:6:36: aliases expand to more than 100000 nodes");
}

static void test_line_numbers(void)
{
    ls_doc_set *d = parse("apiVersion: v1\n"           /* 1 */
                          "kind: Pod\n"                /* 2 */
                          "metadata:\n"                /* 3 */
                          "  name: web\n"              /* 4 */
                          "  labels:\n"                /* 5 */
                          "    app: web\n"             /* 6 */
                          "spec:\n"                    /* 7 */
                          "  containers:\n"            /* 8 */
                          "  - name: c1\n"             /* 9 */
                          "    image: nginx\n"         /* 10 */
                          "    resources:\n"           /* 11 */
                          "      requests:\n"          /* 12 */
                          "        cpu: 250m\n"        /* 13 */
                          "  - name: c2\n"             /* 14 */
                          "  tolerations: [\n"         /* 15 */
                          "    {key: a},\n"            /* 16 */
                          "    {key: b}]\n",           /* 17 */
                          "pod.yaml");
    CHECK(d != NULL);
    const cJSON *o = ls_doc_get(d, 0);
    CHECK_INT(ls_doc_line(d, o), 1);
    CHECK_INT(ls_doc_line(d, at(o, "metadata")), 3);   /* a member counts from its key */
    CHECK_INT(ls_doc_line(d, at(o, "metadata.labels.app")), 6);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers")), 8);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers.0")), 9);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers.0.image")), 10);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers.0.resources")), 11);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers.0.resources.requests.cpu")), 13);
    CHECK_INT(ls_doc_line(d, at(o, "spec.containers.1")), 14);
    CHECK_INT(ls_doc_line(d, at(o, "spec.tolerations.1")), 17);
    CHECK_INT(ls_doc_line(d, at(o, "spec.tolerations.1.key")), 17);
    CHECK_INT(ls_doc_line_of(at(o, "spec.containers.1.name"), d), 14);
    CHECK_INT(ls_doc_line(d, NULL), 0);
    cJSON *foreign = cJSON_CreateObject();
    CHECK_INT(ls_doc_line(d, foreign), 0);
    cJSON_Delete(foreign);
    ls_doc_free(d);
}

static void test_json(void)
{
    ls_doc_set *d = parse("\xEF\xBB\xBF  {\n"
                          "  \"apiVersion\": \"v1\",\n"
                          "  \"kind\": \"Node\",\n"
                          "  \"metadata\": {\"name\": \"n1\", \"labels\": {\"zone\": \"a\"}},\n"
                          "  \"status\": {\"capacity\": {\"cpu\": 0.5, \"pods\": 110,\n"
                          "    \"big\": 1.5e3}, \"ready\": true, \"x\": null}\n"
                          "}\n",
                          "node.json");
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 1);
    const cJSON *o = ls_doc_get(d, 0);
    CHECK_STR(str_at(o, "metadata.labels.zone"), "a");
    CHECK_STR(num_text(o, "status.capacity.cpu"), "0.5");
    CHECK_STR(num_text(o, "status.capacity.pods"), "110");
    CHECK_STR(num_text(o, "status.capacity.big"), "1.5e3");
    CHECK(cJSON_IsTrue(at(o, "status.ready")));
    CHECK_INT(ls_doc_line(d, o), 1);
    CHECK_INT(ls_doc_line(d, at(o, "kind")), 3);
    CHECK_INT(ls_doc_line(d, at(o, "status.capacity.big")), 6);
    ls_doc_free(d);

    d = parse("{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
              "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}},\n"
              "  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}\n"
              "]}",
              "list.json");
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 2);
    CHECK_STR(str_at(ls_doc_get(d, 0), "kind"), "Pod");
    CHECK_STR(str_at(ls_doc_get(d, 1), "metadata.name"), "n");
    CHECK_INT(ls_doc_line(d, ls_doc_get(d, 1)), 3);
    ls_doc_free(d);

    d = parse("[{\"kind\": \"Pod\"}]", "arr.json");
    CHECK(d == NULL);
    CHECK_STR(err.msg, "arr.json:1: expected an object (a Kubernetes manifest), found an array");
}

static void test_json_errors(void)
{
    EXPECT_ERROR("{\n  \"kind\": \"Pod\",\n  \"metadata\":,\n}\n", "cluster.json",
                 "cluster.json:3:14: invalid JSON: expected a value");
    EXPECT_ERROR("{\"a\": 1 \"b\": 2}", "x.json", "x.json:1:9: invalid JSON: expected ',' or '}'");
    EXPECT_ERROR("{\"a\": 1,}", "x.json", "x.json:1:9: invalid JSON: expected a string key");
    EXPECT_ERROR("{\"a\" 1}", "x.json", "x.json:1:6: invalid JSON: expected ':'");
    EXPECT_ERROR("{\n  \"a\": [1, 2\n}", "x.json", "x.json:3:1: invalid JSON: expected ',' or ']'");
    EXPECT_ERROR("{\"a\": \"abc\n}", "x.json", "x.json:1:7: invalid JSON: unterminated string");
    EXPECT_ERROR("{\"a\": \"\\q\"}", "x.json",
                 "x.json:1:8: invalid JSON: invalid escape sequence in string");
    EXPECT_ERROR("{\"a\": 01}", "x.json",
                 "x.json:1:8: invalid JSON: expected ',' or '}'");
    EXPECT_ERROR("{\"a\": 1.}", "x.json",
                 "x.json:1:9: invalid JSON: invalid number: expected a digit after '.'");
    EXPECT_ERROR("{\"a\": tru}", "x.json", "x.json:1:7: invalid JSON: expected a value");
    EXPECT_ERROR("{\"kind\": \"Pod\"} {}", "x.json",
                 "x.json:1:17: invalid JSON: expected end of input after the JSON value");
    EXPECT_ERROR("{\"kind\": \"Pod\",\n \"kind\": \"Node\"}", "x.json",
                 "x.json:2: duplicate key \"kind\"");
    EXPECT_ERROR("{\"a\": \"x\ty\"}", "x.json",
                 "x.json:1:9: invalid JSON: control character in string (it must be escaped)");
    EXPECT_ERROR("{", "x.json", "x.json:1:2: invalid JSON: expected a string key or '}'");

    char deep[1300];
    memset(deep, '[', 600);
    memset(deep + 600, ']', 600);
    deep[1200] = '\0';
    EXPECT_ERROR(deep, "deep.json", "deep.json:1:513: invalid JSON: nesting too deep");
}

static void test_yaml_errors(void)
{
    EXPECT_ERROR("apiVersion: v1\n"
                 "kind: Pod\n"
                 "metadata:\n"
                 "  name: web\n"
                 "spec:\n"
                 "  containers:\n"
                 "  - image: a: b\n",
                 "examples/bad.yaml",
                 "examples/bad.yaml:7:13: mapping values are not allowed in this context");
    EXPECT_ERROR("kind: Pod\nspec:\n  - a\n  b: 1\n", "x.yaml",
                 "x.yaml:4:3: did not find expected '-' indicator "
                 "(while parsing a block collection at line 3, column 3)");
    EXPECT_ERROR("kind: Pod\nname: \"abc\n", "x.yaml",
                 "x.yaml:3:1: found unexpected end of stream "
                 "(while scanning a quoted scalar at line 2, column 7)");
    EXPECT_ERROR("kind: Pod\nmetadata:\n  labels:\n    a: 1\n  name: x\n  name: y\n", "x.yaml",
                 "x.yaml:6: duplicate key \"name\"");
    EXPECT_ERROR("- kind: Pod\n- kind: Node\n", "x.yaml",
                 "x.yaml:1: expected an object (a Kubernetes manifest), found a sequence");
    EXPECT_ERROR("kind: Pod\n---\njust text\n", "x.yaml",
                 "x.yaml:3: expected an object (a Kubernetes manifest), found a string");
    EXPECT_ERROR("kind: Pod\n? [a, b]\n: c\n", "x.yaml",
                 "x.yaml:2:3: mapping keys must be scalars (JSON has no other keys)");
    EXPECT_ERROR("kind: Pod\nx: \x01\n", "x.yaml",
                 "x.yaml:2:4: control characters are not allowed (byte 0x01)");
    EXPECT_ERROR("kind: Pod\nx: \xff\n", "x.yaml",
                 "x.yaml:2:4: invalid leading UTF-8 octet (byte 0xFF)");

    char deep[1300];
    memset(deep, '[', 600);
    memset(deep + 600, ']', 600);
    memcpy(deep, "a: ", 3);
    deep[1200] = '\0';
    EXPECT_ERROR(deep, "deep.yaml", "deep.yaml:1:516: nesting deeper than 512 levels");
}

static void test_empty_inputs(void)
{
    static const char *const empties[] = {"", "   \n\n", "# just a comment\n# another\n",
                                          "---\n", "---\n...\n---\n# c\n", "~\n", "null"};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        ls_doc_set *d = parse(empties[i], "empty.yaml");
        CHECK(d != NULL);
        CHECK_INT(ls_doc_count(d), 0);
        CHECK(ls_doc_get(d, 0) == NULL);
        ls_doc_free(d);
    }
    ls_doc_set *d = ls_doc_parse(NULL, 0, NULL, &err);
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 0);
    CHECK_STR(ls_doc_source(d), "<input>");
    ls_doc_free(d);
    /* The text need not be NUL-terminated. */
    d = ls_doc_parse("{\"kind\": \"Pod\"}XXXX", 15, "cut.json", &err);
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 1);
    ls_doc_free(d);
}

static void test_load_file(void)
{
    char path[] = "/tmp/test_doc_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char *text = "kind: Pod\nmetadata:\n  name: from-file\n---\nkind: Node\n";
    CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text));
    close(fd);
    memset(&err, 0, sizeof err);
    ls_doc_set *d = ls_doc_load_file(path, &err);
    CHECK(d != NULL);
    CHECK_INT(ls_doc_count(d), 2);
    CHECK_STR(ls_doc_source(d), path);
    CHECK_STR(str_at(ls_doc_get(d, 0), "metadata.name"), "from-file");
    CHECK_INT(ls_doc_line(d, at(ls_doc_get(d, 1), "kind")), 5);
    ls_doc_free(d);

    /* Errors from a file name the path. */
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("kind: Pod\nbad: [\n", f);
    fclose(f);
    d = ls_doc_load_file(path, &err);
    CHECK(d == NULL);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK_CONTAINS(err.msg, ":3:1: did not find expected node content");
    unlink(path);

    d = ls_doc_load_file("/nonexistent/x.yaml", &err);
    CHECK(d == NULL);
    CHECK_STR(err.msg, "/nonexistent/x.yaml: cannot read file: No such file or directory");
    d = ls_doc_load_file("/tmp", &err);
    CHECK(d == NULL);
    CHECK_STR(err.msg, "/tmp: cannot read file: Is a directory");
}

int main(void)
{
    test_multi_document_yaml();
    test_list_expansion();
    test_scalar_typing();
    test_aliases_and_merges();
    test_line_numbers();
    test_json();
    test_json_errors();
    test_yaml_errors();
    test_empty_inputs();
    test_load_file();
    TEST_MAIN_END();
}
