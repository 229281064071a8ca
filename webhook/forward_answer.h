/* A placer's answer to a forward is outside input: it is relayed to the
 * API server only when it is one the API server can take for the request
 * forwarded (placer.c). Any thread. */
#ifndef TOPO_WEBHOOK_FORWARD_ANSWER_H
#define TOPO_WEBHOOK_FORWARD_ANSWER_H

#include <stddef.h>

/* Whether a placer's 200 answer is one the API server can take for the
 * request whose uid is uid: a JSON AdmissionReview whose response.uid is
 * uid and response.allowed a boolean. 1; 0 with why (what is wrong) when
 * not (garbage, another request's answer): relaying it would fail the
 * request at the API server, or answer for another pod. */
int wh_forward_answer_ok(const char *answer, size_t len, const char *uid, char *why,
                         size_t why_size);

#endif
