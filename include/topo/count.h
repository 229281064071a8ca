/* Counts carried by labels and annotations (pod-group-total-count,
 * topology.topo.io/podset-size, a completion index): decimal digits only (no
 * sign, no spaces), as the integrations write them, bounded before they size
 * anything. In util because both the PodSet key (codec) and Kueue's request
 * (kueue) read them, and neither layer stands on the other. */
#ifndef TOPO_COUNT_H
#define TOPO_COUNT_H

#include <stdint.h>

#include "topo/error.h"

/* 0 with *out, or TOPO_EINVALID with "<name>: \"<value>\" is not a count in
 * <min>..<max>" (value NULL or empty included). */
int topo_parse_count(int64_t *out, const char *value, const char *name, int64_t min,
                     int64_t max, topo_err *err) TOPO_MUST_CHECK;

#endif
