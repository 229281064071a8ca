/* A pod's shape: the part of its spec that decides where and on what it can
 * run, hashed. Kueue groups a pod group's pods into PodSets ("roles") by
 * the same fields (pkg/util/pod GenerateRoleHash / SpecShape); topo uses the
 * shape to put a group's pods into roles and to refuse a pod that claims a
 * PodSet it does not match. The hash is topo's own (canonical JSON of the
 * fields, SHA-256), not byte-compatible with Kueue's role-hash annotation. */
#include "topo/podreq.h"
#include "topo/json.h"
#include "topo/sha256.h"

#include <stdlib.h>
#include <string.h>

/* Each container reduced to what admission looks at: requests and ports. */
static json_t *containers_shape(const json_t *list)
{
    json_t *out = json_array();
    size_t i;
    const json_t *c;
    if (out == NULL)
        return NULL;
    json_array_foreach(list, i, c) {
        const json_t *res = json_object_get(c, "resources");
        json_t *one = json_pack("{s:{s:O?}, s:O?}", "resources", "requests",
                                json_object_get(res, "requests"), "ports",
                                json_object_get(c, "ports"));
        if (one == NULL || json_array_append_new(out, one) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

int topo_pod_shape(char out[TOPO_POD_SHAPE_LEN + 1], const json_t *spec)
{
    static const char *const fields[] = {
        "nodeSelector",  "affinity", "tolerations",    "runtimeClassName",
        "priority",      "overhead", "resourceClaims", "topologySpreadConstraints",
    };
    json_t *shape = json_object();
    char *text = NULL;
    char hex[TOPO_SHA256_HEX_LEN + 1];
    int rc = -1;

    out[0] = '\0';
    if (shape == NULL ||
        json_object_set_new(shape, "containers",
                            containers_shape(json_object_get(spec, "containers"))) < 0 ||
        json_object_set_new(shape, "initContainers",
                            containers_shape(json_object_get(spec, "initContainers"))) < 0)
        goto cleanup;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const json_t *v = json_object_get(spec, fields[i]);
        if (v != NULL && !json_is_null(v) && json_object_set(shape, fields[i], (json_t *)v) < 0)
            goto cleanup;
    }
    const json_t *podres = json_object_get(json_object_get(spec, "resources"), "requests");
    if (podres != NULL && json_object_set(shape, "resources", (json_t *)podres) < 0)
        goto cleanup;
    /* Sorted keys, compact: one text per shape whatever the field order. */
    if ((text = topo_json_dumps(shape, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
        goto cleanup;
    if (topo_sha256_hex(hex, text, strlen(text)) != 0)
        goto cleanup;
    /* The digest's first bytes: a shape names a handful of roles per group. */
    memcpy(out, hex, TOPO_POD_SHAPE_LEN);
    out[TOPO_POD_SHAPE_LEN] = '\0';
    rc = 0;
cleanup:
    free(text);
    json_decref(shape);
    return rc;
}
