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
#include "topo/admission.h"
#include "topo/array.h"
#include "topo/k8s.h"

#define CMD "release"
/* Writes of one pod: a 409 or 422 (the pod changed since it was read) reads
 * it again and rebuilds the patch, this many times in all. */
#define RELEASE_ATTEMPTS 5
/* Lists restarted after their continue token expired (410) half-way. */
#define RELEASE_LIST_TRIES 3
/* Each request's timeout: a hook Job's deadline bounds the whole run. */
#define RELEASE_TIMEOUT_MS 10000L
/* Exit status when some gated pod could not be released. */
#define RELEASE_EXIT_NOT_RELEASED 1

typedef struct release_args {
    const char *namespace_, *kubeconfig, *context;
    int all_namespaces, dry_run;
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
    {"--kubeconfig", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL,
     TOPO_K8S_CONFIG_DEFAULT_HELP, "the cluster's kubeconfig", O(kubeconfig),
     NULL},
    {"--context", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, "its current-context",
     "the kubeconfig's context", O(context), NULL},
};

const topo_cli_command topo_cli_release = {
    CMD,
    "remove topo's gate from every pod still waiting under it: released unplaced",
    "usage: topoassign release (--namespace NS | --all-namespaces) [--dry-run]\n"
    "                          [--kubeconfig FILE] [--context NAME]\n"
    "       kubectl topo release (-n NS | -A) [--dry-run] [--kubeconfig FILE] [--context NAME]",
    "Finds every pod still gated by topo-webhook (scheduling gate " TOPO_ADMISSION_WAIT_GATE
    ", listed page by page) and removes that gate and the gate's annotations ("
    TOPO_ADMISSION_WAIT_REASON_ANNOTATION ", " TOPO_ADMISSION_PODSET_ANNOTATION ") with a "
    "JSON patch that tests the pod's uid and the gate's position first: other gates, in their "
    "order, and everything else of the pod stay. A pod that changed meanwhile is read again "
    "and retried (" TOPO_OPT_DEFAULT(RELEASE_ATTEMPTS) " attempts). The pods are released "
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
    topo_cli_cmd_release,
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

static int collect(json_t *item, void *payload)
{
    gated *g = payload;
    if (!topo_admission_pod_json_gated(item))
        return 0;
    if (topo_array_reserve((void **)&g->v, &g->cap, g->n + 1, sizeof(*g->v)) != 0)
        return TOPO_ENOMEM;
    g->v[g->n++] = json_incref(item);
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

/* The gates other than topo's, "a, b", into buf ("" when none). */
static void other_gates(char *buf, size_t size, const json_t *pod)
{
    const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
    size_t i, len = 0;
    const json_t *g;
    buf[0] = '\0';
    json_array_foreach(gates, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (name == NULL || strcmp(name, TOPO_ADMISSION_WAIT_GATE) == 0 || len >= size)
            continue;
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", name);
    }
}

typedef enum outcome {
    RELEASED,
    ALREADY, /* the gate had gone when the pod was read again */
    GONE,    /* the pod was deleted meanwhile */
    FAILED,
} outcome;

/* Releases one pod, listed as pod: the patch built from what was read,
 * sent; a 409 or 422 (the pod changed) reads it again and builds anew.
 * *out_pod: the pod as last read (a new reference, for the message). */
static outcome release_one(json_t **out_pod, topo_k8s *k, json_t *pod, topo_err *err)
{
    const char *ns = meta(pod, "namespace"), *name = meta(pod, "name");
    json_t *cur = json_incref(pod), *patch = NULL;
    outcome out = FAILED;
    int rc = 0;

    for (int attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt++) {
        if ((rc = topo_admission_release_patch(&patch, cur, err)) < 0)
            goto done;
        if (patch == NULL) {
            out = ALREADY;
            goto done;
        }
        rc = topo_k8s_patch(NULL, k, &topo_k8s_pods, ns, name, TOPO_K8S_JSON_PATCH, patch, NULL,
                            err);
        json_decref(patch);
        patch = NULL;
        if (rc == 0) {
            out = RELEASED;
            goto done;
        }
        if (rc == TOPO_ENOTFOUND) {
            out = GONE;
            goto done;
        }
        if (rc != TOPO_ECONFLICT && rc != TOPO_EINVALID)
            goto done;
        /* It changed since it was read: read it again. */
        json_t *fresh = NULL;
        rc = topo_k8s_get(&fresh, k, &topo_k8s_pods, ns, name, err);
        if (rc == TOPO_ENOTFOUND) {
            out = GONE;
            goto done;
        }
        if (rc < 0)
            goto done;
        json_decref(cur);
        cur = fresh;
    }
    topo_err_wrap(err, "still changing after " TOPO_OPT_DEFAULT(RELEASE_ATTEMPTS) " attempts");
done:
    *out_pod = cur;
    return out;
}

static int load_client(topo_k8s **out, const release_args *f, topo_err *err)
{
    topo_k8s_config cfg = {0};
    topo_k8s_opts ko = {.timeout_ms = RELEASE_TIMEOUT_MS, .user_agent = "topoassign-release"};
    int rc = topo_k8s_config_load_context(&cfg, f->kubeconfig, f->context, err);
    if (rc == 0)
        rc = topo_k8s_create(out, &cfg, &ko, err);
    topo_k8s_config_dispose(&cfg);
    return rc;
}

int topo_cli_cmd_release(int argc, char **argv)
{
    release_args f;
    topo_err err = TOPO_ERR_INIT;
    topo_k8s *k = NULL;
    gated g = {NULL, 0, 0};
    size_t released = 0, already = 0, gone = 0, failed = 0;
    char others[512];
    int rc;

    memset(&f, 0, sizeof(f));
    if ((rc = topo_cli_parse(&topo_cli_release, argc, argv, &f)) >= 0)
        goto cleanup;
    rc = TOPO_CLI_EXIT_BADINPUT;
    if ((f.namespace_ != NULL) == (f.all_namespaces != 0)) {
        topo_err_set(&err, TOPO_EINVALID,
                     "give one of --namespace NS and --all-namespaces (see '%s " CMD " --help')",
                     topo_cli_program());
        goto fail;
    }
    if (load_client(&k, &f, &err) < 0 || list_gated(&g, k, f.namespace_, &err) < 0)
        goto fail;
    for (size_t i = 0; i < g.n; i++) {
        const json_t *pod = g.v[i];
        const char *ns = meta(pod, "namespace"), *name = meta(pod, "name");
        if (f.dry_run) {
            other_gates(others, sizeof others, pod);
            printf("%s/%s: would be released unplaced%s%s%s\n", ns, name,
                   others[0] ? " (still gated by " : "", others, others[0] ? ")" : "");
            released++;
            continue;
        }
        topo_err perr = TOPO_ERR_INIT;
        json_t *last = NULL;
        switch (release_one(&last, k, g.v[i], &perr)) {
        case RELEASED:
            other_gates(others, sizeof others, last);
            printf("%s/%s: released unplaced%s%s%s\n", ns, name,
                   others[0] ? " (still gated by " : "", others, others[0] ? ")" : "");
            released++;
            break;
        case ALREADY:
            printf("%s/%s: already released\n", ns, name);
            already++;
            break;
        case GONE:
            printf("%s/%s: gone\n", ns, name);
            gone++;
            break;
        case FAILED:
            printf("%s/%s: NOT released: %s\n", ns, name, perr.text);
            failed++;
            break;
        }
        json_decref(last);
    }
    if (f.dry_run)
        printf("%zu pod(s) would be released unplaced (dry run: nothing changed)\n", released);
    else
        printf("%zu pod(s) released unplaced, %zu already released, %zu gone, %zu not "
               "released\n",
               released, already, gone, failed);
    rc = fflush(stdout) != 0 ? TOPO_CLI_EXIT_BADINPUT
         : failed > 0        ? RELEASE_EXIT_NOT_RELEASED
                             : TOPO_CLI_EXIT_OK;
    goto cleanup;
fail:
    topo_cli_error(CMD, &err);
cleanup:
    gated_clear(&g);
    free(g.v);
    topo_k8s_free(k);
    topo_opts_free(table, sizeof table / sizeof table[0], &f);
    return rc;
}
