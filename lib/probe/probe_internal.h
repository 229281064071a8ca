/* Inside lib/probe: the checks a health port reports and the texts of its
 * answers (checks.c), kept apart from the HTTP transport (probe.c) so that
 * what a path answers is decided without libmicrohttpd. */
#ifndef TOPO_PROBE_INTERNAL_H
#define TOPO_PROBE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "topo/buf.h"
#include "topo/limits.h"
#include "topo/probe.h"

typedef struct probe_check {
    char name[TOPO_MAX_PROBE_CHECK_NAME + 1];
    int ok;                 /* readiness: set by the daemon */
    topo_probe_check_fn fn; /* liveness: asked at each report */
    void *payload;
} probe_check;

/* The daemon's checks, under mu: the owner sets them, the probe's thread
 * reads them. */
typedef struct probe_checks {
    pthread_mutex_t mu;
    probe_check ready[TOPO_MAX_PROBE_CHECKS];
    size_t nready;
    probe_check live[TOPO_MAX_PROBE_CHECKS];
    size_t nlive;
    int stopping;
} probe_checks;

/* The checks behind one answer, with their results, in the order listed:
 * "ping" first for liveness, "shutdown" last for readiness (as
 * kube-apiserver lists them). */
typedef struct probe_result {
    char name[TOPO_MAX_PROBE_CHECK_NAME + 1];
    int ok;
} probe_result;

typedef struct probe_report {
    probe_result r[TOPO_MAX_PROBE_CHECKS + 1];
    size_t n;
} probe_report;

typedef enum { PROBE_LIVE, PROBE_READY } probe_kind;

int probe_checks_init(probe_checks *c);
void probe_checks_dispose(probe_checks *c);

/* 1 when name may name a check of kind (not its built-in one), else 0. */
int probe_check_name_ok(probe_kind kind, const char *name);

/* As topo_probe_set_check and topo_probe_set_live_check. */
int probe_checks_set_ready(probe_checks *c, const char *name, int ok);
int probe_checks_set_live(probe_checks *c, const char *name, topo_probe_check_fn fn,
                          void *payload);
void probe_checks_stopping(probe_checks *c);

/* The checks of kind with their results now. Liveness functions are called
 * outside the lock (they may take their own). */
void probe_checks_report(probe_checks *c, probe_kind kind, probe_report *out);

/* The answer to path (the name shown: "livez", "healthz", "readyz") for
 * one check (check non-NULL) or all of them: *status 200, 503, or 404 for a
 * check the report does not hold, and the text appended to body. 0, or
 * body's sticky error. */
int probe_answer(const probe_report *r, const char *path, const char *check, int verbose,
                 topo_buf *body, int *status);

#endif
