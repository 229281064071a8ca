/* A driver over topo-sync's label writer (topo/labelwriter.h), for
 * labels_e2e.py against fake_apiserver.py: lists the nodes itself, then
 * brings each to the plan of a file, as the controller's round would.
 *
 *   topo-labels-driver --kubeconfig FILE --plan FILE
 *       [--qps Q] [--burst B] [--retries N] [--max-attempts N]
 *       [--prefix P]... [--owned-key K]... [--topograph 1]
 *       [--record-key K | --no-record 1]
 *       [--no-events 1] [--initial-events 1] [--dry-run 1] [--instance I]
 *       [--pause-after-list 1]
 *
 * The plan file: {"<node>": {"labels": {K: V}, "annotations": {K: V|null}}
 * or null}. A node in it with an object is authoritative; null, or a node
 * the file does not name, is not (held). Default owned prefix:
 * topology.topo.io/.
 *
 * Prints "listed N" after the list (with --pause-after-list it then waits
 * for a line on stdin), "<outcome> <node>" for each node not converged
 * ("failed <node> <TOPO_CODE>" for a failure), and last "stats {...}" (the
 * writer's counters, list and apply wall and CPU times in ms). Exit 0, 1
 * when some write failed, 2 for bad usage or input. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/codec.h"
#include "topo/k8s.h"
#include "topo/labelwriter.h"
#include "topo/log.h"

#define MAX_OWNED 8

typedef struct opts {
    const char *kubeconfig, *plan, *record_key, *instance;
    const char *prefixes[MAX_OWNED];
    size_t nprefixes;
    const char *keys[MAX_OWNED];
    size_t nkeys;
    int topograph;
    int pause;
    topo_k8s_opts ko;
    topo_labelwriter_opts wo;
} opts;

static double ms_since(clockid_t clk, const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Keeps what the writer reads of each node (metadata name, uid, labels,
 * annotations), as a controller keeps its node view small. */
static int keep_node(json_t *item, void *payload)
{
    json_t *nodes = payload;
    json_t *md = json_object_get(item, "metadata");
    json_t *small = json_object();
    json_t *smd = json_object();
    if (small == NULL || smd == NULL || json_object_set_new(small, "metadata", smd) < 0) {
        json_decref(small);
        return TOPO_ENOMEM;
    }
    const char *fields[] = {"name", "uid", "labels", "annotations"};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get(md, fields[i]);
        if (v != NULL && json_object_set(smd, fields[i], v) < 0) {
            json_decref(small);
            return TOPO_ENOMEM;
        }
    }
    return json_array_append_new(nodes, small) < 0 ? TOPO_ENOMEM : 0;
}

/* The kv pairs of a JSON object of strings (null values kept as NULL). */
static int kvs(topo_kv *out, size_t *n, const json_t *obj, const char *what)
{
    const char *key;
    const json_t *v;
    *n = 0;
    json_object_foreach((json_t *)obj, key, v) {
        if (*n >= TOPO_LABELDIFF_MAX_KEYS + 1 || !(json_is_string(v) || json_is_null(v))) {
            fprintf(stderr, "plan: %s: bad entry %s\n", what, key);
            return -1;
        }
        out[(*n)++] = (topo_kv){key, json_string_value(v)};
    }
    return 0;
}

static int run(const opts *o, topo_k8s *k, const json_t *plan)
{
    topo_labelwriter *w = NULL;
    topo_err err = TOPO_ERR_INIT;
    json_t *nodes = json_array();
    char rv[TOPO_K8S_RV_MAX];
    struct timespec t0, c0;
    int rc = 0, failed = 0;
    topo_kv labels[TOPO_LABELDIFF_MAX_KEYS + 1], ann[TOPO_LABELDIFF_MAX_KEYS + 1];
    topo_labeldiff_owned owned = {o->prefixes, o->nprefixes, o->keys, o->nkeys, o->topograph};

    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (nodes == NULL || (rc = topo_k8s_list(rv, k, &topo_k8s_nodes, NULL, NULL, keep_node,
                                             nodes, &err)) < 0) {
        printf("error %s: %s\n", topo_err_name(rc), err.text);
        rc = 1;
        goto cleanup;
    }
    double list_ms = ms_since(CLOCK_MONOTONIC, &t0);
    double list_cpu = ms_since(CLOCK_PROCESS_CPUTIME_ID, &c0);
    printf("listed %zu\n", json_array_size(nodes));
    fflush(stdout);
    if (o->pause) {
        char line[64];
        if (fgets(line, sizeof line, stdin) == NULL)
            line[0] = '\0';
    }
    if ((rc = topo_labelwriter_create(&w, k, &o->wo, &err)) < 0) {
        printf("error %s: %s\n", topo_err_name(rc), err.text);
        rc = 2;
        goto cleanup;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node) {
        const char *name = json_string_value(json_object_get(json_object_get(node, "metadata"),
                                                             "name"));
        const json_t *p = json_object_get(plan, name != NULL ? name : "");
        topo_labeldiff_input in = {&owned, json_is_object(p), labels, 0, ann, 0,
                                   o->record_key, 0};
        if (json_is_object(p) &&
            (kvs(labels, &in.nlabels, json_object_get(p, "labels"), name) < 0 ||
             kvs(ann, &in.nannotations, json_object_get(p, "annotations"), name) < 0)) {
            rc = 2;
            goto cleanup;
        }
        topo_labelwriter_outcome out;
        topo_err e = TOPO_ERR_INIT;
        int r = topo_labelwriter_apply(w, &in, node, &out, &e);
        if (r < 0) {
            failed = 1;
            printf("failed %s %s %s\n", name, topo_err_name(r), e.text);
        } else if (out != TOPO_LABELWRITER_CONVERGED) {
            printf("%s %s\n", topo_labelwriter_outcome_name(out), name);
        }
    }
    topo_labelwriter_stats st;
    topo_labelwriter_get_stats(w, &st);
    printf("stats {\"nodes\": %llu, \"converged\": %llu, \"held\": %llu, \"patches_sent\": %llu,"
           " \"patches_failed\": %llu, \"conflicts\": %llu, \"nodes_gone\": %llu,"
           " \"dry_run\": %llu, \"drift_nodes\": %llu, \"drift_labels\": %llu,"
           " \"labels_set\": %llu, \"labels_removed\": %llu, \"events_created\": %llu,"
           " \"events_failed\": %llu, \"invalid\": %llu, \"list_ms\": %.1f,"
           " \"list_cpu_ms\": %.1f, \"apply_ms\": %.1f, \"apply_cpu_ms\": %.1f}\n",
           (unsigned long long)st.nodes, (unsigned long long)st.converged,
           (unsigned long long)st.held, (unsigned long long)st.patches_sent,
           (unsigned long long)st.patches_failed, (unsigned long long)st.conflicts,
           (unsigned long long)st.nodes_gone, (unsigned long long)st.dry_run,
           (unsigned long long)st.drift_nodes, (unsigned long long)st.drift_labels,
           (unsigned long long)st.labels_set, (unsigned long long)st.labels_removed,
           (unsigned long long)st.events_created, (unsigned long long)st.events_failed,
           (unsigned long long)st.invalid, list_ms, list_cpu,
           ms_since(CLOCK_MONOTONIC, &t0), ms_since(CLOCK_PROCESS_CPUTIME_ID, &c0));
    rc = failed;
cleanup:
    fflush(stdout);
    topo_labelwriter_free(w);
    json_decref(nodes);
    return rc;
}

static int parse_args(opts *o, int argc, char **argv)
{
    o->record_key = TOPO_LABELDIFF_RECORD_KEY_DEFAULT;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return -1;
        if (strcmp(a, "--kubeconfig") == 0)
            o->kubeconfig = v;
        else if (strcmp(a, "--plan") == 0)
            o->plan = v;
        else if (strcmp(a, "--qps") == 0)
            o->ko.qps = strtod(v, NULL);
        else if (strcmp(a, "--burst") == 0)
            o->ko.burst = strtod(v, NULL);
        else if (strcmp(a, "--retries") == 0)
            o->ko.max_retries = atoi(v);
        else if (strcmp(a, "--max-attempts") == 0)
            o->wo.max_attempts = atoi(v);
        else if (strcmp(a, "--prefix") == 0 && o->nprefixes < MAX_OWNED)
            o->prefixes[o->nprefixes++] = v;
        else if (strcmp(a, "--owned-key") == 0 && o->nkeys < MAX_OWNED)
            o->keys[o->nkeys++] = v;
        else if (strcmp(a, "--topograph") == 0)
            o->topograph = atoi(v);
        else if (strcmp(a, "--record-key") == 0)
            o->record_key = v;
        else if (strcmp(a, "--no-record") == 0)
            o->record_key = NULL;
        else if (strcmp(a, "--no-events") == 0)
            o->wo.no_events = atoi(v);
        else if (strcmp(a, "--initial-events") == 0)
            o->wo.initial_events = atoi(v);
        else if (strcmp(a, "--dry-run") == 0)
            o->wo.dry_run = atoi(v);
        else if (strcmp(a, "--instance") == 0)
            o->wo.instance = v;
        else if (strcmp(a, "--pause-after-list") == 0)
            o->pause = atoi(v);
        else
            return -1;
    }
    if (o->nprefixes == 0)
        o->prefixes[o->nprefixes++] = "topology.topo.io/";
    return o->kubeconfig != NULL && o->plan != NULL ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts o = {0};
    topo_k8s_config cfg = {0};
    topo_k8s *k = NULL;
    json_t *plan = NULL;
    topo_err err = TOPO_ERR_INIT;
    int rc = 2;

    topo_log_set_level(getenv("TOPO_DRIVER_DEBUG") != NULL ? TOPO_LOG_DEBUG : TOPO_LOG_INFO);
    if (parse_args(&o, argc, argv) < 0) {
        fprintf(stderr, "usage: see the comment at the top of labels_driver.c\n");
        return 2;
    }
    if (topo_codec_load_file(&plan, o.plan, 256u << 20, &err) < 0 || !json_is_object(plan)) {
        fprintf(stderr, "plan: %s\n", err.text[0] ? err.text : "not an object");
        goto cleanup;
    }
    if ((rc = topo_k8s_config_kubeconfig(&cfg, o.kubeconfig, NULL, &err)) < 0 ||
        (rc = topo_k8s_create(&k, &cfg, &o.ko, &err)) < 0) {
        fprintf(stderr, "error %s: %s\n", topo_err_name(rc), err.text);
        rc = 2;
        goto cleanup;
    }
    rc = run(&o, k, plan);
cleanup:
    topo_k8s_free(k);
    topo_k8s_config_dispose(&cfg);
    json_decref(plan);
    return rc;
}
