/* libFuzzer harness for reservation records on pods (lib/cache/cache_adopt.c):
 * what another replica's cache adopts from a pod's annotations. The input is
 * the assignment annotation, a newline, and the record's JSON; the harness
 * signs them with its key (so the fuzzer reaches the parsing behind the
 * MAC, which a forged record never does) and stores a pod carrying them. Any
 * bytes leave the pod stored and either adopt a reservation that reads back
 * whole (its slots the assignment's counts) or nothing: never a crash, a
 * leak or an error for the pod. The pod is of the namespace the record's
 * PodSet names (a record is adopted only there). Seeds: fixtures/fuzz/record. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/cache.h"
#include "topo/sha256.h"
#include "topo/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_err err = TOPO_ERR_INIT;
    char mac[TOPO_SHA256_HEX_LEN + 1];
    if (size > 8192)
        return 0;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = memchr(text, '\n', size);
    const char *assignment = text, *json = "";
    if (nl != NULL) {
        *nl = '\0';
        json = nl + 1;
    }
    if (!valid_utf8(assignment) || !valid_utf8(json)) {
        free(text);
        return 0;
    }
    /* NUL bytes cut the annotations as a C string: sign what is stored. */
    size_t n = strlen(assignment) + strlen(json) + sizeof ID + 3;
    char *msg = malloc(n), *record = malloc(TOPO_SHA256_HEX_LEN + strlen(json) + 2);
    if (msg == NULL || record == NULL)
        abort();
    snprintf(msg, n, "%s\n%s\n%s", ID, assignment, json);
    if (topo_hmac_sha256_hex(mac, KEY, sizeof KEY, msg, strlen(msg)) != 0)
        abort();
    sprintf(record, "%s %s", mac, json);

    topo_cache *c = cache();
    topo_kv ann[] = {{"topology.topo.io/reservation", ID},
                     {"topology.topo.io/slot", "0"},
                     {"topology.topo.io/assignment", assignment},
                     {TOPO_CACHE_RECORD_ANNOTATION, record}};
    /* A record is adopted only from a pod of its PodSet's namespace: the
     * pod is put in it, so the fuzzer reaches the reservation's insert. */
    char ns[64] = "ns";
    json_t *doc = json_loads(json, 0, NULL);
    const char *podset = json_string_value(json_object_get(doc, "podset"));
    const char *slash = podset != NULL ? strchr(podset, '/') : NULL;
    if (slash != NULL && slash > podset && (size_t)(slash - podset) < sizeof ns)
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - podset), podset);
    json_decref(doc);
    topo_cache_pod p = {"uid-1", ns,   "pod", "", "Pending", NULL, 0,   NULL,
                        0,       ann,  4,     0,  "1",       0,    NULL, NULL};
    if (topo_cache_put_pod(c, &p, &err) != 0) {
        fprintf(stderr, "put_pod: %s\n", err.text);
        abort();
    }
    topo_pool *pool = topo_pool_create();
    topo_cache_reservation r;
    topo_cache_pod got;
    if (pool == NULL || topo_cache_get_pod(&got, c, "uid-1", pool, &err) != 0)
        abort();
    int rc = topo_cache_reservation_get(&r, c, ID, pool, &err);
    if (rc == 0) {
        size_t slots = 0;
        for (size_t i = 0; i < r.nslots; i++)
            if (r.slots[i].index != (int32_t)i || r.slots[i].nvalues != r.nassignment_levels)
                abort();
        slots = r.nslots;
        if (slots == 0 || r.expires_at <= r.created_at || r.nlevels == 0)
            abort();
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
    free(msg);
    free(record);
    free(text);
    return 0;
}
