/* libFuzzer harness for the conformance case loader (topo_cases_parse,
 * lib/inventory/cases.c, read through the one field reader topo_cfg): any
 * bytes give a case file or an error, never a crash or a leak, and a file
 * that loads holds what the loader promises: ids non-empty and unique, every
 * case with PodSets, each named and each expectation naming one of them.
 * Seeds: fixtures/conformance/bad and loader. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/cases.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const topo_case_file *file)
{
    for (size_t i = 0; i < file->ncases; i++) {
        const topo_case *c = &file->cases[i];
        if (c->id == NULL || c->id[0] == '\0' || topo_cases_find(file, c->id) != c ||
            c->npodsets == 0)
            abort();
        for (size_t k = 0; k < c->npodsets; k++)
            if (c->podsets[k].name == NULL || c->podsets[k].name[0] == '\0')
                abort();
        for (size_t k = 0; k < c->nexpect; k++)
            if (c->expect[k].podset == NULL)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_case_file *file = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return 0;
    if (topo_cases_parse(&file, (const char *)data, size, "fuzz.json", pool, &err) == 0) {
        check(file);
        topo_cases_release(file);
    }
    topo_pool_free(pool);
    return 0;
}
