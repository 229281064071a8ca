/* topoassign release (kubectl topo release): removes topo's scheduling gate
 * from every pod still waiting under it, so that no pod stays gated for ever
 * once topo-webhook is gone (the chart's pre-delete hook runs it; an
 * operator runs it by hand after `helm uninstall --no-hooks`). Only topo's
 * gate and the gate's own annotations go (topo_admission_release_patch: the
 * ungater's operations behind a test of the pod's uid); other gates and
 * everything else of the pod stay. The pods are released unplaced: nothing
 * gives them a topology nodeSelector any more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_common.h"
#include "commands.h"
#include "release_pods.h"
#include "topo/admission.h"
#include "topo/array.h"
#include "topo/k8s.h"

#define CMD "release"
/* Lists restarted after their continue token expired (410) half-way. */
#define RELEASE_LIST_TRIES 3
/* Each request's timeout: a hook Job's deadline bounds the whole run. */
#define RELEASE_TIMEOUT_MS 10000L
/* Exit status when some gated pod could not be released. */
#define RELEASE_EXIT_NOT_RELEASED 1
/* Patches in flight, and requests per second of them all: an admin tool's
 * bulk write, not a controller's steady trickle (kubectl's 5-50 QPS would
 * take 10 to 100 minutes for 30,000 pods). 16 in flight keep ~10 ms
 * patches at the rate limit; 200/s releases 30,000 pods in 150 s, inside
 * the hook's default deadline, while API Priority and Fairness still
 * queues (429, retried) a server that cannot take it. */
#define RELEASE_CONCURRENCY_DEFAULT 16
#define RELEASE_QPS_DEFAULT 200
/* "(still gated by a, b, ..., and N more)": the names listed up to this
 * many bytes. */
#define RELEASE_GATES_TEXT 400

typedef struct release_args {
    const char *namespace_, *kubeconfig, *context;
    int all_namespaces, dry_run;
    unsigned long concurrency; /* the table's defaults */
    double qps;
} release_args;

#define O(field) offsetof(release_args, field)

static const topo_opt table[] = {
    {"--namespace", "-n", TOPO_OPT_STRING, "NS", 0, 0, NULL, NULL,
     "the pods of this namespace only", O(namespace_), "Options:"},
    {"--all-namespaces", "-A", TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "the pods of every namespace (one of --namespace and --all-namespaces is required)",
     O(all_namespaces), NULL},
    {"--dry-run", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "list the pods that would be released; change nothing", O(dry_run), NULL},
    {"--concurrency", NULL, TOPO_OPT_UINT, "N", 1, 256, NULL,
     TOPO_OPT_DEFAULT(RELEASE_CONCURRENCY_DEFAULT),
     "patches in flight at most (one API connection each)", O(concurrency), NULL},
    {"--qps", NULL, TOPO_OPT_POSITIVE, "Q", 0, 100000, NULL,
     TOPO_OPT_DEFAULT(RELEASE_QPS_DEFAULT),
     "requests per second of them all (a burst of one second's worth)", O(qps), NULL},
    TOPO_CLI_KUBECONFIG_ROWS("the cluster's kubeconfig", kubeconfig, context),
};

const cli_command cli_release = {
    CMD,
    "remove topo's gate from every pod still waiting under it: released unplaced",
    "usage: topoassign release (--namespace NS | --all-namespaces) [--dry-run]\n"
    "                          [--concurrency N] [--qps Q] [--kubeconfig FILE] [--context NAME]\n"
    "       kubectl topo release (-n NS | -A) [--dry-run] [--concurrency N] [--qps Q]\n"
    "                            [--kubeconfig FILE] [--context NAME]",
    "Finds every pod still gated by topo-webhook (scheduling gate " TOPO_ADMISSION_WAIT_GATE
    ", listed page by page) and removes that gate and the gate's annotations ("
    TOPO_ADMISSION_WAIT_REASON_ANNOTATION ", " TOPO_ADMISSION_PODSET_ANNOTATION ") with a "
    "JSON patch that tests the pod's uid and the gate's position first: other gates, in their "
    "order, and everything else of the pod stay. A pod that changed meanwhile is read again "
    "and retried; a 429 or 5xx is retried with backoff, after Retry-After when the server "
    "sends one. --concurrency patches are in flight at once, --qps requests per second in all "
    "(30,000 pods take about 150 s at the defaults). The pods are released "
    "UNPLACED: they get no topology nodeSelector, and the scheduler puts them anywhere they "
    "fit (delete them instead to keep them off the cluster). topo-webhook gates new pods "
    "as long as it is installed: the chart's delete hooks run it before and after helm "
    "uninstall removes the webhook; after helm uninstall --no-hooks run kubectl topo release "
    "--all-namespaces. It reads the "
    "cluster through the kubeconfig, or in a pod its service account (pods: list, get, "
    "patch). Prints one line per pod and a summary. Exit status: 0 every gated pod released "
    "(or none found), 1 some could not be released, 2 bad input or the pods could not be "
    "listed.",
    table,
    sizeof table / sizeof table[0],
    cli_cmd_release,
};

/* The gated pods of the list (new references), in the list's order. */
typedef struct gated {
    json_t **v;
    size_t n, cap;
} gated;

static void gated_clear(gated *g)
{
    for (size_t i = 0; i < g->n; i++)
        json_decref(g->v[i]);
    g->n = 0;
}

/* What the release of a listed pod reads (topo_admission_release_patch, the
 * output): its name, namespace, uid, annotations and scheduling gates. The
 * rest of a pod (containers, managedFields, status) stays out: 30,000 whole
 * pods took 300 MB, over the hook's memory limit. A new reference. */
static json_t *slim(const json_t *pod)
{
    const json_t *md = json_object_get(pod, "metadata"), *v;
    json_t *out = json_object(), *m = json_object(), *spec = json_object();
    static const char *const keep[] = {"name", "namespace", "uid", "annotations"};

    if (out == NULL || m == NULL || spec == NULL || json_object_set_new(out, "metadata", m) < 0)
        goto oom;
    m = NULL;
    if (json_object_set_new(out, "spec", spec) < 0)
        goto oom;
    spec = NULL;
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        if ((v = json_object_get(md, keep[i])) != NULL &&
            json_object_set(json_object_get(out, "metadata"), keep[i], (json_t *)v) < 0)
            goto oom;
    }
    v = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    if (v != NULL && json_object_set(json_object_get(out, "spec"), "schedulingGates",
                                     (json_t *)v) < 0)
        goto oom;
    return out;
oom:
    json_decref(m);
    json_decref(spec);
    json_decref(out);
    return NULL;
}

static int collect(json_t *item, void *payload)
{
    gated *g = payload;
    json_t *pod;
    if (!topo_admission_pod_json_gated(item))
        return 0;
    if (topo_array_reserve((void **)&g->v, &g->cap, g->n + 1, sizeof(*g->v)) != 0 ||
        (pod = slim(item)) == NULL)
        return TOPO_ENOMEM;
    g->v[g->n++] = pod;
    return 0;
}

/* Every pod carrying the gate. A gated pod is never bound (the API server
 * refuses to bind it), so the unbound ones are all that is listed. */
static int list_gated(gated *out, topo_k8s *k, const char *ns, topo_err *err)
{
    topo_k8s_list_opts lo = {.field_selector = "spec.nodeName="};
    int rc = TOPO_EGONE;
    for (int tries = 0; rc == TOPO_EGONE && tries < RELEASE_LIST_TRIES; tries++) {
        gated_clear(out);
        rc = topo_k8s_list(NULL, k, &topo_k8s_pods, ns, &lo, collect, out, err);
    }
    if (rc == TOPO_ENOMEM)
        return topo_err_nomem(err, "listing pods");
    return rc < 0 ? topo_err_wrap(err, "listing pods") : 0;
}

static const char *meta(const json_t *pod, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(pod, "metadata"), key));
    return s != NULL ? s : "";
}

/* " (still gated by a, b)" for the gates other than topo's, into buf (""
 * when none); past RELEASE_GATES_TEXT bytes of names the rest is counted,
 * not cut silently: " (still gated by a, b, and 7 more)". */
static void other_gates(char *buf, size_t size, const json_t *pod)
{
    const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    size_t i, len = 0, listed = 0, more = 0;
    const json_t *g;
    char names[RELEASE_GATES_TEXT + 1];

    names[0] = buf[0] = '\0';
    json_array_foreach(gates, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name == NULL || strcmp(name, TOPO_ADMISSION_WAIT_GATE) == 0)
            continue;
        size_t need = strlen(name) + (listed > 0 ? 2 : 0);
        if (more > 0 || len + need > RELEASE_GATES_TEXT) {
            more++;
            continue;
        }
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", listed > 0 ? ", " : "",
                                name);
        listed++;
    }
    if (listed == 0 && more == 0)
        return;
    if (more == 0)
        snprintf(buf, size, " (still gated by %s)", names);
    else if (listed == 0)
        snprintf(buf, size, " (still gated by %zu gates)", more);
    else
        snprintf(buf, size, " (still gated by %s, and %zu more)", names, more);
}

/* The counts of the summary, kept by report (serialized by cli_release_pods). */
typedef struct tally {
    size_t released, already, gone, failed;
} tally;

static void report(size_t i, cli_release_outcome outcome, const json_t *pod, const topo_err *err,
                   void *payload)
{
    tally *t = payload;
    char others[RELEASE_GATES_TEXT + 64];
    const char *ns = meta(pod, "namespace"), *name = meta(pod, "name");
    (void)i;
    switch (outcome) {
    case RELEASE_RELEASED:
        other_gates(others, sizeof others, pod);
        printf("%s/%s: released unplaced%s\n", ns, name, others);
        t->released++;
        break;
    case RELEASE_ALREADY:
        printf("%s/%s: already released\n", ns, name);
        t->already++;
        break;
    case RELEASE_GONE:
        printf("%s/%s: gone\n", ns, name);
        t->gone++;
        break;
    case RELEASE_FAILED:
        printf("%s/%s: NOT released: %s\n", ns, name, err->text);
        t->failed++;
        break;
    }
}

int cli_cmd_release(int argc, char **argv)
{
    release_args f;
    topo_err err = TOPO_ERR_INIT;
    topo_k8s_config cfg = {0};
    topo_k8s *k = NULL;
    gated g = {NULL, 0, 0};
    tally t = {0, 0, 0, 0};
    char others[RELEASE_GATES_TEXT + 64];
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = cli_parse(&cli_release, argc, argv, &f)) >= 0)
        goto cleanup;
    rc = TOPO_CLI_EXIT_BADINPUT;
    if ((f.namespace_ != NULL) == (f.all_namespaces != 0)) {
        topo_err_set(&err, TOPO_EINVALID,
                     "give one of --namespace NS and --all-namespaces (see '%s " CMD " --help')",
                     cli_program());
        goto fail;
    }
    cli_release_pods_opts ro = {
        .workers = (unsigned)f.concurrency,
        .qps = f.qps,
        .timeout_ms = RELEASE_TIMEOUT_MS,
        .user_agent = "topoassign-release"};
    ro.burst = ro.qps;
    topo_k8s_opts ko = {.qps = ro.qps, .burst = ro.burst, .timeout_ms = ro.timeout_ms,
                        .user_agent = ro.user_agent};
    if (topo_k8s_config_load_context(&cfg, f.kubeconfig, f.context, &err) < 0 ||
        topo_k8s_create(&k, &cfg, &ko, &err) < 0 || list_gated(&g, k, f.namespace_, &err) < 0)
        goto fail;
    if (f.dry_run) {
        for (size_t i = 0; i < g.n; i++) {
            other_gates(others, sizeof others, g.v[i]);
            printf("%s/%s: would be released unplaced%s\n", meta(g.v[i], "namespace"),
                   meta(g.v[i], "name"), others);
        }
        printf("%zu pod(s) would be released unplaced (dry run: nothing changed)\n", g.n);
    } else {
        topo_k8s_free(k); /* the workers have their own */
        k = NULL;
        if (cli_release_pods(g.v, g.n, &cfg, &ro, report, &t, &err) < 0)
            goto fail;
        printf("%zu pod(s) released unplaced, %zu already released, %zu gone, %zu not "
               "released\n",
               t.released, t.already, t.gone, t.failed);
    }
    rc = fflush(stdout) != 0 ? TOPO_CLI_EXIT_BADINPUT
         : t.failed > 0      ? RELEASE_EXIT_NOT_RELEASED
                             : TOPO_CLI_EXIT_OK;
    goto cleanup;
fail:
    cli_error(CMD, &err);
cleanup:
    for (size_t i = 0; i < g.n; i++)
        json_decref(g.v[i]);
    free(g.v);
    topo_k8s_free(k);
    topo_k8s_config_dispose(&cfg);
    topo_opts_free(table, sizeof table / sizeof table[0], &f);
    return rc;
}
