/* Kubernetes resource quantities ("500m", "1Gi", "2e3", "1.5"), parsed exactly
 * into integers. */
#ifndef TOPO_QUANTITY_H
#define TOPO_QUANTITY_H

#include <stdint.h>

#include "topo/error.h"

/* Parses a quantity and returns its value in units of 10^-3 (milli-units),
 * rounded up as Kubernetes' MilliValue() does. Rejects garbage, empty
 * strings, unknown suffixes and values whose milli-value overflows int64.
 * Returns 0 or TOPO_EINVALID / TOPO_ELIMIT with a message. */
int topo_quantity_parse_milli(int64_t *out, const char *text, topo_err *err);

/* Parses a quantity and returns its value in whole units, rounded up
 * (Kubernetes' Value()). */
int topo_quantity_parse_value(int64_t *out, const char *text, topo_err *err);

/* Kueue's resource arithmetic: "cpu" is held in millicores, every other
 * resource in whole base units rounded up. */
int topo_quantity_parse_resource(int64_t *out, const char *resource_name, const char *text,
                                 topo_err *err);

/* Arithmetic on amounts, saturating at INT64_MIN/INT64_MAX: a request of
 * 2^63-1 pods, or three such GPU requests on one node, make a full node and
 * a pod that fits nowhere, never a wrapped value that frees a full node or
 * a division by zero. */
static inline int64_t topo_quantity_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t topo_quantity_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r))
        return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t topo_quantity_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_mul_overflow(a, b, &r))
        return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

#endif
