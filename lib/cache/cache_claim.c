/* Whose a reserved slot is (cache.h "Slot binding"): a pod's reservation and
 * slot annotations are read by anyone who can read a placed pod, so they
 * bind a slot only when topo sealed them for this pod's namespace and
 * PodSet, and the pod is of that PodSet. Anything else is a foreign claim:
 * counted, never bound. */
#include "cache_internal.h"

#include <string.h>

#include "topo/log.h"
#include "topo/podset_key.h"

#define ANNOTATION_ROLE "topology.topo.io/role"

uint64_t topo_cache_foreign_claims(const topo_cache *cache)
{
    return cache != NULL ? cache->foreign_claims : 0;
}

void cache_foreign_claim(topo_cache *c, const topo_cache_pod *p, const char *id, const char *why)
{
    c->foreign_claims++;
    topo_log(TOPO_LOG_INFO, "pod %s/%s: claim on reservation %s ignored: %s", p->namespace_name,
             p->name, id, why);
}

/* The reservation's PodSet key into pool; NULL (no error) when there is no
 * such reservation. */
static int reservation_podset(const char **out, topo_cache *c, const char *id, topo_pool *pool,
                              topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_RES_PODSET_KEY, err);
    int rc, error = 0;
    *out = NULL;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, id, err)) == 0) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            if ((*out = cache_column_strdup(st, 0, 0, pool)) == NULL)
                error = topo_err_nomem(err, "cache");
        } else if (rc != SQLITE_DONE) {
            error = cache_sql_error(c, rc, "read reservation", err);
        }
    }
    cache_stmt_done(st);
    return error;
}

/* Whether derived (a pod's PodSet key) names reservation key: the same
 * key, or, for a pod group's pod, the key of its role (adm_role_key:
 * "<group key>/role/<shape>"), its shape the pod's role annotation, which
 * the seal covers. */
static int names_podset(const char *derived, const char *key, const char *role)
{
    static const char sep[] = "/role/";
    size_t n = strlen(derived);
    if (strcmp(derived, key) == 0)
        return 1;
    return role != NULL && strncmp(key, derived, n) == 0 &&
           strncmp(key + n, sep, sizeof sep - 1) == 0 &&
           strcmp(key + n + sizeof sep - 1, role) == 0;
}

/* Whether the pod is of PodSet key, its key derived as topo-webhook
 * derived it when it placed the pod. A generateName pod was named by the
 * API server after mutating admission: the webhook saw it without its name
 * (unless it was given both), so either derivation is the pod's own. */
static int pod_is_of(const topo_cache_pod *p, const char *key, topo_pool *pool, topo_err *err)
{
    topo_podset_pod in = {
        .namespace_name = p->namespace_name,
        .name = p->name,
        .generate_name = p->generate_name,
        .labels = p->labels,
        .nlabels = p->nlabels,
        .annotations = p->annotations,
        .nannotations = p->nannotations,
        .owner_uid = p->owner_uid,
    };
    topo_podset_key k;
    topo_err why = TOPO_ERR_INIT;
    int rc;

    for (int unnamed = cache_nonempty(p->generate_name); unnamed >= 0;
         unnamed--) {
        in.name = unnamed ? NULL : p->name;
        if ((rc = topo_podset_key_derive(&k, &in, pool, &why)) == TOPO_ENOMEM)
            return topo_err_nomem(err, "cache");
        /* a pod admission could not identify was never placed */
        if (rc == 0 && names_podset(k.key, key, cache_pod_annotation(p, ANNOTATION_ROLE)))
            return 1;
    }
    return 0;
}

int cache_claim_is_own(int *out_own, topo_cache *c, const topo_cache_pod *p, const char *id,
                       const char *slot, topo_err *err)
{
    const char *key = NULL, *why = NULL;
    int error, ok;

    *out_own = 0;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_nomem(err, "cache");
    if ((error = reservation_podset(&key, c, id, pool, err)) < 0 || key == NULL)
        goto done; /* no such reservation: nothing to claim */
    topo_cache_seal_fields f = {
        .namespace_name = p->namespace_name,
        .podset_key = key,
        .reservation = id,
        .slot = slot,
        .role = cache_pod_annotation(p, ANNOTATION_ROLE),
    };
    const char *seal = cache_pod_annotation(p, TOPO_CACHE_SEAL_ANNOTATION);
    int legacy = 0;
    /* A pod placed by a version before seals carries none, but its signed
     * record: it binds when it is of the PodSet, which a PodSet keyed by its
     * admission request cannot show (see the request kind below). */
    if (seal == NULL && !topo_podset_key_is_request(key) &&
        (legacy = cache_record_verifies(c, p, id, err)) < 0) {
        error = legacy;
        goto done;
    }
    if (!topo_podset_key_in_namespace(key, p->namespace_name)) {
        why = "its PodSet is another namespace's";
    } else if (!legacy && (ok = topo_cache_seal_verify(&c->record_keys, seal, &f)) != 1) {
        if (ok < 0) {
            error = topo_err_nomem(err, "cache");
            goto done;
        }
        why = "not sealed by topo-webhook for this pod's namespace, PodSet and slot";
    } else if (!topo_podset_key_is_request(key)) {
        /* A request-kind PodSet cannot be derived again: its seal alone
         * decides (podset_key.h). */
        if ((ok = pod_is_of(p, key, pool, err)) < 0) {
            error = ok;
            goto done;
        }
        if (!ok)
            why = "the pod is not of the reservation's PodSet";
    }
    if (why != NULL)
        cache_foreign_claim(c, p, id, why);
    else
        *out_own = 1;
done:
    topo_pool_free(pool);
    return error;
}
