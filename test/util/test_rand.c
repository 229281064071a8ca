/* Tests for lib/util/rand.c: splitmix64's published sequence, bounds and
 * uniformity of the derived draws, shuffles that are permutations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/rand.h"

static void test_rand__splitmix64_reference(void **state)
{
    (void)state;
    /* The first outputs of splitmix64 seeded with 0 (Vigna's reference
     * splitmix64.c, used to seed xoshiro). */
    uint64_t s = 0;
    assert_true(topo_rand_next(&s) == 0xE220A8397B1DCDAFULL);
    assert_true(topo_rand_next(&s) == 0x6E789E6AA1B965F4ULL);
    assert_true(topo_rand_next(&s) == 0x06C45D188009454FULL);
}

static void test_rand__unit_and_below(void **state)
{
    (void)state;
    uint64_t s = 42;
    size_t counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        double u = topo_rand_unit(&s);
        assert_true(u >= 0.0 && u < 1.0);
        uint64_t b = topo_rand_below(&s, 7);
        assert_true(b < 7);
        counts[b]++;
    }
    /* 10,000 expected per value; 5 standard deviations is about 470. */
    for (int k = 0; k < 7; k++)
        assert_true(counts[k] > 9500 && counts[k] < 10500);
    assert_true(topo_rand_below(&s, 0) == 0);
    assert_true(topo_rand_below(&s, 1) == 0);
}

static void test_rand__shuffle(void **state)
{
    (void)state;
    uint32_t v[100], w[100];
    for (uint32_t i = 0; i < 100; i++)
        v[i] = w[i] = i;
    uint64_t s1 = 7, s2 = 7;
    topo_rand_shuffle(&s1, v, 100, sizeof v[0]);
    topo_rand_shuffle(&s2, w, 100, sizeof w[0]);
    assert_memory_equal(v, w, sizeof v); /* same seed, same order */
    int seen[100] = {0}, moved = 0;
    for (uint32_t i = 0; i < 100; i++) {
        seen[v[i]]++;
        moved += v[i] != i;
    }
    for (int i = 0; i < 100; i++)
        assert_int_equal(seen[i], 1);
    assert_true(moved > 90);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rand__splitmix64_reference),
        cmocka_unit_test(test_rand__unit_and_below),
        cmocka_unit_test(test_rand__shuffle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
