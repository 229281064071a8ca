/* What the drivers of topo-webhook's in-memory views share (ns_policy_driver,
 * quota_driver): a loop answering one JSON object per stdin line, and client
 * options that fail fast. */
#ifndef TOPO_E2E_LINE_DRIVER_H
#define TOPO_E2E_LINE_DRIVER_H

#include <jansson.h>

#include "topo/k8s.h"

/* Fills out (an empty object) for one input line; the tokens of the line
 * are the names asked about. 0, or -1 to stop with exit status 1. */
typedef int (*line_driver_answer_fn)(json_t *out, char *line, void *payload);

/* Reads stdin until "quit" or its end, printing answer's object for each
 * line (compact, keys sorted). 0 at the end, 1 when an answer failed. */
int line_driver_run(line_driver_answer_fn answer, void *payload);

/* Tests fail fast: few HTTP retries, short backoffs (of the client, and
 * of the view's list+watch loop). */
void line_driver_fast(topo_k8s_opts *ko, long *backoff_base_ms, long *backoff_max_ms);

#endif
