/* LLDP from a collector over HTTP (topo/fetch.h): one JSON object mapping
 * each host to its lldpd document, read host by host in name order (the
 * facts' order does not depend on the server's). The answer is not parsed
 * as one tree: jansson makes a compact lldpd document 9 to 16 times its
 * text, so a collector's 6.6 MiB answer took 110 MiB. The members are
 * found first (each host's name and where its document is), then each
 * document is parsed, read and freed before the next, as a host file of
 * --lldp-dir is: at most TOPO_MAX_LLDP_DOCUMENT bytes, within its own
 * parse budget. A host whose document is refused (over that size,
 * malformed, over its budget) is skipped as a host file is, keeping its
 * last good facts: one host's document must not freeze every host's. An
 * answer that is not one JSON object as a whole, or where every host is
 * refused, fails the source. */
#include "fetch_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/codec.h"
#include "topo/log.h"
#include "topo/lldp.h"

typedef struct host_span {
    const char *name; /* in the pool */
    size_t offset, len;
} host_span;

/* How a read of the answer's hosts went. */
typedef struct host_tally {
    size_t read, refused, neighbours;
    char first[TOPO_ERR_TEXT_MAX]; /* why the first refused host was */
} host_tally;

typedef struct host_list {
    const topo_fetch *f;
    topo_pool *pool;
    TOPO_ARRAY(host_span) items;
} host_list;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const host_span *)a)->name, ((const host_span *)b)->name);
}

/* One member of the answer: its host's name and document's place, checked
 * before anything is parsed. */
static int add_host(const char *key, size_t offset, size_t len, void *payload, topo_err *err)
{
    host_list *l = payload;
    const topo_fetch *f = l->f;
    if (key[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "%s: GET %s: an empty host name", f->name,
                            f->target);
    if (l->items.n >= TOPO_MAX_LLDP_HOSTS)
        return topo_err_set(err, TOPO_ELIMIT,
                            "%s: GET %s: more than %u hosts in one answer; refused (give a "
                            "larger fleet's documents as files)",
                            f->name, f->target, (unsigned)TOPO_MAX_LLDP_HOSTS);
    host_span h = {.name = topo_pool_strdup(l->pool, key), .offset = offset, .len = len};
    if (h.name == NULL || TOPO_ARRAY_PUSH(&l->items, h) != 0)
        return topo_err_nomem(err, f->name);
    return 0;
}

/* A refused host (its error in err): skipped, counted, the first's error
 * kept for an answer where every host is refused. */
static int skip_host(const topo_fetch *f, topo_facts *facts, const host_span *h,
                     size_t *counter, host_tally *t, topo_err *err)
{
    if (t->refused == 0 && err != NULL)
        snprintf(t->first, sizeof t->first, "%s", err->text);
    return fetch_skip_host(facts, f->last_good, counter, t->refused++, h->name, err);
}

/* One host's document, parsed on its own and freed; refused (too large,
 * malformed, over its budget): skipped, the host keeping its last good
 * facts. */
static int read_host(const topo_fetch *f, topo_facts *facts, const host_span *h,
                     const char *body, host_tally *t, topo_err *err)
{
    char source[TOPO_ERR_TEXT_MAX];
    json_t *doc = NULL;
    size_t nn = 0;
    int refused = 0;
    /* Positions are within the host's document. */
    snprintf(source, sizeof(source), "%s: GET %s: \"%.100s\"", f->name, f->target, h->name);
    const char *text = body + h->offset;
    int rc = 0;
    if (h->len > TOPO_MAX_LLDP_DOCUMENT) {
        rc = topo_err_set(err, TOPO_ELIMIT,
                          "%s: its lldpd document is %zu bytes, more than the %u one host's "
                          "document may be; refused",
                          source, h->len, (unsigned)TOPO_MAX_LLDP_DOCUMENT);
        return skip_host(f, facts, h, f->skipped ? &f->skipped->too_large : NULL, t, err);
    }
    /* A scalar (a string, a number) is read as one, for the parser's "expected an lldpd
     * document (an object), got a string"; anything else within the budget. */
    if (h->len > 0 && text[0] != '{' && text[0] != '[')
        doc = json_loadb(text, h->len, JSON_DECODE_ANY, NULL);
    if (doc == NULL) {
        rc = topo_codec_json_parse_source(&doc, text, h->len, source, err);
        refused = rc != 0 && rc != TOPO_ENOMEM;
    }
    if (rc == 0) {
        rc = topo_lldp_add_json(&refused, &nn, facts, h->name, doc, NULL, err);
        if (rc != 0)
            topo_err_wrap(err, "%s", source);
    }
    if (err != NULL)
        topo_err_at(err, NULL, 0, 0); /* the position names this frame's text */
    json_decref(doc);
    t->neighbours += nn;
    if (refused)
        return skip_host(f, facts, h, f->skipped ? &f->skipped->invalid : NULL, t, err);
    t->read += rc == 0;
    return rc;
}

static int read_hosts(topo_fetch *f, topo_facts *facts, const topo_http_response *resp,
                      uint64_t *objects, host_tally *t, topo_err *err)
{
    host_list l = {.f = f, .pool = topo_pool_create(), .items = TOPO_ARRAY_INIT};
    int found = 0, rc = 0;
    json_t *doc = NULL;
    char source[TOPO_ERR_TEXT_MAX];
    if (l.pool == NULL)
        return topo_err_nomem(err, f->name);
    snprintf(source, sizeof(source), "%s: GET %s", f->name, f->target);
    rc = topo_codec_json_members(&found, resp->body, resp->len, source, add_host, &l, err);
    if (rc == 0 && !found) {
        /* Not an object (or text jansson alone reads right): parsed whole
         * for its message. */
        rc = fetch_parse(&doc, f, f->target, resp, err);
        if (rc == 0)
            rc = topo_err_set(err, TOPO_EINVALID,
                              "%s: GET %s: expected an object of host names to lldpd "
                              "documents, got %s",
                              f->name, f->target,
                              json_is_object(doc)  ? "an object with a NUL byte"
                              : json_is_array(doc) ? "an array"
                                                   : "a scalar");
    } else if (rc != 0 && err != NULL) {
        topo_err_at(err, NULL, 0, 0);
    }
    if (rc == 0)
        qsort(l.items.items, l.items.n, sizeof(*l.items.items), by_name);
    for (size_t i = 0; rc == 0 && i < l.items.n; i++)
        rc = read_host(f, facts, &l.items.items[i], resp->body, t, err);
    /* Every host refused is the source's problem, not a host's: it fails
     * as one bad document did before, with that document's error. */
    if (rc == 0 && t->read == 0 && t->refused > 0)
        rc = topo_err_set(err, TOPO_EINVALID, "%s%s", t->first,
                          l.items.n > 1 ? " (and no other host's document could be read)" : "");
    *objects = l.items.n;
    json_decref(doc);
    free(l.items.items);
    topo_pool_free(l.pool);
    return rc;
}

int fetch_lldp(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err)
{
    topo_http_response resp = {0};
    host_tally t = {0};
    int rc = fetch_get(f, f->target, &resp, err);
    if (rc == 0)
        rc = read_hosts(f, facts, &resp, objects, &t, err);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO,
                 "source lldp: %s%s: %llu hosts (%llu skipped), %zu neighbours, %zu switches",
                 f->base, f->target, (unsigned long long)*objects,
                 (unsigned long long)(*objects - t.read), t.neighbours,
                 topo_facts_switch_count(facts));
    topo_http_response_dispose(&resp);
    return rc;
}
