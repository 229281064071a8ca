/* Whether a scanned ibnetdiscover dump is whole. ibnetdiscover prints every
 * node it discovered as a stanza and every cable from both of its ends, and
 * ends every line; a dump read while `ibnetdiscover > file` rewrites it
 * breaks one of these wherever it is cut: the stanzas after the cut are
 * missing (a node named on a port line but never declared), the stanza at
 * the cut is short (a cable printed from one end only), or the last line
 * is unfinished; an empty file is one cut before its first stanza. Such a
 * dump gives a wrong leaf and spurious spine groups,
 * so it is refused whole, naming the first line that shows it. All the
 * real dumps of fixtures/sources/ibnetdiscover satisfy both rules. */
#include <stdlib.h>
#include <string.h>

#include "ibnetdiscover_internal.h"

int ibd_check_last_byte(const char *source, int has_text, char last, int line, topo_err *err)
{
    if (!has_text || last == '\n')
        return 0;
    return ibd_fail(err, TOPO_EINVALID, source, line,
                    "the last line has no newline: a dump cut while written");
}

/* A port line's local end as a sort key, with its index. */
typedef struct port_key {
    uint64_t key; /* node << 32 | port */
    uint32_t at;  /* index into ports */
} port_key;

static uint64_t key_of(uint32_t node, uint32_t port)
{
    return (uint64_t)node << 32 | port;
}

static int by_key(const void *a, const void *b)
{
    const port_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int undeclared(const ibd_dump *d, const ibd_port *p, topo_err *err)
{
    return ibd_fail(err, TOPO_EINVALID, d->source, (int)p->line,
                    "\"%s\"[%u] is named here but never declared (no Switch, Ca "
                    "or Rt stanza of "
                    "its own): a truncated or partial dump",
                    d->nodes.items[p->rnode].id, (unsigned)p->rport);
}

/* 1 when the remote end of p prints the same cable back. */
static int printed_back(const ibd_dump *d, const port_key *keys, const ibd_port *p)
{
    size_t lo = 0, hi = d->ports.n;
    uint64_t want = key_of(p->rnode, p->rport);
    while (lo < hi) { /* the first key >= want */
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].key < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A node printed twice prints its cables twice: any of them will do. */
    for (; lo < d->ports.n && keys[lo].key == want; lo++) {
        const ibd_port *back = &d->ports.items[keys[lo].at];
        if (back->rnode == p->node && back->rport == p->port)
            return 1;
    }
    return 0;
}

int ibd_check(const ibd_dump *d, topo_err *err)
{
    /* The shell empties the file before ibnetdiscover writes a byte. */
    if (d->stanzas.n == 0)
        return ibd_fail(err, TOPO_EINVALID, d->source, d->stats.lines > 0 ? (int)d->stats.lines : 1,
                        "no Switch, Ca or Rt stanza (ibnetdiscover prints at least the node it "
                        "ran from): an empty or cut dump");
    for (size_t i = 0; i < d->ports.n; i++)
        if (!d->nodes.items[d->ports.items[i].rnode].stanza)
            return undeclared(d, &d->ports.items[i], err);
    if (d->ports.n == 0)
        return 0;
    port_key *keys = malloc(d->ports.n * sizeof(*keys));
    if (!keys)
        return topo_err_nomem(err, "ibnetdiscover");
    for (size_t i = 0; i < d->ports.n; i++)
        keys[i] = (port_key){key_of(d->ports.items[i].node, d->ports.items[i].port), (uint32_t)i};
    qsort(keys, d->ports.n, sizeof(*keys), by_key);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < d->ports.n; i++) {
        const ibd_port *p = &d->ports.items[i];
        if (!printed_back(d, keys, p))
            rc = ibd_fail(err, TOPO_EINVALID, d->source, (int)p->line,
                          "port [%u] of \"%s\" reaches \"%s\"[%u], whose stanza does not "
                          "print that cable back: a stanza cut short, or a dump that changed "
                          "while read",
                          (unsigned)p->port, d->nodes.items[p->node].id,
                          d->nodes.items[p->rnode].id, (unsigned)p->rport);
    }
    free(keys);
    return rc;
}
