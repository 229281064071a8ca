/* RFC 6902 JSON Patch builder, the pod patches, and the AdmissionReview v1
 * response encoder (jansson; base64 by OpenSSL). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "topo/admission.h"
#include "topo/json.h"

struct topo_jsonpatch {
    json_t *ops; /* array of operation objects */
};

int topo_jsonpatch_new(topo_jsonpatch **out)
{
    topo_jsonpatch *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (p == NULL)
        return TOPO_ENOMEM;
    p->ops = json_array();
    if (p->ops == NULL) {
        free(p);
        return TOPO_ENOMEM;
    }
    *out = p;
    return 0;
}

void topo_jsonpatch_free(topo_jsonpatch *patch)
{
    if (patch == NULL)
        return;
    json_decref(patch->ops);
    free(patch);
}

size_t topo_jsonpatch_count(const topo_jsonpatch *patch)
{
    return patch == NULL ? 0 : json_array_size(patch->ops);
}

int topo_json_pointer_join(char **out, const char *parent, const char *token)
{
    size_t plen = strlen(parent), extra = 0, n;
    char *s;

    *out = NULL;
    for (const char *c = token; *c; c++)
        extra += *c == '~' || *c == '/';
    s = malloc(plen + 1 + strlen(token) + extra + 1);
    if (s == NULL)
        return TOPO_ENOMEM;
    memcpy(s, parent, plen);
    n = plen;
    s[n++] = '/';
    for (const char *c = token; *c; c++) {
        if (*c == '~' || *c == '/') {
            s[n++] = '~';
            s[n++] = *c == '~' ? '0' : '1';
        } else {
            s[n++] = *c;
        }
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

/* Appends {"op": op, "path": path[, "value": value]}; steals value. */
static int push_new(topo_jsonpatch *patch, const char *op, const char *path, json_t *value)
{
    json_t *o = json_object();
    int bad = o == NULL || json_object_set_new(o, "op", json_string(op)) != 0 ||
              json_object_set_new(o, "path", json_string(path)) != 0;
    if (!bad && value != NULL) {
        bad = json_object_set_new(o, "value", value) != 0;
        value = NULL;
    }
    if (!bad) {
        bad = json_array_append_new(patch->ops, o) != 0;
        o = NULL;
    }
    json_decref(value);
    json_decref(o);
    return bad ? TOPO_ENOMEM : 0;
}

static int push_string(topo_jsonpatch *patch, const char *op, const char *path, const char *v)
{
    json_t *s = json_string(v);
    if (s == NULL) /* NULL or not UTF-8 (or, rarely, out of memory) */
        return TOPO_EINVALID;
    return push_new(patch, op, path, s);
}

int topo_jsonpatch_add_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "add", path, value);
}

int topo_jsonpatch_replace_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "replace", path, value);
}

int topo_jsonpatch_test_string(topo_jsonpatch *patch, const char *path, const char *value)
{
    return push_string(patch, "test", path, value);
}

int topo_jsonpatch_remove(topo_jsonpatch *patch, const char *path)
{
    return push_new(patch, "remove", path, NULL);
}

int topo_jsonpatch_add_map(topo_jsonpatch *patch, const char *path, const topo_kv *kv, size_t n)
{
    json_t *m = json_object();
    if (m == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_string(kv[i].value);
        if (v == NULL || json_object_set_new(m, kv[i].key, v) != 0) {
            json_decref(m);
            return TOPO_EINVALID;
        }
    }
    return push_new(patch, "add", path, m);
}

static json_t *named(const char *name)
{
    json_t *o = json_object();
    if (o != NULL && json_object_set_new(o, "name", json_string(name)) != 0) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

int topo_jsonpatch_add_named(topo_jsonpatch *patch, const char *path, const char *name)
{
    json_t *o = named(name);
    return o == NULL ? TOPO_ENOMEM : push_new(patch, "add", path, o);
}

int topo_jsonpatch_add_named_list(topo_jsonpatch *patch, const char *path, const char *name)
{
    json_t *a = json_array(), *o = named(name);
    if (a == NULL || o == NULL || json_array_append_new(a, o) != 0) {
        json_decref(a);
        return TOPO_ENOMEM;
    }
    return push_new(patch, "add", path, a);
}

json_t *topo_jsonpatch_json(const topo_jsonpatch *patch)
{
    return json_incref(patch->ops);
}

int topo_jsonpatch_dump(char **out, const topo_jsonpatch *patch)
{
    *out = topo_json_dumps(patch->ops, JSON_COMPACT);
    return *out == NULL ? TOPO_ENOMEM : 0;
}

/* --- pod patches -------------------------------------------------------------------- */

static const char *kv_find(const topo_kv *kv, size_t n, const char *key)
{
    return topo_admission_kv_get(kv, n, key);
}

/* Adds to the map at `parent` (present or not) the entries it lacks;
 * `replace` says what to do with a key of another value (else: conflict). */
static int patch_map(topo_jsonpatch *patch, const char *parent, const char *what, int has_map,
                     const topo_kv *cur, size_t ncur, const topo_kv *want, size_t nwant,
                     int replace, topo_err *err)
{
    topo_kv *missing = NULL;
    size_t nmissing = 0;
    char *ptr = NULL;
    int rc = 0;

    if (nwant == 0)
        return 0;
    for (size_t i = 0; i < nwant; i++) {
        const char *v = kv_find(cur, ncur, want[i].key);
        if (v != NULL && strcmp(v, want[i].value) != 0 && !replace)
            return topo_err_set(err, TOPO_ECONFLICT,
                                "%s \"%s\" is already \"%s\", not \"%s\"", what, want[i].key, v,
                                want[i].value);
    }
    missing = calloc(nwant, sizeof(*missing));
    if (missing == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < nwant; i++) {
        const char *v = kv_find(cur, ncur, want[i].key);
        if (v == NULL)
            missing[nmissing++] = want[i];
    }
    if (!has_map) {
        if (nmissing > 0 && (rc = topo_jsonpatch_add_map(patch, parent, missing, nmissing)) < 0)
            goto fail;
        goto cleanup;
    }
    for (size_t i = 0; i < nwant; i++) {
        const char *v = kv_find(cur, ncur, want[i].key);
        if (v != NULL && strcmp(v, want[i].value) == 0)
            continue;
        if ((rc = topo_json_pointer_join(&ptr, parent, want[i].key)) < 0)
            goto fail;
        rc = v == NULL ? topo_jsonpatch_add_string(patch, ptr, want[i].value)
                       : topo_jsonpatch_replace_string(patch, ptr, want[i].value);
        free(ptr);
        ptr = NULL;
        if (rc < 0)
            goto fail;
    }
    goto cleanup;
fail:
    rc = topo_err_set(err, rc, "%s: %s", what,
                      rc == TOPO_EINVALID ? "invalid (non-UTF-8) key or value" : "out of memory");
cleanup:
    free(missing);
    return rc;
}

int topo_admission_patch_pod(topo_jsonpatch *patch, const topo_admission_pod *pod,
                             const topo_kv *selector, size_t nselector,
                             const topo_kv *annotations, size_t nannotations, topo_err *err)
{
    size_t before = topo_jsonpatch_count(patch);
    int rc;

    /* Check the selector for conflicts before anything is added. */
    for (size_t i = 0; i < nselector; i++) {
        const char *v = kv_find(pod->node_selector, pod->nnode_selector, selector[i].key);
        if (v != NULL && strcmp(v, selector[i].value) != 0)
            return topo_err_set(err, TOPO_ECONFLICT,
                                "spec.nodeSelector \"%s\" is already \"%s\", not \"%s\"",
                                selector[i].key, v, selector[i].value);
    }
    if ((rc = patch_map(patch, "/spec/nodeSelector", "spec.nodeSelector", pod->has_node_selector,
                        pod->node_selector, pod->nnode_selector, selector, nselector, 0, err)) <
            0 ||
        (rc = patch_map(patch, "/metadata/annotations", "metadata.annotations",
                        pod->has_annotations, pod->annotations, pod->nannotations, annotations,
                        nannotations, 1, err)) < 0) {
        /* Leave the patch as it was. */
        while (json_array_size(patch->ops) > before)
            json_array_remove(patch->ops, json_array_size(patch->ops) - 1);
        return rc;
    }
    return 0;
}

int topo_admission_patch_gate(topo_jsonpatch *patch, const topo_admission_pod *pod,
                              const char *gate, topo_err *err)
{
    int rc;

    for (size_t i = 0; i < pod->nscheduling_gates; i++)
        if (strcmp(pod->scheduling_gates[i], gate) == 0)
            return 0;
    rc = pod->has_scheduling_gates
             ? topo_jsonpatch_add_named(patch, "/spec/schedulingGates/-", gate)
             : topo_jsonpatch_add_named_list(patch, "/spec/schedulingGates", gate);
    if (rc < 0)
        return topo_err_set(err, rc, "spec.schedulingGates: out of memory");
    return 0;
}

/* --- response ----------------------------------------------------------------------- */

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
