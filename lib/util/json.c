/* See topo/json.h. jansson allocates through json_alloc, which notes a
 * failure for the load or dump running on this thread. The hook is
 * process-wide and set before main, while there is one thread (setting it
 * later would race with threads already using jansson); it only forwards to
 * malloc, so memory jansson allocated before is freed the same way. */
#include "topo/json.h"

#include <stdlib.h>

static _Thread_local int json_alloc_failed;

static void *json_alloc(size_t size)
{
    void *p = malloc(size);
    if (p == NULL)
        json_alloc_failed = 1;
    return p;
}

#if defined(__GNUC__)
__attribute__((constructor)) static void json_alloc_hook(void)
{
    json_set_alloc_funcs(json_alloc, free);
}
#endif

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
