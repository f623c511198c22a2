/*
 * exact_arena.c: core/src/base/base.c for the fuzz targets, with one change:
 * every arena allocation is its own heap block of exactly the size asked for.
 *
 * The real arena carves objects out of 1 KiB chunks and rounds sizes up to 16,
 * so a decoder that writes one element past an array it sized from the JSON
 * would land in its neighbour and no sanitizer would notice. Here the block
 * ends where the request does, and AddressSanitizer's redzone follows it.
 * Everything else (interning, vectors, errors) is base.c as built.
 */
#define ls_arena_alloc ls_arena_alloc_chunked
#define ls_arena_memdup ls_arena_memdup_chunked
#define ls_arena_strdup ls_arena_strdup_chunked
#include "base/base.c"
#undef ls_arena_alloc
#undef ls_arena_memdup
#undef ls_arena_strdup

void *ls_arena_alloc(ls_arena *a, size_t size);
void *ls_arena_memdup(ls_arena *a, const void *p, size_t size);
char *ls_arena_strdup(ls_arena *a, const char *s);

void *ls_arena_alloc(ls_arena *a, size_t size)
{
    /* The chunk header keeps data 16-aligned; ls_arena_free walks the same list. */
    ls_arena_chunk *c = ls_xmalloc(sizeof *c + size);
    c->size = size;
    c->used = size;
    c->next = a->head;
    a->head = c;
    a->used_bytes += size;
    memset(c->data, 0, size);
    return c->data;
}

void *ls_arena_memdup(ls_arena *a, const void *p, size_t size)
{
    void *q = ls_arena_alloc(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

char *ls_arena_strdup(ls_arena *a, const char *s)
{
    return ls_arena_memdup(a, s, strlen(s) + 1);
}

