/* Input orders for tests (orders.h). */
#include "support/orders.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int test_next_order(size_t *v, size_t n)
{
    size_t i = n - 1, j = n - 1, t;
    while (i > 0 && v[i - 1] >= v[i])
        i--;
    if (i == 0)
        return 0;
    while (v[j] <= v[i - 1])
        j--;
    t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
    for (size_t a = i, b = n - 1; a < b; a++, b--) {
        t = v[a];
        v[a] = v[b];
        v[b] = t;
    }
    return 1;
}

char *test_json_array_in_order(const char *const *recs, const size_t *order, size_t n)
{
    size_t len = 3;
    for (size_t i = 0; i < n; i++)
        len += strlen(recs[i]) + 1;
    char *out = malloc(len);
    assert_non_null(out);
    strcpy(out, "[");
    for (size_t i = 0; i < n; i++) {
        strcat(out, recs[order[i]]);
        strcat(out, i + 1 < n ? "," : "]");
    }
    return out;
}
