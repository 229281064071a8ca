/* The JSON patches topo-webhook writes on a Pod (topo/admission_patch.h). */
#include "topo/admission_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/admission.h"

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
        return topo_err_nomem(err, what);
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
        topo_jsonpatch_truncate(patch, before); /* leave the patch as it was */
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

/* The gate's element is tested before it goes: a pod whose gates moved since
 * it was read is refused by the API server (422), never stripped of another
 * controller's gate. */
int topo_admission_patch_ungate(topo_jsonpatch *patch, const topo_admission_pod *pod,
                                topo_err *err)
{
    static const char *const drop[] = TOPO_ADMISSION_GATE_ANNOTATIONS;
    size_t before = topo_jsonpatch_count(patch);
    char path[64];
    int rc = 0;

    for (size_t i = 0; i < pod->nscheduling_gates; i++) {
        if (strcmp(pod->scheduling_gates[i], TOPO_ADMISSION_WAIT_GATE) != 0)
            continue;
        snprintf(path, sizeof path, "/spec/schedulingGates/%zu/name", i);
        if ((rc = topo_jsonpatch_test_string(patch, path, TOPO_ADMISSION_WAIT_GATE)) < 0)
            goto fail;
        snprintf(path, sizeof path, "/spec/schedulingGates/%zu", i);
        if ((rc = topo_jsonpatch_remove(patch, path)) < 0)
            goto fail;
        break;
    }
    for (size_t i = 0; drop[i] != NULL; i++) {
        if (topo_admission_kv_get(pod->annotations, pod->nannotations, drop[i]) == NULL)
            continue;
        char *ptr = NULL;
        if ((rc = topo_json_pointer_join(&ptr, "/metadata/annotations", drop[i])) < 0)
            goto fail;
        rc = topo_jsonpatch_remove(patch, ptr);
        free(ptr);
        if (rc < 0)
            goto fail;
    }
    return 0;
fail:
    topo_jsonpatch_truncate(patch, before); /* leave the patch as it was */
    return topo_err_set(err, rc, "the gate's release: %s", topo_strerror(rc));
}

/* {"key": k, "operator": op, "values": [...]}, NULL when not UTF-8 or out
 * of memory. */
static json_t *expr_json(const topo_match_expr *e)
{
    json_t *values = json_array();
    for (size_t i = 0; values != NULL && i < e->nvalues; i++)
        if (json_array_append_new(values, json_string(e->values[i])) != 0) {
            json_decref(values);
            values = NULL;
        }
    return values == NULL ? NULL
                          : json_pack("{s:s, s:s, s:o}", "key", e->key, "operator", e->op,
                                      "values", values);
}

static json_t *preferred_json(const topo_preferred_term *t)
{
    json_t *exprs = json_array();
    for (size_t i = 0; exprs != NULL && i < t->term.nexprs; i++)
        if (json_array_append_new(exprs, expr_json(&t->term.exprs[i])) != 0) {
            json_decref(exprs);
            exprs = NULL;
        }
    return exprs == NULL ? NULL
                         : json_pack("{s:I, s:{s:o}}", "weight", (json_int_t)t->weight,
                                     "preference", "matchExpressions", exprs);
}

#define PREFERRED_KEY "preferredDuringSchedulingIgnoredDuringExecution"

int topo_admission_patch_preferred(topo_jsonpatch *patch, const topo_admission_pod *pod,
                                   const topo_preferred_term *terms, size_t n, topo_err *err)
{
    size_t before = topo_jsonpatch_count(patch);
    json_t *list = NULL;
    int rc = 0;

    if (n == 0)
        return 0;
    if (pod->affinity_parents >= 3) { /* the pod's own list: append */
        for (size_t i = 0; rc == 0 && i < n; i++) {
            json_t *t = preferred_json(&terms[i]);
            rc = t == NULL ? TOPO_EINVALID
                           : topo_jsonpatch_add_new(
                                 patch, "/spec/affinity/nodeAffinity/" PREFERRED_KEY "/-", t);
        }
        goto done;
    }
    if ((list = json_array()) == NULL) {
        rc = TOPO_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(list, preferred_json(&terms[i])) != 0) {
            json_decref(list);
            rc = TOPO_EINVALID;
            goto done;
        }
    /* The first parent missing, with everything below it. */
    if (pod->affinity_parents == 2)
        rc = topo_jsonpatch_add_new(patch, "/spec/affinity/nodeAffinity/" PREFERRED_KEY, list);
    else if (pod->affinity_parents == 1)
        rc = topo_jsonpatch_add_new(patch, "/spec/affinity/nodeAffinity",
                                    json_pack("{s:o}", PREFERRED_KEY, list));
    else
        rc = topo_jsonpatch_add_new(patch, "/spec/affinity",
                                    json_pack("{s:{s:o}}", "nodeAffinity", PREFERRED_KEY, list));
done:
    if (rc == 0)
        return 0;
    topo_jsonpatch_truncate(patch, before); /* leave the patch as it was */
    return topo_err_set(err, rc, "spec.affinity.nodeAffinity.%s: %s", PREFERRED_KEY,
                        rc == TOPO_EINVALID ? "invalid (non-UTF-8) key or value"
                                            : "out of memory");
}
