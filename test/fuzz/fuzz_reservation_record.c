/* libFuzzer harness for reservation records on pods (lib/cache/cache_adopt.c):
 * what another replica's cache adopts from a pod's annotations. The input is
 * the assignment annotation, a newline, and the record's JSON; the harness
 * signs them with its key (so the fuzzer reaches the parsing behind the
 * MAC, which a forged record never does) and stores a pod carrying them. Any
 * bytes leave the pod stored and either adopt a reservation that reads back
 * whole (its slots the assignment's counts) or nothing: never a crash, a
 * leak or an error for the pod. The pod is of the namespace the record's
 * PodSet names (a record is adopted only there).
 *
 * An optional third line is a second assignment: once a reservation is
 * adopted, a second pod carries it with the same record at the next
 * generation (re-signed), as after a failed-node replacement, so the
 * fuzzer reaches the update of a held reservation (cache_reassign.c). The
 * reservation keeps its slot count; it moves to that assignment exactly
 * when its generation rose; the first pod seen again never moves it back.
 * Seeds: fixtures/fuzz/record. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/cache.h"
#include "topo/json.h"
#include "topo/sha256.h"
#include "topo/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GEN_MAX ((json_int_t)1 << 53)

#define ID "default.00000000000000aa"
static const unsigned char KEY[] = "the fuzzer's record key";

/* Annotations come from the API server as JSON strings: valid UTF-8. */
static int valid_utf8(const char *s)
{
    size_t n;
    for (; *s != '\0'; s += n)
        if ((n = topo_utf8_decode(s, NULL)) == 0)
            return 0;
    return 1;
}

static topo_cache *cache(void)
{
    static topo_cache *c;
    topo_err err = TOPO_ERR_INIT;
    topo_keyring ring = TOPO_KEYRING_INIT;
    topo_cache_opts o = {.record_keys = &ring};
    if (c == NULL && (topo_keyring_add(&ring, KEY, sizeof KEY, "key", &err) < 0 ||
                      topo_cache_open(&c, ":memory:", &o, &err) < 0))
        abort();
    return c;
}

/* "<MAC> <json>" as a placer signs it for ID and assignment (malloc'd). */
static char *signed_record(const char *assignment, const char *json)
{
    char mac[TOPO_SHA256_HEX_LEN + 1];
    size_t n = strlen(assignment) + strlen(json) + sizeof ID + 3;
    char *msg = malloc(n), *record = malloc(TOPO_SHA256_HEX_LEN + strlen(json) + 2);
    if (msg == NULL || record == NULL)
        abort();
    snprintf(msg, n, "%s\n%s\n%s", ID, assignment, json);
    if (topo_hmac_sha256_hex(mac, KEY, sizeof KEY, msg, strlen(msg)) != 0)
        abort();
    sprintf(record, "%s %s", mac, json);
    free(msg);
    return record;
}

/* Stores pod uid of namespace ns carrying the assignment and record: never
 * an error for the pod. */
static void put(topo_cache *c, const char *uid, const char *ns, const char *assignment,
                const char *record)
{
    topo_err err = TOPO_ERR_INIT;
    topo_kv ann[] = {{"topology.topo.io/reservation", ID},
                     {"topology.topo.io/slot", "0"},
                     {"topology.topo.io/assignment", assignment},
                     {TOPO_CACHE_RECORD_ANNOTATION, record}};
    topo_cache_pod p = {uid, ns,  "pod", "",   "Pending", NULL, 0, NULL, 0,
                        ann, 4,   0,     "1",  0,         NULL, NULL, 0};
    if (topo_cache_put_pod(c, &p, &err) != 0) {
        fprintf(stderr, "put_pod: %s\n", err.text);
        abort();
    }
}

/* The pod, unbound and holding slot 0, as the stranded-pod read returns it
 * (issue 28): the domain it is pinned to comes from its own assignment
 * annotation, whatever that says, one value per assignment level. */
static int stranded_row(const topo_cache_stranded *s, void *payload)
{
    (void)payload;
    if (s->values == NULL || s->nvalues == 0 || s->nvalues != s->nassignment_levels)
        abort();
    for (size_t i = 0; i < s->nvalues; i++)
        if (s->values[i] == NULL)
            abort();
    return 0;
}

/* The reservation as a whole: slots 0..n-1, one value per assignment level. */
static void check_whole(const topo_cache_reservation *r)
{
    for (size_t i = 0; i < r->nslots; i++)
        if (r->slots[i].index != (int32_t)i || r->slots[i].nvalues != r->nassignment_levels)
            abort();
    if (r->nslots == 0 || r->expires_at <= r->created_at || r->nlevels == 0)
        abort();
}

/* The record JSON at the next generation (the same JSON when it is no
 * object, or at the largest generation), malloc'd. */
static char *next_generation(const char *json, const topo_cache_reservation *r)
{
    json_t *doc = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
    char *out = NULL;
    if (json_is_object(doc) && r->gen_seq < GEN_MAX)
        json_object_set_new(doc, "gen",
                            json_pack("[I, I]", (json_int_t)r->gen_term,
                                      (json_int_t)r->gen_seq + 1));
    out = json_is_object(doc) ? topo_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return out != NULL ? out : strdup(json);
}

/* A held reservation and a pod carrying `moved` at the next generation:
 * the slot count never changes; the slots follow `moved` exactly when the
 * generation rose; the first pod seen again never moves them back. */
static void update(topo_cache *c, const char *ns, const char *assignment, const char *json,
                   const char *moved, const topo_cache_reservation *r, topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache_reservation u, again;
    char *json2 = next_generation(json, r);
    char *record2 = signed_record(moved, json2), *record1 = signed_record(assignment, json);
    put(c, "uid-2", ns, moved, record2);
    if (topo_cache_reservation_get(&u, c, ID, pool, &err) != 0)
        abort();
    check_whole(&u);
    int rose = u.gen_term > r->gen_term || (u.gen_term == r->gen_term && u.gen_seq > r->gen_seq);
    if (u.nslots != r->nslots ||
        strcmp(u.assignment_json, rose ? moved : r->assignment_json) != 0 ||
        (!rose && (u.gen_term != r->gen_term || u.gen_seq != r->gen_seq)))
        abort();
    put(c, "uid-1", ns, assignment, record1);
    if (topo_cache_reservation_get(&again, c, ID, pool, &err) != 0 ||
        strcmp(again.assignment_json, u.assignment_json) != 0 ||
        again.gen_term != u.gen_term || again.gen_seq != u.gen_seq || again.nslots != u.nslots)
        abort();
    int deleted = 0;
    if (topo_cache_delete_pod(c, "uid-2", &deleted, &err) != 0)
        abort();
    free(json2);
    free(record2);
    free(record1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_err err = TOPO_ERR_INIT;
    if (size > 8192)
        return 0;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = memchr(text, '\n', size);
    const char *assignment = text, *json = "", *moved = NULL;
    if (nl != NULL) {
        *nl = '\0';
        json = nl + 1;
        char *nl2 = strchr(json, '\n');
        if (nl2 != NULL) {
            *nl2 = '\0';
            moved = nl2[1] != '\0' ? nl2 + 1 : NULL;
        }
    }
    if (!valid_utf8(assignment) || !valid_utf8(json) || (moved != NULL && !valid_utf8(moved))) {
        free(text);
        return 0;
    }
    /* NUL bytes cut the annotations as a C string: sign what is stored. */
    char *record = signed_record(assignment, json);
    topo_cache *c = cache();
    /* A record is adopted only from a pod of its PodSet's namespace: the
     * pod is put in it, so the fuzzer reaches the reservation's insert. */
    char ns[64] = "ns";
    json_t *doc = json_loads(json, 0, NULL);
    const char *podset = json_string_value(json_object_get(doc, "podset"));
    const char *slash = podset != NULL ? strchr(podset, '/') : NULL;
    if (slash != NULL && slash > podset && (size_t)(slash - podset) < sizeof ns)
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - podset), podset);
    json_decref(doc);
    put(c, "uid-1", ns, assignment, record);
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r;
    topo_cache_pod got;
    if (pool == NULL || topo_cache_get_pod(&got, c, "uid-1", pool, &err) != 0)
        abort();
    int rc = topo_cache_reservation_get(&r, c, ID, pool, &err);
    if (rc == 0) {
        check_whole(&r);
        if (topo_cache_foreach_stranded(c, stranded_row, NULL, &err) != 0)
            abort();
        if (moved != NULL)
            update(c, ns, assignment, json, moved, &r, pool);
        int deleted = 0;
        if (topo_cache_reservation_delete(c, ID, &deleted, &err) != 0 || !deleted)
            abort();
    } else if (rc != TOPO_ENOTFOUND) {
        abort();
    }
    int deleted = 0;
    if (topo_cache_delete_pod(c, "uid-1", &deleted, &err) != 0)
        abort();
    topo_pool_free(pool);
    free(record);
    free(text);
    return 0;
}
