/* Every prefix of a real dump (what a reader sees while `ibnetdiscover >
 * file` rewrites it) is either refused by the ibnetdiscover reader, or
 * gives every host it places the leaf and spine the whole dump gives it:
 * the two labels topo-sync plans from a fabric source (lib/sync/pipeline/pipeline.c
 * feed_fabric takes tiers 0 and 1). Issue 26 §3: a cut at 10% of Selene
 * wrote 54 wrong labels.
 *
 * Cuts (each prefix is parsed whole, so the cost is quadratic; these keep
 * the test within seconds under ASan): every line end of small_topo_file
 * (126 lines) and topograph-example-bad; every 4th line end of
 * topograph-example (5,965 lines) and every line end of three 60-line
 * windows at 10%, 30% and 50%; every 1,000th line end of Selene (55,750
 * lines) and every line end of three 20-line windows there; and every byte
 * (a cut inside a line: at each field of it) of all of small_topo_file's
 * lines, of 50 lines spread over topograph-example and of 10 over Selene. The cut the issue names,
 * just after a switch-to-switch port line's remote port (`[17] "S-..."[1]`, no comment yet) at 10%
 * of Selene, is asserted by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "topo/codec.h"
#include "topo/fabric.h"
#include "topo/ibnetdiscover.h"
#include "topo/limits.h"
#include "topo/log.h"

/* The labels of one dump: host -> leaf and spine ids (NULL when none). */
typedef struct placed {
    topo_facts *facts;
    topo_fabric *fabric;
} placed;

typedef struct dump {
    const char *name;
    char *text;
    size_t len;
    placed whole;
    size_t refused, accepted, labelled; /* prefixes, and hosts compared */
} dump;

static void read_text(dump *d)
{
    char path[1024];
    const char *root = getenv("TOPO_SOURCE_DIR");
    topo_err err = TOPO_ERR_INIT;
    snprintf(path, sizeof(path), "%s/fixtures/sources/ibnetdiscover/%s", root ? root : ".",
             d->name);
    if (topo_codec_read_file(&d->text, &d->len, path, TOPO_MAX_IBNETDISCOVER_DUMP, &err) != 0)
        fail_msg("%s: %s", d->name, err.text);
}

/* text of len bytes: 0 and its fabric, or the reader's code. */
static int parse_text(const dump *d, const char *text, size_t len, placed *out, topo_err *err)
{
    topo_ibnetdiscover_opts opts = {.source = d->name};
    const topo_facts *one[1];
    *out = (placed){0};
    assert_int_equal(topo_facts_create(&out->facts, "ibnetdiscover", err), 0);
    int rc = topo_ibnetdiscover_parse(out->facts, text, len, &opts, NULL, err);
    if (rc != 0) {
        topo_facts_free(out->facts);
        out->facts = NULL;
        return rc;
    }
    one[0] = out->facts;
    if (topo_fabric_build(&out->fabric, one, 1, NULL, err) != 0)
        fail_msg("%s: fabric: %s", d->name, err->text);
    return 0;
}

/* The prefix of len bytes. */
static int parse_prefix(const dump *d, size_t len, placed *out, topo_err *err)
{
    return parse_text(d, d->text, len, out, err);
}

static void placed_free(placed *p)
{
    topo_fabric_free(p->fabric);
    topo_facts_free(p->facts);
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The leaf (tier 0) or spine (tier 1) id the fabric plans for host h. */
static const char *label(const topo_fabric *fab, size_t h, size_t tier)
{
    topo_fabric_status st = topo_fabric_host_status(fab, h);
    if (st != TOPO_FABRIC_HOST_PLACED && st != TOPO_FABRIC_HOST_AMBIGUOUS)
        return NULL;
    return topo_fabric_host_tier(fab, h, tier);
}

/* The property, for the prefix of len bytes. */
static void check_cut(dump *d, size_t len)
{
    topo_err err = TOPO_ERR_INIT;
    placed p;
    int rc = parse_prefix(d, len, &p, &err);
    if (rc != 0) {
        /* refused as a damaged dump, naming its line */
        if (rc != TOPO_EINVALID || err.line <= 0 || !err.source || strcmp(err.source, d->name) != 0)
            fail_msg("%s cut at byte %zu: rc %d, \"%s\"", d->name, len, rc, err.text);
        d->refused++;
        return;
    }
    d->accepted++;
    const topo_fabric *whole = d->whole.fabric;
    for (size_t h = 0; h < topo_fabric_host_count(p.fabric); h++) {
        const char *host = topo_fabric_host_name(p.fabric, h);
        const char *leaf = label(p.fabric, h, 0), *spine = label(p.fabric, h, 1);
        if (!leaf && !spine)
            continue; /* labels nothing */
        size_t w = 0;
        if (topo_fabric_find_host(whole, host, &w) != 0)
            fail_msg("%s cut at byte %zu: labels %s, which the whole dump does not have", d->name,
                     len, host);
        if (!same(leaf, label(whole, w, 0)) || !same(spine, label(whole, w, 1)))
            fail_msg("%s cut at byte %zu: %s gets leaf %s spine %s, the whole dump leaf %s "
                     "spine %s",
                     d->name, len, host, leaf ? leaf : "-", spine ? spine : "-",
                     label(whole, w, 0) ? label(whole, w, 0) : "-",
                     label(whole, w, 1) ? label(whole, w, 1) : "-");
        d->labelled++;
    }
    placed_free(&p);
}

static void dump_open(dump *d, const char *name)
{
    topo_err err = TOPO_ERR_INIT;
    *d = (dump){.name = name};
    read_text(d);
    if (parse_prefix(d, d->len, &d->whole, &err) != 0)
        fail_msg("%s: the whole dump: %s", name, err.text);
}

static void dump_close(dump *d)
{
    placed_free(&d->whole);
    free(d->text);
}

/* The byte offset where line (1-based) starts, or len past the end. */
static size_t line_start(const dump *d, size_t line)
{
    size_t at = 0;
    for (size_t l = 1; l < line && at < d->len; l++) {
        const char *nl = memchr(d->text + at, '\n', d->len - at);
        at = nl ? (size_t)(nl - d->text) + 1 : d->len;
    }
    return at;
}

static size_t line_count(const dump *d)
{
    size_t n = 0;
    for (size_t i = 0; i < d->len; i++)
        n += d->text[i] == '\n';
    return n;
}

/* Cuts at the ends of lines first .. last, every step-th (1-based). */
static void cut_lines(dump *d, size_t first, size_t last, size_t step)
{
    size_t at = line_start(d, first);
    for (size_t l = first; l <= last && at < d->len; l++) {
        const char *nl = memchr(d->text + at, '\n', d->len - at);
        size_t end = nl ? (size_t)(nl - d->text) + 1 : d->len;
        if ((l - first) % step == 0)
            check_cut(d, end);
        at = end;
    }
}

/* Cuts at every byte of nlines lines spread evenly over the dump. */
static void cut_bytes(dump *d, size_t nlines)
{
    size_t lines = line_count(d);
    for (size_t k = 0; k < nlines; k++) {
        size_t line = 1 + k * lines / nlines;
        size_t from = line_start(d, line), to = line_start(d, line + 1);
        for (size_t at = from; at < to; at++)
            check_cut(d, at);
    }
}

/* Cuts at every step-th line end, at every line end of windows at 10%, 30%
 * and 50% (when step > 1), and at every byte of byte_lines lines. */
static void run_cuts(const char *name, size_t step, size_t byte_lines)
{
    dump d;
    topo_log_level old = topo_log_get_level();
    topo_log_set_level(TOPO_LOG_OFF);
    dump_open(&d, name);
    size_t lines = line_count(&d);
    check_cut(&d, 0);
    cut_lines(&d, 1, lines, step);
    for (size_t pct = 10; step > 1 && pct <= 50; pct += 20)
        cut_lines(&d, lines * pct / 100, lines * pct / 100 + 60, 1);
    cut_bytes(&d, byte_lines);
    topo_log_set_level(old);
    /* the whole dump, cut at its end, is the one prefix always accepted */
    assert_true(d.accepted >= 1);
    print_message("[%.1fs] %s: %zu prefixes refused, %zu accepted, %zu host labels compared\n",
                  (double)clock() / CLOCKS_PER_SEC, name, d.refused, d.accepted, d.labelled);
    dump_close(&d);
}

static void test_fabric_prefix__small_lab_fabric(void **state)
{
    (void)state;
    run_cuts("mellanox-small_topo_file.txt", 1, 126);
}

static void test_fabric_prefix__topograph_example(void **state)
{
    (void)state;
    run_cuts("topograph-example.out", 4, 50);
}

static void test_fabric_prefix__isolated_adapter(void **state)
{
    (void)state;
    run_cuts("topograph-example-bad.out", 1, 10);
}

/* The first switch-to-switch port line from line `from` on: its start, and
 * the offset just after its remote port's ']' (the cut of the issue). */
static size_t switch_link_cut(const dump *d, size_t from, size_t *line_out)
{
    size_t at = line_start(d, from), line = from;
    int in_switch = 0;
    while (at < d->len) {
        const char *p = d->text + at;
        const char *nl = memchr(p, '\n', d->len - at);
        size_t n = nl ? (size_t)(nl - p) : d->len - at;
        if (n >= 6 && memcmp(p, "Switch", 6) == 0)
            in_switch = 1;
        else if (n == 0)
            in_switch = 0;
        const char *remote = n > 0 && p[0] == '[' ? memchr(p, '"', n) : NULL;
        if (in_switch && remote && remote + 1 < p + n && remote[1] == 'S') {
            const char *close = memchr(remote, ']', n - (size_t)(remote - p));
            assert_non_null(close);
            *line_out = line;
            return (size_t)(close + 1 - d->text);
        }
        at += n + 1;
        line++;
    }
    fail_msg("%s: no switch-to-switch port line after line %zu", d->name, from);
    return 0;
}

static void test_fabric_prefix__selene(void **state)
{
    (void)state;
    dump d;
    topo_log_level old = topo_log_get_level();
    topo_log_set_level(TOPO_LOG_OFF);
    dump_open(&d, "mellanox-selene.compute.txt");
    size_t lines = line_count(&d);
    /* the cut of the issue, at 10% */
    size_t line = 0, cut = switch_link_cut(&d, lines / 10, &line);
    topo_err err = TOPO_ERR_INIT;
    placed p;
    assert_int_equal(parse_prefix(&d, cut, &p, &err), TOPO_EINVALID);
    assert_int_equal(err.line, (int)line);
    assert_non_null(strstr(err.text, "the last line has no newline"));
    /* ... and the same line ended there: no comment */
    char *ended = malloc(cut + 1);
    assert_non_null(ended);
    memcpy(ended, d.text, cut);
    ended[cut] = '\n';
    assert_int_equal(parse_text(&d, ended, cut + 1, &p, &err), TOPO_EINVALID);
    assert_int_equal(err.line, (int)line);
    assert_non_null(strstr(err.text, "a port line without the comment"));
    free(ended);
    cut_lines(&d, 1, lines, 1000);
    for (size_t pct = 10; pct <= 50; pct += 20)
        cut_lines(&d, lines * pct / 100, lines * pct / 100 + 20, 1);
    cut_bytes(&d, 10);
    topo_log_set_level(old);
    assert_true(d.refused > 0);
    print_message("[%.1fs] selene: %zu prefixes refused, %zu accepted, %zu host labels compared\n",
                  (double)clock() / CLOCKS_PER_SEC, d.refused, d.accepted, d.labelled);
    dump_close(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fabric_prefix__small_lab_fabric),
        cmocka_unit_test(test_fabric_prefix__topograph_example),
        cmocka_unit_test(test_fabric_prefix__isolated_adapter),
        cmocka_unit_test(test_fabric_prefix__selene),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
