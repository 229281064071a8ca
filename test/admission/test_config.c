/* Tests for lib/admission/config.c: every fixtures/webhook/good-*.yaml loads
 * into the values its table row expects; every fixtures/webhook/bad-*.yaml
 * fails with the message fragment its first line names ("# error: ...");
 * --levels; the Kubernetes syntax checks; limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

#include <cmocka.h>

#include "topo/admission_config.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"

static const char *source_dir(void)
{
    const char *d = getenv("TOPO_SOURCE_DIR");
    return d != NULL ? d : ".";
}

static void fixture_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/fixtures/webhook/%s", source_dir(), name);
}

static topo_admission_config *load_good(const char *name)
{
    char path[1024];
    topo_err err = TOPO_ERR_INIT;
    topo_admission_config *cfg = NULL;
    fixture_path(path, sizeof(path), name);
    if (topo_admission_config_load_file(&cfg, path, &err) != 0)
        fail_msg("%s: %s", name, err.text);
    return cfg;
}

static void test_config__good_full(void **state)
{
    (void)state;
    topo_admission_config *cfg = load_good("good-full.yaml");
    const topo_admission_topology_config *t;

    assert_int_equal(topo_admission_config_topology_count(cfg), 2);
    assert_int_equal(topo_admission_config_default_policy(cfg), TOPO_ADMISSION_POLICY_IGNORE);
    assert_string_equal(topo_admission_config_namespace_policy_label(cfg),
                        "example.com/placement-policy");
    assert_int_equal(topo_admission_config_reservation_ttl_s(cfg), 5400);
    assert_int_equal(topo_admission_config_ungate_interval_ms(cfg), 1500);
    assert_int_equal(topo_admission_config_unclaimed_ttl_s(cfg), 180);
    size_t n = 0;
    const topo_resource *caps = topo_admission_config_unclaimed_caps(cfg, 0, &n);
    assert_int_equal(n, 3);
    assert_string_equal(caps[0].name, "pods");
    assert_int_equal(caps[0].amount, 512);
    assert_string_equal(caps[1].name, "nvidia.com/gpu");
    assert_int_equal(caps[1].amount, 256);
    assert_string_equal(caps[2].name, "cpu");
    assert_int_equal(caps[2].amount, 500); /* millicores, as pods' requests */
    caps = topo_admission_config_unclaimed_caps(cfg, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(caps[0].amount, 4096);
    assert_int_equal(topo_admission_config_replace_fail_fast(cfg), 1);

    t = topo_admission_config_topology(cfg, 0);
    assert_non_null(t);
    assert_string_equal(t->name, "h100");
    assert_int_equal(t->nlevels, 3);
    assert_string_equal(t->levels[0], "topology.topo.io/block");
    assert_string_equal(t->levels[1], "topology.topo.io/rack");
    assert_string_equal(t->levels[2], "kubernetes.io/hostname");
    assert_int_equal(t->nnode_labels, 1);
    assert_string_equal(t->node_labels[0].key, "nvidia.com/gpu.product");
    assert_string_equal(t->node_labels[0].value, "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(t->policy, TOPO_ADMISSION_POLICY_DENY);
    assert_true(t->policy_set);

    t = topo_admission_config_topology(cfg, 1);
    assert_non_null(t);
    assert_string_equal(t->name, "gb200");
    assert_int_equal(t->nlevels, 2);
    assert_string_equal(t->levels[1], "topology.topo.io/nvlink");
    assert_int_equal(t->nnode_labels, 2);
    assert_string_equal(t->node_labels[1].key, "topology.topo.io/pool");
    assert_string_equal(t->node_labels[1].value, "");
    /* No policy of its own: the default one. */
    assert_int_equal(t->policy, TOPO_ADMISSION_POLICY_IGNORE);
    assert_false(t->policy_set);

    assert_null(topo_admission_config_topology(cfg, 2));
    assert_ptr_equal(topo_admission_config_find_topology(cfg, "gb200"), t);
    assert_null(topo_admission_config_find_topology(cfg, "a100"));
    topo_admission_config_free(cfg);
}

static void test_config__good_defaults(void **state)
{
    (void)state;
    topo_admission_config *cfg = load_good("good-minimal.yaml");
    const topo_admission_topology_config *t = topo_admission_config_topology(cfg, 0);

    assert_int_equal(topo_admission_config_topology_count(cfg), 1);
    assert_string_equal(t->name, "all");
    assert_int_equal(t->nlevels, 2);
    assert_int_equal(t->nnode_labels, 0);
    assert_int_equal(t->policy, TOPO_ADMISSION_POLICY_GATE);
    assert_int_equal(topo_admission_config_default_policy(cfg), TOPO_ADMISSION_POLICY_GATE);
    assert_string_equal(topo_admission_config_namespace_policy_label(cfg),
                        TOPO_ADMISSION_NAMESPACE_POLICY_LABEL);
    assert_int_equal(topo_admission_config_reservation_ttl_s(cfg), 600);
    assert_int_equal(topo_admission_config_ungate_interval_ms(cfg), 5000);
    assert_int_equal(topo_admission_config_unclaimed_ttl_s(cfg), 120);
    size_t n = 1;
    assert_null(topo_admission_config_unclaimed_caps(cfg, 0, &n));
    assert_int_equal(n, 0);
    /* a PodSet whose failed node has no replacement waits by default */
    assert_int_equal(topo_admission_config_replace_fail_fast(cfg), 0);
    topo_admission_config_free(cfg);

    cfg = load_good("good-no-namespace-label.yaml");
    assert_null(topo_admission_config_namespace_policy_label(cfg));
    assert_int_equal(topo_admission_config_reservation_ttl_s(cfg), 10);
    assert_int_equal(topo_admission_config_ungate_interval_ms(cfg), 600000);
    topo_admission_config_free(cfg);

    cfg = load_good("good-json.yaml");
    assert_string_equal(topo_admission_config_topology(cfg, 0)->levels[0],
                        "topology.topo.io/leaf");
    assert_int_equal(topo_admission_config_topology(cfg, 0)->policy, TOPO_ADMISSION_POLICY_DENY);
    topo_admission_config_free(cfg);
}

/* The fragment after "# error: " on the first line of a bad fixture. */
static int expected_fragment(char *buf, size_t size, const char *path)
{
    static const char tag[] = "# error: ";
    FILE *f = fopen(path, "r");
    if (f == NULL || fgets(buf, (int)size, f) == NULL) {
        if (f != NULL)
            fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    if (strncmp(buf, tag, sizeof(tag) - 1) != 0)
        return -1;
    memmove(buf, buf + sizeof(tag) - 1, strlen(buf + sizeof(tag) - 1) + 1);
    return 0;
}

/* packing: defaults (nvidia.com/gpu, the level above the hostname), a
 * one-level topology and one whose lowest level is not the hostname out
 * with a note; packing.level picks the topologies
 * that have it; off without the key, with enabled false and with --levels. */
static void test_config__packing(void **state)
{
    (void)state;
    topo_admission_config *cfg = load_good("good-packing.yaml");
    const topo_admission_packing *pk = topo_admission_config_packing(cfg);
    assert_non_null(pk);
    assert_int_equal(pk->nresources, 1);
    assert_string_equal(pk->resources[0], "nvidia.com/gpu");
    assert_int_equal(pk->mode, TOPO_ADMISSION_PACKING_REQUIRED);
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 2); /* rack */
    assert_int_equal(topo_admission_config_topology(cfg, 1)->npacking_levels, 0);
    assert_non_null(topo_admission_config_packing_note(cfg));
    assert_non_null(strstr(topo_admission_config_packing_note(cfg),
                           "topology cpu has one level (kubernetes.io/hostname)"));
    assert_int_equal(topo_admission_config_topology(cfg, 2)->npacking_levels, 0);
    assert_non_null(strstr(topo_admission_config_packing_note(cfg),
                           "topology gb200's lowest level is topology.topo.io/rack, not "
                           "kubernetes.io/hostname"));
    topo_admission_config_free(cfg);

    cfg = load_good("good-packing-level.yaml");
    pk = topo_admission_config_packing(cfg);
    assert_non_null(pk);
    assert_int_equal(pk->mode, TOPO_ADMISSION_PACKING_PREFERRED);
    assert_int_equal(pk->nresources, 2);
    assert_string_equal(pk->resources[1], "example.com/accel");
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 1); /* block */
    assert_int_equal(topo_admission_config_topology(cfg, 1)->npacking_levels, 1);
    assert_int_equal(topo_admission_config_topology(cfg, 2)->npacking_levels, 0);
    assert_non_null(strstr(topo_admission_config_packing_note(cfg),
                           "topology racks has no level topology.topo.io/block"));
    topo_admission_config_free(cfg);

    /* off: no key; enabled false (still read); --levels */
    static const char off[] = "topologies:\n"
                              "- name: a\n"
                              "  levels: [topology.topo.io/rack, kubernetes.io/hostname]\n"
                              "packing: {enabled: false, mode: required}\n";
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_admission_config_parse(&cfg, off, sizeof off - 1, "off.yaml", &err), 0);
    assert_null(topo_admission_config_packing(cfg));
    assert_null(topo_admission_config_packing_note(cfg));
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 0);
    topo_admission_config_free(cfg);
    /* off, over topologies none of which could take part (no hostname, one
     * level, a level that is a lowest): the webhook still starts */
    static const char off_none[] = "topologies:\n"
                                   "- name: r\n"
                                   "  levels: [topology.topo.io/block, topology.topo.io/rack]\n"
                                   "- name: h\n"
                                   "  levels: [kubernetes.io/hostname]\n"
                                   "packing: {enabled: false, level: topology.topo.io/rack}\n";
    assert_int_equal(
        topo_admission_config_parse(&cfg, off_none, sizeof off_none - 1, "off.yaml", &err), 0);
    assert_null(topo_admission_config_packing(cfg));
    topo_admission_config_free(cfg);
    /* level "" is the default, as the chart's value says */
    static const char empty_level[] =
        "topologies:\n"
        "- name: a\n"
        "  levels: [topology.topo.io/block, topology.topo.io/rack, kubernetes.io/hostname]\n"
        "packing: {enabled: true, level: \"\"}\n";
    assert_int_equal(topo_admission_config_parse(&cfg, empty_level, sizeof empty_level - 1,
                                                 "empty.yaml", &err),
                     0);
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 2);
    topo_admission_config_free(cfg);
    cfg = load_good("good-minimal.yaml");
    assert_null(topo_admission_config_packing(cfg));
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 0);
    topo_admission_config_free(cfg);
    assert_int_equal(topo_admission_config_from_levels(
                         &cfg, "topology.topo.io/rack,kubernetes.io/hostname", &err),
                     0);
    assert_null(topo_admission_config_packing(cfg));
    assert_int_equal(topo_admission_config_topology(cfg, 0)->npacking_levels, 0);
    topo_admission_config_free(cfg);
}

static void test_config__bad_fixtures(void **state)
{
    (void)state;
    char dir[1024], path[2048], want[1024];
    struct dirent *de;
    size_t checked = 0;
    DIR *d;

    snprintf(dir, sizeof(dir), "%s/fixtures/webhook", source_dir());
    d = opendir(dir);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        topo_admission_config *cfg = NULL;
        topo_err err = TOPO_ERR_INIT;
        int rc;
        if (strncmp(de->d_name, "bad-", 4) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (expected_fragment(want, sizeof(want), path) != 0)
            fail_msg("%s: first line is not \"# error: <fragment>\"", de->d_name);
        rc = topo_admission_config_load_file(&cfg, path, &err);
        if (rc != TOPO_EINVALID || cfg != NULL)
            fail_msg("%s: expected TOPO_EINVALID, got %d (%s)", de->d_name, rc, err.text);
        if (strstr(err.text, want) == NULL)
            fail_msg("%s:\n  message: %s\n  expected fragment: %s", de->d_name, err.text, want);
        /* Every message starts with the file it is about. */
        assert_memory_equal(err.text, path, strlen(path));
        checked++;
    }
    closedir(d);
    /* The directory holds one malformed case per rule; losing them must fail. */
    assert_true(checked >= 45);
}

/* Positions are recorded in the err, not just in the text. */
static void test_config__error_position(void **state)
{
    (void)state;
    static const char text[] = "topologies:\n"
                               "- name: a\n"
                               "  levels:\n"
                               "  - x.io/rack\n"
                               "  - x.io/rack\n";
    topo_admission_config *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_admission_config_parse(&cfg, text, strlen(text), "c.yaml", &err),
                     TOPO_EINVALID);
    assert_null(cfg);
    assert_string_equal(err.text, "c.yaml:5:5: topologies[0].levels[1]: duplicate level x.io/rack");
    assert_string_equal(err.source, "c.yaml");
    assert_int_equal(err.line, 5);
    assert_int_equal(err.column, 5);
}

static void test_config__limits(void **state)
{
    (void)state;
    topo_admission_config *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t big = TOPO_MAX_CONFIG_FILE + 1;
    char *text = malloc(big);
    char path[1024];
    assert_non_null(text);
    memset(text, ' ', big);
    assert_int_equal(topo_admission_config_parse(&cfg, text, big, "big.yaml", &err), TOPO_ELIMIT);
    assert_null(cfg);
    free(text);

    fixture_path(path, sizeof(path), "does-not-exist.yaml");
    assert_int_equal(topo_admission_config_load_file(&cfg, path, &err), TOPO_ENOTFOUND);
    assert_null(cfg);

    /* 17 topologies: one more than allowed. */
    char buf[4096] = "topologies:\n";
    for (int i = 0; i < 17; i++) {
        char line[64];
        snprintf(line, sizeof(line), "- {name: t%d, levels: [a/b]}\n", i);
        strncat(buf, line, sizeof(buf) - strlen(buf) - 1);
    }
    assert_int_equal(topo_admission_config_parse(&cfg, buf, strlen(buf), NULL, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "<input>:2:1: topologies: 17 entries (expected 1..16)"));
}

static void test_config__from_levels(void **state)
{
    (void)state;
    topo_admission_config *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    const topo_admission_topology_config *t;

    assert_int_equal(topo_admission_config_from_levels(
                         &cfg, "topology.topo.io/spine,topology.topo.io/rack,kubernetes.io/hostname",
                         &err),
                     0);
    assert_int_equal(topo_admission_config_topology_count(cfg), 1);
    t = topo_admission_config_topology(cfg, 0);
    assert_string_equal(t->name, "default");
    assert_int_equal(t->nlevels, 3);
    assert_string_equal(t->levels[0], "topology.topo.io/spine");
    assert_string_equal(t->levels[2], "kubernetes.io/hostname");
    assert_int_equal(t->nnode_labels, 0);
    assert_int_equal(t->policy, TOPO_ADMISSION_POLICY_GATE);
    assert_string_equal(topo_admission_config_namespace_policy_label(cfg),
                        TOPO_ADMISSION_NAMESPACE_POLICY_LABEL);
    assert_int_equal(topo_admission_config_reservation_ttl_s(cfg), 600);
    topo_admission_config_free(cfg);

    static const struct {
        const char *csv;
        const char *want;
    } bad[] = {
        {"", "--levels: required"},
        {"a/b,,c/d", "--levels: level 2 is empty"},
        {"a/b,", "--levels: level 2 is empty"},
        {"a/b,a/b", "--levels: level 2: duplicate level a/b"},
        {"kubernetes.io/hostname,a/b", "--levels: level 1: kubernetes.io/hostname must be the last"},
        {"a/b c", "--levels: level 1: invalid label key \"a/b c\""},
        {"l/a,l/b,l/c,l/d,l/e,l/f,l/g,l/h,l/i,l/j,l/k,l/l,l/m,l/n,l/o,l/p,l/q",
         "--levels: 17 levels (expected 1..16)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        topo_err_clear(&err);
        cfg = NULL;
        assert_int_equal(topo_admission_config_from_levels(&cfg, bad[i].csv, &err), TOPO_EINVALID);
        assert_null(cfg);
        if (strstr(err.text, bad[i].want) == NULL)
            fail_msg("--levels %s: got \"%s\", want \"%s\"", bad[i].csv, err.text, bad[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config__good_full),
        cmocka_unit_test(test_config__good_defaults),
        cmocka_unit_test(test_config__bad_fixtures),
        cmocka_unit_test(test_config__packing),
        cmocka_unit_test(test_config__error_position),
        cmocka_unit_test(test_config__limits),
        cmocka_unit_test(test_config__from_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
