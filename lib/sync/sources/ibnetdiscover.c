/* An ibnetdiscover dump into facts (include/topo/ibnetdiscover.h): the scan
 * (ibnetdiscover_scan.c) reads every line into stanza records first, so a
 * syntax error leaves the facts untouched and an adapter's own Ca stanza
 * can name it even when the switch lines that reach it come earlier; then
 * nodes and cables become facts here. */
#define _POSIX_C_SOURCE 200809L
#include "topo/ibnetdiscover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "ibnetdiscover_internal.h"
#include "topo/buf.h"
#include "topo/codec.h"
#include "topo/guid.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/strmap.h"

static const char AGGREGATION_SUFFIX[] = "Aggregation Node";

static ibd_span trimmed(const char *s)
{
    ibd_span t = {s, s + strlen(s)};
    ibd_trim(&t);
    return t;
}

/* A SHARP Aggregation Node by its description ("Mellanox Technologies
 * Aggregation Node"): a function of the switch, not a cabled adapter. */
static int is_aggregation_desc(const char *desc)
{
    if (!desc)
        return 0;
    ibd_span t = trimmed(desc);
    size_t n = (size_t)(t.end - t.p), k = sizeof(AGGREGATION_SUFFIX) - 1;
    return n >= k && memcmp(t.end - k, AGGREGATION_SUFFIX, k) == 0;
}

/* The host and adapter an adapter's name (given_name) gives: exactly two
 * words "<host> <hca>" after trimming (blank runs between them are one
 * separator); from the node-name map, one word is a host alone. Anything
 * else names no host (*host NULL). */
static int adapter_names(topo_pool *pool, const char *desc, int from_map, const char **host,
                         const char **port, topo_err *err)
{
    *host = *port = NULL;
    if (!desc)
        return 0;
    ibd_span t = trimmed(desc);
    const char *w1 = t.p;
    while (t.p < t.end && !ibd_is_blank(*t.p))
        t.p++;
    const char *w1_end = t.p;
    ibd_skip_blanks(&t);
    const char *w2 = t.p;
    while (t.p < t.end && !ibd_is_blank(*t.p))
        t.p++;
    const char *w2_end = t.p;
    if (w1 == w1_end || t.p != t.end || (w2 == w2_end && !from_map))
        return 0; /* no word, three or more, or one not from the map */
    *host = topo_pool_strndup(pool, w1, (size_t)(w1_end - w1));
    if (w2 != w2_end)
        *port = topo_pool_strndup(pool, w2, (size_t)(w2_end - w2));
    if (!*host || (w2 != w2_end && !*port))
        return topo_err_nomem(err, "ibnetdiscover");
    return 0;
}

/* A node's name as given, from the map or its description; NULL for none. */
static const char *given_name(const topo_ibnetdiscover_map *map, uint64_t guid, const char *desc,
                              int *from_map)
{
    const char *mapped = topo_ibnetdiscover_map_get(map, guid);
    *from_map = mapped != NULL;
    return mapped ? mapped : desc;
}

/* The same trimmed, pooled; NULL for none. */
static const char *node_name(ibd_dump *d, const topo_ibnetdiscover_map *map, uint64_t guid,
                             const char *desc, int *from_map)
{
    const char *name = given_name(map, guid, desc, from_map);
    if (!name)
        return NULL;
    ibd_span t = trimmed(name);
    return topo_pool_strndup(d->pool, t.p, (size_t)(t.end - t.p));
}

/* Names every adapter stanza and marks Aggregation Nodes: by description,
 * or by a cable to a switch of the same system image. */
static int resolve_adapters(ibd_dump *d, const topo_ibnetdiscover_map *map, topo_err *err)
{
    for (size_t i = 0; i < d->ports.n; i++) {
        const ibd_port *p = &d->ports.items[i];
        ibd_node *a = &d->nodes.items[p->node];
        ibd_node *b = &d->nodes.items[p->rnode];
        ibd_node *ca = a->kind == 'H' ? a : b, *sw = a->kind == 'S' ? a : b;
        if (ca->kind == 'H' && sw->kind == 'S' && ca != sw && ca->has_sysimg && sw->has_sysimg &&
            ca->sysimg == sw->sysimg)
            ca->aggregation = 1;
    }
    for (size_t i = 0; i < d->stanzas.n; i++) {
        ibd_node *n = &d->nodes.items[d->stanzas.items[i]];
        if (n->kind != 'H')
            continue;
        n->aggregation |= (unsigned char)is_aggregation_desc(n->desc);
        if (n->aggregation) {
            d->stats.aggregation_nodes++;
            continue;
        }
        int from_map = 0;
        const char *name = given_name(map, n->guid, n->desc, &from_map);
        int rc = adapter_names(d->pool, name, from_map, &n->host, &n->port, err);
        if (rc != 0)
            return rc;
        d->stats.adapters++;
        d->stats.adapters_mapped += (size_t)from_map;
        d->stats.adapters_unnamed += n->host == NULL;
    }
    return 0;
}

static int add_switch(ibd_dump *d, topo_facts *into, const topo_ibnetdiscover_map *map,
                      uint64_t guid, const char *desc, topo_err *err)
{
    char id[TOPO_GUID_TEXT_SIZE];
    int from_map = 0;
    topo_guid_format(id, guid);
    const char *name = node_name(d, map, guid, desc, &from_map);
    if ((desc || from_map) && !name)
        return topo_err_nomem(err, "ibnetdiscover");
    return topo_facts_add_switch(into, id, name, NULL, err);
}

/* A cable between a switch and an adapter (both declared: ibd_check). */
static int host_cable(topo_facts *into, const ibd_node *sw, const ibd_node *ca, topo_err *err)
{
    char id[TOPO_GUID_TEXT_SIZE];
    if (ca->aggregation || ca->disputed)
        return 0;
    topo_guid_format(id, sw->guid);
    return topo_facts_add_host_link(into, ca->host, ca->port, id, err);
}

/* Every remote end has a stanza of its own (ibd_check refuses a dump
 * where one has not), so its switch is added and its adapter named. */
static int one_cable(ibd_dump *d, topo_facts *into, const ibd_port *p, topo_err *err)
{
    const ibd_node *a = &d->nodes.items[p->node];
    const ibd_node *b = &d->nodes.items[p->rnode];
    if (a->kind == 'R' || b->kind == 'R') {
        d->stats.router_ports++;
        return 0;
    }
    if (a->kind == 'H' && b->kind == 'H') {
        d->stats.adapter_links++;
        return 0;
    }
    if (a->kind == 'S' && b->kind == 'S') {
        char ia[TOPO_GUID_TEXT_SIZE], ib[TOPO_GUID_TEXT_SIZE];
        topo_guid_format(ia, a->guid);
        topo_guid_format(ib, b->guid);
        return topo_facts_add_switch_link(into, ia, ib, err);
    }
    return a->kind == 'S' ? host_cable(into, a, b, err) : host_cable(into, b, a, err);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_dup(const void *a, const void *b)
{
    const ibd_dup *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

/* The first of node i's duplicates in d->dups (sorted by node), or
 * d->dups.n. */
static size_t first_dup(const ibd_dump *d, uint32_t i)
{
    size_t lo = 0, hi = d->dups.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->dups.items[mid].node < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The descriptions of the records of adapter node i (its own, then its
 * duplicates'), sorted and distinct, into out (room for 1 + dups); their
 * count. */
static size_t adapter_records(const char **out, const ibd_dump *d, uint32_t i)
{
    size_t n = 0;
    if (d->nodes.items[i].desc)
        out[n++] = d->nodes.items[i].desc;
    for (size_t k = first_dup(d, i); k < d->dups.n && d->dups.items[k].node == i; k++)
        out[n++] = d->dups.items[k].desc;
    qsort(out, n, sizeof(*out), cmp_str);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (m == 0 || strcmp(out[k], out[m - 1]) != 0)
            out[m++] = out[k];
    return m;
}

/* One disputed adapter: its conflict line, and the hosts its records name
 * (unplaced facts, as for an adapter without a cable). */
static int dispute(ibd_dump *d, topo_facts *into, const topo_ibnetdiscover_map *map,
                   const char *sw, const char *elsewhere, uint32_t i, const char **descs,
                   topo_buf *line, topo_err *err)
{
    ibd_node *ca = &d->nodes.items[i];
    char guid[TOPO_GUID_TEXT_SIZE];
    size_t n = adapter_records(descs, d, i);
    int rc = 0;
    ca->disputed = 1;
    topo_guid_format(guid, ca->guid);
    topo_buf_clear(line);
    topo_buf_printf(line, "duplicate GUID %s: ", guid);
    if (sw)
        topo_buf_printf(line, "switch \"%.80s\"%s and ", sw, elsewhere);
    topo_buf_printf(line, "host record%s", n > 1 ? "s" : "");
    for (size_t k = 0; k < n && k < 8; k++)
        topo_buf_printf(line, "%s \"%.80s\"", k ? "," : "", descs[k]);
    if (n > 8)
        topo_buf_printf(line, " and %zu more", n - 8);
    topo_buf_printf(line, sw ? " claim it: the switch keeps it; no fabric facts from %s"
                             : " claim it: no fabric facts from %s",
                    n > 1 ? "those records" : "that record");
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const char *host = NULL, *port = NULL;
        int from_map = 0;
        const char *name = given_name(map, ca->guid, descs[k], &from_map);
        rc = adapter_names(d->pool, name, from_map, &host, &port, err);
        if (rc == 0 && host)
            rc = topo_facts_add_host(into, host, NULL, err);
    }
    return rc != 0 ? rc : line->error != 0 ? topo_err_nomem(err, "ibnetdiscover") : 0;
}

/* Adapters whose GUID a switch has, or that Ca stanzas declare with
 * different descriptions: no cable (host_cable), one conflict line each,
 * in GUID order, so that the report does not depend on the dump's order. */
static int find_disputes(ibd_dump *d, topo_facts *into, const topo_ibnetdiscover_opts *opts,
                         topo_err *err)
{
    topo_strmap *switches = topo_strmap_create(d->stanzas.n);
    const char **descs = malloc((d->dups.n + 2) * sizeof(*descs));
    TOPO_ARRAY(const char *) lines = {0};
    topo_buf line = TOPO_BUF_INIT(4096);
    int rc = switches && descs ? 0 : topo_err_nomem(err, "ibnetdiscover");
    if (d->dups.n > 1)
        qsort(d->dups.items, d->dups.n, sizeof(*d->dups.items), cmp_dup);
    for (size_t i = 0; rc == 0 && i < d->stanzas.n; i++) {
        const ibd_node *n = &d->nodes.items[d->stanzas.items[i]];
        if (n->kind == 'S' && topo_strmap_put(switches, n->id + 2, (int32_t)d->stanzas.items[i]))
            rc = topo_err_nomem(err, "ibnetdiscover");
    }
    for (size_t i = 0; rc == 0 && i < d->stanzas.n; i++) {
        uint32_t at = d->stanzas.items[i];
        const ibd_node *n = &d->nodes.items[at];
        if (n->kind != 'H' || n->aggregation)
            continue;
        int32_t sw = topo_strmap_get(switches, n->id + 2);
        const char *sw_name = NULL, *elsewhere = "";
        size_t k = first_dup(d, at), other = 0;
        char guid[TOPO_GUID_TEXT_SIZE];
        if (sw >= 0) {
            const ibd_node *s = &d->nodes.items[sw];
            sw_name = s->desc ? s->desc : s->id;
        } else if (opts->other_dumps) {
            topo_guid_format(guid, n->guid);
            if (topo_facts_find_switch(opts->other_dumps, guid, &other) == 0) {
                sw_name = topo_facts_switch_name(opts->other_dumps, other);
                sw_name = sw_name ? sw_name : guid;
                elsewhere = " (of another dump)";
            }
        }
        if (sw_name == NULL && (k == d->dups.n || d->dups.items[k].node != at))
            continue;
        rc = dispute(d, into, opts->map, sw_name, elsewhere, at, descs, &line, err);
        const char *copy = rc == 0 ? topo_pool_strdup(d->pool, line.ptr) : NULL;
        if (rc == 0 && (!copy || TOPO_ARRAY_PUSH(&lines, copy) != 0))
            rc = topo_err_nomem(err, "ibnetdiscover");
    }
    if (rc == 0 && lines.n > 1)
        qsort(lines.items, lines.n, sizeof(*lines.items), cmp_str);
    for (size_t i = 0; rc == 0 && i < lines.n; i++) {
        if (i < TOPO_MAX_LOGGED_DUPLICATES)
            topo_log(TOPO_LOG_WARN, "%s: %s", d->source, lines.items[i]);
        rc = topo_facts_add_conflict(into, lines.items[i], err);
    }
    if (rc == 0 && lines.n > TOPO_MAX_LOGGED_DUPLICATES)
        topo_log(TOPO_LOG_WARN, "%s: %zu more duplicate GUIDs, listed with the plan's conflicts",
                 d->source, lines.n - TOPO_MAX_LOGGED_DUPLICATES);
    d->stats.duplicate_guids = lines.n;
    topo_buf_dispose(&line);
    free(lines.items);
    free(descs);
    topo_strmap_free(switches);
    return rc;
}

static int to_facts(ibd_dump *d, topo_facts *into, const topo_ibnetdiscover_opts *opts,
                    topo_err *err)
{
    const topo_ibnetdiscover_map *map = opts->map;
    int rc = opts->switches_only ? 0 : resolve_adapters(d, map, err);
    if (rc == 0 && !opts->switches_only)
        rc = find_disputes(d, into, opts, err);
    for (size_t i = 0; rc == 0 && i < d->stanzas.n; i++) {
        const ibd_node *n = &d->nodes.items[d->stanzas.items[i]];
        if (n->kind == 'S')
            rc = add_switch(d, into, map, n->guid, n->desc, err);
    }
    if (opts->switches_only)
        return rc;
    for (size_t i = 0; rc == 0 && i < d->ports.n; i++)
        rc = one_cable(d, into, &d->ports.items[i], err);
    /* Named adapters without a cable still name their host: the fabric
     * reports it as one it cannot place. */
    for (size_t i = 0; rc == 0 && i < d->stanzas.n; i++) {
        const ibd_node *n = &d->nodes.items[d->stanzas.items[i]];
        if (n->kind == 'H' && n->host && !n->disputed)
            rc = topo_facts_add_host(into, n->host, NULL, err);
    }
    return rc;
}

/* The scan's records into facts and stats, once the whole dump is read. */
static int finish(ibd_dump *d, topo_facts *into, const topo_ibnetdiscover_opts *opts,
                  topo_ibnetdiscover_stats *stats, int rc, topo_err *err)
{
    if (rc == 0)
        rc = ibd_check(d, err);
    if (rc == 0)
        rc = to_facts(d, into, opts, err);
    if (stats)
        *stats = d->stats;
    ibd_dump_dispose(d);
    return rc;
}

int topo_ibnetdiscover_parse(topo_facts *into, const char *text, size_t len,
                             const topo_ibnetdiscover_opts *opts, topo_ibnetdiscover_stats *stats,
                             topo_err *err)
{
    ibd_dump d;
    const char *source = opts && opts->source ? opts->source : "ibnetdiscover";
    if (stats)
        memset(stats, 0, sizeof(*stats));
    if (len > TOPO_MAX_IBNETDISCOVER_DUMP)
        return topo_err_set(err, TOPO_ELIMIT, "%s: larger than %u bytes", source,
                            (unsigned)TOPO_MAX_IBNETDISCOVER_DUMP);
    int rc = ibd_dump_init(&d, source, err);
    if (rc != 0)
        return rc;
    topo_ibnetdiscover_opts o = opts ? *opts : (topo_ibnetdiscover_opts){0};
    return finish(&d, into, &o, stats, ibd_scan(&d, text, len, err), err);
}

/* The first pass over the file: its size against the limit (messages as
 * topo_codec_read_file's), the line of its first NUL byte (0 for none) and
 * its last byte and line, read in small blocks, so that the errors come in
 * the order the in-memory parse gives them without holding the text. */
typedef struct file_shape {
    int nul_line;
    int last_line;
    int has_text;
    char last;
} file_shape;

static int check_file(FILE *f, const char *path, file_shape *shape, topo_err *err)
{
    char block[64 * 1024];
    size_t total = 0, n;
    int line = 1;
    *shape = (file_shape){0};
    while ((n = fread(block, 1, sizeof(block), f)) > 0) {
        total += n;
        if (total > TOPO_MAX_IBNETDISCOVER_DUMP)
            break;
        shape->has_text = 1;
        shape->last = block[n - 1];
        const char *nul = shape->nul_line ? NULL : memchr(block, '\0', n);
        if (nul)
            shape->nul_line = ibd_nul_line(block, nul, line);
        else if (!shape->nul_line)
            line = ibd_nul_line(block, block + n, line);
    }
    shape->last_line = line;
    if (ferror(f))
        return topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
    if (total > TOPO_MAX_IBNETDISCOVER_DUMP)
        return topo_err_set(err, TOPO_ELIMIT, "%s: file is larger than the limit of %zu bytes",
                            path, (size_t)TOPO_MAX_IBNETDISCOVER_DUMP);
    if (fseek(f, 0, SEEK_SET) != 0)
        return topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
    return 0;
}

/* The second pass, line by line: only the scan's records are held. */
static int scan_file(ibd_dump *d, FILE *f, const char *path, topo_err *err)
{
    ibd_scanner s;
    char *line = NULL;
    size_t cap = 0, total = 0;
    ssize_t n;
    int rc = 0;
    ibd_scan_begin(&s, d, err);
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)n;
        total += len;
        /* The file changed since the first pass. */
        if (total > TOPO_MAX_IBNETDISCOVER_DUMP)
            rc = topo_err_set(err, TOPO_ELIMIT, "%s: file is larger than the limit of %zu bytes",
                              path, (size_t)TOPO_MAX_IBNETDISCOVER_DUMP);
        else if (memchr(line, '\0', len))
            rc = ibd_fail(err, TOPO_EINVALID, d->source, s.line + 1, "a NUL byte");
        else
            rc = ibd_scan_line(&s, line, len > 0 && line[len - 1] == '\n' ? len - 1 : len);
    }
    if (rc == 0 && ferror(f))
        rc = topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
    free(line);
    if (rc == 0)
        ibd_scan_end(&s);
    return rc;
}

int topo_ibnetdiscover_read_file(topo_facts *into, const char *path,
                                 const topo_ibnetdiscover_opts *opts,
                                 topo_ibnetdiscover_stats *stats, topo_err *err)
{
    topo_ibnetdiscover_opts o = opts ? *opts : (topo_ibnetdiscover_opts){0};
    ibd_dump d;
    file_shape shape;
    FILE *f = NULL;
    int fd = -1;
    if (!o.source)
        o.source = path;
    if (stats)
        memset(stats, 0, sizeof(*stats));
    /* A regular file only, streamed: anything else (a FIFO, a device) could
     * stall the reader for ever, and is refused without blocking on it. */
    int rc = topo_codec_open_regular_file(&fd, path, err);
    if (rc != 0)
        return rc;
    if ((f = fdopen(fd, "r")) == NULL) {
        rc = topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    rc = check_file(f, path, &shape, err);
    if (rc == 0 && shape.nul_line)
        rc = ibd_fail(err, TOPO_EINVALID, o.source, shape.nul_line, "a NUL byte");
    if (rc == 0)
        rc = ibd_check_last_byte(o.source, shape.has_text, shape.last, shape.last_line, err);
    if (rc == 0 && (rc = ibd_dump_init(&d, o.source, err)) == 0)
        rc = finish(&d, into, &o, stats, scan_file(&d, f, path, err), err);
    fclose(f);
    return rc;
}
