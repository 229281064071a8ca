/* The benchmark floor handler (topo-webhook --noop): the cost of the HTTPS
 * transport and of reading the request body, to which bench/webhook/run.sh
 * compares the admission handler. Not for production: it reads the body but
 * does not decode it. */
#ifndef TOPO_WEBHOOK_HANDLER_NOOP_H
#define TOPO_WEBHOOK_HANDLER_NOOP_H

#include <stddef.h>

/* A wh_handle_fn that reads the body once and discards it, and answers
 * every POST /mutate with 200 and a fixed allowed AdmissionReview response
 * whose uid is the constant TOPO_WH_NOOP_UID (an API server would reject the
 * mismatched uid: this handler only measures the server); 400 when the body
 * is empty or holds a NUL byte (no JSON text does). Returns -1 only when out
 * of memory. */
int wh_handle_noop(void *ctx, const char *body, size_t len, char **out_body,
                        size_t *out_len, int *out_status);

#define TOPO_WH_NOOP_UID "00000000-0000-0000-0000-000000000000"

#endif
