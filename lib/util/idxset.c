/* The index set (topo/idxset.h): open addressing, linear probing; a slot
 * holds index + 1 (0: empty) and the upper half of its hash, from which
 * growth places it again without asking the caller. */
#include "topo/idxset.h"

#include <stdlib.h>

typedef struct slot {
    uint32_t index1; /* index + 1; 0: empty */
    uint32_t hash;   /* the hash's upper 32 bits */
} slot;

struct topo_idxset {
    slot *slots;
    size_t cap; /* a power of two */
    size_t size;
};

static uint32_t upper(uint64_t hash)
{
    return (uint32_t)(hash >> 32);
}

static int grow(topo_idxset *set, size_t cap)
{
    slot *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < set->cap; i++) {
        if (!set->slots[i].index1)
            continue;
        size_t j = set->slots[i].hash & (cap - 1);
        while (slots[j].index1)
            j = (j + 1) & (cap - 1);
        slots[j] = set->slots[i];
    }
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return 0;
}

topo_idxset *topo_idxset_create(size_t expected)
{
    topo_idxset *set = calloc(1, sizeof(*set));
    size_t cap = 16;
    while (cap < expected * 2 && cap < (SIZE_MAX >> 2))
        cap *= 2;
    if (set && grow(set, cap) != 0) {
        free(set);
        return NULL;
    }
    return set;
}

void topo_idxset_free(topo_idxset *set)
{
    if (!set)
        return;
    free(set->slots);
    free(set);
}

size_t topo_idxset_size(const topo_idxset *set)
{
    return set->size;
}

int32_t topo_idxset_find(const topo_idxset *set, uint64_t hash, topo_idxset_eq_fn eq,
                         const void *probe, const void *payload)
{
    uint32_t h = upper(hash);
    for (size_t j = h & (set->cap - 1); set->slots[j].index1; j = (j + 1) & (set->cap - 1)) {
        const slot *s = &set->slots[j];
        if (s->hash == h && eq(s->index1 - 1, probe, payload))
            return (int32_t)(s->index1 - 1);
    }
    return -1;
}

int topo_idxset_add(topo_idxset *set, uint64_t hash, uint32_t index)
{
    if (index > INT32_MAX)
        return TOPO_ELIMIT;
    if ((set->size + 1) * 2 > set->cap && grow(set, set->cap * 2) != 0)
        return TOPO_ENOMEM;
    uint32_t h = upper(hash);
    size_t j = h & (set->cap - 1);
    while (set->slots[j].index1)
        j = (j + 1) & (set->cap - 1);
    set->slots[j] = (slot){index + 1, h};
    set->size++;
    return 0;
}

uint64_t topo_idxset_mix(uint64_t h, uint64_t value)
{
    /* splitmix64's finaliser over the running hash and the value. */
    uint64_t z = h ^ (value + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
