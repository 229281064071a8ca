/* The string map: puts, gets, replacement, and removal under heavy probing
 * checked against a plain array model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/strmap.h"

static void test_strmap__put_get_replace(void **state)
{
    (void)state;
    topo_strmap *m = topo_strmap_create(0);
    assert_non_null(m);
    assert_int_equal(topo_strmap_put(m, "a", 1), 0);
    assert_int_equal(topo_strmap_put(m, "b", 2), 0);
    assert_int_equal(topo_strmap_put(m, "a", 3), 0);
    assert_int_equal(topo_strmap_get(m, "a"), 3);
    assert_int_equal(topo_strmap_get(m, "b"), 2);
    assert_int_equal(topo_strmap_get(m, "c"), -1);
    assert_int_equal((int)topo_strmap_size(m), 2);
    topo_strmap_free(m);
}

static void test_strmap__remove_matches_model(void **state)
{
    (void)state;
    enum { N = 3000 };
    static char keys[N][16];
    static int32_t model[N];
    topo_strmap *m = topo_strmap_create(4);
    assert_non_null(m);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        model[i] = -1;
    }
    uint64_t x = 7;
    for (int step = 0; step < 40000; step++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % N);
        if ((x >> 20) % 3 == 0) {
            assert_int_equal(topo_strmap_remove(m, keys[i]), model[i]);
            model[i] = -1;
        } else {
            assert_int_equal(topo_strmap_put(m, keys[i], step), 0);
            model[i] = step;
        }
    }
    size_t live = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(topo_strmap_get(m, keys[i]), model[i]);
        live += model[i] >= 0;
    }
    assert_int_equal(topo_strmap_size(m), live);
    topo_strmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strmap__put_get_replace),
        cmocka_unit_test(test_strmap__remove_matches_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
