/* ResourceQuota room per namespace for topo-webhook: what the namespace's
 * quotas leave for pods not created yet, so that capacity reserved for a
 * PodSet's missing pods counts against the namespace's quota
 * (topo_admission_opts.quota).
 *
 * A background thread keeps every core/v1 ResourceQuota by list+watch
 * across all namespaces (watch.c: relist on 410 Gone, backoff on errors)
 * and, per namespace, the least room over its quotas for each pod resource
 * (lib/codec/resourcequota.h: which quota names limit pods, and why
 * status.hard/status.used are read, spec.hard while the status is not
 * computed). Lookups are answered from memory under a read lock: no API
 * call on the admission path. An entry whose value cannot be read limits
 * nothing; the quota is named in one warning listing the fields (again
 * only when the set of bad fields changes).
 *
 * Threads: wh_quota_lookup, _synced, _namespaces and _count may be
 * called from any thread; create/start/stop/free from one (the owner). */
#ifndef TOPO_WEBHOOK_QUOTA_H
#define TOPO_WEBHOOK_QUOTA_H

#include <stddef.h>

#include "topo/k8s.h"
#include "topo/admission.h"
#include "topo/error.h"
#include "topo/pool.h"
#include "watch.h"

typedef struct wh_quota wh_quota;

/* Client options, backoff and watch timeout, as every view takes them. */
typedef wh_watch_client_opts wh_quota_opts;

/* k8s_cfg is copied. opts may be NULL. Nothing runs until
 * wh_quota_start. */
int wh_quota_create(wh_quota **out, const topo_k8s_config *k8s_cfg,
                      const wh_quota_opts *opts, topo_err *err) TOPO_MUST_CHECK;

/* Starts the list+watch thread. Returns at once: wh_quota_synced (in
 * /readyz) tells when the first list has been applied. */
int wh_quota_start(wh_quota *q, topo_err *err) TOPO_MUST_CHECK;

/* topo_admission_quota_fn's contract with the quota view as payload: 1
 * with the namespace's room in *out (n entries, sorted by resource,
 * copied into pool) when the namespace has at least one ResourceQuota (n
 * may be 0: its quotas limit nothing pods request), 0 when it has none or
 * the first list has not been applied, TOPO_ENOMEM. Cheap: a hash lookup
 * and a copy under a read lock. NULL-safe (q or namespace_ NULL: 0). */
int wh_quota_lookup(wh_quota *q, const char *namespace_, topo_pool *pool,
                      const topo_admission_quota_room **out, size_t *n);

/* 1 once the first list has been applied (and stays 1: after a 410 the
 * old view is served until the relist replaces it). */
int wh_quota_synced(wh_quota *q);

/* Namespaces with at least one ResourceQuota now. */
size_t wh_quota_namespaces(wh_quota *q);

/* ResourceQuotas known now. */
size_t wh_quota_count(wh_quota *q);

/* Ends the thread (within about a second, or the client's request timeout
 * when a list is in flight) and joins it. Idempotent; NULL-safe. */
void wh_quota_stop(wh_quota *q);

/* Stops if running, then frees. NULL-safe. */
void wh_quota_free(wh_quota *q);

#endif
