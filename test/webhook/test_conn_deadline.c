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

static const wh_deadline_limits limits = {10 * S, 90 * S, 5 * S, 1000, 0};

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

/* A tracker capped at max_live connections (free with wh_conns_free). */
static wh_conns *capped(size_t max_live)
{
    wh_deadline_limits lim = limits;
    lim.max_live = max_live;
    wh_conns *cs = wh_conns_new(&lim);
    assert_non_null(cs);
    return cs;
}

/* Past the cap a new connection evicts the one waiting longest (pending
 * since its accept, idle since its last response), never one with a
 * request in progress (body, handler, response being sent). */
static void test_conn_deadline__cap_evicts_longest_waiting(void **state)
{
    (void)state;
    wh_conns *cs = capped(4);
    pair p[7];
    wh_conn *c[7];
    for (int i = 0; i < 7; i++)
        p[i] = new_pair();
    c[0] = wh_conns_add(cs, p[0].ours, NULL, 1 * S); /* its body arrives, keeping pace */
    wh_conn_body_start(cs, c[0], 1 * S);
    wh_conn_body_bytes(cs, c[0], 10 * limits.min_body_rate);
    c[1] = wh_conns_add(cs, p[1].ours, NULL, 2 * S); /* handshake pending */
    c[2] = wh_conns_add(cs, p[2].ours, NULL, 0);     /* answered: idle since 3 s */
    wh_conn_body_start(cs, c[2], 1 * S);
    wh_conn_handling(cs, c[2]);
    wh_conn_responding(cs, c[2], 3 * S);
    wh_conn_idle(cs, c[2], 3 * S);
    c[3] = wh_conns_add(cs, p[3].ours, NULL, 0); /* its response is being sent */
    wh_conn_body_start(cs, c[3], 1 * S);
    wh_conn_handling(cs, c[3]);
    wh_conn_responding(cs, c[3], 2 * S);
    assert_int_equal(wh_conns_make_room(cs, c[3]), WH_ROOM_OK);

    c[4] = wh_conns_add(cs, p[4].ours, NULL, 4 * S);
    assert_int_equal(wh_conns_make_room(cs, c[4]), WH_ROOM_EVICTED);
    assert_true(was_cut(p[1]));
    assert_int_equal(wh_conns_evicted_total(cs, WH_EVICT_PENDING), 1);

    c[5] = wh_conns_add(cs, p[5].ours, NULL, 5 * S);
    assert_int_equal(wh_conns_make_room(cs, c[5]), WH_ROOM_EVICTED);
    assert_true(was_cut(p[2]));
    assert_int_equal(wh_conns_evicted_total(cs, WH_EVICT_IDLE), 1);

    /* the evicted ones, still registered until the library closes them,
     * do not count: one more evicts one more (the pending c[4]) */
    c[6] = wh_conns_add(cs, p[6].ours, NULL, 6 * S);
    assert_int_equal(wh_conns_make_room(cs, c[6]), WH_ROOM_EVICTED);
    assert_true(was_cut(p[4]));
    assert_false(was_cut(p[0]));
    assert_false(was_cut(p[3]));
    assert_false(was_cut(p[5]));
    assert_false(was_cut(p[6]));
    assert_int_equal(wh_conns_evicted_total(cs, WH_EVICT_PENDING), 2);
    assert_int_equal(wh_conns_refused_total(cs), 0);
    /* an evicted connection is not cut again by its deadline: at 20 s the
     * sweep cuts c[0] (slow body), c[5] and c[6] (headers), not c[1], c[4] */
    assert_int_equal(wh_conns_sweep(cs, 20 * S), 3);
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_HEADER_TIMEOUT), 2);
    for (int i = 0; i < 7; i++) {
        wh_conns_remove(cs, c[i]);
        close_pair(p[i]);
    }
    assert_int_equal(wh_conns_count(cs), 0);
    wh_conns_free(cs);
}

/* A body behind the minimum rate counted from its headers (not from the
 * grace its deadline allows) is stalled: at the cap it is evicted like a
 * pending connection, so that connections which send headers and then
 * nothing cannot fill the cap for the 5 s grace. A body keeping pace, or one
 * only a moment old, is a request in progress; without a rate, no body is
 * stalled. */
static void test_conn_deadline__cap_evicts_stalled_body(void **state)
{
    (void)state;
    wh_conns *cs = capped(2);
    pair p[5];
    wh_conn *c[5];
    for (int i = 0; i < 5; i++)
        p[i] = new_pair();
    c[0] = wh_conns_add(cs, p[0].ours, NULL, 0); /* headers at 1 s, then 500 bytes */
    wh_conn_body_start(cs, c[0], 1 * S);
    wh_conn_body_bytes(cs, c[0], limits.min_body_rate / 2);
    c[1] = wh_conns_add(cs, p[1].ours, NULL, 0); /* headers at 1 s, keeping pace */
    wh_conn_body_start(cs, c[1], 1 * S);
    wh_conn_body_bytes(cs, c[1], 5 * limits.min_body_rate);
    /* at 1.05 s neither is behind by more than a segment's delay */
    c[2] = wh_conns_add(cs, p[2].ours, NULL, 1 * S + 50 * 1000000LL);
    assert_int_equal(wh_conns_make_room(cs, c[2]), WH_ROOM_REFUSED);
    assert_false(was_cut(p[0]));
    wh_conns_remove(cs, c[2]);
    /* at 2 s c[0] owes 1000 bytes and has 500: stalled, evicted */
    c[3] = wh_conns_add(cs, p[3].ours, NULL, 2 * S);
    assert_int_equal(wh_conns_make_room(cs, c[3]), WH_ROOM_EVICTED);
    assert_true(was_cut(p[0]));
    assert_false(was_cut(p[1]));
    assert_int_equal(wh_conns_evicted_total(cs, WH_EVICT_STALLED), 1);
    wh_conns_remove(cs, c[0]);
    wh_conns_remove(cs, c[3]);
    wh_conns_free(cs);
    for (int i = 0; i < 5; i++)
        close_pair(p[i]);

    /* without a minimum rate a body is never stalled */
    wh_deadline_limits lim = limits;
    lim.min_body_rate = 0;
    lim.max_live = 1;
    cs = wh_conns_new(&lim);
    assert_non_null(cs);
    pair q[2] = {new_pair(), new_pair()};
    wh_conn *d0 = wh_conns_add(cs, q[0].ours, NULL, 0);
    wh_conn_body_start(cs, d0, 1 * S);
    wh_conn *d1 = wh_conns_add(cs, q[1].ours, NULL, 60 * S);
    assert_int_equal(wh_conns_make_room(cs, d1), WH_ROOM_REFUSED);
    assert_false(was_cut(q[0]));
    wh_conns_remove(cs, d0);
    wh_conns_remove(cs, d1);
    wh_conns_free(cs);
    close_pair(q[0]);
    close_pair(q[1]);
}

/* When every connection has a request in progress the new one is closed
 * itself; once one is idle again, a new one takes its place. */
static void test_conn_deadline__cap_refuses_when_all_busy(void **state)
{
    (void)state;
    wh_conns *cs = capped(2);
    pair p[4];
    wh_conn *c[4];
    for (int i = 0; i < 4; i++)
        p[i] = new_pair();
    c[0] = wh_conns_add(cs, p[0].ours, NULL, 0);
    wh_conn_body_start(cs, c[0], 1 * S);
    wh_conn_body_bytes(cs, c[0], 10 * limits.min_body_rate);
    c[1] = wh_conns_add(cs, p[1].ours, NULL, 0);
    wh_conn_body_start(cs, c[1], 1 * S);
    wh_conn_handling(cs, c[1]);
    c[2] = wh_conns_add(cs, p[2].ours, NULL, 2 * S);
    assert_int_equal(wh_conns_make_room(cs, c[2]), WH_ROOM_REFUSED);
    assert_true(was_cut(p[2]));
    assert_false(was_cut(p[0]));
    assert_false(was_cut(p[1]));
    assert_int_equal(wh_conns_refused_total(cs), 1);
    wh_conns_remove(cs, c[2]);
    wh_conn_responding(cs, c[1], 3 * S);
    wh_conn_idle(cs, c[1], 3 * S);
    c[3] = wh_conns_add(cs, p[3].ours, NULL, 4 * S);
    assert_int_equal(wh_conns_make_room(cs, c[3]), WH_ROOM_EVICTED);
    assert_true(was_cut(p[1]));
    assert_false(was_cut(p[3]));
    for (int i = 0; i < 4; i++) {
        if (i != 2)
            wh_conns_remove(cs, c[i]);
        close_pair(p[i]);
    }
    wh_conns_free(cs);
}

/* A response not read within the idle timeout is cut (as before the
 * responding phase existed). */
static void test_conn_deadline__responding_deadline(void **state)
{
    wh_conns *cs = *state;
    pair p = new_pair();
    wh_conn *c = wh_conns_add(cs, p.ours, NULL, 0);
    wh_conn_body_start(cs, c, 1 * S);
    wh_conn_handling(cs, c);
    wh_conn_responding(cs, c, 10 * S);
    assert_int_equal(wh_conns_sweep(cs, 99 * S), 0);
    assert_int_equal(wh_conns_sweep(cs, 100 * S), 1);
    assert_true(was_cut(p));
    assert_int_equal(wh_conns_cut_total(cs, WH_CUT_IDLE), 1);
    wh_conns_remove(cs, c);
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
        cmocka_unit_test(test_conn_deadline__cap_evicts_longest_waiting),
        cmocka_unit_test(test_conn_deadline__cap_refuses_when_all_busy),
        cmocka_unit_test(test_conn_deadline__cap_evicts_stalled_body),
        cmocka_unit_test_setup_teardown(test_conn_deadline__responding_deadline, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
