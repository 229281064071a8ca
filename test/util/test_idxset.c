/* The index set: entries found by hash and the caller's equality, equal
 * hashes told apart, growth keeping every index, checked against a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/idxset.h"

enum { N = 5000 };

/* The caller's table: pairs of integers. */
typedef struct pair {
    uint32_t a, b;
} pair;

static int same(uint32_t index, const void *probe, const void *payload)
{
    const pair *table = payload, *p = probe;
    return table[index].a == p->a && table[index].b == p->b;
}

static uint64_t hash_of(const pair *p)
{
    return topo_idxset_mix(topo_idxset_mix(0, p->a), p->b);
}

static void test_idxset__dedup_matches_model(void **state)
{
    (void)state;
    static pair table[N];
    size_t n = 0;
    topo_idxset *set = topo_idxset_create(0);
    assert_non_null(set);
    /* Every pair comes twice, the second time in another order. */
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < N; i++) {
            uint32_t k = round ? N - 1 - i : i;
            pair p = {k % 97, k / 97};
            int32_t at = topo_idxset_find(set, hash_of(&p), same, &p, table);
            if (round == 0) {
                assert_int_equal(at, -1);
                table[n] = p;
                assert_int_equal(topo_idxset_add(set, hash_of(&p), (uint32_t)n), 0);
                n++;
            } else {
                assert_int_equal(at, (int32_t)k);
            }
        }
    }
    assert_int_equal((int)topo_idxset_size(set), N);
    topo_idxset_free(set);
    topo_idxset_free(NULL);
}

/* One hash for every entry: the caller's equality alone tells them apart. */
static int by_value(uint32_t index, const void *probe, const void *payload)
{
    (void)payload;
    return index == *(const uint32_t *)probe;
}

static void test_idxset__equal_hashes(void **state)
{
    (void)state;
    topo_idxset *set = topo_idxset_create(2);
    assert_non_null(set);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(topo_idxset_add(set, 42, i), 0);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(topo_idxset_find(set, 42, by_value, &i, NULL), (int32_t)i);
    uint32_t missing = 100;
    assert_int_equal(topo_idxset_find(set, 42, by_value, &missing, NULL), -1);
    assert_int_equal(topo_idxset_find(set, 43, by_value, &missing, NULL), -1);
    assert_int_equal(topo_idxset_add(set, 1, (uint32_t)INT32_MAX + 1), TOPO_ELIMIT);
    topo_idxset_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idxset__dedup_matches_model),
        cmocka_unit_test(test_idxset__equal_hashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
