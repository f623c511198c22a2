/*
 * lua_heap.c: the memory of one Lua state (lua_heap.h). A small block has a
 * 16-byte header ({class, size}); a large one a 32-byte one ({prev, next,
 * pad, size}): the size is the word before the payload in both, and tells
 * which kind a block is. Payloads are 16-byte aligned.
 */
#include "framework/lua_heap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SLAB_BYTES = 64 * 1024 };

/* Under AddressSanitizer every block is malloc's own, so ASan keeps finding
 * what it finds in the Lua runtime's memory (a pooled block is not poisoned
 * when freed). */
#if defined(__SANITIZE_ADDRESS__)
#define POOLED false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOLED false
#endif
#endif
#ifndef POOLED
#define POOLED true
#endif

static bool is_small(size_t size)
{
    return POOLED && size <= LS_HEAP_SMALL_MAX;
}

bool ls_lua_heap_pools(void)
{
    return POOLED;
}

typedef struct small_header {
    size_t cls;                      /* size class: the block holds (cls + 1) * 16 bytes */
    size_t size;
} small_header;

struct ls_heap_slab {
    ls_heap_slab *next;
    size_t pad;                      /* keeps the blocks 16-byte aligned */
};

_Static_assert(sizeof(small_header) == 16, "a small block's header keeps payloads 16-byte aligned");
_Static_assert(sizeof(ls_heap_large) == 32, "a large block's header keeps payloads 16-byte aligned");
_Static_assert(sizeof(ls_heap_slab) == 16, "a slab's header keeps blocks 16-byte aligned");

void ls_lua_heap_init(ls_lua_heap *h)
{
    memset(h, 0, sizeof *h);
    h->large.next = h->large.prev = &h->large;
}

size_t ls_lua_heap_size(const void *ptr)
{
    return ((const size_t *)ptr)[-1];
}

static size_t class_of(size_t nsize)
{
    return (nsize - 1) / 16;
}

static void *small_alloc(ls_lua_heap *h, size_t nsize)
{
    size_t cls = class_of(nsize);
    small_header *b = h->free_list[cls];
    if (b) {
        h->free_list[cls] = *(void **)(b + 1);
    } else {
        size_t bytes = sizeof *b + (cls + 1) * 16;
        if ((size_t)(h->bump_end - h->bump) < bytes) {
            ls_heap_slab *s = malloc(SLAB_BYTES);
            if (!s)
                return NULL;
            s->next = h->slabs;
            h->slabs = s;
            h->bump = (char *)(s + 1);
            h->bump_end = (char *)s + SLAB_BYTES;
        }
        b = (small_header *)h->bump;
        h->bump += bytes;
        b->cls = cls;
    }
    b->size = nsize;
    return b + 1;
}

static void small_free(ls_lua_heap *h, void *ptr)
{
    small_header *b = (small_header *)ptr - 1;
    *(void **)ptr = h->free_list[b->cls];
    h->free_list[b->cls] = b;
}

static void large_link(ls_lua_heap *h, ls_heap_large *b)
{
    b->prev = &h->large;
    b->next = h->large.next;
    h->large.next->prev = b;
    h->large.next = b;
}

static void large_unlink(ls_heap_large *b)
{
    b->prev->next = b->next;
    b->next->prev = b->prev;
}

static void *large_realloc(ls_lua_heap *h, void *ptr, size_t nsize)
{
    ls_heap_large *old = ptr ? (ls_heap_large *)ptr - 1 : NULL;
    if (old)
        large_unlink(old);
    ls_heap_large *b = realloc(old, sizeof *b + nsize);
    if (!b) {
        if (old)
            large_link(h, old);
        return NULL;
    }
    b->size = nsize;
    large_link(h, b);
    return b + 1;
}

void ls_lua_heap_free(ls_lua_heap *h, void *ptr)
{
    if (!ptr)
        return;
    if (is_small(ls_lua_heap_size(ptr))) {
        small_free(h, ptr);
        return;
    }
    ls_heap_large *b = (ls_heap_large *)ptr - 1;
    large_unlink(b);
    free(b);
}

void *ls_lua_heap_realloc(ls_lua_heap *h, void *ptr, size_t nsize)
{
    size_t old = ptr ? ls_lua_heap_size(ptr) : 0;
    bool old_small = ptr && is_small(old), new_small = is_small(nsize);
    if (ptr && !old_small && !new_small)
        return large_realloc(h, ptr, nsize);
    if (old_small && new_small && class_of(old) == class_of(nsize)) {
        ((small_header *)ptr - 1)->size = nsize;
        return ptr;
    }
    void *p = new_small ? small_alloc(h, nsize) : large_realloc(h, NULL, nsize);
    if (!p)
        return NULL;
    if (ptr) {
        memcpy(p, ptr, old < nsize ? old : nsize);
        ls_lua_heap_free(h, ptr);
    }
    return p;
}

void ls_lua_heap_release(ls_lua_heap *h)
{
    ls_heap_large *b = h->large.next;
    while (b != &h->large) {
        ls_heap_large *next = b->next;
        free(b);
        b = next;
    }
    ls_heap_slab *s = h->slabs;
    while (s) {
        ls_heap_slab *next = s->next;
        free(s);
        s = next;
    }
    ls_lua_heap_init(h);
}
