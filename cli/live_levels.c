/* The levels of the live cluster when `kubectl topo` is given no --levels:
 * topo-webhook's configuration as the chart installs it, else Kueue's
 * Topology objects, else an error saying what was tried. Read through the
 * same configuration as the Nodes and Pods; parsed by the webhook's own
 * reader (lib/admission/config.c) and Kueue's (lib/kueue/topology.c).
 *
 * Which ConfigMap is the webhook's: anyone who may create a ConfigMap in
 * some namespace can give it the chart's labels. The trust anchor is the
 * MutatingWebhookConfiguration (cluster-scoped: only cluster admins write
 * it) whose webhook WEBHOOK_NAME calls a Service: that Service's namespace
 * and the configuration's release (its instance label) name the real
 * install, whose ConfigMap is read (strictly: one the webhook would refuse
 * is an error). A user who may not read those configurations gets the
 * label search in every namespace, leniently: a ConfigMap that does not
 * parse is skipped with a warning, several that differ are an error
 * listing them. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "topo/admission_config.h"
#include "topo/kueue.h"
#include "topo/array.h"
#include "topo/buf.h"
#include "topo/k8s.h"
#include "topo/kueue_topology.h"
#include "topo/labelsyntax.h"

/* What charts/topo puts on the webhook's ConfigMap
 * (templates/webhook-configmap.yaml, "topo.componentLabels"): part-of is
 * fixed whatever the release name or nameOverride, and component tells the
 * webhook's ConfigMap from topo-sync's. */
#define WEBHOOK_CONFIGMAP_SELECTOR \
    "app.kubernetes.io/part-of=topo,app.kubernetes.io/component=webhook"
/* The chart's webhook (templates/webhook-mutatingwebhookconfiguration.yaml)
 * and the label naming its release. */
#define WEBHOOK_NAME "pods.topology.topo.io"
#define INSTANCE_LABEL "app.kubernetes.io/instance"
/* The key holding topo-webhook's --config file. */
#define WEBHOOK_CONFIG_KEY "config.yaml"
/* Candidates named in an "ambiguous" message before "...". */
#define LEVELS_LIST_MAX 16
/* The one-shot client's bounds, as the one-shot list of Nodes and Pods
 * (lib/filler, once): an answer within seconds, or an error. */
#define LEVELS_TIMEOUT_MS 10000
#define LEVELS_BACKOFF_MAX_MS 1000

/* Kueue's Topology, newest version first: Kueue 0.15 serves v1beta2 (and
 * v1beta1), older releases v1beta1 only. */
static const topo_k8s_resource kueue_topologies[] = {
    {"kueue.x-k8s.io", "v1beta2", "topologies", "Topology", 0},
    {"kueue.x-k8s.io", "v1beta1", "topologies", "Topology", 0},
};

static const topo_k8s_resource webhook_configurations = {
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration", 0};

/* An install a MutatingWebhookConfiguration names. */
typedef struct install {
    const char *ns;
    const char *release; /* its instance label, or NULL */
} install;

/* One topology the levels could come from. */
typedef struct candidate {
    const char *where;    /* "ConfigMap ns/name, topology \"t\"" or "Topology \"t\" (...)" */
    const char *topology; /* its name */
    const char **levels;
    size_t nlevels;
    const topo_kv *node_labels;
    size_t nnode_labels;
} candidate;

typedef struct search {
    const char *pick; /* --topology, or NULL */
    topo_pool *pool;
    topo_err *err;
    candidate *v;
    size_t n, cap;
    size_t configmaps; /* the webhook's ConfigMaps seen */
    size_t ignored;    /* lenient: ConfigMaps skipped (their config does not parse) */
    int lenient;       /* no trust anchor: the label search in every namespace */
    int failed;        /* a callback set err (the list's own error is elsewhere) */
    install *installs; /* what the MutatingWebhookConfigurations name */
    size_t ninstalls, capinstalls;
    json_t *topologies; /* Kueue's, as listed (an array) */
    const char *kueue_version;
} search;

/* A list's own failure (the callbacks' are in err already). */
static int copy_err(topo_err *err, const topo_err *from, int rc)
{
    if (err != NULL)
        *err = *from;
    return rc;
}

static int same_candidate(const candidate *a, const candidate *b)
{
    if (strcmp(a->topology, b->topology) != 0 || a->nlevels != b->nlevels ||
        a->nnode_labels != b->nnode_labels)
        return 0;
    for (size_t i = 0; i < a->nlevels; i++)
        if (strcmp(a->levels[i], b->levels[i]) != 0)
            return 0;
    for (size_t i = 0; i < a->nnode_labels; i++)
        if (strcmp(a->node_labels[i].key, b->node_labels[i].key) != 0 ||
            strcmp(a->node_labels[i].value, b->node_labels[i].value) != 0)
            return 0;
    return 1;
}

/* Adds c unless an equal one is there: two installations with the same
 * topology (a rollout side by side) answer the same. */
static int add_candidate(search *s, const candidate *c)
{
    for (size_t i = 0; i < s->n; i++)
        if (same_candidate(&s->v[i], c))
            return 0;
    int rc = topo_pool_array_reserve(s->pool, (void **)&s->v, &s->cap, s->n, s->n + 1,
                                     sizeof(*s->v));
    if (rc != 0)
        return topo_err_nomem(s->err, NULL);
    s->v[s->n++] = *c;
    return 0;
}

/* A topology of the webhook's configuration, copied into the pool (the
 * configuration is freed after the ConfigMap). */
static int add_webhook_topology(search *s, const char *where,
                                const topo_admission_topology_config *t)
{
    candidate c = {NULL, NULL, NULL, t->nlevels, NULL, t->nnode_labels};
    const char **levels = topo_pool_calloc(s->pool, t->nlevels, sizeof(*levels));
    topo_kv *labels = t->nnode_labels
                          ? topo_pool_calloc(s->pool, t->nnode_labels, sizeof(*labels))
                          : NULL;
    if (levels == NULL || (t->nnode_labels && labels == NULL) ||
        (c.topology = topo_pool_strdup(s->pool, t->name)) == NULL ||
        (c.where = topo_pool_printf(s->pool, "%s, topology \"%s\"", where, t->name)) == NULL)
        return topo_err_nomem(s->err, NULL);
    for (size_t i = 0; i < t->nlevels; i++)
        if ((levels[i] = topo_pool_strdup(s->pool, t->levels[i])) == NULL)
            return topo_err_nomem(s->err, NULL);
    for (size_t i = 0; i < t->nnode_labels; i++)
        if ((labels[i].key = topo_pool_strdup(s->pool, t->node_labels[i].key)) == NULL ||
            (labels[i].value = topo_pool_strdup(s->pool, t->node_labels[i].value)) == NULL)
            return topo_err_nomem(s->err, NULL);
    c.levels = levels;
    c.node_labels = labels;
    return add_candidate(s, &c);
}

/* One ConfigMap of the selector: its config.yaml parsed as topo-webhook
 * parses its --config (a ConfigMap the webhook would refuse is an error,
 * not a guess), each of its topologies a candidate (only --topology's when
 * given). A labelled ConfigMap without the key is not a webhook's. */
static int on_configmap(json_t *item, void *payload)
{
    search *s = payload;
    const json_t *md = json_object_get(item, "metadata");
    const json_t *text = json_object_get(json_object_get(item, "data"), WEBHOOK_CONFIG_KEY);
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    topo_admission_config *cfg = NULL;
    const char *where;
    int rc = 0;

    if (!json_is_string(text))
        return 0;
    s->configmaps++;
    if ((where = topo_pool_printf(s->pool, "ConfigMap %s/%s", ns ? ns : "", name ? name : "")) ==
        NULL)
        return topo_err_nomem(s->err, NULL);
    if ((rc = topo_admission_config_parse(&cfg, json_string_value(text), json_string_length(text),
                                          WEBHOOK_CONFIG_KEY, s->err)) < 0) {
        if (s->lenient && rc != TOPO_ENOMEM) {
            /* Anyone's ConfigMap may carry the labels: not a reason to fail,
             * whatever its text breaks (a syntax error, a nesting or size
             * limit: TOPO_ELIMIT). Only our own want of memory is. */
            cli_warn("ignoring %s (it has topo-webhook's labels but its %s does not "
                          "parse: %s)",
                          where, WEBHOOK_CONFIG_KEY, s->err != NULL ? s->err->text : "");
            topo_err_clear(s->err);
            s->ignored++;
            return 0;
        }
        topo_err_wrap(s->err, "%s", where);
        s->failed = 1;
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < topo_admission_config_topology_count(cfg); i++) {
        const topo_admission_topology_config *t = topo_admission_config_topology(cfg, i);
        if (s->pick == NULL || strcmp(s->pick, t->name) == 0)
            rc = add_webhook_topology(s, where, t);
    }
    topo_admission_config_free(cfg);
    s->failed = rc < 0;
    return rc;
}

static int on_topology(json_t *item, void *payload)
{
    search *s = payload;
    if (json_array_append(s->topologies, item) == 0)
        return 0;
    s->failed = 1;
    return topo_err_nomem(s->err, NULL);
}

/* "ConfigMap a/b, topology \"default\" (L1,L2)" per candidate. */
static void describe(topo_buf *b, const candidate *c)
{
    topo_buf_printf(b, "%s%s (", b->len ? "; " : "", c->where);
    for (size_t i = 0; i < c->nlevels; i++)
        topo_buf_printf(b, "%s%s", i ? "," : "", c->levels[i]);
    topo_buf_puts(b, ")");
}

/* Whether --topology NAME can choose among the candidates: some name
 * belongs to one of them only. */
static int pick_helps(const search *s)
{
    for (size_t i = 0; i < s->n; i++) {
        size_t same = 0;
        for (size_t j = 0; j < s->n; j++)
            same += strcmp(s->v[i].topology, s->v[j].topology) == 0;
        if (same == 1)
            return 1;
    }
    return 0;
}

static int ambiguous(const search *s, topo_err *err)
{
    topo_buf b = TOPO_BUF_INIT(0);
    for (size_t i = 0; i < s->n && i < LEVELS_LIST_MAX; i++)
        describe(&b, &s->v[i]);
    if (s->n > LEVELS_LIST_MAX)
        topo_buf_puts(&b, "; ...");
    const char *list = b.ptr ? b.ptr : "";
    const char *whose = s->lenient ? "ConfigMaps with topo-webhook's labels (the webhook "
                                     "registration that says which is the install's is not "
                                     "readable to you)"
                                   : "topo-webhook's configuration";
    int rc;
    if (s->pick != NULL)
        rc = topo_err_set(err, TOPO_EINVALID,
                          "--topology %s: %zu topologies of that name differ in %s: %s; give "
                          "--levels",
                          s->pick, s->n, whose, list);
    else if (pick_helps(s))
        rc = topo_err_set(err, TOPO_EINVALID,
                          "--levels: not given, and %s has %zu topologies: %s; pick one with "
                          "--topology NAME, or give --levels",
                          whose, s->n, list);
    else
        rc = topo_err_set(err, TOPO_EINVALID,
                          "--levels: not given, and %s has %zu topologies that differ: %s; give "
                          "--levels",
                          whose, s->n, list);
    topo_buf_dispose(&b);
    return rc;
}

/* Kueue's Topology names, for messages. */
static void topology_names(topo_buf *b, const json_t *list)
{
    size_t i;
    const json_t *t;
    json_array_foreach(list, i, t) {
        if (i == LEVELS_LIST_MAX) {
            topo_buf_puts(b, ", ...");
            break;
        }
        const char *name = topo_kueue_topology_name(t);
        topo_buf_printf(b, "%s%s", i ? ", " : "", name ? name : "");
    }
}

/* One MutatingWebhookConfiguration: each webhook WEBHOOK_NAME calling a
 * Service names an install (the Service's namespace, the configuration's
 * release). */
static int on_webhook_configuration(json_t *item, void *payload)
{
    search *s = payload;
    const json_t *md = json_object_get(item, "metadata");
    const char *release =
        json_string_value(json_object_get(json_object_get(md, "labels"), INSTANCE_LABEL));
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(item, "webhooks"), i, w) {
        const json_t *svc = json_object_get(json_object_get(w, "clientConfig"), "service");
        const char *name = json_string_value(json_object_get(w, "name"));
        const char *ns = json_string_value(json_object_get(svc, "namespace"));
        if (name == NULL || strcmp(name, WEBHOOK_NAME) != 0 || ns == NULL || ns[0] == '\0')
            continue;
        int seen = 0;
        for (size_t k = 0; k < s->ninstalls && !seen; k++)
            seen = strcmp(s->installs[k].ns, ns) == 0 &&
                   (s->installs[k].release == NULL) == (release == NULL) &&
                   (release == NULL || strcmp(s->installs[k].release, release) == 0);
        if (seen)
            continue;
        if (topo_pool_array_reserve(s->pool, (void **)&s->installs, &s->capinstalls,
                                    s->ninstalls, s->ninstalls + 1, sizeof(*s->installs)) != 0 ||
            (s->installs[s->ninstalls].ns = topo_pool_strdup(s->pool, ns)) == NULL ||
            (release != NULL &&
             (s->installs[s->ninstalls].release = topo_pool_strdup(s->pool, release)) == NULL)) {
            s->failed = 1;
            return topo_err_nomem(s->err, NULL);
        }
        if (release == NULL)
            s->installs[s->ninstalls].release = NULL;
        s->ninstalls++;
    }
    return 0;
}

/* The ConfigMap of each install the registrations name: 0 (listed, or a
 * note says why not), or the error. */
static int read_installs(search *s, topo_k8s *k, topo_buf *note)
{
    char why[256];
    if (s->ninstalls == 0) {
        topo_buf_puts(note, "topo-webhook is not registered (no MutatingWebhookConfiguration "
                            "with the webhook " WEBHOOK_NAME ")");
        return 0;
    }
    for (size_t i = 0; i < s->ninstalls; i++) {
        const install *in = &s->installs[i];
        const char *selector = WEBHOOK_CONFIGMAP_SELECTOR;
        if (in->release != NULL) {
            if (!topo_label_value_valid(in->release, why, sizeof why))
                continue; /* the API server refuses such a label: not the chart's */
            selector = topo_pool_printf(s->pool, "%s," INSTANCE_LABEL "=%s",
                                        WEBHOOK_CONFIGMAP_SELECTOR, in->release);
            if (selector == NULL)
                return topo_err_nomem(s->err, NULL);
        }
        topo_k8s_list_opts lo = {.label_selector = selector};
        topo_err lerr = TOPO_ERR_INIT;
        int rc = topo_k8s_list(NULL, k, &topo_k8s_configmaps, in->ns, &lo, on_configmap, s, &lerr);
        if (rc == TOPO_EFORBIDDEN) {
            topo_buf_printf(note, "%slisting ConfigMaps in namespace %s is forbidden to you",
                            note->len ? "; " : "", in->ns);
            continue;
        }
        if (rc < 0)
            return s->failed ? rc : copy_err(s->err, &lerr, rc);
    }
    if (s->n == 0)
        topo_buf_printf(note, "%sno topology%s%s%s in the ConfigMap(s) of the %zu topo-webhook "
                              "install(s) registered (%zu found)",
                        note->len ? "; " : "", s->pick ? " \"" : "", s->pick ? s->pick : "",
                        s->pick ? "\"" : "", s->ninstalls, s->configmaps);
    return 0;
}

/* Without the registrations: every ConfigMap with the chart's labels, in
 * every namespace, leniently. 0 when listed, 1 when the user may not list
 * ConfigMaps in every namespace (403: a normal non-admin; the note says
 * so), another code when the cluster cannot be read at all. */
static int search_labels(search *s, topo_k8s *k, topo_buf *note)
{
    topo_k8s_list_opts lo = {.label_selector = WEBHOOK_CONFIGMAP_SELECTOR};
    topo_err lerr = TOPO_ERR_INIT;
    s->lenient = 1;
    int rc = topo_k8s_list(NULL, k, &topo_k8s_configmaps, NULL, &lo, on_configmap, s, &lerr);
    if (rc == TOPO_EFORBIDDEN) {
        topo_buf_puts(note, "reading topo-webhook's registration and listing ConfigMaps in all "
                            "namespaces are forbidden to you");
        return 1;
    }
    if (rc < 0)
        return s->failed ? rc : copy_err(s->err, &lerr, rc);
    if (s->configmaps == 0)
        topo_buf_puts(note, "no topo-webhook ConfigMap (labels " WEBHOOK_CONFIGMAP_SELECTOR ")");
    else if (s->configmaps == s->ignored)
        topo_buf_printf(note, "no topo-webhook ConfigMap that parses (%zu ignored)", s->ignored);
    else
        topo_buf_printf(note, "no topology \"%s\" in the %zu topo-webhook ConfigMap(s)",
                        s->pick ? s->pick : "", s->configmaps - s->ignored);
    return 0;
}

/* topo-webhook's configuration: through its registration when readable,
 * else by the labels. 0 or 1 (see search_labels), or the error. */
static int read_webhook(search *s, topo_k8s *k, topo_buf *note)
{
    topo_k8s_list_opts lo = {.label_selector = WEBHOOK_CONFIGMAP_SELECTOR};
    topo_err lerr = TOPO_ERR_INIT;
    int rc = topo_k8s_list(NULL, k, &webhook_configurations, NULL, &lo, on_webhook_configuration,
                           s, &lerr);
    if (rc == TOPO_EFORBIDDEN || rc == TOPO_ENOTFOUND)
        return search_labels(s, k, note);
    if (rc < 0)
        return s->failed ? rc : copy_err(s->err, &lerr, rc);
    return read_installs(s, k, note);
}

/* Kueue's Topologies, of the newest version served: 0 (listed), 1 (not
 * installed or forbidden: the note says which), or the error. */
static int read_kueue(search *s, topo_k8s *k, topo_buf *note)
{
    for (size_t v = 0; v < sizeof kueue_topologies / sizeof kueue_topologies[0]; v++) {
        topo_err lerr = TOPO_ERR_INIT;
        json_array_clear(s->topologies);
        int rc = topo_k8s_list(NULL, k, &kueue_topologies[v], NULL, NULL, on_topology, s, &lerr);
        if (rc == 0) {
            s->kueue_version = kueue_topologies[v].version;
            return 0;
        }
        if (rc == TOPO_EFORBIDDEN) {
            topo_buf_puts(note, "; listing Kueue's Topologies is forbidden to you");
            return 1;
        }
        if (rc != TOPO_ENOTFOUND)
            return s->failed ? rc : copy_err(s->err, &lerr, rc);
    }
    topo_buf_puts(note, "; Kueue's Topology is not served (kueue.x-k8s.io v1beta2, v1beta1)");
    return 1;
}

/* The Kueue Topology to use: --topology's, or the only one. */
static int pick_kueue(candidate *out, search *s, topo_buf *note)
{
    const json_t *chosen = NULL, *t;
    size_t i, n = json_array_size(s->topologies);
    if (s->pick != NULL) {
        json_array_foreach(s->topologies, i, t) {
            const char *name = topo_kueue_topology_name(t);
            if (name != NULL && strcmp(name, s->pick) == 0)
                chosen = t;
        }
        if (chosen == NULL) {
            topo_buf_printf(note, "; no Kueue Topology \"%s\"", s->pick);
            if (n > 0) {
                topo_buf_puts(note, " (there are: ");
                topology_names(note, s->topologies);
                topo_buf_puts(note, ")");
            }
            return 1;
        }
    } else if (n == 0) {
        topo_buf_puts(note, "; no Kueue Topology");
        return 1;
    } else if (n > 1) {
        topo_buf b = TOPO_BUF_INIT(0);
        topology_names(&b, s->topologies);
        int rc = topo_err_set(s->err, TOPO_EINVALID,
                              "--levels: not given, and the cluster has %zu Kueue Topologies: "
                              "%s; pick one with --topology NAME, or give --levels",
                              n, b.ptr ? b.ptr : "");
        topo_buf_dispose(&b);
        return rc;
    } else {
        chosen = json_array_get(s->topologies, 0);
    }
    const char *name = topo_kueue_topology_name(chosen);
    memset(out, 0, sizeof(*out));
    out->topology = topo_pool_strdup(s->pool, name ? name : "");
    out->where = topo_pool_printf(s->pool, "Topology \"%s\" (kueue.x-k8s.io/%s)",
                                  name ? name : "", s->kueue_version);
    if (out->topology == NULL || out->where == NULL)
        return topo_err_nomem(s->err, NULL);
    return topo_kueue_topology_levels(&out->levels, &out->nlevels, chosen, s->pool, s->err);
}

/* A client of the command's configuration (the lists that follow use the
 * same, and so the same exec credential). */
static int connect_cluster(topo_k8s **out, const cli_input *in, topo_err *err)
{
    const topo_k8s_config *cfg = NULL;
    topo_k8s_opts ko = {0};
    int rc;
    ko.max_retries = 1;
    ko.backoff_max_ms = LEVELS_BACKOFF_MAX_MS;
    ko.timeout_ms = LEVELS_TIMEOUT_MS;
    if ((rc = cli_cluster_config(&cfg, in, err)) == 0)
        rc = topo_k8s_create(out, cfg, &ko, err);
    return rc;
}

int cli_live_levels(cli_found_levels *out, const cli_input *in, const char *pick,
                         topo_pool *pool, topo_err *err)
{
    search s = {.pick = pick, .pool = pool, .err = err};
    topo_buf note = TOPO_BUF_INIT(0);
    topo_k8s *k = NULL;
    candidate c;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((s.topologies = json_array()) == NULL) {
        rc = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    if ((rc = connect_cluster(&k, in, err)) < 0 || (rc = read_webhook(&s, k, &note)) < 0)
        goto cleanup;
    if (s.n > 1) {
        rc = ambiguous(&s, err);
        goto cleanup;
    }
    if (s.n == 1) {
        c = s.v[0];
    } else if ((rc = read_kueue(&s, k, &note)) < 0 ||
               (rc == 0 && (rc = pick_kueue(&c, &s, &note)) < 0)) {
        goto cleanup;
    }
    if (rc == 1) {
        rc = topo_err_set(err, TOPO_EINVALID,
                          "--levels: not given, and none found in the cluster: %s; give "
                          "--levels L1,L2,... (coarsest first)",
                          note.ptr ? note.ptr : "");
        goto cleanup;
    }
    out->levels = c.levels;
    out->nlevels = c.nlevels;
    out->node_labels = c.node_labels;
    out->nnode_labels = c.nnode_labels;
    out->topology = c.topology;
    out->where = c.where;
    rc = 0;

cleanup:
    if (rc < 0 && rc != TOPO_EINVALID && rc != TOPO_ENOMEM)
        topo_err_wrap(err, "reading the cluster");
    json_decref(s.topologies);
    topo_buf_dispose(&note);
    topo_k8s_free(k);
    return rc;
}
