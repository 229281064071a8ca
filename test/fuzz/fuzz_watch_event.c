/* libFuzzer harness for what the API server sends the Kubernetes client
 * (lib/net/k8s_decode.c): the input is one line of a watch stream, as
 * topo_k8s_watch hands each line to net_k8s_watch_line_decode; the same
 * bytes are then read as a list page (parsed and checked as the client's
 * GET does, then net_k8s_list_page_decode) and as the body of an error
 * answer (topo_k8s_status_error). Any bytes give a decoded value or an
 * error, never a crash, a leak, or a result that breaks the decoders'
 * promises (checked below). Seeds: fixtures/fuzz/watch. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/net/k8s_decode.h" /* white-box */
#include "topo/codec.h"
#include "topo/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error: a negative code, the same in err, and a message. */
static void check_error(int rc, const topo_err *err)
{
    if (rc >= 0 || err->code != rc || err->text[0] == '\0')
        abort();
}

static void check_rv(const char rv[TOPO_K8S_RV_MAX])
{
    if (memchr(rv, '\0', TOPO_K8S_RV_MAX) == NULL)
        abort();
}

static void fuzz_watch_line(const char *text, size_t size, int status_wanted)
{
    topo_k8s_watch_line l;
    topo_err err = TOPO_ERR_INIT;
    int rc = net_k8s_watch_line_decode(&l, text, size, status_wanted, "WATCH /api/v1/nodes",
                                        &err);
    if (rc != 0) {
        check_error(rc, &err);
        if (l.kind != TOPO_K8S_LINE_NONE && l.kind != TOPO_K8S_LINE_MALFORMED)
            abort();
    } else {
        switch (l.kind) {
        case TOPO_K8S_LINE_NONE:
            if (size != 0 || l.root != NULL)
                abort();
            break;
        case TOPO_K8S_LINE_EVENT:
            if (l.type < TOPO_K8S_ADDED || l.type > TOPO_K8S_BOOKMARK ||
                !json_is_object(l.object) || !json_is_object(l.root))
                abort();
            check_rv(l.rv);
            /* the rv the caller resumes from is the object's own */
            if (strcmp(l.rv, json_string_value(json_object_get(
                                 json_object_get(l.object, "metadata"), "resourceVersion"))) != 0)
                abort();
            break;
        case TOPO_K8S_LINE_STATUS:
            if (!status_wanted || !json_is_object(l.root) || l.object != NULL)
                abort();
            break;
        default:
            abort();
        }
    }
    net_k8s_watch_line_dispose(&l);
}

static void fuzz_list_page(const char *text, size_t size)
{
    json_t *page = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_k8s_list_page pg;
    char rv[TOPO_K8S_RV_MAX];

    /* what the client's GET accepts as a response: a JSON object */
    if (topo_codec_json_parse(&page, text, size, "response", &err) < 0 || !json_is_object(page))
        goto cleanup;
    int rc = net_k8s_list_page_decode(&pg, rv, page, "/api/v1/nodes?limit=500", &err);
    if (rc != 0) {
        check_error(rc, &err);
        goto cleanup;
    }
    check_rv(rv);
    if ((pg.items != NULL && !json_is_array(pg.items)) ||
        (pg.next != NULL && pg.next[0] == '\0'))
        abort();
    /* a later page: no resourceVersion wanted */
    if (net_k8s_list_page_decode(&pg, NULL, page, "/api/v1/nodes?limit=500", &err) != 0)
        abort();
cleanup:
    json_decref(page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    topo_err err = TOPO_ERR_INIT;

    fuzz_watch_line(text, size, 1);
    fuzz_watch_line(text, size, 0);
    fuzz_list_page(text, size);
    /* the body of a 410 answer, Status or not */
    check_error(topo_k8s_status_error(410, text, size, "GET /api/v1/nodes", &err), &err);
    return 0;
}
