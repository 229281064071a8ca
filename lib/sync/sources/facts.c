/* One source's facts: hosts, their stated levels, switches and cables
 * (include/topo/facts.h). Strings live in one pool; names are indexed by
 * string maps whose keys are those pooled strings. Cables are 16-byte
 * records of indices (a large fabric has a hundred thousand), deduplicated
 * by an index set over their endpoints, so that a dump that lists a cable
 * from both ends (ibnetdiscover does) yields it once; that set is freed
 * once the facts are complete (topo_facts_shrink). */
#include "topo/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/idxset.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/str.h"
#include "topo/strmap.h"

typedef struct host {
    const char *name;
    const char *levels[TOPO_LEVEL_COUNT];
} host;

typedef struct sw {
    const char *id;
    const char *name;
} sw;

/* A cable as topo_facts_link gives it, in indices that fit 32 bits (the
 * tables stop at TOPO_MAX_FACTS_ENTRIES). */
#define NONE UINT32_MAX
typedef struct cable {
    uint32_t sw;
    uint32_t other; /* the second switch; NONE for a host cable */
    uint32_t host;  /* NONE for none or a switch cable */
    uint32_t port;  /* an index into ports, NONE for none */
} cable;

struct topo_facts {
    const char *source;
    topo_pool *pool;
    TOPO_ARRAY(host) hosts;
    TOPO_ARRAY(sw) switches;
    TOPO_ARRAY(cable) links;
    topo_strmap *host_index;
    topo_strmap *switch_index;
    topo_idxset *link_index; /* NULL after topo_facts_shrink until the next cable */
    /* Port names, one pooled copy each: a fabric has a few ("mlx5_0"..7). */
    topo_strmap *port_index; /* name -> index into ports */
    TOPO_ARRAY(const char *) ports;
    TOPO_ARRAY(const char *) conflicts; /* pooled lines */
};

static const char *const level_names[TOPO_LEVEL_COUNT] = {
#define TOPO_XX_LEVEL_NAME(name, text) text,
    TOPO_LEVEL_MAP(TOPO_XX_LEVEL_NAME)
#undef TOPO_XX_LEVEL_NAME
};

const char *topo_level_name(topo_level level)
{
    return (unsigned)level < TOPO_LEVEL_COUNT ? level_names[level] : NULL;
}

int topo_level_parse(topo_level *out, const char *name)
{
    for (int i = 0; i < TOPO_LEVEL_COUNT; i++) {
        if (name && strcmp(name, level_names[i]) == 0) {
            *out = (topo_level)i;
            return 0;
        }
    }
    return TOPO_ENOTFOUND;
}

int topo_level_order_check(size_t *bad, const topo_level *levels, size_t n, char *why,
                           size_t why_size)
{
    for (size_t i = 1; i < n; i++) {
        if (levels[i] > levels[i - 1])
            continue;
        *bad = i;
        if (levels[i] == levels[i - 1]) {
            snprintf(why, why_size, "%s repeated", topo_level_name(levels[i]));
        } else {
            char order[128];
            size_t used = 0;
            for (int l = 0; l < TOPO_LEVEL_COUNT && used < sizeof order; l++)
                used += (size_t)snprintf(order + used, sizeof order - used, "%s%s",
                                         l ? ", " : "", level_names[l]);
            snprintf(why, why_size, "%s before %s: levels go coarsest first (%s)",
                     topo_level_name(levels[i - 1]), topo_level_name(levels[i]), order);
        }
        return TOPO_EINVALID;
    }
    return 0;
}

int topo_facts_create(topo_facts **out, const char *source, topo_err *err)
{
    *out = NULL;
    if (!source || !*source)
        return topo_err_set(err, TOPO_EINVALID, "facts: empty source name");
    topo_facts *f = calloc(1, sizeof(*f));
    if (!f)
        return topo_err_nomem(err, "facts");
    f->pool = topo_pool_create();
    f->host_index = topo_strmap_create(64);
    f->switch_index = topo_strmap_create(64);
    f->link_index = topo_idxset_create(256);
    f->port_index = topo_strmap_create(16);
    f->source = f->pool ? topo_pool_strdup(f->pool, source) : NULL;
    if (!f->source || !f->host_index || !f->switch_index || !f->link_index || !f->port_index) {
        topo_facts_free(f);
        return topo_err_nomem(err, "facts");
    }
    *out = f;
    return 0;
}

void topo_facts_free(topo_facts *facts)
{
    if (!facts)
        return;
    free(facts->hosts.items);
    free(facts->switches.items);
    free(facts->links.items);
    topo_strmap_free(facts->host_index);
    topo_strmap_free(facts->switch_index);
    topo_idxset_free(facts->link_index);
    topo_strmap_free(facts->port_index);
    free(facts->ports.items);
    free(facts->conflicts.items);
    topo_pool_free(facts->pool);
    free(facts);
}

void topo_facts_shrink(topo_facts *facts)
{
    if (!facts)
        return;
    topo_idxset_free(facts->link_index);
    facts->link_index = NULL;
}

const char *topo_facts_source(const topo_facts *facts)
{
    return facts->source;
}

/* Room for one more entry in a table that is indexed by int32 map values. */
static int check_room(const topo_facts *f, size_t n, const char *what, topo_err *err)
{
    if (n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "%s: more than %u %s", f->source,
                            (unsigned)TOPO_MAX_FACTS_ENTRIES, what);
    return 0;
}

int topo_facts_add_host(topo_facts *facts, const char *name, size_t *out_index, topo_err *err)
{
    if (!name || !*name)
        return topo_err_set(err, TOPO_EINVALID, "%s: a host with an empty name", facts->source);
    int32_t found = topo_strmap_get(facts->host_index, name);
    if (found >= 0) {
        if (out_index)
            *out_index = (size_t)found;
        return 0;
    }
    int rc = check_room(facts, facts->hosts.n, "hosts", err);
    if (rc != 0)
        return rc;
    host h = {.name = topo_pool_strdup(facts->pool, name)};
    if (!h.name || TOPO_ARRAY_GROW(&facts->hosts) != 0 ||
        topo_strmap_put(facts->host_index, h.name, (int32_t)facts->hosts.n) != 0)
        return topo_err_nomem(err, "facts: host");
    facts->hosts.items[facts->hosts.n] = h;
    if (out_index)
        *out_index = facts->hosts.n;
    facts->hosts.n++;
    return 0;
}

int topo_facts_set_level(topo_facts *facts, const char *host_name, topo_level level,
                         const char *value, topo_err *err)
{
    if ((unsigned)level >= TOPO_LEVEL_COUNT || level == TOPO_LEVEL_SPINE ||
        level == TOPO_LEVEL_LEAF || level == TOPO_LEVEL_HOSTNAME)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: level %s is not stated by a source (it is derived)",
                            facts->source, topo_level_name(level) ? topo_level_name(level) : "?");
    if (!value || !*value)
        return topo_err_set(err, TOPO_EINVALID, "%s: host %s: empty %s", facts->source,
                            host_name ? host_name : "", level_names[level]);
    size_t i = 0;
    int rc = topo_facts_add_host(facts, host_name, &i, err);
    if (rc != 0)
        return rc;
    host *h = &facts->hosts.items[i];
    if (h->levels[level]) {
        if (strcmp(h->levels[level], value) == 0)
            return 0;
        return topo_err_set(err, TOPO_ECONFLICT, "%s: host %s: %s is both \"%s\" and \"%s\"",
                            facts->source, h->name, level_names[level], h->levels[level], value);
    }
    h->levels[level] = topo_pool_strdup(facts->pool, value);
    return h->levels[level] ? 0 : topo_err_nomem(err, "facts: level");
}

int topo_facts_add_switch(topo_facts *facts, const char *id, const char *name, size_t *out_index,
                          topo_err *err)
{
    if (!id || !*id)
        return topo_err_set(err, TOPO_EINVALID, "%s: a switch with an empty id", facts->source);
    int32_t found = topo_strmap_get(facts->switch_index, id);
    if (found >= 0) {
        if (out_index)
            *out_index = (size_t)found;
        return 0;
    }
    int rc = check_room(facts, facts->switches.n, "switches", err);
    if (rc != 0)
        return rc;
    sw s = {.id = topo_pool_strdup(facts->pool, id)};
    s.name = (name && *name) ? topo_pool_strdup(facts->pool, name) : s.id;
    if (!s.id || !s.name || TOPO_ARRAY_GROW(&facts->switches) != 0 ||
        topo_strmap_put(facts->switch_index, s.id, (int32_t)facts->switches.n) != 0)
        return topo_err_nomem(err, "facts: switch");
    facts->switches.items[facts->switches.n] = s;
    if (out_index)
        *out_index = facts->switches.n;
    facts->switches.n++;
    return 0;
}

/* A cable being added: its record, the port by name (not yet pooled). */
typedef struct probe {
    cable c;
    const char *port; /* NULL: none */
} probe;

static uint64_t cable_hash(const cable *c, const char *port)
{
    uint64_t h = topo_idxset_mix(0, c->sw);
    h = topo_idxset_mix(h, c->other);
    h = topo_idxset_mix(h, c->host);
    return topo_idxset_mix(h, port ? topo_str_hash(port) : 0);
}

static int same_cable(uint32_t index, const void *probe_, const void *facts_)
{
    const probe *p = probe_;
    const topo_facts *facts = facts_;
    const cable *c = &facts->links.items[index];
    if (c->sw != p->c.sw || c->other != p->c.other || c->host != p->c.host)
        return 0;
    if (c->port == NONE || !p->port)
        return c->port == NONE && !p->port;
    return strcmp(facts->ports.items[c->port], p->port) == 0;
}

/* The index of every cable, after topo_facts_shrink dropped it. */
static int index_links(topo_facts *facts)
{
    facts->link_index = topo_idxset_create(facts->links.n);
    if (!facts->link_index)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < facts->links.n; i++) {
        const cable *c = &facts->links.items[i];
        const char *port = c->port != NONE ? facts->ports.items[c->port] : NULL;
        if (topo_idxset_add(facts->link_index, cable_hash(c, port), (uint32_t)i) != 0)
            return TOPO_ENOMEM;
    }
    return 0;
}

/* The index in ports of the one pooled copy of a port name; NONE when out
 * of memory. */
static uint32_t port_name(topo_facts *facts, const char *port)
{
    int32_t found = topo_strmap_get(facts->port_index, port);
    if (found >= 0)
        return (uint32_t)found;
    const char *copy = topo_pool_strdup(facts->pool, port);
    if (!copy || TOPO_ARRAY_PUSH(&facts->ports, copy) != 0 ||
        topo_strmap_put(facts->port_index, copy, (int32_t)(facts->ports.n - 1)) != 0)
        return NONE;
    return (uint32_t)(facts->ports.n - 1);
}

/* Adds a cable unless an equal one is there; port (NULL or "": none) is
 * copied only then. */
static int add_link(topo_facts *facts, cable c, const char *port, topo_err *err)
{
    probe p = {c, port && *port ? port : NULL};
    uint64_t h = cable_hash(&c, p.port);
    if (!facts->link_index && index_links(facts) != 0)
        return topo_err_nomem(err, "facts: cable");
    if (topo_idxset_find(facts->link_index, h, same_cable, &p, facts) >= 0)
        return 0;
    int rc = check_room(facts, facts->links.n, "cables", err);
    if (rc != 0)
        return rc;
    if (p.port && (c.port = port_name(facts, p.port)) == NONE)
        return topo_err_nomem(err, "facts: cable");
    if (TOPO_ARRAY_GROW(&facts->links) != 0 ||
        topo_idxset_add(facts->link_index, h, (uint32_t)facts->links.n) != 0)
        return topo_err_nomem(err, "facts: cable");
    facts->links.items[facts->links.n++] = c;
    return 0;
}

int topo_facts_add_host_link(topo_facts *facts, const char *host_name, const char *port,
                             const char *switch_id, topo_err *err)
{
    size_t at_sw = 0, at_host = TOPO_FACTS_NO_HOST;
    int rc = topo_facts_add_switch(facts, switch_id, NULL, &at_sw, err);
    if (rc == 0 && host_name)
        rc = topo_facts_add_host(facts, host_name, &at_host, err);
    /* Unnamed adapters are told apart by their port name only; two of them
     * on one switch with no port name are one cable, which is all a leaf
     * test needs. */
    cable c = {(uint32_t)at_sw, NONE, at_host == TOPO_FACTS_NO_HOST ? NONE : (uint32_t)at_host,
               NONE};
    return rc != 0 ? rc : add_link(facts, c, port, err);
}

int topo_facts_add_switch_link(topo_facts *facts, const char *a, const char *b, topo_err *err)
{
    size_t ia = 0, ib = 0;
    int rc = topo_facts_add_switch(facts, a, NULL, &ia, err);
    if (rc == 0)
        rc = topo_facts_add_switch(facts, b, NULL, &ib, err);
    if (rc != 0 || ia == ib)
        return rc;
    cable c = {(uint32_t)(ia < ib ? ia : ib), (uint32_t)(ia < ib ? ib : ia), NONE, NONE};
    return add_link(facts, c, NULL, err);
}

size_t topo_facts_host_count(const topo_facts *facts)
{
    return facts->hosts.n;
}

const char *topo_facts_host_name(const topo_facts *facts, size_t i)
{
    return i < facts->hosts.n ? facts->hosts.items[i].name : NULL;
}

const char *topo_facts_host_level(const topo_facts *facts, size_t i, topo_level level)
{
    if (i >= facts->hosts.n || (unsigned)level >= TOPO_LEVEL_COUNT)
        return NULL;
    return facts->hosts.items[i].levels[level];
}

int topo_facts_find_host(const topo_facts *facts, const char *name, size_t *out_index)
{
    int32_t found = name ? topo_strmap_get(facts->host_index, name) : -1;
    if (found < 0)
        return TOPO_ENOTFOUND;
    *out_index = (size_t)found;
    return 0;
}

size_t topo_facts_switch_count(const topo_facts *facts)
{
    return facts->switches.n;
}

const char *topo_facts_switch_id(const topo_facts *facts, size_t i)
{
    return i < facts->switches.n ? facts->switches.items[i].id : NULL;
}

const char *topo_facts_switch_name(const topo_facts *facts, size_t i)
{
    return i < facts->switches.n ? facts->switches.items[i].name : NULL;
}

int topo_facts_find_switch(const topo_facts *facts, const char *id, size_t *out_index)
{
    int32_t found = id ? topo_strmap_get(facts->switch_index, id) : -1;
    if (found < 0)
        return TOPO_ENOTFOUND;
    *out_index = (size_t)found;
    return 0;
}

size_t topo_facts_link_count(const topo_facts *facts)
{
    return facts->links.n;
}

topo_facts_link topo_facts_link_at(const topo_facts *facts, size_t i)
{
    const cable *c = &facts->links.items[i];
    topo_facts_link l = {.is_host_link = c->other == NONE,
                         .sw = c->sw,
                         .other = c->other == NONE ? 0 : c->other,
                         .host = c->host == NONE ? TOPO_FACTS_NO_HOST : c->host,
                         .port = c->port == NONE ? NULL : facts->ports.items[c->port]};
    return l;
}

int topo_facts_copy_host(int *found, topo_facts *into, const topo_facts *from, const char *name,
                         topo_err *err)
{
    size_t h = 0;
    int rc = 0;
    *found = 0;
    if (from == NULL || topo_facts_find_host(from, name, &h) != 0)
        return 0;
    *found = 1;
    rc = topo_facts_add_host(into, name, NULL, err);
    for (int l = 0; rc == 0 && l < TOPO_LEVEL_COUNT; l++) {
        const char *v = topo_facts_host_level(from, h, (topo_level)l);
        if (v != NULL)
            rc = topo_facts_set_level(into, name, (topo_level)l, v, err);
    }
    /* Its cables, each switch with the name it had (the first name given
     * stays, so it goes in before the cable adds the switch by its id). */
    for (size_t i = 0; rc == 0 && i < from->links.n; i++) {
        topo_facts_link k = topo_facts_link_at(from, i);
        if (!k.is_host_link || k.host != h)
            continue;
        const char *id = topo_facts_switch_id(from, k.sw);
        rc = topo_facts_add_switch(into, id, topo_facts_switch_name(from, k.sw), NULL, err);
        if (rc == 0)
            rc = topo_facts_add_host_link(into, name, k.port, id, err);
    }
    return rc;
}

int topo_facts_add_conflict(topo_facts *facts, const char *text, topo_err *err)
{
    int rc = check_room(facts, facts->conflicts.n, "conflicts", err);
    if (rc != 0)
        return rc;
    const char *copy = topo_pool_strdup(facts->pool, text ? text : "");
    if (!copy || TOPO_ARRAY_PUSH(&facts->conflicts, copy) != 0)
        return topo_err_nomem(err, "facts: conflict");
    return 0;
}

size_t topo_facts_conflict_count(const topo_facts *facts)
{
    return facts->conflicts.n;
}

const char *topo_facts_conflict(const topo_facts *facts, size_t i)
{
    return i < facts->conflicts.n ? facts->conflicts.items[i] : NULL;
}
