/* The HTTPS port of topo-webhook and its certificate reloads: the listening
 * socket, one libmicrohttpd daemon per certificate/key pair (a "generation"),
 * a new generation when the files change, the old one quiesced and stopped
 * once its connections are gone (tls_reload.c says why it is done this way).
 *
 * Knows nothing about requests: each generation runs the caller's
 * callbacks, which get the generation (a wh_tls_gen *) as their cls.
 * The wh_tls_* functions are called from one owner thread, the wh_tls_gen_*
 * ones from any. Times are topo_clock_ns nanoseconds passed in by the
 * caller. */
#ifndef TOPO_WEBHOOK_TLS_RELOAD_H
#define TOPO_WEBHOOK_TLS_RELOAD_H

#include <microhttpd.h>

#include "topo/error.h"

typedef struct wh_tls wh_tls;
typedef struct wh_tls_gen wh_tls_gen;

typedef struct wh_tls_opts {
    int port;
    const char *cert_file;  /* PEM, copied */
    const char *key_file;   /* PEM, copied */
    const char *priorities; /* GnuTLS priority string */
    unsigned int threads, idle_timeout_s, max_connections, max_connections_per_client;
    unsigned int check_ms; /* how often the files are looked at */
    /* Each generation's daemon runs these with the wh_tls_gen * as cls.
     * notify sees a connection start after the generation counted it and
     * end before it stops counting it. */
    MHD_AccessHandlerCallback access;
    MHD_RequestCompletedCallback completed;
    MHD_NotifyConnectionCallback notify;
    void *payload; /* wh_tls_gen_payload() */
} wh_tls_opts;

/* Binds the port and starts the first generation with the pair now in the
 * files. */
int wh_tls_start(wh_tls **out, const wh_tls_opts *opts, long long now, topo_err *err);

/* Periodic work: stops retired generations without connections (or with
 * only idle ones, after a grace) and, every check_ms, starts a new
 * generation when the files changed. 1: reloaded, -1: the new pair failed
 * (logged; the old one serves on, and that pair is not tried again until
 * the files change again), 0: neither. */
int wh_tls_tick(wh_tls *t, long long now);

/* Shutdown: nothing more is accepted (the listening socket is closed);
 * what is open is answered with Connection: close. */
void wh_tls_close(wh_tls *t, long long now);

/* Connections open on every generation. */
long long wh_tls_connections(const wh_tls *t);

/* Stops every generation now, closing their connections. */
void wh_tls_stop(wh_tls *t);

/* wh_tls_stop, closes the socket, frees; NULL is a no-op. */
void wh_tls_free(wh_tls *t);

/* The opts' payload. */
void *wh_tls_gen_payload(const wh_tls_gen *g);
/* Whether g was quiesced (a newer pair serves, or shutdown): its answers
 * should send clients elsewhere. */
int wh_tls_gen_retiring(const wh_tls_gen *g);
/* A connection of g was suspended (delta 1) or resumed (-1): a retired
 * generation is not stopped while one is (only wh_tls_stop does, which the
 * owner calls once nothing can be suspended any more). */
void wh_tls_gen_suspended(wh_tls_gen *g, int delta);

#endif
