/* The slowdown model's --cost-model file (topo/simulate.h,
 * docs/simulate.md "The cost model"): tiers, oversubscription above the
 * leaf and communication shares, read through the one configuration reader
 * (topo/cfgreader.h) so that every error names the file, the line and the
 * field. */
#include <stdlib.h>

#include "sim_internal.h"
#include "topo/cfgreader.h"
#include "topo/codec.h"
#include "topo/limits.h"
#include "topo/simulate.h"


void topo_sim_cost_model_default(topo_sim_cost_model *out)
{
    out->cost[TOPO_SIM_TIER_NVLINK] = TOPO_SIM_COST_NVLINK_DEFAULT;
    out->cost[TOPO_SIM_TIER_LEAF] = TOPO_SIM_COST_LEAF_DEFAULT;
    out->cost[TOPO_SIM_TIER_SPINE] = TOPO_SIM_COST_SPINE_DEFAULT;
    out->cost[TOPO_SIM_TIER_CLUSTER] = TOPO_SIM_COST_CLUSTER_DEFAULT;
    out->comm_small = TOPO_SIM_COMM_SMALL_DEFAULT;
    out->comm_large = TOPO_SIM_COMM_LARGE_DEFAULT;
}

/* tiers: each given cost, and which were given. */
static int read_tiers(const topo_cfg *c, topo_sim_cost_model *m, int *given, const json_t *tiers)
{
    int rc;
    if ((rc = topo_cfg_check_keys(c, tiers, "tiers", sim_tier_names)) < 0)
        return rc;
    for (int i = 0; i < TOPO_SIM_TIERS; i++) {
        given[i] = tiers != NULL && json_object_get(tiers, sim_tier_names[i]) != NULL &&
                   !json_is_null(json_object_get(tiers, sim_tier_names[i]));
        if ((rc = topo_cfg_number(c, &m->cost[i], tiers, sim_tier_names[i], "tiers",
                                  TOPO_SIM_COST_MIN, TOPO_SIM_COST_MAX, 0)) < 0)
            return rc;
    }
    return 0;
}

/* oversubscription: spine and cluster relative to the leaf, which set those
 * tiers' costs unless the tiers give them (not both: which would win?). */
static int read_oversubscription(const topo_cfg *c, topo_sim_cost_model *m, const int *given,
                                 const json_t *tiers, const json_t *over)
{
    static const char *const keys[] = {"spine", "cluster", NULL};
    double ratio[2] = {TOPO_SIM_OVERSUB_SPINE_DEFAULT, TOPO_SIM_OVERSUB_CLUSTER_DEFAULT};
    int rc;
    if ((rc = topo_cfg_check_keys(c, over, "oversubscription", keys)) < 0)
        return rc;
    for (int k = 0; k < 2; k++) {
        int tier = k == 0 ? TOPO_SIM_TIER_SPINE : TOPO_SIM_TIER_CLUSTER;
        const json_t *v = over != NULL ? json_object_get(over, keys[k]) : NULL;
        if ((rc = topo_cfg_number(c, &ratio[k], over, keys[k], "oversubscription", 1,
                                  TOPO_SIM_OVERSUB_MAX, 0)) < 0)
            return rc;
        if (v != NULL && !json_is_null(v) && given[tier])
            return topo_cfg_fail(c, v, over,
                                 "oversubscription.%s: tiers.%s is given too: give one of them",
                                 keys[k], keys[k]);
        if (!given[tier])
            m->cost[tier] = m->cost[TOPO_SIM_TIER_LEAF] * ratio[k];
    }
    /* The leaf times a ratio may leave the range a given cost must be in. */
    for (int i = TOPO_SIM_TIER_SPINE; i < TOPO_SIM_TIERS; i++)
        if (!given[i] && m->cost[i] > TOPO_SIM_COST_MAX)
            return topo_cfg_fail(c, over, tiers,
                                 "tiers.%s: tiers.leaf x oversubscription.%s = %g is above %g",
                                 sim_tier_names[i], sim_tier_names[i], m->cost[i],
                                 TOPO_SIM_COST_MAX);
    return 0;
}

int topo_sim_cost_model_decrease(const topo_sim_cost_model *m)
{
    for (int i = 1; i < TOPO_SIM_TIERS; i++)
        if (m->cost[i] < m->cost[i - 1])
            return i;
    return -1;
}

/* The order rule (topo_sim_cost_model_decrease), worded for the file: a
 * tier the file gives is named with its position, one derived from the
 * leaf and an oversubscription by that oversubscription. */
static int check_order(const topo_cfg *c, const topo_sim_cost_model *m, const int *given,
                       const json_t *tiers, const json_t *over)
{
    int i = topo_sim_cost_model_decrease(m);
    if (i < 0)
        return 0;
    if (given[i] || i < TOPO_SIM_TIER_SPINE) {
        const json_t *at = tiers != NULL ? json_object_get(tiers, sim_tier_names[i]) : NULL;
        return topo_cfg_fail(c, at, tiers,
                             "tiers.%s: %g is below tiers.%s (%g): a coarser tier cannot cost "
                             "less than a finer one",
                             sim_tier_names[i], m->cost[i], sim_tier_names[i - 1], m->cost[i - 1]);
    }
    const json_t *at = over != NULL ? json_object_get(over, sim_tier_names[i]) : NULL;
    return topo_cfg_fail(c, at, at != NULL ? over : tiers,
                         "oversubscription.%s: tiers.leaf x %g = %g is below tiers.%s (%g): a "
                         "coarser tier cannot cost less than a finer one",
                         sim_tier_names[i], m->cost[i] / m->cost[TOPO_SIM_TIER_LEAF], m->cost[i],
                         sim_tier_names[i - 1], m->cost[i - 1]);
}

static int read_root(const topo_cfg *c, topo_sim_cost_model *m, const json_t *root)
{
    static const char *const keys[] = {"tiers", "oversubscription", "communication", NULL};
    const json_t *tiers = NULL, *over = NULL, *comm = NULL;
    int given[TOPO_SIM_TIERS];
    int rc;

    if (root != NULL && !json_is_null(root) && !json_is_object(root))
        return topo_cfg_fail(c, root, NULL, "expected a mapping of tiers, oversubscription "
                                            "and communication");
    if ((rc = topo_cfg_check_keys(c, root, "", keys)) < 0 ||
        (rc = topo_cfg_member(c, &tiers, root, "tiers", "", JSON_OBJECT, "a mapping", 0)) < 0 ||
        (rc = topo_cfg_member(c, &over, root, "oversubscription", "", JSON_OBJECT, "a mapping",
                              0)) < 0 ||
        (rc = topo_cfg_member(c, &comm, root, "communication", "", JSON_OBJECT, "a mapping",
                              0)) < 0)
        return rc;
    if ((rc = read_tiers(c, m, given, tiers)) < 0 ||
        (rc = read_oversubscription(c, m, given, tiers, over)) < 0 ||
        (rc = check_order(c, m, given, tiers, over)) < 0)
        return rc;
    static const char *const comm_keys[] = {"small", "large", NULL};
    if ((rc = topo_cfg_check_keys(c, comm, "communication", comm_keys)) < 0 ||
        (rc = topo_cfg_number(c, &m->comm_small, comm, "small", "communication", 0, 1, 1)) < 0 ||
        (rc = topo_cfg_number(c, &m->comm_large, comm, "large", "communication", 0, 1, 1)) < 0)
        return rc;
    return 0;
}

int topo_sim_cost_model_parse(topo_sim_cost_model *out, const char *text, size_t len,
                              const char *source, topo_err *err)
{
    json_t *root = NULL;
    topo_codec_marks *marks = NULL;
    topo_sim_cost_model m;
    int rc;

    topo_sim_cost_model_default(&m);
    if ((rc = topo_codec_yaml_parse_marks(&root, &marks, text, len, source, err)) < 0)
        goto cleanup;
    topo_cfg c = {.src = source, .marks = marks, .err = err};
    if ((rc = read_root(&c, &m, root)) < 0)
        goto cleanup;
    *out = m;

cleanup:
    topo_codec_marks_free(marks);
    json_decref(root);
    return rc;
}

int topo_sim_cost_model_load(topo_sim_cost_model *out, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;
    if ((rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_CONFIG_FILE, err)) < 0)
        return rc;
    rc = topo_sim_cost_model_parse(out, text, len, path, err);
    free(text);
    return rc;
}
