/* lib/net's credentials (http_auth.c): the token scheme word, HTTP Basic
 * from a username and a password file, each file re-read periodically and
 * after a 401 through the one code path the bearer token uses, the
 * Authorization header built from them, bad combinations refused, and no
 * secret in an error message; against test/e2e/fake_http_server.py (its
 * /basic/ and /echo endpoints) for what goes over the wire. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp, posix_spawn */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_server_fixture.h"

/* Every message logged while a check runs, concatenated. */
static char logged[8192];

static void capture(const topo_log_event *ev, void *payload)
{
    (void)payload;
    strncat(logged, ev->msg, sizeof(logged) - strlen(logged) - 2);
    strncat(logged, "\n", sizeof(logged) - strlen(logged) - 1);
}

/* A file of the test's directory with this content; its path stays valid
 * for the next three calls. */
static const char *secret_file(const char *name, const char *content)
{
    static char paths[4][PATH_MAX_LEN];
    static unsigned next;
    char *path = paths[next++ % 4];
    join(path, fx.dir, name);
    write_file(path, content);
    return path;
}

static void test_http_auth__secret_files(void **state)
{
    (void)state;
    char *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    /* A token loses surrounding blanks; a password only its line end. */
    assert_int_equal(
        net_http_secret_read(&v, secret_file("t", "  tok-1 \r\n"), TOPO_HTTP_SECRET_TOKEN, &err),
        0);
    assert_string_equal(v, "tok-1");
    net_http_token_free(v);
    assert_int_equal(net_http_secret_read(&v, secret_file("p", " pass word \r\n"),
                                           TOPO_HTTP_SECRET_PASSWORD, &err),
                     0);
    assert_string_equal(v, " pass word ");
    net_http_token_free(v);
    assert_int_equal(net_http_secret_read(&v, secret_file("p", "p\xc3\xa4ss\n"),
                                           TOPO_HTTP_SECRET_PASSWORD, &err),
                     0);
    assert_string_equal(v, "p\xc3\xa4ss"); /* UTF-8 (RFC 7617) */
    net_http_token_free(v);

    /* Refused, with the file named and the content not shown. */
    assert_int_equal(net_http_secret_read(&v, secret_file("p", "hunter\x01two\n"),
                                           TOPO_HTTP_SECRET_PASSWORD, &err),
                     TOPO_EINVALID);
    assert_null(v);
    assert_non_null(strstr(err.text, "/p"));
    assert_non_null(strstr(err.text, "control byte at offset 6"));
    assert_null(strstr(err.text, "hunter"));
    assert_int_equal(net_http_secret_read(&v, secret_file("p", "two\nlines\n"),
                                           TOPO_HTTP_SECRET_PASSWORD, &err),
                     TOPO_EINVALID);
    assert_null(strstr(err.text, "lines"));
    assert_int_equal(
        net_http_secret_read(&v, secret_file("p", "\n"), TOPO_HTTP_SECRET_PASSWORD, &err),
        TOPO_EINVALID);
    assert_non_null(strstr(err.text, "password is empty"));
    assert_int_equal(
        net_http_secret_read(&v, secret_file("u", "ad:min\n"), TOPO_HTTP_SECRET_USERNAME, &err),
        TOPO_EINVALID);
    assert_non_null(strstr(err.text, "':'"));
    assert_null(strstr(err.text, "ad:min"));
    char missing[PATH_MAX_LEN];
    join(missing, fx.dir, "no-such-password");
    assert_int_equal(net_http_secret_read(&v, missing, TOPO_HTTP_SECRET_PASSWORD, &err),
                     TOPO_ENOTFOUND);
}

static void test_http_auth__options(void **state)
{
    (void)state;
    topo_http *h = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *pw = secret_file("opt-pw", "pw\n");
    topo_http_opts o = base_opts();
    o.token = "t";
    o.password_file = pw;
    o.username = "u";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "exclude each other"));
    o = base_opts();
    o.username = "u";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "without a password file"));
    o = base_opts();
    o.password_file = pw;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "without a username"));
    o.username = "u";
    o.token_scheme = "Token";
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
    o = base_opts();
    o.token = "t";
    const char *bad[] = {"", "Two words", "Bearer\r\nX-Evil: 1", "B\xc3\xa4r",
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.token_scheme = bad[i];
        assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
        assert_null(h);
    }
    /* A password file that cannot be read stops the client being made. */
    o = base_opts();
    o.username = "u";
    char missing[PATH_MAX_LEN];
    join(missing, fx.dir, "no-such-password");
    o.password_file = missing;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "password file"));
    o.username = "u:x";
    o.password_file = pw;
    assert_int_equal(topo_http_create(&h, &o, &err), TOPO_EINVALID);
}

/* The Authorization header the server saw on /echo. */
static void expect_authorization(topo_http *h, const char *want)
{
    topo_http_response r = {0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(call(h, "GET", "/echo", NULL, &r, &err), 0);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    assert_non_null(j);
    const char *got =
        json_string_value(json_object_get(json_object_get(j, "headers"), "authorization"));
    assert_non_null(got);
    assert_string_equal(got, want);
    json_decref(j);
    topo_http_response_dispose(&r);
}

static void test_http_auth__schemes_on_the_wire(void **state)
{
    (void)state;
    topo_http_opts o = base_opts();
    o.token_file = secret_file("scheme-token", "0123456789abcdef\n");
    o.token_scheme = "Token"; /* NetBox v1 */
    topo_http *h = client(&o);
    expect_authorization(h, "Token 0123456789abcdef");
    topo_http_free(h);
    o.token_scheme = "Basic"; /* UFM /ufmRestV3: literally "Basic <token>" */
    h = client(&o);
    expect_authorization(h, "Basic 0123456789abcdef");
    topo_http_free(h);
    o.token_scheme = NULL;
    h = client(&o);
    expect_authorization(h, "Bearer 0123456789abcdef");
    topo_http_free(h);

    o = base_opts();
    o.username = "admin";
    o.password_file = secret_file("wire-pw", "123456\n");
    h = client(&o);
    expect_authorization(h, "Basic YWRtaW46MTIzNDU2"); /* base64("admin:123456") */
    topo_http_free(h);
    o.username = NULL;
    o.username_file = secret_file("wire-user", "Aladdin\n");
    o.password_file = secret_file("wire-pw", "open sesame");
    h = client(&o);
    expect_authorization(h, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="); /* RFC 7617's example */
    topo_http_free(h);
}

static void test_http_auth__basic_rotation_after_401(void **state)
{
    (void)state;
    /* The server accepts what its token file says; the client has its own
     * username and password files. */
    write_file(fx.token_file, "alice:pw-1");
    topo_http_opts o = base_opts();
    o.username_file = secret_file("rot-user", "alice\n");
    o.password_file = secret_file("rot-pw", "pw-1\n");
    o.token_reload_ms = 600000; /* only a 401 makes it re-read */
    topo_http *h = client(&o);
    get_ok(h, "/basic/json");
    server_stats before = server_get(NULL);

    /* A rotated password: 401, both files re-read, sent once more. */
    write_file(fx.token_file, "alice:pw-2");
    secret_file("rot-pw", "pw-2\n");
    get_ok(h, "/basic/json");
    topo_http_stats s = stats_of(h);
    assert_int_equal(s.retries, 1);
    assert_int_equal(s.token_reloads, 2); /* the username and the password file */
    assert_int_equal(server_get(NULL).unauthorized - before.unauthorized, 1);

    /* A rotated user and password together. */
    write_file(fx.token_file, "bob:pw-3");
    secret_file("rot-user", "bob");
    secret_file("rot-pw", "pw-3");
    get_ok(h, "/basic/json");
    assert_int_equal(stats_of(h).retries, 2);

    /* A 401 that a re-read does not cure is returned, once. */
    write_file(fx.token_file, "bob:pw-4");
    topo_http_response r = {0};
    assert_int_equal(call(h, "GET", "/basic/json", NULL, &r, NULL), 0);
    assert_int_equal(r.status, 401);
    topo_http_response_dispose(&r);
    assert_int_equal(stats_of(h).retries, 2);
    topo_http_free(h);
}

static void test_http_auth__basic_periodic_reload(void **state)
{
    (void)state;
    write_file(fx.token_file, "carol:p-1");
    topo_http_opts o = base_opts();
    o.username = "carol";
    o.password_file = secret_file("per-pw", "p-1");
    o.token_reload_ms = 50;
    topo_http *h = client(&o);
    get_ok(h, "/basic/json");
    server_stats before = server_get(NULL);
    write_file(fx.token_file, "carol:p-2");
    secret_file("per-pw", "p-2\r\n");
    topo_clock_sleep_ns(120000000);
    get_ok(h, "/basic/json"); /* re-read before sending: no 401 */
    assert_int_equal(server_get(NULL).unauthorized, before.unauthorized);
    assert_int_equal(stats_of(h).retries, 0);

    /* A password file turned bad keeps the current password working, and
     * the warning names the file, not the bad content. */
    secret_file("per-pw", "bad\x02secret-shown");
    topo_clock_sleep_ns(120000000);
    logged[0] = '\0';
    topo_log_set_sink(capture, NULL);
    get_ok(h, "/basic/json");
    topo_log_set_sink(NULL, NULL);
    assert_int_equal(server_get(NULL).unauthorized, before.unauthorized);
    assert_non_null(strstr(logged, "re-reading the password"));
    assert_non_null(strstr(logged, "per-pw"));
    assert_null(strstr(logged, "secret-shown"));
    topo_http_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_auth__secret_files),
        cmocka_unit_test(test_http_auth__options),
        cmocka_unit_test(test_http_auth__schemes_on_the_wire),
        cmocka_unit_test(test_http_auth__basic_rotation_after_401),
        cmocka_unit_test(test_http_auth__basic_periodic_reload),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
