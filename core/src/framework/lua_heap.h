/*
 * lua_heap.h: the memory of one Lua state. Small blocks (up to
 * LS_HEAP_SMALL_MAX bytes: strings, tables, closures, cdata boxes, the bulk of
 * what plugins allocate per node and per cycle) come from per-size free lists
 * carved out of 64 KiB slabs; larger ones from malloc, on a list. A block
 * freed goes back on its size's list, not to libc: a state that allocates and
 * frees millions of small objects per run (the GPU policies over 1,500 nodes)
 * spent half its time in malloc and free. Everything the heap holds is freed
 * at once by ls_lua_heap_release, which is how a state abandoned by the
 * watchdog (no longer safe to lua_close) gives its memory back.
 */
#ifndef LS_FRAMEWORK_LUA_HEAP_H
#define LS_FRAMEWORK_LUA_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#define LS_HEAP_SMALL_MAX 512
#define LS_HEAP_CLASSES (LS_HEAP_SMALL_MAX / 16)

/* A block above LS_HEAP_SMALL_MAX, on the heap's list. */
typedef struct ls_heap_large {
    struct ls_heap_large *prev, *next;
    size_t pad;
    size_t size;                     /* last before the payload, as in a small block's header */
} ls_heap_large;

typedef struct ls_heap_slab ls_heap_slab;

typedef struct ls_lua_heap {
    ls_heap_large large;             /* sentinel of the large blocks */
    void *free_list[LS_HEAP_CLASSES];  /* freed small blocks by size class (16, 32, .. 512 bytes) */
    ls_heap_slab *slabs;             /* every slab, to free them all */
    char *bump, *bump_end;           /* the unused rest of the newest slab */
} ls_lua_heap;

void ls_lua_heap_init(ls_lua_heap *h);
/* The size a block was last given (nsize). */
size_t ls_lua_heap_size(const void *ptr);
/* realloc for nsize > 0 (ptr NULL: a new block); NULL when out of memory
 * (the old block is then kept). */
void *ls_lua_heap_realloc(ls_lua_heap *h, void *ptr, size_t nsize);
void ls_lua_heap_free(ls_lua_heap *h, void *ptr);
/* Whether small blocks are pooled (not under AddressSanitizer: there every
 * block is malloc's, so ASan sees each one). */
bool ls_lua_heap_pools(void);
/* Frees every block and slab; the heap is empty (and usable) after. */
void ls_lua_heap_release(ls_lua_heap *h);

#endif
