/* The Kubernetes API client of topo: configuration (in-cluster or a
 * kubeconfig), the verbs topo needs (get, paged list, watch, merge and JSON
 * patch with resourceVersion preconditions, create, update, delete) and Lease
 * leader election. Built on topo_http (include/topo/http.h), which does TLS,
 * bearer-token rotation, retries with backoff and client-side rate limiting.
 *
 * Public to the daemons (topo-webhook's views and ungater, the cache
 * filler, topo-sync); it speaks jansson, so json_t appears here.
 *
 * Ownership: every json_t ** result is a new reference owned by the caller
 * (json_decref it); json_t * arguments of callbacks are borrowed for the call
 * (json_incref to keep one); const json_t * inputs are never modified.
 *
 * Threads: a topo_k8s owns one topo_http and is used by one thread at a time;
 * give each thread (the leader loop, a watch) its own client.
 *
 * Errors: every call returns 0 or a topo_code, and the API server's Status
 * message goes into err ("PATCH /api/v1/nodes/n1: 409 Conflict: Operation
 * cannot be fulfilled on nodes \"n1\": ..."). Codes callers act on:
 *   TOPO_ENOTFOUND      404 (create it)
 *   TOPO_ECONFLICT      409: stale resourceVersion, or AlreadyExists (re-read, retry)
 *   TOPO_EGONE          410: resourceVersion too old (relist, then watch again)
 *   TOPO_EUNAUTHORIZED  401 (after the token file was re-read once)
 *   TOPO_EFORBIDDEN     403 (RBAC)
 *   TOPO_ETHROTTLED     429 after the HTTP client's retries
 *   TOPO_ETIMEOUT       408/504 or a client-side timeout
 *   TOPO_ESERVER        5xx after retries
 *   TOPO_ECONNECT       connection refused, reset or dropped
 *   TOPO_EINVALID       400/422 (a failed JSON-patch test op is 422) or a malformed reply */
#ifndef TOPO_NET_K8S_H
#define TOPO_NET_K8S_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/exec_cred.h"
#include "topo/limits.h"

/* ------------------------------------------------------------------ config */

/* The service-account directory of a pod. */
#define TOPO_K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* The environment variable naming another one (a token projected elsewhere;
 * the tests of in-cluster mode): it gives no access the process's own
 * environment (KUBECONFIG) does not already give. */
#define TOPO_K8S_SA_DIR_ENV "TOPO_K8S_SA_DIR"

/* Where the API server is and how to authenticate; all strings malloc'd
 * (topo_k8s_config_dispose frees them), NULL when unset; `= {0}` is empty. Certificates and
 * keys are PEM: the _data forms hold the decoded text of a kubeconfig's
 * base64 *-data fields. Relative paths of a kubeconfig are already resolved
 * against the kubeconfig's directory. */
typedef struct topo_k8s_config {
    char *server;              /* "https://10.0.0.1:6443", no trailing slash */
    char *ca_file;
    char *ca_data;
    int insecure_skip_verify;
    char *client_cert_file;
    char *client_cert_data;
    char *client_key_file;
    char *client_key_data;
    char *token;               /* a fixed bearer token */
    char *token_file;          /* re-read by the HTTP client (rotation) */
    topo_exec_cred *exec;      /* the user's exec credential plugin (one reference, shared
                                  by the clients made from this config), or NULL */
    char *namespace_name;      /* the pod's / the context's namespace, or NULL */
    char *source;              /* "in-cluster" or the kubeconfig path (for messages) */
} topo_k8s_config;

void topo_k8s_config_dispose(topo_k8s_config *cfg);

/* In-cluster configuration (client-go InClusterConfig): the server from
 * KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token file,
 * ca.crt and namespace from sa_dir (NULL: the directory the environment
 * variable TOPO_K8S_SA_DIR_ENV names when set, else TOPO_K8S_SA_DIR). The
 * token file must be readable now; the HTTP client re-reads it later.
 * TOPO_ENOTFOUND when the variables or the token are missing (not running in
 * a pod). */
int topo_k8s_config_in_cluster(topo_k8s_config *out, const char *sa_dir,
                               topo_err *err) TOPO_MUST_CHECK;

/* A kubeconfig file (YAML or JSON, at most TOPO_MAX_KUBECONFIG bytes):
 * context (NULL: current-context) → cluster (server, certificate-authority
 * or certificate-authority-data, insecure-skip-tls-verify, the extension
 * TOPO_EXEC_CLUSTER_EXTENSION) and user (client-certificate[-data],
 * client-key[-data], token, tokenFile, exec), plus the context's namespace.
 * An exec plugin (topo/exec_cred.h: apiVersion v1 or v1beta1, command,
 * args, env, installHint, provideClusterInfo, interactiveMode) is parsed,
 * never run here; as in client-go it is not used when the user also has a
 * token, tokenFile or client certificate. auth-provider users (with a
 * message naming the exec plugin that replaces gcp, azure or oidc),
 * username/password and proxy-url are TOPO_EUNSUPPORTED. A client
 * certificate and key (data or files, read now) must be a matching pair
 * with the key unencrypted: topo never asks for a passphrase. Errors name
 * the file and the field ("kubeconfig k.yaml: users[0].user.client-key-data:
 * invalid base64"). */
int topo_k8s_config_kubeconfig(topo_k8s_config *out, const char *path, const char *context,
                               topo_err *err) TOPO_MUST_CHECK;

/* The same over text already in memory; relative paths resolve against
 * base_dir (NULL: the current directory), source names it in errors. */
int topo_k8s_config_kubeconfig_text(topo_k8s_config *out, const char *text, size_t len,
                                    const char *source, const char *base_dir,
                                    const char *context, topo_err *err) TOPO_MUST_CHECK;

/* One kubeconfig file of a merge, already in memory. */
typedef struct topo_k8s_kubeconfig_file {
    const char *text;
    size_t len;
    const char *source;   /* the file, in errors */
    const char *base_dir; /* its relative paths resolve against it (NULL: the current one) */
} topo_k8s_kubeconfig_file;

/* Several kubeconfigs merged as kubectl merges the files of $KUBECONFIG
 * (client-go clientcmd's loading rules): a cluster, context or user is the
 * whole entry of the first file that defines its name (nothing of a later
 * file's entry of the same name); current-context is the first file's that
 * sets it; each entry's relative paths resolve against its own file's
 * directory. Then as topo_k8s_config_kubeconfig. Every file must parse
 * (an empty one is an empty configuration); errors name the file holding
 * the entry; source gets the files joined with ':'. */
int topo_k8s_config_kubeconfig_merge(topo_k8s_config *out,
                                     const topo_k8s_kubeconfig_file *files, size_t n,
                                     const char *context, topo_err *err) TOPO_MUST_CHECK;

/* Where the command-line tools and the daemons find the API server without
 * --kubeconfig, for their option tables (one text, docs/cli). */
#define TOPO_K8S_CONFIG_DEFAULT_HELP \
    "the files of $KUBECONFIG merged, else ~/.kube/config, else in-cluster"

/* kubectl's loading rules (client-go clientcmd): kubeconfig_path alone
 * when non-NULL (it must exist); else the files of $KUBECONFIG (a
 * ':'-separated list: empty entries and missing files skipped, the others
 * merged as topo_k8s_config_kubeconfig_merge); else ~/.kube/config when it
 * exists; else, and also when those files define nothing at all (no
 * current-context, no entries), in-cluster configuration (a pod's service
 * account). A kubeconfig found wins over in-cluster, as in kubectl. */
int topo_k8s_config_load(topo_k8s_config *out, const char *kubeconfig_path,
                         topo_err *err) TOPO_MUST_CHECK;
/* The same with a kubeconfig context (NULL: current-context, as above):
 * kubectl's --context. With a context, in-cluster configuration is never
 * used (a pod's service account is no context), and no kubeconfig is
 * TOPO_ENOTFOUND naming the context. */
int topo_k8s_config_load_context(topo_k8s_config *out, const char *kubeconfig_path,
                                 const char *context, topo_err *err) TOPO_MUST_CHECK;

/* ------------------------------------------------------------------ client */

typedef struct topo_k8s topo_k8s;

/* Passed on to the client's topo_http_opts: a field left 0 (or NULL) gets
 * the HTTP client's default (TOPO_HTTP_*_DEFAULT in topo/http.h). */
typedef struct topo_k8s_opts {
    double qps;             /* as component-base; negative: unlimited */
    double burst;
    long timeout_ms;        /* one request (not watches) */
    int max_retries;        /* HTTP-level retries; negative: none */
    long backoff_base_ms;
    long backoff_max_ms;
    long token_reload_ms;
    const char *user_agent;
} topo_k8s_opts;

/* opts may be NULL (defaults). The config is copied. */
int topo_k8s_create(topo_k8s **out, const topo_k8s_config *cfg, const topo_k8s_opts *opts,
                    topo_err *err) TOPO_MUST_CHECK;
void topo_k8s_free(topo_k8s *k);

/* The config's namespace (in-cluster: the pod's), or NULL. Borrowed. */
const char *topo_k8s_namespace(const topo_k8s *k);

/* The client's HTTP counters (topo_http_get_stats); not thread-safe against
 * a request running on another thread. */
struct topo_http_stats;
void topo_k8s_get_http_stats(const topo_k8s *k, struct topo_http_stats *out);

/* Overrides the per-request timeout of later non-watch calls (0: the
 * client's default). The leader election bounds its calls with this. */
void topo_k8s_set_timeout(topo_k8s *k, long timeout_ms);

/* A resource type. ns arguments: the namespace of a namespaced resource;
 * NULL for cluster-scoped ones, and for list/watch across all namespaces. */
typedef struct topo_k8s_resource {
    const char *group;   /* "" for core */
    const char *version; /* "v1" */
    const char *plural;  /* "nodes" */
    const char *kind;    /* "Node" */
    int namespaced;
} topo_k8s_resource;

extern const topo_k8s_resource topo_k8s_nodes;  /* core/v1 Node */
extern const topo_k8s_resource topo_k8s_pods;   /* core/v1 Pod */
extern const topo_k8s_resource topo_k8s_jobs;   /* batch/v1 Job */
extern const topo_k8s_resource topo_k8s_leases; /* coordination.k8s.io/v1 Lease */
extern const topo_k8s_resource topo_k8s_events; /* core/v1 Event (topo/k8s_event.h) */
extern const topo_k8s_resource topo_k8s_configmaps; /* core/v1 ConfigMap */

/* Items per list page unless told otherwise (client-go pager, Gatekeeper). */
#define TOPO_K8S_PAGE_DEFAULT 500

/* The request path for a resource ("/apis/batch/v1/namespaces/ml/jobs/j1"),
 * name and namespace URL-escaped; name may be NULL (the collection). *out is
 * malloc'd. */
int topo_k8s_path(char **out, const topo_k8s_resource *res, const char *ns, const char *name,
                  topo_err *err) TOPO_MUST_CHECK;

/* The topo_code for an API response: 2xx 0, else by status (as in the header
 * comment), with "<what>: <status> <reason>: <message>" from the Status body
 * (or the body's start when it is not a Status) in err. */
int topo_k8s_status_error(long status, const char *body, size_t len, const char *what,
                          topo_err *err);

/* GET one object. */
int topo_k8s_get(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                 const char *name, topo_err *err) TOPO_MUST_CHECK;

/* Metadata-only answers (kube-apiserver since 1.15, what client-go's
 * metadata client asks for): a list as a PartialObjectMetadataList
 * (apiVersion meta.k8s.io/v1), each item {"kind": "PartialObjectMetadata",
 * "apiVersion": "meta.k8s.io/v1", "metadata": {...}}: the object's whole
 * metadata and nothing else; a watch's event objects (and a get) as
 * PartialObjectMetadata. A Node's status (its images: tens of kilobytes)
 * is not sent.
 *
 * A server that cannot (an aggregated API server, one older than 1.15)
 * answers 406 Not Acceptable: the client then asks again for full objects,
 * logs it once, and asks this client's later lists and watches for full
 * objects too. Callers read metadata.* only and take either shape. */
#define TOPO_K8S_ACCEPT_METADATA_LIST \
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#define TOPO_K8S_ACCEPT_METADATA "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

/* Whether the server refused a metadata-only answer (406) to this client:
 * its lists and watches get full objects since. */
int topo_k8s_metadata_refused(const topo_k8s *k);

typedef struct topo_k8s_list_opts {
    const char *label_selector;   /* "app=x,tier notin (a,b)", or NULL */
    const char *field_selector;   /* "spec.nodeName=n1", or NULL */
    unsigned int limit;           /* page size, 0: TOPO_K8S_PAGE_DEFAULT */
    const char *resource_version; /* first page: NULL most recent, "0" any */
    int metadata_only;            /* items as PartialObjectMetadata (above) */
    /* Out, may be NULL: set to 1 once a page is asked for with a continue
     * token, so that a caller told TOPO_EGONE knows whether the token
     * expired (restart the list) or the list itself was refused. */
    int *continued;
} topo_k8s_list_opts;

/* Called once per item (borrowed; items of a list carry no kind/apiVersion).
 * Non-zero stops the list and is returned as is. */
typedef int (*topo_k8s_item_fn)(json_t *item, void *payload);

/* LIST, page by page (limit + continue), calling fn for each item. rv_out
 * (may be NULL) gets the list's resourceVersion: the snapshot every page
 * belongs to, to watch from. TOPO_EGONE when a continue token expired
 * (compaction) in the middle: the items seen so far are to be discarded and
 * the list restarted (opts->continued tells it from a 410 to the first page,
 * which is the server failing, to be retried with backoff like a 5xx).
 * opts may be NULL. */
int topo_k8s_list(char rv_out[TOPO_K8S_RV_MAX], topo_k8s *k, const topo_k8s_resource *res,
                  const char *ns, const topo_k8s_list_opts *opts, topo_k8s_item_fn fn,
                  void *payload, topo_err *err) TOPO_MUST_CHECK;

typedef enum topo_k8s_event_type {
    TOPO_K8S_ADDED = 1,
    TOPO_K8S_MODIFIED = 2,
    TOPO_K8S_DELETED = 3,
    TOPO_K8S_BOOKMARK = 4 /* object has only kind, apiVersion, metadata.resourceVersion */
} topo_k8s_event_type;

/* "ADDED", "MODIFIED", "DELETED", "BOOKMARK". */
const char *topo_k8s_event_name(topo_k8s_event_type type);

typedef struct topo_k8s_watch_opts {
    const char *label_selector;
    const char *field_selector;
    long timeout_seconds;  /* the server ends the watch then; 0: random 300..599 (reflector) */
    int no_bookmarks;      /* non-zero: do not ask for bookmarks */
    const atomic_int *stop; /* non-zero ends the watch (within about a second) */
    int metadata_only;      /* event objects as PartialObjectMetadata (above) */
} topo_k8s_watch_opts;

/* Called per event with the object (borrowed). Non-zero stops the watch and
 * is returned as is; rv then stays at the previous event. */
typedef int (*topo_k8s_event_fn)(topo_k8s_event_type type, json_t *object, void *payload);

/* WATCH from rv (in/out: "" or "0" sends the current objects as ADDED
 * first) with allowWatchBookmarks. After each event fn accepted, and each
 * bookmark, rv holds that event's resourceVersion, so a watch that ends for
 * any reason resumes from rv. Returns 0 when the server ended the stream
 * (timeoutSeconds) or opts->stop was set, TOPO_EGONE on HTTP 410 or an
 * in-stream ERROR event with code 410 (relist, then watch from the list's
 * rv), another code for other ERROR events or HTTP errors, TOPO_ECONNECT /
 * TOPO_ETIMEOUT when the stream broke or went silent. opts may be NULL. */
int topo_k8s_watch(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                   char rv[TOPO_K8S_RV_MAX], const topo_k8s_watch_opts *opts,
                   topo_k8s_event_fn fn, void *payload, topo_err *err) TOPO_MUST_CHECK;

typedef enum topo_k8s_patch_type {
    TOPO_K8S_MERGE_PATCH = 1, /* application/merge-patch+json (RFC 7386) */
    TOPO_K8S_JSON_PATCH = 2,  /* application/json-patch+json (RFC 6902) */
    /* application/strategic-merge-patch+json: built-in kinds only; lists
     * with a merge key (a pod's status.conditions: type) are merged by it,
     * not replaced */
    TOPO_K8S_STRATEGIC_MERGE_PATCH = 3
} topo_k8s_patch_type;

/* PATCH. With resource_version non-NULL the write is conditional: a merge
 * patch (either kind) gets metadata.resourceVersion, a JSON patch a trailing
 * "replace /metadata/resourceVersion" op, and a stale version is
 * TOPO_ECONFLICT. out (may be NULL) gets the patched object. */
int topo_k8s_patch(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                   const char *name, topo_k8s_patch_type type, const json_t *patch,
                   const char *resource_version, topo_err *err) TOPO_MUST_CHECK;
/* The same on a subresource of the object: .../<name>/<subresource>
 * ("status": only the object's status changes; metadata in the patch is
 * its preconditions: resourceVersion, and a uid that is not the stored
 * object's is TOPO_ECONFLICT). NULL: the object itself. */
int topo_k8s_patch_subresource(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                               const char *ns, const char *name, const char *subresource,
                               topo_k8s_patch_type type, const json_t *patch,
                               const char *resource_version, topo_err *err) TOPO_MUST_CHECK;

/* A JSON patch (RFC 6902, no resourceVersion) that guards itself: its
 * "test" operations no longer hold once it has applied (the gate tested at
 * its index, then removed: topo_admission_release_patch). Such a patch is
 * safe to send again, so the HTTP client retries it as it retries GET and
 * PUT: after a 5xx (but 501), honouring Retry-After, and after a
 * connection lost once the request went out (topo/http.h resend_safe);
 * a resend of a patch that had applied is then refused (422, TOPO_EINVALID)
 * like any stale one. */
int topo_k8s_patch_guarded(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                           const char *ns, const char *name, const json_t *patch,
                           topo_err *err) TOPO_MUST_CHECK;

/* Builds the patch to apply to current (borrowed). Sets *patch_out to a new
 * reference, or to NULL when nothing needs to change; returns 0 or a code
 * (which stops the retries and is returned). */
typedef int (*topo_k8s_patch_build_fn)(json_t **patch_out, const json_t *current,
                                       void *payload, topo_err *err);

/* Read-modify-write: GET, build, PATCH with the read resourceVersion as the
 * precondition; on TOPO_ECONFLICT read again, up to max_attempts (0: 5)
 * times. out (may be NULL) gets the resulting object (the current one when
 * build asked for no change). */
int topo_k8s_patch_retry(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                         const char *ns, const char *name, topo_k8s_patch_type type,
                         int max_attempts, topo_k8s_patch_build_fn build, void *payload,
                         topo_err *err) TOPO_MUST_CHECK;

/* POST (TOPO_ECONFLICT when it exists). out may be NULL. */
int topo_k8s_create_object(json_t **out, topo_k8s *k, const topo_k8s_resource *res,
                           const char *ns, const json_t *object, topo_err *err) TOPO_MUST_CHECK;
/* PUT object (its metadata.name names it; its metadata.resourceVersion is
 * the precondition: stale → TOPO_ECONFLICT). out may be NULL. */
int topo_k8s_update(json_t **out, topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                    const json_t *object, topo_err *err) TOPO_MUST_CHECK;
/* DELETE, with an optional resourceVersion precondition. */
int topo_k8s_delete(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                    const char *name, const char *resource_version,
                    topo_err *err) TOPO_MUST_CHECK;

/* ------------------------------------------------------------------ leader election */

typedef struct topo_leader topo_leader;

/* How the elector reads and writes its Lease; the default goes through a
 * topo_k8s client. Tests plug in an in-memory one. Results as for the verbs
 * above (TOPO_ENOTFOUND, TOPO_ECONFLICT, ...). */
typedef struct topo_leader_backend {
    int (*get)(json_t **out, void *ctx, const char *ns, const char *name, topo_err *err);
    int (*create)(json_t **out, void *ctx, const char *ns, const json_t *lease, topo_err *err);
    int (*update)(json_t **out, void *ctx, const char *ns, const json_t *lease, topo_err *err);
    void *ctx;
} topo_leader_backend;

/* client-go's leader election defaults. */
#define TOPO_LEADER_LEASE_MS_DEFAULT 15000L
#define TOPO_LEADER_RENEW_DEADLINE_MS_DEFAULT 10000L
#define TOPO_LEADER_RETRY_MS_DEFAULT 2000L

/* A field left 0 (or NULL) gets the default named beside it. */
typedef struct topo_leader_opts {
    const char *lease_namespace; /* the client's namespace, else "default" */
    const char *lease_name;      /* required */
    const char *identity;        /* "<hostname>_<pid>" */
    long lease_ms;               /* TOPO_LEADER_LEASE_MS_DEFAULT (leaseDurationSeconds,
                                  * rounded up) */
    long renew_deadline_ms;      /* TOPO_LEADER_RENEW_DEADLINE_MS_DEFAULT; < lease_ms */
    long retry_ms;               /* TOPO_LEADER_RETRY_MS_DEFAULT; < renew_deadline_ms */
    int release_on_stop;         /* topo_leader_run clears the holder when stopped */
    const topo_leader_backend *backend; /* the topo_k8s client */
} topo_leader_opts;

/* k may be NULL when opts->backend is set; it is borrowed and must be used by
 * this elector only (its own thread). Strings are copied. */
int topo_leader_create(topo_leader **out, topo_k8s *k, const topo_leader_opts *opts,
                       topo_err *err) TOPO_MUST_CHECK;
void topo_leader_free(topo_leader *l);

const char *topo_leader_identity(const topo_leader *l);

/* One election step at now_ms (topo_clock_ms, the monotonic clock, supplied
 * by the caller; tests drive it by hand). Reads the Lease; creates it when
 * absent; takes it when free or expired (its holder and resourceVersion did
 * not change for leaseDurationSeconds of local time since this elector
 * first saw them); renews it when held, by an update whose resourceVersion
 * is the precondition (TOPO_ECONFLICT: another candidate won). *is_leader
 * (may be NULL) gets whether this process may act as leader at now_ms: only
 * until renew_deadline_ms after the start of the last successful renew, so
 * a leader that cannot renew stops before another can take the lease.
 * Returns 0 or the error of the API call (the leadership state stays right:
 * a failed renew keeps it until the deadline). Call it every retry_ms. */
int topo_leader_tick(topo_leader *l, int64_t now_ms, int *is_leader, topo_err *err);

/* The longest holderIdentity topo_leader_holder reports. */
#define TOPO_LEADER_HOLDER_MAX 255

/* The Lease's holder as this elector last read it (this process's identity
 * when it leads), copied into buf: 1 while that holder's lease runs by this
 * process's clock (leaseDurationSeconds since the record last changed), 0
 * (buf "") when nobody holds it, it expired, or nothing was read yet. Lets a
 * follower find the leader (topo-webhook forwards to it). Safe to call from
 * other threads than the ticking one. */
int topo_leader_holder(topo_leader *l, int64_t now_ms, char *buf, size_t size);

/* Whether this elector has read the Lease (or written it) at least once,
 * so that topo_leader_holder and topo_leader_is_leader say who leads rather
 * than "nothing read yet": 0 until a step got a record (a failed read, or a
 * create lost to another candidate, leave it 0). Any thread. */
int topo_leader_known(const topo_leader *l);

/* Whether the current (or last) leadership began by taking a Lease that
 * existed — another process may have acted just before — rather than by
 * creating it, or by renewing our own record after a restart. Any thread. */
int topo_leader_took_over(const topo_leader *l);

/* spec.leaseTransitions of the Lease as this process last took or renewed
 * it (0 before): every change of holder raises it, so a later leader's term
 * is higher than any earlier one's. Any thread. */
int64_t topo_leader_term(const topo_leader *l);

/* Whether this process may act as leader at now_ms (the same clock as
 * topo_leader_tick). Safe to call from other threads than the ticking one. */
int topo_leader_is_leader(const topo_leader *l, int64_t now_ms);

/* Gives the lease up if held: stops acting first, then clears holderIdentity
 * (so a candidate takes over at its next retry instead of after
 * leaseDurationSeconds). Only safe when the process stops acting for good. */
int topo_leader_release(topo_leader *l, int64_t now_ms, topo_err *err);

/* Called on every change of leadership, from the thread running the loop. */
typedef void (*topo_leader_change_fn)(int is_leader, void *payload);

/* The blocking loop: ticks every retry_ms (sooner when the renew deadline
 * falls in between, to report the loss on time) until *stop is non-zero,
 * calling on_change on transitions; then releases the lease when
 * release_on_stop is set and reports not-leader. Errors of single steps are
 * logged and retried; returns 0 once stopped. */
int topo_leader_run(topo_leader *l, const atomic_int *stop,
                    topo_leader_change_fn on_change, void *payload, topo_err *err);

#endif
