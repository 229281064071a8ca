/* Seals on the pods topo-webhook answers (topo/cache.h "seal"): written in
 * the same patch as what decides where a pod goes, and checked when a pod
 * comes back (our own output reinvoked, a gated pod read by the ungater).
 * The annotations topo writes are public on every placed pod: anyone who
 * can create a pod can copy them, so their presence proves nothing, and a
 * pod carrying them without a seal of its own has them removed and trusted
 * for nothing (docs/webhook.md "What happens to a pod"). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/jsonpatch.h"
#include "topo/keyring.h"
#include "topo/log.h"

#include "handler_internal.h"

/* Every annotation topo writes shares this prefix: warnings name the rest
 * (a warning longer than TOPO_ADMISSION_WARNING_MAX is cut). */
#define TOPO_PREFIX "topology.topo.io/"

int adm_seal_keys_init(topo_admission_ctx *ctx, const topo_keyring *record_keys, topo_err *err)
{
    if (record_keys != NULL && record_keys->n > 0) {
        ctx->keys = *record_keys;
        ctx->records = 1;
        return 0;
    }
    /* No keys configured: one of our own, so that our output coming back
     * is still told apart from a copy. Nothing else verifies it, and no
     * cache binds a slot for a seal it cannot verify. */
    return topo_keyring_add_random(&ctx->keys, err);
}

const char *adm_pod_namespace(const topo_admission_request *req)
{
    if (req->pod.namespace_ != NULL && req->pod.namespace_[0] != '\0')
        return req->pod.namespace_;
    return req->namespace_ != NULL ? req->namespace_ : "";
}

const char *adm_seal(topo_admission_ctx *ctx, const topo_admission_request *req,
                     const char *podset_key, const char *reservation, const char *slot,
                     const char *role, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    char mac[TOPO_SHA256_HEX_LEN + 1];
    topo_cache_seal_fields f = {adm_pod_namespace(req), podset_key, reservation, slot, role};
    if (topo_cache_seal(mac, &ctx->keys, &f, &err) < 0) {
        topo_log(TOPO_LOG_ERROR, "PodSet %s: no seal: %s", podset_key ? podset_key : "?",
                 err.text);
        return NULL;
    }
    return topo_pool_strdup(pool, mac);
}

/* The gate's own annotations: every release of a pod removes them
 * (topo_admission_patch_ungate), sealed or not. */
int adm_is_gate_annotation(const char *key)
{
    static const char *const gate[] = TOPO_ADMISSION_GATE_ANNOTATIONS;
    for (size_t i = 0; gate[i] != NULL; i++)
        if (strcmp(key, gate[i]) == 0)
            return 1;
    return 0;
}

static const char *annotation(const topo_admission_pod *pod, const char *key)
{
    return topo_admission_kv_get(pod->annotations, pod->nannotations, key);
}

/* 1 when the pod's seal verifies for what it carries: its namespace, the
 * PodSet topo computes for it (a pod group's role's, for a role), its
 * reservation, slot and role; 0 when not; TOPO_ENOMEM. */
static int sealed(topo_admission_ctx *ctx, const topo_admission_request *req,
                  const topo_podset_id *id, topo_pool *pool)
{
    const topo_admission_pod *pod = &req->pod;
    const char *seal = annotation(pod, TOPO_CACHE_SEAL_ANNOTATION);
    const char *role = annotation(pod, TOPO_ADMISSION_ROLE_ANNOTATION);
    if (seal == NULL)
        return 0;
    const char *key = id->group && role != NULL ? adm_role_key(id, role, pool) : id->key;
    if (key == NULL)
        return TOPO_ENOMEM;
    topo_cache_seal_fields f = {adm_pod_namespace(req), key,
                                annotation(pod, TOPO_ADMISSION_RESERVATION_ANNOTATION),
                                annotation(pod, TOPO_ADMISSION_SLOT_ANNOTATION), role};
    return topo_cache_seal_verify(&ctx->keys, seal, &f);
}

/* "k, k" (full) or "reservation,slot,seal": the keys without the prefix
 * they share, so that a warning of TOPO_ADMISSION_WARNING_MAX bytes names
 * them all but in the rarest case (all eight). */
static const char *key_list(const char *const *keys, size_t n, int full, topo_pool *pool)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(keys[i]) + 2;
    char *s = topo_pool_alloc(pool, len);
    if (s == NULL)
        return NULL;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i];
        if (!full && strncmp(k, TOPO_PREFIX, strlen(TOPO_PREFIX)) == 0)
            k += strlen(TOPO_PREFIX);
        off += (size_t)snprintf(s + off, len - off, "%s%s", i == 0 ? "" : full ? ", " : ",", k);
    }
    s[off] = '\0';
    return s;
}

int adm_check_seal(topo_admission_ctx *ctx, answer *a, mode m, const topo_admission_request *req,
                   const topo_podset_id *id, topo_admission_request *view, topo_pool *pool)
{
    static const char *const written[] = TOPO_ADMISSION_WRITTEN_ANNOTATIONS;
    const topo_admission_pod *pod = &req->pod;
    const char **strip = topo_pool_calloc(pool, TOPO_ADMISSION_WRITTEN_ANNOTATIONS_N + 1,
                                          sizeof(*strip));
    const char **foreign = topo_pool_calloc(pool, TOPO_ADMISSION_WRITTEN_ANNOTATIONS_N + 1,
                                            sizeof(*foreign));
    size_t nstrip = 0, nforeign = 0;

    *view = *req;
    if (strip == NULL || foreign == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; written[i] != NULL; i++)
        if (annotation(pod, written[i]) != NULL)
            strip[nstrip++] = written[i];
    if (nstrip == 0)
        return 0;
    int ok = sealed(ctx, req, id, pool);
    if (ok < 0)
        return ok;
    if (ok == 1) {
        a->sealed = 1;
        return 0;
    }
    /* Not ours: every one of them goes, in the patch and from the pod the
     * rest of the handler reads. The ungater finds the gate's annotations
     * (and our seal of them, under another PodSet key for a pod named by
     * its request alone) on every gated pod and removes them anyway: only
     * the others are foreign there. */
    for (size_t i = 0; i < nstrip; i++)
        if (m == MODE_ADMIT || (!adm_is_gate_annotation(strip[i]) &&
                                strcmp(strip[i], TOPO_CACHE_SEAL_ANNOTATION) != 0))
            foreign[nforeign++] = strip[i];
    topo_kv *kept = topo_pool_calloc(pool, pod->nannotations + 1, sizeof(*kept));
    if (kept == NULL)
        return TOPO_ENOMEM;
    size_t nkept = 0;
    for (size_t i = 0; i < pod->nannotations; i++) {
        int drop = 0;
        for (size_t k = 0; k < nstrip && !drop; k++)
            drop = strcmp(pod->annotations[i].key, strip[k]) == 0;
        if (!drop)
            kept[nkept++] = pod->annotations[i];
    }
    view->pod.annotations = kept;
    view->pod.nannotations = nkept;
    a->strip = strip;
    a->nstrip = nstrip;
    a->foreign = nforeign > 0 ? key_list(foreign, nforeign, 1, pool) : NULL;
    if (nforeign > 0 && a->foreign == NULL)
        return TOPO_ENOMEM;
    if (m == MODE_ADMIT) {
        const char *names = key_list(foreign, nforeign, 0, pool);
        if (names == NULL)
            return TOPO_ENOMEM;
        atomic_fetch_add(&ctx->foreign, 1);
        adm_warn(a, topo_pool_printf(pool, "topo-webhook: removed unsealed " TOPO_PREFIX "{%s}",
                                     names));
        topo_log(TOPO_LOG_WARN,
                 "pod %s/%s: removed annotations topo writes but did not write here: %s",
                 adm_pod_namespace(req),
                 pod->name && pod->name[0] ? pod->name
                 : pod->generate_name      ? pod->generate_name
                                           : "",
                 a->foreign);
    }
    return 0;
}

int adm_patch_start(answer *a)
{
    if (a->patch != NULL)
        return 0;
    if (topo_jsonpatch_new(&a->patch) < 0)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < a->nstrip; i++) {
        char *ptr = NULL;
        int rc = topo_json_pointer_join(&ptr, "/metadata/annotations", a->strip[i]);
        if (rc == 0)
            rc = topo_jsonpatch_remove(a->patch, ptr);
        free(ptr);
        if (rc < 0)
            return rc;
    }
    return 0;
}
