/* topoassign cases: run Kueue conformance cases (fixtures/conformance). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "topo/array.h"
#include "topo/cases.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/str.h"

typedef struct strlist {
    char **items;
    int *seen; /* per item: the case ran (ids) / failed (known) */
    size_t n;
    size_t cap, cap_seen;
} strlist;

static int strlist_add(strlist *l, const char *s)
{
    if (topo_array_reserve((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items)) != 0 ||
        topo_array_reserve((void **)&l->seen, &l->cap_seen, l->n + 1, sizeof(*l->seen)) != 0)
        return -1;
    char *copy = topo_strdup(s);
    if (copy == NULL)
        return -1;
    l->items[l->n] = copy;
    l->seen[l->n] = 0;
    l->n++;
    return 0;
}

static ptrdiff_t strlist_find(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    free(l->seen);
    memset(l, 0, sizeof(*l));
}

typedef struct cases_args {
    topo_opt_list files, ids;
    int verbose;
    const char *known_failures;
} cases_args;

#define O(field) offsetof(cases_args, field)

static const topo_opt table[] = {
    {"FILE...", NULL, TOPO_OPT_OPERANDS, NULL, 0, 0, NULL, NULL,
     "case files: a JSON array each (fixtures/conformance/README.md)", O(files), "Options:"},
    {"--id", NULL, TOPO_OPT_LIST, "ID", 0, 0, NULL, NULL, "run only this case", O(ids), NULL},
    {"--verbose", "-v", TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "also print each PodSet's result",
     O(verbose), NULL},
    {"--known-failures", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "ids expected to fail, one per line, '#' comments; exit 0 iff exactly those cases fail "
     "(with --id, only the cases run are compared)",
     O(known_failures), NULL},
};

const cli_command cli_cases = {
    "cases",
    "run Kueue conformance cases (JSON)",
    "usage: topoassign cases FILE... [--id ID]... [--verbose] [--known-failures FILE]",
    "Runs Kueue TAS conformance cases and prints `PASS <id>` or `FAIL <id>: <what "
    "differed>` per case, then `N passed, M failed`. Exit status: 0 all passed (or failures "
    "as listed), 1 otherwise, 2 bad input.",
    table,
    sizeof table / sizeof table[0],
    cli_cmd_cases,
};

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                     s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* One id per line; '#' starts a comment. Returns 0 or -1 (message printed). */
static int read_known(strlist *known, const char *path)
{
    char line[TOPO_MAX_KNOWN_FAILURES_LINE];
    int lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "topoassign cases: %s: cannot open: ", path);
        perror(NULL);
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            fprintf(stderr, "topoassign cases: %s:%d: line too long\n", path, lineno);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *id = trim(line);
        if (*id == '\0')
            continue;
        if (strpbrk(id, " \t") != NULL) {
            fprintf(stderr, "topoassign cases: %s:%d: expected one case id, got \"%s\"\n",
                    path, lineno, id);
            rc = -1;
            break;
        }
        if (strlist_find(known, id) < 0 && strlist_add(known, id) < 0) {
            fprintf(stderr, "topoassign cases: out of memory\n");
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "topoassign cases: %s: read error\n", path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

static void print_verbose(const topo_case *c, const topo_case_outcome *o, topo_pool *pool)
{
    if (c->source != NULL)
        printf("  source: %s\n", c->source);
    for (size_t i = 0; i < o->nresults; i++) {
        const topo_podset_result *r = &o->results[i];
        const char *name = c->podsets[i].name;
        if (r->assignment != NULL) {
            const char *text = topo_case_format_assignment(r->assignment, 1, pool);
            printf("  %s: %s\n", name, text != NULL ? text : "(out of memory)");
        } else if (r->failure != NULL) {
            printf("  %s: error \"%s\"\n", name, r->failure);
        } else {
            printf("  %s: no result\n", name);
        }
    }
}

int cli_cmd_cases(int argc, char **argv)
{
    cases_args a;
    strlist ids = {0}, known = {0}, failed = {0};
    const char *known_path;
    int verbose, status;
    size_t npassed = 0, nfailed = 0;
    topo_pool *pool = NULL, *run_pool = NULL;
    topo_case_file **loaded = NULL;
    const topo_opt_list *files = &a.files;

    memset(&a, 0, sizeof(a));
    if ((status = cli_parse(&cli_cases, argc, argv, &a)) >= 0)
        goto cleanup;
    status = TOPO_CLI_EXIT_BADINPUT;
    known_path = a.known_failures;
    verbose = a.verbose;
    for (size_t i = 0; i < a.ids.n; i++)
        if (strlist_add(&ids, a.ids.v[i]) < 0)
            goto oom;
    if (files->n == 0) {
        fprintf(stderr, "topoassign cases: no case file given (see 'topoassign cases --help')\n");
        goto cleanup;
    }
    if (known_path != NULL && read_known(&known, known_path) < 0)
        goto cleanup;

    if ((pool = topo_pool_create()) == NULL || (run_pool = topo_pool_create()) == NULL ||
        (loaded = calloc(files->n, sizeof(*loaded))) == NULL)
        goto oom;
    for (size_t f = 0; f < files->n; f++) {
        topo_err err = TOPO_ERR_INIT;
        if (topo_cases_load_file(&loaded[f], files->v[f], pool, &err) < 0) {
            fprintf(stderr, "topoassign cases: %s\n", err.text);
            goto cleanup;
        }
    }
    for (size_t k = 0; k < ids.n; k++) {
        int found = 0;
        for (size_t f = 0; f < files->n && !found; f++)
            found = topo_cases_find(loaded[f], ids.items[k]) != NULL;
        if (!found) {
            fprintf(stderr, "topoassign cases: no case with id \"%s\"\n", ids.items[k]);
            goto cleanup;
        }
    }

    for (size_t f = 0; f < files->n; f++) {
        for (size_t i = 0; i < loaded[f]->ncases; i++) {
            const topo_case *c = &loaded[f]->cases[i];
            topo_case_outcome o;
            topo_err err = TOPO_ERR_INIT;
            if (ids.n > 0 && strlist_find(&ids, c->id) < 0)
                continue;
            ptrdiff_t k = strlist_find(&known, c->id);
            if (k >= 0)
                known.seen[k] = 1; /* the case ran */
            topo_pool_clear(run_pool);
            if (topo_case_run(&o, c, run_pool, &err) < 0) {
                fprintf(stderr, "topoassign cases: %s: %s\n", c->id, err.text);
                goto cleanup; /* out of memory: no verdict */
            }
            if (o.passed) {
                npassed++;
                printf("PASS %s\n", c->id);
            } else {
                nfailed++;
                printf("FAIL %s: %s\n", c->id, o.reason);
                if (strlist_add(&failed, c->id) < 0)
                    goto oom;
            }
            if (verbose)
                print_verbose(c, &o, run_pool);
        }
    }

    int mismatch = 0;
    if (known_path != NULL) {
        for (size_t i = 0; i < failed.n; i++) {
            if (strlist_find(&known, failed.items[i]) < 0) {
                printf("unexpected failure: %s (not in %s)\n", failed.items[i], known_path);
                mismatch = 1;
            }
        }
        for (size_t i = 0; i < known.n; i++) {
            if (known.seen[i]) {
                if (strlist_find(&failed, known.items[i]) < 0) {
                    printf("unexpected pass: %s (listed in %s)\n", known.items[i], known_path);
                    mismatch = 1;
                }
            } else if (ids.n == 0) {
                printf("unknown case in %s: %s\n", known_path, known.items[i]);
                mismatch = 1;
            }
        }
    }
    printf("%zu passed, %zu failed\n", npassed, nfailed);
    if (known_path != NULL)
        status = mismatch ? TOPO_CLI_EXIT_NOFIT : TOPO_CLI_EXIT_OK;
    else
        status = nfailed == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_NOFIT;
    goto cleanup;

oom:
    fprintf(stderr, "topoassign cases: out of memory\n");
    status = TOPO_CLI_EXIT_BADINPUT;
cleanup:
    fflush(stdout);
    if (loaded != NULL) {
        for (size_t f = 0; f < files->n; f++)
            topo_cases_release(loaded[f]);
        free(loaded);
    }
    topo_pool_free(run_pool);
    topo_pool_free(pool);
    strlist_free(&ids);
    strlist_free(&known);
    strlist_free(&failed);
    topo_opts_free(table, sizeof table / sizeof table[0], &a);
    return status;
}
