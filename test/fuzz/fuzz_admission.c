/* libFuzzer harness for the AdmissionReview v1 decoder: decode, classify,
 * build the pod patches and encode a response; and the release of the
 * review's object as a gated pod listed from the API server (topoassign
 * release); nothing may crash or leak.
 * Seeds: fixtures/admission/<case>/request.json. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/admission.h"
#include "topo/admission_patch.h"
#include "topo/admission_review.h"
#include "topo/jsonpatch.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const topo_kv sel[] = {{"topology.topo.io/rack", "r1"}, {"a~b/c", "v"}};
    static const topo_kv ann[] = {{"topology.topo.io/assignment", "x"}};
    topo_pool *pool = topo_pool_create();
    topo_admission_request req;
    topo_admission_response resp = TOPO_ADMISSION_RESPONSE_INIT;
    topo_jsonpatch *patch = NULL;
    topo_err err = TOPO_ERR_INIT;
    char *out = NULL;
    size_t len;
    int rc;

    if (pool == NULL || topo_jsonpatch_new(&patch) != 0)
        goto cleanup;
    rc = topo_admission_decode(&req, (const char *)data, size, pool, &err);
    if (rc == 0 && topo_admission_classify(&req) == TOPO_ADMISSION_TOPOLOGY_POD) {
        if (topo_admission_patch_pod(patch, &req.pod, sel, 2, ann, 1, &err) == 0)
            (void)topo_admission_patch_gate(patch, &req.pod, "topology.topo.io/wait", &err);
    }
    if (rc == 0 && req.has_pod)
        (void)topo_admission_patch_ungate(patch, &req.pod, &err);
    json_t *root = json_loadb((const char *)data, size, 0, NULL), *released = NULL;
    if (root != NULL &&
        topo_admission_release_patch(&released, json_object_get(json_object_get(root, "request"),
                                                                "object"),
                                     &err) == 0)
        json_decref(released);
    json_decref(root);
    if (req.uid != NULL) {
        resp.uid = req.uid;
        resp.allowed = rc == 0;
        resp.status_message = rc == 0 ? NULL : err.text;
        resp.patch = patch;
        if (topo_admission_encode(&out, &len, &resp, &err) == 0)
            free(out);
    }
cleanup:
    topo_jsonpatch_free(patch);
    topo_pool_free(pool);
    return 0;
}
