/* LLDP neighbours of one host, from lldpd's JSON: the output of
 * `lldpcli -f json0 show neighbors details` or of `-f json` (the keyed
 * format, whose shape depends on the data: lldp.interface is an object keyed
 * by ifname for one interface and a list of such objects for several, the
 * chassis is keyed by the neighbour's SysName or holds its fields directly
 * when none is advertised, a field is a string or a list of them, and a
 * host without neighbours gives {"lldp":{}}). Both shapes are accepted
 * whichever the caller expects.
 *
 * lldp output names the local host only in `show chassis`, so the host is
 * given by the caller (the file name a DaemonSet dropped, the node the URL
 * belongs to). The host is added to the facts even without neighbours.
 * Each neighbour is one host cable: port = the local interface name,
 * switch id = the neighbour's SysName, or its chassis id value (a MAC
 * address, usually) when it advertises no SysName; the switch's name is its
 * id. Which interfaces count (compute rails, not management) is the fabric's
 * plane filter, not this parser's. */
#ifndef TOPO_LLDP_H
#define TOPO_LLDP_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/facts.h"

/* Parses one lldpd document (at most TOPO_MAX_LLDP_DOCUMENT bytes) for host
 * into facts. *out_neighbours (may be NULL) is the number of neighbours it
 * listed. source names the document in messages ("gpu-07.json"; NULL:
 * none): JSON syntax errors read "source:line:column: ...", shape errors
 * "source: lldp.interface[2].eth0.chassis: expected an object, got a
 * string". 0, TOPO_EINVALID, TOPO_ELIMIT, TOPO_ENOMEM (or a facts error). On
 * error the facts may hold part of the document. */
int topo_lldp_parse(size_t *out_neighbours, topo_facts *facts, const char *host, const char *text,
                    size_t len, const char *source, topo_err *err) TOPO_MUST_CHECK;

/* The same for a document already parsed (borrowed). */
int topo_lldp_parse_json(size_t *out_neighbours, topo_facts *facts, const char *host,
                         const json_t *doc, const char *source, topo_err *err) TOPO_MUST_CHECK;

/* The same, all or nothing, for a reader that skips one host's bad
 * document rather than failing every host: the document is first read on
 * its own (syntax, size, parse budget, shape, a conflict within it); when
 * that refuses it (any error but TOPO_ENOMEM), *refused is 1, the error
 * names why and facts is untouched. Otherwise
 * (*refused 0) it is added as topo_lldp_parse does, and an error then
 * (out of memory, a facts limit or conflict) is the whole read's. */
int topo_lldp_add(int *refused, size_t *out_neighbours, topo_facts *facts, const char *host,
                  const char *text, size_t len, const char *source, topo_err *err) TOPO_MUST_CHECK;

/* topo_lldp_add for a document already parsed (borrowed). */
int topo_lldp_add_json(int *refused, size_t *out_neighbours, topo_facts *facts, const char *host,
                       const json_t *doc, const char *source, topo_err *err) TOPO_MUST_CHECK;

#endif
