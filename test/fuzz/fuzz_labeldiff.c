/* libFuzzer harness for topo-sync's label diff (topo_labeldiff_compute),
 * which reads Nodes as the API server sends them: labels and annotations
 * anyone may have written, the record annotation included. Any JSON gives a
 * diff or an error, never a crash or a leak, and a diff keeps its promises:
 * the patch names owned label keys only, and only the owned annotations and
 * the record; the Event's message stays within its bound; and the patch
 * applied to the node leaves nothing to do (a second diff is converged,
 * without drift). Seeds: fixtures/fuzz/labeldiff. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/labeldiff.h"
#include "topo/labelwriter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC TOPO_LABELDIFF_RECORD_KEY_DEFAULT
#define PROV "topology.topo.io/provenance"

static const char *const prefixes[] = {"topology.topo.io/"};
static const char *const keys[] = {"example.com/pool"};
static const topo_labeldiff_owned owned = {prefixes, 1, keys, 1, 1};
static const topo_kv labels[] = {{"topology.topo.io/leaf", "lf2"},
                                 {"topology.topo.io/rack", "r12"},
                                 {"fabric.topograph.run/tier-1", "s1"},
                                 {"accelerator.topograph.run/domain", "nvl1"}};
static const topo_kv annotations[] = {{PROV, "leaf=ufm"}, {"topology.topo.io/old", NULL}};

/* RFC 7386 on metadata.<field> of node, the only places the patch names. */
static void apply(json_t *node, const json_t *patch, const char *field)
{
    json_t *md = json_object_get(node, "metadata");
    const json_t *p = json_object_get(json_object_get(patch, "metadata"), field);
    json_t *map = json_object_get(md, field);
    const char *key;
    json_t *v;
    if (p == NULL)
        return;
    if (!json_is_object(map)) {
        map = json_object();
        json_object_set_new(md, field, map);
    }
    json_object_foreach((json_t *)p, key, v) {
        if (json_is_null(v))
            json_object_del(map, key);
        else
            json_object_set(map, key, v);
    }
}

static void check(const topo_labeldiff_input *in, json_t *node, const topo_labeldiff *d)
{
    const json_t *patch = topo_labeldiff_patch(d);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(patch, "metadata"), "labels"), key, v)
        if (!topo_labeldiff_owns(&owned, key))
            abort();
    json_object_foreach(json_object_get(json_object_get(patch, "metadata"), "annotations"), key,
                        v) {
        int ok = strcmp(key, REC) == 0;
        for (size_t i = 0; i < in->nannotations; i++)
            ok |= strcmp(key, in->annotations[i].key) == 0;
        if (!ok)
            abort();
    }
    const char *msg = topo_labeldiff_message(d);
    if (msg != NULL && strlen(msg) > TOPO_LABELDIFF_MESSAGE_MAX)
        abort();
    if (topo_labeldiff_drift_count(d) > topo_labeldiff_change_count(d))
        abort();
    json_t *ev = NULL;
    if (topo_labelwriter_event(&ev, d, "topo-sync", "fuzz", "default", 1, NULL) == 0 &&
        (ev == NULL) != (msg == NULL))
        abort();
    json_decref(ev);
    /* A reassertion only is drift in every change and, told by the record,
     * no annotation; what the caller last wrote makes any patch one. Its
     * aggregated message stays within the limit (cut on a character). */
    if (topo_labeldiff_reassert_only(d) &&
        (topo_labeldiff_drift_count(d) != topo_labeldiff_change_count(d) ||
         (topo_labeldiff_annotation_count(d) != 0 && !in->same_as_last_write)))
        abort();
    if (in->same_as_last_write && (patch != NULL) != topo_labeldiff_reassert_only(d))
        abort();
    json_t *upd = NULL;
    int urc = topo_labelwriter_event_update(&upd, d, 27, 1, 2, NULL);
    if (msg != NULL &&
        (urc != 0 || upd == NULL ||
         strlen(json_string_value(json_object_get(upd, "message"))) > TOPO_LABELDIFF_MESSAGE_MAX))
        abort();
    json_decref(upd);
    if (patch == NULL)
        return;
    /* The patch applied: converged, nothing drifted. */
    json_t *after = json_deep_copy(node);
    if (after == NULL)
        return;
    apply(after, patch, "labels");
    apply(after, patch, "annotations");
    topo_labeldiff *again = NULL;
    if (topo_labeldiff_compute(&again, in, after, NULL) == 0 &&
        (topo_labeldiff_state_of(again) != TOPO_LABELDIFF_CONVERGED ||
         topo_labeldiff_drift_count(again) != 0))
        abort();
    topo_labeldiff_free(again);
    json_decref(after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *node = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_codec_json_parse(&node, (const char *)data, size, "fuzz.json", &err) != 0)
        return 0;
    /* The plan with and without a record, authoritative or held; as the
     * caller's last write or not (the input's parity). */
    for (int mode = 0; mode < 3; mode++) {
        topo_labeldiff_input in = {&owned, mode != 2, labels, 4, annotations, 2,
                                   mode == 1 ? NULL : REC, (size & 1) != 0};
        topo_labeldiff *d = NULL;
        if (topo_labeldiff_compute(&d, &in, node, &err) == 0) {
            if (mode == 2 && topo_labeldiff_state_of(d) != TOPO_LABELDIFF_HELD)
                abort();
            check(&in, node, d);
        }
        topo_labeldiff_free(d);
    }
    json_decref(node);
    return 0;
}
