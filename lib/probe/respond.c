/* One response queued over libmicrohttpd (topo/probe.h): the probe port's
 * answers and topo-webhook's, so that creating, heading, queueing and
 * releasing a response (and freeing a body MHD could not take) is written
 * once. */
#define _POSIX_C_SOURCE 200809L

#include "topo/probe.h"

#include <stdlib.h>

#include <microhttpd.h>

int topo_probe_respond(struct MHD_Connection *conn, unsigned int status,
                       const topo_probe_reply *reply)
{
    struct MHD_Response *resp;
    if (reply->body && reply->owned)
        resp = MHD_create_response_from_buffer(reply->len, reply->body, MHD_RESPMEM_MUST_FREE);
    else if (reply->body)
        resp = MHD_create_response_from_buffer(reply->len, reply->body, MHD_RESPMEM_PERSISTENT);
    else
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (reply->owned)
            free(reply->body);
        return MHD_NO;
    }
    for (size_t i = 0; i < reply->nheaders; i++)
        if (reply->headers[i].value)
            MHD_add_response_header(resp, reply->headers[i].name, reply->headers[i].value);
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r == MHD_YES;
}
