/* A test cluster for the admission handler's node-failure paths: three
 * racks of 8-GPU nodes (r1 = n9 n10 n11, r2 = n1 n2 n3, r3 = m1..m6; each
 * node's name its FQDN "<host>.gpu.example.com", its kubernetes.io/hostname
 * label the short host), a live snapshot, an in-memory cache that verifies
 * seals under the record keys (so stored pods bind their slots) and an
 * admission ctx over them (policy gate). With the recorded Job pod of
 * fixtures/admission/job-pod (8 GPUs, rack required) as any completion
 * index, and the AdmissionReviews that send it. cmocka asserts throughout. */
#ifndef TOPO_TEST_RACKS_H
#define TOPO_TEST_RACKS_H

#include <jansson.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/keyring.h"
#include "topo/live.h"

#define RACKS_RACK "topology.topo.io/rack"
#define RACKS_HOST "kubernetes.io/hostname"
/* The recorded Job's PodSet key. */
#define RACKS_JOB_KEY "team-a/job/0f6e2f3a-2b8c-4f4e-9d1a-6c1f2e3d4b5a"

typedef struct racks_fx {
    topo_live *live;
    topo_cache *cache;
    topo_admission_ctx *ctx;
    topo_keyring keys;
} racks_fx;

/* fail_fast: nodeReplacement.failFast. */
void racks_open(racks_fx *f, int fail_fast);
void racks_close(racks_fx *f);

/* Node host as the live has it: Ready or not, a Ready condition or none, a
 * taint (NULL: none), cordoned. */
void racks_node(racks_fx *f, const char *host, int ready, int ready_missing,
                const topo_taint *taint, int cordoned);
void racks_node_gone(racks_fx *f, const char *host);
/* Node host, Ready, relabelled into rack (or re-created there). */
void racks_node_in(racks_fx *f, const char *host, const char *rack);

/* The recorded Job pod as completion index idx of a size-pod PodSet (a new
 * reference). */
json_t *racks_job_pod(int idx, int size);

/* One AdmissionReview of pod (borrowed) as request uid: the response and
 * its patch (NULL when none). */
typedef struct racks_said {
    json_t *root;
    json_t *resp;
    json_t *ops;
} racks_said;
racks_said racks_ask(racks_fx *f, const json_t *pod, const char *uid);
/* The same through any ctx: a Pod CREATE review of pod in its own
 * metadata.namespace, dryRun as asked (any test of the handler). */
racks_said racks_review(topo_admission_ctx *ctx, const json_t *pod, const char *uid,
                        int dry_run);
void racks_said_free(racks_said *s);
/* pod with the answer's patch applied (a new reference). */
json_t *racks_patched(const json_t *pod, const racks_said *s);
/* Admitted (fails the test when refused): the pod as patched. */
json_t *racks_admit(racks_fx *f, const json_t *pod, const char *uid);

const char *racks_selector(const json_t *pod, const char *key);
const char *racks_annotation(const json_t *pod, const char *key);

/* The pod as the API server would store it: uid (its name too), unbound
 * (host NULL) or bound to host's node, in phase; upserted into the cache
 * (its slot binds under its seal). */
void racks_store(racks_fx *f, json_t *pod, const char *uid, const char *host, const char *phase);

#endif
