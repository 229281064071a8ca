/* What the label writer last wrote per node (lib/sync/labels/written.h) and the
 * rule it feeds the diff: two topo-sync instances whose sources disagree
 * about a node each rewrite the record annotation, so the record alone made
 * each one's write look like a change of plan to the other (no backoff, a
 * PATCH and an Event each time, for ever). With the writer's memory, its
 * desired state unchanged since it wrote it and the node changed since, the
 * diff only undoes someone else's change: drift, backed off. A view that
 * does not show the write yet, a change of plan and a new node of the same
 * name are not drift; nodes not visited in a round, or gone, are forgotten;
 * at most max nodes are kept.
 *
 * The values are Selene's (fixtures/sources/ibnetdiscover/
 * mellanox-selene.compute.txt): luna-0001's leaf and spine as its dump
 * plans them, and as the same dump without leaf S-0c42a1030060ab50 and its
 * cables plans them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/sync/labels/written.h" /* white-box */
#include "topo/labeldiff.h"

#define P "topology.topo.io/"
#define REC TOPO_LABELDIFF_RECORD_KEY_DEFAULT
#define PROV P "provenance"
#define PROV_VALUE "{\"spine\":\"ibnetdiscover\",\"leaf\":\"ibnetdiscover\"}"

static const char *const prefixes[] = {P};
static const topo_labeldiff_owned owned = {prefixes, 1, NULL, 0, 0};

/* What instance A plans for luna-0001 (the whole dump). */
static const topo_kv a_labels[] = {{P "spine", "S-0c42a1030055678a"},
                                   {P "leaf", "S-0c42a1030060ab50"}};
static const topo_kv a_notes[] = {{PROV, PROV_VALUE}};

static topo_labeldiff_input a_input(int same)
{
    return (topo_labeldiff_input){&owned, 1, a_labels, 2, a_notes, 1, REC, same};
}

/* luna-0001 as instance B (no leaf S-0c42a1030060ab50) wrote it over A's
 * write: its labels and its own record. */
static json_t *node_b(const char *uid, const char *rv)
{
    json_t *n = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}}}", "metadata",
                          "name", "luna-0001", "uid", uid, "resourceVersion", rv, "labels",
                          P "spine", "S-0c42a1030055678a.2", P "leaf", "S-0c42a1030060abd0",
                          "kubernetes.io/hostname", "luna-0001", "annotations", REC,
                          P "leaf=S-0c42a1030060abd0," P "spine=S-0c42a1030055678a.2", PROV,
                          PROV_VALUE);
    assert_non_null(n);
    return n;
}

static void digest_of(char out[TOPO_SHA256_HEX_LEN + 1], const topo_labeldiff_input *in,
                      const char *uid)
{
    assert_int_equal(label_written_digest(out, in, uid), 0);
    assert_int_equal(strlen(out), TOPO_SHA256_HEX_LEN);
}

static void test_written__other_writer_rewrote_record(void **state)
{
    (void)state;
    label_written m;
    char da[TOPO_SHA256_HEX_LEN + 1];
    topo_labeldiff_input in = a_input(0);
    json_t *node = node_b("uid-1", "1002");
    topo_labeldiff *d = NULL;

    /* The record alone: B's record matches B's labels, so A took B's write
     * for a change of its own plan, written at once (the fight). */
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH);
    assert_int_equal(topo_labeldiff_drift_count(d), 0);
    assert_false(topo_labeldiff_reassert_only(d));
    topo_labeldiff_free(d);

    /* A remembers: it wrote this desired state to luna-0001 (uid-1) by a
     * PATCH computed from the node at resourceVersion 1000; B wrote 1002. */
    assert_int_equal(label_written_init(&m, 0), 0);
    digest_of(da, &in, "uid-1");
    assert_int_equal(label_written_note(&m, "luna-0001", da, "1000"), 0);
    in.same_as_last_write = label_written_again(&m, "luna-0001", da, "1002");
    assert_true(in.same_as_last_write);
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH);
    assert_true(topo_labeldiff_reassert_only(d)); /* backed off by the writer */
    assert_int_equal(topo_labeldiff_drift_count(d), 2);
    assert_int_equal(topo_labeldiff_change_count(d), 2);
    for (size_t i = 0; i < 2; i++)
        assert_true(topo_labeldiff_change_at(d, i)->drift);
    assert_string_equal(topo_labeldiff_reason(d), TOPO_LABELDIFF_REASON_REASSERTED);
    assert_string_equal(topo_labeldiff_event_type(d), "Warning");
    /* The patch still puts back everything A wrote, its record included. */
    const json_t *notes = json_object_get(json_object_get(topo_labeldiff_patch(d), "metadata"),
                                          "annotations");
    assert_string_equal(json_string_value(json_object_get(notes, REC)),
                        P "leaf=S-0c42a1030060ab50," P "spine=S-0c42a1030055678a");
    topo_labeldiff_free(d);
    json_decref(node);
    label_written_dispose(&m);
}

static void test_written__not_drift(void **state)
{
    (void)state;
    label_written m;
    char da[TOPO_SHA256_HEX_LEN + 1], moved[TOPO_SHA256_HEX_LEN + 1];
    char other_uid[TOPO_SHA256_HEX_LEN + 1];
    topo_labeldiff_input in = a_input(0);
    assert_int_equal(label_written_init(&m, 0), 0);
    digest_of(da, &in, "uid-1");
    assert_int_equal(label_written_note(&m, "luna-0001", da, "1000"), 0);
    /* The view not yet showing A's write: the node it was computed from. */
    assert_false(label_written_again(&m, "luna-0001", da, "1000"));
    /* A's plan moved (its leaf changed): a change of plan, at once. */
    const topo_kv moved_labels[] = {{P "spine", "S-0c42a1030055678a"},
                                    {P "leaf", "S-0c42a1030060abd0"}};
    topo_labeldiff_input in2 = in;
    in2.labels = moved_labels;
    digest_of(moved, &in2, "uid-1");
    assert_string_not_equal(moved, da);
    assert_false(label_written_again(&m, "luna-0001", moved, "1002"));
    /* The node deleted and registered again (another uid): a new node. */
    digest_of(other_uid, &in, "uid-2");
    assert_string_not_equal(other_uid, da);
    assert_false(label_written_again(&m, "luna-0001", other_uid, "1003"));
    /* A node never written: nothing to tell. */
    assert_false(label_written_again(&m, "luna-0002", da, "1002"));
    /* Only the provenance differs, or a value told from an absent one. */
    const topo_kv absent[] = {{PROV, NULL}}, dash[] = {{PROV, "-"}};
    char d1[TOPO_SHA256_HEX_LEN + 1], d2[TOPO_SHA256_HEX_LEN + 1];
    in2 = in;
    in2.annotations = absent;
    digest_of(d1, &in2, "uid-1");
    in2.annotations = dash;
    digest_of(d2, &in2, "uid-1");
    assert_string_not_equal(d1, d2);
    assert_string_not_equal(d1, da);
    label_written_dispose(&m);
}

static void test_written__found_in_place(void **state)
{
    (void)state;
    label_written m;
    char da[TOPO_SHA256_HEX_LEN + 1];
    topo_labeldiff_input in = a_input(0);
    assert_int_equal(label_written_init(&m, 0), 0);
    digest_of(da, &in, "uid-1");
    /* Converged (A's state found on the node, nothing written): any later
     * difference with the same plan is someone else's. */
    assert_int_equal(label_written_note(&m, "luna-0001", da, NULL), 0);
    assert_true(label_written_again(&m, "luna-0001", da, "1000"));
    assert_true(label_written_again(&m, "luna-0001", da, NULL));
    /* Only A's annotations rewritten (labels alike): still a reassertion,
     * with no label change to tell in an Event. */
    json_t *node = json_pack("{s:{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}}}", "metadata", "name",
                             "luna-0001", "uid", "uid-1", "labels", P "spine",
                             "S-0c42a1030055678a", P "leaf", "S-0c42a1030060ab50",
                             "annotations", REC, "forged", PROV, PROV_VALUE);
    topo_labeldiff *d = NULL;
    in.same_as_last_write = 1;
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_PATCH);
    assert_true(topo_labeldiff_reassert_only(d));
    assert_null(topo_labeldiff_message(d));
    topo_labeldiff_free(d);
    /* Converged: nothing to reassert, whatever the memory says. */
    json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"), REC,
                        json_string(P "leaf=S-0c42a1030060ab50," P "spine=S-0c42a1030055678a"));
    assert_int_equal(topo_labeldiff_compute(&d, &in, node, NULL), 0);
    assert_int_equal(topo_labeldiff_state_of(d), TOPO_LABELDIFF_CONVERGED);
    assert_false(topo_labeldiff_reassert_only(d));
    topo_labeldiff_free(d);
    json_decref(node);
    label_written_dispose(&m);
}

static void test_written__bounded(void **state)
{
    (void)state;
    label_written m;
    const char *d = "d0";
    assert_int_equal(label_written_init(&m, 3), 0);
    assert_int_equal(label_written_note(&m, "n1", d, "1"), 0);
    assert_int_equal(label_written_note(&m, "n2", d, "1"), 0);
    assert_int_equal(label_written_note(&m, "n3", d, "1"), 0);
    assert_int_equal(label_written_note(&m, "n4", d, "1"), 0); /* past max: not kept */
    assert_int_equal(label_written_count(&m), 3);
    assert_false(label_written_again(&m, "n4", d, "2"));
    /* Every node noted since: none forgotten, the marks cleared. */
    assert_int_equal(label_written_forget_unvisited(&m), 0);
    /* A round that visits n1 and n3 only: n2 left the plan. */
    assert_true(label_written_again(&m, "n3", d, "2"));
    assert_true(label_written_again(&m, "n1", d, "2"));
    assert_int_equal(label_written_forget_unvisited(&m), 1);
    assert_int_equal(label_written_count(&m), 2);
    assert_false(label_written_again(&m, "n2", d, "2"));
    assert_true(label_written_again(&m, "n1", d, "2"));
    assert_true(label_written_again(&m, "n3", d, "2"));
    /* Gone (404): forgotten; room for another. */
    label_written_forget(&m, "n1");
    label_written_forget(&m, "n1");
    assert_false(label_written_again(&m, "n1", d, "2"));
    assert_true(label_written_again(&m, "n3", d, "2"));
    assert_int_equal(label_written_note(&m, "n4", d, "1"), 0);
    assert_true(label_written_again(&m, "n4", d, "2"));
    assert_int_equal(label_written_count(&m), 2);
    /* A round visiting none: all forgotten. */
    assert_int_equal(label_written_forget_unvisited(&m), 0);
    assert_int_equal(label_written_forget_unvisited(&m), 2);
    assert_int_equal(label_written_count(&m), 0);
    label_written_dispose(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written__other_writer_rewrote_record),
        cmocka_unit_test(test_written__not_drift),
        cmocka_unit_test(test_written__found_in_place),
        cmocka_unit_test(test_written__bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
