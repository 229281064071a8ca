/* NVIDIA UFM's view of an InfiniBand fabric, from its REST responses:
 * `GET /ufmRest/resources/systems` (switches and hosts) then
 * `GET /ufmRest/resources/links` (cables between ports, by GUID). Links
 * name their ends by GUID only, so a topo_ufm parser keeps the GUID of
 * every system it has read and joins links to them; parse the systems
 * first (as many responses as wanted, e.g. one per type filter), then the
 * links.
 *
 * Systems: a switch (type "switch") becomes a facts switch, id = its
 * system_guid, name = its system_name. A host (type "host") without a UFM
 * agent appears once per adapter, named "<host> <adapter>" ("gpu-0591
 * HCA-1"): host "gpu-0591", port "HCA-1"; a host with an agent is named
 * plainly and its port is taken from each link (the node description of
 * the host's end, "gpu-0591 HCA-1", else the port's dname). An adapter
 * still carrying a default description ("MT4129 ConnectX7 Mellanox
 * Technologies") names no host: its cables are unnamed adapters (facts
 * host NULL), which still mark the switch a leaf. Other systems (SHArP
 * aggregation nodes, type "submodule"; gateways; routers) take no part.
 * A system is known by its system_guid, its guid and the GUID prefix of each
 * of its ports[] ("<guid>_<n>"): a director switch's ports belong to its
 * internal switch ASICs, whose GUIDs are what links name.
 *
 * Links: switch-switch gives a switch cable, switch-host a host cable; a
 * link between two hosts, to an other system or from a switch to itself is
 * ignored, and one whose end has an unknown GUID is skipped: both are
 * counted in the stats, not errors (a links response names systems that
 * the systems response filtered out). GUIDs compare without a "0x" prefix
 * and case-insensitively.
 *
 * Switches only: the systems may be UFM's `?type=switch` response, without
 * the host records (nine tenths of a large fabric's systems). A link end
 * no system is known by, cabled to a switch, whose node description names
 * a host by the rule above ("gpu-0591 HCA-1") is then that host's
 * adapter, and one with a default description an unnamed adapter, known
 * by that GUID from there on: the same facts as from the host's record. A
 * SHArP aggregation node ("Mellanox Technologies Aggregation Node") or a
 * blank description stays unknown. Gateways and routers, whose
 * descriptions could read as host names, must then be given too (their
 * own `?type=` responses) so that their links stay ignored.
 *
 * Errors name the field ("[12].system_guid: expected a string, got an
 * integer"); JSON syntax errors "source:line:column: ...". */
#ifndef TOPO_UFM_H
#define TOPO_UFM_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/facts.h"

typedef struct topo_ufm topo_ufm;

/* What the responses held, counted per record (the facts deduplicate:
 * several parallel cables between two switches are one switch cable). */
typedef struct topo_ufm_stats {
    size_t switches;         /* switch systems */
    size_t adapters;         /* host systems (one per adapter without an agent) */
    size_t linked_adapters;  /* of those, named by a link only (no systems record) */
    size_t unnamed_adapters; /* of those, with a default description */
    size_t other_systems;    /* submodules, gateways, routers, unknown types */
    size_t switch_links;     /* switch-switch link records */
    size_t host_links;       /* switch-host link records */
    size_t ignored_links;    /* host-host, to other systems, switch to itself */
    size_t unmatched_links;  /* an end no system is known by */
    size_t bad_guid_links;   /* an end whose GUID is not one (skipped, not the read) */
    size_t duplicate_guids;  /* GUIDs a host record claimed with another (reported) */
    size_t disputed_links;   /* link records with an end at such a GUID's record */
} topo_ufm_stats;

/* A parser filling facts (borrowed: it must outlive the parser).
 * 0 or TOPO_ENOMEM. */
int topo_ufm_create(topo_ufm **out, topo_facts *facts, topo_err *err) TOPO_MUST_CHECK;
void topo_ufm_free(topo_ufm *ufm);

/* One systems response (a JSON array of systems, at most
 * TOPO_MAX_UFM_RESPONSE bytes); source names it in messages ("ufm
 * systems", a file name; may be NULL). A system seen before (same
 * system_guid) is skipped. 0, TOPO_EINVALID, TOPO_ELIMIT, TOPO_ENOMEM or
 * a facts error; on error what came before the bad record is kept. */
int topo_ufm_add_systems(topo_ufm *ufm, const char *text, size_t len, const char *source,
                         topo_err *err) TOPO_MUST_CHECK;
int topo_ufm_add_systems_json(topo_ufm *ufm, const json_t *systems, const char *source,
                              topo_err *err) TOPO_MUST_CHECK;

/* One links response (a JSON array of links), after the systems:
 * TOPO_EINVALID ("links before any systems") when no system is known. */
int topo_ufm_add_links(topo_ufm *ufm, const char *text, size_t len, const char *source,
                       topo_err *err) TOPO_MUST_CHECK;
int topo_ufm_add_links_json(topo_ufm *ufm, const json_t *links, const char *source,
                            topo_err *err) TOPO_MUST_CHECK;

/* topo_ufm_add_systems and topo_ufm_add_links for a response of at most
 * max bytes (over HTTP the options' limit, maxResponseBytes), read a
 * record at a time as the files are; *records (may be NULL) is the
 * records read. */
int topo_ufm_read_systems(topo_ufm *ufm, const char *text, size_t len, size_t max,
                          size_t *records, const char *source, topo_err *err) TOPO_MUST_CHECK;
int topo_ufm_read_links(topo_ufm *ufm, const char *text, size_t len, size_t max,
                        size_t *records, const char *source, topo_err *err) TOPO_MUST_CHECK;

/* The counts so far. */
topo_ufm_stats topo_ufm_get_stats(const topo_ufm *ufm);

/* The stats and the facts' host count as the "source ufm: ..." log line
 * words them ("2 switches, 4 adapters (...), ..."), into out (size bytes,
 * truncated to fit; at most TOPO_UFM_STATS_TEXT_MAX needed); returns out.
 * One wording for the responses read from files and over HTTP (lib/sync/pipeline,
 * lib/sync/fetch). */
#define TOPO_UFM_STATS_TEXT_MAX 512
const char *topo_ufm_stats_text(char *out, size_t size, const topo_ufm_stats *st, size_t hosts);

#endif
