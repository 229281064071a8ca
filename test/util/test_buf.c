/* lib/util/buf.c: bounded buffers (appends, the bound, sticky errors, take,
 * reserve/grown) and overflow-checked array growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/array.h"
#include "topo/buf.h"

static void test_buf__appends(void **state)
{
    (void)state;
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_buf_puts(&b, "GET "), 0);
    assert_int_equal(topo_buf_printf(&b, "/api/v1/namespaces/%s/pods?limit=%d", "team-a", 500),
                     0);
    assert_int_equal(topo_buf_putc(&b, '!'), 0);
    assert_int_equal(topo_buf_put(&b, "xyz", 2), 0);
    assert_string_equal(b.ptr, "GET /api/v1/namespaces/team-a/pods?limit=500!xy");
    size_t len = 0;
    char *s = topo_buf_take(&b, &len);
    assert_string_equal(s, "GET /api/v1/namespaces/team-a/pods?limit=500!xy");
    assert_int_equal(len, strlen(s));
    assert_null(b.ptr);
    assert_int_equal(b.len, 0);
    free(s);
    /* nothing appended: "" */
    s = topo_buf_take(&b, &len);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
    /* long enough to grow several times */
    for (int i = 0; i < 10000; i++)
        assert_int_equal(topo_buf_printf(&b, "%04d", i % 10000), 0);
    assert_int_equal(b.len, 40000);
    assert_memory_equal(b.ptr + 39996, "9999", 5);
    topo_buf_dispose(&b);
    topo_buf_dispose(&b);
    topo_buf_dispose(NULL);
}

/* Past the bound: TOPO_ELIMIT, nothing of that append kept, and the error
 * sticks until cleared; take gives NULL and frees. */
static void test_buf__bound_sticks(void **state)
{
    (void)state;
    topo_buf b = TOPO_BUF_INIT(8);
    assert_int_equal(topo_buf_puts(&b, "12345678"), 0);
    assert_int_equal(b.len, 8);
    assert_true(b.cap <= 9);
    assert_int_equal(topo_buf_putc(&b, '9'), TOPO_ELIMIT);
    assert_string_equal(b.ptr, "12345678");
    assert_int_equal(topo_buf_puts(&b, ""), TOPO_ELIMIT);
    assert_int_equal(topo_buf_printf(&b, "%d", 1), TOPO_ELIMIT);
    size_t len = 99;
    assert_null(topo_buf_take(&b, &len));
    assert_int_equal(len, 0);
    assert_null(b.ptr);
    /* reusable after take, with the same bound */
    assert_int_equal(topo_buf_printf(&b, "%s", "123456789"), TOPO_ELIMIT);
    topo_buf_clear(&b);
    assert_int_equal(b.error, 0);
    assert_int_equal(topo_buf_puts(&b, "ok"), 0);
    assert_string_equal(b.ptr, "ok");
    topo_buf_dispose(&b);
    /* a huge append to an unbounded buffer is refused, not wrapped */
    topo_buf u = TOPO_BUF_INIT(0);
    assert_int_equal(topo_buf_puts(&u, "a"), 0);
    assert_int_equal(topo_buf_reserve(&u, SIZE_MAX), TOPO_ELIMIT);
    topo_buf_dispose(&u);
}

/* A reader writing into the buffer directly. */
static void test_buf__reserve_grown(void **state)
{
    (void)state;
    topo_buf b = TOPO_BUF_INIT(1024);
    assert_int_equal(topo_buf_reserve(&b, 100), 0);
    assert_true(b.cap >= 101);
    memcpy(b.ptr + b.len, "chunk", 5);
    topo_buf_grown(&b, 5);
    assert_string_equal(b.ptr, "chunk");
    /* more than was reserved is not counted */
    topo_buf_grown(&b, b.cap);
    assert_int_equal(b.len, 5);
    assert_int_equal(topo_buf_reserve(&b, 1020), TOPO_ELIMIT);
    topo_buf_dispose(&b);
}

static void test_array__growth(void **state)
{
    (void)state;
    TOPO_ARRAY(int) a = TOPO_ARRAY_INIT;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(TOPO_ARRAY_PUSH(&a, i * 3), 0);
    assert_int_equal(a.n, 1000);
    assert_int_equal(a.cap, 1024);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(a.items[i], i * 3);
    free(a.items);
    /* sizes that overflow size_t are refused, the array untouched */
    void *items = NULL;
    size_t cap = 0;
    assert_int_equal(topo_array_reserve(&items, &cap, 4, 16), 0);
    assert_int_equal(cap, 8);
    void *before = items;
    assert_int_equal(topo_array_reserve(&items, &cap, SIZE_MAX / 8, 16), TOPO_ELIMIT);
    assert_int_equal(topo_array_reserve(&items, &cap, SIZE_MAX, 1), TOPO_ELIMIT);
    assert_ptr_equal(items, before);
    assert_int_equal(cap, 8);
    free(items);
}

static void test_array__pool_growth(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    int *items = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(
            topo_pool_array_reserve(pool, (void **)&items, &cap, n, n + 1, sizeof(*items)), 0);
        items[n++] = i * 3;
    }
    assert_int_equal(cap, 1024);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(items[i], i * 3);
    for (size_t i = n; i < cap; i++)
        assert_int_equal(items[i], 0); /* the new room is zeroed */
    /* sizes that overflow size_t are refused, the array untouched */
    int *before = items;
    assert_int_equal(topo_pool_array_reserve(pool, (void **)&items, &cap, n, SIZE_MAX / 2, 16),
                     TOPO_ELIMIT);
    assert_ptr_equal(items, before);
    assert_int_equal(cap, 1024);
    topo_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf__appends),
        cmocka_unit_test(test_buf__bound_sticks),
        cmocka_unit_test(test_buf__reserve_grown),
        cmocka_unit_test(test_array__growth),
        cmocka_unit_test(test_array__pool_growth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
