/* libFuzzer harness for who binds a reserved slot (lib/cache/cache_claim.c,
 * cache.h "Slot binding"): the input is a Pod (or an AdmissionReview whose
 * request.object is one: fixtures/admission seeds it with real pods), its
 * labels, annotations, owners and names as the fuzzer makes them. For each
 * input the harness makes a reservation of the pod's own PodSet key and one
 * of another PodSet's, gives the pod that reservation's id and slot 0, with
 * and without a seal under its key (so the fuzzer gets past the MAC), or
 * with the reservation's signed record and no seal (a pod placed before
 * seals), and stores the pod. The slot must be bound exactly when the
 * PodSet is of the pod's namespace, the seal is right (or, for the record,
 * absent) and the pod is of that PodSet (or, sealed, the PodSet is of the
 * request kind); never a crash, a leak or an error for a pod the cache
 * stored. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/cache.h"
#include "topo/podset_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RES "default.00000000000000cc"
#define UID "uid-fuzzed"
static const unsigned char KEY[] = "the claim fuzzer's record key";

static topo_keyring ring(void)
{
    topo_keyring r = TOPO_KEYRING_INIT;
    if (topo_keyring_add(&r, KEY, sizeof KEY, "key", NULL) < 0)
        abort();
    return r;
}

static topo_cache *cache(void)
{
    static topo_cache *c;
    topo_keyring keys = ring();
    topo_cache_opts o = {.record_keys = &keys};
    if (c == NULL && topo_cache_open(&c, ":memory:", &o, NULL) < 0)
        abort();
    return c;
}

static void reserve(topo_cache *c, const char *podset)
{
    static const char *levels[] = {"kubernetes.io/hostname"}, *v[] = {"n1"};
    topo_assign_domain d = {v, 2};
    topo_assignment a = {levels, 1, &d, 1};
    topo_cache_reservation_spec s = {.id = RES, .podset_key = podset, .topology_name = "t",
                                     .levels = levels, .nlevels = 1, .assignment = &a,
                                     .created_at = 1, .expires_at = 100};
    int deleted = 0;
    if (topo_cache_reservation_delete(c, RES, &deleted, NULL) < 0 ||
        topo_cache_reservation_create(c, &s, NULL) < 0)
        abort();
}

static const char *kv(const topo_kv *p, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return p[i].value;
    return NULL;
}

/* Whether the stored pod is of PodSet key as the cache must judge it. */
static int own(const topo_cache_pod *p, const char *key, topo_pool *pool)
{
    if (topo_podset_key_is_request(key))
        return 1;
    for (int unnamed = 0; unnamed < 2; unnamed++) {
        topo_podset_pod in = {p->namespace_name, unnamed ? NULL : p->name, p->generate_name,
                              p->labels,         p->nlabels,               p->annotations,
                              p->nannotations,   p->owner_uid,             NULL};
        topo_podset_key k;
        if (unnamed && (p->generate_name == NULL || p->generate_name[0] == '\0'))
            break;
        if (topo_podset_key_derive(&k, &in, pool, NULL) == 0 && strcmp(k.key, key) == 0)
            return 1;
    }
    return 0;
}

enum { UNSEALED, SEALED, RECORDED };

/* One round: the pod claims slot 0 of a reservation of podset, sealed, not,
 * or with the record; the binding checked against the rule. */
static void round_of(topo_cache *c, json_t *pod, const char *ns, const char *podset, int sealed,
                     topo_pool *pool)
{
    json_t *meta = json_object_get(pod, "metadata"), *ann = json_object_get(meta, "annotations");
    char seal[TOPO_SHA256_HEX_LEN + 1];
    topo_keyring keys = ring();
    if (!json_is_object(ann)) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    const char *role = json_string_value(json_object_get(ann, "topology.topo.io/role"));
    topo_cache_seal_fields f = {ns, podset, RES, "0", role};
    json_object_set_new(ann, "topology.topo.io/reservation", json_string(RES));
    json_object_set_new(ann, "topology.topo.io/slot", json_string("0"));
    if (sealed == SEALED && topo_cache_seal(seal, &keys, &f, NULL) == 0)
        json_object_set_new(ann, TOPO_CACHE_SEAL_ANNOTATION, json_string(seal));
    else
        json_object_del(ann, TOPO_CACHE_SEAL_ANNOTATION);
    reserve(c, podset);
    json_object_del(ann, TOPO_CACHE_RECORD_ANNOTATION); /* an earlier round's */
    if (sealed == RECORDED) {
        topo_cache_reservation r;
        char *record = NULL;
        if (topo_cache_reservation_get(&r, c, RES, pool, NULL) != 0 ||
            topo_cache_reservation_record(&record, &r, &keys, NULL) != 0)
            abort();
        json_object_set_new(ann, "topology.topo.io/assignment", json_string(r.assignment_json));
        json_object_set_new(ann, TOPO_CACHE_RECORD_ANNOTATION, json_string(record));
        free(record);
    }
    char *text = json_dumps(pod, JSON_COMPACT);
    if (text == NULL)
        abort();
    int rc = topo_cache_upsert_pod(c, text, strlen(text), NULL);
    free(text);
    topo_cache_pod p;
    topo_cache_reservation r;
    if (rc < 0 || topo_cache_get_pod(&p, c, UID, pool, NULL) != 0) {
        /* not stored: nothing bound */
        if (topo_cache_reservation_get(&r, c, RES, pool, NULL) != 0 || r.nclaimed != 0)
            abort();
        return;
    }
    if (topo_cache_reservation_get(&r, c, RES, pool, NULL) != 0)
        abort();
    int bound = r.slots[0].pod_uid != NULL && strcmp(r.slots[0].pod_uid, UID) == 0;
    int finished = strcmp(p.phase, "Succeeded") == 0 || strcmp(p.phase, "Failed") == 0;
    const char *stored_seal = kv(p.annotations, p.nannotations, TOPO_CACHE_SEAL_ANNOTATION);
    topo_cache_seal_fields stored = {p.namespace_name, podset, RES, "0",
                                     kv(p.annotations, p.nannotations, "topology.topo.io/role")};
    int may = topo_podset_key_in_namespace(podset, p.namespace_name) &&
              topo_cache_seal_verify(&keys, stored_seal, &stored) == 1 && own(&p, podset, pool);
    if (sealed == RECORDED && stored_seal == NULL)
        may = topo_podset_key_in_namespace(podset, p.namespace_name) &&
              !topo_podset_key_is_request(podset) && own(&p, podset, pool);
    if (bound && !may) {
        fprintf(stderr, "pod %s/%s bound a slot of PodSet %s\n", p.namespace_name, p.name, podset);
        abort();
    }
    if (may && !finished && !bound) {
        fprintf(stderr, "pod %s/%s of PodSet %s, %s, bound nothing\n", p.namespace_name,
                p.name, podset, sealed == RECORDED ? "recorded" : "sealed");
        abort();
    }
    if (topo_cache_delete_pod(c, UID, NULL, NULL) < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    json_t *pod = json_object_get(json_object_get(root, "request"), "object");
    if (pod == NULL)
        pod = root;
    json_t *meta = json_object_get(pod, "metadata");
    if (!json_is_object(meta)) {
        json_decref(root);
        return 0;
    }
    json_object_set_new(meta, "uid", json_string(UID));
    topo_cache *c = cache();
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        abort();
    /* the pod's own PodSet key (as stored: what the cache derives from) */
    char *text = json_dumps(pod, JSON_COMPACT);
    topo_cache_pod p;
    const char *own_key = NULL, *ns = "";
    if (text != NULL && topo_cache_upsert_pod(c, text, strlen(text), NULL) == 0 &&
        topo_cache_get_pod(&p, c, UID, pool, NULL) == 0) {
        const char *name = p.generate_name && p.generate_name[0] ? NULL : p.name;
        topo_podset_pod in = {p.namespace_name, name,           p.generate_name,
                              p.labels,         p.nlabels,      p.annotations,
                              p.nannotations,   p.owner_uid,    "req"};
        topo_podset_key k;
        ns = p.namespace_name;
        if (topo_podset_key_derive(&k, &in, pool, NULL) == 0)
            own_key = k.key;
        if (topo_cache_delete_pod(c, UID, NULL, NULL) < 0)
            abort();
    }
    free(text);
    const char *podsets[] = {own_key, "team-a/job/0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a"};
    for (size_t i = 0; i < 2; i++)
        for (int sealed = UNSEALED; sealed <= RECORDED; sealed++)
            if (podsets[i] != NULL)
                round_of(c, pod, ns, podsets[i], sealed, pool);
    int deleted = 0;
    if (topo_cache_reservation_delete(c, RES, &deleted, NULL) < 0)
        abort();
    topo_pool_free(pool);
    json_decref(root);
    return 0;
}
