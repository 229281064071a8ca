/* webhook/conn_deadline.c: each phase's absolute deadline, with the sockets
 * of a socketpair standing for connections (a cut one reads end of stream
 * on the other side), and times passed in. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "conn_deadline.h"
#include "topo/log.h"

#define S 1000000000LL

typedef struct pair {
    int ours, theirs;
} pair;

static pair new_pair(void)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    return (pair){fds[0], fds[1]};
}

/* 1: the peer sees the end of the stream (shutdown), 0: still open. */
static int was_cut(pair p)
{
    char c;
    ssize_t n = recv(p.theirs, &c, 1, MSG_DONTWAIT);
    return n == 0;
}

static void close_pair(pair p)
{
    close(p.ours);
    close(p.theirs);
}

static const wh_deadline_limits limits = {10 * S, 90 * S, 5 * S, 1000};

static void silent(const topo_log_event *ev, void *payload)
{
    (void)ev;
    (void)payload;
}

static int setup(void **state)
{
    topo_log_set_sink(silent, NULL);
    *state = wh_conns_new(&limits);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    wh_conns_free(*state);
    return 0;
}

/* The header deadline counts from the accept, whatever arrives meanwhile. */
static void test_conn_deadline__headers(void **state)
{
    wh_conns *cs = *state;
    pair p = new_pair();
    wh_conn *c = wh_conns_add(cs, p.ours, "192.0.2.1", 100 * S);
    assert_non_null(c);
    assert_int_equal(wh_conns_sweep(cs, 109 * S), 0);
    assert_false(was_cut(p));
    assert_int_equal(wh_conns_sweep(cs, 110 * S), 1);
    assert_true(was_cut(p));
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_HEADER_TIMEOUT), 1);
    /* cut once: a later sweep leaves it to the library to close */
    assert_int_equal(wh_conns_sweep(cs, 200 * S), 0);
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_HEADER_TIMEOUT), 1);
    wh_conns_remove(cs, c);
    assert_int_equal(wh_conns_count(cs), 0);
    close_pair(p);
}

/* Body: headers_done + grace + received / rate; bytes at the rate keep the
 * connection, slower ones do not. */
static void test_conn_deadline__body_rate(void **state)
{
    wh_conns *cs = *state;
    pair p = new_pair();
    wh_conn *c = wh_conns_add(cs, p.ours, NULL, 0);
    wh_conn_body_start(cs, c, 1 * S);
    /* 1 s + 5 s grace, nothing received */
    assert_int_equal(wh_conns_sweep(cs, 6 * S - 1), 0);
    wh_conn_body_bytes(cs, c, 3000); /* 3 s more at 1000 bytes/s */
    assert_int_equal(wh_conns_sweep(cs, 9 * S - 1), 0);
    assert_false(was_cut(p));
    wh_conn_body_bytes(cs, c, 500); /* half a second more */
    assert_int_equal(wh_conns_sweep(cs, 9 * S + S / 2 - 1), 0);
    assert_int_equal(wh_conns_sweep(cs, 9 * S + S / 2), 1);
    assert_true(was_cut(p));
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_SLOW_BODY), 1);
    wh_conns_remove(cs, c);
    close_pair(p);
}

/* The handler's time is never cut; the idle deadline starts at its answer. */
static void test_conn_deadline__handling_then_idle(void **state)
{
    wh_conns *cs = *state;
    pair p = new_pair();
    wh_conn *c = wh_conns_add(cs, p.ours, NULL, 0);
    wh_conn_body_start(cs, c, 1 * S);
    wh_conn_handling(cs, c);
    assert_int_equal(wh_conns_sweep(cs, 1000 * S), 0);
    assert_false(was_cut(p));
    wh_conn_idle(cs, c, 1000 * S);
    assert_int_equal(wh_conns_sweep(cs, 1089 * S), 0);
    assert_int_equal(wh_conns_sweep(cs, 1090 * S), 1);
    assert_true(was_cut(p));
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_IDLE), 1);
    wh_conns_remove(cs, c);
    close_pair(p);
}

/* A removed connection's descriptor is not touched again (it may be
 * reused), and other connections keep their own deadlines. */
static void test_conn_deadline__removed_untouched(void **state)
{
    wh_conns *cs = *state;
    pair a = new_pair(), b = new_pair();
    wh_conn *ca = wh_conns_add(cs, a.ours, NULL, 0);
    wh_conn *cb = wh_conns_add(cs, b.ours, NULL, 5 * S);
    assert_int_equal(wh_conns_count(cs), 2);
    wh_conns_remove(cs, ca);
    assert_int_equal(wh_conns_sweep(cs, 12 * S), 0);
    assert_false(was_cut(a));
    assert_int_equal(wh_conns_sweep(cs, 15 * S), 1);
    assert_true(was_cut(b));
    wh_conns_remove(cs, cb);
    close_pair(a);
    close_pair(b);
}

/* --min-body-rate 0: bodies have no deadline. */
static void test_conn_deadline__no_rate(void **state)
{
    (void)state;
    wh_deadline_limits lim = limits;
    lim.min_body_rate = 0;
    wh_conns *cs = wh_conns_new(&lim);
    assert_non_null(cs);
    pair p = new_pair();
    wh_conn *c = wh_conns_add(cs, p.ours, NULL, 0);
    wh_conn_body_start(cs, c, 1 * S);
    assert_int_equal(wh_conns_sweep(cs, 100000 * S), 0);
    assert_false(was_cut(p));
    wh_conns_remove(cs, c);
    wh_conns_free(cs);
    close_pair(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conn_deadline__headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conn_deadline__body_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conn_deadline__handling_then_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conn_deadline__removed_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conn_deadline__no_rate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
