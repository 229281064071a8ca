/* TLS generations of topo-webhook's HTTPS port (see tls_reload.h).
 *
 * Debian 12's libmicrohttpd is built with GnuTLS, whose certificate callback
 * would need topo to link GnuTLS itself. Instead a TLS "generation" is one
 * MHD daemon bound to a dup() of one listening socket we own: a new pair
 * starts a new generation on the same socket (the kernel then hands new
 * connections to either daemon, both with valid certificates), and the old
 * one is quiesced at once, so from then on only the new one accepts. The old
 * daemon keeps its connections, answers them with Connection: close, and is
 * stopped by the tick when it has no connection left (or, when only idle
 * keep-alives remain, after a grace period). No connection is refused
 * during the swap: the listening socket never closes. */
#define _POSIX_C_SOURCE 200809L

#include "tls_reload.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "topo/codec.h"
#include "topo/limits.h"
#include "topo/log.h"

/* A retired daemon with only idle keep-alives left is stopped after this. */
#define WH_RETIRE_GRACE_NS (10LL * 1000000000LL)

/* One TLS generation: an MHD daemon on a dup of the listening socket. */
struct wh_tls_gen {
    wh_tls *tls;
    struct MHD_Daemon *mhd;
    atomic_int retiring;
    atomic_llong connections;
    atomic_llong suspended; /* connections suspended (wh_tls_gen_suspended) */
    long long retired_ns;
    unsigned long long generation;
    struct wh_tls_gen *next;
};

/* Identity of one file as stat() sees it through symlinks. */
typedef struct wh_file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int ok;
} wh_file_id;

struct wh_tls {
    wh_tls_opts opts; /* cert_file and key_file: the copies below */
    char *cert_file, *key_file;
    int listen_fd;
    wh_tls_gen *current;
    wh_tls_gen *retired; /* list */
    unsigned long long generations;
    wh_file_id cert_id, key_id;       /* of the pair serving now */
    wh_file_id tried_cert, tried_key; /* of the last pair that failed */
    long long next_check_ns;
};

void *wh_tls_gen_payload(const wh_tls_gen *g)
{
    return g->tls->opts.payload;
}

int wh_tls_gen_retiring(const wh_tls_gen *g)
{
    return atomic_load(&g->retiring);
}

void wh_tls_gen_suspended(wh_tls_gen *g, int delta)
{
    atomic_fetch_add(&g->suspended, delta);
}

static wh_file_id file_id(const char *path)
{
    wh_file_id id;
    struct stat st;
    memset(&id, 0, sizeof id);
    if (stat(path, &st) == 0) {
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        id.size = st.st_size;
        id.mtime = st.st_mtim;
        id.ok = 1;
    }
    return id;
}

static int file_id_eq(const wh_file_id *a, const wh_file_id *b)
{
    return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Counts the generation's connections (what tells when a retired one is
 * done) around the caller's notify. */
static void notify_gen(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    wh_tls_gen *g = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&g->connections, 1);
        g->tls->opts.notify(g, conn, socket_context, toe);
    } else {
        g->tls->opts.notify(g, conn, socket_context, toe);
        atomic_fetch_sub(&g->connections, 1);
    }
}

/* Starts a TLS generation with the PEM pair now in the files. */
static int start_generation(wh_tls_gen **out, wh_tls *t, topo_err *err)
{
    const wh_tls_opts *o = &t->opts;
    char *cert = NULL, *key = NULL;
    wh_tls_gen *g = NULL;
    int fd = -1, rc = -1;

    rc = topo_codec_read_regular_file(&cert, NULL, o->cert_file, TOPO_MAX_CREDENTIAL_FILE, err);
    if (rc == 0)
        rc = topo_codec_read_regular_file(&key, NULL, o->key_file, TOPO_MAX_CREDENTIAL_FILE, err);
    if (rc < 0)
        goto cleanup;
    if (!(g = calloc(1, sizeof *g))) {
        rc = topo_err_nomem(err, "TLS generation");
        goto cleanup;
    }
    g->tls = t;
    g->generation = ++t->generations;
    if ((fd = fcntl(t->listen_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        rc = topo_err_set(err, TOPO_EIO, "dup of the listening socket: %s", strerror(errno));
        goto cleanup;
    }
    g->mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS | MHD_USE_ITC | MHD_USE_AUTO |
            MHD_ALLOW_SUSPEND_RESUME, 0, NULL,
        NULL, o->access, g, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_HTTPS_MEM_CERT,
        cert, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_HTTPS_PRIORITIES, o->priorities,
        MHD_OPTION_THREAD_POOL_SIZE, o->threads, MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, o->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        o->max_connections_per_client, MHD_OPTION_NOTIFY_COMPLETED, o->completed, g,
        MHD_OPTION_NOTIFY_CONNECTION, notify_gen, g, MHD_OPTION_END);
    if (!g->mhd) {
        rc = topo_err_set(err, TOPO_EGENERIC,
                          "cannot start the TLS server with %s and %s (a bad or mismatched "
                          "certificate/key pair?)",
                          o->cert_file, o->key_file);
        goto cleanup;
    }
    fd = -1; /* the daemon's now */
    *out = g;
    g = NULL;
    rc = 0;
cleanup:
    if (fd >= 0)
        close(fd);
    free(g);
    free(cert);
    free(key);
    return rc;
}

/* Quiesces a generation: it accepts nothing more (its dup of the socket is
 * closed), answers what it has with Connection: close. */
static void retire(wh_tls *t, wh_tls_gen *g, long long now)
{
    atomic_store(&g->retiring, 1);
    MHD_socket fd = MHD_quiesce_daemon(g->mhd);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    g->retired_ns = now;
    g->next = t->retired;
    t->retired = g;
}

static void stop_generation(wh_tls_gen *g)
{
    if (!g)
        return;
    MHD_stop_daemon(g->mhd);
    free(g);
}

static void reap_retired(wh_tls *t, int force, long long now)
{
    wh_tls_gen **pp = &t->retired;
    while (*pp) {
        wh_tls_gen *g = *pp;
        long long conns = atomic_load(&g->connections);
        /* never while a connection is suspended: libmicrohttpd must not
         * be stopped under one (it is resumed within its deadline) */
        if (force ||
            (atomic_load(&g->suspended) == 0 &&
             (conns == 0 || now - g->retired_ns > WH_RETIRE_GRACE_NS))) {
            *pp = g->next;
            topo_log(TOPO_LOG_INFO, "stopped TLS generation %llu (%lld connections left)",
                     g->generation, conns);
            stop_generation(g);
        } else {
            pp = &g->next;
        }
    }
}

static int listen_on(int *out, int port, topo_err *err)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1, zero = 0;
    if (fd >= 0) {
        struct sockaddr_in6 a6;
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)port);
        a6.sin6_addr = in6addr_any;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (bind(fd, (struct sockaddr *)&a6, sizeof a6) == 0)
            goto bound;
        close(fd);
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return topo_err_set(err, TOPO_EIO, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a4;
    memset(&a4, 0, sizeof a4);
    a4.sin_family = AF_INET;
    a4.sin_port = htons((uint16_t)port);
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&a4, sizeof a4) != 0) {
        topo_err_set(err, TOPO_EIO, "bind port %d: %s", port, strerror(errno));
        close(fd);
        return TOPO_EIO;
    }
bound:
    if (listen(fd, 1024) != 0) {
        topo_err_set(err, TOPO_EIO, "listen on port %d: %s", port, strerror(errno));
        close(fd);
        return TOPO_EIO;
    }
    *out = fd;
    return 0;
}

int wh_tls_start(wh_tls **out, const wh_tls_opts *opts, long long now, topo_err *err)
{
    wh_tls *t = NULL;
    int rc;

    *out = NULL;
    if (!(t = calloc(1, sizeof *t)))
        return topo_err_nomem(err, "TLS");
    t->listen_fd = -1;
    t->opts = *opts;
    t->opts.cert_file = t->cert_file = strdup(opts->cert_file);
    t->opts.key_file = t->key_file = strdup(opts->key_file);
    if (!t->cert_file || !t->key_file) {
        rc = topo_err_nomem(err, "TLS");
        goto cleanup;
    }
    if ((rc = listen_on(&t->listen_fd, opts->port, err)) < 0)
        goto cleanup;
    t->cert_id = file_id(t->opts.cert_file);
    t->key_id = file_id(t->opts.key_file);
    if ((rc = start_generation(&t->current, t, err)) < 0)
        goto cleanup;
    t->next_check_ns = now + (long long)t->opts.check_ms * 1000000LL;
    *out = t;
    t = NULL;
cleanup:
    wh_tls_free(t);
    return rc;
}

int wh_tls_tick(wh_tls *t, long long now)
{
    reap_retired(t, 0, now);
    if (now < t->next_check_ns)
        return 0;
    t->next_check_ns = now + (long long)t->opts.check_ms * 1000000LL;
    wh_file_id c = file_id(t->opts.cert_file), k = file_id(t->opts.key_file);
    if (file_id_eq(&c, &t->cert_id) && file_id_eq(&k, &t->key_id))
        return 0;
    if (file_id_eq(&c, &t->tried_cert) && file_id_eq(&k, &t->tried_key))
        return 0; /* this pair failed already; wait for the next change */
    topo_err err = TOPO_ERR_INIT;
    wh_tls_gen *g = NULL;
    if (start_generation(&g, t, &err) < 0) {
        t->tried_cert = c;
        t->tried_key = k;
        topo_log(TOPO_LOG_ERROR, "certificate reload failed, still serving the old one: %s",
                 err.text);
        return -1;
    }
    wh_tls_gen *old = t->current;
    t->current = g;
    t->cert_id = c;
    t->key_id = k;
    retire(t, old, now);
    topo_log(TOPO_LOG_INFO, "serving certificate reloaded (TLS generation %llu)", g->generation);
    return 1;
}

void wh_tls_close(wh_tls *t, long long now)
{
    if (t->current) {
        wh_tls_gen *g = t->current;
        t->current = NULL;
        retire(t, g, now);
    }
    if (t->listen_fd >= 0) {
        close(t->listen_fd);
        t->listen_fd = -1;
    }
}

long long wh_tls_connections(const wh_tls *t)
{
    long long n = t->current ? atomic_load(&t->current->connections) : 0;
    for (const wh_tls_gen *g = t->retired; g; g = g->next)
        n += atomic_load(&g->connections);
    return n;
}

void wh_tls_stop(wh_tls *t)
{
    if (t->current) {
        stop_generation(t->current);
        t->current = NULL;
    }
    reap_retired(t, 1, 0);
}

void wh_tls_free(wh_tls *t)
{
    if (!t)
        return;
    wh_tls_stop(t);
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    free(t->cert_file);
    free(t->key_file);
    free(t);
}
