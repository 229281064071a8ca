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

#include "args.h"
#include "handler_noop.h"
#include "handler_passthrough.h"
#include "placement.h"
#include "server.h"
#include "watchdog.h"
#include "topo/admission.h"
#include "topo/admission_config.h"
#include "topo/clock.h"
#include "topo/limits.h"
#include "topo/log.h"

/* After --shutdown-timeout, stopping the daemons and freeing may take this
 * long before the watchdog ends the process. */
#define WH_SHUTDOWN_MARGIN_MS 2000

/* The server's handler signature over topo_admission_handle_until. */
static int handle_admission(void *ctx, const char *body, size_t len, char **out_body,
                            size_t *out_len, int *out_status)
{
    const wh_request *req = ctx;
    /* Past the API server's ?timeout= nobody reads the answer: skip the
     * work (a queue built up under overload drains faster). */
    if (req->timeout_ms > 0 && req->start_ns > 0) {
        long long waited_ms = (topo_clock_ns() - req->start_ns) / 1000000LL;
        if (waited_ms >= req->timeout_ms) {
            static const char msg[] = "{\"error\":\"the API server's timeout passed\"}";
            *out_body = strdup(msg);
            *out_len = *out_body ? strlen(msg) : 0;
            *out_status = 504;
            return *out_body ? 0 : -1;
        }
    }
    /* The deadline (the API server's, capped by ours; a forward's
     * absolute one): enforced while the request waits for the placement
     * lock and before it stores. */
    return wh_placement_handle(req->user, req->phase, req->deadline_ns, req->forwarded_by, body, len,
                               out_body, out_len, out_status);
}

/* Runs the webhook with parsed options until a signal; the exit status. */
static int serve(const wh_args *a)
{
    wh_server_opts opts = TOPO_WH_SERVER_OPTS_INIT;
    wh_placement_opts popts;
    wh_server *srv = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_admission_config *cfg = NULL;
    wh_placement *pl = NULL;
    int rc = 2;

    topo_log_level level;
    if (topo_log_level_parse(&level, a->d.verbosity, &err) < 0) {
        fprintf(stderr, "topo-webhook: %s\n", err.text);
        return 2;
    }
    topo_log_set_level(level);
    (void)topo_log_use_format(a->d.log_format, NULL); /* json or text: the table's choices */
    wh_args_server_opts(a, &opts);
    wh_args_placement_opts(a, &popts);
    opts.request_timeout_ms = (long long)a->request_timeout_s * 1000;
    unsigned long shutdown_s = a->shutdown_s;
    int noop = a->noop;
    opts.handle = wh_handle_passthrough;

    if (a->config || a->levels) {
        int crc = a->config ? topo_admission_config_load_file(&cfg, a->config, &err)
                            : topo_admission_config_from_levels(&cfg, a->levels, &err);
        if (crc < 0) {
            fprintf(stderr, "topo-webhook: %s\n", err.text);
            return 2;
        }
        topo_admission_policy policy;
        popts.config = cfg;
        if (a->policy != NULL && topo_admission_policy_parse(&policy, a->policy) == 0)
            popts.policy = (int)policy;
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
        opts.handler_ctx = pl;
        opts.metrics_extra = wh_placement_metrics;
        opts.metrics_payload = pl;
    }
    if (noop)
        opts.handle = wh_handle_noop;

    if (wh_server_start(&srv, &opts, &err) < 0) {
        topo_log(TOPO_LOG_ERROR, "cannot start: %s", err.text);
        wh_placement_free(pl);
        topo_admission_config_free(cfg);
        return 1;
    }
    int ready = pl == NULL || wh_placement_ready(pl);
    wh_server_set_ready(srv, ready);
    {
        char port[16], hport[16], threads[16];
        snprintf(port, sizeof port, "%d", opts.port);
        snprintf(hport, sizeof hport, "%d", opts.health_port);
        snprintf(threads, sizeof threads, "%u", wh_server_threads(srv));
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
    int corrupt = 0;
    for (unsigned long tick = 0;; tick++) {
        struct timespec wait = {0, 500 * 1000000L};
        int sig = sigtimedwait(&set, NULL, &wait);
        if (sig == SIGTERM || sig == SIGINT) {
            topo_log(TOPO_LOG_INFO, "%s: not ready, draining in-flight requests",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT");
            break;
        }
        wh_server_tick(srv);
        if (pl != NULL) {
            int now_ready = wh_placement_ready(pl);
            if (now_ready != ready) {
                topo_log(now_ready ? TOPO_LOG_INFO : TOPO_LOG_WARN, "%s",
                         now_ready ? "caches synced and placer known: ready"
                                   : "caches not synced: not ready");
                wh_server_set_ready(srv, now_ready);
                ready = now_ready;
            }
            if (tick % 2 == 1)
                wh_placement_tick(pl);
            /* Running on a file SQLite found corrupt would answer from
             * damaged rows (or fail every request) for good: exit, and
             * the restart moves the file aside (docs/webhook.md "A
             * corrupted cache"). */
            if (wh_placement_cache_corrupt(pl)) {
                topo_log(TOPO_LOG_ERROR, "cache: the --db file is corrupt (SQLite said so while "
                                         "running): not ready, exiting so that the restart "
                                         "moves it aside and starts from an empty cache");
                corrupt = 1;
                break;
            }
            /* The filler backs off everything that can heal; what it
             * stopped on cannot (out of memory, say): live but never
             * ready would hold the pod up for good. The restart starts
             * afresh. */
            if (wh_placement_filler_stopped(pl)) {
                topo_log(TOPO_LOG_ERROR, "cache filler stopped on an error a retry cannot fix: "
                                         "exiting so that the restart starts afresh");
                corrupt = 1;
                break;
            }
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
    long left = wh_server_shutdown(srv, (unsigned int)(shutdown_s * 1000));
    if (left > 0) {
        topo_log(TOPO_LOG_WARN, "stopped with %ld requests still in flight", left);
        rc = 1;
    } else {
        topo_log(TOPO_LOG_INFO, "stopped cleanly");
        rc = corrupt; /* 1: restarted into the healing open */
    }
    wh_server_free(srv);
    wh_placement_free(pl);
    topo_admission_config_free(cfg);
    wh_watchdog_cancel(dog);
    return rc;
}

int main(int argc, char **argv)
{
    wh_args args;
    int prc = wh_args_parse(&args, argc, argv);
    if (prc != 0)
        return prc == 1 ? 0 : 2;
    int rc = serve(&args);
    wh_args_free(&args);
    return rc;
}
