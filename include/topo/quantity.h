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

#endif
