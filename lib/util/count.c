/* Counts in labels and annotations: digits only (no sign, no spaces), as
 * the integrations write them, bounded before they size anything. */
#include "topo/count.h"

int topo_parse_count(int64_t *out, const char *value, const char *name, int64_t min,
                     int64_t max, topo_err *err)
{
    int64_t v = 0;
    const char *p = value;
    int ok = p != NULL && *p != '\0';
    for (; ok && *p != '\0'; p++) {
        ok = *p >= '0' && *p <= '9';
        if (ok && v > (max - (*p - '0')) / 10)
            ok = 0; /* past max: stop before it can overflow */
        else if (ok)
            v = v * 10 + (*p - '0');
    }
    if (!ok || v < min || v > max)
        return topo_err_set(err, TOPO_EINVALID, "%s: \"%s\" is not a count in %lld..%lld", name,
                            value != NULL ? value : "", (long long)min, (long long)max);
    *out = v;
    return 0;
}
