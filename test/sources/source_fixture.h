/* Test support for the source parsers' tests: reading a fixture under
 * $TOPO_SOURCE_DIR/fixtures/sources/, and finding a cable in facts. Static
 * inline functions: each test is its own executable; include it after
 * <cmocka.h>. */
#ifndef TOPO_TEST_SOURCE_FIXTURE_H
#define TOPO_TEST_SOURCE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/facts.h"

/* The fixture's text (malloc'd, NUL-terminated), failing the test when it
 * cannot be read. */
static inline char *fixture_text(const char *rel, size_t *len)
{
    const char *root = getenv("TOPO_SOURCE_DIR");
    char path[4096];
    char *text = NULL;
    topo_err err = TOPO_ERR_INIT;
    snprintf(path, sizeof(path), "%s/fixtures/sources/%s", root ? root : ".", rel);
    if (topo_codec_read_file(&text, len, path, 512u * 1024u * 1024u, &err) != 0)
        fail_msg("cannot read %s (set TOPO_SOURCE_DIR): %s", path, err.text);
    return text;
}

/* 1 when facts hold the host cable host/port -> switch_id (host NULL: an
 * unnamed adapter; port NULL: no port). */
static inline int has_host_link(const topo_facts *f, const char *host, const char *port,
                                const char *switch_id)
{
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (!l.is_host_link || strcmp(topo_facts_switch_id(f, l.sw), switch_id) != 0)
            continue;
        const char *h = l.host == TOPO_FACTS_NO_HOST ? NULL : topo_facts_host_name(f, l.host);
        if ((host == NULL) != (h == NULL) || (host && strcmp(host, h) != 0))
            continue;
        if ((port == NULL) != (l.port == NULL) || (port && strcmp(port, l.port) != 0))
            continue;
        return 1;
    }
    return 0;
}

/* 1 when facts hold a cable between the switches a and b. */
static inline int has_switch_link(const topo_facts *f, const char *a, const char *b)
{
    size_t ia, ib;
    if (topo_facts_find_switch(f, a, &ia) != 0 || topo_facts_find_switch(f, b, &ib) != 0)
        return 0;
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (!l.is_host_link && ((l.sw == ia && l.other == ib) || (l.sw == ib && l.other == ia)))
            return 1;
    }
    return 0;
}

/* Counts host cables and switch cables. */
static inline void count_links(const topo_facts *f, size_t *host_links, size_t *switch_links)
{
    *host_links = *switch_links = 0;
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        if (topo_facts_link_at(f, i).is_host_link)
            ++*host_links;
        else
            ++*switch_links;
    }
}

static inline int same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Fails the test unless a and b hold the same facts entry by entry: source,
 * hosts with their levels, switches with their names, cables, each at the
 * same index. */
static inline void assert_facts_equal(const topo_facts *a, const topo_facts *b)
{
    if (!same_text(topo_facts_source(a), topo_facts_source(b)))
        fail_msg("source %s != %s", topo_facts_source(a), topo_facts_source(b));
    if (topo_facts_host_count(a) != topo_facts_host_count(b) ||
        topo_facts_switch_count(a) != topo_facts_switch_count(b) ||
        topo_facts_link_count(a) != topo_facts_link_count(b))
        fail_msg("%zu/%zu/%zu hosts/switches/cables != %zu/%zu/%zu", topo_facts_host_count(a),
                 topo_facts_switch_count(a), topo_facts_link_count(a), topo_facts_host_count(b),
                 topo_facts_switch_count(b), topo_facts_link_count(b));
    for (size_t i = 0; i < topo_facts_host_count(a); i++) {
        if (!same_text(topo_facts_host_name(a, i), topo_facts_host_name(b, i)))
            fail_msg("hosts[%zu]: %s != %s", i, topo_facts_host_name(a, i),
                     topo_facts_host_name(b, i));
        for (int l = 0; l < TOPO_LEVEL_COUNT; l++)
            if (!same_text(topo_facts_host_level(a, i, (topo_level)l),
                           topo_facts_host_level(b, i, (topo_level)l)))
                fail_msg("hosts[%zu] %s: %s != %s", i, topo_level_name((topo_level)l),
                         topo_facts_host_level(a, i, (topo_level)l),
                         topo_facts_host_level(b, i, (topo_level)l));
    }
    for (size_t i = 0; i < topo_facts_switch_count(a); i++)
        if (!same_text(topo_facts_switch_id(a, i), topo_facts_switch_id(b, i)) ||
            !same_text(topo_facts_switch_name(a, i), topo_facts_switch_name(b, i)))
            fail_msg("switches[%zu]: %s (%s) != %s (%s)", i, topo_facts_switch_id(a, i),
                     topo_facts_switch_name(a, i), topo_facts_switch_id(b, i),
                     topo_facts_switch_name(b, i));
    for (size_t i = 0; i < topo_facts_link_count(a); i++) {
        topo_facts_link x = topo_facts_link_at(a, i), y = topo_facts_link_at(b, i);
        if (x.is_host_link != y.is_host_link || x.sw != y.sw || x.host != y.host ||
            (!x.is_host_link && x.other != y.other) || !same_text(x.port, y.port))
            fail_msg("cables[%zu] differ", i);
    }
}

static inline topo_facts *new_facts(const char *source)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_facts_create(&f, source, &err) != 0)
        fail_msg("topo_facts_create: %s", err.text);
    return f;
}

#endif
