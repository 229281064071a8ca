/* topo-webhook's admission handler alone (topo_admission_handle): no TLS,
 * no HTTP, one thread, over an inventory file, with the reservations in a
 * cache file as the webhook keeps them. What bench/webhook/run.sh's cpu_us
 * column holds minus the transport, steadier than it on a shared machine:
 * the CPU per request of each round (CLOCK_THREAD_CPUTIME_ID), of which
 * the AdmissionReview's JSON parse alone (the same bodies parsed again by
 * jansson after the round), and the latency percentiles of its requests.
 * See bench/README.md "bench_admission".
 *
 *   bench_admission --inventory nodes.json [--pods pods.json] [--config FILE]
 *                   [--kind topology|podset64|packed|passthrough|passthrough-gpu]
 *                   [--requests N] [--rounds R] [--db PATH | --memory]
 *
 * The inventory (and its bound pods) is loaded as topo-webhook --inventory
 * [--pods] loads it, under the webhook's configuration file (--config;
 * without it the levels block/rack/hostname, packing off). Bodies: the
 * AdmissionReview of bench/webhook/common.lua (a Pod CREATE), built before
 * each round: `topology` a new single-pod PodSet per request (cpu 100m,
 * rack required), `podset64` the pods of Indexed Jobs of 64 in order (one
 * placement, 63 slot claims), `packed` a GPU pod without topology request
 * (1, 2, 4 or 8 GPUs with cpu and memory as notebooks and inference
 * replicas ask, 12 shapes in turn: bench/webhook/gpupod.lua's), which the
 * configuration's packing must steer, `passthrough-gpu` the same pods with
 * packing off (allowed unchanged), `passthrough` a pod without GPU or
 * topology (cpu 100m: allowed unchanged, packing on or off). Every answer
 * is checked; exit 1 on the first wrong one. The WAL is checkpointed
 * between rounds, outside the timing, as the webhook's owner thread does
 * off the request path. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/cache.h"
#include "topo/codec.h"
#include "topo/error.h"
#include "topo/inventory.h"
#include "topo/limits.h"
#include "topo/live.h"

#include "support/dbfiles.h"

/* The levels without --config (those of `topoassign generate`). */
static const char default_levels[] =
    "topology.topo.io/block,topology.topo.io/rack,kubernetes.io/hostname";

static const char review_fmt[] =
    "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
    "\"uid\":\"%08x-0000-4000-8000-%012x\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"name\":\"%s\",\"namespace\":\"%s\",\"operation\":\"CREATE\","
    "\"userInfo\":{\"username\":\"system:serviceaccount:kube-system:job-controller\","
    "\"uid\":\"5d0c3a4e-8d55-4a4b-9a3c-0f3b1c2d3e4f\",\"groups\":[\"system:serviceaccounts\","
    "\"system:serviceaccounts:kube-system\",\"system:authenticated\"]},"
    "\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
    "\"namespace\":\"%s\",%s},"
    "\"spec\":{\"containers\":[{\"name\":\"worker\",\"image\":\"nvcr.io/nvidia/pytorch:24.05-py3\","
    "\"resources\":%s}],\"restartPolicy\":\"Never\","
    "\"schedulerName\":\"default-scheduler\",\"terminationGracePeriodSeconds\":30,"
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}%s]},\"status\":{}},"
    "\"oldObject\":null,\"dryRun\":false,"
    "\"options\":{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"CreateOptions\"}}}";

static const char job_meta_fmt[] =
    "\"labels\":{\"batch.kubernetes.io/controller-uid\":\"%s\","
    "\"batch.kubernetes.io/job-name\":\"%s\",\"batch.kubernetes.io/job-completion-index\":\"%d\","
    "\"controller-uid\":\"%s\",\"job-name\":\"%s\"},"
    "\"annotations\":{\"batch.kubernetes.io/job-completion-index\":\"%d\","
    "\"kueue.x-k8s.io/podset-required-topology\":\"topology.topo.io/rack\","
    "\"topology.topo.io/podset-size\":\"64\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"%s\","
    "\"uid\":\"%s\",\"controller\":true,\"blockOwnerDeletion\":true}]";

/* The pod kinds, and what each answer must be. */
typedef enum kind { K_TOPOLOGY, K_PODSET64, K_PACKED, K_PASSTHROUGH, K_PASSTHROUGH_GPU } kind;
static const char *const kind_names[] = {"topology", "podset64", "packed", "passthrough",
                                         "passthrough-gpu"};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

/* base64 of the opening bytes of an answer's patch, cut to whole 3-byte
 * groups (bench/webhook's scripts check the same): a placed pod's (and a
 * packed one's in mode required) first operation sets the nodeSelector;
 * a packed pod without affinity of its own (mode preferred) gets
 * spec.affinity with the preferred terms, the best domain's weight 100
 * first: '[{"op":"add","path":"/spec/affinity","value":{"nodeAffinity":
 * {"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100' (126 bytes). */
static const char placed_prefix[] = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvbm9kZVNlbGVjdG9y";
static const char preferred_prefix[] =
    "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvYWZmaW5pdHkiLCJ2YWx1ZSI6eyJub2RlQWZmaW5pdHkiOnsicHJl"
    "ZmVycmVkRHVyaW5nU2NoZWR1bGluZ0lnbm9yZWREdXJpbmdFeGVjdXRpb24iOlt7IndlaWdodCI6MTAw";

/* The GPU pods of `packed` and `passthrough-gpu`, in turn: notebooks and
 * inference replicas of 1, 2, 4 and 8 GPUs, each with its own cpu and
 * memory (a generated node has 16 cpu and 250Gi per GPU). Extended
 * resources are requested through limits as well, as the API server
 * requires; memory limits as such pods set them. bench/webhook/gpupod.lua
 * sends the same. */
static const struct gpu_shape {
    int gpus;
    const char *cpu, *memory;
} gpu_shapes[] = {
    {1, "2", "16Gi"},   {1, "4", "32Gi"},     {1, "8", "64Gi"},      {2, "6", "48Gi"},
    {2, "12", "128Gi"}, {2, "16", "200Gi"},   {4, "16", "256Gi"},    {4, "32", "500Gi"},
    {4, "48", "800Gi"}, {8, "64", "1000Gi"},  {8, "96", "1500Gi"},   {8, "120", "1900Gi"},
};
#define NGPU_SHAPES (sizeof gpu_shapes / sizeof gpu_shapes[0])

/* GPU pods tolerate the GPU nodes' usual taint, as the GPU operator's
 * pods and most clusters' admission defaults make them. */
static const char gpu_toleration[] =
    ",{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}";

typedef struct opts {
    const char *inventory, *pods, *config, *db;
    kind kind;
    int requests, rounds, memory;
} opts;

static int usage(void)
{
    fprintf(stderr, "usage: bench_admission --inventory FILE [--pods FILE] [--config FILE] "
                    "[--kind topology|podset64|packed|passthrough|passthrough-gpu] "
                    "[--requests N] [--rounds R] [--db PATH | --memory]\n");
    return 2;
}

static int parse_args(opts *o, int argc, char **argv)
{
    const char *k = "topology";
    *o = (opts){NULL, NULL, NULL, NULL, K_TOPOLOGY, 20000, 5, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--memory") == 0) {
            o->memory = 1;
            continue;
        }
        if (v == NULL)
            return usage();
        i++;
        if (strcmp(a, "--inventory") == 0)
            o->inventory = v;
        else if (strcmp(a, "--pods") == 0)
            o->pods = v;
        else if (strcmp(a, "--config") == 0)
            o->config = v;
        else if (strcmp(a, "--kind") == 0)
            k = v;
        else if (strcmp(a, "--db") == 0)
            o->db = v;
        else if (strcmp(a, "--requests") == 0)
            o->requests = atoi(v);
        else if (strcmp(a, "--rounds") == 0)
            o->rounds = atoi(v);
        else
            return usage();
    }
    size_t i = 0;
    while (i < NKINDS && strcmp(k, kind_names[i]) != 0)
        i++;
    o->kind = (kind)i;
    if (o->inventory == NULL || o->requests <= 0 || o->rounds <= 0 || i == NKINDS)
        return usage();
    return 0;
}

/* Request n (0-based, across rounds) of the kind as an AdmissionReview. */
static char *make_body(const opts *o, unsigned n)
{
    char name[64], meta[1024], res[256];
    const char *ns = "bench", *tol = "";
    snprintf(res, sizeof res, "{\"requests\":{\"cpu\":\"100m\"}}");
    if (o->kind == K_TOPOLOGY) {
        snprintf(name, sizeof name, "bench-%u", n);
        snprintf(meta, sizeof meta, "\"annotations\":{\"kueue.x-k8s.io/podset-required-topology\":"
                                    "\"topology.topo.io/rack\"}");
    } else if (o->kind == K_PODSET64) {
        char job[48], uid[48];
        unsigned j = n / 64;
        int index = (int)(n % 64);
        snprintf(job, sizeof job, "slots-j%u", j);
        snprintf(uid, sizeof uid, "00000001-0000-4000-9000-%012x", j);
        snprintf(name, sizeof name, "%s-%d", job, index);
        snprintf(meta, sizeof meta, job_meta_fmt, uid, job, index, uid, job, index, job, uid);
    } else if (o->kind == K_PASSTHROUGH) {
        ns = "default";
        snprintf(name, sizeof name, "web-%u", n);
        snprintf(meta, sizeof meta, "\"labels\":{\"app\":\"web\"}");
    } else {
        const struct gpu_shape *g = &gpu_shapes[n % NGPU_SHAPES];
        ns = "team-a";
        tol = gpu_toleration;
        snprintf(name, sizeof name, "notebook-%u", n);
        snprintf(meta, sizeof meta, "\"labels\":{\"app\":\"notebook\"}");
        snprintf(res, sizeof res,
                 "{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"nvidia.com/gpu\":\"%d\"},"
                 "\"limits\":{\"memory\":\"%s\",\"nvidia.com/gpu\":\"%d\"}}",
                 g->cpu, g->memory, g->gpus, g->memory, g->gpus);
    }
    size_t size = sizeof review_fmt + 2 * strlen(name) + 2 * strlen(ns) + strlen(meta) +
                  strlen(res) + strlen(tol) + 32;
    char *body = malloc(size);
    if (body != NULL)
        snprintf(body, size, review_fmt, 1u, n, name, ns, name, ns, meta, res, tol);
    return body;
}

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The answer's patch must start with prefix (base64), or, prefix NULL,
 * there must be no patch: 1 when the answer is right. */
static int answer_ok(const char *out, const char *prefix)
{
    if (out == NULL || strstr(out, "\"allowed\":true") == NULL)
        return 0;
    const char *patch = strstr(out, "\"patch\":\"");
    if (prefix == NULL)
        return patch == NULL;
    return patch != NULL && strncmp(patch + 9, prefix, strlen(prefix)) == 0;
}

/* One round of o->requests from request number first: CPU per request and
 * the latency percentiles (µs) on stdout; 0, or -1 when an answer was not
 * the one the kind must get (prefix: see answer_ok). */
static int run_round(topo_admission_ctx *ctx, const opts *o, const char *prefix, int round,
                     unsigned first)
{
    size_t n = (size_t)o->requests;
    char **bodies = calloc(n, sizeof *bodies);
    int64_t *lat = calloc(n, sizeof *lat);
    int bad = bodies == NULL || lat == NULL;
    for (size_t i = 0; !bad && i < n; i++)
        bad = (bodies[i] = make_body(o, first + (unsigned)i)) == NULL;
    int64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (size_t i = 0; !bad && i < n; i++) {
        char *out = NULL;
        size_t out_len = 0;
        int status = 0;
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        int rc = topo_admission_handle(ctx, bodies[i], strlen(bodies[i]), &out, &out_len, &status);
        lat[i] = now_ns(CLOCK_MONOTONIC) - t0;
        if (rc != 0 || status != 200 || !answer_ok(out, prefix)) {
            fprintf(stderr, "bench_admission: request %zu (%s) wrong answer: %.300s\n", i,
                    kind_names[o->kind], out ? out : "(no answer)");
            bad = 1;
        }
        free(out);
    }
    int64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    /* The same bodies through jansson alone, as the handler's decoder
     * parses them (and frees the tree): the part of the CPU above that no
     * handler on jansson avoids. */
    int64_t json0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (size_t i = 0; !bad && i < n; i++) {
        json_t *doc = NULL;
        topo_err err = TOPO_ERR_INIT;
        bad = topo_codec_json_parse(&doc, bodies[i], strlen(bodies[i]), "bench", &err) != 0;
        json_decref(doc);
    }
    int64_t json = now_ns(CLOCK_THREAD_CPUTIME_ID) - json0;
    if (!bad) {
        qsort(lat, n, sizeof *lat, cmp_i64);
        printf("round %d: %s, %zu requests: cpu %.1f us/request (its JSON parse alone %.1f), "
               "p50 %.1f us, p99 %.1f us, max %.1f us\n",
               round, kind_names[o->kind], n, (double)cpu / 1e3 / (double)n,
               (double)json / 1e3 / (double)n, (double)lat[n / 2] / 1e3,
               (double)lat[n * 99 / 100] / 1e3, (double)lat[n - 1] / 1e3);
    }
    for (size_t i = 0; bodies != NULL && i < n; i++)
        free(bodies[i]);
    free(bodies);
    free(lat);
    return bad ? -1 : 0;
}

/* What every answer of the kind must start with under this configuration
 * (NULL: no patch), or an error when the kind cannot be answered as it
 * must (packed pods without packing, GPU pass-through with it). */
static int expected_prefix(const char **out, const opts *o, const topo_admission_config *cfg,
                           topo_err *err)
{
    const topo_admission_packing *pk = topo_admission_config_packing(cfg);
    *out = NULL;
    if (o->kind == K_TOPOLOGY || o->kind == K_PODSET64)
        *out = placed_prefix;
    else if (o->kind == K_PACKED && pk == NULL)
        return topo_err_set(err, TOPO_EINVALID, "--kind packed: the configuration (--config) "
                                                "must turn packing on");
    else if (o->kind == K_PACKED)
        *out = pk->mode == TOPO_ADMISSION_PACKING_REQUIRED ? placed_prefix : preferred_prefix;
    else if (o->kind == K_PASSTHROUGH_GPU && pk != NULL)
        return topo_err_set(err, TOPO_EINVALID, "--kind passthrough-gpu: packing is on in %s: "
                                                "these pods would be packed (--kind packed)",
                            o->config);
    return 0;
}

/* The configuration's topologies, each over a live snapshot of the
 * inventory (and its pods), as topo-webhook --inventory [--pods] serves. */
static int load_lives(topo_admission_topology *topos, topo_live **lives,
                      const topo_admission_config *cfg, const opts *o, topo_err *err)
{
    topo_inventory *inv = NULL;
    int rc = topo_inventory_load_static(&inv, o->inventory, o->pods, err);
    for (size_t i = 0; rc == 0 && i < topo_admission_config_topology_count(cfg); i++) {
        const topo_admission_topology_config *tc = topo_admission_config_topology(cfg, i);
        topo_snapshot_opts so = {tc->name, tc->levels, tc->nlevels, tc->node_labels,
                                 tc->nnode_labels};
        rc = topo_live_create(&lives[i], &so, err);
        if (rc == 0)
            rc = topo_inventory_fill_live(lives[i], inv, err);
        topos[i] = (topo_admission_topology){tc->name,         tc->levels,   tc->nlevels,
                                             tc->node_labels,  tc->nnode_labels, tc->policy,
                                             lives[i],         tc->npacking_levels};
    }
    topo_inventory_free(inv);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse_args(&o, argc, argv) != 0)
        return 2;
    char db[256];
    if (o.db != NULL)
        snprintf(db, sizeof db, "%s", o.db);
    else
        snprintf(db, sizeof db, "/dev/shm/topo-bench-admission-%ld.db", (long)getpid());
    topo_err err = TOPO_ERR_INIT;
    topo_admission_config *cfg = NULL;
    topo_admission_topology topos[TOPO_MAX_TOPOLOGIES];
    topo_live *lives[TOPO_MAX_TOPOLOGIES] = {NULL};
    topo_cache *cache = NULL, *checkpointer = NULL;
    topo_admission_ctx *ctx = NULL;
    topo_cache_opts co = {.manual_checkpoint = 1};
    const char *prefix = NULL;
    int rc = o.config != NULL ? topo_admission_config_load_file(&cfg, o.config, &err)
                              : topo_admission_config_from_levels(&cfg, default_levels, &err);
    size_t ntopos = rc == 0 ? topo_admission_config_topology_count(cfg) : 0;
    if (rc == 0)
        rc = expected_prefix(&prefix, &o, cfg, &err);
    if (rc == 0)
        rc = load_lives(topos, lives, cfg, &o, &err);
    if (rc == 0)
        rc = topo_cache_open(&cache, o.memory ? ":memory:" : db, &co, &err);
    if (rc == 0 && !o.memory)
        rc = topo_cache_open(&checkpointer, db, &co, &err);
    if (rc == 0) {
        /* As topo-webhook's static mode sets it up (webhook/placement.c):
         * no namespace view, always ready. */
        topo_admission_opts ao = {0};
        ao.topologies = topos;
        ao.ntopologies = ntopos;
        ao.cache = cache;
        ao.default_policy = topo_admission_config_default_policy(cfg);
        ao.reservation_ttl_s = topo_admission_config_reservation_ttl_s(cfg);
        ao.unclaimed_ttl_s = topo_admission_config_unclaimed_ttl_s(cfg);
        ao.unclaimed_cap_namespace =
            topo_admission_config_unclaimed_caps(cfg, 0, &ao.nunclaimed_cap_namespace);
        ao.unclaimed_cap_global =
            topo_admission_config_unclaimed_caps(cfg, 1, &ao.nunclaimed_cap_global);
        ao.packing = topo_admission_config_packing(cfg);
        rc = topo_admission_ctx_create(&ctx, &ao, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "bench_admission: %s\n", err.text);
    } else {
        printf("bench_admission: %s%s%s, %s, packing %s, reservations in %s\n", o.inventory,
               o.pods ? " + " : "", o.pods ? o.pods : "", o.config ? o.config : default_levels,
               topo_admission_config_packing(cfg) ? "on" : "off", o.memory ? "memory" : db);
        for (int r = 0; rc == 0 && r < o.rounds; r++) {
            rc = run_round(ctx, &o, prefix, r, (unsigned)(r * o.requests));
            if (checkpointer != NULL && topo_cache_checkpoint(checkpointer, NULL, &err) < 0)
                fprintf(stderr, "bench_admission: checkpoint: %s\n", err.text);
        }
    }
    topo_admission_ctx_free(ctx);
    topo_cache_close(checkpointer);
    topo_cache_close(cache);
    for (size_t i = 0; i < TOPO_MAX_TOPOLOGIES; i++)
        topo_live_free(lives[i]);
    topo_admission_config_free(cfg);
    if (!o.memory && o.db == NULL)
        topo_test_remove_db(db);
    return rc == 0 ? 0 : 1;
}
