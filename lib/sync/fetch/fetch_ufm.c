/* UFM over HTTP (topo/fetch.h): the systems, then the links (the parser
 * joins links to the systems' GUIDs), from /ufmRest with HTTP Basic or
 * /ufmRestV3 with a token.
 *
 * The systems are asked for by UFM's documented `type` filter (REST API
 * guide v6.11 on, "Systems REST API"): the switches, and the gateways and
 * routers so that their links are not read as hosts'. Not the hosts: at
 * 10,000 nodes their 80,000 adapter records are nine tenths of the systems
 * response (64 MB), and the links name each adapter's host in its node
 * description ("gpu-0591 HCA-1"), which the parser reads as the host
 * record would have been (topo/ufm.h). Links without node descriptions
 * (the guide's example before v6.20 has none) name no host: the hosts are
 * then asked for too, before the links are read. */
#include "fetch_internal.h"

#include <stdio.h>

#include "topo/log.h"
#include "topo/ufm.h"

typedef int (*ufm_add_fn)(topo_ufm *, const json_t *, const char *, topo_err *);

/* GET <api>/resources/<what> as JSON into *doc. */
static int get_list(json_t **doc, topo_fetch *f, const char *what, char *path, size_t size,
                    topo_err *err)
{
    topo_http_response resp = {0};
    snprintf(path, size, "%s/resources/%s", f->ufm_api, what);
    int rc = fetch_get(f, path, &resp, err);
    if (rc == 0)
        rc = fetch_parse(doc, f, path, &resp, err);
    topo_http_response_dispose(&resp);
    return rc;
}

static int add_list(topo_ufm *u, const json_t *doc, ufm_add_fn add, const topo_fetch *f,
                    const char *path, uint64_t *objects, topo_err *err)
{
    int rc = add(u, doc, NULL, err);
    if (rc != 0)
        return topo_err_wrap(err, "%s: GET %s", f->name, path);
    *objects += json_array_size(doc);
    return 0;
}

static int one_list(topo_fetch *f, topo_ufm *u, const char *what, uint64_t *objects, topo_err *err)
{
    char path[96];
    json_t *doc = NULL;
    int rc = get_list(&doc, f, what, path, sizeof(path), err);
    if (rc == 0)
        rc = add_list(u, doc, topo_ufm_add_systems_json, f, path, objects, err);
    json_decref(doc);
    return rc;
}

/* Whether every link names both ends' node descriptions (UFM 6.20 on). */
static int links_describe_ends(const json_t *links)
{
    size_t i;
    const json_t *l;
    json_array_foreach(links, i, l)
    {
        if (json_is_object(l) &&
            (!json_is_string(json_object_get(l, "source_port_node_description")) ||
             !json_is_string(json_object_get(l, "destination_port_node_description"))))
            return 0;
    }
    return 1;
}

static int systems_and_links(topo_fetch *f, topo_ufm *u, uint64_t *objects, topo_err *err)
{
    static const char *const systems[] = {"systems?type=switch", "systems?type=gateway",
                                          "systems?type=router"};
    char path[96];
    json_t *links = NULL;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(systems) / sizeof(systems[0]); i++)
        rc = one_list(f, u, systems[i], objects, err);
    if (rc == 0)
        rc = get_list(&links, f, "links", path, sizeof(path), err);
    if (rc == 0 && !links_describe_ends(links)) {
        topo_log(TOPO_LOG_INFO,
                 "source ufm: %s%s: the links carry no node descriptions (UFM before 6.20): "
                 "asking for the hosts",
                 f->base, f->ufm_api);
        rc = one_list(f, u, "systems?type=host", objects, err);
    }
    if (rc == 0)
        rc = add_list(u, links, topo_ufm_add_links_json, f, path, objects, err);
    json_decref(links);
    return rc;
}

int fetch_ufm(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err)
{
    topo_ufm *u = NULL;
    int rc = topo_ufm_create(&u, facts, err);
    if (rc == 0)
        rc = systems_and_links(f, u, objects, err);
    if (rc == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        char text[TOPO_UFM_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source ufm: %s%s: %s", f->base, f->ufm_api,
                 topo_ufm_stats_text(text, sizeof text, &st, topo_facts_host_count(facts)));
    }
    topo_ufm_free(u);
    return rc;
}
