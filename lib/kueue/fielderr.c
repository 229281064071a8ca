/* Kubernetes' field errors as text (apimachinery util/validation/field
 * Error.Error and util/errors aggregate), so a refusal reads exactly as
 * Kueue's own webhook would word it. */
#include "kueue_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topo/goparse.h"

static void add(kueue_errs *e, const char *msg)
{
    if (msg == NULL) {
        e->oom = 1;
        return;
    }
    /* The list is bounded by the rules (a dozen at most): past the cap an
     * error adds nothing a reader needs. */
    if (e->n < TOPO_KUEUE_MAX_FIELD_ERRORS)
        e->msgs[e->n++] = msg;
}

void kueue_invalid(kueue_errs *e, const char *field, const char *value, const char *detail)
{
    const char *q = topo_go_quote(e->pool, value);
    add(e, q ? topo_pool_printf(e->pool, "%s: Invalid value: %s: %s", field, q, detail) : NULL);
}

void kueue_invalid_int(kueue_errs *e, const char *field, int64_t value, const char *detail)
{
    add(e, topo_pool_printf(e->pool, "%s: Invalid value: %" PRId64 ": %s", field, value, detail));
}

void kueue_invalid_omit(kueue_errs *e, const char *field, const char *detail)
{
    add(e, topo_pool_printf(e->pool, "%s: Invalid value: %s", field, detail));
}

void kueue_required(kueue_errs *e, const char *field, const char *detail)
{
    add(e, topo_pool_printf(e->pool, "%s: Required value: %s", field, detail));
}

void kueue_forbidden(kueue_errs *e, const char *field, const char *detail)
{
    add(e, topo_pool_printf(e->pool, "%s: Forbidden: %s", field, detail));
}

void kueue_duplicate(kueue_errs *e, const char *field, const char *value)
{
    const char *q = topo_go_quote(e->pool, value);
    add(e, q ? topo_pool_printf(e->pool, "%s: Duplicate value: %s", field, q) : NULL);
}

int kueue_errs_finish(const kueue_errs *e, topo_err *err)
{
    if (e->oom)
        return topo_err_nomem(err, NULL);
    if (e->n == 0)
        return 0;
    if (e->n == 1)
        return topo_err_set(err, TOPO_EINVALID, "%s", e->msgs[0]);
    size_t len = 3;
    for (size_t i = 0; i < e->n; i++)
        len += strlen(e->msgs[i]) + 2;
    char *text = topo_pool_alloc(e->pool, len);
    if (text == NULL)
        return topo_err_nomem(err, NULL);
    size_t off = 0, shown = 0;
    text[off++] = '[';
    for (size_t i = 0; i < e->n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(e->msgs[i], e->msgs[j]) == 0;
        if (seen)
            continue;
        if (shown++ > 0) {
            memcpy(text + off, ", ", 2);
            off += 2;
        }
        size_t m = strlen(e->msgs[i]);
        memcpy(text + off, e->msgs[i], m);
        off += m;
    }
    if (shown == 1) /* Kubernetes prints a lone distinct error bare */
        return topo_err_set(err, TOPO_EINVALID, "%s", e->msgs[0]);
    text[off++] = ']';
    text[off] = '\0';
    return topo_err_set(err, TOPO_EINVALID, "%s", text);
}
