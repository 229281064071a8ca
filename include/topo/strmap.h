/* A string-keyed open-addressing hash map to int32 values. Keys are borrowed:
 * they must outlive the map (snapshot keys live in its pool). */
#ifndef TOPO_STRMAP_H
#define TOPO_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct topo_strmap topo_strmap;

topo_strmap *topo_strmap_create(size_t expected);
void topo_strmap_free(topo_strmap *map);
/* Returns 0, or TOPO_ENOMEM. Replaces the value of an existing key. */
int topo_strmap_put(topo_strmap *map, const char *key, int32_t value);
/* Removes a key; returns its value, or -1 when absent. */
int32_t topo_strmap_remove(topo_strmap *map, const char *key);
/* Returns the value, or -1 when absent. */
int32_t topo_strmap_get(const topo_strmap *map, const char *key);
size_t topo_strmap_size(const topo_strmap *map);

#endif
