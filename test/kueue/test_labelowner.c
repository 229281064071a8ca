/* Which label keys topo may own (topo/labelowner.h): the owned-prefix rule
 * with its reasons (shape, DNS subdomain, every other owner's namespace and
 * its subdomains), whole-prefix ownership (topology.topo.io/ never owns
 * topology.topo.io.evil/x), and exactly topograph's keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "topo/labelowner.h"

static void test_labelowner__prefix_valid(void **state)
{
    (void)state;
    char long_ok[260], long_bad[260];
    /* 253 characters before '/': the longest DNS subdomain. */
    memset(long_ok, 'a', 253);
    for (int i = 63; i < 253; i += 64)
        long_ok[i] = '.';
    strcpy(long_ok + 253, "/");
    memcpy(long_bad, long_ok, 253);
    strcpy(long_bad + 253, "a/");
    const struct {
        const char *prefix;
        const char *why; /* a part of the reason; NULL: accepted */
    } rows[] = {
        {"topology.topo.io/", NULL},
        {"example.com/", NULL},
        {"a/", NULL},
        {"topo-1.example.com/", NULL},
        {"kubernetes.io.example.com/", NULL}, /* kubernetes.io is not its parent */
        {"mykubernetes.io/", NULL},
        {"x-nvidia.com/", NULL},
        {"k8s.io.evil/", NULL},
        {long_ok, NULL},
        {NULL, "must not be empty"},
        {"", "must not be empty"},
        {"t", "must end in '/'"},
        {"node-role.kubernetes.io", "must end in '/'"},
        {"topology.topo.io", "must end in '/'"},
        {"a//", "exactly one '/'"},
        {"a/b/", "exactly one '/'"},
        {"a/b", "exactly one '/'"},
        {"/x", "exactly one '/'"},
        {"/", "1 to 253 characters"},
        {long_bad, "1 to 253 characters"},
        {"Topology.topo.io/", "lowercase RFC 1123"},
        {"topo..io/", "lowercase RFC 1123"},
        {"-topo.io/", "lowercase RFC 1123"},
        {"topo_io/", "lowercase RFC 1123"},
        {"kubernetes.io/", "is under kubernetes.io: Kubernetes reserves"},
        {"node.kubernetes.io/", "is under kubernetes.io"},
        {"node-role.kubernetes.io/", "is under kubernetes.io"},
        {"feature.node.kubernetes.io/", "is under kubernetes.io"},
        {"topology.kubernetes.io/", "is under kubernetes.io"},
        {"k8s.io/", "is under k8s.io"},
        {"x.k8s.io/", "is under k8s.io"},
        {"kueue.x-k8s.io/", "is under x-k8s.io"},
        {"nvidia.com/", "is under nvidia.com: NVIDIA's GPU Feature Discovery"},
        {"nvidia.com/", "is under nvidia.com"},
        {"feature.nvidia.com/", "is under nvidia.com"},
        {"fabric.topograph.run/", "is under topograph.run"},
        {"accelerator.topograph.run/", "is under topograph.run"},
        {"amd.com/", "is under amd.com"},
        {"gpu.intel.com/", "is under intel.com"},
        {"cloud.google.com/", "is under cloud.google.com"},
        {"eks.amazonaws.com/", "is under amazonaws.com"},
        {"karpenter.sh/", "is under karpenter.sh"},
        {"karpenter.k8s.aws/", "is under k8s.aws"},
        {"kubernetes.azure.com/", "is under azure.com"},
        {"node.openshift.io/", "is under openshift.io"},
        {"oci.oraclecloud.com/", "is under oraclecloud.com"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char why[512] = "";
        int ok = topo_labelowner_prefix_valid(rows[i].prefix, why, sizeof why);
        if (rows[i].why == NULL && !ok)
            fail_msg("\"%s\" refused: %s", rows[i].prefix, why);
        if (rows[i].why != NULL && (ok || strstr(why, rows[i].why) == NULL))
            fail_msg("\"%s\": %s, \"%s\" does not contain \"%s\"",
                     rows[i].prefix ? rows[i].prefix : "(null)", ok ? "accepted" : "refused", why,
                     rows[i].why);
    }
    /* why may be NULL or too short: the answer stays the same. */
    assert_false(topo_labelowner_prefix_valid("kubernetes.io/", NULL, 0));
    char tiny[4];
    assert_false(topo_labelowner_prefix_valid("t", tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), 3);
    assert_true(topo_labelowner_prefix_valid("topology.topo.io/", NULL, 0));
}

static void test_labelowner__under(void **state)
{
    (void)state;
    const struct {
        const char *key, *prefix;
        int under;
    } rows[] = {
        {"topology.topo.io/rack", "topology.topo.io/", 1},
        {"topology.topo.io/applied-labels", "topology.topo.io/", 1},
        {"topology.topo.io.evil/x", "topology.topo.io/", 0},
        {"topology.topo.iox/y", "topology.topo.io/", 0},
        {"topology.topo.io/", "topology.topo.io/", 0},
        {"topology.topo.io/a/b", "topology.topo.io/", 0},
        {"topology.topo.io", "topology.topo.io/", 0},
        {"sub.topology.topo.io/rack", "topology.topo.io/", 0},
        /* A prefix that is not "<domain>/" owns nothing at all. */
        {"team", "t", 0},
        {"topology.topo.io/rack", "topology.topo.io", 0},
        {"node-role.kubernetes.io/worker", "node-role.kubernetes.io", 0},
        {"a//x", "a//", 0},
        {"a/b/x", "a/b/", 0},
        {"x", "/", 0},
        {"/x", "/", 0},
        {"x", "", 0},
        {NULL, "topology.topo.io/", 0},
        {"topology.topo.io/rack", NULL, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (topo_labelowner_under(rows[i].key, rows[i].prefix) != rows[i].under)
            fail_msg("row %zu: \"%s\" under \"%s\": expected %d", i,
                     rows[i].key ? rows[i].key : "(null)",
                     rows[i].prefix ? rows[i].prefix : "(null)", rows[i].under);
}

static void test_labelowner__topograph_key(void **state)
{
    (void)state;
    const struct {
        const char *key;
        int ours;
    } rows[] = {
        {"fabric.topograph.run/tier-0", 1},
        {"fabric.topograph.run/tier-1", 1},
        {"fabric.topograph.run/tier-12", 1},
        {TOPO_LABELOWNER_TOPOGRAPH_DOMAIN, 1},
        {TOPO_LABELOWNER_TOPOGRAPH_SUBDOMAIN, 1},
        {"fabric.topograph.run/tier-", 0},
        {"fabric.topograph.run/tier-0x", 0},
        {"fabric.topograph.run/tier--1", 0},
        {"fabric.topograph.run/other", 0},
        {"fabric.topograph.run/tier", 0},
        {"accelerator.topograph.run/other", 0},
        {"accelerator.topograph.run/domain2", 0},
        {"x.fabric.topograph.run/tier-0", 0},
        {"kubernetes.io/hostname", 0},
        {NULL, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (topo_labelowner_topograph_key(rows[i].key) != rows[i].ours)
            fail_msg("\"%s\": expected %d", rows[i].key ? rows[i].key : "(null)", rows[i].ours);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labelowner__prefix_valid),
        cmocka_unit_test(test_labelowner__under),
        cmocka_unit_test(test_labelowner__topograph_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
