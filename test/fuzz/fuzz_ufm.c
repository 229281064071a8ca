/* libFuzzer harness for the UFM parser (topo_ufm): an input is either
 * {"systems": [...], "links": [...]} (both responses, in that order) or
 * one array read as systems and then, into the same parser, as links.
 * Never a crash or a leak; cables only between known switches and hosts.
 * Seeds: fixtures/fuzz/ufm (both responses) and the systems excerpt. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/codec.h"
#include "topo/ufm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const topo_facts *f)
{
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (l.sw >= topo_facts_switch_count(f))
            abort();
        if (l.is_host_link ? (l.host != TOPO_FACTS_NO_HOST && l.host >= topo_facts_host_count(f))
                           : (l.other >= topo_facts_switch_count(f) || l.other <= l.sw))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_facts *f = NULL;
    topo_ufm *u = NULL;
    json_t *doc = NULL;
    const json_t *systems, *links;
    topo_err err = TOPO_ERR_INIT;
    if (topo_codec_json_parse(&doc, (const char *)data, size, "fuzz.json", &err) != 0)
        return 0;
    if (topo_facts_create(&f, "ufm", &err) != 0 || topo_ufm_create(&u, f, &err) != 0)
        goto cleanup;
    systems = json_is_object(doc) ? json_object_get(doc, "systems") : doc;
    links = json_is_object(doc) ? json_object_get(doc, "links") : doc;
    if (topo_ufm_add_systems_json(u, systems, "systems", &err) == 0 &&
        topo_ufm_add_links_json(u, links, "links", &err) == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        if (st.switches != topo_facts_switch_count(f) ||
            topo_facts_link_count(f) > st.switch_links + st.host_links)
            abort();
    }
    check(f);
cleanup:
    topo_ufm_free(u);
    topo_facts_free(f);
    json_decref(doc);
    return 0;
}
