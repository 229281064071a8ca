/* topo-webhook: the mutating admission webhook's process (flags, logging,
 * signals, the static snapshot). The HTTPS transport is server.c; the
 * admission decision is lib/admission (topo_admission_handle) over a snapshot
 * built at start from --inventory, or the passthrough placeholder when no
 * --inventory is given. */
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
#include "server.h"
#include "topo/admission.h"
#include "topo/inventory.h"
#include "topo/limits.h"
#include "topo/log.h"

static const char usage[] =
    "usage: topo-webhook --tls-cert-file FILE --tls-private-key-file FILE [options]\n"
    "\n"
    "  --port N                 HTTPS port for POST /mutate (default 9443)\n"
    "  --health-port N          plain HTTP port for /healthz, /livez, /readyz, /metrics\n"
    "                           (default 8081)\n"
    "  --tls-cert-file FILE     serving certificate (PEM); reloaded when it changes\n"
    "  --tls-private-key-file FILE  its private key (PEM)\n"
    "  --threads N              request threads (default: online cores)\n"
    "  --cert-check-interval S  seconds between certificate file checks (default 2)\n"
    "  --shutdown-timeout S     on SIGTERM, wait at most this for in-flight requests\n"
    "                           (default 15)\n"
    "  --log-format json|text   json: one JSON object per line (default); text: logfmt\n"
    "  -v, --verbosity LEVEL    debug, info, warn, error (default info)\n"
    "\n"
    "Placement (without --inventory every request is allowed unchanged: passthrough):\n"
    "  --inventory FILE         nodes (kubectl get nodes -o json, or a fixture YAML with\n"
    "                           its pods): a static snapshot built at start;\n"
    "                           reservations are kept in memory only\n"
    "  --pods FILE              pods using capacity (kubectl get pods -A -o json)\n"
    "  --levels L1,L2,...       topology level labels, coarsest first (required with\n"
    "                           --inventory)\n"
    "  --topology-name NAME     topology name in Kueue's messages (default \"default\")\n"
    "  --policy gate|deny|ignore  when a PodSet does not fit: gate (default) adds the\n"
    "                           scheduling gate topology.topo.io/wait; deny refuses the\n"
    "                           pod (403); ignore admits it unchanged with a warning\n"
    "  --noop                   benchmark floor only: answer every request with a fixed\n"
    "                           allowed response, body unread (bench/webhook)\n";

/* The server's handler signature over topo_admission_handle. */
static int handle_admission(void *ctx, const char *body, size_t len, char **out_body,
                            size_t *out_len, int *out_status)
{
    const topo_wh_request *req = ctx;
    return topo_admission_handle(req->user, body, len, out_body, out_len, out_status);
}

/* Splits a comma-separated list in place into at most max entries. */
static size_t split_levels(char *s, const char **out, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (n == max)
            return max + 1;
        out[n++] = tok;
    }
    return n;
}

/* One JSON object per line on stderr: ts (Unix seconds), level, msg, fields. */
static void json_sink(const topo_log_event *ev, void *payload)
{
    (void)payload;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_t *o = json_object();
    if (!o)
        return;
    json_object_set_new(o, "ts", json_real((double)ts.tv_sec + (double)ts.tv_nsec / 1e9));
    json_object_set_new(o, "level", json_string(topo_log_level_name(ev->level)));
    json_object_set_new(o, "msg", json_string(ev->msg ? ev->msg : ""));
    for (size_t i = 0; i < ev->nfields; i++)
        if (ev->fields[i].key)
            json_object_set_new(o, ev->fields[i].key,
                                json_string(ev->fields[i].value ? ev->fields[i].value : ""));
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (line) {
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
        free(line);
    }
    json_decref(o);
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

int main(int argc, char **argv)
{
    topo_wh_server_opts opts = TOPO_WH_SERVER_OPTS_INIT;
    const char *log_format = "json";
    const char *verbosity = "info";
    unsigned long shutdown_s = 15, check_s = 2;
    topo_wh_server *srv = NULL;
    topo_err err = TOPO_ERR_INIT;
    const char *inventory = NULL, *pods = NULL, *levels_arg = NULL, *topology_name = "default";
    topo_admission_policy policy = TOPO_ADMISSION_POLICY_GATE;
    int rc = 2, noop = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long n = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(a, "--noop") == 0) {
            noop = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "topo-webhook: %s: missing value or unknown option\n%s", a, usage);
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
        else if (strcmp(a, "--log-format") == 0 &&
                 (strcmp(v, "json") == 0 || strcmp(v, "text") == 0))
            log_format = v;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbosity") == 0)
            verbosity = v;
        else if (strcmp(a, "--inventory") == 0)
            inventory = v;
        else if (strcmp(a, "--pods") == 0)
            pods = v;
        else if (strcmp(a, "--levels") == 0)
            levels_arg = v;
        else if (strcmp(a, "--topology-name") == 0 && *v)
            topology_name = v;
        else if (strcmp(a, "--policy") == 0 && topo_admission_policy_parse(&policy, v) == 0)
            ;
        else {
            fprintf(stderr, "topo-webhook: bad option or value: %s %s\n%s", a, v, usage);
            return 2;
        }
    }
    topo_log_level level;
    if (topo_log_level_parse(&level, verbosity, &err) < 0) {
        fprintf(stderr, "topo-webhook: %s\n", err.text);
        return 2;
    }
    topo_log_set_level(level);
    if (strcmp(log_format, "json") == 0)
        topo_log_set_sink(json_sink, NULL);
    if (!opts.cert_file || !opts.key_file) {
        fprintf(stderr, "topo-webhook: --tls-cert-file and --tls-private-key-file are required\n");
        return 2;
    }
    opts.cert_check_ms = (unsigned int)(check_s * 1000);
    opts.handle = topo_wh_handle_passthrough;

    /* The static snapshot and the admission handler. */
    topo_inventory *inv = NULL;
    topo_snapshot *snap = NULL;
    topo_admission_ctx *actx = NULL;
    char *levels_buf = NULL;
    if (!inventory && (levels_arg || pods)) {
        fprintf(stderr, "topo-webhook: --levels and --pods need --inventory\n");
        return 2;
    }
    if (inventory) {
        const char *levels[TOPO_MAX_LEVELS];
        size_t nlevels = 0;
        if (!levels_arg || !(levels_buf = strdup(levels_arg)) ||
            (nlevels = split_levels(levels_buf, levels, TOPO_MAX_LEVELS)) == 0 ||
            nlevels > TOPO_MAX_LEVELS) {
            fprintf(stderr, "topo-webhook: --inventory needs --levels L1,L2,... (1..%d levels)\n",
                    TOPO_MAX_LEVELS);
            free(levels_buf);
            return 2;
        }
        topo_inventory_snapshot_opts so = TOPO_INVENTORY_SNAPSHOT_OPTS_INIT;
        so.snapshot.topology_name = topology_name;
        so.snapshot.levels = levels;
        so.snapshot.nlevels = nlevels;
        if (topo_inventory_create(&inv, &err) < 0 ||
            topo_inventory_load_nodes_file(inv, inventory, &err) < 0 ||
            (pods && topo_inventory_load_pods_file(inv, pods, &err) < 0) ||
            topo_inventory_snapshot(&snap, inv, &so, NULL, &err) < 0 ||
            topo_admission_ctx_create(&actx, snap, policy, &err) < 0) {
            fprintf(stderr, "topo-webhook: %s\n", err.text);
            topo_snapshot_free(snap);
            topo_inventory_free(inv);
            free(levels_buf);
            return 2;
        }
        opts.handle = handle_admission;
        opts.handler_ctx = actx;
    }

    if (noop)
        opts.handle = topo_wh_handle_noop;

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
        return 1;
    }

    if (topo_wh_server_start(&srv, &opts, &err) < 0) {
        topo_log(TOPO_LOG_ERROR, "cannot start: %s", err.text);
        topo_admission_ctx_free(actx);
        topo_snapshot_free(snap);
        topo_inventory_free(inv);
        free(levels_buf);
        return 1;
    }
    /* ready: the snapshot (if any) was built before the server started */
    topo_wh_server_set_ready(srv, 1);
    {
        char port[16], hport[16], threads[16], nodes[24];
        snprintf(port, sizeof port, "%d", opts.port);
        snprintf(hport, sizeof hport, "%d", opts.health_port);
        snprintf(threads, sizeof threads, "%u", opts.threads);
        snprintf(nodes, sizeof nodes, "%zu", snap ? topo_snapshot_node_count(snap) : 0);
        topo_log_field f[] = {{"port", port},
                              {"healthPort", hport},
                              {"threads", threads},
                              {"handler", actx ? "admission" : "passthrough"},
                              {"nodes", nodes}};
        topo_log_kv(TOPO_LOG_INFO, f, 5, "serving");
    }

    /* The owner loop: signals, and a tick every 500 ms for certificate
     * checks and retired TLS generations. */
    for (;;) {
        struct timespec wait = {0, 500 * 1000000L};
        int sig = sigtimedwait(&set, NULL, &wait);
        if (sig == SIGTERM || sig == SIGINT) {
            topo_log(TOPO_LOG_INFO, "%s: not ready, draining in-flight requests",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT");
            break;
        }
        topo_wh_server_tick(srv);
    }
    long left = topo_wh_server_shutdown(srv, (unsigned int)(shutdown_s * 1000));
    if (left > 0) {
        topo_log(TOPO_LOG_WARN, "stopped with %ld requests still in flight", left);
        rc = 1;
    } else {
        topo_log(TOPO_LOG_INFO, "stopped cleanly");
        rc = 0;
    }
    topo_wh_server_free(srv);
    topo_admission_ctx_free(actx);
    topo_snapshot_free(snap);
    topo_inventory_free(inv);
    free(levels_buf);
    return rc;
}
