/* A reflector: keeps a copy of one resource type current with client-go's
 * list+watch discipline, for every mirror of cluster objects (the cache
 * filler, topo-webhook's in-memory views). It
 *   - lists page by page (limit + continue), or, given a resourceVersion to
 *     resume from, starts with the watch instead;
 *   - watches from the list's resourceVersion with allowWatchBookmarks, and
 *     moves its position with every event and bookmark, so a watch that ends
 *     (server timeout, dropped connection) resumes where it stopped;
 *   - lists again at once when the watch's position is too old (410 Gone as
 *     HTTP status or as an in-stream ERROR event: normal, history is
 *     finite), and restarts a list from its first page, once and at once,
 *     when its continue token expired mid-list;
 *   - backs off after every other failure, doubling with jitter (replicas
 *     started together do not retry in step): a 410 to a list's first page
 *     or to a restarted list (the server cannot serve the list at all), or
 *     to a watch still at the resourceVersion of the list just taken,
 *     429, 5xx, 403, 404, a broken connection, a refusing callback;
 *   - stops promptly when asked, from any thread.
 * What the objects mean stays with the owner, who gets them through
 * callbacks (topo_reflector_handler) on the thread running the reflector.
 *
 * Logs: "<name>: resourceVersion <rv> expired, listing again" and "<name>:
 * continue token expired, listing again from the start" (debug), and per
 * failure one line "<name>: <error>; retrying in <ms> ms" with the fields
 * resource, reason (topo_reflector_reason_name), failures (in a row) and
 * retry_ms: warning, error for 401, 403 and 404 (RBAC, credentials or a
 * resource not served, which a retry alone will not fix: an operator must). <error> holds the HTTP status, the Status's
 * reason and its message.
 *
 * Threads: topo_reflector_run blocks on the caller's thread, using the
 * borrowed client only there; topo_reflector_stop may be called from any
 * thread (not from a signal handler). */
#ifndef TOPO_REFLECTOR_H
#define TOPO_REFLECTOR_H

#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"

typedef struct topo_reflector topo_reflector;

/* Why a list or watch failed, as counted (topo_reflector_failures). */
typedef enum topo_reflector_reason {
    TOPO_REFLECTOR_GONE = 0,     /* 410 to a list (a watch's 410 is no failure) */
    TOPO_REFLECTOR_THROTTLED,    /* 429 */
    TOPO_REFLECTOR_SERVER,       /* 5xx */
    TOPO_REFLECTOR_FORBIDDEN,    /* 403: RBAC */
    TOPO_REFLECTOR_UNAUTHORIZED, /* 401, or no credential to be had */
    TOPO_REFLECTOR_NOT_FOUND,    /* 404: the resource is not served */
    TOPO_REFLECTOR_TIMEOUT,      /* 408, 504, or the client's timeout */
    TOPO_REFLECTOR_CONNECT,      /* no connection, or it broke */
    TOPO_REFLECTOR_OTHER,        /* anything else (a callback refused, say) */
    /* The owner's local store refused what was read (a full disk, an I/O
     * error): counted by the owner (the cache filler), never by
     * topo_reflector_reason_of. */
    TOPO_REFLECTOR_CACHE,
    TOPO_REFLECTOR_REASONS
} topo_reflector_reason;

/* The reason a failure with this topo_code counts as. */
topo_reflector_reason topo_reflector_reason_of(int code);
/* "gone", "throttled", "server", "forbidden", "unauthorized", "not_found",
 * "timeout", "connect", "other", "cache": a metric's label value. */
const char *topo_reflector_reason_name(topo_reflector_reason reason);

/* Failures of one resource's reflector(s) by reason, for the owner's
 * /metrics. Zero it (or declare it static) before use; the reflector adds,
 * any thread reads with topo_reflector_failures_get. */
typedef struct topo_reflector_failures {
    _Atomic uint64_t n[TOPO_REFLECTOR_REASONS];
} topo_reflector_failures;

uint64_t topo_reflector_failures_get(const topo_reflector_failures *f,
                                     topo_reflector_reason reason);

/* The waits after failures in a row, when the owner names none. */
#define TOPO_REFLECTOR_BACKOFF_BASE_MS_DEFAULT 200L
#define TOPO_REFLECTOR_BACKOFF_MAX_MS_DEFAULT 10000L

/* Zero means the default. Strings are copied by topo_reflector_create. */
typedef struct topo_reflector_opts {
    const char *name;             /* log prefix ("ns-policy"); default res->plural */
    const topo_k8s_resource *res; /* required; borrowed (a static constant) */
    const char *ns;               /* one namespace; NULL: all, or cluster-scoped */
    const char *label_selector;   /* NULL: every object */
    const char *field_selector;
    unsigned int page_size; /* items per list page, default TOPO_K8S_PAGE_DEFAULT */
    long watch_timeout_s;   /* server-side watch timeout, default a random 300..599 */
    /* Waits after failures in a row double from base to max, each drawn
     * between half and all of that. */
    long backoff_base_ms; /* TOPO_REFLECTOR_BACKOFF_BASE_MS_DEFAULT */
    long backoff_max_ms;  /* TOPO_REFLECTOR_BACKOFF_MAX_MS_DEFAULT (or base, when larger) */
    /* The first watch starts here, without a list (the owner stored the
     * state as of this resourceVersion); NULL or "": list first. */
    const char *resume_rv;
    /* List and watch metadata only (topo/k8s.h TOPO_K8S_ACCEPT_METADATA*):
     * the objects the handler gets are PartialObjectMetadata (kind,
     * apiVersion meta.k8s.io/v1, metadata), or full objects when the server
     * refused (406, logged once). For owners that read metadata.* only. */
    int metadata_only;
    /* Every failure is counted here by reason (NULL: not counted).
     * Borrowed: it must outlive the reflector. */
    topo_reflector_failures *failures;
} topo_reflector_opts;

/* The owner's side. Every callback is optional and gets the payload given
 * to topo_reflector_create. Those returning int: 0 goes on; a negative
 * topo_code is a failure (message in err, if any: otherwise the reflector
 * writes one), which backs off and retries like a failed request; a
 * positive value ends topo_reflector_run, which returns 0, as after
 * topo_reflector_stop. json_t arguments are borrowed for the call. */
typedef struct topo_reflector_handler {
    /* A list begins; its objects follow, then list_end or list_abort.
     * Exactly one of them follows every list_begin, whatever it returned. */
    int (*list_begin)(topo_err *err, void *payload);
    int (*list_object)(json_t *object, topo_err *err, void *payload);
    /* Every page arrived (and was accepted): the objects were the state at
     * rv, which the watch starts from. A failure here still gets list_abort. */
    int (*list_end)(const char *rv, topo_err *err, void *payload);
    /* The list failed, was stopped, or a callback refused: discard it. */
    void (*list_abort)(void *payload);
    /* A watch event: TOPO_K8S_ADDED, _MODIFIED or _DELETED (object is the
     * last state), rv its resourceVersion. A failure resumes the next watch
     * from the event before. */
    int (*event)(topo_k8s_event_type type, json_t *object, const char *rv, topo_err *err,
                 void *payload);
    /* The watch reached rv with no change to deliver (a bookmark). */
    int (*bookmark)(const char *rv, topo_err *err, void *payload);
    /* A watch ended without a failure (the server's timeout, or a stop),
     * after `events` events; non-zero ends topo_reflector_run (returns 0). */
    int (*watch_end)(uint64_t events, void *payload);
    /* A list or watch failed (not because of a stop) with code; failures:
     * how many failed in a row before this one. 0 backs off and retries
     * (the warning is logged); negative ends topo_reflector_run with that
     * code (err copied out); positive ends it quietly (returns 0). Without
     * this callback every failure is retried. */
    int (*error)(int code, const topo_err *err, unsigned int failures, void *payload);
} topo_reflector_handler;

/* k is borrowed: used by topo_reflector_run only, and must outlive the
 * reflector. handler is copied; payload must outlive the reflector. */
int topo_reflector_create(topo_reflector **out, topo_k8s *k, const topo_reflector_opts *opts,
                          const topo_reflector_handler *handler, void *payload,
                          topo_err *err) TOPO_MUST_CHECK;

/* Not while topo_reflector_run runs. NULL-safe. */
void topo_reflector_free(topo_reflector *r);

/* Lists and watches until stopped (0), a callback ends it (0 when
 * positive), or handler.error ends it (that code, err filled). A later
 * call goes on from the resourceVersion reached. */
int topo_reflector_run(topo_reflector *r, topo_err *err);

/* Makes the running topo_reflector_run return within about a second (an
 * open watch, a backoff wait and a list between two objects end at once;
 * a list page in flight ends within the client's request timeout), or the
 * next call return at once when none is running. Any thread; NULL-safe. */
void topo_reflector_stop(topo_reflector *r);

#endif
