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

#include "topo/codec.h"
#include "topo/log.h"
#include "topo/ufm.h"

typedef int (*ufm_read_fn)(topo_ufm *, const char *, size_t, size_t, size_t *, const char *,
                           topo_err *);

/* GET <api>/resources/<what> into *resp (dispose it); path receives the
 * path asked for. */
static int get_list(topo_http_response *resp, topo_fetch *f, const char *what, char *path,
                    size_t size, topo_err *err)
{
    snprintf(path, size, "%s/resources/%s", f->ufm_api, what);
    return fetch_get(f, path, resp, err);
}

/* A response into the parser, a record at a time as the files are (never
 * its whole tree), within the response's limit. */
static int add_list(topo_ufm *u, const topo_http_response *resp, ufm_read_fn read,
                    const topo_fetch *f, const char *path, uint64_t *objects, topo_err *err)
{
    char source[FETCH_SOURCE_MAX];
    size_t records = 0;
    int rc = read(u, resp->body, resp->len, f->max_body, &records,
                  fetch_source_text(source, f, path), err);
    if (rc != 0)
        return fetch_parse_failed(err, rc);
    *objects += records;
    return 0;
}

static int one_list(topo_fetch *f, topo_ufm *u, const char *what, uint64_t *objects, topo_err *err)
{
    char path[96];
    topo_http_response resp = {0};
    int rc = get_list(&resp, f, what, path, sizeof(path), err);
    if (rc == 0)
        rc = add_list(u, &resp, topo_ufm_read_systems, f, path, objects, err);
    topo_http_response_dispose(&resp);
    return rc;
}

/* A link record without both ends' node descriptions stops the walk. */
static int link_undescribed(const json_t *l, size_t index, void *payload, topo_err *err)
{
    (void)index;
    (void)err;
    if (json_is_object(l) &&
        (!json_is_string(json_object_get(l, "source_port_node_description")) ||
         !json_is_string(json_object_get(l, "destination_port_node_description")))) {
        *(int *)payload = 1;
        return TOPO_EINVALID;
    }
    return 0;
}

/* Whether every link names both ends' node descriptions (UFM 6.20 on),
 * read a record at a time. A response that does not read (or is no array)
 * counts as described: its read reports it as it would. */
static int links_describe_ends(const topo_http_response *links, const topo_fetch *f,
                               const char *path)
{
    char source[FETCH_SOURCE_MAX];
    topo_err ignored = TOPO_ERR_INIT;
    int undescribed = 0, found = 0;
    topo_codec_each how = {.element = link_undescribed, .payload = &undescribed};
    if (topo_codec_json_each_source(&found, links->body, links->len,
                                    fetch_source_text(source, f, path), &how, &ignored) != 0)
        return !undescribed;
    return 1;
}

static int systems_and_links(topo_fetch *f, topo_ufm *u, uint64_t *objects, topo_err *err)
{
    static const char *const systems[] = {"systems?type=switch", "systems?type=gateway",
                                          "systems?type=router"};
    char path[96];
    topo_http_response links = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(systems) / sizeof(systems[0]); i++)
        rc = one_list(f, u, systems[i], objects, err);
    if (rc == 0)
        rc = get_list(&links, f, "links", path, sizeof(path), err);
    if (rc == 0 && !links_describe_ends(&links, f, path)) {
        topo_log(TOPO_LOG_INFO,
                 "source ufm: %s%s: the links carry no node descriptions (UFM before 6.20): "
                 "asking for the hosts",
                 f->base, f->ufm_api);
        rc = one_list(f, u, "systems?type=host", objects, err);
    }
    if (rc == 0)
        rc = add_list(u, &links, topo_ufm_read_links, f, path, objects, err);
    topo_http_response_dispose(&links);
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
