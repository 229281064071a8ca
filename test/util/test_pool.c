/* lib/util/pool.c: many small allocations, alignment, large allocations,
 * clear and reuse of the kept blocks, calloc, strdup/strndup, overflow and NULL handling. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/pool.h"

#define ALIGN ((uintptr_t)alignof(max_align_t))
#define SMALL_ALLOCS 100000

static int setup(void **state)
{
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return -1;
    *state = pool;
    return 0;
}

static int teardown(void **state)
{
    topo_pool_free(*state);
    return 0;
}

static void assert_aligned(const void *p)
{
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % ALIGN, 0);
}

/* Every allocation is usable and distinct: fill each with its own byte and
 * check all of them afterwards. */
static void test_pool__many_small(void **state)
{
    topo_pool *pool = *state;
    static unsigned char *ptrs[SMALL_ALLOCS];

    for (size_t i = 0; i < SMALL_ALLOCS; i++) {
        size_t size = 1 + i % 61;
        ptrs[i] = topo_pool_alloc(pool, size);
        assert_aligned(ptrs[i]);
        memset(ptrs[i], (int)(i & 0xff), size);
    }
    for (size_t i = 0; i < SMALL_ALLOCS; i++) {
        size_t size = 1 + i % 61;
        for (size_t j = 0; j < size; j++)
            assert_int_equal(ptrs[i][j], i & 0xff);
    }
    /* ~3.3 MB asked for: several blocks, but not one per allocation. */
    size_t fp = topo_pool_footprint(pool);
    assert_true(fp >= (size_t)SMALL_ALLOCS * 16);
    assert_true(fp < (size_t)SMALL_ALLOCS * 64 * 2);
}

static void test_pool__alignment(void **state)
{
    topo_pool *pool = *state;

    for (size_t size = 0; size <= 300; size++) {
        assert_aligned(topo_pool_alloc(pool, size));
        assert_aligned(topo_pool_calloc(pool, 1, size));
    }
    /* max_align_t-typed stores through the result are fine (UBSan checks). */
    long double *ld = topo_pool_alloc(pool, sizeof(long double) * 4);
    assert_aligned(ld);
    for (int i = 0; i < 4; i++)
        ld[i] = (long double)i / 3.0L;
    assert_true(ld[3] > 0.99L && ld[3] < 1.01L);
}

static void test_pool__zero_size(void **state)
{
    topo_pool *pool = *state;
    void *a = topo_pool_alloc(pool, 0);
    void *b = topo_pool_alloc(pool, 0);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
}

static void test_pool__large(void **state)
{
    topo_pool *pool = *state;
    size_t before = topo_pool_footprint(pool);

    unsigned char *small1 = topo_pool_alloc(pool, 100);
    assert_aligned(small1);
    memset(small1, 0x11, 100);

    /* Larger than a block: gets a block of its own. */
    size_t big_size = (size_t)4 * 1024 * 1024 + 3;
    unsigned char *big = topo_pool_alloc(pool, big_size);
    assert_aligned(big);
    memset(big, 0x22, big_size);
    assert_true(topo_pool_footprint(pool) >= before + big_size);

    /* Small allocations keep coming from the partly used block. */
    unsigned char *small2 = topo_pool_alloc(pool, 100);
    assert_aligned(small2);
    memset(small2, 0x33, 100);
    uintptr_t s2 = (uintptr_t)small2, b0 = (uintptr_t)big;
    assert_true(s2 + 100 <= b0 || s2 >= b0 + big_size);

    unsigned char *big2 = topo_pool_alloc(pool, (size_t)1 << 20);
    assert_aligned(big2);
    memset(big2, 0x44, (size_t)1 << 20);

    assert_int_equal(small1[99], 0x11);
    assert_int_equal(big[0], 0x22);
    assert_int_equal(big[big_size - 1], 0x22);
    assert_int_equal(small2[0], 0x33);
    assert_int_equal(big2[0], 0x44);
}

/* Clear forgets the allocations but keeps the memory: once warmed up, the
 * same workload after a clear runs from blocks the pool already holds. (The
 * first repeat may add one block: a standard-sized request can take a large
 * kept block first-fit, and the large request then needs a new one.) */
static void test_pool__clear_and_reuse(void **state)
{
    topo_pool *pool = *state;
    size_t initial = topo_pool_footprint(pool);
    size_t warm = 0;
    assert_true(initial > 0);

    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 5000; i++)
            memset(topo_pool_alloc(pool, 100), round, 100);
        assert_non_null(topo_pool_alloc(pool, (size_t)2 * 1024 * 1024));
        size_t fp = topo_pool_footprint(pool);
        assert_true(fp > initial);
        if (round == 1)
            warm = fp;
        else if (round > 1)
            assert_int_equal(fp, warm);

        topo_pool_clear(pool);
        assert_int_equal(topo_pool_footprint(pool), fp);

        char *s = topo_pool_strdup(pool, "after clear");
        assert_string_equal(s, "after clear");
    }
    topo_pool_clear(NULL);
}

static void test_pool__calloc(void **state)
{
    topo_pool *pool = *state;

    /* Dirty the block first so zeroing is really tested after a clear. */
    memset(topo_pool_alloc(pool, 4096), 0xab, 4096);
    topo_pool_clear(pool);

    unsigned char *z = topo_pool_calloc(pool, 512, 8);
    assert_aligned(z);
    for (size_t i = 0; i < 512 * 8; i++)
        assert_int_equal(z[i], 0);

    assert_null(topo_pool_calloc(pool, SIZE_MAX / 2, 3));
    assert_null(topo_pool_calloc(pool, SIZE_MAX, SIZE_MAX));
    assert_non_null(topo_pool_calloc(pool, 0, 8));
}

static void test_pool__strdup(void **state)
{
    topo_pool *pool = *state;
    char src[] = "nvidia.com/gpu";

    char *a = topo_pool_strdup(pool, src);
    assert_string_equal(a, src);
    assert_ptr_not_equal(a, src);
    src[0] = 'X'; /* the copy is independent */
    assert_string_equal(a, "nvidia.com/gpu");

    assert_string_equal(topo_pool_strdup(pool, ""), "");
    assert_string_equal(topo_pool_strndup(pool, "kubernetes.io/hostname", 13), "kubernetes.io");
    assert_string_equal(topo_pool_strndup(pool, "abc", 0), "");
    /* strndup copies exactly n bytes, NUL-terminated, even mid-string. */
    const char raw[4] = {'a', 'b', 'c', 'd'};
    assert_string_equal(topo_pool_strndup(pool, raw, 4), "abcd");

    assert_null(topo_pool_strdup(pool, NULL));
    assert_null(topo_pool_strndup(pool, NULL, 3));

    /* A string longer than a block. */
    static char long_str[200000];
    memset(long_str, 'q', sizeof(long_str) - 1);
    char *l = topo_pool_strdup(pool, long_str);
    assert_non_null(l);
    assert_int_equal(strlen(l), sizeof(long_str) - 1);

    /* printf into the pool, any length (here longer than a block) */
    assert_string_equal(topo_pool_printf(pool, "%s/pod/%d", "team-a", 42), "team-a/pod/42");
    assert_string_equal(topo_pool_printf(pool, "%s", ""), "");
    char *f = topo_pool_printf(pool, "<%s>", long_str);
    assert_non_null(f);
    assert_int_equal(strlen(f), sizeof(long_str) + 1);
    assert_int_equal(f[0], '<');
    assert_int_equal(f[sizeof(long_str)], '>');
}

static void test_pool__limits_and_null(void **state)
{
    topo_pool *pool = *state;

    /* Sizes that would wrap when rounded fail before reaching malloc. */
    assert_null(topo_pool_alloc(pool, SIZE_MAX));
    assert_null(topo_pool_alloc(pool, SIZE_MAX - 1));
    assert_null(topo_pool_alloc(pool, SIZE_MAX - ALIGN + 2));
    /* The pool still works afterwards. */
    assert_non_null(topo_pool_alloc(pool, 8));

    assert_null(topo_pool_alloc(NULL, 8));
    assert_null(topo_pool_calloc(NULL, 1, 8));
    assert_null(topo_pool_strdup(NULL, "x"));
    assert_int_equal(topo_pool_footprint(NULL), 0);
    topo_pool_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pool__many_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__zero_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__clear_and_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__calloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__strdup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool__limits_and_null, setup, teardown),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
