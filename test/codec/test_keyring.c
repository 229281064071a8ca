/* Tests for lib/codec/keyring.c: the first key signs, any verifies (so a
 * key is rotated by putting the new one first), short material is refused,
 * a long key is what HMAC makes of it, and nothing verifies without a key. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/keyring.h"
#include "topo/sha256.h"

#define MSG "default.0123\n3\nteam-a\nteam-a/job/uid-1"

static const char OLD[] = "the key before the rotation......";
static const char NEW[] = "the key after the rotation.......";

static void add(topo_keyring *ring, const char *key)
{
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_keyring_add(ring, key, strlen(key), "key", &err);
    if (rc < 0)
        fail_msg("%s", err.text);
}

static void sign(char mac[TOPO_SHA256_HEX_LEN + 1], const topo_keyring *ring)
{
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_keyring_sign(mac, ring, MSG, strlen(MSG), &err), 0);
}

static void test_keyring__first_signs_any_verifies(void **state)
{
    (void)state;
    topo_keyring before = TOPO_KEYRING_INIT, during = TOPO_KEYRING_INIT,
                 after = TOPO_KEYRING_INIT;
    char old_mac[TOPO_SHA256_HEX_LEN + 1], new_mac[TOPO_SHA256_HEX_LEN + 1], mac[65];
    add(&before, OLD);
    add(&during, NEW);
    add(&during, OLD);
    add(&after, NEW);
    sign(old_mac, &before);
    sign(new_mac, &during);
    sign(mac, &after);
    /* during the rotation the new key signs ... */
    assert_string_equal(new_mac, mac);
    assert_string_not_equal(old_mac, new_mac);
    /* ... and what either signed verifies */
    assert_int_equal(topo_keyring_verify(&during, old_mac, MSG, strlen(MSG)), 1);
    assert_int_equal(topo_keyring_verify(&during, new_mac, MSG, strlen(MSG)), 1);
    /* each single ring only its own */
    assert_int_equal(topo_keyring_verify(&before, new_mac, MSG, strlen(MSG)), 0);
    assert_int_equal(topo_keyring_verify(&after, old_mac, MSG, strlen(MSG)), 0);
    /* the MAC is over the message: one byte else, and it fails */
    assert_int_equal(topo_keyring_verify(&during, new_mac, MSG "x", strlen(MSG) + 1), 0);
}

static void test_keyring__matches_hmac(void **state)
{
    (void)state;
    /* A key of at most 64 bytes is HMAC's key as it is; a longer one its
     * SHA-256, which RFC 2104 makes the same MAC. */
    char long_key[200], want[TOPO_SHA256_HEX_LEN + 1], mac[TOPO_SHA256_HEX_LEN + 1];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    const char *keys[] = {OLD, long_key};
    for (size_t i = 0; i < 2; i++) {
        topo_keyring ring = TOPO_KEYRING_INIT;
        add(&ring, keys[i]);
        sign(mac, &ring);
        assert_int_equal(topo_hmac_sha256_hex(want, keys[i], strlen(keys[i]), MSG, strlen(MSG)), 0);
        assert_string_equal(mac, want);
    }
}

static void test_keyring__refused(void **state)
{
    (void)state;
    topo_keyring ring = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    char mac[TOPO_SHA256_HEX_LEN + 1], key[40];

    /* nothing signs or verifies with no key */
    assert_int_equal(topo_keyring_sign(mac, &ring, MSG, strlen(MSG), &err), TOPO_EINVALID);
    assert_int_equal(topo_keyring_verify(&ring, "00", MSG, strlen(MSG)), 0);
    /* too short, named */
    assert_int_equal(topo_keyring_add(&ring, "short", 5, "/etc/keys/k1", &err), TOPO_EINVALID);
    assert_string_equal(err.text, "/etc/keys/k1: 5 bytes, a key needs at least 16");
    assert_int_equal(ring.n, 0);
    /* the same key twice is one key; more than the ring holds is refused */
    add(&ring, OLD);
    add(&ring, OLD);
    assert_int_equal(ring.n, 1);
    for (int i = 1; i < TOPO_KEYRING_MAX; i++) {
        snprintf(key, sizeof key, "key number %d of the ring", i);
        add(&ring, key);
    }
    assert_int_equal(topo_keyring_add(&ring, NEW, strlen(NEW), "k9", &err), TOPO_ELIMIT);
    assert_int_equal(ring.n, TOPO_KEYRING_MAX);
    /* a MAC cut short or absent never verifies */
    sign(mac, &ring);
    mac[10] = '\0';
    assert_int_equal(topo_keyring_verify(&ring, mac, MSG, strlen(MSG)), 0);
    assert_int_equal(topo_keyring_verify(&ring, NULL, MSG, strlen(MSG)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyring__first_signs_any_verifies),
        cmocka_unit_test(test_keyring__matches_hmac),
        cmocka_unit_test(test_keyring__refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
