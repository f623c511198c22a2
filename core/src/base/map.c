/*
 * map.c: the u32 -> pointer hash map (see map.h).
 */
#include "luasched/map.h"
#include "luasched/base.h"

#include <stdlib.h>

static uint32_t slot_of(uint32_t key, uint32_t cap)
{
    /* Interned ids are dense; a multiplicative hash spreads them over the table. */
    return (key * 2654435769u) & (cap - 1);
}

void ls_map_init(ls_map *m)
{
    m->slots = NULL;
    m->cap = m->len = 0;
}

void ls_map_free(ls_map *m)
{
    free(m->slots);
    ls_map_init(m);
}

void ls_map_free_values(ls_map *m, void (*free_value)(void *))
{
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            free_value(m->slots[i].value);
    ls_map_free(m);
}

void *ls_map_get(const ls_map *m, uint32_t key)
{
    if (!m->cap || !key)
        return NULL;
    for (uint32_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key)
            return m->slots[i].value;
        if (!m->slots[i].key)
            return NULL;
    }
}

static void grow(ls_map *m)
{
    uint32_t old_cap = m->cap;
    ls_map_slot *old = m->slots;
    m->cap = old_cap ? old_cap * 2 : 16;
    m->slots = ls_xcalloc(m->cap, sizeof *m->slots);
    m->len = 0;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].key)
            ls_map_put(m, old[i].key, old[i].value);
    free(old);
}

void ls_map_put(ls_map *m, uint32_t key, void *value)
{
    if ((m->len + 1) * 4 > m->cap * 3)
        grow(m);
    for (uint32_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key) {
            m->slots[i].value = value;
            return;
        }
        if (!m->slots[i].key) {
            m->slots[i].key = key;
            m->slots[i].value = value;
            m->len++;
            return;
        }
    }
}

void *ls_map_remove(ls_map *m, uint32_t key)
{
    if (!m->cap || !key)
        return NULL;
    uint32_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->slots[i].key != key) {
        if (!m->slots[i].key)
            return NULL;
        i = (i + 1) & mask;
    }
    void *value = m->slots[i].value;
    /* Backward-shift: pull later entries of the probe run into the hole. */
    for (uint32_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
        uint32_t home = slot_of(m->slots[j].key, m->cap);
        bool movable = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].key = 0;
    m->slots[i].value = NULL;
    m->len--;
    return value;
}
