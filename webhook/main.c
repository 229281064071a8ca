/* topo-webhook: the mutating admission webhook's process (flags, logging,
 * signals, the owner loop). The HTTPS transport is server.c; what pods are
 * placed with (configuration, live snapshots, cache, filler, ungater) is
 * placement.c; the admission decision is lib/admission. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "handler_noop.h"
#include "handler_passthrough.h"
#include "placement.h"
#include "server.h"
#include "watchdog.h"
#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/limits.h"
#include "topo/log.h"

/* After --shutdown-timeout, stopping the daemons and freeing may take this
 * long before the watchdog ends the process. */
#define WH_SHUTDOWN_MARGIN_MS 2000

static const char usage[] =
    "usage: topo-webhook --tls-cert-file FILE --tls-private-key-file FILE [options]\n"
    "\n"
    "  --port N                 HTTPS port for POST /mutate (default 9443)\n"
    "  --health-port N          plain HTTP port for /healthz, /livez, /readyz, /metrics\n"
    "                           (default 8081; /metrics moves with --metrics-port)\n"
    "  --tls-cert-file FILE     serving certificate (PEM); reloaded when it changes\n"
    "  --tls-private-key-file FILE  its private key (PEM)\n"
    "  --max-connections-per-client N  HTTPS connections from one address (default\n"
    "                           256; 1024 in all): one client cannot take them all\n"
    "  --health-address IP      the health port's address (default: every interface;\n"
    "                           the chart gives the pod's IP)\n"
    "  --metrics-port N         serve /metrics on this plain HTTP port instead of the\n"
    "                           health port (default: on the health port)\n"
    "  --metrics-address IP     the metrics port's address (default: every interface)\n"
    "  --header-timeout S       a connection's TLS handshake and request headers must be\n"
    "                           done within S seconds of its accept (default 10)\n"
    "  --min-body-rate B        bytes/s a request body must keep to after a 5 s grace\n"
    "                           (default 65536; 0: no bound); slower clients are cut\n"
    "  --idle-timeout S         keep-alive: a connection's next request must be in\n"
    "                           within S seconds of its last response (default 90)\n"
    "  --tls-priorities STRING  GnuTLS priority string (default: TLS 1.3, and TLS 1.2\n"
    "                           with ECDHE/DHE and AEAD ciphers only)\n"
    "  --threads N              request threads (default: online cores)\n"
    "  --cert-check-interval S  seconds between certificate file checks (default 2)\n"
    "  --shutdown-timeout S     on SIGTERM, wait at most this for in-flight requests\n"
    "                           (default 15); 2 s after it the process ends (exit 1)\n"
    "                           even if a request handler still runs\n"
    "  --request-timeout S      a request's deadline when the API server's ?timeout=\n"
    "                           is longer or absent (default 10, at most 30): past it,\n"
    "                           placement stops before storing anything (504)\n"
    "  --max-body-memory MIB    request bodies held at once, over all connections\n"
    "                           (default 256); beyond it a request gets 503\n"
    "  --log-format json|text   json: one JSON object per line (default); text: logfmt\n"
    "  -v, --verbosity LEVEL    debug, info, warn, error (default info)\n"
    "\n";
/* Two parts: C11 promises string literals of 4095 bytes only. */
static const char usage_placement[] =
    "Placement (without --config or --levels every request is allowed unchanged):\n"
    "  --config FILE            topologies and policies (YAML, docs/webhook.md)\n"
    "  --levels L1,L2,...       instead of --config: one topology \"default\" over all\n"
    "                           nodes with these level labels, coarsest first\n"
    "  --policy gate|deny|ignore  with --levels: when a PodSet does not fit, gate\n"
    "                           (default) adds the scheduling gate topology.topo.io/wait;\n"
    "                           deny refuses the pod (403); ignore admits it unchanged\n"
    "  --kubeconfig FILE        the API server (default: $KUBECONFIG, in-cluster,\n"
    "                           ~/.kube/config): nodes, pods and jobs by list+watch\n"
    "  --db FILE                the SQLite cache (nodes, pods, jobs, reservations);\n"
    "                           required with an API server\n"
    "  --inventory FILE         instead of an API server: static nodes (kubectl get\n"
    "                           nodes -o json, or a fixture YAML) for demos, tests and\n"
    "                           benchmarks; reservations in --db, or in memory\n"
    "  --pods FILE              with --inventory: pods using capacity\n"
    "  --ungate-interval S      seconds between retries of gated PodSets (default: the\n"
    "                           config's, 5)\n"
    "  --leader-elect true|false  the ungater runs on the replica holding the Lease\n"
    "                           topo-webhook-ungater (default true)\n"
    "  --lease-namespace NS     the Lease's namespace (default: the pod's)\n"
    "  --resource-quotas true|false  with an API server: capacity reserved for a\n"
    "                           PodSet's pods not created yet counts against their\n"
    "                           namespace's ResourceQuotas, kept by list+watch (default\n"
    "                           true; needs list and watch on resourcequotas)\n"
    "  --noop                   benchmark floor only: answer every request with a fixed\n"
    "                           allowed response, body unread (bench/webhook)\n";

/* --request-timeout, in ms: the cap on a request's deadline. */
static long long request_cap_ms = 10000;

/* The server's handler signature over topo_admission_handle_until. */
static int handle_admission(void *ctx, const char *body, size_t len, char **out_body,
                            size_t *out_len, int *out_status)
{
    const topo_wh_request *req = ctx;
    /* Past the API server's ?timeout= nobody reads the answer: skip the
     * work (a queue built up under overload drains faster). */
    if (req->timeout_ms > 0 && req->start_ns > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long waited_ms = ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - req->start_ns) /
                              1000000LL;
        if (waited_ms >= req->timeout_ms) {
            static const char msg[] = "{\"error\":\"the API server's timeout passed\"}";
            *out_body = strdup(msg);
            *out_len = *out_body ? strlen(msg) : 0;
            *out_status = 504;
            return *out_body ? 0 : -1;
        }
    }
    /* The deadline: the API server's, capped by ours; enforced while the
     * request waits for the placement lock and before it stores. */
    long long budget_ms = req->timeout_ms > 0 && req->timeout_ms < request_cap_ms
                              ? req->timeout_ms
                              : request_cap_ms;
    int64_t deadline = req->start_ns > 0 ? req->start_ns + budget_ms * 1000000LL : 0;
    return topo_admission_handle_until(req->user, deadline, body, len, out_body, out_len,
                                       out_status);
}

static int parse_uint(unsigned long *out, const char *s, unsigned long max)
{
    char *end = NULL;
    errno = 0;
    if (!s || *s == '-' || *s == '\0')
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(int *out, const char *s)
{
    if (strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    topo_wh_server_opts opts = TOPO_WH_SERVER_OPTS_INIT;
    wh_placement_opts popts;
    const char *log_format = "json";
    const char *verbosity = "info";
    unsigned long shutdown_s = 15, check_s = 2, ungate_s = 0;
    topo_wh_server *srv = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *config_file = NULL, *levels = NULL;
    topo_admission_config *cfg = NULL;
    wh_placement *pl = NULL;
    int policy_set = 0, quotas_set = 0;
    topo_admission_policy policy = TOPO_ADMISSION_POLICY_GATE;
    int rc = 2, noop = 0;

    memset(&popts, 0, sizeof popts);
    popts.leader_election = 1;
    popts.resource_quotas = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long n = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            fputs(usage_placement, stdout);
            return 0;
        }
        if (strcmp(a, "--noop") == 0) {
            noop = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "topo-webhook: %s: missing value or unknown option\n%s%s", a, usage,
                    usage_placement);
            return 2;
        }
        i++;
        if (strcmp(a, "--port") == 0 && parse_uint(&n, v, 65535) == 0 && n > 0)
            opts.port = (int)n;
        else if (strcmp(a, "--health-port") == 0 && parse_uint(&n, v, 65535) == 0 && n > 0)
            opts.health_port = (int)n;
        else if (strcmp(a, "--tls-cert-file") == 0)
            opts.cert_file = v;
        else if (strcmp(a, "--tls-private-key-file") == 0)
            opts.key_file = v;
        else if (strcmp(a, "--threads") == 0 && parse_uint(&n, v, 1024) == 0 && n > 0)
            opts.threads = (unsigned int)n;
        else if (strcmp(a, "--cert-check-interval") == 0 && parse_uint(&n, v, 3600) == 0 &&
                 n > 0)
            check_s = n;
        else if (strcmp(a, "--shutdown-timeout") == 0 && parse_uint(&n, v, 3600) == 0)
            shutdown_s = n;
        else if (strcmp(a, "--request-timeout") == 0 && parse_uint(&n, v, 30) == 0 && n > 0)
            request_cap_ms = (long long)n * 1000;
        else if (strcmp(a, "--max-body-memory") == 0 && parse_uint(&n, v, 65536) == 0 && n > 0)
            opts.max_body_bytes_held = (size_t)n << 20;
        else if (strcmp(a, "--max-connections-per-client") == 0 &&
                 parse_uint(&n, v, 65535) == 0 && n > 0)
            opts.max_connections_per_client = (unsigned int)n;
        else if (strcmp(a, "--tls-priorities") == 0 && v[0] != '\0')
            opts.tls_priorities = v;
        else if (strcmp(a, "--health-address") == 0 && v[0] != '\0')
            opts.health_address = v;
        else if (strcmp(a, "--metrics-port") == 0 && parse_uint(&n, v, 65535) == 0 && n > 0)
            opts.metrics_port = (int)n;
        else if (strcmp(a, "--metrics-address") == 0 && v[0] != '\0')
            opts.metrics_address = v;
        else if (strcmp(a, "--header-timeout") == 0 && parse_uint(&n, v, 3600) == 0 && n > 0)
            opts.header_timeout_s = (unsigned int)n;
        else if (strcmp(a, "--min-body-rate") == 0 && parse_uint(&n, v, 1UL << 30) == 0)
            opts.min_body_rate = n;
        else if (strcmp(a, "--idle-timeout") == 0 && parse_uint(&n, v, 3600) == 0 && n > 0)
            opts.idle_timeout_s = (unsigned int)n;
        else if (strcmp(a, "--log-format") == 0 &&
                 (strcmp(v, "json") == 0 || strcmp(v, "text") == 0))
            log_format = v;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbosity") == 0)
            verbosity = v;
        else if (strcmp(a, "--config") == 0)
            config_file = v;
        else if (strcmp(a, "--levels") == 0)
            levels = v;
        else if (strcmp(a, "--policy") == 0 && topo_admission_policy_parse(&policy, v) == 0)
            policy_set = 1;
        else if (strcmp(a, "--inventory") == 0)
            popts.inventory = v;
        else if (strcmp(a, "--pods") == 0)
            popts.pods = v;
        else if (strcmp(a, "--kubeconfig") == 0)
            popts.kubeconfig = v;
        else if (strcmp(a, "--db") == 0)
            popts.db_path = v;
        else if (strcmp(a, "--ungate-interval") == 0 && parse_uint(&n, v, 600) == 0 && n > 0)
            ungate_s = n;
        else if (strcmp(a, "--leader-elect") == 0 && parse_bool(&popts.leader_election, v) == 0)
            ;
        else if (strcmp(a, "--lease-namespace") == 0 && *v)
            popts.lease_namespace = v;
        else if (strcmp(a, "--resource-quotas") == 0 &&
                 parse_bool(&popts.resource_quotas, v) == 0)
            quotas_set = 1;
        else {
            fprintf(stderr, "topo-webhook: bad option or value: %s %s\n%s%s", a, v, usage,
                    usage_placement);
            return 2;
        }
    }
    topo_log_level level;
    if (topo_log_level_parse(&level, verbosity, &err) < 0) {
        fprintf(stderr, "topo-webhook: %s\n", err.text);
        return 2;
    }
    topo_log_set_level(level);
    (void)topo_log_use_format(log_format, NULL); /* json or text: checked when parsed */
    if (!opts.cert_file || !opts.key_file) {
        fprintf(stderr, "topo-webhook: --tls-cert-file and --tls-private-key-file are required\n");
        return 2;
    }
    if (config_file && levels) {
        fprintf(stderr, "topo-webhook: --config and --levels exclude each other\n");
        return 2;
    }
    if (policy_set && !levels) {
        fprintf(stderr, "topo-webhook: --policy goes with --levels (a --config file sets "
                        "defaultPolicy and per-topology policies)\n");
        return 2;
    }
    if (!config_file && !levels &&
        (popts.inventory || popts.pods || popts.db_path || popts.kubeconfig)) {
        fprintf(stderr, "topo-webhook: placement needs --config FILE or --levels L1,L2,...\n");
        return 2;
    }
    if (opts.metrics_address && !opts.metrics_port) {
        fprintf(stderr, "topo-webhook: --metrics-address goes with --metrics-port\n");
        return 2;
    }
    if (popts.pods && !popts.inventory) {
        fprintf(stderr, "topo-webhook: --pods goes with --inventory\n");
        return 2;
    }
    if (popts.inventory && popts.kubeconfig) {
        fprintf(stderr, "topo-webhook: --inventory and --kubeconfig exclude each other\n");
        return 2;
    }
    /* A static inventory has no API server to read quotas from. */
    if (popts.inventory && quotas_set && popts.resource_quotas) {
        fprintf(stderr, "topo-webhook: --resource-quotas true needs an API server, not "
                        "--inventory\n");
        return 2;
    }
    if (popts.inventory)
        popts.resource_quotas = 0;
    opts.cert_check_ms = (unsigned int)(check_s * 1000);
    opts.handle = topo_wh_handle_passthrough;

    if (config_file || levels) {
        int crc = config_file ? topo_admission_config_load_file(&cfg, config_file, &err)
                              : topo_admission_config_from_levels(&cfg, levels, &err);
        if (crc < 0) {
            fprintf(stderr, "topo-webhook: %s\n", err.text);
            return 2;
        }
        popts.config = cfg;
        popts.ungate_interval_ms = (long)ungate_s * 1000;
        popts.policy = policy_set ? (int)policy : -1;
    }

    /* Signals are taken synchronously by this thread only; every thread
     * started from here on inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    signal(SIGPIPE, SIG_IGN);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
        fprintf(stderr, "topo-webhook: cannot block signals\n");
        topo_admission_config_free(cfg);
        return 1;
    }

    if (cfg != NULL && wh_placement_start(&pl, &popts, &err) < 0) {
        topo_log(TOPO_LOG_ERROR, "cannot start: %s", err.text);
        topo_admission_config_free(cfg);
        return err.code == TOPO_EINVALID || err.code == TOPO_ENOTFOUND ? 2 : 1;
    }
    if (pl != NULL) {
        opts.handle = handle_admission;
        opts.handler_ctx = wh_placement_ctx(pl);
        opts.metrics_extra = wh_placement_metrics;
        opts.metrics_payload = pl;
    }
    if (noop)
        opts.handle = topo_wh_handle_noop;

    if (topo_wh_server_start(&srv, &opts, &err) < 0) {
        topo_log(TOPO_LOG_ERROR, "cannot start: %s", err.text);
        wh_placement_free(pl);
        topo_admission_config_free(cfg);
        return 1;
    }
    int ready = pl == NULL || wh_placement_ready(pl);
    topo_wh_server_set_ready(srv, ready);
    {
        char port[16], hport[16], threads[16];
        snprintf(port, sizeof port, "%d", opts.port);
        snprintf(hport, sizeof hport, "%d", opts.health_port);
        snprintf(threads, sizeof threads, "%u", opts.threads);
        const char *handler = noop ? "noop" : pl ? "admission" : "passthrough";
        const char *source = popts.inventory ? popts.inventory : pl ? "api-server" : "none";
        topo_log_field f[] = {{"port", port},
                              {"healthPort", hport},
                              {"threads", threads},
                              {"handler", handler},
                              {"source", source}};
        topo_log_kv(TOPO_LOG_INFO, f, 5, "serving");
    }

    /* The owner loop: signals, and a tick every 500 ms for certificate
     * checks, retired TLS generations, readiness and housekeeping. */
    for (unsigned long tick = 0;; tick++) {
        struct timespec wait = {0, 500 * 1000000L};
        int sig = sigtimedwait(&set, NULL, &wait);
        if (sig == SIGTERM || sig == SIGINT) {
            topo_log(TOPO_LOG_INFO, "%s: not ready, draining in-flight requests",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT");
            break;
        }
        topo_wh_server_tick(srv);
        if (pl != NULL) {
            int now_ready = wh_placement_ready(pl);
            if (now_ready != ready) {
                topo_log(now_ready ? TOPO_LOG_INFO : TOPO_LOG_WARN, "%s",
                         now_ready ? "cache synced: ready" : "cache not synced: not ready");
                topo_wh_server_set_ready(srv, now_ready);
                ready = now_ready;
            }
            if (tick % 2 == 1)
                wh_placement_tick(pl);
        }
    }
    /* Stopping the server joins its threads, which waits for a request
     * handler still running past the shutdown timeout: the watchdog ends the
     * process WH_SHUTDOWN_MARGIN_MS after it whatever the handler does. */
    wh_watchdog *dog = NULL;
    if (wh_watchdog_start(&dog, (long long)shutdown_s * 1000 + WH_SHUTDOWN_MARGIN_MS, 1,
                          "shutdown timeout passed and a request handler still runs: "
                          "exiting without it") < 0)
        topo_log(TOPO_LOG_WARN, "no shutdown watchdog (thread): a stuck handler can hold "
                                "the process past --shutdown-timeout");
    long left = topo_wh_server_shutdown(srv, (unsigned int)(shutdown_s * 1000));
    if (left > 0) {
        topo_log(TOPO_LOG_WARN, "stopped with %ld requests still in flight", left);
        rc = 1;
    } else {
        topo_log(TOPO_LOG_INFO, "stopped cleanly");
        rc = 0;
    }
    topo_wh_server_free(srv);
    wh_placement_free(pl);
    topo_admission_config_free(cfg);
    wh_watchdog_cancel(dog);
    return rc;
}
