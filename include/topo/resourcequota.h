/* A core/v1 ResourceQuota as topo-webhook counts it: the room (hard - used)
 * it leaves per pod resource. Used by topo-webhook's quota view
 * (jansson types appear here). Pure: no I/O, no logging.
 *
 * The quota resource names that limit pods, as the API server's pod quota
 * evaluator reads them (topo_resourcequota_pod_resource):
 *   "pods", "count/pods"                        -> "pods" (the pod count)
 *   "cpu", "memory", "ephemeral-storage"        -> themselves (requests)
 *   "requests.cpu", "requests.memory",
 *   "requests.ephemeral-storage"                -> cpu, memory, ephemeral-storage
 *   "requests.hugepages-<size>"                 -> hugepages-<size>
 *   "requests.<domain>/<name>" (an extended resource, domain not *kubernetes.io)
 *                                               -> <domain>/<name>
 * Everything else (limits.*, requests.storage of PVCs, services, count/...)
 * does not limit what a pod requests and is skipped without a word.
 *
 * Which numbers: the quota controller publishes status.hard (a copy of
 * spec.hard) and status.used, and the API server admits pods against
 * those. A quota the controller has not computed yet (no status.hard) is
 * counted from spec.hard with nothing used: the API server refuses the
 * namespace's pods until the status exists ("status unknown for quota"),
 * so nothing is admitted over it meanwhile, and the first PodSet of a new
 * namespace is not refused by the webhook for a gap of a second. A
 * resource status.hard has but status.used lacks counts as 0 used. */
#ifndef TOPO_RESOURCEQUOTA_H
#define TOPO_RESOURCEQUOTA_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/pool.h"
#include "topo/types.h"

/* Problems kept per quota (the count goes on): enough to name the fields
 * in one warning, never a message per entry of a hostile object. */
#define TOPO_RESOURCEQUOTA_PROBLEMS_MAX 8

typedef struct topo_resourcequota {
    const char *namespace_; /* metadata.namespace */
    const char *name;       /* metadata.name */
    /* Per pod resource (Kueue units: topo_quantity_parse_resource; "pods"
     * for the count), sorted by name, each once: the least room over the
     * quota names that map to it ("cpu" and "requests.cpu"). Saturating:
     * a hard of 2^63-1 minus a negative used stays 2^63-1. */
    topo_resource *room;
    size_t nroom;
    /* Entries ignored because a value could not be read (a bad quantity, a
     * wrong type, a map that is no map): "status.hard[requests.cpu]: ..."
     * for the first TOPO_RESOURCEQUOTA_PROBLEMS_MAX, and how many in all.
     * An ignored entry limits nothing. */
    const char *problems[TOPO_RESOURCEQUOTA_PROBLEMS_MAX];
    size_t nproblems;
} topo_resourcequota;

/* Decodes one ResourceQuota object (an item of a list or a watch event's
 * object) into *out (zeroed first), every string and array from pool.
 * TOPO_EINVALID when the object has no usable metadata.namespace and
 * metadata.name (a name or namespace longer than 253 bytes included): then
 * it cannot be keyed and the caller skips it; TOPO_ENOMEM. Bad entries are
 * not errors (out->problems). */
int topo_resourcequota_decode(topo_resourcequota *out, const json_t *quota, topo_pool *pool,
                              topo_err *err) TOPO_MUST_CHECK;

/* The pod resource a quota resource name limits (a pointer into
 * quota_name, or a static string), or NULL when it limits none (above). */
const char *topo_resourcequota_pod_resource(const char *quota_name);

#endif
