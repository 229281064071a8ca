/* Tests for the PodSet key (lib/codec/podset_key.c): every kind, first that
 * applies, the keys admission has always placed by (the cache derives them
 * again to bind slots, so they must not change), and the counts refused
 * with the label or annotation named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topo/podset_key.h"

#define MAXKV 6

typedef struct key_case {
    const char *what;
    const char *name, *generate_name, *owner;
    topo_kv labels[MAXKV];
    topo_kv annotations[MAXKV];
    topo_podset_kind kind;
    const char *key; /* NULL: refused with error */
    const char *error;
} key_case;

#define GROUP "kueue.x-k8s.io/pod-group-name"
#define JS "jobset.sigs.k8s.io/jobset-name"
#define RJ "jobset.sigs.k8s.io/replicatedjob-name"
#define LWS "leaderworkerset.sigs.k8s.io/name"
#define LWSG "leaderworkerset.sigs.k8s.io/group-index"
#define LWSW "leaderworkerset.sigs.k8s.io/worker-index"
#define CUID "batch.kubernetes.io/controller-uid"
#define JOBN "batch.kubernetes.io/job-name"
#define IDX "batch.kubernetes.io/job-completion-index"
#define SIZE "topology.topo.io/podset-size"

static const key_case cases[] = {
    {"pod group by label, before everything", "p", NULL, "o",
     {{GROUP, "g1"}, {JS, "js"}, {RJ, "w"}, {CUID, "u"}}, {{SIZE, "4"}},
     TOPO_PODSET_POD_GROUP, "ns/pod-group/g1", NULL},
    {"pod group by annotation", NULL, "x-", NULL, {{0}}, {{GROUP, "g2"}},
     TOPO_PODSET_POD_GROUP, "ns/pod-group/g2", NULL},
    {"an empty group label hides the annotation", "p", NULL, NULL, {{GROUP, ""}},
     {{GROUP, "g"}}, TOPO_PODSET_POD, "ns/pod/p", NULL},
    {"jobset", NULL, "js-w-0-", NULL, {{JS, "js"}, {RJ, "w"}, {CUID, "u"}}, {{0}},
     TOPO_PODSET_JOBSET, "ns/jobset/js/w", NULL},
    {"lws leader", "l-0", NULL, NULL, {{LWS, "l"}, {LWSG, "0"}}, {{0}},
     TOPO_PODSET_LWS_LEADER, "ns/lws/l/0/leader", NULL},
    {"lws worker", "l-0-2", NULL, NULL, {{LWS, "l"}, {LWSG, "0"}, {LWSW, "2"}}, {{0}},
     TOPO_PODSET_LWS_WORKERS, "ns/lws/l/0/workers", NULL},
    {"job by uid", NULL, "train-", "o", {{CUID, "u1"}, {JOBN, "train"}}, {{SIZE, "2"}},
     TOPO_PODSET_JOB, "ns/job/u1", NULL},
    {"job by legacy uid", NULL, "train-", NULL, {{"controller-uid", "u2"}}, {{0}},
     TOPO_PODSET_JOB, "ns/job/u2", NULL},
    {"job by name", NULL, "train-", NULL, {{JOBN, "train"}}, {{0}}, TOPO_PODSET_JOB,
     "ns/job/train", NULL},
    {"job by legacy name", NULL, "train-", NULL, {{"job-name", "t2"}}, {{0}}, TOPO_PODSET_JOB,
     "ns/job/t2", NULL},
    {"owner with a size", "p", "rs-", "o1", {{0}}, {{SIZE, "3"}}, TOPO_PODSET_OWNER,
     "ns/owner/o1", NULL},
    {"generateName with a size", NULL, "gen-", NULL, {{0}}, {{SIZE, "3"}},
     TOPO_PODSET_GENERATE_NAME, "ns/generate-name/gen-", NULL},
    {"named pod", "solo", "gen-", "o1", {{IDX, "1"}}, {{0}}, TOPO_PODSET_POD, "ns/pod/solo",
     NULL},
    {"owner and rank, unnamed", NULL, "gen-", "o1", {{0}}, {{IDX, "5"}},
     TOPO_PODSET_OWNER_RANK, "ns/owner/o1/5", NULL},
    {"nothing else: the request", NULL, "gen-", NULL, {{0}}, {{0}}, TOPO_PODSET_REQUEST,
     "ns/request/req-1", NULL},
    {"owner without a rank: the request", "", "gen-", "o1", {{0}}, {{0}}, TOPO_PODSET_REQUEST,
     "ns/request/req-1", NULL},
    {"podset-size 0", "p", NULL, NULL, {{0}}, {{SIZE, "0"}}, 0, NULL,
     "annotation topology.topo.io/podset-size: \"0\" is not a count in 1..%"},
    {"completion index", "p", NULL, NULL, {{IDX, "-1"}}, {{0}}, 0, NULL,
     "batch.kubernetes.io/job-completion-index: \"-1\" is not a count in 0..%"},
    {"jobset replicas", "p", NULL, NULL, {{JS, "js"}, {RJ, "w"},
     {"jobset.sigs.k8s.io/replicatedjob-replicas", "x"}}, {{0}}, 0, NULL,
     "label jobset.sigs.k8s.io/replicatedjob-replicas: \"x\" is not a count in 1..%"},
    {"lws worker index", "p", NULL, NULL, {{LWS, "l"}, {LWSG, "0"}, {LWSW, "w"}}, {{0}}, 0,
     NULL, "label leaderworkerset.sigs.k8s.io/worker-index: \"w\" is not a count in 0..%"},
};

static size_t count(const topo_kv *kv)
{
    size_t n = 0;
    while (n < MAXKV && kv[n].key != NULL)
        n++;
    return n;
}

static void test_podset_key__kinds(void **state)
{
    (void)state;
    topo_pool *pool = topo_pool_create();
    assert_non_null(pool);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const key_case *c = &cases[i];
        topo_podset_pod in = {"ns",     c->name,      c->generate_name,
                              c->labels, count(c->labels), c->annotations,
                              count(c->annotations), c->owner, "req-1"};
        topo_podset_key k;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_podset_key_derive(&k, &in, pool, &err);
        if (c->key == NULL) {
            if (rc != TOPO_EINVALID)
                fail_msg("%s: got %d, want TOPO_EINVALID", c->what, rc);
            size_t prefix = strcspn(c->error, "%");
            if (strncmp(err.text, c->error, prefix) != 0)
                fail_msg("%s: %s", c->what, err.text);
            continue;
        }
        if (rc != 0)
            fail_msg("%s: %s", c->what, err.text);
        if (strcmp(k.key, c->key) != 0 || k.kind != c->kind)
            fail_msg("%s: got %s (kind %d), want %s (kind %d)", c->what, k.key, (int)k.kind,
                     c->key, (int)c->kind);
        assert_int_equal(topo_podset_key_in_namespace(k.key, "ns"), 1);
        assert_int_equal(topo_podset_key_is_request(k.key), c->kind == TOPO_PODSET_REQUEST);
    }
    topo_pool_free(pool);
}

static void test_podset_key__namespace(void **state)
{
    (void)state;
    assert_int_equal(topo_podset_key_in_namespace("team-a/job/u", "team-a"), 1);
    assert_int_equal(topo_podset_key_in_namespace("team-a/job/u", "team"), 0);
    assert_int_equal(topo_podset_key_in_namespace("team-ab/job/u", "team-a"), 0);
    assert_int_equal(topo_podset_key_in_namespace("team-a", "team-a"), 0);
    assert_int_equal(topo_podset_key_in_namespace("/job/u", ""), 0);
    assert_int_equal(topo_podset_key_in_namespace(NULL, "team-a"), 0);
    assert_int_equal(topo_podset_key_in_namespace("team-a/x", NULL), 0);
    assert_int_equal(topo_podset_key_is_request("ns/request/r"), 1);
    assert_int_equal(topo_podset_key_is_request("ns/pod-group/request/r"), 0);
    assert_int_equal(topo_podset_key_is_request("request/r"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_podset_key__kinds),
        cmocka_unit_test(test_podset_key__namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
