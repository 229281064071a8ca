/* Input orders for tests that check a result does not depend on the
 * order records come in. */
#ifndef TOPO_TEST_ORDERS_H
#define TOPO_TEST_ORDERS_H

#include <stddef.h>

/* Steps v (n > 0 indices) to the next permutation in lexicographic order;
 * 0 when v was the last one (start from 0, 1, ..., n-1 to visit all). */
int test_next_order(size_t *v, size_t n);

/* A JSON array of the n texts recs[order[0]], recs[order[1]], ...
 * (malloc'd; fails the running cmocka test when out of memory). */
char *test_json_array_in_order(const char *const *recs, const size_t *order, size_t n);

#endif
