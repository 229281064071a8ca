/* Decoders of what the API server sends the Kubernetes client (k8s.c): one
 * line of a watch stream and one page of a list. Internal to lib/net; kept
 * apart from the transport so a fuzzer (test/fuzz/fuzz_watch_event.c) and the
 * unit tests can drive them without a server. */
#ifndef TOPO_NET_K8S_DECODE_H
#define TOPO_NET_K8S_DECODE_H

#include <stddef.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"
#include "topo/limits.h"

/* The error for a Status object st (or NULL, or not an object) that came
 * with `status`: the code by status (TOPO_EGENERIC when it maps to none),
 * "<what>: <status> <reason>: <message>" in err, the message taken from the
 * start of body (printable bytes) when st has none. */
int net_k8s_status_error_obj(long status, const json_t *st, const char *body, size_t len,
                              const char *what, topo_err *err);

/* Copies obj's metadata.resourceVersion into rv: TOPO_EINVALID when it is
 * missing, TOPO_ELIMIT when it does not fit. */
int net_k8s_copy_rv(char rv[TOPO_K8S_RV_MAX], const json_t *obj, const char *what,
                     topo_err *err);

typedef enum topo_k8s_line_kind {
    TOPO_K8S_LINE_NONE = 0,  /* an empty line: nothing to do */
    TOPO_K8S_LINE_EVENT,     /* an event: type, object and rv are set */
    TOPO_K8S_LINE_STATUS,    /* a Status without a type: the body of an error answer */
    TOPO_K8S_LINE_MALFORMED  /* not a JSON object (the error is TOPO_EINVALID) */
} topo_k8s_line_kind;

/* One decoded watch line. root owns the document; object borrows from it. */
typedef struct topo_k8s_watch_line {
    topo_k8s_line_kind kind;
    topo_k8s_event_type type; /* TOPO_K8S_LINE_EVENT */
    json_t *object;           /* TOPO_K8S_LINE_EVENT: the event's object (borrowed) */
    json_t *root;             /* the event, or the Status (owned) */
    char rv[TOPO_K8S_RV_MAX]; /* TOPO_K8S_LINE_EVENT: object's resourceVersion */
} topo_k8s_watch_line;

/* Decodes one line (len bytes, not NUL-terminated) of a watch stream into
 * *out. 0 for an event, an empty line, or (when status_wanted) a Status
 * without a type; otherwise the code with "<what>: ..." in err: an ERROR
 * event gives its Status's code (TOPO_EGONE for 410), a malformed line,
 * an unknown type, an event without an object or a resourceVersion give
 * TOPO_EINVALID or TOPO_ELIMIT. kind is set in every case; dispose of *out
 * with net_k8s_watch_line_dispose either way. */
int net_k8s_watch_line_decode(topo_k8s_watch_line *out, const char *line, size_t len,
                               int status_wanted, const char *what, topo_err *err);

/* Releases root; NULL-safe. */
void net_k8s_watch_line_dispose(topo_k8s_watch_line *l);

/* One decoded page of a list, borrowed from the page. */
typedef struct topo_k8s_list_page {
    json_t *items;    /* the items array, or NULL (none, or JSON null) */
    const char *next; /* metadata.continue when non-empty, else NULL: the last page */
} topo_k8s_list_page;

/* Decodes a list page (a JSON object), the answer to GET path, into *out,
 * and when rv_out is not NULL copies the page's metadata.resourceVersion
 * into it (the first page). TOPO_EINVALID with "GET <path>: ..." in err when
 * items is not a list or the resourceVersion is missing, TOPO_ELIMIT when it
 * does not fit. */
int net_k8s_list_page_decode(topo_k8s_list_page *out, char rv_out[TOPO_K8S_RV_MAX],
                              const json_t *page, const char *path, topo_err *err);

#endif
