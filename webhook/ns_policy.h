/* Per-namespace no-fit policy overrides for topo-webhook: a namespace that
 * carries the configured label (namespacePolicyLabel, value gate|deny|ignore)
 * overrides the topology's policy for its pods. With packing on, the same
 * view keeps the namespaces that opt out of it
 * (TOPO_ADMISSION_PACKING_NAMESPACE_LABEL "false").
 *
 * A background thread keeps namespace -> policy by list+watch of core/v1
 * namespaces with labelSelector=<label> (only labelled namespaces travel;
 * with packing, every namespace: no selector says "either label"),
 * relisting on 410 Gone and backing off on errors. Lookups are answered from
 * memory under a read lock: no API call on the admission path. An invalid
 * label value is ignored (the namespace has no override) with one warning
 * per namespace and value.
 *
 * Threads: wh_ns_policy_lookup, _synced and _count may be called from any
 * thread; create/start/stop/free from one (the owner). */
#ifndef TOPO_WEBHOOK_NS_POLICY_H
#define TOPO_WEBHOOK_NS_POLICY_H

#include <stddef.h>

#include "topo/k8s.h"
#include "topo/admission.h"
#include "topo/error.h"
#include "watch.h"

typedef struct wh_ns_policy wh_ns_policy;

/* Client options, backoff and watch timeout, as every view takes them. */
typedef wh_watch_client_opts wh_ns_policy_opts;

/* label: the namespace label key (copied; must be a valid label key: pass
 * topo_admission_config_namespace_policy_label; NULL: no policy overrides,
 * then packing must be on). packing: keep the packing opt-outs too.
 * k8s_cfg is copied. opts may be NULL. Nothing runs until
 * wh_ns_policy_start. */
int wh_ns_policy_create(wh_ns_policy **out, const char *label, int packing,
                        const topo_k8s_config *k8s_cfg, const wh_ns_policy_opts *opts,
                        topo_err *err) TOPO_MUST_CHECK;

/* Starts the list+watch thread. Returns at once: use wh_ns_policy_synced
 * (e.g. in /readyz) to learn when the first list has been applied. */
int wh_ns_policy_start(wh_ns_policy *p, topo_err *err) TOPO_MUST_CHECK;

/* 1 and the namespace's policy in *out when namespace_ carries the label
 * with a valid value; 0 otherwise (then the topology's policy applies).
 * Cheap: a hash lookup under a read lock. NULL-safe (p or namespace_ NULL: 0). */
int wh_ns_policy_lookup(wh_ns_policy *p, const char *namespace_, topo_admission_policy *out);

/* 1 when the view keeps packing's opt-outs and namespace_ carries
 * TOPO_ADMISSION_PACKING_NAMESPACE_LABEL "false"; 0 otherwise. As cheap as
 * the lookup; NULL-safe. */
int wh_ns_policy_packing_off(wh_ns_policy *p, const char *namespace_);

/* 1 once the first list has been applied (and stays 1: after a 410 the old
 * view is served until the relist replaces it). */
int wh_ns_policy_synced(wh_ns_policy *p);

/* Namespaces with a valid override now. */
size_t wh_ns_policy_count(wh_ns_policy *p);

/* Ends the thread (within about a second, or the client's request timeout
 * when a list is in flight) and joins it. Idempotent; NULL-safe. */
void wh_ns_policy_stop(wh_ns_policy *p);

/* Stops if running, then frees. NULL-safe. */
void wh_ns_policy_free(wh_ns_policy *p);

#endif
