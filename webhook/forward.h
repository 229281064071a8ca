/* Forwarding an AdmissionReview to the replica that places (the holder of
 * Lease topo-webhook, docs/webhook.md "Several replicas").
 *
 * The placer is reached at the address in its Lease identity
 * ("<name>@HOST:PORT", its --peer-address) over HTTPS; its certificate must
 * chain to the peer CA and carry the peer server name (every replica serves
 * the same certificate, so the Service's DNS name). Clients (libcurl
 * handles, lib/net) are kept per placer address and reused, so a forwarded
 * request costs one round trip on a warm connection. Any thread. */
#ifndef TOPO_WEBHOOK_FORWARD_H
#define TOPO_WEBHOOK_FORWARD_H

#include <stddef.h>

#include "topo/error.h"

/* Query parameter marking a forwarded request: the receiver places or
 * answers 421, never forwards again. */
#define WH_FORWARDED_PARAM "forwardedBy"

typedef struct wh_forward wh_forward;

typedef struct wh_forward_opts {
    const char *ca_file;     /* PEM: the CA the placer's certificate chains to (required) */
    const char *server_name; /* the name its certificate carries (required) */
    const char *identity;    /* this replica's, sent in WH_FORWARDED_PARAM */
} wh_forward_opts;

int wh_forward_create(wh_forward **out, const wh_forward_opts *opts, topo_err *err);
void wh_forward_free(wh_forward *f);

/* The address part of a Lease identity ("name@HOST:PORT" -> "HOST:PORT"),
 * or NULL when it names none. */
const char *wh_forward_address(const char *identity);

/* POSTs body to https://<server_name>:<port>/mutate at addr ("HOST:PORT")
 * within timeout_ms. The placer is told the same budget twice
 * (request_deadline.h): ?timeout=<timeout_ms>ms, relative, and
 * ?deadlineUnixMs=, the wall-clock moment this replica stops waiting, so
 * that a forward read late (the placer paused, the request left in its
 * socket) is not placed after its answer was given here. 0 with the
 * placer's answer (*out malloc'd, at most TOPO_MAX_ADMISSION_BODY bytes,
 * *status its HTTP status, whatever it is); < 0 when no answer came (err
 * says why: connection refused, TLS, timeout, too large). */
int wh_forward_post(wh_forward *f, const char *addr, const char *body, size_t len,
                    long timeout_ms, char **out, size_t *out_len, int *status, topo_err *err);

#endif
