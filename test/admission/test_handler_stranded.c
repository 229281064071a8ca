#define _POSIX_C_SOURCE 200809L
/* Tests for topo_admission_stranded_foreach (lib/admission/handler_stranded.c):
 * pods topo placed (admitted through topo_admission_handle, stored in the
 * cache unbound: their slots bind under their seals) whose slot's node
 * then failed are reported; healthy, tainted-only, bound pods are not.
 * The cluster is support/racks.h's. */
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

static int collect(void *payload, const topo_admission_stranded *s)
{
    char *out = payload;
    char line[200];
    snprintf(line, sizeof line, "%s/%s(%s) %s %s; ", s->namespace_, s->pod_name, s->pod_uid,
             s->host, s->what);
    strcat(out, line);
    return 0;
}

static const char *stranded(racks_fx *f, char *out)
{
    topo_err err = TOPO_ERR_INIT;
    out[0] = '\0';
    if (topo_admission_stranded_foreach(f->ctx, collect, out, &err) != 0)
        fail_msg("stranded: %s", err.text);
    return out;
}

/* A 2-pod Job admitted, its pods unbound: healthy nodes strand nothing; the
 * node of index 0 NotReady, deleted, without Ready or cordoned strands its
 * pod (named with its node and why); a taint alone does not (the pod's
 * tolerations are unknown here); a bound pod is kube-scheduler's. */
static void test_stranded__failed_node_reports_unbound_pod(void **state)
{
    (void)state;
    racks_fx f;
    char out[512], want[512];
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    assert_string_not_equal(h0, h1);
    racks_store(&f, a0, "u-0", NULL, "Pending");
    racks_store(&f, a1, "u-1", NULL, "Pending");
    assert_string_equal(stranded(&f, out), "");

    racks_node(&f, h0, 0, 0, NULL, 0);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s is NotReady; ", h0);
    assert_string_equal(stranded(&f, out), want);

    racks_node(&f, h0, 1, 1, NULL, 0);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s has no Ready condition; ", h0);
    assert_string_equal(stranded(&f, out), want);

    racks_node(&f, h0, 1, 0, NULL, 1);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s is cordoned; ", h0);
    assert_string_equal(stranded(&f, out), want);

    static const topo_taint fault = {"example.com/gpu-fault", "xid79", "NoExecute"};
    racks_node(&f, h0, 1, 0, &fault, 0);
    assert_string_equal(stranded(&f, out), "");

    racks_node_gone(&f, h0);
    racks_node_gone(&f, h1);
    snprintf(want, sizeof want, "team-a/u-0(u-0) %s was deleted; team-a/u-1(u-1) %s was deleted; ",
             h0, h1);
    char alt[512];
    snprintf(alt, sizeof alt, "team-a/u-1(u-1) %s was deleted; team-a/u-0(u-0) %s was deleted; ",
             h1, h0);
    stranded(&f, out);
    if (strcmp(out, want) != 0)
        assert_string_equal(out, alt);

    /* bound (kube-scheduler took it) or finished: not ours to fail */
    racks_store(&f, a1, "u-1", h1, "Pending");
    racks_store(&f, a0, "u-0", NULL, "Failed");
    assert_string_equal(stranded(&f, out), "");

    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A pending pod pinned to a node that fails keeps its claim when a repair
 * moves its slot (a review for its index arrived: the Job's replacement or
 * anyone's forged one), and is still reported on the node it is pinned to,
 * not the slot's new one: else it stayed Pending there for ever. */
static void test_stranded__pinned_pod_after_its_slot_moved(void **state)
{
    (void)state;
    racks_fx f;
    char out[512], want[512];
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *h1 = racks_selector(a1, RACKS_HOST);
    racks_store(&f, a0, "u-0", h0, "Running");
    racks_store(&f, a1, "u-1", NULL, "Pending");
    racks_node(&f, h1, 1, 0, NULL, 1);
    json_t *b1 = racks_admit(&f, p1, "r-2");
    const char *moved = racks_selector(b1, RACKS_HOST);
    assert_string_not_equal(moved, h1);
    assert_string_not_equal(moved, h0);
    snprintf(want, sizeof want, "team-a/u-1(u-1) %s is cordoned; ", h1);
    assert_string_equal(stranded(&f, out), want);
    json_decref(b1);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

/* A pending pod pinned to a node relabelled into another rack: its
 * nodeSelector names the old rack, so it can never run: reported. */
static void test_stranded__pinned_node_relabelled(void **state)
{
    (void)state;
    racks_fx f;
    char out[512], want[512];
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    const char *h0 = racks_selector(a0, RACKS_HOST), *rack = racks_selector(a0, RACKS_RACK);
    racks_store(&f, a0, "u-0", NULL, "Pending");
    racks_store(&f, a1, "u-1", racks_selector(a1, RACKS_HOST), "Running");
    racks_node_in(&f, h0, "r9");
    snprintf(want, sizeof want,
             "team-a/u-0(u-0) %s is no longer in topology.topo.io/rack %s (it is in r9); ", h0,
             rack);
    assert_string_equal(stranded(&f, out), want);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

static int stop(void *payload, const topo_admission_stranded *s)
{
    (void)s;
    (*(int *)payload)++;
    return 5;
}

/* fn's non-zero return stops and is returned; missing arguments refused. */
static void test_stranded__stop_and_arguments(void **state)
{
    (void)state;
    racks_fx f;
    topo_err err = TOPO_ERR_INIT;
    racks_open(&f, 0);
    json_t *p0 = racks_job_pod(0, 2), *p1 = racks_job_pod(1, 2);
    json_t *a0 = racks_admit(&f, p0, "r-0"), *a1 = racks_admit(&f, p1, "r-1");
    racks_store(&f, a0, "u-0", NULL, "Pending");
    racks_store(&f, a1, "u-1", NULL, "Pending");
    racks_node_gone(&f, racks_selector(a0, RACKS_HOST));
    racks_node_gone(&f, racks_selector(a1, RACKS_HOST));
    int calls = 0;
    assert_int_equal(topo_admission_stranded_foreach(f.ctx, stop, &calls, &err), 5);
    assert_int_equal(calls, 1);
    assert_int_equal(topo_admission_stranded_foreach(f.ctx, NULL, NULL, &err), TOPO_EINVALID);
    json_decref(a0);
    json_decref(a1);
    json_decref(p0);
    json_decref(p1);
    racks_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stranded__failed_node_reports_unbound_pod),
        cmocka_unit_test(test_stranded__pinned_pod_after_its_slot_moved),
        cmocka_unit_test(test_stranded__pinned_node_relabelled),
        cmocka_unit_test(test_stranded__stop_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
