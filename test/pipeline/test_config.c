/* topo-sync's configuration file: every field of a full file read into the
 * settings, the defaults without a file, and each malformed file in
 * fixtures/sync refused with file:line:column and the field's path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/sync.h"
#include "topo/syncconfig.h"

static void fixture(char *out, size_t size, const char *name)
{
    const char *dir = getenv("TOPO_SOURCE_DIR");
    snprintf(out, size, "%s/fixtures/sync/%s", dir ? dir : ".", name);
}

static void test_config__valid(void **state)
{
    (void)state;
    char path[1024];
    fixture(path, sizeof path, "valid.yaml");
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_syncconfig_load_file(&cfg, path, &err) != 0)
        fail_msg("%s", err.text);
    const topo_sync_settings *s = topo_syncconfig_settings(cfg);

    assert_string_equal(s->plan.prefix, "topology.example.com/");
    assert_int_equal(s->plan.nlevels, 4);
    assert_int_equal(s->plan.levels[0], TOPO_LEVEL_DATACENTER);
    assert_int_equal(s->plan.levels[3], TOPO_LEVEL_NVLINK);
    assert_int_equal(s->plan.incomplete, TOPO_PLAN_FALLBACK);
    assert_string_equal(s->plan.fallback, "none");
    assert_int_equal(s->plan.nprecedence[TOPO_LEVEL_LEAF], 3);
    assert_string_equal(s->plan.precedence[TOPO_LEVEL_LEAF][0], "ufm");
    assert_string_equal(s->plan.precedence[TOPO_LEVEL_DATACENTER][0], "netbox");
    assert_null(s->plan.names);
    assert_true(s->plan.topograph);

    assert_true(s->names.strip_domain);
    assert_true(s->names.lowercase);
    assert_string_equal(s->names.pattern, "gpu([0-9]+)");
    assert_string_equal(s->names.replacement, "node-\\1");
    assert_string_equal(s->planes.exclude_switch, "STORAGE");
    assert_string_equal(s->planes.exclude_port, "^eth");
    assert_null(s->planes.include_switch);

    assert_int_equal(s->nibnetdiscover, 2);
    assert_string_equal(s->ibnetdiscover[0].file, "su1.txt");
    assert_string_equal(s->ibnetdiscover[0].node_name_map, "su1.map");
    assert_null(s->ibnetdiscover[1].node_name_map);
    assert_string_equal(s->lldp_dir, "/var/run/lldp");
    assert_string_equal(s->ufm_systems_file, "systems.json");
    assert_string_equal(s->ufm_links_file, "links.json");

    const topo_sync_netbox_files *f = &s->netbox_files;
    assert_int_equal(f->nfiles[TOPO_NETBOX_DEVICES], 2);
    assert_string_equal(f->files[TOPO_NETBOX_DEVICES][1], "devices-2.json");
    assert_string_equal(f->files[TOPO_NETBOX_RACKS][0], "racks.json");
    assert_string_equal(f->files[TOPO_NETBOX_SITES][0], "sites.json");
    assert_string_equal(f->files[TOPO_NETBOX_INTERFACES][0], "interfaces.json");
    assert_string_equal(f->files[TOPO_NETBOX_CABLES][0], "cables.json");
    assert_int_equal(s->netbox.nswitch_roles, 2);
    assert_string_equal(s->netbox.switch_roles[1], "spine");
    assert_string_equal(s->netbox.host_roles[0], "gpu-server");
    assert_string_equal(s->netbox.sites[0], "dc1");
    assert_string_equal(s->netbox.tags[0], "k8s");
    assert_string_equal(s->netbox.nvlink_field, "nvl_domain");

    assert_string_equal(s->nodes_file, "nodes.json");
    assert_false(s->nvlink_hostname_fallback);

    assert_string_equal(s->kueue.topology_name, "gpus");
    assert_string_equal(s->kueue.api_version, "kueue.x-k8s.io/v1beta1");
    assert_int_equal(s->kueue.nflavor_labels, 2);
    assert_string_equal(s->kueue.flavor_labels[0].key, "nvidia.com/gpu.present");
    assert_string_equal(s->kueue.flavor_labels[0].value, "true");
    assert_string_equal(s->kueue.flavor_labels[1].key, "node-pool");
    topo_syncconfig_free(cfg);
}

static void test_config__valid_http(void **state)
{
    (void)state;
    char path[1024];
    fixture(path, sizeof path, "valid-http.yaml");
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_syncconfig_load_file(&cfg, path, &err) != 0)
        fail_msg("%s", err.text);
    const topo_sync_settings *s = topo_syncconfig_settings(cfg);
    const topo_fetch_opts *nb = &s->netbox_http, *ufm = &s->ufm_http, *lldp = &s->lldp_http;
    assert_string_equal(nb->url, "https://netbox.example.com/");
    assert_string_equal(nb->token_file, "/var/run/secrets/netbox/token");
    assert_string_equal(nb->token_scheme, "Bearer");
    assert_string_equal(nb->ca_file, "/etc/topo/netbox-ca.pem");
    assert_int_equal(nb->page_size, 500);
    assert_int_equal(nb->netbox_lists, TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_DEVICES) |
                                           TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_RACKS) |
                                           TOPO_FETCH_NETBOX_LIST(TOPO_NETBOX_CABLES));
    assert_int_equal(nb->timeout_ms, 20000);
    assert_int_equal(nb->retries, 5);
    assert_int_equal(nb->backoff_ms, 250);
    assert_int_equal(nb->max_response, 33554432);
    assert_null(nb->netbox); /* the run passes s->netbox */
    assert_int_equal(s->netbox_files.nfiles[TOPO_NETBOX_DEVICES], 0);
    assert_string_equal(s->netbox.host_roles[0], "gpu-server");
    assert_string_equal(ufm->url, "https://ufm.example.com");
    assert_string_equal(ufm->username_file, "/var/run/secrets/ufm/username");
    assert_string_equal(ufm->password_file, "/var/run/secrets/ufm/password");
    assert_null(ufm->token_file);
    assert_true(ufm->insecure_skip_verify);
    assert_int_equal(ufm->retries, -1); /* retries: 0 is none */
    assert_int_equal(ufm->timeout_ms, 0);
    assert_null(s->ufm_systems_file);
    assert_string_equal(lldp->url, "http://lldp-collector.topo.svc:8080/v1/neighbours?format=json");
    assert_string_equal(lldp->token_file, "/var/run/secrets/lldp/token");
    assert_int_equal(lldp->retries, 0); /* the default */
    assert_null(s->lldp_dir);
    topo_syncconfig_free(cfg);
}

static void test_config__defaults(void **state)
{
    (void)state;
    topo_err err = TOPO_ERR_INIT;
    topo_syncconfig *cfg = NULL, *empty = NULL;
    assert_int_equal(topo_syncconfig_default(&cfg, &err), 0);
    assert_int_equal(topo_syncconfig_parse(&empty, "", 0, "empty.yaml", &err), 0);
    const topo_syncconfig *both[] = {cfg, empty};
    for (size_t i = 0; i < 2; i++) {
        const topo_sync_settings *s = topo_syncconfig_settings((topo_syncconfig *)both[i]);
        assert_null(s->plan.prefix);
        assert_int_equal(s->plan.nlevels, 0);
        assert_int_equal(s->plan.incomplete, TOPO_PLAN_LEAVE_OUT);
        assert_int_equal(s->nibnetdiscover, 0);
        assert_null(s->lldp_dir);
        assert_null(s->nodes_file);
        assert_int_equal(s->netbox_files.nfiles[TOPO_NETBOX_DEVICES], 0);
        assert_null(s->netbox_http.url);
        assert_null(s->ufm_http.url);
        assert_null(s->lldp_http.url);
        assert_true(s->nvlink_hostname_fallback);
        assert_true(s->names.lowercase); /* a node name has no upper case */
        assert_false(s->names.strip_domain);
        assert_false(s->plan.topograph);
        assert_int_equal(s->kueue.nflavor_labels, 0);
        assert_null(s->kueue.topology_name);
    }
    topo_syncconfig_free(cfg);
    topo_syncconfig_free(empty);
    topo_syncconfig_free(NULL);
}

/* The controller's nodes come from the API server: sources.nodes without a
 * file only sets how they are read (it was refused: "file: required"). */
static void test_config__nodes_without_file(void **state)
{
    (void)state;
    static const char yaml[] = "sources:\n  nodes:\n    nvlinkHostnameFallback: false\n";
    topo_err err = TOPO_ERR_INIT;
    topo_syncconfig *cfg = NULL;
    if (topo_syncconfig_parse(&cfg, yaml, sizeof yaml - 1, "live.yaml", &err) != 0)
        fail_msg("%s", err.text);
    const topo_sync_settings *s = topo_syncconfig_settings(cfg);
    assert_null(s->nodes_file);
    assert_false(s->nvlink_hostname_fallback);
    topo_syncconfig_free(cfg);
}

/* Each message starts with the file, line and column and names the field. */
static const struct {
    const char *file;
    const char *where; /* ":line:column: " after the path */
    const char *field;
} bad[] = {
    {"bad-level.yaml", ":2:30: ", "labels.levels[2]"},
    {"bad-unknown-key.yaml", ":4:15: ", "sources.ufm.linkFile"},
    {"bad-netbox-files.yaml", ":4:16: ", "sources.netbox.files.devices"},
    {"bad-netbox-empty-role.yaml", ":5:25: ", "sources.netbox.switchRoles[1]"},
    {"bad-netbox-no-devices.yaml", ":4:7: ", "sources.netbox.files.devices"},
    {"bad-fabric-regex.yaml", ":2:16: ", "fabric.includePort"},
    {"bad-fabric-regex-exponential.yaml", ":2:18: ", "fabric.excludeSwitch"},
    {"bad-name-regex-exponential.yaml", ":2:12: ", "nodeNames.pattern"},
    {"bad-ibnetdiscover.yaml", ":3:7: ", "sources.ibnetdiscover[0]"},
    {"bad-incomplete.yaml", ":2:15: ", "labels.incomplete"},
    {"bad-prefix.yaml", ":2:11: ", "labels.prefix: \"node-role.kubernetes.io\": must end in '/'"},
    {"bad-bool.yaml", ":4:29: ", "sources.nodes.nvlinkHostnameFallback"},
    {"bad-syntax.yaml", ":3:1: ", ""},
    {"bad-second-document.yaml", ":3:1: ",
     "a second YAML document: one configuration document expected"},
    {"bad-level-order.yaml", ":2:18: ",
     "labels.levels[1]: rack before datacenter: levels go coarsest first (datacenter, spine, "
     "leaf, rack, nvlink, hostname)"},
    {"bad-netbox-url-and-files.yaml", ":5:10: ", "sources.netbox: url and files exclude"},
    {"bad-ufm-no-credentials.yaml", ":3:10: ", "sources.ufm: credentials required"},
    {"bad-netbox-timeout.yaml", ":4:14: ", "sources.netbox.timeout: expected a duration"},
    {"bad-netbox-lists.yaml", ":4:22: ", "sources.netbox.lists[1]: expected one of"},
    {"bad-lldp-url-userinfo.yaml", ":3:10: ", "sources.lldp: url: user information"},
    {"bad-ufm-token-scheme.yaml", ":5:18: ", "sources.ufm.tokenScheme: unknown field"},
    {"bad-flavor-label.yaml", ":4:7: ", "exports.kueue.flavorLabels"},
    {"bad-kueue-api.yaml", ":3:17: ", "exports.kueue.apiVersion"},
    {"bad-refresh-source.yaml", ":4:10: ", "refresh.sources.gpu: unknown field"},
    {"bad-refresh-interval.yaml", ":2:13: ", "refresh.interval"},
};

static void test_config__errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[1024], want[1100];
        fixture(path, sizeof path, bad[i].file);
        topo_syncconfig *cfg = NULL;
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_syncconfig_load_file(&cfg, path, &err);
        if (rc != TOPO_EINVALID)
            fail_msg("%s: rc %d, %s", bad[i].file, rc, err.text);
        assert_null(cfg);
        snprintf(want, sizeof want, "%s%s%s", path, bad[i].where, bad[i].field);
        if (strncmp(err.text, want, strlen(want)) != 0)
            fail_msg("%s: got \"%s\", want it to start with \"%s\"", bad[i].file, err.text, want);
    }
}

/* labels.prefix: a DNS subdomain and exactly one '/', in no other owner's
 * namespace (issue 26 §2), refused at its line and column. */
static void test_config__prefix_refused(void **state)
{
    (void)state;
    static const struct {
        const char *prefix, *want;
    } rows[] = {
        {"t", "p.yaml:2:11: labels.prefix: \"t\": must end in '/'"},
        {"kubernetes.io/", "p.yaml:2:11: labels.prefix: \"kubernetes.io/\": is under "
                           "kubernetes.io: Kubernetes reserves it"},
        {"node.kubernetes.io/", "p.yaml:2:11: labels.prefix: \"node.kubernetes.io/\": is under "
                                "kubernetes.io"},
        {"\"a//\"", "p.yaml:2:11: labels.prefix: \"a//\": must be a DNS subdomain followed by "
                    "exactly one '/'"},
        {"a/b/", "p.yaml:2:11: labels.prefix: \"a/b/\": must be a DNS subdomain"},
        {"kueue.x-k8s.io/", "p.yaml:2:11: labels.prefix: \"kueue.x-k8s.io/\": is under x-k8s.io"},
        {"nvidia.com/", "p.yaml:2:11: labels.prefix: \"nvidia.com/\": is under nvidia.com"},
        {"accelerator.topograph.run/", "p.yaml:2:11: labels.prefix: "
                                       "\"accelerator.topograph.run/\": is under topograph.run"},
        {"eks.amazonaws.com/", "p.yaml:2:11: labels.prefix: \"eks.amazonaws.com/\": is under "
                               "amazonaws.com"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char text[200];
        int n = snprintf(text, sizeof text, "labels:\n  prefix: %s\n", rows[i].prefix);
        topo_err err = TOPO_ERR_INIT;
        topo_syncconfig *cfg = NULL;
        if (topo_syncconfig_parse(&cfg, text, (size_t)n, "p.yaml", &err) != TOPO_EINVALID)
            fail_msg("%s accepted", rows[i].prefix);
        assert_null(cfg);
        if (strncmp(err.text, rows[i].want, strlen(rows[i].want)) != 0)
            fail_msg("got \"%s\", want it to start with \"%s\"", err.text, rows[i].want);
    }
    /* A prefix of one's own domain is taken. */
    static const char ok[] = "labels:\n  prefix: topology.example.com/\n";
    topo_err err = TOPO_ERR_INIT;
    topo_syncconfig *cfg = NULL;
    assert_int_equal(topo_syncconfig_parse(&cfg, ok, sizeof ok - 1, "p.yaml", &err), 0);
    assert_string_equal(topo_syncconfig_settings(cfg)->plan.prefix, "topology.example.com/");
    topo_syncconfig_free(cfg);
}

/* The controller's refresh: a common interval, one per source, staleness. */
static void test_config__refresh(void **state)
{
    (void)state;
    static const char text[] = "refresh:\n"
                               "  interval: 2m\n"
                               "  staleAfter: 1h30m\n"
                               "  minHostsPercent: 75\n"
                               "  sources:\n"
                               "    ufm: 30s\n"
                               "    netbox: 6h\n";
    topo_err err = TOPO_ERR_INIT;
    topo_syncconfig *cfg = NULL;
    assert_int_equal(topo_syncconfig_parse(&cfg, text, sizeof text - 1, "r.yaml", &err), 0);
    const topo_sync_settings *s = topo_syncconfig_settings(cfg);
    assert_int_equal(s->refresh_ms, 120000);
    assert_int_equal(s->stale_after_ms, 5400000);
    assert_int_equal(s->source_refresh_ms[TOPO_SYNC_UFM], 30000);
    assert_int_equal(s->source_refresh_ms[TOPO_SYNC_NETBOX], 6 * 3600 * 1000);
    assert_int_equal(s->source_refresh_ms[TOPO_SYNC_IBNETDISCOVER], 0);
    assert_int_equal(s->source_refresh_ms[TOPO_SYNC_GPU], 0);
    assert_int_equal(s->min_hosts_percent, 75);
    topo_syncconfig_free(cfg);
    /* not set: -1 (the flag's default, 90, applies); 0 holds nothing; above 100 refused */
    assert_int_equal(topo_syncconfig_parse(&cfg, "refresh: {}\n", 12, "r.yaml", &err), 0);
    assert_int_equal(topo_syncconfig_settings(cfg)->min_hosts_percent, -1);
    topo_syncconfig_free(cfg);
    static const char zero[] = "refresh:\n  minHostsPercent: 0\n";
    assert_int_equal(topo_syncconfig_parse(&cfg, zero, sizeof zero - 1, "r.yaml", &err), 0);
    assert_int_equal(topo_syncconfig_settings(cfg)->min_hosts_percent, 0);
    topo_syncconfig_free(cfg);
    static const char over[] = "refresh:\n  minHostsPercent: 101\n";
    assert_int_equal(topo_syncconfig_parse(&cfg, over, sizeof over - 1, "r.yaml", &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "refresh.minHostsPercent: 101 is out of range (0..100)"));
}

static void test_config__limits(void **state)
{
    (void)state;
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_syncconfig_parse(&cfg, "x", (size_t)TOPO_MAX_SYNC_CONFIG + 1, "big.yaml",
                                           &err),
                     TOPO_ELIMIT);
    assert_non_null(strstr(err.text, "big.yaml"));
    assert_int_equal(topo_syncconfig_load_file(&cfg, "/nonexistent/sync.yaml", &err),
                     TOPO_ENOTFOUND);
    assert_null(cfg);
    const char *list = "- a\n- b\n";
    assert_int_equal(topo_syncconfig_parse(&cfg, list, strlen(list), "list.yaml", &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "list.yaml:1:1: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config__valid),
        cmocka_unit_test(test_config__valid_http),
        cmocka_unit_test(test_config__defaults),
        cmocka_unit_test(test_config__nodes_without_file),
        cmocka_unit_test(test_config__errors),
        cmocka_unit_test(test_config__prefix_refused),
        cmocka_unit_test(test_config__refresh),
        cmocka_unit_test(test_config__limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
