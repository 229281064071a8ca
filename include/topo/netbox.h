/* NetBox's view of a data centre, from its REST responses (v2.x, v3 and v4
 * shapes): devices (site -> datacenter level, rack -> rack level, role ->
 * host or switch, tags, custom fields), racks, sites, and interfaces and
 * cables joining a host's ports to switch ports.
 *
 * List endpoints are paginated ({count, next, previous, results}): the
 * fetcher passes one page at a time and follows the `next` URL returned
 * (NULL on the last page); it must check that URL points at the NetBox it
 * asked (a server must not redirect the token elsewhere). A single object
 * (GET .../devices/1/) reads as a page of one. Pages of any kind, in any
 * order, accumulate in a topo_netbox; topo_netbox_finish turns them into
 * facts, so a device may come after the cables that name it.
 *
 * Devices: a device whose role (v4 `role`, v3 `device_role`) matches
 * switch_roles is a switch (facts switch id and name = the device name);
 * else one matching host_roles (any device, when none are given) is a host
 * under its device name; others and unnamed devices take no part. A host's
 * datacenter level is its site's slug (its name when it has none), its rack
 * level its rack's name, its nvlink level the custom field nvlink_field of
 * the device, else of its rack (NVL72 racks are NVLink domains): a string,
 * an integer, or a selection/object value's name, label or display.
 * Filters by site and tag are query parameters the fetcher adds (role=,
 * site=, tag= take slugs); the parser applies them too, so a server that
 * ignored one does not widen the result.
 *
 * Connections: from cables (v3.3+ a_terminations/b_terminations, earlier
 * termination_a/termination_b; dcim.interface ends only; a cable whose
 * status is not "connected" skipped) and from interfaces (the traced
 * connected_endpoints of v3.3+, connected_endpoint of v2.5-v3.2,
 * connected_interface of v2.0-2.4, else the link peers). A host interface
 * to a switch interface is a host cable (port = the host's interface
 * name), switch to switch a switch cable; connections to devices that are
 * neither host nor switch, host to host, and those of management-only
 * interfaces (mgmt_only, known from interface pages) are counted, not
 * kept. Fetch the switches' devices too, or their cables cannot be told
 * from others.
 *
 * Errors name the field ("results[3].site.name: expected a string, got an
 * integer"); JSON syntax errors "source:line:column: ...". */
#ifndef TOPO_NETBOX_H
#define TOPO_NETBOX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/facts.h"

typedef enum topo_netbox_kind {
    TOPO_NETBOX_DEVICES,
    TOPO_NETBOX_RACKS,
    TOPO_NETBOX_SITES,
    TOPO_NETBOX_INTERFACES,
    TOPO_NETBOX_CABLES,
} topo_netbox_kind;

/* The list endpoint of a kind, "/api/dcim/devices/" (with the trailing
 * slash NetBox requires); NULL for a value out of range. */
const char *topo_netbox_kind_path(topo_netbox_kind kind);

/* Role, site and tag names match a slug or a name, case-insensitively.
 * Zeroed means: switches are devices whose role slug or name contains
 * "switch", every other device is a host, no site or tag filter, no NVLink
 * field. The strings are copied by topo_netbox_create. */
typedef struct topo_netbox_opts {
    const char *const *switch_roles;
    size_t nswitch_roles;
    const char *const *host_roles;
    size_t nhost_roles;
    const char *const *sites; /* a device must be in one */
    size_t nsites;
    const char *const *tags; /* a device must carry one */
    size_t ntags;
    const char *nvlink_field; /* a custom field's name, or NULL */
} topo_netbox_opts;

typedef struct topo_netbox_stats {
    size_t hosts, switches;
    size_t other_devices;    /* no matching role, or no name */
    size_t filtered_devices; /* outside the site or tag filter */
    size_t racks, sites;
    size_t host_links, switch_links; /* connections kept (before the facts dedupe) */
    size_t ignored_links;            /* not both interfaces of hosts/switches, host-host,
                                        management-only, not connected */
    size_t conflicts;                /* one host given two values of a level */
} topo_netbox_stats;

typedef struct topo_netbox topo_netbox;

/* opts may be NULL (all defaults). 0, TOPO_EINVALID (an empty string in
 * opts), TOPO_ENOMEM. */
int topo_netbox_create(topo_netbox **out, const topo_netbox_opts *opts,
                       topo_err *err) TOPO_MUST_CHECK;
void topo_netbox_free(topo_netbox *nb);

/* One response of kind (at most TOPO_MAX_NETBOX_PAGE bytes); source names
 * it in messages (the URL or a file name; may be NULL). *next_out (may be
 * NULL) receives the next page's URL, malloc'd (free it), or NULL on the
 * last page. 0, TOPO_EINVALID, TOPO_ELIMIT, TOPO_ENOMEM; on error the
 * results before the bad one are kept. */
int topo_netbox_add_page(char **next_out, topo_netbox *nb, topo_netbox_kind kind, const char *text,
                         size_t len, const char *source, topo_err *err) TOPO_MUST_CHECK;
int topo_netbox_add_page_json(char **next_out, topo_netbox *nb, topo_netbox_kind kind,
                              const json_t *page, const char *source,
                              topo_err *err) TOPO_MUST_CHECK;

/* What a page read by topo_netbox_read_page held, for the checks of a
 * list read page by page (lib/sync/fetch/fetch_pages.c). */
typedef struct topo_netbox_page {
    int is_list;    /* 1: a list's page (it had "results"); 0: one object */
    int64_t count;  /* its "count" when an integer >= 0, else -1 */
    size_t results; /* the records read: its results' length, 1 for one object */
} topo_netbox_page;

/* topo_netbox_add_page for a page of at most max bytes (a response whose
 * limit the options set: maxResponseBytes), read a result at a time as
 * the files are; *page (may be NULL) says what it held. */
int topo_netbox_read_page(char **next_out, topo_netbox_page *page, topo_netbox *nb,
                          topo_netbox_kind kind, const char *text, size_t len, size_t max,
                          const char *source, topo_err *err) TOPO_MUST_CHECK;

/* Everything read so far into facts: hosts with their levels, switches,
 * cables (the stats are recounted by each call). A host given two values of one level (two devices
 * of one name in two sites) is a conflict: logged, counted, the first value kept. 0, TOPO_ENOMEM or
 * another facts error. */
int topo_netbox_finish(topo_netbox *nb, topo_facts *facts, topo_err *err) TOPO_MUST_CHECK;

topo_netbox_stats topo_netbox_get_stats(const topo_netbox *nb);

/* The stats as the "source netbox: ..." log line words them ("3 hosts, 1
 * switches, ..."), into out (size bytes, truncated to fit; at most
 * TOPO_NETBOX_STATS_TEXT_MAX needed); returns out. One wording for the
 * pages read from files and over HTTP (lib/sync/pipeline, lib/sync/fetch). */
#define TOPO_NETBOX_STATS_TEXT_MAX 512
const char *topo_netbox_stats_text(char *out, size_t size, const topo_netbox_stats *st);

#endif
