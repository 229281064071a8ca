/* Kueue's TopologyAssignment as JSON or YAML text, built with jansson. */
#include "topo/inventory.h"

#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/json.h"

int topo_assignment_format(char **out, const topo_assignment *a, topo_format format,
                           topo_err *err)
{
    json_t *root = NULL;
    char *text = NULL;
    int error = 0;

    *out = NULL;
    if ((root = topo_codec_assignment_json(a)) == NULL)
        goto nomem;
    if (format == TOPO_FORMAT_YAML) {
        if ((error = topo_codec_yaml_dump(&text, root, err)) < 0)
            goto cleanup;
    } else {
        char *dumped = topo_json_dumps(root, JSON_INDENT(2));
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
    json_decref(root);
    return error;
}
