#include "topo/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "topo/error.h"
#include "topo/str.h"

typedef struct slot {
    const char *key;
    uint64_t hash;
    int32_t value;
} slot;

struct topo_strmap {
    slot *slots;
    size_t cap; /* power of two */
    size_t size;
};

static int grow(topo_strmap *map, size_t cap)
{
    slot *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->slots[i].key == NULL)
            continue;
        size_t j = (size_t)map->slots[i].hash & (cap - 1);
        while (slots[j].key != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = map->slots[i];
    }
    free(map->slots);
    map->slots = slots;
    map->cap = cap;
    return 0;
}

topo_strmap *topo_strmap_create(size_t expected)
{
    topo_strmap *map = calloc(1, sizeof(*map));
    if (map == NULL)
        return NULL;
    size_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    if (grow(map, cap) != 0) {
        free(map);
        return NULL;
    }
    return map;
}

void topo_strmap_free(topo_strmap *map)
{
    if (map == NULL)
        return;
    free(map->slots);
    free(map);
}

int topo_strmap_put(topo_strmap *map, const char *key, int32_t value)
{
    if ((map->size + 1) * 2 > map->cap && grow(map, map->cap * 2) != 0)
        return TOPO_ENOMEM;
    uint64_t h = topo_str_hash(key);
    size_t j = (size_t)h & (map->cap - 1);
    while (map->slots[j].key != NULL) {
        if (map->slots[j].hash == h && strcmp(map->slots[j].key, key) == 0) {
            map->slots[j].value = value;
            return 0;
        }
        j = (j + 1) & (map->cap - 1);
    }
    map->slots[j].key = key;
    map->slots[j].hash = h;
    map->slots[j].value = value;
    map->size++;
    return 0;
}

int32_t topo_strmap_get(const topo_strmap *map, const char *key)
{
    if (map == NULL || key == NULL)
        return -1;
    uint64_t h = topo_str_hash(key);
    size_t j = (size_t)h & (map->cap - 1);
    while (map->slots[j].key != NULL) {
        if (map->slots[j].hash == h && strcmp(map->slots[j].key, key) == 0)
            return map->slots[j].value;
        j = (j + 1) & (map->cap - 1);
    }
    return -1;
}

size_t topo_strmap_size(const topo_strmap *map)
{
    return map == NULL ? 0 : map->size;
}

/* Linear probing with backward-shift deletion: no tombstones, so lookups
 * stay short however many keys come and go. */
int32_t topo_strmap_remove(topo_strmap *map, const char *key)
{
    if (map == NULL || key == NULL)
        return -1;
    uint64_t h = topo_str_hash(key);
    size_t mask = map->cap - 1;
    size_t j = (size_t)h & mask;
    while (map->slots[j].key != NULL) {
        if (map->slots[j].hash == h && strcmp(map->slots[j].key, key) == 0)
            break;
        j = (j + 1) & mask;
    }
    if (map->slots[j].key == NULL)
        return -1;
    int32_t value = map->slots[j].value;
    size_t hole = j;
    for (size_t k = (j + 1) & mask; map->slots[k].key != NULL; k = (k + 1) & mask) {
        size_t home = (size_t)map->slots[k].hash & mask;
        /* Move k into the hole unless its home lies cyclically in (hole, k]. */
        int in_between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!in_between) {
            map->slots[hole] = map->slots[k];
            hole = k;
        }
    }
    map->slots[hole].key = NULL;
    map->size--;
    return value;
}
