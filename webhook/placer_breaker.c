/* The circuit breaker on forwards to the placer (placer_breaker.h). */
#define _POSIX_C_SOURCE 200809L
#include "placer_breaker.h"

#include <string.h>

void wh_breaker_init(wh_breaker *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
}

void wh_breaker_dispose(wh_breaker *b)
{
    pthread_mutex_destroy(&b->mu);
}

/* A different placer than the one the state is about: it starts closed
 * (the old one's failures say nothing about it). Under mu. */
static void follow(wh_breaker *b, const char *addr)
{
    if (strncmp(b->addr, addr, sizeof b->addr - 1) == 0)
        return;
    strncpy(b->addr, addr, sizeof b->addr - 1);
    b->addr[sizeof b->addr - 1] = '\0';
    b->state = WH_BREAKER_CLOSED;
    b->failures = 0;
    b->trial = 0;
}

int wh_breaker_allow(wh_breaker *b, const char *addr, long long now)
{
    int ok = 1;
    pthread_mutex_lock(&b->mu);
    follow(b, addr);
    if (b->state == WH_BREAKER_OPEN && now - b->opened_ns >= WH_BREAKER_COOL_NS) {
        b->state = WH_BREAKER_HALF_OPEN;
        b->trial = 0;
    }
    if (b->state == WH_BREAKER_OPEN)
        ok = 0;
    else if (b->state == WH_BREAKER_HALF_OPEN) {
        /* one trial at a time; a trial that never reports back (it
         * cannot: every forward ends within its deadline) is replaced
         * after another cool-down */
        if (b->trial && now - b->trial_ns < WH_BREAKER_COOL_NS) {
            ok = 0;
        } else {
            b->trial = 1;
            b->trial_ns = now;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return ok;
}

int wh_breaker_done(wh_breaker *b, const char *addr, int ok, long long now)
{
    int change = 0;
    pthread_mutex_lock(&b->mu);
    if (strncmp(b->addr, addr, sizeof b->addr - 1) != 0) {
        pthread_mutex_unlock(&b->mu); /* about a placer no longer asked */
        return 0;
    }
    if (ok) {
        if (b->state != WH_BREAKER_CLOSED)
            change = -1;
        b->state = WH_BREAKER_CLOSED;
        b->failures = 0;
        b->trial = 0;
    } else if (b->state == WH_BREAKER_HALF_OPEN) {
        /* the trial failed: another cool-down (already counted as open) */
        b->state = WH_BREAKER_OPEN;
        b->opened_ns = now;
        b->trial = 0;
    } else if (b->state == WH_BREAKER_CLOSED) {
        if (b->failures == 0 || now - b->first_failure_ns > WH_BREAKER_WINDOW_NS) {
            b->failures = 0;
            b->first_failure_ns = now;
        }
        if (++b->failures >= WH_BREAKER_FAILURES) {
            b->state = WH_BREAKER_OPEN;
            b->opened_ns = now;
            b->failures = 0;
            b->openings++;
            change = 1;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return change;
}

int wh_breaker_is_open(wh_breaker *b)
{
    pthread_mutex_lock(&b->mu);
    int open = b->state != WH_BREAKER_CLOSED;
    pthread_mutex_unlock(&b->mu);
    return open;
}

uint64_t wh_breaker_openings(wh_breaker *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t n = b->openings;
    pthread_mutex_unlock(&b->mu);
    return n;
}
