/* The writes of topoassign release (cmd_release.c): each gated pod released
 * by one of several workers, each with its own API client (a topo_k8s is
 * used by one thread at a time), so that tens of thousands of pods finish
 * within the uninstall hook's deadline; the results reported in the list's
 * order, as they complete. */
#ifndef TOPO_CLI_RELEASE_PODS_H
#define TOPO_CLI_RELEASE_PODS_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"

typedef enum cli_release_outcome {
    RELEASE_RELEASED,
    RELEASE_ALREADY, /* the gate had gone when the pod was read again */
    RELEASE_GONE,    /* the pod was deleted meanwhile */
    RELEASE_FAILED,
} cli_release_outcome;

/* Called once per pod, in the order of pods[], serialized (under a lock,
 * from whichever worker completed it): pod is the pod as last read
 * (borrowed), err the reason of a RELEASE_FAILED. */
typedef void (*cli_release_report_fn)(size_t i, cli_release_outcome outcome, const json_t *pod,
                                  const topo_err *err, void *payload);

typedef struct cli_release_pods_opts {
    unsigned workers;  /* requests in flight at most (at least 1) */
    double qps, burst; /* the rate limit of all workers together */
    long timeout_ms;   /* each request's */
    const char *user_agent;
} cli_release_pods_opts;

/* Releases pods[0..n) (each reference is dropped once its pod is done, so
 * that memory shrinks as the run goes; pods[i] is NULL after). The workers'
 * clients are made from cfg; 0, or the error of making one (nothing was
 * written then). */
int cli_release_pods(json_t **pods, size_t n, const topo_k8s_config *cfg,
                 const cli_release_pods_opts *opts, cli_release_report_fn report, void *payload,
                 topo_err *err);

#endif
