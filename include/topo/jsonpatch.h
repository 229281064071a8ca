/* An RFC 6902 JSON Patch builder and RFC 6901 JSON Pointer escaping, over
 * jansson. Pure: no I/O.
 *
 * Ownership: a topo_jsonpatch is owned by its creator (topo_jsonpatch_free);
 * char ** results are malloc'd (free); json_t * results are new references. */
#ifndef TOPO_JSONPATCH_H
#define TOPO_JSONPATCH_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/model.h"

typedef struct topo_jsonpatch topo_jsonpatch;

int topo_jsonpatch_new(topo_jsonpatch **out) TOPO_MUST_CHECK;
void topo_jsonpatch_free(topo_jsonpatch *patch);
/* Number of operations so far. NULL-safe (0). */
size_t topo_jsonpatch_count(const topo_jsonpatch *patch);
/* Drops the operations after the first n (n >= the count: nothing): a
 * builder that failed half-way puts the patch back as it was. */
void topo_jsonpatch_truncate(topo_jsonpatch *patch, size_t n);

/* RFC 6901: appends "/" + token to parent with '~' -> "~0" and '/' -> "~1".
 * The only place tokens are escaped. *out is malloc'd. */
int topo_json_pointer_join(char **out, const char *parent, const char *token) TOPO_MUST_CHECK;

/* Operations; `path` is a JSON Pointer already escaped. TOPO_EINVALID for a
 * value (or key) that is not UTF-8, TOPO_ENOMEM. */
int topo_jsonpatch_add_string(topo_jsonpatch *patch, const char *path,
                              const char *value) TOPO_MUST_CHECK;
int topo_jsonpatch_replace_string(topo_jsonpatch *patch, const char *path,
                                  const char *value) TOPO_MUST_CHECK;
int topo_jsonpatch_test_string(topo_jsonpatch *patch, const char *path,
                               const char *value) TOPO_MUST_CHECK;
int topo_jsonpatch_remove(topo_jsonpatch *patch, const char *path) TOPO_MUST_CHECK;
/* add of any value; steals it (also on errors). */
int topo_jsonpatch_add_new(topo_jsonpatch *patch, const char *path, json_t *value) TOPO_MUST_CHECK;
/* add of a whole string map {k: v, ...} */
int topo_jsonpatch_add_map(topo_jsonpatch *patch, const char *path, const topo_kv *kv,
                           size_t n) TOPO_MUST_CHECK;
/* add of an object {"name": value} (an element of spec.schedulingGates) */
int topo_jsonpatch_add_named(topo_jsonpatch *patch, const char *path,
                             const char *name) TOPO_MUST_CHECK;
/* add of an array [{"name": value}] */
int topo_jsonpatch_add_named_list(topo_jsonpatch *patch, const char *path,
                                  const char *name) TOPO_MUST_CHECK;
/* The operations as compact JSON text ("[]" when empty); *out is malloc'd. */
int topo_jsonpatch_dump(char **out, const topo_jsonpatch *patch) TOPO_MUST_CHECK;
/* The operations as a JSON array: a new reference (json_decref it). */
json_t *topo_jsonpatch_json(const topo_jsonpatch *patch);

#endif
