/*
 * test_lua_heap.c: the Lua states' heap (framework/lua_heap.c): every size
 * kept, contents kept across realloc between size classes and between small
 * and large blocks, a freed small block reused by the next block of its
 * class (when pooled: not under ASan, where every block is malloc's),
 * 16-byte alignment, and release freeing everything (run under ASan for the
 * leaks).
 */
#include "framework/lua_heap.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

static void fill(unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i);
}

static int same(const unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i))
            return 0;
    return 1;
}

static void test_sizes_and_alignment(ls_lua_heap *h)
{
    static const size_t SIZES[] = {1, 15, 16, 17, 100, 511, 512, 513, 4096, 70000};
    void *p[sizeof SIZES / sizeof SIZES[0]];
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        p[i] = ls_lua_heap_realloc(h, NULL, SIZES[i]);
        CHECK(p[i] != NULL);
        CHECK_INT((uintptr_t)p[i] % 16, 0);
        CHECK_INT(ls_lua_heap_size(p[i]), SIZES[i]);
        fill(p[i], SIZES[i], (unsigned char)i);
    }
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        CHECK(same(p[i], SIZES[i], (unsigned char)i));
        ls_lua_heap_free(h, p[i]);
    }
}

static void test_realloc_keeps_contents(ls_lua_heap *h)
{
    unsigned char *p = ls_lua_heap_realloc(h, NULL, 20);
    fill(p, 20, 7);
    unsigned char *q = ls_lua_heap_realloc(h, p, 30);   /* same class (17..32): same block */
    if (ls_lua_heap_pools())
        CHECK(q == p);
    CHECK_INT(ls_lua_heap_size(q), 30);
    CHECK(same(q, 20, 7));
    q = ls_lua_heap_realloc(h, q, 300);                 /* another class */
    CHECK(same(q, 20, 7));
    fill(q, 300, 9);
    q = ls_lua_heap_realloc(h, q, 2000);                /* small to large */
    CHECK(same(q, 300, 9));
    fill(q, 2000, 11);
    q = ls_lua_heap_realloc(h, q, 100000);              /* large to large */
    CHECK(same(q, 2000, 11));
    q = ls_lua_heap_realloc(h, q, 40);                  /* large to small: the first 40 bytes */
    CHECK(same(q, 40, 11));
    CHECK_INT(ls_lua_heap_size(q), 40);
    ls_lua_heap_free(h, q);
}

static void test_free_list_reuse(ls_lua_heap *h)
{
    void *a = ls_lua_heap_realloc(h, NULL, 48);
    void *b = ls_lua_heap_realloc(h, NULL, 48);
    CHECK(a != b);
    ls_lua_heap_free(h, a);
    void *c = ls_lua_heap_realloc(h, NULL, 40);         /* 33..48: a's class */
    if (ls_lua_heap_pools())                            /* not under ASan: malloc's blocks there */
        CHECK(c == a);
    void *d = ls_lua_heap_realloc(h, NULL, 64);         /* another class: not a */
    CHECK(d != a && d != b);
    ls_lua_heap_free(h, b);
    ls_lua_heap_free(h, c);
    ls_lua_heap_free(h, d);
}

/* Many blocks over many slabs, half freed, then all released at once. */
static void test_release(ls_lua_heap *h)
{
    enum { N = 20000 };
    void **p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++)
        p[i] = ls_lua_heap_realloc(h, NULL, (size_t)(i % 700) + 1);
    for (int i = 0; i < N; i += 2)
        ls_lua_heap_free(h, p[i]);
    ls_lua_heap_release(h);
    CHECK(h->slabs == NULL);
    CHECK(h->large.next == &h->large);
    void *again = ls_lua_heap_realloc(h, NULL, 24);     /* usable after */
    CHECK(again != NULL);
    free(p);
}

int main(void)
{
    ls_lua_heap h;
    ls_lua_heap_init(&h);
    test_sizes_and_alignment(&h);
    test_realloc_keeps_contents(&h);
    test_free_list_reuse(&h);
    test_release(&h);
    ls_lua_heap_release(&h);
    TEST_MAIN_END();
}
