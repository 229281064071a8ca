/* A circuit breaker on forwards to the placer (docs/webhook.md "Several
 * replicas"): a placer that keeps timing out (or failing) is treated as
 * unreachable for a short while, so that requests get the no-fit answer at
 * once instead of each spending most of the API server's deadline on it.
 *
 * Closed: every request forwards. WH_BREAKER_FAILURES failures in a row (a
 * timeout, no connection, a 5xx) within WH_BREAKER_WINDOW_NS open it: for
 * WH_BREAKER_COOL_NS nothing is forwarded. Then half-open: one request
 * forwards (the trial), the others are still answered at once; the trial
 * answered closes it, failed opens it again. A success resets the count.
 * The breaker is per placer: a new placer address starts closed.
 *
 * Pure state, no clock of its own (now is passed in): unit-tested in
 * test/webhook/test_placer_breaker.c. Any thread (a mutex inside). */
#ifndef TOPO_WEBHOOK_PLACER_BREAKER_H
#define TOPO_WEBHOOK_PLACER_BREAKER_H

#include <pthread.h>
#include <stdint.h>

#define WH_BREAKER_FAILURES 3
#define WH_BREAKER_WINDOW_NS (10LL * 1000000000LL)
#define WH_BREAKER_COOL_NS (5LL * 1000000000LL)
#define WH_BREAKER_ADDR_MAX 256

typedef enum wh_breaker_state {
    WH_BREAKER_CLOSED = 0,
    WH_BREAKER_OPEN,
    WH_BREAKER_HALF_OPEN /* cool-down over: one trial in flight or allowed */
} wh_breaker_state;

typedef struct wh_breaker {
    pthread_mutex_t mu;
    char addr[WH_BREAKER_ADDR_MAX]; /* the placer the state is about */
    wh_breaker_state state;
    int failures;           /* in a row, the first at first_failure_ns */
    long long first_failure_ns;
    long long opened_ns;
    int trial;              /* half-open: the trial request is out, since trial_ns */
    long long trial_ns;
    uint64_t openings;      /* since start */
} wh_breaker;

void wh_breaker_init(wh_breaker *b);
void wh_breaker_dispose(wh_breaker *b);

/* May a request to addr be forwarded now? 1 yes (in half-open: this is the
 * trial, and its wh_breaker_done must follow), 0 no (open: answer at once). */
int wh_breaker_allow(wh_breaker *b, const char *addr, long long now);

/* How a forward allowed to addr ended: ok 1 (the placer answered), 0 (a
 * timeout, no connection, a 5xx). Returns +1 when this opened the breaker,
 * -1 when it closed it, 0 otherwise (the caller logs each change once). */
int wh_breaker_done(wh_breaker *b, const char *addr, int ok, long long now);

/* 1 while open or half-open (the gauge), and the openings since start. */
int wh_breaker_is_open(wh_breaker *b);
uint64_t wh_breaker_openings(wh_breaker *b);

#endif
