/* The codec layer: reading files and turning JSON or YAML text into one
 * jansson tree, with "source:line:column: message" errors. Used by every
 * layer above it and by topo-webhook (jansson types appear in it).
 *
 * Ownership: every json_t ** result is a new reference owned by the caller
 * (json_decref it); every char ** result is malloc'd and freed with free(). */
#ifndef TOPO_CODEC_H
#define TOPO_CODEC_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/limits.h"
#include "topo/types.h"

/* Reads a whole file into a malloc'd, NUL-terminated buffer. Opens the path
 * directly (no stat-then-open). TOPO_ENOTFOUND when it does not exist,
 * TOPO_EIO on other I/O errors, TOPO_ELIMIT when it is larger than max bytes.
 * On error *out is NULL. */
int topo_codec_read_file(char **out, size_t *out_len, const char *path, size_t max,
                         topo_err *err) TOPO_MUST_CHECK;
/* The same for a path that must name a regular file (a key, a Secret's
 * file): anything else (a FIFO, a device, a directory) is TOPO_EIO "<path>:
 * not a regular file", found without blocking on it. */
int topo_codec_read_regular_file(char **out, size_t *out_len, const char *path, size_t max,
                                 topo_err *err) TOPO_MUST_CHECK;

/* Opens a path that must name a regular file for reading, as
 * topo_codec_read_regular_file does (without blocking on a FIFO, then
 * fstat on the descriptor), for a caller that streams it: *fd_out is a
 * NON-blocking descriptor to close, -1 on error (a file on disk reads as
 * usual; a kernel interface that would block, /proc/kmsg, fails its read
 * with EAGAIN instead). Errors as that function's. */
int topo_codec_open_regular_file(int *fd_out, const char *path, topo_err *err) TOPO_MUST_CHECK;

/* Parses one JSON text (duplicate object keys rejected). On error the message
 * is "source:line:column: message" and the position is recorded with
 * topo_err_at (source is borrowed: it must outlive err). TOPO_EINVALID;
 * TOPO_ENOMEM when out of memory. */
int topo_codec_json_parse(json_t **out, const char *text, size_t len, const char *source,
                          topo_err *err) TOPO_MUST_CHECK;

/* One element of an array read by topo_codec_json_each: index is its place
 * in the array. A non-zero return stops the walk and is returned as is. */
typedef int (*topo_codec_each_fn)(const json_t *element, size_t index, void *payload,
                                  topo_err *err);
/* Another member of the top-level object (key, value), the same way. */
typedef int (*topo_codec_member_fn)(const char *key, const json_t *value, void *payload,
                                    topo_err *err);

typedef struct topo_codec_each {
    const char *member;          /* NULL: the document itself is the array */
    topo_codec_each_fn element;  /* required */
    topo_codec_member_fn other;  /* NULL: the other members are dropped */
    void *payload;
} topo_codec_each;

/* The elements of a JSON array, one at a time, without building the
 * document's tree: each element is parsed, passed to how->element and freed
 * before the next, so a response of 100 MB costs its text, not the tenfold
 * of it a whole tree takes. The array is the document itself (member NULL)
 * or the member how->member of the document's object, whose other members
 * go to how->other. The text is checked as topo_codec_json_parse checks it
 * (syntax, duplicate keys in the elements and in the top-level object),
 * with "source:line:column: message" errors at the same places.
 *
 * *found is 1 when the document has that shape; when it has another (not
 * an array, not an object, no such member or one that is not an array, or
 * a NUL byte anywhere) it is 0 and no element was passed: the caller parses the document whole and
 * reports as it would. An error after some elements leaves what the
 * callbacks did with them. 0, TOPO_EINVALID, TOPO_ENOMEM, or a callback's
 * code. */
int topo_codec_json_each(int *found, const char *text, size_t len, const char *source,
                         const topo_codec_each *how, topo_err *err) TOPO_MUST_CHECK;

/* A member of the top-level object read by topo_codec_json_members: its key
 * and where its value's text is (offset and length in the text given). A
 * non-zero return stops the walk and is returned as is. */
typedef int (*topo_codec_span_fn)(const char *key, size_t offset, size_t len, void *payload,
                                  topo_err *err);

/* The members of a top-level JSON object, without parsing their values:
 * each member's key (duplicates refused, as topo_codec_json_parse refuses
 * them) and the extent of its value go to fn, in the text's order, for a
 * caller that parses one member at a time (an LLDP collector's answer holds
 * a whole lldpd document per host). Only the object's own syntax and the
 * values' brackets and strings are checked here: the caller parses each
 * value's text, which checks the rest. *found is 0 (and fn never called)
 * when the document is not an object or holds a NUL byte: the caller
 * parses it whole. 0, TOPO_EINVALID ("source:line:column: message"),
 * TOPO_ENOMEM, or fn's code. */
int topo_codec_json_members(int *found, const char *text, size_t len, const char *source,
                            topo_codec_span_fn fn, void *payload, topo_err *err) TOPO_MUST_CHECK;

/* topo_codec_json_parse and topo_codec_json_each for a payload from
 * outside (a source's response or a saved copy of one): the same, within a
 * memory budget for jansson's tree (topo_codec_source_budget(len), live
 * bytes; topo_json_budget_begin) and a nesting depth
 * (TOPO_MAX_SOURCE_DEPTH). Past either: TOPO_ELIMIT "<source>: the body of
 * N bytes needs more than M bytes of memory once parsed (...); refused" or
 * "<source>: nested deeper than 64 ...". For the each variant *found is 1
 * when the depth refused it (the caller must not parse it whole). */
int topo_codec_json_parse_source(json_t **out, const char *text, size_t len, const char *source,
                                 topo_err *err) TOPO_MUST_CHECK;
int topo_codec_json_each_source(int *found, const char *text, size_t len, const char *source,
                                const topo_codec_each *how, topo_err *err) TOPO_MUST_CHECK;
/* The budget of a body of len bytes: TOPO_PARSE_MEMORY_RATIO times it, at
 * least TOPO_MIN_PARSE_MEMORY, at most TOPO_MAX_PARSE_MEMORY. */
size_t topo_codec_source_budget(size_t len);

/* Parses the first YAML document into a jansson tree (the rest of a
 * multi-document stream, such as Kubernetes manifests, is not read). Plain
 * (unquoted) scalars resolve by the YAML 1.2 core schema (null, bool, int, float);
 * quoted and block scalars stay strings; the tags !!str !!int !!float !!bool
 * !!null and ! are honoured. Aliases, complex keys and duplicate keys are
 * rejected; nesting is limited to TOPO_MAX_DOCUMENT_DEPTH. An empty stream is
 * JSON null. Errors as for topo_codec_json_parse, positions from libyaml's
 * marks. */
int topo_codec_yaml_parse(json_t **out, const char *text, size_t len, const char *source,
                          topo_err *err) TOPO_MUST_CHECK;

/* Start positions of the values of a parsed YAML tree, for readers that
 * validate the tree afterwards and want "source:line:column" in messages. */
typedef struct topo_codec_marks topo_codec_marks;

/* topo_codec_yaml_parse for configuration files, also recording where each
 * value of the tree starts (strings, numbers, mappings and sequences:
 * true/false/null are jansson singletons and have no position). The stream
 * must hold one document: a second one (after `---`) is TOPO_EINVALID at its
 * marker ("a second YAML document: one configuration document expected"),
 * since its fields would otherwise never be read; a leading `---` and a
 * trailing `...` are fine. *marks_out is owned by the caller
 * (topo_codec_marks_free) and refers to the tree's values by address: keep
 * the tree alive while using it. */
int topo_codec_yaml_parse_marks(json_t **out, topo_codec_marks **marks_out, const char *text,
                                size_t len, const char *source, topo_err *err) TOPO_MUST_CHECK;
/* 1 and the 1-based line and column where value started, 0 when unknown. */
int topo_codec_marks_find(const topo_codec_marks *marks, const json_t *value, int *line,
                          int *column);
void topo_codec_marks_free(topo_codec_marks *marks);

/* Reads a file of at most max bytes and parses it as JSON when its first
 * non-blank byte is '{' or '[', else as YAML. Error positions name path. */
int topo_codec_load_file(json_t **out, const char *path, size_t max,
                         topo_err *err) TOPO_MUST_CHECK;

/* Writes a jansson tree as one YAML document (block style, 2-space indent),
 * quoting strings that would otherwise read back as another type ("8",
 * "true", "null", ""). *out is malloc'd and NUL-terminated. */
int topo_codec_yaml_dump(char **out, const json_t *value, topo_err *err) TOPO_MUST_CHECK;

/* Same choice of parser for text already in memory. */
int topo_codec_parse(json_t **out, const char *text, size_t len, const char *source,
                     topo_err *err) TOPO_MUST_CHECK;

/* Kueue's TopologyAssignment {levels, domains: [{values, count}]} as a new
 * jansson object (caller decrefs), NULL when out of memory. */
json_t *topo_codec_assignment_json(const topo_assignment *a);

#endif
