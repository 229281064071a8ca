/* The benchmark floor handler (see handler_noop.h). */
#include "handler_noop.h"

#include <stdlib.h>
#include <string.h>

/* Built at compile time: no JSON library call, so the measured cost is the
 * transport's (TLS, HTTP parsing, body accumulation) plus one malloc, which
 * the server needs because it frees every handler's body. */
static const char noop_response[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
    "\"response\":{\"uid\":\"" TOPO_WH_NOOP_UID "\",\"allowed\":true}}";

int topo_wh_handle_noop(void *ctx, const char *body, size_t len, char **out_body,
                        size_t *out_len, int *out_status)
{
    (void)ctx;
    (void)body;
    (void)len;
    char *copy = malloc(sizeof noop_response);
    if (!copy)
        return -1;
    memcpy(copy, noop_response, sizeof noop_response);
    *out_body = copy;
    *out_len = sizeof noop_response - 1;
    *out_status = 200;
    return 0;
}
