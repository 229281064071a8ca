/* Tests for lib/cache/cache_seal.c: a seal verifies for exactly the fields
 * it was made for, under any key of the ring, and for nothing else: another
 * namespace, PodSet, reservation, slot or role, a field absent rather than
 * empty, or a ring without the key. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/cache.h"

static topo_keyring ring(const char *a, const char *b)
{
    topo_keyring r = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    if (topo_keyring_add(&r, a, strlen(a), "a", &err) < 0 ||
        (b != NULL && topo_keyring_add(&r, b, strlen(b), "b", &err) < 0))
        fail_msg("%s", err.text);
    return r;
}

static void test_seal__fields(void **state)
{
    (void)state;
    topo_keyring keys = ring("the installation's record key", NULL);
    topo_cache_seal_fields f = {"team-a", "team-a/job/uid-1", "default.00ff", "1", NULL};
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_cache_seal(seal, &keys, &f, &err), 0);
    assert_int_equal(topo_cache_seal_verify(&keys, seal, &f), 1);

    /* every field is sealed: the same seal on another pod does nothing */
    topo_cache_seal_fields other[] = {
        {"team-b", "team-a/job/uid-1", "default.00ff", "1", NULL},
        {"team-a", "team-a/job/uid-2", "default.00ff", "1", NULL},
        {"team-a", "team-a/job/uid-1", "default.00fe", "1", NULL},
        {"team-a", "team-a/job/uid-1", "default.00ff", "2", NULL},
        {"team-a", "team-a/job/uid-1", "default.00ff", "1", ""},
        {"team-a", "team-a/job/uid-1", "default.00ff", "01", NULL},
        /* shifting text between fields changes the seal */
        {"team-a", "team-a/job/uid-1default.00ff", "", "1", NULL},
        {"team-a", "team-a/job/uid-1", "default.00ff1", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        assert_int_equal(topo_cache_seal_verify(&keys, seal, &other[i]), 0);
    /* not a seal at all */
    assert_int_equal(topo_cache_seal_verify(&keys, "", &f), 0);
    assert_int_equal(topo_cache_seal_verify(&keys, NULL, &f), 0);
}

static void test_seal__keys(void **state)
{
    (void)state;
    topo_keyring old = ring("the key before the rotation", NULL),
                 both = ring("the key after the rotation.", "the key before the rotation"),
                 stranger = ring("another installation's key", NULL), none = TOPO_KEYRING_INIT;
    topo_cache_seal_fields f = {"team-a", "team-a/pod-group/g/role/abc", NULL, NULL, "abc"};
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_cache_seal(seal, &old, &f, &err), 0);
    assert_int_equal(topo_cache_seal_verify(&both, seal, &f), 1);
    assert_int_equal(topo_cache_seal_verify(&stranger, seal, &f), 0);
    assert_int_equal(topo_cache_seal_verify(&none, seal, &f), 0);
    assert_int_equal(topo_cache_seal(seal, &none, &f, &err), TOPO_EINVALID);
    topo_cache_seal_fields no_ns = {NULL, "x", NULL, NULL, NULL};
    assert_int_equal(topo_cache_seal(seal, &old, &no_ns, &err), TOPO_EINVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal__fields),
        cmocka_unit_test(test_seal__keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
