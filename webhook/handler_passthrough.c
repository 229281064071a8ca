/* The placeholder admission handler (see handler_passthrough.h). */
#include "handler_passthrough.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server.h"
#include "topo/limits.h"
#include "topo/json.h"
#include "topo/log.h"

static int dump(char **out_body, size_t *out_len, json_t *doc)
{
    char *text = topo_json_dumps(doc, JSON_COMPACT);
    if (!text)
        return -1;
    *out_len = strlen(text);
    *out_body = text;
    return 0;
}

static int bad_request(char **out_body, size_t *out_len, int *out_status, const char *fmt, ...)
    TOPO_PRINTF(4, 5);
static int bad_request(char **out_body, size_t *out_len, int *out_status, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *doc = json_pack("{s:s}", "error", msg);
    int rc = doc ? dump(out_body, out_len, doc) : -1;
    json_decref(doc);
    *out_status = 400;
    return rc;
}

static size_t depth_of(const json_t *v, size_t limit)
{
    size_t best = 0;
    if (limit == 0)
        return 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c) {
            size_t d = depth_of(c, limit - 1);
            if (d > best)
                best = d;
        }
        return best + 1;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) {
            size_t d = depth_of(c, limit - 1);
            if (d > best)
                best = d;
        }
        return best + 1;
    }
    return 0;
}

int wh_handle_passthrough(void *ctx, const char *body, size_t len, char **out_body,
                               size_t *out_len, int *out_status)
{
    const wh_request *req = ctx;
    json_error_t jerr;
    json_t *root = NULL, *resp = NULL;
    int rc = -1;

    *out_body = NULL;
    *out_len = 0;
    if (topo_json_load(&root, body, len, JSON_REJECT_DUPLICATES, &jerr) == TOPO_ENOMEM)
        goto cleanup; /* rc -1: the server answers 500 */
    if (!root) {
        rc = bad_request(out_body, out_len, out_status,
                         "malformed AdmissionReview: %s at line %d column %d", jerr.text,
                         jerr.line, jerr.column);
        goto cleanup;
    }
    if (!json_is_object(root)) {
        rc = bad_request(out_body, out_len, out_status,
                         "malformed AdmissionReview: not a JSON object");
        goto cleanup;
    }
    if (depth_of(root, TOPO_MAX_DOCUMENT_DEPTH + 1) > TOPO_MAX_DOCUMENT_DEPTH) {
        rc = bad_request(out_body, out_len, out_status,
                         "malformed AdmissionReview: nested deeper than %d",
                         TOPO_MAX_DOCUMENT_DEPTH);
        goto cleanup;
    }
    json_t *request = json_object_get(root, "request");
    if (!json_is_object(request)) {
        rc = bad_request(out_body, out_len, out_status,
                         "malformed AdmissionReview: no \"request\" object");
        goto cleanup;
    }
    json_t *uid = json_object_get(request, "uid");
    if (uid && !json_is_string(uid)) {
        rc = bad_request(out_body, out_len, out_status,
                         "malformed AdmissionReview: request.uid is not a string");
        goto cleanup;
    }
    resp = json_pack("{s:s, s:s, s:{s:O?, s:b}}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "response", "uid", uid, "allowed", 1);
    if (!resp)
        goto cleanup;
    if (dump(out_body, out_len, resp) < 0)
        goto cleanup;
    *out_status = 200;
    if (topo_log_enabled(TOPO_LOG_DEBUG)) {
        char tmo[32];
        snprintf(tmo, sizeof tmo, "%lld", req ? req->timeout_ms : -1LL);
        topo_log_field f[] = {{"uid", uid ? json_string_value(uid) : ""}, {"timeout_ms", tmo}};
        topo_log_kv(TOPO_LOG_DEBUG, f, 2, "admission request allowed (passthrough)");
    }
    rc = 0;
cleanup:
    json_decref(resp);
    json_decref(root);
    return rc;
}
