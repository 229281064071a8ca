/* When a request's answer stops being read (docs/webhook.md "Deadlines").
 *
 * The API server's ?timeout= (a Go duration) counts from the request's
 * arrival here, capped by --request-timeout. A request another replica
 * forwarded (forward.h) carries the forwarder's own budget as ?timeout= and
 * the moment it gives up in wall-clock time as ?deadlineUnixMs=: a forward
 * that sat in a socket (the placer paused, a slow network) arrives with its
 * time spent, which the relative timeout alone cannot show. The deadline is
 * the earlier of the two, so that the placer never stores a placement for a
 * request its forwarder has already answered unplaced. Any thread. */
#ifndef TOPO_WEBHOOK_REQUEST_DEADLINE_H
#define TOPO_WEBHOOK_REQUEST_DEADLINE_H

#include <stdint.h>

/* Query parameter of a forward: the forwarder's deadline, in milliseconds
 * since the Unix epoch (decimal digits). */
#define WH_DEADLINE_PARAM "deadlineUnixMs"

/* An absolute deadline further than this from the receiver's clock either
 * way is not believed (a wrong clock, not a slow network): ignored, logged
 * once. */
#define WH_DEADLINE_PLAUSIBLE_MS 60000LL

/* Skew allowance taken off an absolute deadline: none, as the replicas run
 * on cluster nodes that keep time by NTP (milliseconds apart); a larger skew
 * is the relative ?timeout='s to bound. */
#define WH_DEADLINE_SKEW_MS 0LL

/* The API server's ?timeout= (a Go duration: "10s", "1m30s", "500ms") in
 * whole milliseconds, truncated; -1 when absent, or it does not parse or is
 * negative (logged at debug). */
long long wh_request_timeout_ms(const char *timeout);

/* The request's deadline on topo_clock_ns: start_ns (its arrival) plus
 * timeout_ms (from wh_request_timeout_ms; <= 0: none) capped by cap_ms, and
 * no later than deadline_unix_ms (the WH_DEADLINE_PARAM text, or NULL) read
 * against the wall clock now_unix_ms at the monotonic now_ns. Garbage in
 * deadline_unix_ms is ignored (debug log); a value past
 * WH_DEADLINE_PLAUSIBLE_MS either way too (warning logged once). */
int64_t wh_request_deadline(int64_t start_ns, long long timeout_ms, long long cap_ms,
                            const char *deadline_unix_ms, int64_t now_ns, int64_t now_unix_ms);

/* The wall clock in milliseconds since the Unix epoch. */
int64_t wh_unix_ms(void);

#endif
