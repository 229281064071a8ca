/* The benchmark floor handler (see handler_noop.h). */
#include "handler_noop.h"

#include <stdlib.h>
#include <string.h>

/* Built at compile time: no JSON library call, so the measured cost is the
 * transport's (TLS, HTTP parsing, body accumulation), one pass over the
 * body and one malloc, which the server needs because it frees every
 * handler's body. */
static const char noop_response[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
    "\"response\":{\"uid\":\"" TOPO_WH_NOOP_UID "\",\"allowed\":true}}";
static const char noop_refusal[] = "{\"error\":\"the body is empty or has a NUL byte\"}";

int wh_handle_noop(void *ctx, const char *body, size_t len, char **out_body,
                        size_t *out_len, int *out_status)
{
    (void)ctx;
    /* Read the body, as any real handler must before it answers (a decoder
     * passes over every byte at least once), and discard it. The pass has
     * an effect, so the compiler cannot drop it: a JSON text is never empty
     * and never holds a NUL byte. */
    int readable = len > 0 && memchr(body, '\0', len) == NULL;
    const char *text = readable ? noop_response : noop_refusal;
    size_t size = readable ? sizeof noop_response : sizeof noop_refusal;
    char *copy = malloc(size);
    if (!copy)
        return -1;
    memcpy(copy, text, size);
    *out_body = copy;
    *out_len = size - 1;
    *out_status = readable ? 200 : 400;
    return 0;
}
