/* Exec credential plugins of a kubeconfig user (`users[].user.exec`), as
 * client-go runs them (k8s.io/client-go/plugin/pkg/client/auth/exec): the
 * command (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`) is run
 * without a shell, with KUBERNETES_EXEC_INFO (an ExecCredential) in its
 * environment, and prints an ExecCredential whose status holds a bearer
 * token or a client certificate and key, and optionally when it expires.
 *
 * Parsing (lib/net/kubeconfig.c fills a topo_exec_spec) and running are
 * separate steps: topo_exec_cred_create starts nothing; the plugin runs
 * when a request first needs the credential (topo_exec_cred_get), again
 * once it has expired, and once after the API server answered 401 to it
 * (topo_exec_cred_renew).
 *
 * Threads: one topo_exec_cred is shared by every HTTP client made from one
 * configuration (each holds a reference); its cached credential is guarded
 * by a mutex and at most one plugin runs at a time for it (the others wait
 * for its result). Bounds: the plugin's stdout is read up to
 * TOPO_MAX_EXEC_OUTPUT bytes and it is killed after
 * TOPO_EXEC_TIMEOUT_MS_DEFAULT (non-interactive) or
 * TOPO_EXEC_INTERACTIVE_TIMEOUT_MS_DEFAULT ms (client-go has no timeout; a
 * daemon's thread must not hang); the environment variable
 * TOPO_EXEC_TIMEOUT_MS overrides both. */
#ifndef TOPO_EXEC_CRED_H
#define TOPO_EXEC_CRED_H

#include <stddef.h>
#include <stdint.h>

#include "topo/error.h"

#define TOPO_EXEC_API_V1 "client.authentication.k8s.io/v1"
#define TOPO_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"
/* The name of a cluster extension passed to the plugin as
 * spec.cluster.config (with provideClusterInfo). */
#define TOPO_EXEC_CLUSTER_EXTENSION "client.authentication.k8s.io/exec"

#define TOPO_EXEC_TIMEOUT_MS_DEFAULT 60000L
#define TOPO_EXEC_INTERACTIVE_TIMEOUT_MS_DEFAULT 600000L
/* A failed run is remembered: until this long after it (doubled for each
 * failure in a row, up to the max) every caller gets the same failure
 * without the plugin running again (a daemon's list loops and leader
 * election must not run a failing `aws eks get-token` in a tight loop,
 * nor prompt an interactive login again and again). */
#define TOPO_EXEC_FAILURE_BACKOFF_MS_DEFAULT 5000L
#define TOPO_EXEC_FAILURE_BACKOFF_MAX_MS_DEFAULT 300000L

typedef enum topo_exec_interactive_mode {
    TOPO_EXEC_NEVER = 1,        /* stdin is /dev/null */
    TOPO_EXEC_IF_AVAILABLE = 2, /* our stdin when it is a terminal (v1beta1's default) */
    TOPO_EXEC_ALWAYS = 3        /* our stdin, which must be a terminal */
} topo_exec_interactive_mode;

typedef struct topo_exec_env {
    char *name;
    char *value;
} topo_exec_env;

/* An exec block and the cluster it authenticates to; every string
 * malloc'd, NULL when unset; `= {0}` is empty. */
typedef struct topo_exec_spec {
    char *api_version; /* TOPO_EXEC_API_V1 or TOPO_EXEC_API_V1BETA1 */
    char *command;     /* a path (resolved against the kubeconfig's directory
                          when relative with a '/') or a name searched in PATH */
    char **args;
    size_t nargs;
    topo_exec_env *env; /* set over the process's environment */
    size_t nenv;
    char *install_hint; /* shown when the command is missing */
    topo_exec_interactive_mode interactive_mode;
    int provide_cluster_info;
    /* The cluster, for spec.cluster of KUBERNETES_EXEC_INFO. */
    char *server;
    char *ca_data; /* PEM text, or NULL */
    char *ca_file; /* read when the plugin runs, or NULL */
    int insecure_skip_verify;
    char *cluster_config; /* JSON text of the cluster's TOPO_EXEC_CLUSTER_EXTENSION, or NULL */
} topo_exec_spec;

void topo_exec_spec_dispose(topo_exec_spec *spec);

/* A credential a plugin returned; strings malloc'd (the secrets are wiped
 * when disposed), NULL when absent. */
typedef struct topo_exec_credential {
    char *token;
    char *client_cert_data; /* PEM */
    char *client_key_data;  /* PEM */
    int64_t expires;        /* seconds since the epoch; 0: until a 401 */
    uint64_t generation;    /* which run of the plugin gave it; 0: none yet */
} topo_exec_credential;

void topo_exec_credential_dispose(topo_exec_credential *cred);

/* Decodes what a plugin printed: an ExecCredential of api_version, with a
 * status holding a token, or a client certificate and its key (PEM, a
 * matching pair), or both; expirationTimestamp RFC 3339 when present.
 * TOPO_EINVALID naming the field ("status.expirationTimestamp: ...") for
 * anything else. Runs nothing: the fuzzer's entry. */
int topo_exec_credential_decode(topo_exec_credential *out, const char *text, size_t len,
                                const char *api_version, topo_err *err) TOPO_MUST_CHECK;

typedef struct topo_exec_cred topo_exec_cred;

/* Takes the spec's contents (the spec is left empty, also on failure).
 * Starts nothing. TOPO_EINVALID for a spec without api_version, command or
 * interactive mode. */
int topo_exec_cred_create(topo_exec_cred **out, topo_exec_spec *spec,
                          topo_err *err) TOPO_MUST_CHECK;
/* One more reference (each HTTP client holds one); returns c. */
topo_exec_cred *topo_exec_cred_incref(topo_exec_cred *c);
/* Drops a reference; the last one frees. NULL is a no-op. */
void topo_exec_cred_free(topo_exec_cred *c);

/* The command, for messages. */
const char *topo_exec_cred_command(const topo_exec_cred *c);
/* What the plugin is run with (borrowed; fixed once created). */
const topo_exec_spec *topo_exec_cred_spec(const topo_exec_cred *c);

/* The credential to send now, into the caller's copy *cur (zeroed before
 * the first call): runs the plugin when nothing is cached or the cached one
 * has expired. Returns 1 when *cur was replaced by a newer credential, 0
 * when *cur is still the current one, or the plugin's failure: TOPO_EAUTH
 * with a message ("exec plugin: executable aws not found ...", its exit
 * status, timeout, output over the limit, garbage output), or
 * TOPO_ENOMEM. A failure is remembered (TOPO_EXEC_FAILURE_BACKOFF_MS_DEFAULT):
 * meanwhile every call answers it again, same code and message, without
 * running the plugin. */
int topo_exec_cred_get(topo_exec_credential *cur, topo_exec_cred *c, topo_err *err);

/* After the API server refused *cur with 401: runs the plugin again unless
 * another client already replaced that credential since, then as
 * topo_exec_cred_get (1: *cur replaced). */
int topo_exec_cred_renew(topo_exec_credential *cur, topo_exec_cred *c, topo_err *err);

/* The failure back-off (tests; a daemon that wants another): base_ms <= 0
 * is the default; max_ms is at least base_ms. */
void topo_exec_cred_set_failure_backoff(topo_exec_cred *c, long base_ms, long max_ms);

/* How many times the plugin ran (successfully or not). */
uint64_t topo_exec_cred_runs(const topo_exec_cred *c);

#endif
