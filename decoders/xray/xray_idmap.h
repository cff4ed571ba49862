/* A map from 32-bit ids (function ids) to 32-bit values, for the index
 * pass's per-record lookups: GHashTable's calls through hash and equal
 * functions cost more than the rest of a record's work.  Open addressing,
 * linear probing, at most half full; one slot per id, so it costs what the
 * table of functions it indexes costs. */
#ifndef TRACEFS_XRAY_IDMAP_H
#define TRACEFS_XRAY_IDMAP_H

#include <glib.h>
#include <stdint.h>

#define XRAY_ID_NONE UINT32_MAX   /* no value: an empty slot, or an id not in the map */
#define XRAY_ID_MAP_MIN_BITS 6

struct xray_id_slot {
    uint32_t key;
    uint32_t value;               /* XRAY_ID_NONE: empty */
};

struct xray_id_map {
    struct xray_id_slot *slots;
    uint32_t bits;                /* 1 << bits slots */
    uint32_t count;
};

/* Fibonacci hashing: ids that differ only in their high bits still spread. */
static inline uint32_t xray_id_map_home(const struct xray_id_map *map, uint32_t key)
{
    return (uint32_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - map->bits));
}

static inline void xray_id_map_alloc(struct xray_id_map *map, uint32_t bits)
{
    map->bits = bits;
    map->count = 0;
    map->slots = g_new(struct xray_id_slot, (gsize)1 << bits);
    for (gsize i = 0; i < (gsize)1 << bits; i++)
        map->slots[i] = (struct xray_id_slot){ 0, XRAY_ID_NONE };
}

static inline void xray_id_map_init(struct xray_id_map *map)
{
    xray_id_map_alloc(map, XRAY_ID_MAP_MIN_BITS);
}

static inline void xray_id_map_clear(struct xray_id_map *map)
{
    g_free(map->slots);
    *map = (struct xray_id_map){ 0 };
}

static inline uint32_t xray_id_map_get(const struct xray_id_map *map, uint32_t key)
{
    uint32_t mask = (1u << map->bits) - 1;
    for (uint32_t at = xray_id_map_home(map, key);; at = (at + 1) & mask) {
        const struct xray_id_slot *slot = &map->slots[at];
        if (slot->value == XRAY_ID_NONE || slot->key == key)
            return slot->value;
    }
}

static inline void xray_id_map_place(struct xray_id_map *map, uint32_t key, uint32_t value)
{
    uint32_t mask = (1u << map->bits) - 1;
    uint32_t at = xray_id_map_home(map, key);
    while (map->slots[at].value != XRAY_ID_NONE && map->slots[at].key != key)
        at = (at + 1) & mask;
    if (map->slots[at].value == XRAY_ID_NONE)
        map->count++;
    map->slots[at] = (struct xray_id_slot){ key, value };
}

/* Sets key's value (value != XRAY_ID_NONE), doubling the slots past half full. */
static inline void xray_id_map_set(struct xray_id_map *map, uint32_t key, uint32_t value)
{
    if ((uint64_t)(map->count + 1) * 2 > (uint64_t)1 << map->bits) {
        struct xray_id_map old = *map;
        xray_id_map_alloc(map, old.bits + 1);
        for (gsize i = 0; i < (gsize)1 << old.bits; i++)
            if (old.slots[i].value != XRAY_ID_NONE)
                xray_id_map_place(map, old.slots[i].key, old.slots[i].value);
        g_free(old.slots);
    }
    xray_id_map_place(map, key, value);
}

#endif
