/* Running one conformance case and describing what differed (topo/cases.h). */
#include "topo/cases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/limits.h"

/* Copies the verdict into the pool ("..." marks a truncation: an append past
 * TOPO_MAX_CASE_REASON) and frees the buffer; NULL on OOM. */
static const char *sb_finish(topo_buf *b, topo_pool *pool)
{
    const char *s = NULL;
    if (b->error == 0 || b->error == TOPO_ELIMIT)
        s = topo_pool_printf(pool, "%s%s", b->ptr ? b->ptr : "",
                             b->error == TOPO_ELIMIT ? "..." : "");
    topo_buf_dispose(b);
    return s;
}

static void sb_assignment(topo_buf *b, const topo_assignment *a, int with_levels)
{
    if (with_levels) {
        (void)topo_buf_printf(b, "[");
        for (size_t i = 0; i < a->nlevels; i++)
            (void)topo_buf_printf(b, "%s%s", i > 0 ? "," : "", a->levels[i]);
        (void)topo_buf_printf(b, "] ");
    }
    if (a->ndomains == 0)
        (void)topo_buf_printf(b, "(no domains)");
    for (size_t i = 0; i < a->ndomains; i++) {
        const topo_assign_domain *d = &a->domains[i];
        (void)topo_buf_puts(b, i > 0 ? ", " : "");
        for (size_t k = 0; k < a->nlevels; k++)
            (void)topo_buf_printf(b, "%s%s", k > 0 ? "/" : "", d->values != NULL ? d->values[k] : "?");
        (void)topo_buf_printf(b, ":%ld", (long)d->count);
    }
}

const char *topo_case_format_assignment(const topo_assignment *a, int with_levels,
                                        topo_pool *pool)
{
    topo_buf b = TOPO_BUF_INIT(TOPO_MAX_CASE_REASON - 1);
    if (a == NULL)
        (void)topo_buf_printf(&b, "(none)");
    else
        sb_assignment(&b, a, with_levels);
    return sb_finish(&b, pool);
}

static int same_levels(const topo_assignment *x, const topo_assignment *y)
{
    if (x->nlevels != y->nlevels)
        return 0;
    for (size_t i = 0; i < x->nlevels; i++)
        if (strcmp(x->levels[i], y->levels[i]) != 0)
            return 0;
    return 1;
}

static int same_domains(const topo_assignment *x, const topo_assignment *y)
{
    if (x->ndomains != y->ndomains)
        return 0;
    for (size_t i = 0; i < x->ndomains; i++) {
        const topo_assign_domain *a = &x->domains[i], *b = &y->domains[i];
        if (a->count != b->count)
            return 0;
        for (size_t k = 0; k < x->nlevels; k++)
            if (strcmp(a->values[k], b->values[k]) != 0)
                return 0;
    }
    return 1;
}

static const topo_case_expect *find_expect(const topo_case *c, const char *podset)
{
    for (size_t i = 0; i < c->nexpect; i++)
        if (strcmp(c->expect[i].podset, podset) == 0)
            return &c->expect[i];
    return NULL;
}

/* What the engine answered, for "got ...". */
static void sb_got(topo_buf *b, const topo_podset_result *r, int with_levels)
{
    if (r->assignment != NULL)
        sb_assignment(b, r->assignment, with_levels);
    else if (r->failure != NULL)
        (void)topo_buf_printf(b, "error \"%s\"", r->failure);
    else
        (void)topo_buf_printf(b, "no result");
}

/* Appends the difference for one PodSet; returns 1 when it matched. */
static int compare_podset(topo_buf *b, const char *name, const topo_case_expect *ex,
                          const topo_podset_result *r, int *ndiff)
{
    const char *sep = *ndiff > 0 ? " | " : "";
    if (ex == NULL) {
        if (r->assignment != NULL)
            return 1;
        (void)topo_buf_printf(b, "%s%s: want placed; got ", sep, name);
        sb_got(b, r, 0);
    } else if (ex->error != NULL) {
        if (r->assignment == NULL && r->failure != NULL && strcmp(r->failure, ex->error) == 0)
            return 1;
        (void)topo_buf_printf(b, "%s%s: want error \"%s\"; got ", sep, name, ex->error);
        sb_got(b, r, 0);
    } else {
        int levels_ok = r->assignment != NULL && same_levels(&ex->assignment, r->assignment);
        if (levels_ok && same_domains(&ex->assignment, r->assignment))
            return 1;
        int with_levels = r->assignment != NULL && !levels_ok;
        (void)topo_buf_printf(b, "%s%s: want ", sep, name);
        sb_assignment(b, &ex->assignment, with_levels);
        (void)topo_buf_printf(b, "; got ");
        sb_got(b, r, with_levels);
    }
    (*ndiff)++;
    return 0;
}

int topo_case_run(topo_case_outcome *out, const topo_case *c, topo_pool *pool, topo_err *err)
{
    topo_buf b = TOPO_BUF_INIT(TOPO_MAX_CASE_REASON - 1);
    topo_err e = TOPO_ERR_INIT;
    topo_podset_result *results = NULL;
    int ndiff = 0;

    memset(out, 0, sizeof(*out));
    if (c->setup_failure != NULL) {
        out->unsupported = c->setup_code == TOPO_EUNSUPPORTED;
        if (out->unsupported)
            (void)topo_buf_printf(&b, "not supported: ");
        (void)topo_buf_puts(&b, c->setup_failure);
        goto verdict;
    }
    if ((results = topo_pool_calloc(pool, c->npodsets, sizeof(*results))) == NULL)
        return topo_err_nomem(err, NULL);
    int rc = topo_engine_find(results, c->snapshot, c->podsets, c->npodsets, c->workload,
                              &c->gates, pool, &e);
    if (rc == TOPO_ENOMEM)
        return topo_err_set(err, TOPO_ENOMEM, "%s", e.text);
    if (rc == TOPO_EUNSUPPORTED) {
        out->unsupported = 1;
        (void)topo_buf_printf(&b, "not supported: %s", e.text);
        goto verdict;
    }
    if (rc < 0) {
        (void)topo_buf_printf(&b, "engine error %s: %s", topo_err_name(rc), e.text);
        goto verdict;
    }
    out->results = results;
    out->nresults = c->npodsets;
    for (size_t i = 0; i < c->npodsets; i++) {
        const char *name = c->podsets[i].name;
        compare_podset(&b, name, find_expect(c, name), &results[i], &ndiff);
    }
    if (ndiff == 0 && b.error != TOPO_ENOMEM) {
        topo_buf_dispose(&b);
        out->passed = 1;
        return 0;
    }

verdict:
    out->passed = 0;
    if ((out->reason = sb_finish(&b, pool)) == NULL)
        return topo_err_nomem(err, NULL);
    return 0;
}
