/* LLDP from a collector over HTTP (topo/fetch.h): one JSON object mapping
 * each host to its lldpd document, read host by host in name order (the
 * facts' order does not depend on the server's). */
#include "fetch_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/log.h"
#include "topo/lldp.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int read_hosts(topo_fetch *f, topo_facts *facts, const json_t *doc, uint64_t *objects,
                      size_t *neighbours, topo_err *err)
{
    size_t n = json_object_size(doc), i = 0, nn = 0;
    const char **hosts = calloc(n ? n : 1, sizeof(*hosts));
    const char *key;
    json_t *v;
    int rc = 0;
    if (hosts == NULL)
        return topo_err_nomem(err, f->name);
    json_object_foreach((json_t *)doc, key, v) hosts[i++] = key;
    qsort(hosts, n, sizeof(*hosts), by_name);
    for (i = 0; rc == 0 && i < n; i++) {
        if (hosts[i][0] == '\0') {
            rc = topo_err_set(err, TOPO_EINVALID, "%s: GET %s: an empty host name", f->name,
                              f->target);
            break;
        }
        rc = topo_lldp_parse_json(&nn, facts, hosts[i], json_object_get(doc, hosts[i]), NULL, err);
        if (rc != 0)
            topo_err_wrap(err, "%s: GET %s: \"%.100s\"", f->name, f->target, hosts[i]);
        *neighbours += nn;
    }
    free(hosts);
    *objects = n;
    return rc;
}

int fetch_lldp(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err)
{
    topo_http_response resp = {0};
    json_t *doc = NULL;
    size_t neighbours = 0;
    int rc = fetch_get(f, f->target, &resp, err);
    if (rc == 0)
        rc = fetch_parse(&doc, f, f->target, &resp, err);
    if (rc == 0 && !json_is_object(doc))
        rc = topo_err_set(err, TOPO_EINVALID,
                          "%s: GET %s: expected an object of host names to lldpd documents, got "
                          "%s",
                          f->name, f->target, json_is_array(doc) ? "an array" : "a scalar");
    if (rc == 0)
        rc = read_hosts(f, facts, doc, objects, &neighbours, err);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "source lldp: %s%s: %llu hosts, %zu neighbours, %zu switches",
                 f->base, f->target, (unsigned long long)*objects, neighbours,
                 topo_facts_switch_count(facts));
    json_decref(doc);
    topo_http_response_dispose(&resp);
    return rc;
}
