/* libFuzzer harness for label values from infrastructure names
 * (topo_labelvalue_assign_scoped), which turns whatever NetBox, UFM or a
 * fabric dump names a rack, switch or NVLink domain into label values. The
 * input is up to 64 domains, one a line, "scope\tname" or "name" (unscoped).
 * Any set gives values or TOPO_ECONFLICT, never a crash or a leak, and the
 * values keep the rule's promises: each valid; equal domains alike and
 * different domains apart; the same in reverse order; and a domain's value
 * is the one it has on its own unless another domain's value on its own is
 * the same (a residual collision, resolved from the pair). Seeds:
 * fixtures/fuzz/labelvalue. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/labelsyntax.h"
#include "topo/labelvalue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DOMAINS 64

static int same_domain(const char *sa, const char *na, const char *sb, const char *nb)
{
    if ((sa == NULL) != (sb == NULL))
        return 0;
    return strcmp(na, nb) == 0 && (sa == NULL || strcmp(sa, sb) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    const char *raw[MAX_DOMAINS], *scope[MAX_DOMAINS], *rraw[MAX_DOMAINS], *rscope[MAX_DOMAINS];
    const char *out[MAX_DOMAINS], *rout[MAX_DOMAINS], *alone[MAX_DOMAINS];
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    size_t n = 0;
    if (text == NULL || pool == NULL)
        goto done;
    memcpy(text, data, size);
    text[size] = '\0';
    for (char *line = text; line != NULL && n < MAX_DOMAINS;) {
        char *end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        char *tab = strchr(line, '\t');
        if (tab != NULL) {
            *tab = '\0';
            scope[n] = line;
            raw[n] = tab + 1;
        } else {
            scope[n] = NULL;
            raw[n] = line;
        }
        n++;
        line = end != NULL ? end + 1 : NULL;
    }
    for (size_t i = 0; i < n; i++) {
        rraw[i] = raw[n - 1 - i];
        rscope[i] = scope[n - 1 - i];
    }
    int rc = topo_labelvalue_assign_scoped(out, raw, scope, n, pool, &err);
    int rrc = topo_labelvalue_assign_scoped(rout, rraw, rscope, n, pool, &err);
    if (rc != rrc || (rc != 0 && rc != TOPO_ECONFLICT))
        abort();
    if (rc != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (out[i][0] == '\0' || !topo_label_value_valid(out[i], NULL, 0))
            abort();
        if (strcmp(out[i], rout[n - 1 - i]) != 0)
            abort();
        if (topo_labelvalue_assign_scoped(&alone[i], &raw[i], &scope[i], 1, pool, &err) != 0)
            abort();
        for (size_t k = 0; k < i; k++)
            if (same_domain(scope[i], raw[i], scope[k], raw[k]) != (strcmp(out[i], out[k]) == 0))
                abort();
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(out[i], alone[i]) == 0)
            continue;
        int collides = 0;
        for (size_t k = 0; k < n && !collides; k++)
            collides = !same_domain(scope[i], raw[i], scope[k], raw[k]) &&
                       strcmp(alone[i], alone[k]) == 0;
        if (!collides)
            abort();
    }
done:
    topo_pool_free(pool);
    free(text);
    return 0;
}
