/* A deadline for the whole process: once armed, unless cancelled in time, it
 * logs an error and ends the process with _exit(code).
 *
 * Why: on SIGTERM topo-webhook waits at most --shutdown-timeout for requests
 * in flight, but stopping libmicrohttpd afterwards joins its threads, which
 * blocks for as long as a request handler runs (a handler stuck on a lock or
 * on a busy cache file): the process would outlive its timeout, until the
 * kubelet's SIGKILL. The watchdog makes the bound hold whatever a handler
 * does. It runs on a thread of its own, so it fires even while the owner
 * thread is blocked in such a join. */
#ifndef TOPO_WEBHOOK_WATCHDOG_H
#define TOPO_WEBHOOK_WATCHDOG_H

typedef struct wh_watchdog wh_watchdog;

/* Arms it: after ms milliseconds (the monotonic clock, topo/clock.h), msg is logged at error
 * level and the process ends with _exit(code). -1 if no thread could start
 * (then nothing is armed). */
int wh_watchdog_start(wh_watchdog **out, long long ms, int code, const char *msg);
/* Disarms it (at once, not at the deadline) and frees; NULL is a no-op. */
void wh_watchdog_cancel(wh_watchdog *w);

#endif
