/* Reading a configuration file's fields with messages that name them: every
 * error reads "file:line:column: path: problem" at the value's position
 * (from the codec's marks), or "file: path: problem" when the position is
 * unknown. Unknown keys are errors, so that a typo does not silently keep a
 * default. For YAML or JSON configuration read by topo_codec_yaml_parse_marks.
 *
 * Every reader returns 0, or TOPO_EINVALID with the message in c->err. A
 * field that is absent or null leaves *out as it was (the caller's default)
 * unless it is required. */
#ifndef TOPO_CFGREADER_H
#define TOPO_CFGREADER_H

#include <stdint.h>

#include <jansson.h>

#include "topo/codec.h"
#include "topo/error.h"

typedef struct topo_cfg {
    const char *src;               /* the file name in messages ("<input>" when NULL) */
    const topo_codec_marks *marks; /* may be NULL: messages without positions */
    topo_err *err;
} topo_cfg;

/* Formats the message at `at` (or `fallback`'s position when `at` has
 * none); returns TOPO_EINVALID. */
int topo_cfg_fail(const topo_cfg *c, const json_t *at, const json_t *fallback, const char *fmt,
                  ...) TOPO_PRINTF(4, 5);

/* Every key of obj is one of allowed (NULL-terminated). */
int topo_cfg_check_keys(const topo_cfg *c, const json_t *obj, const char *path,
                        const char *const *allowed) TOPO_MUST_CHECK;

/* obj.key as a string (borrowed from the tree). */
int topo_cfg_string(const topo_cfg *c, const char **out, const json_t *obj, const char *key,
                    const char *path, int required) TOPO_MUST_CHECK;
/* obj.key as a boolean (0/1). */
int topo_cfg_bool(const topo_cfg *c, int *out, const json_t *obj, const char *key,
                  const char *path) TOPO_MUST_CHECK;
/* obj.key as an integer in [min, max]. */
int topo_cfg_int(const topo_cfg *c, int64_t *out, const json_t *obj, const char *key,
                 const char *path, int64_t min, int64_t max) TOPO_MUST_CHECK;
/* obj.key as a Go duration string ("500ms", "30s", "1m30s": Kubernetes
 * configurations' form), in whole milliseconds within [min_ms, max_ms]. */
int topo_cfg_duration(const topo_cfg *c, int64_t *out_ms, const json_t *obj, const char *key,
                      const char *path, int64_t min_ms, int64_t max_ms) TOPO_MUST_CHECK;
/* obj.key as an object or an array (borrowed); *out NULL when absent. */
int topo_cfg_object(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                    const char *path) TOPO_MUST_CHECK;
int topo_cfg_array(const topo_cfg *c, const json_t **out, const json_t *obj, const char *key,
                   const char *path) TOPO_MUST_CHECK;

#endif
