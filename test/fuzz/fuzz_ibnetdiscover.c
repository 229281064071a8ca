/* libFuzzer harness for the ibnetdiscover reader and the fabric tiers above
 * it: a dump (and, after a line "%%", a node-name map) gives facts or an
 * error naming its line, never a crash or a leak; the fabric built from
 * any facts keeps its promises (tiers link to existing groups, a placed
 * host has a tier list, statistics add up). Seeds: fixtures/sources/ibnetdiscover
 * (the real dumps; libFuzzer reads their first -max_len bytes) and
 * fixtures/fuzz/ibnetdiscover. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/fabric.h"
#include "topo/guid.h"
#include "topo/ibnetdiscover.h"
#include "topo/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fabric(const topo_fabric *fab)
{
    topo_fabric_stats st = topo_fabric_get_stats(fab);
    size_t tiers = topo_fabric_tier_count(fab);
    if (st.hosts != topo_fabric_host_count(fab) ||
        st.hosts_placed + st.hosts_ambiguous + st.hosts_no_leaf + st.hosts_excluded != st.hosts ||
        (tiers == 0) != (st.leaves == 0))
        abort();
    for (size_t t = 0; t < tiers; t++) {
        size_t n = topo_fabric_group_count(fab, t), children = 0;
        if (n == 0)
            abort();
        for (size_t i = 0; i < n; i++) {
            topo_fabric_group g = topo_fabric_group_at(fab, t, i);
            if (!g.id || !g.name || g.nswitches == 0 || !topo_fabric_group_switch(fab, t, i, 0) ||
                topo_fabric_group_switch(fab, t, i, g.nswitches))
                abort();
            if (g.parent != TOPO_FABRIC_NONE && g.parent >= topo_fabric_group_count(fab, t + 1))
                abort();
            if (i > 0 && strcmp(topo_fabric_group_at(fab, t, i - 1).id, g.id) == 0)
                abort();
            children += g.nchildren;
        }
        if (t > 0 && children > topo_fabric_group_count(fab, t - 1))
            abort();
    }
    for (size_t h = 0; h < topo_fabric_host_count(fab); h++) {
        topo_fabric_status s = topo_fabric_host_status(fab, h);
        size_t k = topo_fabric_host_tier_count(fab, h);
        int placed = s == TOPO_FABRIC_HOST_PLACED || s == TOPO_FABRIC_HOST_AMBIGUOUS;
        if (placed != (k > 0) || k > tiers || topo_fabric_host_tier(fab, h, k) ||
            (k > 0 && !topo_fabric_host_tier(fab, h, k - 1)))
            abort();
        if (h > 0 && strcmp(topo_fabric_host_name(fab, h - 1), topo_fabric_host_name(fab, h)) >= 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    const char *text = (const char *)data;
    size_t dump_len = size, map_len = 0;
    const char *map_text = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_ibnetdiscover_map *map = NULL;
    topo_facts *facts = NULL;
    topo_fabric *fab = NULL;
    if (!quiet) {
        topo_log_set_level(TOPO_LOG_OFF); /* the skipped lines' warnings */
        quiet = 1;
    }
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(text + i, "\n%%\n", 4) == 0) {
            dump_len = i + 1;
            map_text = text + i + 4;
            map_len = size - i - 4;
            break;
        }
    if (map_text && topo_ibnetdiscover_map_parse(&map, map_text, map_len, "map", &err) != 0 &&
        (strncmp(err.text, "map", 3) != 0 || map))
        abort();
    if (topo_facts_create(&facts, "fuzz", &err) != 0)
        goto cleanup;
    topo_ibnetdiscover_opts opts = {.source = "dump", .map = map};
    topo_ibnetdiscover_stats st;
    int rc = topo_ibnetdiscover_parse(facts, text, dump_len, &opts, &st, &err);
    if (rc == TOPO_EINVALID && (strncmp(err.text, "dump:", 5) != 0 || err.line < 1 ||
                                topo_facts_switch_count(facts) + topo_facts_host_count(facts)))
        abort();
    if (rc == 0 && (st.switches > topo_facts_switch_count(facts) ||
                    st.duplicate_guids != topo_facts_conflict_count(facts)))
        abort();
    /* every switch id is a GUID as topo/guid.h writes it (UFM's too) */
    for (size_t i = 0; i < topo_facts_switch_count(facts); i++) {
        const char *id = topo_facts_switch_id(facts, i);
        char again[TOPO_GUID_TEXT_SIZE];
        if (strlen(id) != 16 || topo_guid_normalise(again, id, 16, "id", NULL) != 0 ||
            strcmp(again, id) != 0)
            abort();
    }
    /* the plane filter on every other input */
    topo_fabric_opts fo = {.exclude_port = "^HCA-[2-8]$", .exclude_switch = "SPINE-0[2-5]"};
    const topo_facts *all[1] = {facts};
    if (topo_fabric_build(&fab, all, 1, size % 2 ? &fo : NULL, &err) == 0)
        check_fabric(fab);
cleanup:
    topo_fabric_free(fab);
    topo_facts_free(facts);
    topo_ibnetdiscover_map_free(map);
    return 0;
}
