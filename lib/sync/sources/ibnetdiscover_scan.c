/* The first pass over an ibnetdiscover dump: every line into stanza records
 * (ibd_node, ibd_port), nothing interpreted yet. The shapes read, as
 * infiniband-diags prints them (SOURCE-FORMATS.md §6):
 *
 *   sysimgguid=0x2c5eab0300b87b40                                     (key=value)
 *   Switch  65 "S-2c5eab0300b87b40"  # "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" enhanced port 0 ...
 *   [1]  "H-e09d7303007a4bd8"[1](e09d7303007a4bd8)  # "a08-p1-dgx-04-c01 mlx5_5" lid 647 ...
 *   [35]  "S-2c5eab0300c26280"[32]  # "MF0;A10-P1-IBSPINE-02:MQM9701/U1" lid 236 4xNDR
 *   Ca  1 "H-ec0d9a03007d7d0b"  # "r-dcs96 HCA-2"
 *   [1](ec0d9a03007d7d0b)  "S-b8599f0300fc6de4"[24]  # lid 28 lmc 0 "MF0;r-ufm-sw95:..." ...
 *
 * (the dumps separate the fields with tabs).
 *
 * A description runs from the first quote after '#' to the last quote of
 * the line, so one holding a quote or a '#' still reads whole. Bracketed
 * groups after a port number (external port numbers in grouping mode) are
 * skipped. */
#include <stdlib.h>
#include <string.h>

#include "ibnetdiscover_internal.h"
#include "topo/guid.h"
#include "topo/log.h"

/* Unknown lines logged one by one before only the count goes on. */
#define IBD_WARN_LINES 5

int ibd_dump_init(ibd_dump *d, const char *source, topo_err *err)
{
    memset(d, 0, sizeof(*d));
    d->source = source;
    d->pool = topo_pool_create();
    d->index = topo_strmap_create(1024);
    d->descs = topo_strmap_create(1024);
    if (!d->pool || !d->index || !d->descs) {
        ibd_dump_dispose(d);
        return topo_err_nomem(err, "ibnetdiscover");
    }
    return 0;
}

void ibd_dump_dispose(ibd_dump *d)
{
    free(d->nodes.items);
    free(d->stanzas.items);
    free(d->ports.items);
    topo_strmap_free(d->index);
    topo_strmap_free(d->descs);
    free(d->desc_strs.items);
    free(d->dups.items);
    free(d->scratch);
    topo_pool_free(d->pool);
    memset(d, 0, sizeof(*d));
}

/* Ids are formatted for every port line: by hand, as topo_guid_format
 * (printf showed in the profile of bench_fabric). */
void ibd_format_id(char out[IBD_ID_SIZE], char kind, uint64_t guid)
{
    out[0] = kind;
    out[1] = '-';
    topo_guid_format(out + 2, guid);
}

const char *ibd_node_id(ibd_dump *d, char kind, uint64_t guid)
{
    char id[IBD_ID_SIZE];
    ibd_format_id(id, kind, guid);
    return topo_pool_strdup(d->pool, id);
}

size_t ibd_find_node(const ibd_dump *d, char kind, uint64_t guid)
{
    char id[IBD_ID_SIZE];
    if (!d->index)
        return SIZE_MAX;
    ibd_format_id(id, kind, guid);
    int32_t found = topo_strmap_get(d->index, id);
    return found >= 0 ? (size_t)found : SIZE_MAX;
}

typedef ibd_scanner scan;

static int bad(scan *s, const char *what)
{
    return ibd_fail(s->err, TOPO_EINVALID, s->d->source, s->line, "%s", what);
}

static int take_char(ibd_span *t, char c)
{
    if (t->p < t->end && *t->p == c) {
        t->p++;
        return 0;
    }
    return -1;
}

/* `"S-<hex>"` into kind and guid. */
static int take_quoted_id(ibd_span *t, char *kind, uint64_t *guid)
{
    if (take_char(t, '"') != 0 || t->end - t->p < 2)
        return -1;
    char k = t->p[0];
    if ((k != 'S' && k != 'H' && k != 'R') || t->p[1] != '-')
        return -1;
    t->p += 2;
    if (ibd_take_hex(t, guid) != 0 || take_char(t, '"') != 0)
        return -1;
    *kind = k;
    return 0;
}

/* `[<digits>]` into *number. */
static int take_port_number(ibd_span *t, uint32_t *number)
{
    if (take_char(t, '[') != 0)
        return -1;
    const char *start = t->p;
    uint32_t n = 0;
    while (t->p < t->end && *t->p >= '0' && *t->p <= '9')
        n = n * 10 + (uint32_t)(*t->p++ - '0');
    if (t->p == start || t->p - start > 5)
        return -1;
    *number = n;
    return take_char(t, ']');
}

/* After a port number: further `[...]` groups, then an optional `(<hex>)`
 * port GUID, blanks allowed before it. */
static int skip_port_extras(ibd_span *t)
{
    while (t->p < t->end && *t->p == '[') {
        const char *close = memchr(t->p, ']', (size_t)(t->end - t->p));
        if (!close || memchr(t->p, '"', (size_t)(close - t->p)))
            return -1;
        t->p = close + 1;
    }
    ibd_span look = *t;
    ibd_skip_blanks(&look);
    if (look.p < look.end && *look.p == '(') {
        uint64_t ignored = 0;
        look.p++;
        if (ibd_take_hex(&look, &ignored) != 0 || take_char(&look, ')') != 0)
            return -1;
        *t = look;
    }
    return 0;
}

/* The index in desc_strs of the one pooled copy of the n bytes at p:
 * 0, or -1 when out of memory. */
static int intern(ibd_dump *d, const char *p, size_t n, uint32_t *out)
{
    if (n >= d->scratch_cap) {
        char *grown = realloc(d->scratch, n + 64);
        if (!grown)
            return -1;
        d->scratch = grown;
        d->scratch_cap = n + 64;
    }
    memcpy(d->scratch, p, n);
    d->scratch[n] = '\0';
    int32_t found = topo_strmap_get(d->descs, d->scratch);
    if (found >= 0) {
        *out = (uint32_t)found;
        return 0;
    }
    const char *copy = topo_pool_strndup(d->pool, p, n);
    if (!copy || d->desc_strs.n >= INT32_MAX || TOPO_ARRAY_PUSH(&d->desc_strs, copy) != 0 ||
        topo_strmap_put(d->descs, copy, (int32_t)(d->desc_strs.n - 1)) != 0)
        return -1;
    *out = (uint32_t)(d->desc_strs.n - 1);
    return 0;
}

/* The description of a `# ...` comment: from its first quote to the last
 * quote of the line. *desc IBD_NO_DESC when the comment quotes nothing;
 * -1 when it opens a quote it never closes. */
static int comment_desc(scan *s, ibd_span t, uint32_t *desc)
{
    *desc = IBD_NO_DESC;
    const char *open = memchr(t.p, '"', (size_t)(t.end - t.p));
    if (!open)
        return 0;
    const char *close = t.end - 1;
    while (close > open && *close != '"')
        close--;
    if (close == open)
        return -1;
    if (intern(s->d, open + 1, (size_t)(close - open - 1), desc) != 0)
        return topo_err_nomem(s->err, "ibnetdiscover");
    return 0;
}

/* After the fields of a header or a port line: nothing, or a comment. */
static int tail_desc(scan *s, ibd_span t, uint32_t *desc)
{
    ibd_skip_blanks(&t);
    *desc = IBD_NO_DESC;
    if (t.p == t.end)
        return 0;
    if (*t.p != '#')
        return 1;
    t.p++;
    return comment_desc(s, t, desc);
}

static int take_word(ibd_span *t, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(t->end - t->p) < n || memcmp(t->p, word, n) != 0)
        return -1;
    t->p += n;
    return 0;
}

static int take_digits(ibd_span *t)
{
    const char *start = t->p;
    while (t->p < t->end && *t->p >= '0' && *t->p <= '9')
        t->p++;
    return t->p > start ? 0 : -1;
}

/* What ibnetdiscover writes after the remote's quoted description on every
 * port line, of a switch or of an adapter: ` lid <n> <width>x<speed>`
 * ("lid 236 4xNDR"; --full adds text after it). A line without it was cut
 * while written, or damaged. */
static int has_link_tail(ibd_span t)
{
    const char *close = t.end;
    while (close > t.p && close[-1] != '"')
        close--;
    if (close == t.p)
        return 0;
    ibd_span rest = {close, t.end};
    ibd_skip_blanks(&rest);
    if (take_word(&rest, "lid") != 0 || rest.p == rest.end || !ibd_is_blank(*rest.p))
        return 0;
    ibd_skip_blanks(&rest);
    if (take_digits(&rest) != 0 || rest.p == rest.end || !ibd_is_blank(*rest.p))
        return 0;
    ibd_skip_blanks(&rest);
    if (take_digits(&rest) != 0 || take_char(&rest, 'x') != 0)
        return 0;
    const char *speed = rest.p;
    while (rest.p < rest.end &&
           ((*rest.p >= '0' && *rest.p <= '9') || (*rest.p >= 'A' && *rest.p <= 'Z') ||
            (*rest.p >= 'a' && *rest.p <= 'z')))
        rest.p++;
    return rest.p > speed;
}

/* The node of an id, made when first named (by its header or a port line). */
static int node_at(scan *s, char kind, uint64_t guid, size_t *out)
{
    ibd_dump *d = s->d;
    size_t found = ibd_find_node(d, kind, guid);
    if (found != SIZE_MAX) {
        *out = found;
        return 0;
    }
    if (d->nodes.n >= INT32_MAX)
        return ibd_fail(s->err, TOPO_ELIMIT, d->source, s->line, "too many nodes");
    const char *id = ibd_node_id(d, kind, guid);
    if (!id)
        return topo_err_nomem(s->err, "ibnetdiscover");
    ibd_node n = {.kind = kind, .guid = guid, .id = id};
    if (TOPO_ARRAY_PUSH(&d->nodes, n) != 0 ||
        topo_strmap_put(d->index, id, (int32_t)(d->nodes.n - 1)) != 0)
        return topo_err_nomem(s->err, "ibnetdiscover");
    *out = d->nodes.n - 1;
    return 0;
}

/* `Switch 65 "S-<guid>" # "<desc>" enhanced port 0 lid 73 lmc 0`, and the
 * Ca and Rt headers; word is the kind's letter. */
static int header_line(scan *s, ibd_span t, char word)
{
    char kind = 0;
    uint64_t guid = 0;
    ibd_skip_blanks(&t);
    const char *digits = t.p;
    while (t.p < t.end && *t.p >= '0' && *t.p <= '9')
        t.p++;
    if (t.p == digits)
        return bad(s, "a node header without its port count");
    ibd_skip_blanks(&t);
    if (take_quoted_id(&t, &kind, &guid) != 0)
        return bad(s, "a node header without a quoted \"S-\", \"H-\" or \"R-\" id "
                      "of 1 to 16 hex digits");
    if (kind != word)
        return bad(s, "a node header whose id is of another kind (Switch \"S-\", Ca \"H-\", "
                      "Rt \"R-\")");
    uint32_t desc = IBD_NO_DESC;
    int rc = tail_desc(s, t, &desc);
    if (rc < 0)
        return rc == -1 ? bad(s, "an unterminated node description") : rc;
    ibd_dump *d = s->d;
    size_t at = 0;
    if ((rc = node_at(s, kind, guid, &at)) != 0)
        return rc;
    ibd_node *n = &d->nodes.items[at];
    if (!n->stanza) {
        if (TOPO_ARRAY_PUSH(&d->stanzas, (uint32_t)at) != 0)
            return topo_err_nomem(s->err, "ibnetdiscover");
        n->stanza = 1;
        d->stats.switches += kind == 'S';
        d->stats.routers += kind == 'R';
    }
    if (!n->desc && desc != IBD_NO_DESC)
        n->desc = d->desc_strs.items[desc];
    else if (kind == 'H' && desc != IBD_NO_DESC && n->desc != d->desc_strs.items[desc] &&
             TOPO_ARRAY_PUSH(&d->dups, ((ibd_dup){(uint32_t)at, d->desc_strs.items[desc]})) != 0)
        return topo_err_nomem(s->err, "ibnetdiscover");
    if (!n->has_sysimg && s->has_sysimg) {
        n->sysimg = s->sysimg;
        n->has_sysimg = 1;
    }
    s->node = at;
    return 0;
}

/* `[<port>]... "<kind>-<guid>"[<port>]...(<guid>) # ...` */
static int port_line(scan *s, ibd_span t)
{
    if (s->node == SIZE_MAX)
        return bad(s, "a port line outside a Switch, Ca or Rt stanza");
    ibd_port port = {.node = (uint32_t)s->node, .line = (uint32_t)s->line};
    char rkind = 0;
    uint64_t rguid = 0;
    const ibd_span whole = t;
    if (take_port_number(&t, &port.port) != 0 || skip_port_extras(&t) != 0)
        return bad(s, "a port line that does not start with \"[<port>]\"");
    ibd_skip_blanks(&t);
    if (take_quoted_id(&t, &rkind, &rguid) != 0)
        return bad(s, "a port line without a quoted remote \"S-\", \"H-\" or \"R-\" id of 1 "
                      "to 16 hex digits");
    if (take_port_number(&t, &port.rport) != 0 || skip_port_extras(&t) != 0)
        return bad(s, "a port line without the remote \"[<port>]\"");
    int rc = tail_desc(s, t, &port.rdesc);
    if (rc == 1)
        return bad(s, "unexpected text after the remote port (a comment starts with '#')");
    if (rc == -1)
        return bad(s, "an unterminated remote description");
    if (rc == 0 && (port.rdesc == IBD_NO_DESC || !has_link_tail(whole)))
        return bad(s, "a port line without the comment ibnetdiscover always ends it with "
                      "(# \"<remote description>\" lid <n> <width>x<speed>): a dump cut while "
                      "written, or damaged");
    size_t rnode = 0;
    if (rc != 0 || (rc = node_at(s, rkind, rguid, &rnode)) != 0)
        return rc;
    port.rnode = (uint32_t)rnode;
    if (TOPO_ARRAY_PUSH(&s->d->ports, port) != 0)
        return topo_err_nomem(s->err, "ibnetdiscover");
    return 0;
}

static void skip_line(scan *s, const char *why)
{
    s->d->stats.skipped_lines++;
    if (s->d->stats.skipped_lines <= IBD_WARN_LINES)
        topo_log(TOPO_LOG_WARN, "%s:%d: %s; line skipped", s->d->source, s->line, why);
}

/* `key=value`: only sysimgguid matters (it tells an Aggregation Node from
 * the switch it sits in). 1 when t is not of that shape. */
static int key_value_line(scan *s, ibd_span t)
{
    const char *eq = memchr(t.p, '=', (size_t)(t.end - t.p));
    if (!eq || eq == t.p)
        return 1;
    for (const char *c = t.p; c < eq; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_'))
            return 1;
    if ((size_t)(eq - t.p) == strlen("sysimgguid") && memcmp(t.p, "sysimgguid", 10) == 0) {
        ibd_span v = {eq + 1, t.end};
        ibd_trim(&v);
        if (ibd_take_guid(&v, &s->sysimg) != 0 || v.p != v.end)
            skip_line(s, "a sysimgguid= that is not a 0x GUID");
        else
            s->has_sysimg = 1;
    }
    return 0;
}

static int starts_word(ibd_span t, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(t.end - t.p) > n && memcmp(t.p, word, n) == 0 && ibd_is_blank(t.p[n]);
}

static int one_line(scan *s, ibd_span t)
{
    ibd_skip_blanks(&t);
    if (t.p == t.end) { /* a blank line ends the stanza */
        s->node = SIZE_MAX;
        s->has_sysimg = 0;
        return 0;
    }
    if (*t.p == '#')
        return 0;
    if (*t.p == '[')
        return port_line(s, t);
    if (starts_word(t, "Switch"))
        return header_line(s, (ibd_span){t.p + 6, t.end}, 'S');
    if (starts_word(t, "Ca"))
        return header_line(s, (ibd_span){t.p + 2, t.end}, 'H');
    if (starts_word(t, "Rt"))
        return header_line(s, (ibd_span){t.p + 2, t.end}, 'R');
    if (key_value_line(s, t) == 0)
        return 0;
    skip_line(s, "a line of an unknown kind");
    return 0;
}

void ibd_scan_begin(ibd_scanner *s, ibd_dump *d, topo_err *err)
{
    *s = (ibd_scanner){.d = d, .node = SIZE_MAX, .err = err};
}

int ibd_scan_line(ibd_scanner *s, const char *p, size_t n)
{
    ibd_span t = {p, p + n};
    if (t.end > t.p && t.end[-1] == '\r')
        t.end--;
    if (s->line == INT32_MAX)
        return ibd_fail(s->err, TOPO_ELIMIT, s->d->source, s->line, "too many lines");
    s->line++;
    return one_line(s, t);
}

void ibd_scan_end(ibd_scanner *s)
{
    ibd_dump *d = s->d;
    d->stats.lines = (size_t)s->line;
    /* What only the scan looks up, before the facts are built beside the
     * records. */
    topo_strmap_free(d->index);
    topo_strmap_free(d->descs);
    free(d->scratch);
    d->index = d->descs = NULL;
    d->scratch = NULL;
    d->scratch_cap = 0;
    if (d->stats.skipped_lines > IBD_WARN_LINES)
        topo_log(TOPO_LOG_WARN, "%s: %zu lines of an unknown kind skipped in all", d->source,
                 d->stats.skipped_lines);
}

int ibd_nul_line(const char *text, const char *nul, int line)
{
    for (const char *c = text; c < nul; c++)
        line += *c == '\n';
    return line;
}

int ibd_scan(ibd_dump *d, const char *text, size_t len, topo_err *err)
{
    scan s;
    const char *p = text, *end = text + len;
    const char *nul = len > 0 ? memchr(text, '\0', len) : NULL;
    if (nul)
        return ibd_fail(err, TOPO_EINVALID, d->source, ibd_nul_line(text, nul, 1), "a NUL byte");
    if (len > 0 && text[len - 1] != '\n')
        return ibd_check_last_byte(d->source, 1, text[len - 1], ibd_nul_line(text, end, 1), err);
    ibd_scan_begin(&s, d, err);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        int rc = ibd_scan_line(&s, p, (size_t)(stop - p));
        if (rc != 0)
            return rc;
        p = nl ? nl + 1 : end;
    }
    ibd_scan_end(&s);
    return 0;
}
