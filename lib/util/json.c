/* See topo/json.h. jansson allocates through json_alloc, which notes a
 * failure for the load or dump running on this thread. The hook is
 * process-wide and set before main, while there is one thread (setting it
 * later would race with threads already using jansson); it only forwards to
 * malloc, so memory jansson allocated before is freed the same way. */
#include "topo/json.h"

#include <stdlib.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#define BLOCK_SIZE(p, asked) malloc_usable_size(p)
#else
#define BLOCK_SIZE(p, asked) (asked)
#endif

static _Thread_local int json_alloc_failed;

/* The memory budget of this thread's parse (topo_json_budget_begin). The
 * size of a block is asked of malloc (malloc_usable_size) rather than kept
 * in a header before it: a block allocated under a budget is freed long
 * after it (the parsed tree), and a block allocated without one may be
 * freed under one; both go to free() as they are. Without a budget the
 * cost is one thread-local test per call. Blocks freed under a budget that
 * were allocated before it only make the budget more lenient. */
static _Thread_local struct {
    int active;
    int exceeded;
    size_t max;
    size_t used;
} budget;

static void *json_alloc(size_t size)
{
    void *p = malloc(size);
    if (p == NULL) {
        json_alloc_failed = 1;
    } else if (budget.active) {
        size_t n = BLOCK_SIZE(p, size);
        if (n > budget.max - budget.used) {
            free(p);
            budget.exceeded = 1;
            json_alloc_failed = 1;
            return NULL;
        }
        budget.used += n;
    }
    return p;
}

static void json_free(void *p)
{
    if (p != NULL && budget.active) {
#if defined(__GLIBC__) || defined(__linux__)
        size_t n = malloc_usable_size(p);
        budget.used -= n < budget.used ? n : budget.used;
#endif
    }
    free(p);
}

#if defined(__GNUC__)
__attribute__((constructor)) static void json_alloc_hook(void)
{
    json_set_alloc_funcs(json_alloc, json_free);
}
#endif

void topo_json_budget_begin(size_t max_bytes)
{
    budget.active = 1;
    budget.exceeded = 0;
    budget.max = max_bytes;
    budget.used = 0;
}

int topo_json_budget_end(void)
{
    int exceeded = budget.exceeded;
    budget.active = 0;
    budget.exceeded = 0;
    budget.used = 0;
    return exceeded;
}

int topo_json_load(json_t **out, const char *text, size_t len, size_t flags,
                   json_error_t *jerr)
{
    json_alloc_failed = 0;
    *out = json_loadb(text, len, flags, jerr);
    /* Without the hook: the failures jansson does name, and its lexer's
     * first buffer, which fails with no message at all. */
    if (json_alloc_failed ||
        (*out == NULL &&
         (json_error_code(jerr) == json_error_out_of_memory || jerr->text[0] == '\0'))) {
        json_decref(*out);
        *out = NULL;
        return TOPO_ENOMEM;
    }
    return *out != NULL ? 0 : TOPO_EINVALID;
}

void topo_json_alloc_watch(void)
{
    json_alloc_failed = 0;
}

int topo_json_alloc_failed(void)
{
    return json_alloc_failed;
}

char *topo_json_dumps(const json_t *value, size_t flags)
{
    json_alloc_failed = 0;
    char *text = json_dumps(value, flags);
    if (json_alloc_failed) {
        free(text);
        return NULL;
    }
    return text;
}
