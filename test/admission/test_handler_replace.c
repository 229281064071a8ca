#define _POSIX_C_SOURCE 200809L
/* Tests for failed-node replacement (lib/admission/handler_replace.c) through
 * topo_admission_handle, on support/racks.h's cluster: the recorded Job pod
 * (8 GPUs, rack required) on racks r1 = n9 n10 n11, r2 = n1 n2 n3, r3 =
 * m1..m6. A node that fails (Kueue's rules: deleted, no
 * Ready condition, NotReady or an untolerated taint with none of the
 * PodSet's pods still running there) has its slots moved to a node of the
 * PodSet's domain when a pod claims one of them; with a pod still running
 * there the pod waits; without room it waits (or, failFast, is refused);
 * a single pod's PodSet is placed anew; our own output coming back keeps
 * its slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/kueue.h"
#include "topo/live.h"
#include "support/racks.h"

static uint64_t outcome(racks_fx *f, topo_admission_replace_outcome o)
{
    topo_admission_stats st;
    topo_admission_get_stats(f->ctx, &st);
    return st.node_replacements[o];
}

/* The pod's level annotation moved: preferred instead of required. */
static void prefer(json_t *pod)
{
    json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    json_object_del(ann, "kueue.x-k8s.io/podset-required-topology");
    json_object_set_new(ann, "kueue.x-k8s.io/podset-preferred-topology", json_string(RACKS_RACK));
}

/* A bare pod (no owner: a PodSet of one) named name. */
static json_t *bare_pod(const char *name)
{
    json_t *pod = racks_job_pod(0, 1);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_del(meta, "ownerReferences");
    json_object_del(meta, "generateName");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "labels", json_object());
    json_t *ann = json_object_get(meta, "annotations");
    json_object_del(ann, "batch.kubernetes.io/job-completion-index");
    json_object_del(ann, TOPO_PODSET_SIZE_ANNOTATION);
    return pod;
}

static int gated(const json_t *pod)
{
    return racks_annotation(pod, TOPO_ADMISSION_WAIT_REASON_ANNOTATION) != NULL;
}

static topo_cache_reservation reservation(racks_fx *f, const char *key, topo_pool *pool)
{
    topo_cache_reservation r;
    topo_err err = TOPO_ERR_INIT;
    if (topo_cache_reservation_get_by_podset(&r, f->cache, key, pool, &err) < 0)
        fail_msg("reservation: %s", err.text);
    return r;
}

/* n9 NotReady and its pod Failed: the replacement for index 0 goes to the
 * rack's free node, the reservation's next generation moves slot 0 only,
 * the record carries it, and the pod of index 1 keeps its node. */
static void test_replace__notready_failed_pod(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    const char *rack = racks_selector(a0, RACKS_RACK);
    assert_string_equal(rack, racks_selector(a1, RACKS_RACK));
    racks_store(&f, a0, "u-0", h0, "Running");
    racks_store(&f, a1, "u-1", h1, "Running");
    racks_node(&f, h0, 0, 0, NULL, 0);
    racks_store(&f, a0, "u-0", h0, "Failed");

    json_t *again = racks_job_pod(0, 2);
    json_t *b0 = racks_admit(&f, again, "r-2");
    assert_false(gated(b0));
    assert_string_equal(racks_selector(b0, RACKS_RACK), rack);
    assert_string_not_equal(racks_selector(b0, RACKS_HOST), h0);
    assert_string_not_equal(racks_selector(b0, RACKS_HOST), h1);
    assert_string_equal(racks_annotation(b0, TOPO_ADMISSION_SLOT_ANNOTATION), "0");
    assert_non_null(strstr(racks_annotation(b0, TOPO_ADMISSION_ASSIGNMENT_ANNOTATION),
                           racks_selector(b0, RACKS_HOST)));
    assert_null(strstr(racks_annotation(b0, TOPO_ADMISSION_ASSIGNMENT_ANNOTATION), h0));
    assert_non_null(strstr(racks_annotation(b0, TOPO_CACHE_RECORD_ANNOTATION), "\"gen\":[0,1]"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);

    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r = reservation(&f, RACKS_JOB_KEY, pool);
    assert_int_equal(r.gen_seq, 1);
    assert_string_equal(r.slots[0].values[r.slots[0].nvalues - 1], racks_selector(b0, RACKS_HOST));
    assert_string_equal(r.slots[1].values[r.slots[1].nvalues - 1], h1);
    assert_string_equal(r.slots[1].pod_uid, "u-1");

    /* a second replacement pod of index 0 finds the slot moved already; every
     * pod placed from now on carries the new generation (the reservation
     * memo's copy too) */
    json_t *c0 = racks_admit(&f, again, "r-3");
    assert_string_equal(racks_selector(c0, RACKS_HOST), racks_selector(b0, RACKS_HOST));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    for (int i = 0; i < 2; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "r-%d", 4 + i);
        json_t *d1 = racks_admit(&f, p1, uid);
        assert_string_equal(racks_selector(d1, RACKS_HOST), h1);
        assert_non_null(strstr(racks_annotation(d1, TOPO_CACHE_RECORD_ANNOTATION),
                               "\"gen\":[0,1]"));
        json_decref(d1);
    }
    topo_pool_free(pool);
    json_decref(c0);
    json_decref(b0);
    json_decref(again);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A node deleted with its pod still running fails at once. A node
 * NotReady while the PodSet's pod still runs there does not: the pod for
 * its index waits (gated, the reason names the node); once the old pod
 * has failed and the rack has no room, it waits for a replacement; the
 * node coming back takes it, nothing moves. */
static void test_replace__deleted_then_still_running_waits(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    racks_store(&f, a0, "u-0", h0, "Running");
    racks_store(&f, a1, "u-1", h1, "Running");

    racks_node_gone(&f, h1);
    json_t *b1 = racks_admit(&f, p1, "r-2");
    assert_false(gated(b1));
    assert_string_not_equal(racks_selector(b1, RACKS_HOST), h1);
    assert_string_not_equal(racks_selector(b1, RACKS_HOST), h0);
    assert_string_equal(racks_selector(b1, RACKS_RACK), racks_selector(a1, RACKS_RACK));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);

    racks_node(&f, h0, 0, 0, NULL, 0);
    json_t *b0 = racks_admit(&f, p0, "r-3");
    assert_true(gated(b0));
    const char *why = racks_annotation(b0, TOPO_ADMISSION_WAIT_REASON_ANNOTATION);
    assert_non_null(strstr(why, h0));
    assert_non_null(strstr(why, "still runs"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_WAITING), 1);

    /* its pod ended; the rack's last node is index 1's now */
    racks_store(&f, a0, "u-0", h0, "Failed");
    json_t *c0 = racks_admit(&f, p0, "r-4");
    assert_true(gated(c0));
    assert_non_null(
        strstr(racks_annotation(c0, TOPO_ADMISSION_WAIT_REASON_ANNOTATION), "replacement"));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NO_ROOM), 1);
    /* the node comes back: the pod goes there, nothing moves */
    racks_node(&f, h0, 1, 0, NULL, 0);
    json_t *d0 = racks_admit(&f, p0, "r-5");
    assert_false(gated(d0));
    assert_string_equal(racks_selector(d0, RACKS_HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    json_decref(d0);
    json_decref(c0);
    json_decref(b0);
    json_decref(b1);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A 4-pod PodSet in r3 (m1..m6): two of its nodes fail, one without a
 * Ready condition, one with an untolerated NoExecute taint; both are
 * replaced inside r3 in one step (one generation). */
static void test_replace__two_failed_nodes_one_step(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p[4], *a[4];
    const char *h[4];
    for (int i = 0; i < 4; i++) {
        char uid[16];
        snprintf(uid, sizeof uid, "r-%d", i);
        p[i] = racks_job_pod(i, 4);
        a[i] = racks_admit(&f, p[i], uid);
        h[i] = racks_selector(a[i], RACKS_HOST);
        assert_string_equal(racks_selector(a[i], RACKS_RACK), "r3");
    }
    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    racks_node(&f, h[0], 0, 1, NULL, 0);
    racks_node(&f, h[1], 1, 0, &fault, 0);
    json_t *b = racks_admit(&f, p[1], "r-9");
    assert_false(gated(b));
    assert_string_equal(racks_selector(b, RACKS_RACK), "r3");
    for (int i = 0; i < 4; i++)
        assert_string_not_equal(racks_selector(b, RACKS_HOST), h[i]);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r = reservation(&f, RACKS_JOB_KEY, pool);
    assert_int_equal(r.gen_seq, 1);
    const char *n0 = r.slots[0].values[r.slots[0].nvalues - 1],
               *n1 = r.slots[1].values[r.slots[1].nvalues - 1];
    assert_string_not_equal(n0, n1);
    for (int i = 0; i < 4; i++) {
        assert_string_not_equal(n0, h[i]);
        assert_string_not_equal(n1, h[i]);
    }
    assert_string_equal(r.slots[2].values[r.slots[2].nvalues - 1], h[2]);
    assert_string_equal(r.slots[3].values[r.slots[3].nvalues - 1], h[3]);
    assert_string_equal(racks_selector(b, RACKS_HOST), n1);
    topo_pool_free(pool);
    json_decref(b);
    for (int i = 0; i < 4; i++) {
        json_decref(a[i]);
        json_decref(p[i]);
    }
    racks_close(&f);
}

/* A PodSet that tolerates the taint stays; one cordoned node with the
 * PodSet's pod pending there (never bound) is replaced. */
static void test_replace__tolerated_taint_stays_cordon_moves(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2);
    json_t *tol = json_array_get(json_object_get(json_object_get(p0, "spec"), "tolerations"), 0);
    json_object_set_new(tol, "key", json_string("example.com/gpu-fault"));
    json_object_del(tol, "tolerationSeconds");
    json_t *p1 = json_deep_copy(p0);
    json_t *idx = json_string("1");
    json_object_set(json_object_get(json_object_get(p1, "metadata"), "labels"),
                    "batch.kubernetes.io/job-completion-index", idx);
    json_object_set(json_object_get(json_object_get(p1, "metadata"), "annotations"),
                    "batch.kubernetes.io/job-completion-index", idx);
    json_decref(idx);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    racks_node(&f, h0, 1, 0, &fault, 0);
    json_t *b0 = racks_admit(&f, p0, "r-2");
    assert_string_equal(racks_selector(b0, RACKS_HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 0);

    /* cordoned: spec.unschedulable, the pod of index 1 pending, unbound */
    char name[64];
    snprintf(name, sizeof name, "%s.gpu.example.com", h1);
    topo_kv labels[] = {{RACKS_RACK, racks_selector(a1, RACKS_RACK)}, {RACKS_HOST, h1}};
    topo_resource alloc[] = {{"nvidia.com/gpu", 8}, {"pods", 110}};
    topo_node_spec cordoned = {name, labels, 2, alloc, 2, NULL, 0, 1, 1, 0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_live_upsert_node(f.live, &cordoned, &err), 0);
    assert_int_equal(topo_live_commit(f.live, &err), 0);
    json_t *b1 = racks_admit(&f, p1, "r-3");
    assert_false(gated(b1));
    assert_string_not_equal(racks_selector(b1, RACKS_HOST), h1);
    assert_string_not_equal(racks_selector(b1, RACKS_HOST), h0);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    json_decref(b1);
    json_decref(b0);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* No room in the rack: failFast refuses the pod (403), every time. */
static void test_replace__fail_fast_refuses(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 1);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *rack = racks_selector(a0, RACKS_RACK);
    /* the rack's third node NotReady too: nowhere to go inside it */
    static const char *const r1[] = {"n9", "n10", "n11"}, *const r2[] = {"n1", "n2", "n3"};
    const char *const *nodes = strcmp(rack, "r1") == 0 ? r1 : r2;
    for (int i = 0; i < 3; i++)
        if (strcmp(nodes[i], h0) != 0 && strcmp(nodes[i], racks_selector(a1, RACKS_HOST)) != 0)
            racks_node(&f, nodes[i], 0, 0, NULL, 0);
    racks_node_gone(&f, h0);
    for (int i = 0; i < 2; i++) {
        racks_said s = racks_ask(&f, p0, i ? "r-3" : "r-2");
        assert_false(json_is_true(json_object_get(s.resp, "allowed")));
        json_t *st = json_object_get(s.resp, "status");
        assert_int_equal(json_integer_value(json_object_get(st, "code")), 403);
        assert_non_null(strstr(json_string_value(json_object_get(st, "message")), h0));
        racks_said_free(&s);
    }
    /* reported once for the slot, however often it is asked for */
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_FAIL_FAST), 1);
    /* the slot was given back: nobody holds slot 0 but its first claimant */
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A bare pod's node fails; the pod recreated under its name is placed
 * anew; our own output sent back (a reinvocation) keeps its slot. */
static void test_replace__single_pod_anew_reinvocation_kept(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *pod = bare_pod("solo");
    json_t *a = racks_admit(&f, pod, "r-0");
    const char *h = racks_selector(a, RACKS_HOST);
    racks_node(&f, h, 0, 0, NULL, 0);
    json_t *again = racks_admit(&f, a, "r-1"); /* reinvocation: sealed, kept */
    assert_string_equal(racks_selector(again, RACKS_HOST), h);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NEW), 0);
    json_t *b = racks_admit(&f, pod, "r-2");
    assert_false(gated(b));
    assert_string_not_equal(racks_selector(b, RACKS_HOST), h);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACE_NEW), 1);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 0);
    assert_string_not_equal(racks_annotation(b, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                            racks_annotation(a, TOPO_ADMISSION_RESERVATION_ANNOTATION));
    json_decref(b);
    json_decref(again);
    json_decref(a);
    json_decref(pod);
    racks_close(&f);
}

/* Preferred rack: the replacement stays in the rack while it has room,
 * and goes to another rack when it has none. */
static void test_replace__preferred_same_rack_then_other(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    prefer(p0);
    prefer(p1);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    const char *rack = racks_selector(a0, RACKS_RACK);
    racks_node(&f, h0, 0, 0, NULL, 0);
    json_t *b0 = racks_admit(&f, p0, "r-2");
    assert_string_equal(racks_selector(b0, RACKS_RACK), rack);
    const char *third = racks_selector(b0, RACKS_HOST);
    /* now index 1's node and the rack's third fail: index 1 leaves the rack */
    racks_node(&f, h1, 0, 0, NULL, 0);
    racks_node(&f, third, 0, 0, NULL, 0);
    json_t *b1 = racks_admit(&f, p1, "r-3");
    assert_false(gated(b1));
    assert_string_not_equal(racks_selector(b1, RACKS_RACK), rack);
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 2);
    json_decref(b1);
    json_decref(b0);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A node relabelled into another rack, or deleted and re-created there
 * under the same hostname, is no longer in its required-rack PodSet's
 * domain: once its pod has ended, the pod for its slot goes to a node of
 * the PodSet's rack, never to the node in the other rack. While its pod
 * still runs there, a pod for its slot waits. */
static void test_replace__node_left_the_domain(void **state)
{
    (void)state;
    racks_fx f;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    const char *rack = racks_selector(a0, RACKS_RACK);
    racks_store(&f, a0, "u-0", h0, "Running");
    racks_store(&f, a1, "u-1", h1, "Running");

    racks_node_in(&f, h0, "r9");
    json_t *b0 = racks_admit(&f, p0, "r-2");
    assert_true(gated(b0));
    assert_non_null(strstr(racks_annotation(b0, TOPO_ADMISSION_WAIT_REASON_ANNOTATION),
                           "is no longer in topology.topo.io/rack"));

    racks_store(&f, a0, "u-0", h0, "Failed");
    json_t *c0 = racks_admit(&f, p0, "r-3");
    assert_false(gated(c0));
    assert_string_equal(racks_selector(c0, RACKS_RACK), rack);
    assert_string_not_equal(racks_selector(c0, RACKS_HOST), h0);
    assert_string_not_equal(racks_selector(c0, RACKS_HOST), h1);

    /* index 1's node deleted and re-created in r9 before any pod came */
    racks_store(&f, a1, "u-1", h1, "Failed");
    racks_node_gone(&f, h1);
    racks_node_in(&f, h1, "r9");
    json_t *c1 = racks_admit(&f, p1, "r-4");
    assert_true(gated(c1)); /* the rack's third node is index 0's now */
    assert_non_null(strstr(racks_annotation(c1, TOPO_ADMISSION_WAIT_REASON_ANNOTATION), h1));
    assert_int_equal(outcome(&f, TOPO_ADMISSION_REPLACED), 1);
    json_decref(c1);
    json_decref(c0);
    json_decref(b0);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace__notready_failed_pod),
        cmocka_unit_test(test_replace__deleted_then_still_running_waits),
        cmocka_unit_test(test_replace__two_failed_nodes_one_step),
        cmocka_unit_test(test_replace__tolerated_taint_stays_cordon_moves),
        cmocka_unit_test(test_replace__fail_fast_refuses),
        cmocka_unit_test(test_replace__single_pod_anew_reinvocation_kept),
        cmocka_unit_test(test_replace__preferred_same_rack_then_other),
        cmocka_unit_test(test_replace__node_left_the_domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
