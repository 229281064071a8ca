/* Kubernetes objects from a plan (include/topo/export.h): Kueue's Topology
 * and ResourceFlavors, Volcano's HyperNodes. Built as jansson trees and
 * written by the codec's YAML emitter, one document each. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/export.h"
#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"
#include "topo/str.h"

#include "domains.h"

/* Appends one YAML document ("---" between documents). Takes doc. */
static int put_document(topo_buf *out, json_t *doc, topo_err *err)
{
    char *text = NULL;
    int rc = doc ? topo_codec_yaml_dump(&text, doc, err) : topo_err_nomem(err, "export");
    json_decref(doc);
    if (rc != 0)
        return rc;
    if (out->len > 0)
        topo_buf_puts(out, "---\n");
    topo_buf_puts(out, text);
    free(text);
    return out->error ? topo_err_nomem(err, "export") : 0;
}

static json_t *object_meta(const char *api_version, const char *kind, const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", api_version, "kind", kind, "metadata",
                     "name", name);
}

/* Appends doc (taken) to the array docs. */
static int add_document(json_t *docs, json_t *doc, topo_err *err)
{
    return doc && json_array_append_new(docs, doc) == 0 ? 0 : topo_err_nomem(err, "export");
}

static int flavor(json_t *docs, const char *api, const char *name, const char *topology,
                  json_t *node_labels, topo_err *err)
{
    json_t *doc = object_meta(api, "ResourceFlavor", name);
    if (doc && node_labels)
        json_object_set_new(doc, "spec",
                            json_pack("{s:o, s:s}", "nodeLabels", node_labels, "topologyName",
                                      topology));
    else
        json_decref(node_labels);
    return add_document(docs, doc, err);
}

/* One flavor per datacenter value, named <topology>-<value>. */
static int flavors_per_datacenter(const topo_plan *plan, json_t *docs, const char *api,
                                  const char *topology, topo_err *err)
{
    plan_domains d;
    if (plan_domains_build(&d, plan) != 0)
        return topo_err_nomem(err, "export");
    int rc = 0;
    if (d.nlevels == 0 || d.levels[0] != TOPO_LEVEL_DATACENTER)
        rc = topo_err_set(err, TOPO_EINVALID,
                          "kueue export: a ResourceFlavor needs nodeLabels: give them, or plan "
                          "a datacenter level for one flavor per datacenter");
    for (size_t i = 0; rc == 0 && i < d.ndomains; i++) {
        const plan_domain *dom = &d.domains[i];
        if (dom->depth != 0)
            continue;
        char *name = NULL;
        json_t *labels = json_pack("{s:s}", topo_plan_level_key(plan, TOPO_LEVEL_DATACENTER),
                                   dom->value);
        size_t len = strlen(topology) + strlen(dom->value) + 2;
        if ((name = malloc(len)) != NULL) {
            snprintf(name, len, "%s-%s", topology, dom->value);
            /* Object names are lower case; label values need not be. */
            for (char *p = name; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p = (char)(*p - 'A' + 'a');
        }
        if (!name || !topo_dns_subdomain_valid(name)) {
            json_decref(labels);
            rc = name ? topo_err_set(err, TOPO_EINVALID,
                                     "kueue export: \"%s\" is not a valid ResourceFlavor name", name)
                      : topo_err_nomem(err, "export");
        } else {
            rc = flavor(docs, api, name, topology, labels, err);
        }
        free(name);
    }
    plan_domains_free(&d);
    return rc;
}

static int kueue_documents(const topo_plan *plan, const topo_export_kueue_opts *opts,
                           json_t *docs, topo_err *err)
{
    topo_export_kueue_opts o = opts ? *opts : (topo_export_kueue_opts){0};
    const char *name = o.topology_name ? o.topology_name : TOPO_EXPORT_DEFAULT_TOPOLOGY;
    const char *api = o.api_version ? o.api_version : TOPO_EXPORT_DEFAULT_KUEUE_API;
    if (strcmp(api, "kueue.x-k8s.io/v1beta2") != 0 && strcmp(api, "kueue.x-k8s.io/v1beta1") != 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "kueue export: apiVersion \"%s\" (served: kueue.x-k8s.io/v1beta2, "
                            "kueue.x-k8s.io/v1beta1)",
                            api);
    if (!topo_dns_subdomain_valid(name))
        return topo_err_set(err, TOPO_EINVALID, "kueue export: \"%s\" is not a valid Topology name",
                            name);
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels = topo_plan_levels(plan, levels);
    json_t *list = json_array();
    for (size_t i = 0; list && i < nlevels; i++)
        if (json_array_append_new(list, json_pack("{s:s}", "nodeLabel",
                                                  topo_plan_level_key(plan, levels[i]))) != 0) {
            json_decref(list);
            list = NULL;
        }
    json_t *doc = object_meta(api, "Topology", name);
    if (doc && list)
        json_object_set_new(doc, "spec", json_pack("{s:o}", "levels", list));
    else
        json_decref(list);
    int rc = add_document(docs, doc, err);
    if (rc != 0 || o.nflavor_labels == 0)
        return rc != 0 ? rc : flavors_per_datacenter(plan, docs, api, name, err);
    json_t *labels = json_object();
    for (size_t i = 0; labels && i < o.nflavor_labels; i++) {
        char why[512];
        const topo_kv *kv = &o.flavor_labels[i];
        if (!topo_label_key_valid(kv->key, why, sizeof why) ||
            !topo_label_value_valid(kv->value, why, sizeof why)) {
            json_decref(labels);
            return topo_err_set(err, TOPO_EINVALID, "kueue export: flavor label %s=%s: %s",
                                kv->key ? kv->key : "", kv->value ? kv->value : "", why);
        }
        json_object_set_new(labels, kv->key, json_string(kv->value));
    }
    return flavor(docs, api, name, name, labels, err);
}

int topo_export_kueue_objects(const topo_plan *plan, const topo_export_kueue_opts *opts,
                              json_t **out, topo_err *err)
{
    *out = json_array();
    if (!*out)
        return topo_err_nomem(err, "export");
    int rc = kueue_documents(plan, opts, *out, err);
    if (rc != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int topo_export_kueue(const topo_plan *plan, const topo_export_kueue_opts *opts, topo_buf *out,
                      topo_err *err)
{
    json_t *docs = NULL;
    int rc = topo_export_kueue_objects(plan, opts, &docs, err);
    for (size_t i = 0; rc == 0 && i < json_array_size(docs); i++)
        rc = put_document(out, json_incref(json_array_get(docs, i)), err);
    json_decref(docs);
    return rc;
}

/* "<level>-<10 hex digits of the hash of the domain's values>". */
static void hypernode_name(char *buf, size_t size, const topo_plan *plan, const plan_domains *d,
                           size_t i)
{
    /* The values from the top down to this domain, joined by '/'. */
    char path[TOPO_LEVEL_COUNT * (TOPO_MAX_LABEL_VALUE + 1) + 1];
    const char *parts[TOPO_LEVEL_COUNT];
    size_t n = 0;
    for (size_t k = i; k != SIZE_MAX && n < TOPO_LEVEL_COUNT; k = d->domains[k].parent)
        parts[n++] = d->domains[k].value;
    size_t o = 0;
    for (size_t p = n; p-- > 0;)
        o += (size_t)snprintf(path + o, sizeof path - o, "%s%s", o ? "/" : "", parts[p]);
    (void)plan;
    snprintf(buf, size, "%s-%010" PRIx64, topo_level_name(d->levels[d->domains[i].depth]),
             topo_str_hash(path) >> 24);
}

static json_t *hypernode(const topo_plan *plan, const plan_domains *d, size_t i)
{
    const plan_domain *dom = &d->domains[i];
    char name[64];
    hypernode_name(name, sizeof name, plan, d, i);
    json_t *doc = object_meta("topology.volcano.sh/v1alpha1", "HyperNode", name);
    json_t *members = json_array();
    if (dom->depth + 1 == d->nlevels) {
        for (size_t r = dom->first; members && r < dom->end; r++)
            json_array_append_new(members,
                                  json_pack("{s:s, s:{s:{s:s}}}", "type", "Node", "selector",
                                            "exactMatch", "name",
                                            topo_plan_node_name(plan, d->rows[r])));
    } else {
        for (size_t k = i + 1; members && k < d->ndomains && d->domains[k].first < dom->end; k++) {
            if (d->domains[k].parent != i)
                continue;
            char child[64];
            hypernode_name(child, sizeof child, plan, d, k);
            json_array_append_new(members, json_pack("{s:s, s:{s:{s:s}}}", "type", "HyperNode",
                                                     "selector", "exactMatch", "name", child));
        }
    }
    if (!doc || !members) {
        json_decref(doc);
        json_decref(members);
        return NULL;
    }
    json_t *meta = json_object_get(doc, "metadata");
    json_object_set_new(meta, "labels",
                        json_pack("{s:s, s:s}", "volcano.sh/network-topology-source", "topo",
                                  topo_plan_level_key(plan, d->levels[dom->depth]), dom->value));
    json_object_set_new(doc, "spec",
                        json_pack("{s:I, s:s, s:o}", "tier", (json_int_t)(d->nlevels - dom->depth),
                                  "tierName", topo_level_name(d->levels[dom->depth]), "members",
                                  members));
    return doc;
}

int topo_export_volcano(const topo_plan *plan, topo_buf *out, topo_err *err)
{
    plan_domains d;
    if (plan_domains_build(&d, plan) != 0)
        return topo_err_nomem(err, "export");
    int rc = 0;
    /* Tier 1 first, as Volcano's own discovery lists them. */
    for (size_t depth = d.nlevels; rc == 0 && depth-- > 0;)
        for (size_t i = 0; rc == 0 && i < d.ndomains; i++)
            if (d.domains[i].depth == depth)
                rc = put_document(out, hypernode(plan, &d, i), err);
    plan_domains_free(&d);
    return rc;
}
