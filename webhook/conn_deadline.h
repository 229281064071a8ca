/* Absolute deadlines for the webhook's HTTPS connections.
 *
 * libmicrohttpd's own connection timeout is an inactivity timeout: every
 * byte received resets it, so a client trickling a byte now and then keeps a
 * connection (and a slot of the connection limit) for as long as it likes.
 * This tracker gives each connection a deadline that bytes do not push back:
 *
 * - headers: from the TCP accept until the request's headers are complete
 *   (the TLS handshake included), at most header_ns;
 * - body: the body must have arrived by headers_done + body_grace_ns +
 *   received / min_body_rate, i.e. a client slower than the rate is cut;
 * - handling: no deadline (the admission handler is never cut from under
 *   its request by the transport);
 * - responding: from a response queued until it was sent, at most idle_ns
 *   (a client that does not read its answer);
 * - idle: from a response sent to the end of the next request's headers, at
 *   most idle_ns (keep-alive).
 *
 * And a cap on the connections open at once (max_live): the connection
 * accepted past it evicts the one that has been pending (TLS handshake or
 * headers not complete), idle (keep-alive, between requests) or stalled
 * (a body behind min_body_rate counted from its headers, without the grace
 * its deadline allows) the longest, so that connections which send nothing,
 * or headers and then nothing, cannot keep the API server's own out until
 * their deadlines pass. A connection with a request in progress (a body
 * keeping pace, handling, responding) is never evicted; when every other
 * one has one, the new connection is closed itself (refused).
 *
 * A sweep (the owner thread, every half second or so) shuts down, with
 * shutdown(2), the socket of every connection past its deadline; the HTTP
 * library then sees the connection end and closes it itself. The socket is
 * only touched while its connection is registered, under the same mutex as
 * wh_conns_remove(), which the library calls before it closes the socket:
 * a sweep never reaches a descriptor number reused by another file.
 *
 * No libmicrohttpd here (server.c is its only user): connections are file
 * descriptors, times are topo_clock_ns nanoseconds passed in by the caller
 * (so that tests choose them). */
#ifndef TOPO_WEBHOOK_CONN_DEADLINE_H
#define TOPO_WEBHOOK_CONN_DEADLINE_H

#include <stddef.h>

typedef enum {
    WH_CUT_HEADER_TIMEOUT, /* TLS handshake and headers not done in time */
    WH_CUT_SLOW_BODY,      /* body slower than the minimum rate */
    WH_CUT_IDLE,           /* keep-alive idle (or a response not read) too long */
    WH_NCUTS
} wh_cut_reason;

/* "header_timeout", "slow_body", "idle": the metric's reason label. */
extern const char *const wh_cut_reason_names[WH_NCUTS];

typedef struct wh_deadline_limits {
    long long header_ns;              /* > 0 */
    long long idle_ns;                /* > 0 */
    long long body_grace_ns;          /* >= 0 */
    unsigned long long min_body_rate; /* bytes per second; 0: bodies get no deadline */
    size_t max_live;                  /* connections open at once; 0: no cap */
} wh_deadline_limits;

/* What a connection evicted at the cap was doing: "pending" (TLS handshake
 * or headers not complete), "idle" (keep-alive between requests), "stalled"
 * (a body behind the minimum rate); the metric's state label. */
typedef enum { WH_EVICT_PENDING, WH_EVICT_IDLE, WH_EVICT_STALLED, WH_NEVICTS } wh_evict_state;
extern const char *const wh_evict_state_names[WH_NEVICTS];

typedef struct wh_conns wh_conns;
typedef struct wh_conn wh_conn;

/* NULL when out of memory. */
wh_conns *wh_conns_new(const wh_deadline_limits *limits);
/* Forgets every connection (their sockets are not touched); NULL is a no-op. */
void wh_conns_free(wh_conns *cs);

/* A connection just accepted on fd; peer (may be NULL) names it in logs.
 * NULL when out of memory (the connection then has no deadline). */
wh_conn *wh_conns_add(wh_conns *cs, int fd, const char *peer, long long now);
/* Before its socket is closed; NULL is a no-op. */
void wh_conns_remove(wh_conns *cs, wh_conn *c);

/* The request's headers are complete: the body phase starts. */
void wh_conn_body_start(wh_conns *cs, wh_conn *c, long long now);
/* n more body bytes arrived. */
void wh_conn_body_bytes(wh_conns *cs, wh_conn *c, size_t n);
/* The handler runs: no deadline until wh_conn_idle(). */
void wh_conn_handling(wh_conns *cs, wh_conn *c);
/* A response was queued: it must be read by now + idle_ns; not evictable
 * until it was sent (wh_conn_idle). */
void wh_conn_responding(wh_conns *cs, wh_conn *c, long long now);
/* The response was sent (or none is coming): the next request's headers
 * are due by now + idle_ns. */
void wh_conn_idle(wh_conns *cs, wh_conn *c, long long now);

/* What wh_conns_make_room did. */
typedef enum {
    WH_ROOM_OK,      /* under the cap */
    WH_ROOM_EVICTED, /* another connection was shut down to make room */
    WH_ROOM_REFUSED  /* none could be: newest itself was shut down */
} wh_room;

/* newest was just added: while more than max_live connections are open
 * (not cut), shuts down the one pending, idle or stalled for the longest
 * (as of newest's accept), newest only when no other can go. Counted;
 * logged by the next sweep. */
wh_room wh_conns_make_room(wh_conns *cs, wh_conn *newest);

/* Shuts down every connection past its deadline (each once), counts and
 * logs it, and logs the evictions since the last sweep in one line;
 * returns how many were cut now (by deadline). */
size_t wh_conns_sweep(wh_conns *cs, long long now);

unsigned long long wh_conns_cut_total(wh_conns *cs, wh_cut_reason reason);
unsigned long long wh_conns_evicted_total(wh_conns *cs, wh_evict_state state);
unsigned long long wh_conns_refused_total(wh_conns *cs);
/* Connections registered now. */
size_t wh_conns_count(wh_conns *cs);

#endif
