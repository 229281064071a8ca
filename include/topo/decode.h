/* Decoding helpers shared by every reader of Kubernetes-shaped input (node
 * lists, pod lists, fixture YAML, PodSet manifests, conformance cases, the
 * topology cache's objects). They sit in the codec layer, below the engine,
 * so that both lib/inventory and lib/cache can use them.
 *
 * Conventions, for every function here:
 * - `obj` is the JSON value to decode (the map or the array itself). NULL or
 *   JSON null means "absent" and decodes to zero entries (*out = NULL, n = 0).
 * - `path` names that value in error messages, e.g. "items[3].status.allocatable";
 *   messages read "<path>.<key>: <problem>" or "<path>[i].<field>: <problem>".
 * - Arrays and strings are allocated from `pool` (copied: they do not borrow
 *   from the JSON tree, which may be freed afterwards).
 * - Return 0, TOPO_EINVALID with a message in err, or TOPO_ENOMEM. */
#ifndef TOPO_DECODE_H
#define TOPO_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/pool.h"
#include "topo/types.h"

/* Longest path we build for messages (longer ones are truncated). */
#define TOPO_DECODE_PATH_MAX 256

/* A resource map {"cpu":"500m","nvidia.com/gpu":8,"memory":"2Gi"} → amounts
 * in Kueue's units (topo_quantity_parse_resource: cpu in millicores, others
 * in whole units rounded up). Values may be quantity strings or JSON numbers.
 * Negative amounts are rejected. Error example:
 * "items[3].status.allocatable.cpu: invalid quantity \"abc\"". */
int topo_decode_resources(topo_resource **out, size_t *out_n, const json_t *obj,
                          const char *path, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* A string map (labels, annotations, nodeSelector) → key/value pairs in the
 * map's order. Non-string values are errors ("labels.foo: expected a string"). */
int topo_decode_kv(topo_kv **out, size_t *out_n, const json_t *obj, const char *path,
                   topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Node spec.taints: [{key, value?, effect}], effect one of NoSchedule,
 * PreferNoSchedule, NoExecute; other fields (timeAdded) ignored. */
int topo_decode_taints(topo_taint **out, size_t *out_n, const json_t *obj, const char *path,
                       topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Pod spec.tolerations: [{key?, operator?, value?, effect?, tolerationSeconds?}]
 * validated as the API server does (operator Equal|Exists, Exists takes no
 * value, an empty key needs Exists, effect empty or one of the three). The
 * operator is normalised to "Equal" when absent. */
int topo_decode_tolerations(topo_toleration **out, size_t *out_n, const json_t *obj,
                            const char *path, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* A pod's node affinity, as the engine takes it. */
typedef struct topo_node_affinity {
    const topo_selector_term *required_terms; /* requiredDuringScheduling... */
    size_t nrequired_terms;
    const topo_preferred_term *preferred_terms;
    size_t npreferred_terms;
} topo_node_affinity;

/* Pod spec.affinity (obj is the affinity object; only nodeAffinity is read):
 * required nodeSelectorTerms (at least one when present) and preferred
 * terms (weight 1..100), each term's matchExpressions validated (operator
 * In|NotIn|Exists|DoesNotExist|Gt|Lt with the values each takes);
 * matchFields is refused. *out is zeroed first. Error example:
 * "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * .nodeSelectorTerms[0].matchExpressions[1].operator: unsupported value ...". */
int topo_decode_node_affinity(topo_node_affinity *out, const json_t *obj, const char *path,
                              topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;

/* Typed field getters: `obj` must be an object (or NULL/null: field absent);
 * `path` names obj. When the field is absent, a required one is an error
 * ("<path>.<key>: required"); an optional one leaves *out untouched and
 * returns 0. A present field of the wrong type is always an error. Strings
 * holding a NUL byte are refused (callers keep C strings); with a NULL pool
 * the string is borrowed from the tree instead of copied. */
int topo_decode_string(const char **out, const json_t *obj, const char *key, const char *path,
                       int required, topo_pool *pool, topo_err *err) TOPO_MUST_CHECK;
int topo_decode_int(int64_t *out, const json_t *obj, const char *key, const char *path,
                    int required, topo_err *err) TOPO_MUST_CHECK;
int topo_decode_bool(int *out, const json_t *obj, const char *key, const char *path,
                     int required, topo_err *err) TOPO_MUST_CHECK;
/* An RFC 3339 timestamp ("2024-05-01T12:00:00Z", fractions and a numeric
 * offset allowed: Kubernetes' metav1.Time and MicroTime) as seconds since the
 * epoch, UTC, fractions dropped. Years 1970..9999; anything else, a missing
 * zone or a value out of range is TOPO_EINVALID naming the field. */
int topo_decode_time(int64_t *out, const json_t *obj, const char *key, const char *path,
                     int required, topo_err *err) TOPO_MUST_CHECK;
/* The same parse of one string; 0 or TOPO_EINVALID (no message). */
int topo_decode_parse_time(int64_t *out, const char *text);
/* The same, also with a space for the 'T' and without a zone, as job traces
 * write times ("2020-06-09 18:41:01", "2023-03-01 00:18:22+08:00"): a time
 * without a zone is read as UTC, so only differences between such times
 * mean anything. 0 or TOPO_EINVALID (no message). */
int topo_decode_parse_wall_time(int64_t *out, const char *text);
/* Borrowed member of the given jansson type (JSON_OBJECT, JSON_ARRAY ...),
 * NULL in *out when absent (or null) and not required. */
int topo_decode_member(const json_t **out, const json_t *obj, const char *key, const char *path,
                       json_type type, int required, topo_err *err) TOPO_MUST_CHECK;

/* A v1 Node object → the fields the model keeps: metadata.name (required,
 * non-empty), labels, status.allocatable (Kueue units), spec.taints,
 * spec.unschedulable, and the first Ready condition (absent: not ready, and
 * ready_missing set).
 * The kind is not checked here. */
int topo_decode_node(topo_node_spec *out, const json_t *node, const char *path, topo_pool *pool,
                     topo_err *err) TOPO_MUST_CHECK;

/* "a.b" + "c" → "a.b.c" (or "c" when path is empty); "a" + 3 → "a[3]".
 * Truncates to size; returns buf. */
char *topo_decode_path_key(char *buf, size_t size, const char *path, const char *key);
char *topo_decode_path_index(char *buf, size_t size, const char *path, size_t index);

/* Human name of a JSON value's type, for messages ("a string", "an object"). */
const char *topo_decode_type_name(const json_t *value);

#endif
