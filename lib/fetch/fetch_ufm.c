/* UFM over HTTP (topo/fetch.h): the systems, then the links (the parser
 * joins links to the systems' GUIDs), from /ufmRest with HTTP Basic or
 * /ufmRestV3 with a token.
 *
 * The systems are asked for by UFM's documented `type` filter: the
 * switches, and the gateways and routers so that their links are not read
 * as hosts'. Not the hosts: at 10,000 nodes their 80,000 adapter records
 * are nine tenths of the systems response (64 MB), and the links name
 * each adapter's host in its node description ("gpu-0591 HCA-1"), which
 * the parser reads as the host record would have been (topo/ufm.h). */
#include "fetch_internal.h"

#include <stdio.h>

#include "topo/log.h"
#include "topo/ufm.h"

typedef int (*ufm_add_fn)(topo_ufm *, const json_t *, const char *, topo_err *);

static int one_list(topo_fetch *f, topo_ufm *u, const char *what, ufm_add_fn add, uint64_t *objects,
                    topo_err *err)
{
    char path[96];
    topo_http_response resp = {0};
    json_t *doc = NULL;
    snprintf(path, sizeof(path), "%s/resources/%s", f->ufm_api, what);
    int rc = fetch_get(f, path, &resp, err);
    if (rc == 0)
        rc = fetch_parse(&doc, f, path, &resp, err);
    if (rc == 0 && (rc = add(u, doc, NULL, err)) != 0)
        topo_err_wrap(err, "%s: GET %s", f->name, path);
    if (rc == 0)
        *objects += json_array_size(doc);
    json_decref(doc);
    topo_http_response_dispose(&resp);
    return rc;
}

int fetch_ufm(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err)
{
    topo_ufm *u = NULL;
    static const char *const systems[] = {"systems?type=switch", "systems?type=gateway",
                                          "systems?type=router"};
    int rc = topo_ufm_create(&u, facts, err);
    for (size_t i = 0; rc == 0 && i < sizeof(systems) / sizeof(systems[0]); i++)
        rc = one_list(f, u, systems[i], topo_ufm_add_systems_json, objects, err);
    if (rc == 0)
        rc = one_list(f, u, "links", topo_ufm_add_links_json, objects, err);
    if (rc == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        topo_log(TOPO_LOG_INFO,
                 "source ufm: %s%s: %zu switches, %zu adapters (%zu unnamed, %zu from links), "
                 "%zu hosts, %zu switch links, %zu host links; skipped %zu other systems, %zu "
                 "ignored and %zu unmatched links",
                 f->base, f->ufm_api, st.switches, st.adapters, st.unnamed_adapters,
                 st.linked_adapters, topo_facts_host_count(facts), st.switch_links, st.host_links, st.other_systems,
                 st.ignored_links, st.unmatched_links);
    }
    topo_ufm_free(u);
    return rc;
}
