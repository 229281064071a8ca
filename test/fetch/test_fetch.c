/* lib/sync/fetch without a server: the options each kind takes (URL, which
 * credentials go together), the origin check that keeps credentials on the
 * configured host when following a `next` link, the page chain's checks
 * (no page twice, no more pages than the first page's count allows, on the
 * recorded NetBox pages of fixtures/sources/netbox), and a fetch that cannot
 * connect (no facts, the failure counted). The requests themselves run
 * against fake NetBox and UFM servers in test/e2e/sync_fetch_e2e.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/sync/fetch/fetch_internal.h" /* white-box */
#include "topo/fetch.h"
#include "topo/log.h"

static int check(topo_fetch_kind kind, const topo_fetch_opts *o, const char *want)
{
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_fetch_check(kind, o, &err);
    if (want != NULL && (rc == 0 || strstr(err.text, want) == NULL))
        fail_msg("want an error with \"%s\", got %d \"%s\"", want, rc, err.text);
    if (want == NULL && rc != 0)
        fail_msg("unexpected error: %s", err.text);
    return rc;
}

static void test_fetch__options(void **state)
{
    (void)state;
    topo_fetch_opts o = {.url = "https://netbox.example.com/", .token_file = "/t"};
    check(TOPO_FETCH_NETBOX, &o, NULL);
    o.url = "https://netbox.example.com/netbox";
    check(TOPO_FETCH_NETBOX, &o, NULL);
    o.url = "ftp://netbox.example.com";
    check(TOPO_FETCH_NETBOX, &o, "netbox: url: \"ftp://");
    o.url = "https://admin:hunter2@netbox.example.com";
    check(TOPO_FETCH_NETBOX, &o, "user information");
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_fetch_check(TOPO_FETCH_NETBOX, &o, &err), TOPO_EINVALID);
    assert_null(strstr(err.text, "hunter2"));
    o.url = "https://netbox.example.com/?x=1";
    check(TOPO_FETCH_NETBOX, &o, "takes no query");
    o.url = "https://netbox.example.com:99999";
    check(TOPO_FETCH_NETBOX, &o, "bad port");
    o.url = NULL;
    check(TOPO_FETCH_NETBOX, &o, "netbox: url: required");
    /* An LLDP URL is a document's: a query is part of it. */
    o.url = "http://collector:8080/lldp?format=json";
    check(TOPO_FETCH_LLDP, &o, NULL);
    o.url = "http://collector:8080/lldp#x";
    check(TOPO_FETCH_LLDP, &o, "fragment");

    /* Credentials by kind. */
    topo_fetch_opts u = {.url = "https://ufm.example.com"};
    check(TOPO_FETCH_UFM, &u, "ufm: credentials required");
    u.username = "admin";
    check(TOPO_FETCH_UFM, &u, "needs a password file");
    u.password_file = "/p";
    check(TOPO_FETCH_UFM, &u, NULL);
    u.token_file = "/t";
    check(TOPO_FETCH_UFM, &u, "not both");
    u = (topo_fetch_opts){.url = "https://ufm.example.com", .token_file = "/t"};
    check(TOPO_FETCH_UFM, &u, NULL);
    u = (topo_fetch_opts){.url = "https://ufm.example.com", .password_file = "/p"};
    check(TOPO_FETCH_UFM, &u, "needs a username");
    topo_fetch_opts n = {
        .url = "https://netbox.example.com", .username = "a", .password_file = "/p"};
    check(TOPO_FETCH_NETBOX, &n, "are UFM's");
    n = (topo_fetch_opts){.url = "https://netbox.example.com", .token_scheme = "Bearer"};
    check(TOPO_FETCH_NETBOX, &n, "without a token file");
    n = (topo_fetch_opts){.url = "https://netbox.example.com"}; /* anonymous reads */
    check(TOPO_FETCH_NETBOX, &n, NULL);
    n.netbox_lists = 1u << 9;
    check(TOPO_FETCH_NETBOX, &n, "unknown list");
    assert_int_equal(topo_fetch_check((topo_fetch_kind)7, &n, NULL), TOPO_EINVALID);

    /* A token file that is not there stops the fetcher being made. */
    topo_fetch *f = NULL;
    n = (topo_fetch_opts){.url = "https://netbox.example.com", .token_file = "/nonexistent/t"};
    assert_int_equal(topo_fetch_create(&f, TOPO_FETCH_NETBOX, &n, &err), TOPO_ENOTFOUND);
    assert_null(f);
    assert_non_null(strstr(err.text, "netbox: "));
    /* A filter list with a hole. */
    const char *roles[] = {"leaf", NULL};
    topo_netbox_opts filters = {.switch_roles = roles, .nswitch_roles = 2};
    n = (topo_fetch_opts){.url = "https://netbox.example.com", .netbox = &filters};
    assert_int_equal(topo_fetch_create(&f, TOPO_FETCH_NETBOX, &n, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "netbox: a missing filter name"));
    assert_null(f);
    assert_string_equal(topo_fetch_kind_name(TOPO_FETCH_UFM), "ufm");
    assert_string_equal(topo_fetch_failure_name(TOPO_FETCH_FAIL_AUTH), "auth");
    assert_null(topo_fetch_failure_name(TOPO_FETCH_FAIL_COUNT));
}

static void test_fetch__url_split(void **state)
{
    (void)state;
    fetch_origin o;
    size_t at = 0;
    assert_int_equal(fetch_url_split(&o, &at, "HTTPS://NetBox.Example.COM/api/", NULL), 0);
    assert_true(o.https);
    assert_string_equal(o.host, "netbox.example.com");
    assert_int_equal(o.port, 443);
    assert_int_equal(at, 26);
    assert_int_equal(fetch_url_split(&o, &at, "http://10.0.0.1:8080?x", NULL), 0);
    assert_false(o.https);
    assert_int_equal(o.port, 8080);
    assert_int_equal(at, 20);
    assert_int_equal(fetch_url_split(&o, &at, "https://[fd00::1]:8443/x", NULL), 0);
    assert_string_equal(o.host, "[fd00::1]");
    assert_int_equal(o.port, 8443);
    const char *bad[] = {"https://",          "https://:80/",    "https://h:/",  "https://h:0",
                         "https://[fd00::1/", "https://[::1]x/", "https://u@h/", "h/x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(fetch_url_split(&o, &at, bad[i], NULL), TOPO_EINVALID);
}

static topo_fetch *netbox(const char *url)
{
    topo_fetch *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_fetch_opts o = {.url = url};
    if (topo_fetch_create(&f, TOPO_FETCH_NETBOX, &o, &err) != 0)
        fail_msg("%s", err.text);
    return f;
}

static void follows(const topo_fetch *f, const char *link, const char *want)
{
    char *path = NULL;
    topo_err err = TOPO_ERR_INIT;
    int rc = fetch_follow(&path, f, link, "/api/dcim/devices/?limit=5", &err);
    if (want == NULL) {
        assert_int_equal(rc, TOPO_EINVALID);
        assert_null(path);
        assert_non_null(strstr(err.text, "netbox: GET /api/dcim/devices/?limit=5: the next link"));
        return;
    }
    if (rc != 0)
        fail_msg("%s: %s", link, err.text);
    assert_string_equal(path, want);
    free(path);
}

static void test_fetch__next_links(void **state)
{
    (void)state;
    topo_fetch *f = netbox("https://netbox.example.com");
    follows(f, "https://netbox.example.com/api/dcim/devices/?limit=5&offset=5",
            "/api/dcim/devices/?limit=5&offset=5");
    follows(f, "HTTPS://NETBOX.example.com:443/api/dcim/devices/?offset=5",
            "/api/dcim/devices/?offset=5");
    follows(f, "/api/dcim/devices/?offset=10", "/api/dcim/devices/?offset=10");
    follows(f, "https://evil.example.com/api/dcim/devices/?offset=5", NULL);
    follows(f, "http://netbox.example.com/api/dcim/devices/?offset=5", NULL); /* downgrade */
    follows(f, "https://netbox.example.com:8443/api/dcim/devices/", NULL);
    follows(f, "https://netbox.example.com@evil.example.com/api/", NULL);
    follows(f, "//evil.example.com/api/dcim/devices/", NULL);
    follows(f, "ftp://netbox.example.com/api/", NULL);
    char *path = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(fetch_follow(&path, f, "https://evil.example.com/x", "/p", &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "points to https://evil.example.com:443, not to the "
                                     "configured https://netbox.example.com:443"));
    topo_fetch_free(f);

    /* Under a path prefix, a link must stay under it. */
    f = netbox("http://127.0.0.1:8000/netbox/");
    follows(f, "http://127.0.0.1:8000/netbox/api/dcim/racks/?offset=2",
            "/api/dcim/racks/?offset=2");
    follows(f, "http://127.0.0.1:8000/api/dcim/racks/?offset=2", NULL);
    follows(f, "http://127.0.0.1:8000/netboxes/api/", NULL);
    follows(f, "http://127.0.0.1/netbox/api/", NULL); /* port 80, not 8000 */
    topo_fetch_free(f);
}

/* A recorded NetBox page (fixtures/sources/netbox/NAME). */
/* What a page's text held, as topo-sync reads it (topo_netbox_read_page). */
static topo_netbox_page page_text(const char *text)
{
    topo_err err = TOPO_ERR_INIT;
    topo_netbox *nb = NULL;
    topo_netbox_page page;
    assert_int_equal(topo_netbox_create(&nb, NULL, &err), 0);
    if (topo_netbox_read_page(NULL, &page, nb, TOPO_NETBOX_DEVICES, text, strlen(text),
                              TOPO_MAX_NETBOX_PAGE, "page", &err) != 0)
        fail_msg("%s", err.text);
    topo_netbox_free(nb);
    return page;
}

static topo_netbox_page netbox_page(const char *name)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    char path[1024];
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/fixtures/sources/netbox/%s", root ? root : ".", name);
    json_t *page = json_load_file(path, 0, &jerr);
    if (page == NULL)
        fail_msg("%s: %s (set TOPO_SOURCE_DIR)", path, jerr.text);
    char *text = json_dumps(page, JSON_COMPACT);
    topo_netbox_page read = page_text(text);
    free(text);
    json_decref(page);
    return read;
}

static void next_refused(const fetch_pages *p, const char *next, const char *want)
{
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(fetch_pages_check_next(p, "netbox", next, &err), TOPO_EINVALID);
    if (strcmp(err.text, want) != 0)
        fail_msg("got  %s\nwant %s", err.text, want);
}

static void test_fetch__page_chain(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    fetch_pages p;
    topo_netbox_page first = netbox_page("v4-devices-page1.json"); /* count 10, 5 results */
    topo_netbox_page last = netbox_page("v4-devices-page2.json");
    assert_int_equal(fetch_pages_init(&p, &err), 0);
    assert_int_equal(fetch_pages_read(&p, "/api/dcim/devices/?limit=5", &first, &err), 0);
    assert_int_equal(
        fetch_pages_check_next(&p, "netbox", "/api/dcim/devices/?limit=5&offset=5", &err), 0);
    /* A link back to the page just read, or to an earlier one: a loop. */
    next_refused(&p, "/api/dcim/devices/?limit=5",
                 "netbox: GET /api/dcim/devices/?limit=5: next link repeats a page already "
                 "read (a loop): page 1 of the list, linked from page 1");
    assert_int_equal(fetch_pages_read(&p, "/api/dcim/devices/?limit=5&offset=5", &last, &err), 0);
    next_refused(&p, "/api/dcim/devices/?limit=5",
                 "netbox: GET /api/dcim/devices/?limit=5: next link repeats a page already "
                 "read (a loop): page 1 of the list, linked from page 2");
    /* The same string only: another spelling of a page is a new page, and
     * the count bounds those. count 10 / 5 a page + 1: a third page, no fourth. */
    assert_int_equal(
        fetch_pages_check_next(&p, "netbox", "/api/dcim/devices/?offset=5&limit=5", &err), 0);
    assert_int_equal(fetch_pages_read(&p, "/api/dcim/devices/?offset=5&limit=5", &last, &err), 0);
    next_refused(&p, "/api/dcim/devices/?limit=5&offset=15",
                 "netbox: GET /api/dcim/devices/?limit=5&offset=15: next link goes past the 3 "
                 "pages the list's count allows (count 10, 5 results a page); not followed");
    fetch_pages_dispose(&p);

    /* No count (not NetBox's shape): only max_pages bounds the chain. An
     * empty first page with a count of 0 allows that page alone. */
    topo_netbox_page bare = page_text("{\"results\":[{\"name\":\"gpu-001\"}]}");
    topo_netbox_page empty = page_text("{\"count\":0,\"results\":[]}");
    assert_int_equal(fetch_pages_init(&p, &err), 0);
    assert_int_equal(fetch_pages_read(&p, "/a?o=0", &bare, &err), 0);
    assert_int_equal(fetch_pages_read(&p, "/a?o=1", &bare, &err), 0);
    assert_int_equal(fetch_pages_check_next(&p, "netbox", "/a?o=2", &err), 0);
    fetch_pages_dispose(&p);
    assert_int_equal(fetch_pages_init(&p, &err), 0);
    assert_int_equal(fetch_pages_read(&p, "/a", &empty, &err), 0);
    next_refused(&p, "/a?o=1",
                 "netbox: GET /a?o=1: next link goes past the 1 pages the list's count allows "
                 "(count 0, 1 results a page); not followed");
    fetch_pages_dispose(&p);
}

static void test_fetch__unreachable(void **state)
{
    (void)state;
    /* Port 1 on loopback: refused at once. */
    topo_fetch *f = NULL;
    topo_facts *facts = (topo_facts *)(uintptr_t)1; /* must stay untouched */
    topo_err err = TOPO_ERR_INIT;
    topo_fetch_opts o = {.url = "http://127.0.0.1:1", .retries = -1, .timeout_ms = 2000};
    topo_log_set_level(TOPO_LOG_OFF);
    assert_int_equal(topo_fetch_create(&f, TOPO_FETCH_UFM, &o, &err), TOPO_EINVALID);
    assert_int_equal(topo_fetch_create(&f, TOPO_FETCH_LLDP, &o, &err), 0);
    assert_int_equal(topo_fetch_facts(&facts, f, &err), TOPO_ECONNECT);
    assert_ptr_equal(facts, (topo_facts *)(uintptr_t)1);
    assert_non_null(strstr(err.text, "lldp: GET http://127.0.0.1:1/"));
    topo_fetch_stats st = topo_fetch_get_stats(f);
    assert_int_equal(st.fetches, 1);
    assert_int_equal(st.failures[TOPO_FETCH_FAIL_CONNECT], 1);
    assert_int_equal(st.last_success_unix, 0);
    assert_int_equal(st.requests, 1);
    topo_fetch_free(f);
    topo_fetch_free(NULL);
    topo_log_set_level(TOPO_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch__options),
        cmocka_unit_test(test_fetch__url_split),
        cmocka_unit_test(test_fetch__next_links),
        cmocka_unit_test(test_fetch__page_chain),
        cmocka_unit_test(test_fetch__unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
