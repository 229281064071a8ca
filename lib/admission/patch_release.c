/* The release of a gated pod without placing it (topo/admission.h
 * topo_admission_release_patch): what `topoassign release` writes when
 * topo-webhook is being removed and nothing will place its waiting pods. The
 * operations are the ungater's (topo_admission_patch_ungate) behind a test of
 * the pod's uid: one rule for removing the gate, wherever it is removed. */
#include <stddef.h>

#include <jansson.h>

#include "topo/admission.h"
#include "topo/admission_patch.h"
#include "topo/jsonpatch.h"
#include "topo/pool.h"

#include "review_internal.h"

int topo_admission_release_patch(json_t **out_patch, const json_t *pod, topo_err *err)
{
    topo_admission_pod p;
    topo_jsonpatch *patch = NULL;
    topo_pool *pool = NULL;
    int rc;

    *out_patch = NULL;
    if (!topo_admission_pod_json_gated(pod))
        return 0;
    const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    if (uid == NULL || uid[0] == '\0')
        return topo_err_set(err, TOPO_EINVALID, "pod: metadata.uid: required");
    if ((pool = topo_pool_create()) == NULL || (rc = topo_jsonpatch_new(&patch)) < 0) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    if ((rc = adm_decode_pod(&p, pod, pool, err)) < 0)
        goto cleanup;
    if ((rc = topo_jsonpatch_test_string(patch, "/metadata/uid", uid)) < 0) {
        rc = topo_err_set(err, rc, "pod: metadata.uid: %s", topo_strerror(rc));
        goto cleanup;
    }
    if ((rc = topo_admission_patch_ungate(patch, &p, err)) < 0)
        goto cleanup;
    if ((*out_patch = topo_jsonpatch_json(patch)) == NULL)
        rc = topo_err_nomem(err, NULL);
cleanup:
    topo_jsonpatch_free(patch);
    topo_pool_free(pool);
    return rc;
}
