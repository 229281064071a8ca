/* One node's owned labels and annotations against the plan
 * (include/topo/labeldiff.h): the merge patch, the changes, the Event. */
#include "topo/labeldiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/buf.h"
#include "topo/kueue.h"
#include "topo/labelowner.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"
#include "topo/str.h"
#include "topo/utf8.h"

#include "record.h"

struct topo_labeldiff {
    topo_labeldiff_state state;
    const char *name;
    const char *uid;
    json_t *patch;
    TOPO_ARRAY(topo_labeldiff_change) changes;
    size_t drift;
    size_t restores; /* drift changes back to the recorded value */
    size_t annotations;
    int had_owned;
    int same_as_last_write; /* the input's: every change undoes someone else's */
    char *message;
};

/* 1 when key is under one of the owned prefixes (where owned annotations
 * and the record must be). */
static int under_prefix(const topo_labeldiff_owned *owned, const char *key)
{
    for (size_t i = 0; i < owned->nprefixes; i++)
        if (topo_labelowner_under(key, owned->prefixes[i]))
            return 1;
    return 0;
}

int topo_labeldiff_owns(const topo_labeldiff_owned *owned, const char *key)
{
    if (owned == NULL || key == NULL)
        return 0;
    if (under_prefix(owned, key))
        return 1;
    for (size_t i = 0; i < owned->nkeys; i++)
        if (strcmp(key, owned->keys[i]) == 0)
            return 1;
    return owned->topograph && topo_labelowner_topograph_key(key);
}

/* Both NULL, or equal strings. */
static int same(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* An exact owned key: a label key whose prefix topo may own (the same rule
 * as an owned prefix: no key of kubernetes.io/, nvidia.com/, ...). */
static int owned_key_valid(const char *key, char *why, size_t why_size)
{
    char prefix[TOPO_MAX_NODE_NAME + 2];
    const char *slash = key != NULL ? strchr(key, '/') : NULL;
    if (key == NULL || key[0] == '\0') {
        snprintf(why, why_size, "is empty");
        return 0;
    }
    if (!topo_label_key_valid(key, why, why_size))
        return 0;
    if (slash == NULL || (size_t)(slash - key) + 1 >= sizeof prefix) {
        snprintf(why, why_size, "has no DNS subdomain prefix");
        return 0;
    }
    memcpy(prefix, key, (size_t)(slash - key) + 1);
    prefix[slash - key + 1] = '\0';
    return topo_labelowner_prefix_valid(prefix, why, why_size);
}

/* Defence in depth: whatever the caller checked, no owned prefix or key may
 * reach another owner's labels (labelowner.h). */
static int check_owned(const topo_labeldiff_owned *owned, topo_err *err)
{
    char why[512];
    if (owned == NULL || owned->nprefixes + owned->nkeys + (owned->topograph != 0) == 0)
        return topo_err_set(err, TOPO_EINVALID, "labels: no owned prefix or key");
    for (size_t i = 0; i < owned->nprefixes; i++) {
        const char *p = owned->prefixes[i];
        if (!topo_labelowner_prefix_valid(p, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID, "labels: owned prefix %zu \"%s\": %s", i,
                                p != NULL ? p : "", why);
    }
    for (size_t i = 0; i < owned->nkeys; i++)
        if (!owned_key_valid(owned->keys[i], why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID, "labels: owned key %zu \"%s\": %s", i,
                                owned->keys[i] != NULL ? owned->keys[i] : "", why);
    return 0;
}

/* The desired labels and annotations: owned, valid, unique, bounded. */
static int check_input(const topo_labeldiff_input *in, topo_err *err)
{
    char why[160];
    int error;

    if ((error = check_owned(in->owned, err)) < 0)
        return error;
    if (in->nlabels > TOPO_LABELDIFF_MAX_KEYS || in->nannotations > TOPO_LABELDIFF_MAX_KEYS)
        return topo_err_set(err, TOPO_EINVALID, "labels: more than %d desired labels or "
                            "annotations", TOPO_LABELDIFF_MAX_KEYS);
    for (size_t i = 0; i < in->nlabels; i++) {
        const topo_kv *l = &in->labels[i];
        if (l->key == NULL || l->value == NULL)
            return topo_err_set(err, TOPO_EINVALID, "labels[%zu]: key and value required", i);
        if (!topo_label_key_valid(l->key, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID, "labels[%zu]: key \"%s\": %s", i, l->key,
                                why);
        if (!topo_labeldiff_owns(in->owned, l->key))
            return topo_err_set(err, TOPO_EINVALID, "labels[%zu]: key \"%s\" is not owned", i,
                                l->key);
        if (!topo_label_value_valid(l->value, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID, "labels[%zu]: %s: value \"%s\": %s", i,
                                l->key, l->value, why);
        for (size_t j = 0; j < i; j++)
            if (strcmp(in->labels[j].key, l->key) == 0)
                return topo_err_set(err, TOPO_EINVALID, "labels[%zu]: key \"%s\" given twice",
                                    i, l->key);
    }
    if (in->record_key != NULL && !topo_label_key_valid(in->record_key, why, sizeof why))
        return topo_err_set(err, TOPO_EINVALID, "labels: record key \"%s\": %s", in->record_key,
                            why);
    if (in->record_key != NULL && !under_prefix(in->owned, in->record_key))
        return topo_err_set(err, TOPO_EINVALID, "labels: record key \"%s\" is not under an "
                            "owned prefix", in->record_key);
    for (size_t i = 0; i < in->nannotations; i++) {
        const char *key = in->annotations[i].key;
        if (key == NULL || !topo_label_key_valid(key, why, sizeof why))
            return topo_err_set(err, TOPO_EINVALID, "annotations[%zu]: key \"%s\": %s", i,
                                key != NULL ? key : "", key != NULL ? why : "required");
        if (!under_prefix(in->owned, key))
            return topo_err_set(err, TOPO_EINVALID, "annotations[%zu]: key \"%s\" is not under "
                                "an owned prefix", i, key);
        if (same(key, in->record_key))
            return topo_err_set(err, TOPO_EINVALID, "annotations[%zu]: \"%s\" is the record "
                                "key", i, key);
        if (!topo_utf8_valid(in->annotations[i].value))
            return topo_err_set(err, TOPO_EINVALID, "annotations[%zu]: %s: value is not "
                                "UTF-8", i, key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(in->annotations[j].key, key) == 0)
                return topo_err_set(err, TOPO_EINVALID, "annotations[%zu]: key \"%s\" given "
                                    "twice", i, key);
    }
    return 0;
}

/* metadata.<field>: NULL when absent or null; TOPO_EINVALID unless an
 * object whose values are all strings. */
static int string_map(const json_t **out, const json_t *md, const char *field, topo_err *err)
{
    const json_t *m = json_object_get(md, field);
    const char *key;
    const json_t *v;

    *out = NULL;
    if (m == NULL || json_is_null(m))
        return 0;
    if (!json_is_object(m))
        return topo_err_set(err, TOPO_EINVALID, "node: metadata.%s is not an object", field);
    json_object_foreach((json_t *)m, key, v)
        if (!json_is_string(v))
            return topo_err_set(err, TOPO_EINVALID, "node: metadata.%s.%s is not a string",
                                field, key);
    *out = m;
    return 0;
}

static const char *get_string(const json_t *map, const char *key)
{
    return map != NULL ? json_string_value(json_object_get(map, key)) : NULL;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const topo_labeldiff_change *)a)->key,
                  ((const topo_labeldiff_change *)b)->key);
}

/* Fills d->changes: desired keys that differ, then owned keys the node
 * carries that are not desired (sorted). */
static int label_changes(topo_labeldiff *d, const topo_labeldiff_input *in, const json_t *labels,
                         const label_record *rec)
{
    const char *key;
    const json_t *v;

    for (size_t i = 0; i < in->nlabels; i++) {
        const char *cur = get_string(labels, in->labels[i].key);
        if (same(cur, in->labels[i].value))
            continue;
        topo_labeldiff_change c = {in->labels[i].key, cur, in->labels[i].value, 0};
        if (TOPO_ARRAY_PUSH(&d->changes, c) < 0)
            return TOPO_ENOMEM;
    }
    size_t first_removed = d->changes.n;
    if (labels != NULL) {
        json_object_foreach((json_t *)labels, key, v) {
            if (!topo_labeldiff_owns(in->owned, key))
                continue;
            d->had_owned = 1;
            int desired = 0;
            for (size_t i = 0; i < in->nlabels && !desired; i++)
                desired = strcmp(in->labels[i].key, key) == 0;
            if (desired)
                continue;
            topo_labeldiff_change c = {key, json_string_value(v), NULL, 0};
            if (TOPO_ARRAY_PUSH(&d->changes, c) < 0)
                return TOPO_ENOMEM;
        }
    }
    if (d->changes.n - first_removed > 1)
        qsort(d->changes.items + first_removed, d->changes.n - first_removed,
              sizeof(topo_labeldiff_change), by_key);
    if (in->same_as_last_write) {
        /* Each change puts back the value the caller last wrote (desired
         * unchanged since): undoing someone else's change. */
        for (size_t i = 0; i < d->changes.n; i++)
            d->changes.items[i].drift = 1;
        d->drift = d->restores = d->changes.n;
    } else if (rec->valid) {
        for (size_t i = 0; i < d->changes.n; i++) {
            topo_labeldiff_change *c = &d->changes.items[i];
            const char *recorded = label_record_get(rec, c->key);
            c->drift = !same(c->old_value, recorded);
            d->drift += (size_t)c->drift;
            d->restores += (size_t)(c->drift && same(c->new_value, recorded));
        }
    }
    return 0;
}

/* Sets patch.metadata.<field>.<key> to value (a new reference, NULL: JSON
 * null). */
static int patch_set(json_t *patch, const char *field, const char *key, const char *value)
{
    json_t *md = json_object_get(patch, "metadata");
    json_t *map = json_object_get(md, field);
    if (map == NULL && json_object_set_new(md, field, map = json_object()) < 0)
        return TOPO_ENOMEM;
    if (json_object_set_new(map, key, value != NULL ? json_string(value) : json_null()) < 0)
        return TOPO_ENOMEM;
    return 0;
}

/* The annotations to change into the patch (created on first need). */
static int annotation_changes(topo_labeldiff *d, const topo_labeldiff_input *in,
                              const json_t *annotations, const char *record)
{
    for (size_t i = 0; i <= in->nannotations; i++) {
        const char *key, *want;
        if (i < in->nannotations) {
            key = in->annotations[i].key;
            want = in->annotations[i].value;
        } else if (in->record_key != NULL) {
            key = in->record_key;
            want = record;
        } else {
            break;
        }
        if (same(get_string(annotations, key), want))
            continue;
        if (d->patch == NULL && (d->patch = json_pack("{s:{}}", "metadata")) == NULL)
            return TOPO_ENOMEM;
        if (patch_set(d->patch, "annotations", key, want) < 0)
            return TOPO_ENOMEM;
        d->annotations++;
    }
    return 0;
}

/* "leaf" for "topology.topo.io/leaf" when the first owned prefix is
 * "topology.topo.io/"; other keys whole. */
static const char *short_key(const topo_labeldiff_owned *owned, const char *key)
{
    if (owned->nprefixes > 0 && topo_labelowner_under(key, owned->prefixes[0]))
        return key + strlen(owned->prefixes[0]);
    return key;
}

/* "leaf: a → b, rack: (none) → r12", cut to TOPO_LABELDIFF_MESSAGE_MAX
 * bytes with ", and N more". */
static int build_message(topo_labeldiff *d, const topo_labeldiff_owned *owned)
{
    /* Room kept for the tail: ", and 64 more" fits in 20 bytes. */
    enum { TAIL = 20 };
    topo_buf msg = TOPO_BUF_INIT(TOPO_LABELDIFF_MESSAGE_MAX);
    topo_buf item = TOPO_BUF_INIT(0);
    int error = 0;
    size_t i;

    for (i = 0; i < d->changes.n; i++) {
        const topo_labeldiff_change *c = &d->changes.items[i];
        topo_buf_clear(&item);
        topo_buf_printf(&item, "%s%s: %s \xe2\x86\x92 %s", i > 0 ? ", " : "",
                        short_key(owned, c->key), c->old_value ? c->old_value : "(none)",
                        c->new_value ? c->new_value : "(none)");
        if (item.error != 0) {
            error = item.error;
            goto cleanup;
        }
        size_t tail = i + 1 < d->changes.n ? TAIL : 0;
        if (msg.len + item.len + tail > TOPO_LABELDIFF_MESSAGE_MAX)
            break;
        topo_buf_put(&msg, item.ptr, item.len);
    }
    if (i < d->changes.n)
        topo_buf_printf(&msg, "%sand %zu more", i > 0 ? ", " : "", d->changes.n - i);
    if (msg.error != 0) {
        error = msg.error;
        goto cleanup;
    }
    if ((d->message = topo_buf_take(&msg, NULL)) == NULL)
        error = TOPO_ENOMEM;
cleanup:
    topo_buf_dispose(&msg);
    topo_buf_dispose(&item);
    return error;
}

static int build_patch(topo_labeldiff *d, const topo_labeldiff_input *in,
                       const json_t *annotations, const char *record)
{
    int error;

    if (d->changes.n > 0) {
        if ((d->patch = json_pack("{s:{}}", "metadata")) == NULL)
            return TOPO_ENOMEM;
        for (size_t i = 0; i < d->changes.n; i++)
            if ((error = patch_set(d->patch, "labels", d->changes.items[i].key,
                                   d->changes.items[i].new_value)) < 0)
                return error;
        if ((error = build_message(d, in->owned)) < 0)
            return error;
    }
    if ((error = annotation_changes(d, in, annotations, record)) < 0)
        return error;
    if (d->patch != NULL)
        d->state = TOPO_LABELDIFF_PATCH;
    return 0;
}

int topo_labeldiff_compute(topo_labeldiff **out, const topo_labeldiff_input *in,
                           const json_t *node, topo_err *err)
{
    int error = 0;
    topo_labeldiff *d = NULL;
    const json_t *md, *labels = NULL, *annotations = NULL;
    label_record rec = LABEL_RECORD_INIT;
    char *record = NULL;

    *out = NULL;
    if (in == NULL)
        return topo_err_set(err, TOPO_EINVALID, "labels: no input");
    if ((error = check_input(in, err)) < 0)
        return error;
    md = json_object_get(node, "metadata");
    if (!json_is_object(md) || !json_is_string(json_object_get(md, "name")))
        return topo_err_set(err, TOPO_EINVALID, "node: metadata.name is missing");
    if ((error = string_map(&labels, md, "labels", err)) < 0 ||
        (error = string_map(&annotations, md, "annotations", err)) < 0) {
        topo_err_wrap(err, "%s", json_string_value(json_object_get(md, "name")));
        return error;
    }
    if ((d = calloc(1, sizeof *d)) == NULL)
        return topo_err_nomem(err, "labels");
    d->name = json_string_value(json_object_get(md, "name"));
    d->uid = json_string_value(json_object_get(md, "uid"));
    d->state = in->authoritative ? TOPO_LABELDIFF_CONVERGED : TOPO_LABELDIFF_HELD;
    d->same_as_last_write = in->same_as_last_write != 0;
    if (in->authoritative) {
        if (in->record_key != NULL) {
            if ((error = label_record_parse(&rec, get_string(annotations, in->record_key))) < 0 ||
                (error = label_record_format(&record, in->labels, in->nlabels)) < 0)
                goto oom;
        }
        if ((error = label_changes(d, in, labels, &rec)) < 0 ||
            (error = build_patch(d, in, annotations, record)) < 0)
            goto oom;
    }
    *out = d;
    d = NULL;
    goto cleanup;
oom:
    error = topo_err_nomem(err, "labels");
cleanup:
    label_record_dispose(&rec);
    free(record);
    topo_labeldiff_free(d);
    return error;
}

void topo_labeldiff_free(topo_labeldiff *d)
{
    if (d == NULL)
        return;
    json_decref(d->patch);
    free(d->changes.items);
    free(d->message);
    free(d);
}

topo_labeldiff_state topo_labeldiff_state_of(const topo_labeldiff *d)
{
    return d->state;
}

const char *topo_labeldiff_node_name(const topo_labeldiff *d)
{
    return d->name;
}

const char *topo_labeldiff_node_uid(const topo_labeldiff *d)
{
    return d->uid;
}

const json_t *topo_labeldiff_patch(const topo_labeldiff *d)
{
    return d->state == TOPO_LABELDIFF_PATCH ? d->patch : NULL;
}

size_t topo_labeldiff_change_count(const topo_labeldiff *d)
{
    return d->changes.n;
}

const topo_labeldiff_change *topo_labeldiff_change_at(const topo_labeldiff *d, size_t i)
{
    return i < d->changes.n ? &d->changes.items[i] : NULL;
}

size_t topo_labeldiff_drift_count(const topo_labeldiff *d)
{
    return d->drift;
}

int topo_labeldiff_reassert_only(const topo_labeldiff *d)
{
    if (d->same_as_last_write)
        return d->state == TOPO_LABELDIFF_PATCH;
    return d->changes.n > 0 && d->restores == d->changes.n && d->annotations == 0;
}

int topo_labeldiff_had_owned(const topo_labeldiff *d)
{
    return d->had_owned;
}

size_t topo_labeldiff_annotation_count(const topo_labeldiff *d)
{
    return d->annotations;
}

const char *topo_labeldiff_message(const topo_labeldiff *d)
{
    return d->message;
}

const char *topo_labeldiff_reason(const topo_labeldiff *d)
{
    if (d->message == NULL)
        return NULL;
    return d->drift > 0 ? TOPO_LABELDIFF_REASON_REASSERTED : TOPO_LABELDIFF_REASON_CHANGED;
}

const char *topo_labeldiff_event_type(const topo_labeldiff *d)
{
    if (d->message == NULL)
        return NULL;
    return d->drift > 0 ? "Warning" : "Normal";
}
