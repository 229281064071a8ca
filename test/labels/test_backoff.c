/* The label writer's drift backoff (lib/sync/labels/backoff.h): a node's first
 * reassertion at once, each later one after twice the wait before (from
 * 1 s, up to the cap), drift before that deferred and the node pending; a
 * node quiet for twice its wait and ten minutes starts afresh, a slower
 * fighter meets a doubling wait all the same; a settled node is pending
 * no more; a pending node never visited again is forgotten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../lib/sync/labels/backoff.h" /* white-box */

/* Drift seen at now: 1 sent (after the check said so), 0 deferred. */
static int drift(drift_backoff *b, const char *node, int64_t now, int64_t *due)
{
    drift_node *n = NULL;
    int may = drift_backoff_check(b, node, now, due, &n);
    assert_true(may >= 0);
    assert_non_null(n);
    if (may)
        drift_backoff_sent(b, n, now);
    return may;
}

static void test_backoff__doubles_to_the_cap(void **state)
{
    (void)state;
    drift_backoff b;
    int64_t due = 0;
    assert_int_equal(drift_backoff_init(&b, 1000, 8000), 0);
    assert_int_equal(drift_backoff_next_due(&b, 0), -1);
    /* A fighter that puts its value back 10 ms after each reassertion. */
    const int64_t sent_at[] = {0, 1000, 3000, 7000, 15000, 23000, 31000};
    for (size_t i = 0; i < sizeof sent_at / sizeof sent_at[0]; i++) {
        assert_int_equal(drift(&b, "n1", sent_at[i], &due), 1);
        assert_int_equal(b.pending, 0);
        assert_int_equal(drift(&b, "n1", sent_at[i] + 10, &due), 0);
        assert_int_equal(b.pending, 1);
        int64_t wait = i < 4 ? 1000 << i : 8000; /* 1, 2, 4, 8 s, then the cap */
        assert_int_equal(due, sent_at[i] + wait);
        assert_int_equal(drift_backoff_next_due(&b, sent_at[i] + 10), due);
        /* Drift seen again before due: still deferred, once pending. */
        assert_int_equal(drift(&b, "n1", due - 1, &due), 0);
        assert_int_equal(b.pending, 1);
    }
    /* Another node is not held back by n1's fight. */
    assert_int_equal(drift(&b, "n2", 31020, &due), 1);
    drift_backoff_dispose(&b);
}

static void test_backoff__quiet_starts_afresh(void **state)
{
    (void)state;
    drift_backoff b;
    int64_t due = 0;
    assert_int_equal(drift_backoff_init(&b, 1000, 3600000), 0);
    assert_int_equal(drift(&b, "n1", 0, &due), 1);    /* waits 1 s after */
    assert_int_equal(drift(&b, "n1", 1500, &due), 1); /* after due: at once, waits 2 s */
    assert_int_equal(drift(&b, "n1", 2000, &due), 0);
    assert_int_equal(due, 3500);
    /* Converged (the fighter gave up, or put our value back): no longer
     * pending, and the wait stays while the quiet is short. */
    drift_backoff_settled(&b, "n1", 2100);
    assert_int_equal(b.pending, 0);
    assert_int_equal(drift_backoff_next_due(&b, 2100), -1);
    assert_int_equal(drift(&b, "n1", 3000, &due), 0);
    assert_int_equal(due, 3500);
    /* Quiet for twice the wait (drift last seen at 3000) but not the floor:
     * past due, so at once, and the wait goes on doubling (4 s). */
    assert_int_equal(drift(&b, "n1", 3000 + 4000, &due), 1);
    assert_int_equal(drift(&b, "n1", 7010, &due), 0);
    assert_int_equal(due, 11000);
    /* Quiet for DRIFT_QUIET_MIN_MS (more than twice the wait): afresh. */
    int64_t later = 7010 + DRIFT_QUIET_MIN_MS;
    assert_int_equal(drift(&b, "n1", later, &due), 1);
    assert_int_equal(drift(&b, "n1", later + 10, &due), 0);
    assert_int_equal(due, later + 1000);                 /* 1 s again */
    drift_backoff_settled(&b, "unknown", later + 20); /* a node that never drifted: nothing */
    drift_backoff_dispose(&b);
}

/* A fighter slower than twice the wait (another topo-sync whose rounds
 * take 18 s, bound by the API's QPS limit) still meets a doubling wait:
 * the quiet that resets it is at least DRIFT_QUIET_MIN_MS. It reset the
 * wait on every drift before, answering at once for ever. */
static void test_backoff__slow_fighter_backed_off(void **state)
{
    (void)state;
    drift_backoff b;
    int64_t due = 0, now = 0;
    int sent = 0, deferred = 0;
    assert_int_equal(drift_backoff_init(&b, 1000, 3600000), 0);
    for (int i = 0; i < 40; i++, now += 18000) {
        if (drift(&b, "n1", now, &due))
            sent++;
        else
            deferred++;
    }
    /* Sent at 1, 2, 4, 8, 16 s waits, then the wait outgrows 18 s: most of
     * the 40 drifts wait. */
    assert_true(sent <= 12);
    assert_true(deferred >= 28);
    drift_backoff_dispose(&b);
}

static void test_backoff__stale_pending_forgotten(void **state)
{
    (void)state;
    drift_backoff b;
    int64_t due = 0;
    assert_int_equal(drift_backoff_init(&b, 1000, 3600000), 0);
    assert_int_equal(drift(&b, "gone", 0, &due), 1);
    assert_int_equal(drift(&b, "gone", 10, &due), 0);
    /* Not visited again (deleted, left the plan): still due at 1000 until
     * DRIFT_STALE_MS after, then no longer pending. */
    assert_int_equal(drift_backoff_next_due(&b, 1000 + DRIFT_STALE_MS), 1000);
    assert_int_equal(b.pending, 1);
    assert_int_equal(drift_backoff_next_due(&b, 1001 + DRIFT_STALE_MS), -1);
    assert_int_equal(b.pending, 0);
    drift_backoff_dispose(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff__doubles_to_the_cap),
        cmocka_unit_test(test_backoff__quiet_starts_afresh),
        cmocka_unit_test(test_backoff__slow_fighter_backed_off),
        cmocka_unit_test(test_backoff__stale_pending_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
