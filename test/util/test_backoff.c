/* Tests for lib/util/backoff.c: the delay doubles per retry up to the cap,
 * lands in [d/2, d], is jittered, repeats for the same seed, and odd bounds
 * are made sane instead of dividing by zero or returning nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "topo/backoff.h"

static void test_backoff__doubles_within_equal_jitter(void **state)
{
    (void)state;
    uint64_t rng = 1;
    for (int i = 0; i < 200; i++) {
        long d0 = topo_backoff_ms(100, 1000, 0, &rng);
        long d1 = topo_backoff_ms(100, 1000, 1, &rng);
        long d3 = topo_backoff_ms(100, 1000, 3, &rng);
        long d9 = topo_backoff_ms(100, 1000, 60, &rng);
        assert_true(d0 >= 50 && d0 <= 100);
        assert_true(d1 >= 100 && d1 <= 200);
        assert_true(d3 >= 400 && d3 <= 800);
        assert_true(d9 >= 500 && d9 <= 1000);
    }
    /* A cap that is no power of two of the base is reached, not passed. */
    for (int i = 0; i < 200; i++) {
        long d = topo_backoff_ms(1000, 2500, 2, &rng);
        assert_true(d >= 1250 && d <= 2500);
    }
}

static void test_backoff__jittered_and_seeded(void **state)
{
    (void)state;
    uint64_t rng = 7;
    long first = topo_backoff_ms(1000, 30000, 4, &rng);
    int differ = 0;
    for (int i = 0; i < 20; i++)
        differ |= topo_backoff_ms(1000, 30000, 4, &rng) != first;
    assert_true(differ);

    /* The same seed gives the same delays (tests and replays rely on it). */
    uint64_t a = 99, b = 99;
    for (int i = 0; i < 50; i++)
        assert_int_equal(topo_backoff_ms(200, 10000, i % 8, &a),
                         topo_backoff_ms(200, 10000, i % 8, &b));
}

static void test_backoff__odd_bounds(void **state)
{
    (void)state;
    uint64_t rng = 3;
    for (int i = 0; i < 100; i++) {
        /* base below 1 counts as 1 ms: d = 1, so the delay is 1. */
        assert_int_equal(topo_backoff_ms(0, 0, 0, &rng), 1);
        assert_int_equal(topo_backoff_ms(-5, -5, 9, &rng), 1);
        /* A cap below the base is the base. */
        long d = topo_backoff_ms(400, 100, 5, &rng);
        assert_true(d >= 200 && d <= 400);
        /* A negative retry is the first one. */
        d = topo_backoff_ms(100, 1000, -3, &rng);
        assert_true(d >= 50 && d <= 100);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff__doubles_within_equal_jitter),
        cmocka_unit_test(test_backoff__jittered_and_seeded),
        cmocka_unit_test(test_backoff__odd_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
