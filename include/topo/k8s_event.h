/* A core/v1 Event about one object, as client-go's recorder writes it
 * (legacy fields: no eventTime): built once here for topo-sync's Events on
 * Nodes (topo_labelwriter_event) and topo-webhook's on Pods.
 *
 * Ownership: *out is a new reference owned by the caller (json_decref). */
#ifndef TOPO_K8S_EVENT_H
#define TOPO_K8S_EVENT_H

#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"

/* Object names are DNS subdomains of at most 253 characters. */
#define TOPO_K8S_EVENT_NAME_MAX 253
/* An RFC 3339 timestamp with its NUL ("2026-01-05T08:00:00Z"). */
#define TOPO_K8S_EVENT_STAMP_SIZE 32

typedef struct topo_k8s_event_spec {
    const char *namespace_; /* the Event's own namespace (required) */
    /* involvedObject (apiVersion v1): kind and name required; namespace
     * NULL for a cluster-scoped object (a Node), uid NULL when unknown. */
    const char *kind;
    const char *name;
    const char *object_namespace;
    const char *uid;
    const char *type;    /* "Normal", "Warning" */
    const char *reason;  /* UpperCamelCase */
    const char *message;
    const char *component; /* source.component (kubectl's "From") and reportingComponent */
    const char *instance;  /* reportingInstance; NULL: not set */
} topo_k8s_event_spec;

/* The Event at wall-clock time now_ns (nanoseconds since the epoch): named
 * "<object name>.<hex now_ns>" as client-go names them (an object name too
 * long for the suffix cut, ending on an alphanumeric), firstTimestamp and
 * lastTimestamp now_ns in whole seconds, count 1. TOPO_EINVALID (a string
 * not UTF-8, a required one missing, a time out of range), TOPO_ENOMEM. */
int topo_k8s_event_build(json_t **out, const topo_k8s_event_spec *spec, int64_t now_ns,
                         topo_err *err) TOPO_MUST_CHECK;

/* now_ns as an Event's timestamps give it (RFC 3339, UTC, seconds). 0 or
 * TOPO_EINVALID (out of range). */
int topo_k8s_event_stamp(char out[TOPO_K8S_EVENT_STAMP_SIZE], int64_t now_ns,
                         topo_err *err) TOPO_MUST_CHECK;

#endif
