/* The sizes and times of topo-sync's last good facts (topo/sync_facts.h)
 * for a generated 10,000-node cluster, three sources of it saved twice and
 * loaded back equal (docs/sync.md quotes the figures this prints). A
 * volume case: the sanitizer stage leaves it out (test/CMakeLists.txt). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/source_fixture.h"
#include "pipeline/cache_fixture.h"
#include "topo/facts_json.h"
#include "topo/sync_facts.h"

static topo_facts *load(fx *f, const char *source)
{
    topo_facts *got = NULL;
    topo_err err = TOPO_ERR_INIT;
    must(topo_sync_facts_load(&got, NULL, f->cache, source, &err), &err);
    return got;
}

#define RAILS 8
#define HOSTS_PER_LEAF 32
#define SPINES_PER_RAIL 16

static void add(int rc, const topo_err *err)
{
    must(rc, err);
}

/* What ibnetdiscover or UFM report for a rail-optimised fabric: every host
 * with RAILS adapters (mlx5_0...), each on the leaf of its rail that serves
 * its group of HOSTS_PER_LEAF hosts, each leaf cabled to the
 * SPINES_PER_RAIL spines of its rail; switch ids are GUIDs, names node
 * descriptions. */
static topo_facts *gen_fabric(size_t hosts)
{
    topo_facts *f = new_facts("ibnetdiscover");
    topo_err err = TOPO_ERR_INIT;
    size_t leaves = (hosts + HOSTS_PER_LEAF - 1) / HOSTS_PER_LEAF;
    char id[64], name[96], peer[64], host[32], port[16];
    unsigned guid = 0;
    for (int r = 0; r < RAILS; r++)
        for (int s = 0; s < SPINES_PER_RAIL; s++) {
            snprintf(id, sizeof(id), "S-b8599f0300%06x", guid++);
            snprintf(name, sizeof(name), "MF0;spine-r%d-%02d:MQM9790/U1", r, s);
            add(topo_facts_add_switch(f, id, name, NULL, &err), &err);
        }
    for (int r = 0; r < RAILS; r++)
        for (size_t l = 0; l < leaves; l++) {
            snprintf(id, sizeof(id), "S-b8599f0300%06x", guid++);
            snprintf(name, sizeof(name), "MF0;leaf-r%d-%03zu:MQM9790/U1", r, l);
            add(topo_facts_add_switch(f, id, name, NULL, &err), &err);
            for (int s = 0; s < SPINES_PER_RAIL; s++) {
                snprintf(peer, sizeof(peer), "S-b8599f0300%06x",
                         (unsigned)(r * SPINES_PER_RAIL + s));
                add(topo_facts_add_switch_link(f, id, peer, &err), &err);
            }
        }
    for (size_t h = 0; h < hosts; h++)
        for (int r = 0; r < RAILS; r++) {
            snprintf(host, sizeof(host), "gpu-%05zu", h);
            snprintf(port, sizeof(port), "mlx5_%d", r);
            snprintf(id, sizeof(id), "S-b8599f0300%06x",
                     (unsigned)(RAILS * SPINES_PER_RAIL + (size_t)r * leaves + h / HOSTS_PER_LEAF));
            add(topo_facts_add_host_link(f, host, port, id, &err), &err);
        }
    return f;
}

/* What NetBox states: site, rack (4 hosts a rack) and an NVLink domain (18
 * hosts a domain) for every host. */
static topo_facts *gen_netbox(size_t hosts)
{
    topo_facts *f = new_facts("netbox");
    topo_err err = TOPO_ERR_INIT;
    char host[32], rack[32], nvl[32];
    for (size_t h = 0; h < hosts; h++) {
        snprintf(host, sizeof(host), "gpu-%05zu", h);
        snprintf(rack, sizeof(rack), "R%04zu", h / 4);
        snprintf(nvl, sizeof(nvl), "nvl-%04zu", h / 18);
        add(topo_facts_set_level(f, host, TOPO_LEVEL_DATACENTER, "dc-west", &err), &err);
        add(topo_facts_set_level(f, host, TOPO_LEVEL_RACK, rack, &err), &err);
        add(topo_facts_set_level(f, host, TOPO_LEVEL_NVLINK, nvl, &err), &err);
    }
    return f;
}

/* What GPU Feature Discovery's clique labels give: 18-node NVL72 domains. */
static topo_facts *gen_gpu(size_t hosts)
{
    topo_facts *f = new_facts("gpu");
    topo_err err = TOPO_ERR_INIT;
    char host[32], clique[64];
    for (size_t h = 0; h < hosts; h++) {
        snprintf(host, sizeof(host), "gpu-%05zu", h);
        snprintf(clique, sizeof(clique), "7b968a6d-c8aa-45e1-9e07-%012zx.%zu", h / 288,
                 (h / 18) % 16);
        add(topo_facts_set_level(f, host, TOPO_LEVEL_NVLINK, clique, &err), &err);
    }
    return f;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static void test_facts_volume__ten_thousand_nodes(void **state)
{
    fx *f = *state;
    topo_facts *(*const gen[])(size_t) = {gen_fabric, gen_netbox, gen_gpu};
    /* Ceilings well above today's figures: a format change that bloats the
     * document shows here. */
    static const size_t ceiling[] = {8u << 20, 2u << 20, 2u << 20};
    topo_err err = TOPO_ERR_INIT;
    size_t total = 0;
    char wal[400];

    open_cache(f);
    for (size_t g = 0; g < sizeof(gen) / sizeof(gen[0]); g++) {
        struct timespec t0;
        topo_facts *facts = gen[g](10000), *got = NULL;
        char *doc = NULL;
        size_t len = 0;
        double enc_ms, save_ms, load_ms;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        must(topo_facts_json_encode(&doc, &len, facts, &err), &err);
        enc_ms = ms_since(&t0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        must(topo_sync_facts_save(f->cache, facts, 1000, NULL, &err), &err);
        save_ms = ms_since(&t0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        got = load(f, topo_facts_source(facts));
        load_ms = ms_since(&t0);
        assert_facts_equal(facts, got);
        print_message("10k nodes, %-13s %6zu hosts %5zu switches %6zu cables: %8zu bytes; "
                      "encode %.0f ms, save %.0f ms, load %.0f ms\n",
                      topo_facts_source(facts), topo_facts_host_count(facts),
                      topo_facts_switch_count(facts), topo_facts_link_count(facts), len, enc_ms,
                      save_ms, load_ms);
        assert_true(len < ceiling[g]);
        total += len;
        free(doc);
        topo_facts_free(got);
        topo_facts_free(facts);
    }
    /* A second round replaces every document: the file reuses its pages. */
    for (size_t g = 0; g < sizeof(gen) / sizeof(gen[0]); g++) {
        topo_facts *facts = gen[g](10000);
        must(topo_sync_facts_save(f->cache, facts, 2000, NULL, &err), &err);
        topo_facts_free(facts);
    }
    must(topo_cache_checkpoint(f->cache, NULL, &err), &err);
    file_path(wal, sizeof(wal), f, "-wal");
    print_message("10k nodes, three sources: %zu bytes of documents; cache file %lld bytes, "
                  "WAL %lld bytes\n", total, file_size(f->path), file_size(wal));
    assert_true(file_size(f->path) < (long long)(3 * total));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_facts_volume__ten_thousand_nodes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
