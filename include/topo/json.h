/* JSON text in and out of jansson, with running out of memory told apart.
 * jansson's parser and serializer drop bytes they cannot store instead of
 * failing (load.c lex_save, dump.c's unchecked dump_string): text read or
 * written while memory runs out can come back altered ("admission.k8s.o/v1",
 * an object key missing) with no error. These see every allocation jansson
 * makes on the calling thread and fail the call when one failed. All of
 * topo's JSON text goes through them: text is parsed with topo_json_load
 * and written with topo_json_dumps, and the two writers that cannot take a
 * whole string (json_dumpf streaming a generated cluster,
 * lib/inventory/generate.c; json_dumpb into a buffer, facts_json.c) are
 * bracketed by topo_json_alloc_watch/topo_json_alloc_failed.
 *
 * Ownership as in jansson: a json_t ** result is a new reference, a char *
 * result is malloc'd (free it). */
#ifndef TOPO_JSON_H
#define TOPO_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"

/* json_loadb: 0 with *out; TOPO_EINVALID (jerr says why); TOPO_ENOMEM when
 * any of jansson's allocations failed, even if it returned a value. */
int topo_json_load(json_t **out, const char *text, size_t len, size_t flags,
                   json_error_t *jerr) TOPO_MUST_CHECK;

/* json_dumps: NULL when out of memory (or when jansson refuses the value,
 * as json_dumps does). */
char *topo_json_dumps(const json_t *value, size_t flags);

/* jansson's constructors (json_string, json_object_set_new, json_pack...)
 * fail alike for invalid input (text that is not UTF-8) and for want of
 * memory: call topo_json_alloc_watch() before building values and
 * topo_json_alloc_failed() after, on the same thread, to tell which. */
void topo_json_alloc_watch(void);
int topo_json_alloc_failed(void);

/* A memory budget for what jansson allocates on the calling thread, from
 * begin to end (a parse of outside input, topo_codec_json_parse_source):
 * past max_bytes live, jansson's allocations fail, so the load fails as
 * out of memory. topo_json_budget_end says whether the budget was
 * exceeded (1), telling "too large once parsed" from a real lack of memory.
 * Other threads, and this one outside begin..end, are not counted. Not
 * nested: one budget per thread at a time. */
void topo_json_budget_begin(size_t max_bytes);
int topo_json_budget_end(void);

#endif
