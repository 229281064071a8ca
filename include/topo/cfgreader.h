/* The one reader context for configuration fields (in the style of h2o's
 * configurator): the source name, the codec's marks, the pool that keeps
 * what is copied out, and the caller's topo_err travel together, and every
 * typed field reader and the one unknown-key check take it. Every
 * error reads "file:line:column: path: problem" at the value's position
 * (from the codec's marks), or "file: path: problem" when the position is
 * unknown. Unknown keys are errors, so that a typo does not silently keep a
 * default. For YAML or JSON configuration read by topo_codec_yaml_parse_marks.
 *
 * Every reader returns 0, or TOPO_EINVALID with the message in c->err. A
 * field that is absent or null leaves *out as it was (the caller's default)
 * unless it is required. `obj` may itself be absent (NULL or null: every
 * field absent); any other non-map is "path: expected an object, got ...".
 *
 * The same readers serve Kubernetes objects (topo/decode.h's getters are
 * these over a context with no source and no marks): a good value costs no
 * formatting and, unless copy_strings, no allocation. */
#ifndef TOPO_CFGREADER_H
#define TOPO_CFGREADER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/codec.h"
#include "topo/error.h"
#include "topo/pool.h"

typedef struct topo_cfg {
    /* The file name in messages ("<input>" when NULL). With neither src nor
     * marks (a document whose reader adds its own name, such as the facts
     * or a fixture) messages are the bare "path: problem". */
    const char *src;
    const topo_codec_marks *marks; /* may be NULL: messages without positions */
    topo_pool *pool;               /* copies that outlive the tree; may be NULL if none */
    topo_err *err;
    /* Strings are copied into pool instead of borrowed from the tree: for a
     * reader that frees the tree once it is read (the conformance cases). */
    int copy_strings;
} topo_cfg;

/* Formats the message at `at` (or `fallback`'s position when `at` has
 * none); returns TOPO_EINVALID. */
int topo_cfg_fail(const topo_cfg *c, const json_t *at, const json_t *fallback, const char *fmt,
                  ...) TOPO_PRINTF(4, 5);

/* Every key of obj is one of allowed (NULL-terminated). */
int topo_cfg_check_keys(const topo_cfg *c, const json_t *obj, const char *path,
                        const char *const *allowed) TOPO_MUST_CHECK;

/* obj.key is present and not null: "path.key: required" otherwise. For the
 * readers that have no `required` argument (topo_cfg_int, topo_cfg_bool). */
int topo_cfg_require(const topo_cfg *c, const json_t *obj, const char *key,
                     const char *path) TOPO_MUST_CHECK;

/* obj.key as a string (borrowed from the tree, or copied: copy_strings). */
int topo_cfg_string(const topo_cfg *c, const char **out, const json_t *obj, const char *key,
                    const char *path, int required) TOPO_MUST_CHECK;
/* obj.key as a required, non-empty string (a name): "path.key: must not be
 * empty". */
int topo_cfg_name(const topo_cfg *c, const char **out, const json_t *obj, const char *key,
                  const char *path) TOPO_MUST_CHECK;
/* obj.key as a list of strings, the array allocated from c->pool (never
 * NULL once read, even for an empty list); *out untouched when absent
 * unless required. nonempty_items refuses "" ("path.key[i]: must not be
 * empty"); min_items is the fewest entries ("path.key: must not be empty"
 * when it is 1, "at least N entries" above). */
int topo_cfg_strings(const topo_cfg *c, const char *const **out, size_t *out_n, const json_t *obj,
                     const char *key, const char *path, int required, int nonempty_items,
                     size_t min_items) TOPO_MUST_CHECK;
/* obj.key as a boolean (0/1). */
int topo_cfg_bool(const topo_cfg *c, int *out, const json_t *obj, const char *key,
                  const char *path) TOPO_MUST_CHECK;
/* obj.key as an integer in [min, max]; a whole real (2.0) is the integer. */
int topo_cfg_int(const topo_cfg *c, int64_t *out, const json_t *obj, const char *key,
                 const char *path, int64_t min, int64_t max) TOPO_MUST_CHECK;
/* The same for an int32_t field, min and max within int32_t. */
int topo_cfg_int32(const topo_cfg *c, int32_t *out, const json_t *obj, const char *key,
                   const char *path, int32_t min, int32_t max) TOPO_MUST_CHECK;
/* obj.key as a number (an integer or a real) in [min, max], or in (min, max]
 * when min_open: "path.key: 0 is out of range (> 0 and <= 100)". */
int topo_cfg_number(const topo_cfg *c, double *out, const json_t *obj, const char *key,
                    const char *path, double min, double max, int min_open) TOPO_MUST_CHECK;
/* obj.key as a Go duration string ("500ms", "30s", "1m30s": Kubernetes
 * configurations' form), in whole milliseconds within [min_ms, max_ms];
 * the bounds are shown in the same form ("25h is out of range (10s..24h)"). */
int topo_cfg_duration(const topo_cfg *c, int64_t *out_ms, const json_t *obj, const char *key,
                      const char *path, int64_t min_ms, int64_t max_ms) TOPO_MUST_CHECK;
/* obj.key as one of names (NULL-terminated): *out its index, untouched when
 * absent. Any other string reads "path.key: \"x\" is not <what> (expected
 * a, b or c)". */
int topo_cfg_enum(const topo_cfg *c, int *out, const json_t *obj, const char *key,
                  const char *path, const char *const *names, const char *what) TOPO_MUST_CHECK;
/* obj.key of the jansson type (JSON_OBJECT, JSON_ARRAY, JSON_STRING ...),
 * borrowed; *out NULL when absent or null. JSON_TRUE or JSON_FALSE takes
 * either boolean, JSON_REAL an integer too. `want` says what the field holds
 * in the message: "path.key: expected <want>, got an integer". */
int topo_cfg_member(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                    const char *path, json_type type, const char *want,
                    int required) TOPO_MUST_CHECK;
/* obj.key as an object or an array (borrowed); *out NULL when absent. */
int topo_cfg_object(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                    const char *path) TOPO_MUST_CHECK;
int topo_cfg_array(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                   const char *path) TOPO_MUST_CHECK;

#endif
