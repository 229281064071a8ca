/* Reservation records on pods, and their adoption (cache.h "Adoption").
 *
 * A placed pod carries its PodSet's whole assignment and, in the record,
 * everything else its reservation holds: so the reservation can be made
 * again, identical, by any cache that sees one created pod of the PodSet —
 * another replica of topo-webhook, or the same one after its file was lost.
 * The record is signed: a pod's author could otherwise write one and have
 * every replica hold capacity for pods that do not exist. */
#include "cache_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/json.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/podset_key.h"
#include "topo/sha256.h"

#define ANNOTATION_ASSIGNMENT "topology.topo.io/assignment"

/* The longest record adopted: a PodSet's levels, requests, shape and request
 * text fit in far less. */
#define RECORD_MAX 16384

/* What the record's MAC covers: the reservation id, the assignment
 * annotation's text and the record's JSON; malloc'd into *out. */
static int record_message(char **out, size_t *out_len, const char *id, const char *assignment,
                          const char *json, size_t json_len, topo_err *err)
{
    size_t n = strlen(id) + strlen(assignment) + json_len + 3;
    if ((*out = malloc(n)) == NULL)
        return topo_err_nomem(err, "cache");
    int len = snprintf(*out, n, "%s\n%s\n%.*s", id, assignment, (int)json_len, json);
    *out_len = len < 0 ? 0 : (size_t)len;
    return 0;
}

int topo_cache_reservation_record(char **out, const topo_cache_reservation *r,
                                  const topo_keyring *keys, topo_err *err)
{
    char mac[TOPO_SHA256_HEX_LEN + 1];
    json_t *doc = NULL;
    char *json = NULL, *msg = NULL;
    size_t msg_len = 0;
    int error = 0;

    *out = NULL;
    if (keys == NULL || keys->n == 0)
        return topo_err_set(err, TOPO_EINVALID, "cache: reservation record: no key");
    topo_json_alloc_watch();
    doc = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:s, s:s, s:I}", "podset", r->podset_key,
                    "topology", r->topology_name, "levels",
                    cache_strings_to_json(r->levels, r->nlevels), "requests",
                    cache_resources_to_json(r->requests, r->nrequests), "created",
                    (json_int_t)r->created_at, "expires", (json_int_t)r->expires_at, "shape",
                    r->shape ? r->shape : "", "request", r->request ? r->request : "",
                    "unclaimedTTL", (json_int_t)r->unclaimed_ttl);
    /* [0, 0] is what a record without "gen" reads as: left out, a record
     * of a reservation that never moved is the one written before. */
    if (doc != NULL && (r->gen_term != 0 || r->gen_seq != 0) &&
        json_object_set_new(doc, "gen",
                            json_pack("[I, I]", (json_int_t)r->gen_term,
                                      (json_int_t)r->gen_seq)) < 0) {
        json_decref(doc);
        doc = NULL;
    }
    /* likewise a reservation without a domain */
    if (doc != NULL && r->ndomain > 0 &&
        json_object_set_new(doc, "domain", cache_strings_to_json(r->domain, r->ndomain)) < 0) {
        json_decref(doc);
        doc = NULL;
    }
    if (doc == NULL || (json = topo_json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
        error = topo_json_alloc_failed() || doc != NULL
                    ? topo_err_nomem(err, "cache")
                    : topo_err_set(err, TOPO_EINVALID,
                                   "reservation %s: record not encodable (invalid UTF-8?)", r->id);
        goto done;
    }
    if ((error = record_message(&msg, &msg_len, r->id, r->assignment_json, json, strlen(json),
                                err)) < 0 ||
        (error = topo_keyring_sign(mac, keys, msg, msg_len, err)) < 0)
        goto done;
    size_t n = TOPO_SHA256_HEX_LEN + 1 + strlen(json) + 1;
    if ((*out = malloc(n)) == NULL) {
        error = topo_err_nomem(err, "cache");
        goto done;
    }
    snprintf(*out, n, "%s %s", mac, json);
done:
    json_decref(doc);
    free(json);
    free(msg);
    return error;
}

uint64_t topo_cache_adopted(const topo_cache *cache)
{
    return cache != NULL ? cache->adopted : 0;
}

int cache_decode_assignment(topo_assignment *a, const json_t *doc, topo_pool *pool,
                            topo_err *err)
{
    const char **levels = NULL;
    const json_t *domains = json_object_get(doc, "domains");
    int error;

    memset(a, 0, sizeof(*a));
    if (!json_is_array(json_object_get(doc, "levels")))
        return topo_err_set(err, TOPO_EINVALID, "assignment: levels: expected an array");
    if ((error = cache_json_to_strings(&levels, &a->nlevels, json_object_get(doc, "levels"), pool,
                                       err)) < 0)
        return error;
    a->levels = levels;
    if (!json_is_array(domains) || json_array_size(domains) == 0 ||
        json_array_size(domains) > TOPO_MAX_PODSET_COUNT)
        return topo_err_set(err, TOPO_EINVALID, "assignment: domains: expected 1 to %d",
                            TOPO_MAX_PODSET_COUNT);
    size_t n = json_array_size(domains);
    topo_assign_domain *d = topo_pool_calloc(pool, n, sizeof(*d));
    if (d == NULL)
        return topo_err_nomem(err, "cache");
    for (size_t i = 0; i < n; i++) {
        const json_t *dom = json_array_get(domains, i), *count = json_object_get(dom, "count");
        const char **values = NULL;
        size_t nvalues = 0;
        if (!json_is_array(json_object_get(dom, "values")))
            return topo_err_set(err, TOPO_EINVALID, "assignment: domains[%zu].values: expected "
                                                    "an array", i);
        if ((error = cache_json_to_strings(&values, &nvalues, json_object_get(dom, "values"), pool,
                                           err)) < 0)
            return error;
        if (nvalues != a->nlevels || !json_is_integer(count) || json_integer_value(count) <= 0 ||
            json_integer_value(count) > TOPO_MAX_PODSET_COUNT)
            return topo_err_set(err, TOPO_EINVALID,
                                "assignment: domains[%zu]: one value per level and a count", i);
        d[i].values = values;
        d[i].count = (int32_t)json_integer_value(count);
    }
    a->domains = d;
    a->ndomains = n;
    return 0;
}

static int record_string(const char **out, const json_t *doc, const char *key)
{
    *out = json_string_value(json_object_get(doc, key));
    return *out != NULL ? 0 : TOPO_EINVALID;
}

static int record_int(int64_t *out, const json_t *doc, const char *key)
{
    const json_t *v = json_object_get(doc, key);
    *out = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
    return json_is_integer(v) ? 0 : TOPO_EINVALID;
}

int cache_record_gen(int64_t *out_term, int64_t *out_seq, const json_t *record)
{
    const json_t *gen = json_object_get(record, "gen");
    *out_term = *out_seq = 0;
    if (gen == NULL)
        return 0;
    if (!json_is_array(gen) || json_array_size(gen) != 2)
        return TOPO_EINVALID;
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_array_get(gen, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > TOPO_CACHE_GEN_MAX)
            return TOPO_EINVALID;
    }
    *out_term = (int64_t)json_integer_value(json_array_get(gen, 0));
    *out_seq = (int64_t)json_integer_value(json_array_get(gen, 1));
    return 0;
}

/* The spec a verified record and its assignment describe, from pool (the
 * strings borrowed from rec, which outlives the spec), and the record's
 * generation: [s->gen_term, *gen_seq]. */
static int decode_record(topo_cache_reservation_spec *s, int64_t *gen_seq, topo_assignment *as,
                         const json_t *rec, const json_t *asg, topo_pool *pool, topo_err *err)
{
    const char **levels = NULL;
    topo_resource *req = NULL;
    int error;

    if (record_string(&s->podset_key, rec, "podset") < 0 ||
        record_string(&s->topology_name, rec, "topology") < 0 ||
        record_string(&s->shape, rec, "shape") < 0 ||
        record_string(&s->request, rec, "request") < 0 ||
        record_int(&s->created_at, rec, "created") < 0 ||
        record_int(&s->expires_at, rec, "expires") < 0 ||
        record_int(&s->unclaimed_ttl, rec, "unclaimedTTL") < 0)
        return topo_err_set(err, TOPO_EINVALID, "record: a field is missing or mistyped");
    if (cache_record_gen(&s->gen_term, gen_seq, rec) < 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "record: gen: expected [term, seq], integers 0 to 2^53");
    if (!json_is_array(json_object_get(rec, "levels")) ||
        !json_is_object(json_object_get(rec, "requests")))
        return topo_err_set(err, TOPO_EINVALID,
                            "record: levels must be an array and requests an object");
    const json_t *domain = json_object_get(rec, "domain");
    const char **dom = NULL;
    if (domain != NULL &&
        (!json_is_array(domain) || json_array_size(domain) == 0 ||
         json_array_size(domain) > json_array_size(json_object_get(rec, "levels")) ||
         cache_json_to_strings(&dom, &s->ndomain, domain, pool, err) < 0))
        return topo_err_set(err, TOPO_EINVALID,
                            "record: domain: expected 1 to one value per level");
    s->domain = dom;
    if ((error = cache_json_to_strings(&levels, &s->nlevels, json_object_get(rec, "levels"), pool,
                                       err)) < 0 ||
        (error = cache_json_to_resources(&req, &s->nrequests, json_object_get(rec, "requests"),
                                         pool, err)) < 0 ||
        (error = cache_decode_assignment(as, asg, pool, err)) < 0)
        return error;
    s->levels = levels;
    s->requests = req;
    s->assignment = as;
    return 0;
}

int cache_record_verifies(topo_cache *c, const topo_cache_pod *p, const char *id, topo_err *err)
{
    const char *record = cache_pod_annotation(p, TOPO_CACHE_RECORD_ANNOTATION);
    const char *assignment = cache_pod_annotation(p, ANNOTATION_ASSIGNMENT);
    char *msg = NULL;
    size_t msg_len = 0;
    int error;

    if (c->record_keys.n == 0 || record == NULL || assignment == NULL)
        return 0;
    size_t len = strlen(record);
    if (len <= TOPO_SHA256_HEX_LEN + 1 || len > RECORD_MAX || record[TOPO_SHA256_HEX_LEN] != ' ')
        return 0;
    const char *json = record + TOPO_SHA256_HEX_LEN + 1;
    if ((error = record_message(&msg, &msg_len, id, assignment, json, strlen(json), err)) < 0)
        return error;
    int ok = topo_keyring_verify(&c->record_keys, record, msg, msg_len);
    free(msg);
    return ok;
}

/* The generation the cache holds for reservation id: *have 0 when it holds
 * none. */
static int stored_gen(topo_cache *c, const char *id, int *have, int64_t *term, int64_t *seq,
                      topo_err *err)
{
    sqlite3_stmt *st = cache_stmt_get(c, CACHE_STMT_RES_GEN, err);
    int error, rc;
    *have = 0;
    *term = *seq = 0;
    if (st == NULL)
        return cache_stmt_error(err);
    if ((error = cache_bind_text(c, st, 1, id, err)) == 0) {
        if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            *have = 1;
            *term = sqlite3_column_int64(st, 0);
            *seq = sqlite3_column_int64(st, 1);
        } else if (rc != SQLITE_DONE) {
            error = cache_sql_error(c, rc, "read reservation", err);
        }
    }
    cache_stmt_done(st);
    return error;
}

/* 1 when a record ("<MAC> <JSON>", not verified yet) names a generation
 * above [term, seq], 0 when not or malformed, TOPO_ENOMEM. Most events of a
 * placed pod carry the reservation's own generation: they stop here, before
 * the MAC and the rest of the record. */
static int record_is_newer(const char *record, int64_t term, int64_t seq, topo_err *err)
{
    size_t len = strlen(record);
    int64_t t = 0, s = 0;
    json_t *doc = NULL;
    int error;
    if (len <= TOPO_SHA256_HEX_LEN + 1 || len > RECORD_MAX)
        return 0;
    const char *json = record + TOPO_SHA256_HEX_LEN + 1;
    if ((error = topo_codec_json_parse(&doc, json, strlen(json), "record", NULL)) < 0)
        return error == TOPO_ENOMEM ? topo_err_nomem(err, "cache") : 0;
    int newer = cache_record_gen(&t, &s, doc) == 0 && (t > term || (t == term && s > seq));
    json_decref(doc);
    return newer;
}

int cache_adopt_reservation(topo_cache *c, const topo_cache_pod *p, const char *id, topo_err *err)
{
    const char *record = cache_pod_annotation(p, TOPO_CACHE_RECORD_ANNOTATION);
    const char *assignment = cache_pod_annotation(p, ANNOTATION_ASSIGNMENT);
    json_t *rec = NULL, *asg = NULL;
    topo_cache_reservation_spec spec = {0};
    topo_assignment as;
    topo_err why = TOPO_ERR_INIT;
    int64_t term = 0, seq = 0, gen_seq = 0;
    int have = 0, newer = 0, error;

    if (c->record_keys.n == 0 || record == NULL || assignment == NULL)
        return 0;
    /* Held already: only a newer generation (a replacement its placer
     * made) changes it; an older or equal one never moves it back. */
    if ((error = stored_gen(c, id, &have, &term, &seq, err)) < 0)
        return error;
    if (have && (newer = record_is_newer(record, term, seq, err)) <= 0)
        return newer;
    int signed_by_us = cache_record_verifies(c, p, id, err);
    if (signed_by_us < 0)
        return signed_by_us;
    /* Not this installation's keys, forged or malformed: nothing to adopt. */
    if (!signed_by_us) {
        topo_log(TOPO_LOG_DEBUG, "pod %s/%s: reservation record of %s not signed with our key",
                 p->namespace_name, p->name, id);
        return 0;
    }
    /* verified: "<MAC> <JSON>" */
    const char *json = record + TOPO_SHA256_HEX_LEN + 1;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return topo_err_nomem(err, "cache");
    if ((error = topo_codec_json_parse(&rec, json, strlen(json), "record", &why)) < 0 ||
        (error = topo_codec_json_parse(&asg, assignment, strlen(assignment), "assignment",
                                       &why)) < 0 ||
        (error = decode_record(&spec, &gen_seq, &as, rec, asg, pool, &why)) < 0)
        goto done;
    /* Signed, but for a PodSet of another namespace: a copy on a pod that
     * is not of it (cache.h "Adoption"). */
    if (!topo_podset_key_in_namespace(spec.podset_key, p->namespace_name)) {
        cache_foreign_claim(c, p, id, "its record's PodSet is another namespace's");
        goto done;
    }
    spec.id = id;
    if (!have) {
        if ((error = cache_reservation_insert(c, &spec, gen_seq, &why)) == 0) {
            c->adopted++;
            topo_log(TOPO_LOG_INFO, "reservation %s of PodSet %s adopted from pod %s/%s", id,
                     spec.podset_key, p->namespace_name, p->name);
        }
    } else {
        /* The slots move as the record's placer moved them: its annotation
         * is the assignment its MAC covers. */
        spec.assignment_json = assignment;
        if ((error = cache_reservation_reassign(c, &spec, spec.gen_term, gen_seq, &why)) == 0)
            topo_log(TOPO_LOG_INFO,
                     "reservation %s of PodSet %s moved to generation [%lld, %lld] from pod "
                     "%s/%s",
                     id, spec.podset_key, (long long)spec.gen_term, (long long)gen_seq,
                     p->namespace_name, p->name);
    }
done:
    /* Only a failure of the cache itself concerns the pod's row. */
    if (error == TOPO_ENOMEM || error == TOPO_EIO || error == TOPO_ETIMEOUT) {
        topo_err_set(err, error, "%s", why.text);
    } else {
        if (error < 0)
            topo_log(error == TOPO_ECONFLICT ? TOPO_LOG_DEBUG : TOPO_LOG_WARN,
                     "pod %s/%s: reservation %s not %s: %s", p->namespace_name, p->name, id,
                     have ? "updated from its record" : "adopted", why.text);
        error = 0;
    }
    json_decref(rec);
    json_decref(asg);
    topo_pool_free(pool);
    return error;
}
