/* The admission handler's entry points: an AdmissionReview
 * (topo_admission_handle, _until) and a gated pod retried by the ungater
 * (topo_admission_ungate_pod). The work is in handler_place.c, handler_reserve.c and
 * handler_answer.c; the context in handler_ctx.c (handler_internal.h). See
 * include/topo/admission.h. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/admission_review.h"
#include "topo/jsonpatch.h"

#include "handler_internal.h"
#include "review_internal.h"
#include "topo/codec.h"
#include "topo/engine.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/log.h"

static int error_body(char **out_body, size_t *out_len, int *out_status, int status,
                      const char *msg)
{
    json_t *doc = json_pack("{s:s}", "error", msg);
    char *text = doc ? topo_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL)
        return TOPO_ENOMEM;
    *out_body = text;
    *out_len = strlen(text);
    *out_status = status;
    return 0;
}

int topo_admission_handle(topo_admission_ctx *ctx, const char *body, size_t len, char **out_body,
                          size_t *out_len, int *out_status)
{
    return topo_admission_handle_until(ctx, 0, body, len, out_body, out_len, out_status);
}

static int handle(topo_admission_ctx *ctx, int64_t deadline_ns, const char *unplaced,
                  const char *body, size_t len, char **out_body, size_t *out_len,
                  int *out_status)
{
    topo_admission_request req;
    topo_err err = TOPO_ERR_INIT;
    json_t *root = NULL;
    answer a;
    int ret = TOPO_ENOMEM;

    *out_body = NULL;
    *out_len = 0;
    *out_status = 500;
    memset(&a, 0, sizeof a);
    a.resp = (topo_admission_response)TOPO_ADMISSION_RESPONSE_INIT;
    a.deadline_ns = deadline_ns;
    a.unplaced = unplaced;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return TOPO_ENOMEM;
    /* Packing reads more of a pod that passes than the review keeps: the
     * parsed body then stays (off, nothing more is kept or read). */
    int rc = adm_decode_body(&req, ctx->packing != NULL ? &root : NULL, body, len, pool, &err);
    if (rc == TOPO_ENOMEM)
        goto done;
    if (req.uid == NULL) {
        char msg[TOPO_ERR_TEXT_MAX + 40];
        snprintf(msg, sizeof msg, "malformed AdmissionReview: %s",
                 rc < 0 ? err.text : "no request.uid");
        ret = error_body(out_body, out_len, out_status, rc == TOPO_ELIMIT ? 413 : 400, msg);
        goto done;
    }
    a.resp.uid = req.uid;
    if (rc < 0) {
        atomic_fetch_add(&ctx->denied, 1);
        adm_refuse(&a, 400,
                   topo_pool_printf(pool, "topo-webhook: malformed AdmissionReview: %s", err.text));
    } else if (topo_admission_classify(&req) == TOPO_ADMISSION_TOPOLOGY_POD) {
        if (adm_place(ctx, &a, MODE_ADMIT, &req, NULL, pool) < 0)
            goto done;
        if (a.timed_out) {
            atomic_fetch_add(&ctx->timed_out, 1);
            ret = error_body(out_body, out_len, out_status, 504,
                             "the request's deadline passed while it waited to be placed; "
                             "nothing was reserved");
            goto done;
        }
        /* Annotations it carried unsealed go whatever the outcome (placed,
         * gated, admitted unplaced): nothing but the removal when the
         * answer had no patch, or dropped what it began (a conflict). */
        if (a.resp.allowed && a.nstrip > 0 && a.resp.patch == NULL) {
            if (adm_patch_start(&a) < 0)
                goto done;
            topo_jsonpatch_truncate(a.patch, a.nstrip);
            a.resp.patch = a.patch;
        }
    } else {
        atomic_fetch_add(&ctx->passed, 1);
        if (ctx->packing != NULL &&
            topo_admission_classify(&req) == TOPO_ADMISSION_PASS_NO_TOPOLOGY &&
            adm_pack(ctx, &a, &req, json_object_get(json_object_get(root, "request"), "object"),
                     pool) < 0)
            goto done;
    }
    topo_err_clear(&err);
    if (topo_admission_encode(out_body, out_len, &a.resp, &err) < 0)
        goto done;
    *out_status = 200;
    ret = 0;
done:
    topo_jsonpatch_free(a.patch);
    json_decref(root);
    topo_pool_free(pool);
    return ret;
}

int topo_admission_handle_until(topo_admission_ctx *ctx, int64_t deadline_ns, const char *body,
                                size_t len, char **out_body, size_t *out_len, int *out_status)
{
    return handle(ctx, deadline_ns, NULL, body, len, out_body, out_len, out_status);
}

int topo_admission_handle_unplaced(topo_admission_ctx *ctx, const char *why, const char *body,
                                   size_t len, char **out_body, size_t *out_len, int *out_status)
{
    return handle(ctx, 0, why != NULL ? why : "not placed here", body, len, out_body, out_len,
                  out_status);
}

int topo_admission_needs_placer(const char *body, size_t len)
{
    topo_admission_request req;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return 1; /* the placer answers as well as anyone */
    int rc = topo_admission_decode(&req, body, len, pool, &err);
    int needs = rc == 0 && topo_admission_classify(&req) == TOPO_ADMISSION_TOPOLOGY_POD;
    topo_pool_free(pool);
    return needs;
}

/* --- ungating ------------------------------------------------------------------------ */

int topo_admission_ungate_pod_json(topo_admission_ctx *ctx, const json_t *pod,
                                   json_t **out_patch, topo_err *err)
{
    json_t *review = NULL;
    topo_admission_request req;
    answer a;
    int rc;

    *out_patch = NULL;
    memset(&a, 0, sizeof a);
    a.resp = (topo_admission_response)TOPO_ADMISSION_RESPONSE_INIT;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_nomem(err, NULL);
    const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    if (uid == NULL || uid[0] == '\0') {
        rc = topo_err_set(err, TOPO_EINVALID, "pod: metadata.uid: required");
        goto done;
    }
    /* Read exactly as admission reads a pod: wrapped in a review. */
    if ((review = adm_pod_review(pod, uid)) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto done;
    }
    if ((rc = topo_admission_decode_json(&req, review, pool, err)) < 0)
        goto done;
    int gated = 0;
    for (size_t i = 0; i < req.pod.nscheduling_gates; i++)
        gated |= strcmp(req.pod.scheduling_gates[i], TOPO_ADMISSION_WAIT_GATE) == 0;
    if (!gated || !topo_admission_pod_has_topology(&req.pod)) {
        rc = topo_err_set(err, TOPO_EINVALID, "pod %s/%s: not gated by %s with a topology request",
                          req.pod.namespace_ ? req.pod.namespace_ : "",
                          req.pod.name ? req.pod.name : "", TOPO_ADMISSION_WAIT_GATE);
        goto done;
    }
    if (adm_place(ctx, &a, MODE_UNGATE, &req, uid, pool) < 0) {
        rc = topo_err_nomem(err, NULL);
    } else if (a.resp.patch != NULL) {
        *out_patch = topo_jsonpatch_json(a.patch);
        rc = *out_patch != NULL ? 0 : topo_err_nomem(err, NULL);
        if (rc == 0 && a.foreign != NULL) {
            /* counted once, when the patch that removes them is made (a
             * pod that still does not fit is read again each round) */
            atomic_fetch_add(&ctx->foreign, 1);
            topo_log(TOPO_LOG_WARN,
                     "pod %s/%s: gated, and carried annotations topo writes but did not write "
                     "there: %s (removed)",
                     adm_pod_namespace(&req), req.pod.name ? req.pod.name : "", a.foreign);
        }
    } else if (!a.resp.allowed) {
        rc = topo_err_set(err, TOPO_EINVALID, "%s", a.resp.status_message);
    } else {
        rc = topo_err_set(err, a.waiting_group ? TOPO_EWAITING : TOPO_ENOFIT, "%s",
                          a.failure ? a.failure : "does not fit");
    }
done:
    topo_jsonpatch_free(a.patch);
    json_decref(review);
    topo_pool_free(pool);
    return rc;
}

int topo_admission_ungate_pod(topo_admission_ctx *ctx, const char *pod_json, size_t len,
                              char **out_patch, topo_err *err)
{
    json_t *pod = NULL, *patch = NULL;
    int rc;

    *out_patch = NULL;
    if (len > TOPO_MAX_ADMISSION_BODY)
        return topo_err_set(err, TOPO_ELIMIT, "pod: %zu bytes, more than %u", len,
                            TOPO_MAX_ADMISSION_BODY);
    if ((rc = topo_codec_json_parse(&pod, pod_json, len, "pod", err)) < 0)
        return rc;
    if ((rc = topo_admission_ungate_pod_json(ctx, pod, &patch, err)) == 0 &&
        (*out_patch = topo_json_dumps(patch, JSON_COMPACT)) == NULL)
        rc = topo_err_nomem(err, NULL);
    json_decref(patch);
    json_decref(pod);
    return rc;
}
