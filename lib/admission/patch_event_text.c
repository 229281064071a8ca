/* What the Events on a gated pod say, and the patch that keeps its
 * wait-reason annotation in step with them (topo/admission.h). Pure. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/jsonpatch.h"
#include "topo/utf8.h"

#define SELECTOR_PREFIX "/spec/nodeSelector/"

void topo_admission_wait_reason_text(char out[TOPO_ADMISSION_WAIT_REASON_MAX + 1],
                                     const char *reason)
{
    size_t n = strlen(reason);
    if (n <= TOPO_ADMISSION_WAIT_REASON_MAX) {
        memcpy(out, reason, n + 1);
        return;
    }
    size_t keep = topo_utf8_cut(reason, n, TOPO_ADMISSION_WAIT_REASON_MAX - 3);
    memcpy(out, reason, keep);
    memcpy(out + keep, "...", 4);
}

int topo_admission_wait_reason_same(const char *annotation, const char *reason)
{
    char text[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    if (annotation == NULL || reason == NULL)
        return 0;
    topo_admission_wait_reason_text(text, reason);
    return strcmp(text, annotation) == 0;
}

int topo_admission_wait_reason_patch(json_t **out, const char *old, const char *reason,
                                     topo_err *err)
{
    topo_jsonpatch *patch = NULL;
    char *path = NULL;
    char cut[TOPO_ADMISSION_WAIT_REASON_MAX + 1];
    int rc;

    *out = NULL;
    topo_admission_wait_reason_text(cut, reason);
    if (topo_jsonpatch_new(&patch) < 0 ||
        topo_json_pointer_join(&path, "/metadata/annotations",
                               TOPO_ADMISSION_WAIT_REASON_ANNOTATION) < 0) {
        rc = topo_err_nomem(err, "wait-reason patch");
        goto cleanup;
    }
    /* "add" replaces a member that exists; the test makes it conditional */
    if ((old != NULL && (rc = topo_jsonpatch_test_string(patch, path, old)) < 0) ||
        (rc = topo_jsonpatch_add_string(patch, path, cut)) < 0) {
        rc = rc == TOPO_ENOMEM ? topo_err_nomem(err, "wait-reason patch")
                               : topo_err_set(err, rc, "wait-reason patch: not UTF-8");
        goto cleanup;
    }
    if ((*out = topo_jsonpatch_json(patch)) == NULL) {
        rc = topo_err_nomem(err, "wait-reason patch");
        goto cleanup;
    }
    rc = 0;
cleanup:
    free(path);
    topo_jsonpatch_free(patch);
    return rc;
}

/* Appends "k=v" (k a JSON Pointer token, unescaped) to out at *len; 0, or
 * -1 once out is full (then cut, ending in "..."). */
static int append_entry(char *out, size_t size, size_t *len, const char *token, size_t ntoken,
                        const char *value)
{
    char entry[TOPO_ADMISSION_WAIT_REASON_MAX * 2];
    size_t n = 0;
    if (*len > 0 && n + 2 < sizeof entry) {
        memcpy(entry, ", ", 2);
        n = 2;
    }
    for (size_t i = 0; i < ntoken && n + 1 < sizeof entry; i++) {
        if (token[i] == '~' && i + 1 < ntoken && (token[i + 1] == '0' || token[i + 1] == '1')) {
            entry[n++] = token[i + 1] == '0' ? '~' : '/';
            i++;
        } else {
            entry[n++] = token[i];
        }
    }
    n += (size_t)snprintf(entry + n, sizeof entry - n, "=%s", value);
    if (n >= sizeof entry)
        n = sizeof entry - 1;
    if (*len + n < size) {
        memcpy(out + *len, entry, n);
        *len += n;
        out[*len] = '\0';
        return 0;
    }
    /* full: as much as fits, at a UTF-8 boundary, and "..." */
    memcpy(out + *len, entry, size - 1 - *len);
    size_t keep = topo_utf8_cut(out, size - 1, size - 4);
    memcpy(out + keep, "...", 4);
    *len = keep + 3;
    return -1;
}

int topo_admission_patch_domain_text(char *out, size_t size, const json_t *patch)
{
    size_t len = 0, i;
    json_t *op;
    out[0] = '\0';
    json_array_foreach(patch, i, op) {
        const char *kind = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        json_t *value = json_object_get(op, "value");
        if (kind == NULL || path == NULL || strcmp(kind, "add") != 0)
            continue;
        if (strcmp(path, "/spec/nodeSelector") == 0 && json_is_object(value)) {
            const char *k;
            json_t *v;
            json_object_foreach(value, k, v) {
                if (json_is_string(v) && append_entry(out, size, &len, k, strlen(k),
                                                      json_string_value(v)) < 0)
                    return 0;
            }
        } else if (strncmp(path, SELECTOR_PREFIX, strlen(SELECTOR_PREFIX)) == 0 &&
                   json_is_string(value)) {
            const char *token = path + strlen(SELECTOR_PREFIX);
            if (append_entry(out, size, &len, token, strlen(token), json_string_value(value)) < 0)
                return 0;
        }
    }
    return len > 0 ? 0 : TOPO_ENOTFOUND;
}
