/* Kueue's TopologyAssignment as JSON or YAML text, built with jansson. */
#include "topo/inventory.h"

#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"

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

int topo_assignment_format(char **out, const topo_assignment *a, topo_format format,
                           topo_err *err)
{
    json_t *root = NULL, *domains = NULL;
    char *text = NULL;
    int error = 0;

    *out = NULL;
    if ((root = json_object()) == NULL || (domains = json_array()) == NULL ||
        json_object_set_new(root, "levels", string_array(a->levels, a->nlevels)) < 0)
        goto nomem;
    for (size_t i = 0; i < a->ndomains; i++) {
        json_t *d = json_object();
        if (d == NULL || json_array_append_new(domains, d) < 0 ||
            json_object_set_new(d, "values", string_array(a->domains[i].values, a->nlevels)) < 0 ||
            json_object_set_new(d, "count", json_integer(a->domains[i].count)) < 0)
            goto nomem;
    }
    if (json_object_set_new(root, "domains", domains) < 0) {
        domains = NULL;
        goto nomem;
    }
    domains = NULL;
    if (format == TOPO_FORMAT_YAML) {
        if ((error = topo_codec_yaml_dump(&text, root, err)) < 0)
            goto cleanup;
    } else {
        char *dumped = json_dumps(root, JSON_INDENT(2));
        size_t len;
        if (dumped == NULL)
            goto nomem;
        len = strlen(dumped);
        text = malloc(len + 2);
        if (text == NULL) {
            free(dumped);
            goto nomem;
        }
        memcpy(text, dumped, len);
        text[len] = '\n';
        text[len + 1] = '\0';
        free(dumped);
    }
    *out = text;
    text = NULL;
    goto cleanup;

nomem:
    error = topo_err_set(err, TOPO_ENOMEM, "assignment: out of memory");
cleanup:
    free(text);
    json_decref(domains);
    json_decref(root);
    return error;
}
