/* topo-webhook's admission handler alone (topo_admission_handle): no TLS,
 * no HTTP, one thread, over an inventory file, with the reservations in a
 * cache file as the webhook keeps them. What bench/webhook/run.sh's cpu_us
 * column holds minus the transport, steadier than it on a shared machine:
 * the CPU per request of each round (CLOCK_THREAD_CPUTIME_ID), of which
 * the AdmissionReview's JSON parse alone (the same bodies parsed again by
 * jansson after the round), and the latency percentiles of its requests.
 * See bench/README.md "bench_admission".
 *
 *   bench_admission --inventory nodes.json [--kind topology|podset64]
 *                   [--requests N] [--rounds R] [--db PATH | --memory]
 *
 * Bodies: the AdmissionReview of bench/webhook/common.lua (a Pod CREATE,
 * cpu 100m, rack required), built before each round: `topology` a new
 * single-pod PodSet per request, `podset64` the pods of Indexed Jobs of 64
 * in order (one placement, 63 slot claims). The WAL is checkpointed
 * between rounds, outside the timing, as the webhook's owner thread does
 * off the request path. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/admission.h"
#include "topo/cache.h"
#include "topo/codec.h"
#include "topo/error.h"
#include "topo/inventory.h"
#include "topo/live.h"

#include "support/dbfiles.h"

static const char *const levels[] = {"topology.topo.io/block", "topology.topo.io/rack",
                                     "kubernetes.io/hostname"};

static const char review_fmt[] =
    "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
    "\"uid\":\"%08x-0000-4000-8000-%012x\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"name\":\"%s\",\"namespace\":\"bench\",\"operation\":\"CREATE\","
    "\"userInfo\":{\"username\":\"system:serviceaccount:kube-system:job-controller\","
    "\"uid\":\"5d0c3a4e-8d55-4a4b-9a3c-0f3b1c2d3e4f\",\"groups\":[\"system:serviceaccounts\","
    "\"system:serviceaccounts:kube-system\",\"system:authenticated\"]},"
    "\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
    "\"namespace\":\"bench\",%s},"
    "\"spec\":{\"containers\":[{\"name\":\"worker\",\"image\":\"nvcr.io/nvidia/pytorch:24.05-py3\","
    "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],\"restartPolicy\":\"Never\","
    "\"schedulerName\":\"default-scheduler\",\"terminationGracePeriodSeconds\":30,"
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]},\"status\":{}},"
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

typedef struct opts {
    const char *inventory, *kind, *db;
    int requests, rounds, memory;
} opts;

static int usage(void)
{
    fprintf(stderr, "usage: bench_admission --inventory FILE [--kind topology|podset64] "
                    "[--requests N] [--rounds R] [--db PATH | --memory]\n");
    return 2;
}

static int parse_args(opts *o, int argc, char **argv)
{
    *o = (opts){NULL, "topology", NULL, 20000, 5, 0};
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
        else if (strcmp(a, "--kind") == 0)
            o->kind = v;
        else if (strcmp(a, "--db") == 0)
            o->db = v;
        else if (strcmp(a, "--requests") == 0)
            o->requests = atoi(v);
        else if (strcmp(a, "--rounds") == 0)
            o->rounds = atoi(v);
        else
            return usage();
    }
    if (o->inventory == NULL || o->requests <= 0 || o->rounds <= 0 ||
        (strcmp(o->kind, "topology") != 0 && strcmp(o->kind, "podset64") != 0))
        return usage();
    return 0;
}

/* Request n (0-based, across rounds) of the kind as an AdmissionReview. */
static char *make_body(const opts *o, unsigned n)
{
    char name[64], meta[1024];
    if (strcmp(o->kind, "topology") == 0) {
        snprintf(name, sizeof name, "bench-%u", n);
        snprintf(meta, sizeof meta, "\"annotations\":{\"kueue.x-k8s.io/podset-required-topology\":"
                                    "\"topology.topo.io/rack\"}");
    } else {
        char job[48], uid[48];
        unsigned j = n / 64;
        int index = (int)(n % 64);
        snprintf(job, sizeof job, "slots-j%u", j);
        snprintf(uid, sizeof uid, "00000001-0000-4000-9000-%012x", j);
        snprintf(name, sizeof name, "%s-%d", job, index);
        snprintf(meta, sizeof meta, job_meta_fmt, uid, job, index, uid, job, index, job, uid);
    }
    size_t size = sizeof review_fmt + 2 * strlen(name) + strlen(meta) + 32;
    char *body = malloc(size);
    if (body != NULL)
        snprintf(body, size, review_fmt, 1u, n, name, name, meta);
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

static int load_live(topo_live **out, const char *path, topo_err *err)
{
    topo_inventory *inv = NULL;
    topo_snapshot_opts so = {"default", levels, 3, NULL, 0};
    int rc = topo_inventory_create(&inv, err);
    if (rc == 0)
        rc = topo_inventory_load_nodes_file(inv, path, err);
    if (rc == 0)
        rc = topo_live_create(out, &so, err);
    for (size_t i = 0; rc == 0 && i < topo_inventory_node_count(inv); i++)
        rc = topo_live_upsert_node(*out, topo_inventory_node(inv, i), err);
    if (rc == 0)
        rc = topo_live_commit(*out, err);
    topo_inventory_free(inv);
    return rc;
}

/* One round of o->requests from request number first: CPU per request and
 * the latency percentiles (µs) on stdout; 0, or -1 when an answer did not
 * place its pod. */
static int run_round(topo_admission_ctx *ctx, const opts *o, int round, unsigned first)
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
        /* placed: a patch whose first operation sets the nodeSelector */
        if (rc != 0 || status != 200 || out == NULL ||
            strstr(out, "\"patch\":\"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvbm9kZVNlbGVjdG9y") ==
                NULL) {
            fprintf(stderr, "bench_admission: request %zu not placed: %.300s\n", i,
                    out ? out : "(no answer)");
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
               round, o->kind, n, (double)cpu / 1e3 / (double)n, (double)json / 1e3 / (double)n,
               (double)lat[n / 2] / 1e3, (double)lat[n * 99 / 100] / 1e3,
               (double)lat[n - 1] / 1e3);
    }
    for (size_t i = 0; bodies != NULL && i < n; i++)
        free(bodies[i]);
    free(bodies);
    free(lat);
    return bad ? -1 : 0;
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
    topo_live *live = NULL;
    topo_cache *cache = NULL, *checkpointer = NULL;
    topo_admission_ctx *ctx = NULL;
    topo_cache_opts co = {.manual_checkpoint = 1};
    int rc = load_live(&live, o.inventory, &err);
    if (rc == 0)
        rc = topo_cache_open(&cache, o.memory ? ":memory:" : db, &co, &err);
    if (rc == 0 && !o.memory)
        rc = topo_cache_open(&checkpointer, db, &co, &err);
    if (rc == 0) {
        topo_admission_topology t = {"default", levels, 3, NULL, 0, TOPO_ADMISSION_POLICY_GATE,
                                     live, 0};
        topo_admission_opts ao = {0};
        ao.topologies = &t;
        ao.ntopologies = 1;
        ao.cache = cache;
        ao.default_policy = TOPO_ADMISSION_POLICY_GATE;
        ao.reservation_ttl_s = 600;
        ao.unclaimed_ttl_s = 120;
        rc = topo_admission_ctx_create(&ctx, &ao, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "bench_admission: %s\n", err.text);
    } else {
        printf("bench_admission: %s, reservations in %s\n", o.inventory,
               o.memory ? "memory" : db);
        for (int r = 0; rc == 0 && r < o.rounds; r++) {
            rc = run_round(ctx, &o, r, (unsigned)(r * o.requests));
            if (checkpointer != NULL && topo_cache_checkpoint(checkpointer, NULL, &err) < 0)
                fprintf(stderr, "bench_admission: checkpoint: %s\n", err.text);
        }
    }
    topo_admission_ctx_free(ctx);
    topo_cache_close(checkpointer);
    topo_cache_close(cache);
    topo_live_free(live);
    if (!o.memory && o.db == NULL)
        topo_test_remove_db(db);
    return rc == 0 ? 0 : 1;
}
