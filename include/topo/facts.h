/* Facts about the infrastructure, as one source of topo-sync reports them
 * (NetBox, UFM, ibnetdiscover, LLDP, the GPU labels of Node objects), before
 * fusion: hosts under the names the source uses, the level values the source
 * states for them (a NetBox site or rack, a GPU clique), switches, and the
 * cables between hosts and switches and between switches. The fabric tiers
 * (lib/sync/fabric) are derived from the cables; the plan maps host names to node
 * names and decides, level by level, which source wins.
 *
 * A topo_facts owns copies of every string it is given. Adding a host or a
 * switch that is already there returns the existing one; a cable given twice
 * is kept once. Sizes are bounded by TOPO_MAX_FACTS_ENTRIES (TOPO_ELIMIT). */
#ifndef TOPO_FACTS_H
#define TOPO_FACTS_H

#include <stddef.h>

#include "topo/error.h"

/* The levels topo-sync writes, coarsest first (docs/sync.md "topo-sync:
 * sources and the plan (offline)"). Which of them a topology uses is configuration. */
#define TOPO_LEVEL_MAP(XX)                                                                   \
    XX(DATACENTER, "datacenter")                                                             \
    XX(SPINE, "spine")                                                                       \
    XX(LEAF, "leaf")                                                                         \
    XX(RACK, "rack")                                                                         \
    XX(NVLINK, "nvlink")                                                                     \
    XX(HOSTNAME, "hostname")

typedef enum topo_level {
#define TOPO_XX_LEVEL_ENUM(name, text) TOPO_LEVEL_##name,
    TOPO_LEVEL_MAP(TOPO_XX_LEVEL_ENUM)
#undef TOPO_XX_LEVEL_ENUM
        TOPO_LEVEL_COUNT
} topo_level;

/* "datacenter", "spine", ...; NULL for a value out of range. */
const char *topo_level_name(topo_level level);
/* The level of a name as topo_level_name spells it: 0, or TOPO_ENOTFOUND. */
int topo_level_parse(topo_level *out, const char *name);
/* Checks a topology's levels (each known) go coarsest first, as
 * TOPO_LEVEL_MAP lists them, each once, so hostname can only be last: the
 * plan nests its domains in that order whatever the list says, while a
 * Kueue Topology lists the levels as given, and the two would disagree. 0,
 * or TOPO_EINVALID with *bad the index of the first level out of place and
 * why "rack before datacenter: levels go coarsest first (datacenter, spine,
 * leaf, rack, nvlink, hostname)" or "rack repeated". */
int topo_level_order_check(size_t *bad, const topo_level *levels, size_t n, char *why,
                           size_t why_size) TOPO_MUST_CHECK;

typedef struct topo_facts topo_facts;

/* source names the source in provenance and messages ("netbox", "ufm",
 * "ibnetdiscover:dump.txt"); copied. 0, TOPO_EINVALID (empty source) or
 * TOPO_ENOMEM. */
int topo_facts_create(topo_facts **out, const char *source, topo_err *err) TOPO_MUST_CHECK;
void topo_facts_free(topo_facts *facts);
/* Frees what only adding cables needs (their index, a quarter of a large
 * fabric's facts), once the facts are complete and only read: a cable
 * added afterwards rebuilds it first. NULL-safe. */
void topo_facts_shrink(topo_facts *facts);
const char *topo_facts_source(const topo_facts *facts);

/* A host as the source names it (not yet mapped to a node name). *out_index
 * (may be NULL) is its index. TOPO_EINVALID for an empty name. */
int topo_facts_add_host(topo_facts *facts, const char *name, size_t *out_index,
                        topo_err *err) TOPO_MUST_CHECK;

/* A level value the source states for a host (adding the host if needed).
 * The same value again is a no-op; a different one is TOPO_ECONFLICT naming
 * both, and the first stays (a source that contradicts itself is reported,
 * not resolved by order). TOPO_EINVALID for an empty value or for
 * TOPO_LEVEL_SPINE/LEAF, which come from the switch graph, and HOSTNAME,
 * which is the node's own name. */
int topo_facts_set_level(topo_facts *facts, const char *host, topo_level level, const char *value,
                         topo_err *err) TOPO_MUST_CHECK;

/* A switch by a stable id (an InfiniBand switch's node GUID as topo/guid.h
 * writes it, whichever fabric source saw it,
 * an LLDP neighbour's SysName) and a readable name (its node description;
 * NULL or "" gives the id). The first name given stays. */
int topo_facts_add_switch(topo_facts *facts, const char *id, const char *name, size_t *out_index,
                          topo_err *err) TOPO_MUST_CHECK;

/* A cable from a host adapter port to a switch (both added if needed).
 * host NULL: an adapter whose host the source cannot name (a default HCA
 * description); it still marks the switch as one with host ports, so it
 * stays a leaf. port is the host side's adapter or interface ("HCA-1",
 * "mlx5_0", "eth0"); NULL when unknown. Plane filters match on it. */
int topo_facts_add_host_link(topo_facts *facts, const char *host, const char *port,
                             const char *switch_id, topo_err *err) TOPO_MUST_CHECK;

/* A cable between two switches, in either order. A cable from a switch to
 * itself (a loopback port) is ignored. */
int topo_facts_add_switch_link(topo_facts *facts, const char *a, const char *b,
                               topo_err *err) TOPO_MUST_CHECK;

/* Reading back, in the order of first addition. Indices are stable. */
size_t topo_facts_host_count(const topo_facts *facts);
const char *topo_facts_host_name(const topo_facts *facts, size_t host);
/* The value the source stated for a level of a host, or NULL. */
const char *topo_facts_host_level(const topo_facts *facts, size_t host, topo_level level);
/* The index of a host by name: 0, or TOPO_ENOTFOUND. */
int topo_facts_find_host(const topo_facts *facts, const char *name, size_t *out_index);

size_t topo_facts_switch_count(const topo_facts *facts);
const char *topo_facts_switch_id(const topo_facts *facts, size_t sw);
const char *topo_facts_switch_name(const topo_facts *facts, size_t sw);
int topo_facts_find_switch(const topo_facts *facts, const char *id, size_t *out_index);

/* One cable. For a host cable, host is the host's index or TOPO_FACTS_NO_HOST
 * and port may be NULL; for a switch cable, host is TOPO_FACTS_NO_HOST and
 * other is the second switch's index. */
#define TOPO_FACTS_NO_HOST ((size_t)-1)
typedef struct topo_facts_link {
    int is_host_link;
    size_t sw;    /* the switch (for a switch cable, the lower index) */
    size_t other; /* switch cables: the other switch */
    size_t host;  /* host cables: the host, or TOPO_FACTS_NO_HOST */
    const char *port;
} topo_facts_link;

size_t topo_facts_link_count(const topo_facts *facts);
/* The i-th cable, i < topo_facts_link_count. */
topo_facts_link topo_facts_link_at(const topo_facts *facts, size_t i);

/* Copies what from (may be NULL) states of host name into into: the host, its
 * level values and its cables, with their switches and the switches'
 * names; a reader keeping a host's last good facts when its input could
 * not be read this time. *found is 0 when from has no such host (nothing
 * copied). Errors as the adds' (a level value into already states
 * differently is TOPO_ECONFLICT). */
int topo_facts_copy_host(int *found, topo_facts *into, const topo_facts *from, const char *name,
                         topo_err *err) TOPO_MUST_CHECK;

/* Conflicts a source found in its own records ("duplicate GUID ..."), one
 * line each, copied; the plan reports and counts them with its own
 * (topo_plan_add_facts). Not kept in the cache's facts document: a source
 * read again reports them again. */
int topo_facts_add_conflict(topo_facts *facts, const char *text, topo_err *err);
size_t topo_facts_conflict_count(const topo_facts *facts);
const char *topo_facts_conflict(const topo_facts *facts, size_t i);

#endif
