/* Tests for lib/codec/keyring.c: the first key signs, any verifies (so a
 * key is rotated by putting the new one first), short material is refused,
 * a long key is what HMAC makes of it, and nothing verifies without a key;
 * keys read from files byte for byte, every bad file refused with the flag
 * and the path; random keys. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* A directory of its own for the key files of one test, and a file in it. */
static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/topo-keyring-XXXXXX");
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const void *data, size_t len)
{
    static char path[8][128];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return p;
}

static void test_keyring__file_bytes_as_they_are(void **state)
{
    (void)state;
    /* A Secret's file, trailing newline and all: the key is every byte, so
     * replicas reading the same file agree, and one without the newline is
     * another key. */
    static const char with_nl[] = "0123456789abcdef0123456789abcdef\n";
    topo_keyring from_file = TOPO_KEYRING_INIT, same = TOPO_KEYRING_INIT,
                 trimmed = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    char a[TOPO_SHA256_HEX_LEN + 1], b[TOPO_SHA256_HEX_LEN + 1], c[TOPO_SHA256_HEX_LEN + 1];
    const char *path = write_file("key", with_nl, strlen(with_nl));
    assert_int_equal(topo_keyring_add_file(&from_file, path, "--record-key-file", &err), 0);
    add(&same, with_nl);
    assert_int_equal(topo_keyring_add(&trimmed, with_nl, strlen(with_nl) - 1, "k", &err), 0);
    sign(a, &from_file);
    sign(b, &same);
    sign(c, &trimmed);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);

    /* Files in the order given: the first signs, the second verifies. */
    topo_keyring ring = TOPO_KEYRING_INIT, old = TOPO_KEYRING_INIT;
    const char *p_new = write_file("new", NEW, strlen(NEW));
    const char *p_old = write_file("old", OLD, strlen(OLD));
    assert_int_equal(topo_keyring_add_file(&ring, p_new, "--record-key-file", &err), 0);
    assert_int_equal(topo_keyring_add_file(&ring, p_old, "--record-key-file", &err), 0);
    assert_int_equal(ring.n, 2);
    add(&old, OLD);
    sign(a, &old);
    assert_int_equal(topo_keyring_verify(&ring, a, MSG, strlen(MSG)), 1);
    topo_keyring only_new = TOPO_KEYRING_INIT;
    add(&only_new, NEW);
    sign(b, &ring);
    sign(c, &only_new);
    assert_string_equal(b, c);
    /* a key file of up to the limit is a key (hashed as HMAC would) */
    char *big = malloc(TOPO_KEYRING_FILE_MAX);
    assert_non_null(big);
    memset(big, 'x', TOPO_KEYRING_FILE_MAX);
    topo_keyring large = TOPO_KEYRING_INIT;
    path = write_file("big", big, TOPO_KEYRING_FILE_MAX);
    assert_int_equal(topo_keyring_add_file(&large, path, "--record-key-file", &err), 0);
    sign(a, &large);
    assert_int_equal(topo_hmac_sha256_hex(b, big, TOPO_KEYRING_FILE_MAX, MSG, strlen(MSG)), 0);
    assert_string_equal(a, b);
    free(big);
}

/* err's text is "--record-key-file: <dir>/<name>: <rest>". */
static void assert_message(const topo_err *err, const char *name, const char *rest)
{
    char want[512];
    snprintf(want, sizeof want, "--record-key-file: %s/%s: %s", dir, name, rest);
    assert_string_equal(err->text, want);
}

static void test_keyring__file_refused(void **state)
{
    (void)state;
    topo_keyring ring = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    char path[128], key[40];

    /* missing */
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(topo_keyring_add_file(&ring, path, "--record-key-file", &err),
                     TOPO_ENOTFOUND);
    assert_message(&err, "missing", "No such file or directory");
    /* not a regular file: a directory, and a FIFO nobody writes (opening
     * one for reading would wait for a writer for ever) */
    topo_err_clear(&err);
    snprintf(path, sizeof path, "%s/adir", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(topo_keyring_add_file(&ring, path, "--record-key-file", &err), TOPO_EIO);
    assert_message(&err, "adir", "not a regular file");
    topo_err_clear(&err);
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(topo_keyring_add_file(&ring, path, "--record-key-file", &err), TOPO_EIO);
    assert_message(&err, "fifo", "not a regular file");
    /* too short: 15 bytes, and an empty file */
    topo_err_clear(&err);
    const char *p = write_file("short", "0123456789abcde", 15);
    assert_int_equal(topo_keyring_add_file(&ring, p, "--record-key-file", &err), TOPO_EINVALID);
    assert_message(&err, "short", "15 bytes, a key needs at least 16");
    topo_err_clear(&err);
    p = write_file("empty", "", 0);
    assert_int_equal(topo_keyring_add_file(&ring, p, "--record-key-file", &err), TOPO_EINVALID);
    assert_message(&err, "empty", "0 bytes, a key needs at least 16");
    /* too long: one byte past the limit */
    topo_err_clear(&err);
    char *big = malloc(TOPO_KEYRING_FILE_MAX + 1);
    assert_non_null(big);
    memset(big, 'x', TOPO_KEYRING_FILE_MAX + 1);
    p = write_file("long", big, TOPO_KEYRING_FILE_MAX + 1);
    free(big);
    assert_int_equal(topo_keyring_add_file(&ring, p, "--record-key-file", &err), TOPO_ELIMIT);
    assert_message(&err, "long", "file is larger than the limit of 65536 bytes");
    assert_int_equal(ring.n, 0);
    /* too many: the ring full, the next file refused */
    for (int i = 0; i < TOPO_KEYRING_MAX; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        snprintf(key, sizeof key, "key number %d of the ring", i);
        p = write_file(name, key, strlen(key));
        assert_int_equal(topo_keyring_add_file(&ring, p, "--record-key-file", &err), 0);
    }
    topo_err_clear(&err);
    p = write_file("one-more", NEW, strlen(NEW));
    assert_int_equal(topo_keyring_add_file(&ring, p, "--record-key-file", &err), TOPO_ELIMIT);
    assert_message(&err, "one-more", "at most 8 keys");
    assert_int_equal(ring.n, TOPO_KEYRING_MAX);
}

static void test_keyring__random(void **state)
{
    (void)state;
    /* Two processes' random keys: each verifies its own MACs only. */
    topo_keyring a = TOPO_KEYRING_INIT, b = TOPO_KEYRING_INIT;
    topo_err err = TOPO_ERR_INIT;
    char ma[TOPO_SHA256_HEX_LEN + 1], mb[TOPO_SHA256_HEX_LEN + 1];
    assert_int_equal(topo_keyring_add_random(&a, &err), 0);
    assert_int_equal(topo_keyring_add_random(&b, &err), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.len[0], TOPO_KEYRING_RANDOM_LEN);
    sign(ma, &a);
    sign(mb, &b);
    assert_string_not_equal(ma, mb);
    assert_int_equal(topo_keyring_verify(&a, ma, MSG, strlen(MSG)), 1);
    assert_int_equal(topo_keyring_verify(&a, mb, MSG, strlen(MSG)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyring__first_signs_any_verifies),
        cmocka_unit_test(test_keyring__matches_hmac),
        cmocka_unit_test(test_keyring__refused),
        cmocka_unit_test_setup_teardown(test_keyring__file_bytes_as_they_are, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_keyring__file_refused, make_dir, remove_dir),
        cmocka_unit_test(test_keyring__random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
