/* The AdmissionReview v1 response encoder (jansson; the patch in base64 by
 * OpenSSL). */
#include "topo/admission_review.h"
#include "topo/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

/* A warning cut to TOPO_ADMISSION_WARNING_MAX characters (code points), the
 * last three replaced by "..." when cut. */
static json_t *warning(const char *w)
{
    char buf[TOPO_ADMISSION_WARNING_MAX * 4 + 4];
    size_t chars = 0, i = 0, cut3 = 0;

    for (i = 0; w[i] != '\0'; i++) {
        if (((unsigned char)w[i] & 0xC0) == 0x80)
            continue;
        if (chars == TOPO_ADMISSION_WARNING_MAX - 3)
            cut3 = i;
        if (chars == TOPO_ADMISSION_WARNING_MAX)
            break;
        chars++;
    }
    if (w[i] == '\0')
        return json_string(w);
    memcpy(buf, w, cut3);
    memcpy(buf + cut3, "...", 4);
    return json_string(buf);
}

int topo_admission_encode(char **out, size_t *out_len, const topo_admission_response *resp,
                          topo_err *err)
{
    json_t *root = NULL, *r = NULL;
    char *patch_text = NULL;
    unsigned char *b64 = NULL;
    int rc = TOPO_ENOMEM;

    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    if (resp->uid == NULL || resp->uid[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "response: uid required");
    root = json_object();
    r = json_object();
    if (root == NULL || r == NULL ||
        json_object_set_new(root, "apiVersion", json_string("admission.k8s.io/v1")) != 0 ||
        json_object_set_new(root, "kind", json_string("AdmissionReview")) != 0)
        goto cleanup;
    if (json_object_set_new(r, "uid", json_string(resp->uid)) != 0) {
        rc = topo_err_set(err, TOPO_EINVALID, "response: uid is not UTF-8");
        goto cleanup;
    }
    if (json_object_set_new(r, "allowed", json_boolean(resp->allowed)) != 0)
        goto cleanup;
    if (!resp->allowed && (resp->status_code != 0 || resp->status_message != NULL)) {
        json_t *st = json_object();
        if (st == NULL || json_object_set_new(r, "status", st) != 0)
            goto cleanup;
        if (resp->status_code != 0 &&
            json_object_set_new(st, "code", json_integer(resp->status_code)) != 0)
            goto cleanup;
        if (resp->status_message != NULL &&
            json_object_set_new(st, "message", json_string(resp->status_message)) != 0) {
            rc = topo_err_set(err, TOPO_EINVALID, "response: status message is not UTF-8");
            goto cleanup;
        }
    }
    if (resp->nwarnings > 0) {
        json_t *ws = json_array();
        if (ws == NULL || json_object_set_new(r, "warnings", ws) != 0)
            goto cleanup;
        for (size_t i = 0; i < resp->nwarnings; i++) {
            json_t *w = warning(resp->warnings[i]);
            if (w == NULL || json_array_append_new(ws, w) != 0) {
                rc = topo_err_set(err, TOPO_EINVALID, "response: warning %zu is not UTF-8", i);
                goto cleanup;
            }
        }
    }
    if (topo_jsonpatch_count(resp->patch) > 0) {
        size_t n;
        if (topo_jsonpatch_dump(&patch_text, resp->patch) < 0)
            goto cleanup;
        n = strlen(patch_text);
        if (n > (size_t)(INT32_MAX / 4 * 3 - 4)) {
            rc = topo_err_set(err, TOPO_ELIMIT, "response: patch too large");
            goto cleanup;
        }
        b64 = malloc(4 * ((n + 2) / 3) + 1);
        if (b64 == NULL)
            goto cleanup;
        EVP_EncodeBlock(b64, (const unsigned char *)patch_text, (int)n);
        if (json_object_set_new(r, "patchType", json_string("JSONPatch")) != 0 ||
            json_object_set_new(r, "patch", json_string((const char *)b64)) != 0)
            goto cleanup;
    }
    if (json_object_set(root, "response", r) != 0)
        goto cleanup;
    *out = topo_json_dumps(root, JSON_COMPACT);
    if (*out == NULL)
        goto cleanup;
    if (out_len != NULL)
        *out_len = strlen(*out);
    rc = 0;

cleanup:
    if (rc == TOPO_ENOMEM)
        topo_err_set(err, rc, "response: out of memory");
    free(b64);
    free(patch_text);
    json_decref(r);
    json_decref(root);
    return rc;
}
