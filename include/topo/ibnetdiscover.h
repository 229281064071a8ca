/* ibnetdiscover text dumps (infiniband-diags) as topo-sync facts: the
 * switches of one InfiniBand subnet, the cables between them, and the
 * cables from host adapters to switches (SOURCE-FORMATS.md §6).
 *
 * What becomes a fact:
 * - a switch: id its GUID as topo/guid.h writes it (16 lower-case hex
 *   digits, whatever case or zero padding the dump used, no "S-": the id
 *   UFM gives the same switch), name its node description ("MF0;A09-P1-
 *   IBLEAF-04-04:MQM9701/U1"), trimmed;
 * - a switch-to-switch cable (either end's port line; loopbacks dropped by
 *   the facts);
 * - a host cable, from a Ca stanza or a switch port line. The adapter's
 *   node description is trimmed of leading and trailing blanks, then, when
 *   it is exactly two words "<host> <hca>", host is the first and the port
 *   the second ("a06-p1-dgx-02-c01 HCA-6", and "selene-slurm-01 mlx5_1 "
 *   with the trailing blank Selene's dump has: the blank is padding, not a
 *   third word, so those hosts are kept, where NVIDIA's topograph drops
 *   them). Anything else ("MT4129 ConnectX7   Mellanox Technologies", one
 *   word, three words) names no host: the cable is kept with host NULL, so
 *   its switch stays a leaf;
 * - a host with no cable, from a Ca stanza that names one and lists no
 *   port (a node that saw only itself): the fabric reports it unplaced.
 *
 * Skipped, and counted in the stats: SHARP Aggregation Nodes (a CA whose
 * description ends in "Aggregation Node", or whose system image GUID is
 * its switch's: it is inside the switch, and every Quantum switch has one,
 * so keeping it would make every spine a leaf); router (Rt) stanzas and
 * every cable to a router (a router joins subnets, it is not a tier of
 * this one); adapter-to-adapter cables; lines of a kind this parser does
 * not know (other ibnetdiscover modes, future fields), each logged as a
 * warning with its line number.
 *
 * A duplicate GUID, reported as a conflict of the facts
 * (topo_facts_add_conflict), logged and counted: an adapter (Ca) whose GUID
 * is a switch's (the switch keeps it: the fabric routes by it), or one
 * adapter id declared by Ca stanzas with different descriptions (two host
 * records, which is right cannot be told). Such an adapter gets no cable;
 * the hosts its records name are still facts, unplaced. The same whatever
 * order the stanzas come in.
 *
 * Errors, each "source:line: message" with topo_err_at: a Switch, Ca or Rt
 * header or a port line that is not well formed (no quoted id, an id that
 * is not S-/H-/R- and 1 to 16 hex digits, a header whose id does not match
 * its kind, an unterminated description), a port line outside a stanza, a
 * NUL byte. These are the lines every dump has in one shape; a broken one
 * means a damaged or truncated file, whose fabric would be wrong. And a dump
 * that is not whole, as ibnetdiscover never prints one (a dump read while
 * `ibnetdiscover > file` rewrites it): a last line without its newline, no
 * stanza at all (an empty file), a port line without its comment's
 * `"<remote description>" lid <n> <width>x<speed>`, a node named on a port
 * line without a stanza of its own, a cable not printed back from its
 * other end (docs/sync.md "Truncated and inconsistent reads").
 *
 * A node-name map (ibnetdiscover --node-name-map format: lines
 * `0x<guid> "<name>"`, '#' comments, blank lines) names nodes by GUID and
 * wins over the dump's description: a switch's name becomes the map's; an
 * adapter's name is read like a description, except that one word is a host
 * name alone (no port). Use it for adapters with default descriptions. */
#ifndef TOPO_IBNETDISCOVER_H
#define TOPO_IBNETDISCOVER_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"
#include "topo/facts.h"

typedef struct topo_ibnetdiscover_map topo_ibnetdiscover_map;

/* A node-name map from text of len bytes (at most TOPO_MAX_NODE_NAME_MAP:
 * TOPO_ELIMIT); source names it in messages ("map.txt:3: ..."; NULL gives
 * "node-name map"). TOPO_EINVALID for a line that is not a 0x GUID and a
 * name, an empty or unterminated name, or a GUID given two different names. */
int topo_ibnetdiscover_map_parse(topo_ibnetdiscover_map **out, const char *text, size_t len,
                                 const char *source, topo_err *err) TOPO_MUST_CHECK;
/* The same from a file, a regular one (TOPO_ENOTFOUND, TOPO_EIO,
 * TOPO_ELIMIT as topo_codec_read_regular_file). */
int topo_ibnetdiscover_map_read_file(topo_ibnetdiscover_map **out, const char *path,
                                     topo_err *err) TOPO_MUST_CHECK;
void topo_ibnetdiscover_map_free(topo_ibnetdiscover_map *map);
size_t topo_ibnetdiscover_map_count(const topo_ibnetdiscover_map *map);
/* The name given to a node GUID, borrowed from the map; NULL when none. */
const char *topo_ibnetdiscover_map_get(const topo_ibnetdiscover_map *map, uint64_t guid);

typedef struct topo_ibnetdiscover_opts {
    const char *source;                /* in messages; NULL: the path, or "ibnetdiscover" */
    const topo_ibnetdiscover_map *map; /* optional node-name map (borrowed) */
    /* Optional (borrowed): the switches of the source's other dumps (the
     * facts they give), all dumps being one source: a Ca here with one of
     * their GUIDs is disputed as one with a switch's GUID of this dump is
     * (no cable, a conflict line; the switch keeps it). */
    const topo_facts *other_dumps;
    /* Only the dump's switches into the facts (nothing logged, no cables,
     * no hosts, no conflicts): other_dumps for the source's other dumps. */
    int switches_only;
} topo_ibnetdiscover_opts;

/* What one dump held. Stanzas are counted once per node even when a node
 * appears twice. */
typedef struct topo_ibnetdiscover_stats {
    size_t lines;
    size_t switches;          /* Switch stanzas */
    size_t adapters;          /* Ca stanzas, Aggregation Nodes excluded */
    size_t adapters_unnamed;  /* ... whose description (or map entry) names no host */
    size_t adapters_mapped;   /* ... named by the node-name map */
    size_t aggregation_nodes; /* SHARP Aggregation Nodes (skipped) */
    size_t routers;           /* Rt stanzas (skipped) */
    size_t router_ports;      /* port lines to or from a router (skipped) */
    size_t adapter_links;     /* port lines between two adapters (skipped) */
    size_t skipped_lines;     /* lines of an unknown kind (skipped, logged) */
    size_t duplicate_guids;   /* adapter GUIDs another record claims too (reported) */
} topo_ibnetdiscover_stats;

/* Adds the dump in text (len bytes, at most TOPO_MAX_IBNETDISCOVER_DUMP:
 * TOPO_ELIMIT) to into. opts and stats may be NULL. The whole dump is read
 * before the facts are touched, so a syntax error (TOPO_EINVALID) leaves
 * into as it was; TOPO_ENOMEM or a facts limit (TOPO_ELIMIT) may leave part
 * of the dump in it. */
int topo_ibnetdiscover_parse(topo_facts *into, const char *text, size_t len,
                             const topo_ibnetdiscover_opts *opts, topo_ibnetdiscover_stats *stats,
                             topo_err *err) TOPO_MUST_CHECK;
/* The same from a file, streamed; messages name the path unless
 * opts->source is set. A regular file only: a FIFO, a device or a
 * directory is TOPO_EIO "<path>: not a regular file", found without
 * blocking on it (topo_codec_open_regular_file). */
int topo_ibnetdiscover_read_file(topo_facts *into, const char *path,
                                 const topo_ibnetdiscover_opts *opts,
                                 topo_ibnetdiscover_stats *stats, topo_err *err) TOPO_MUST_CHECK;

#endif
