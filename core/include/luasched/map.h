/*
 * map.h: a hash map from non-zero 32-bit keys (interned strings, ids) to
 * pointers. Open addressing with backward-shift deletion, so lookups in the hot
 * paths are one or two probes and deletion leaves no tombstones.
 */
#ifndef LUASCHED_MAP_H
#define LUASCHED_MAP_H

#include <stdint.h>
#include <stdbool.h>

typedef struct ls_map_slot {
    uint32_t key;       /* 0 = empty */
    void *value;
} ls_map_slot;

typedef struct ls_map {
    ls_map_slot *slots;
    uint32_t cap, len;
} ls_map;

void ls_map_init(ls_map *m);
void ls_map_free(ls_map *m);
/* Frees every value with free_value (free, or its owner's function), then the map. */
void ls_map_free_values(ls_map *m, void (*free_value)(void *));
void *ls_map_get(const ls_map *m, uint32_t key);
void ls_map_put(ls_map *m, uint32_t key, void *value);   /* key != 0 */
void *ls_map_remove(ls_map *m, uint32_t key);             /* returns the old value */

/* Iteration: for (uint32_t i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

#endif
