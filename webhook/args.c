/* topo-webhook's option table and the checks between options (args.h). */
#include "args.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/k8s.h"
#include "topo/options.h"
#include "topo/version.h"
#include "peer.h"
#include "placer_lease.h"

#define O(field) offsetof(wh_args, field)

static const char *const policies[] = {"gate", "deny", "ignore", NULL};

static const char usage_line[] =
    "usage: topo-webhook --tls-cert-file FILE --tls-private-key-file FILE [options]";

static const topo_opt table[] = {
    {"--port", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "9443", "HTTPS port for POST /mutate",
     O(port), "Transport:"},
    TOPO_OPT_DAEMON_HEALTH_ROWS(wh_args, d, 1,
                                "plain HTTP port for /healthz, /livez, /readyz and /metrics "
                                "(/metrics moves with --metrics-port)",
                                "the health port's address (the chart gives the pod's IP)"),
    {"--tls-cert-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "serving certificate (PEM), required; reloaded when it changes", O(cert_file), NULL},
    {"--tls-private-key-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "its private key (PEM), required", O(key_file), NULL},
    {"--max-connections-per-client", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "256",
     "HTTPS connections from one address (1024 in all): one client cannot take them all",
     O(per_client), NULL},
    {"--metrics-port", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "the health port",
     "serve /metrics on this plain HTTP port instead of the health port", O(metrics_port),
     NULL},
    {"--metrics-address", NULL, TOPO_OPT_STRING, "IP", 0, 0, NULL, "every interface",
     "the metrics port's address", O(metrics_address), NULL},
    {"--header-timeout", NULL, TOPO_OPT_POSITIVE, "S", 0, 3600, NULL, "1",
     "a connection's TLS handshake and request headers must be done within S seconds of its "
     "accept (fractions allowed, at least 0.1); keep it under the API server's timeoutSeconds",
     O(header_timeout), NULL},
    {"--min-body-rate", NULL, TOPO_OPT_UINT, "B", 0, 1UL << 30, NULL, "65536",
     "bytes/s a request body must keep to after a 5 s grace (0: no bound); slower clients "
     "are cut",
     O(min_body_rate), NULL},
    {"--idle-timeout", NULL, TOPO_OPT_UINT, "S", 1, 3600, NULL, "90",
     "keep-alive: a connection's next request must be in within S seconds of its last "
     "response",
     O(idle_timeout_s), NULL},
    {"--tls-priorities", NULL, TOPO_OPT_STRING, "STRING", 0, 0, NULL,
     "TLS 1.3, and TLS 1.2 with ECDHE/DHE and AEAD ciphers only", "GnuTLS priority string",
     O(tls_priorities), NULL},
    {"--threads", NULL, TOPO_OPT_UINT, "N", 1, 1024, NULL, "online cores", "request threads",
     O(threads), NULL},
    {"--cert-check-interval", NULL, TOPO_OPT_UINT, "S", 1, 3600, NULL, "2",
     "seconds between certificate file checks", O(cert_check_s), NULL},
    {"--shutdown-timeout", NULL, TOPO_OPT_UINT, "S", 0, 3600, NULL, "15",
     "on SIGTERM, wait at most this for in-flight requests; 2 s after it the process ends "
     "(exit 1) even if a request handler still runs",
     O(shutdown_s), NULL},
    {"--request-timeout", NULL, TOPO_OPT_UINT, "S", 1, 30, NULL, "10",
     "a request's deadline when the API server's ?timeout= is longer or absent: past it, "
     "placement stops before storing anything (504)",
     O(request_timeout_s), NULL},
    {"--max-body-memory", NULL, TOPO_OPT_UINT, "MIB", 1, 65536, NULL, "256",
     "request bodies held at once, over all connections; beyond it a request gets 503",
     O(max_body_mib), NULL},
    {"--config", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "topologies and policies (YAML, docs/webhook.md)", O(config),
     "Placement (without --config or --levels every request is allowed unchanged):"},
    {"--levels", NULL, TOPO_OPT_STRING, "L1,L2,...", 0, 0, NULL, NULL,
     "instead of --config: one topology \"default\" over all nodes with these level labels, "
     "coarsest first",
     O(levels), NULL},
    {"--policy", NULL, TOPO_OPT_CHOICE, "POLICY", 0, 0, policies, "gate with --levels",
     "with --levels: when a PodSet does not fit, gate adds the scheduling gate "
     "topology.topo.io/wait; deny refuses the pod (403); ignore admits it unchanged",
     O(policy), NULL},
    TOPO_OPT_DAEMON_KUBECONFIG_ROW(wh_args, d, TOPO_K8S_CONFIG_DEFAULT_HELP,
                                   "the API server: nodes, pods and jobs by list+watch"),
    {"--db", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the SQLite cache (nodes, pods, jobs, reservations); required with an API server", O(db),
     NULL},
    {"--inventory", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "instead of an API server: static nodes (kubectl get nodes -o json, or a fixture YAML) "
     "for demos, tests and benchmarks; reservations in --db, or in memory",
     O(inventory), NULL},
    {"--pods", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "with --inventory: pods using capacity", O(pods), NULL},
    {"--ungate-interval", NULL, TOPO_OPT_UINT, "S", 1, 600, NULL, "the config's, 5",
     "seconds between retries of gated PodSets", O(ungate_s), NULL},
    {"--resource-quotas", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL,
     "true with an API server",
     "capacity reserved for a PodSet's pods not created yet counts against their namespace's "
     "ResourceQuotas, kept by list+watch (needs list and watch on resourcequotas)",
     O(resource_quotas), NULL},
    TOPO_OPT_DAEMON_LEASE_ROWS(wh_args, d, TOPO_UNGATER_LEASE_NAME,
                               "with an API server, the replica holding Lease topo-webhook "
                               "places every pod and runs the ungater; the others forward to it "
                               "(docs/webhook.md \"Several replicas\")",
                               "Several replicas:"),
    {"--lease-renew-deadline", NULL, TOPO_OPT_UINT, "S", 1, 3600, NULL, "10",
     "a placer that cannot renew stops placing after S seconds (less than --lease-duration)",
     O(renew_s), NULL},
    {"--lease-retry-period", NULL, TOPO_OPT_UINT, "S", 1, 3600, NULL, "2",
     "seconds between Lease reads and renewals (less than --lease-renew-deadline)",
     O(retry_s), NULL},
    {"--peer-address", NULL, TOPO_OPT_STRING, "HOST:PORT", 0, 0, NULL, NULL,
     "where the other replicas reach this one's HTTPS port (the chart gives the pod IP): "
     "written into the Lease identity, so that requests are forwarded here while it places",
     O(peer_address), NULL},
    {"--peer-ca-file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "the CA (PEM) the placer's serving certificate chains to; without it this replica "
     "forwards nothing and answers with the no-fit policy while another places",
     O(peer_ca_file), NULL},
    {"--peer-server-name", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL,
     "the first DNS name of --tls-cert-file",
     "the name the placer's certificate must carry (the Service's)", O(peer_server_name),
     NULL},
    {"--record-key-file", NULL, TOPO_OPT_LIST, "FILE", 0, 0, NULL,
     "derived from --tls-private-key-file",
     "a record key (a file of 16 bytes to 64 KiB, read as it is; at most 7): the first signs "
     "the reservation records topo writes on pods, every one verifies them, so a key is "
     "rotated by giving the new one first (docs/webhook.md \"Record keys\"); the key derived "
     "from the serving key is still accepted, and without this flag it signs, so records do "
     "not survive a rotation of the serving key",
     O(record_key_files), NULL},
    {"--noop", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,
     "benchmark floor only: read and discard the body, answer a fixed allowed response "
     "(bench/webhook)",
     O(noop), "Other:"},
    TOPO_OPT_DAEMON_OTHER_ROWS(wh_args, d, "topo-webhook", NULL),
};
#define NOPTS (sizeof table / sizeof table[0])

static int fail(const char *msg)
{
    fprintf(stderr, "topo-webhook: %s\n", msg);
    return 2;
}

static int print(int markdown, FILE *to)
{
    topo_buf b = TOPO_BUF_INIT(0);
    if (markdown)
        topo_opts_markdown(table, NOPTS, "topo-webhook", usage_line,
                           "The mutating admission webhook (docs/webhook.md). Every option "
                           "takes a value except the flags; a bad value is refused with exit "
                           "status 2.",
                           &b);
    else
        topo_opts_help(table, NOPTS, usage_line, &b);
    char *text = topo_buf_take(&b, NULL);
    if (text == NULL)
        return -1;
    fputs(text, to);
    free(text);
    return 0;
}

static int check(const wh_args *a);

int wh_args_parse(wh_args *a, int argc, char **argv)
{
    char why[512];
    memset(a, 0, sizeof *a);
    a->resource_quotas = -1; /* not given: true with an API server */
    topo_opts_defaults(table, NOPTS, a);

    int rc = topo_opts_parse(table, NOPTS, argc, argv, a, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "topo-webhook: %s (see topo-webhook --help)\n", why);
        wh_args_free(a);
        return 2;
    }
    if (rc == 1 || a->d.help_markdown) {
        print(a->d.help_markdown, stdout);
        wh_args_free(a);
        return 1;
    }
    if (a->d.version) {
        printf("topo-webhook %s\n", TOPO_VERSION);
        wh_args_free(a);
        return 1;
    }
    rc = check(a);
    if (rc != 0)
        wh_args_free(a);
    return rc;
}

/* The checks between options: 0, or 2 with a message printed. */
static int check(const wh_args *a)
{
    /* below a round trip or two nothing could connect */
    if (a->header_timeout < 0.1)
        return fail("--header-timeout: at least 0.1 (seconds)");
    if (!a->cert_file || !a->key_file)
        return fail("--tls-cert-file and --tls-private-key-file are required");
    if (a->config && a->levels)
        return fail("--config and --levels exclude each other");
    if (a->policy && !a->levels)
        return fail("--policy goes with --levels (a --config file sets defaultPolicy and "
                    "per-topology policies)");
    if (!a->config && !a->levels &&
        (a->inventory || a->pods || a->db || a->d.kubeconfig || a->record_key_files.n > 0))
        return fail("placement needs --config FILE or --levels L1,L2,...");
    if (a->record_key_files.n > WH_PEER_RECORD_KEY_FILES_MAX) {
        fprintf(stderr, "topo-webhook: --record-key-file: %s: given %zu times, at most %d\n",
                a->record_key_files.v[WH_PEER_RECORD_KEY_FILES_MAX], a->record_key_files.n,
                WH_PEER_RECORD_KEY_FILES_MAX);
        return 2;
    }
    if (a->metrics_address && !a->metrics_port)
        return fail("--metrics-address goes with --metrics-port");
    if (a->pods && !a->inventory)
        return fail("--pods goes with --inventory");
    if (a->inventory && a->d.kubeconfig)
        return fail("--inventory and --kubeconfig exclude each other");
    /* A static inventory has no API server to read quotas from. */
    if (a->inventory && a->resource_quotas == 1)
        return fail("--resource-quotas true needs an API server, not --inventory");
    if (!(a->retry_s < a->renew_s && a->renew_s < a->d.lease_s))
        return fail("need --lease-retry-period < --lease-renew-deadline < --lease-duration");
    if (a->peer_address && (strchr(a->peer_address, ':') == NULL ||
                            strpbrk(a->peer_address, "@/ ") != NULL))
        return fail("--peer-address: expected HOST:PORT");
    if ((a->peer_address || a->peer_ca_file || a->peer_server_name) &&
        (a->inventory || a->d.leader_elect == 0))
        return fail("--peer-address, --peer-ca-file and --peer-server-name go with leader "
                    "election against an API server");
    return 0;
}

void wh_args_free(wh_args *a)
{
    topo_opts_free(table, NOPTS, a);
}

void wh_args_server_opts(const wh_args *a, wh_server_opts *o)
{
    o->port = (int)a->port;
    o->health_port = (int)a->d.health_port;
    o->cert_file = a->cert_file;
    o->key_file = a->key_file;
    o->threads = (unsigned int)a->threads;
    o->cert_check_ms = (unsigned int)(a->cert_check_s * 1000);
    o->max_body_bytes_held = (size_t)a->max_body_mib << 20;
    o->max_connections_per_client = (unsigned int)a->per_client;
    o->tls_priorities = a->tls_priorities;
    o->health_address = a->d.health_address;
    o->metrics_port = (int)a->metrics_port;
    o->metrics_address = a->metrics_address;
    o->header_timeout_ms = (unsigned int)(a->header_timeout * 1000.0 + 0.5);
    o->min_body_rate = a->min_body_rate;
    o->idle_timeout_s = (unsigned int)a->idle_timeout_s;
}

void wh_args_placement_opts(const wh_args *a, wh_placement_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db_path = a->db;
    o->inventory = a->inventory;
    o->pods = a->pods;
    o->kubeconfig = a->d.kubeconfig;
    o->ungate_interval_ms = (long)a->ungate_s * 1000;
    o->leader_election = a->d.leader_elect != 0;
    o->lease_namespace = a->d.lease_namespace;
    o->resource_quotas = a->inventory ? 0 : a->resource_quotas != 0;
    o->policy = -1;
    o->lease_name = a->d.lease_name;
    o->peer_address = a->peer_address;
    o->peer_ca_file = a->peer_ca_file;
    o->peer_server_name = a->peer_server_name;
    o->cert_file = a->cert_file;
    o->key_file = a->key_file;
    o->record_key_files = a->record_key_files.v;
    o->nrecord_key_files = a->record_key_files.n;
    o->lease_ms = (long)a->d.lease_s * 1000;
    o->renew_deadline_ms = (long)a->renew_s * 1000;
    o->retry_ms = (long)a->retry_s * 1000;
}
