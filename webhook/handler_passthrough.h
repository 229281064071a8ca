/* The handler topo-webhook uses when started without --inventory: allows
 * every request unchanged (echoing its uid). With --inventory the webhook
 * answers through lib/admission's topo_admission_handle instead. */
#ifndef TOPO_WEBHOOK_HANDLER_PASSTHROUGH_H
#define TOPO_WEBHOOK_HANDLER_PASSTHROUGH_H

#include <stddef.h>

/* A wh_handle_fn: answers a well-formed AdmissionReview with 200 and
 * {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
 *  "response":{"uid":<request.uid>,"allowed":true}}; anything else with 400
 * and {"error":"<what is wrong>"}. */
int wh_handle_passthrough(void *ctx, const char *body, size_t len, char **out_body,
                               size_t *out_len, int *out_status);

#endif
