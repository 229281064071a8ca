/* Kueue's TopologyAssignment as a jansson object, in one place: the CLI
 * prints it, the cache stores it, the webhook annotates pods with it. */
#include "topo/codec.h"

static json_t *string_array(const char *const *v, size_t n)
{
    json_t *a = json_array();
    if (a == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (json_array_append_new(a, json_string(v[i] != NULL ? v[i] : "")) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *topo_codec_assignment_json(const topo_assignment *a)
{
    json_t *root = json_object(), *domains = json_array();
    if (root == NULL || domains == NULL ||
        json_object_set_new(root, "levels", string_array(a->levels, a->nlevels)) < 0) {
        json_decref(root);
        json_decref(domains);
        return NULL;
    }
    if (json_object_set_new(root, "domains", domains) < 0) {
        json_decref(root);
        return NULL;
    }
    for (size_t d = 0; d < a->ndomains; d++) {
        json_t *o = json_object();
        if (o == NULL || json_array_append_new(domains, o) < 0 ||
            json_object_set_new(o, "values", string_array(a->domains[d].values, a->nlevels)) < 0 ||
            json_object_set_new(o, "count", json_integer(a->domains[d].count)) < 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
