/* Loading entry points: a document (file or text) parsed, recognised as a
 * fixture or a kubectl list, decoded into a batch and committed. Above the
 * decoders (fixture.c, kube.c) and the batches (inventory.c), which never
 * call back up here. */
#include "inventory_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/limits.h"

static int is_fixture(const json_t *root)
{
    return json_object_get(root, "items") == NULL && json_object_get(root, "kind") == NULL &&
           (json_object_get(root, "nodes") != NULL || json_object_get(root, "pods") != NULL);
}

static int load_text(topo_inventory *inv, const char *text, size_t len, const char *source,
                     int pods, topo_err *err)
{
    const char *src = source != NULL ? source : "<input>";
    json_t *root = NULL;
    inv_batch b;
    int error;

    memset(&b, 0, sizeof(b));
    b.inv = inv;
    if ((error = topo_codec_parse(&root, text, len, source, err)) < 0)
        goto cleanup;
    if (!json_is_object(root)) {
        error = topo_err_set(err, TOPO_EINVALID,
                             "%s: expected an object at the top level (%s), got %s", src,
                             pods ? "PodList, List of Pods, Pod or a fixture with pods:"
                                  : "NodeList, List of Nodes, Node or a fixture with nodes:",
                             json_is_array(root)    ? "an array"
                             : json_is_string(root) ? "a string"
                             : json_is_null(root)   ? "an empty document"
                                                    : "a scalar");
        goto cleanup;
    }
    if (is_fixture(root))
        error = inv_decode_fixture(&b, root, !pods, 1, inv->pool, err);
    else if (pods)
        error = inv_decode_kube_pods(&b, root, inv->pool, err);
    else
        error = inv_decode_kube_nodes(&b, root, inv->pool, err);
    if (error < 0) {
        topo_err_wrap(err, "%s", src);
        goto cleanup;
    }
    if ((error = inv_batch_commit(inv, &b, err)) < 0)
        topo_err_wrap(err, "%s", src);

cleanup:
    inv_batch_dispose(&b);
    json_decref(root);
    return error;
}

static int load_file(topo_inventory *inv, const char *path, int pods, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int error;

    if ((error = topo_codec_read_file(&text, &len, path, TOPO_MAX_INVENTORY_FILE, err)) < 0)
        goto cleanup;
    /* Messages and topo_err_at keep pointing at a string that outlives us. */
    const char *source = topo_pool_strdup(inv->pool, path);
    if (source == NULL) {
        error = topo_err_nomem(err, NULL);
        goto cleanup;
    }
    error = load_text(inv, text, len, source, pods, err);

cleanup:
    free(text);
    return error;
}

int topo_inventory_load_nodes_file(topo_inventory *inv, const char *path, topo_err *err)
{
    return load_file(inv, path, 0, err);
}

int topo_inventory_load_nodes_text(topo_inventory *inv, const char *text, size_t len,
                                   const char *source, topo_err *err)
{
    return load_text(inv, text, len, source, 0, err);
}

int topo_inventory_load_pods_file(topo_inventory *inv, const char *path, topo_err *err)
{
    return load_file(inv, path, 1, err);
}

int topo_inventory_load_pods_text(topo_inventory *inv, const char *text, size_t len,
                                  const char *source, topo_err *err)
{
    return load_text(inv, text, len, source, 1, err);
}
