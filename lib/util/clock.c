/* The monotonic clock (topo/clock.h). */
#define _POSIX_C_SOURCE 200809L

#include "topo/clock.h"

#include <errno.h>

int64_t topo_clock_ns(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail on Linux; 0 keeps callers' arithmetic sane. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t topo_clock_ms(void)
{
    return topo_clock_ns() / 1000000;
}

int topo_clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

static struct timespec at_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
    return ts;
}

struct timespec topo_clock_deadline(long long ms)
{
    int64_t now = topo_clock_ns();
    if (ms < 0)
        ms = 0;
    /* Far enough is forever: no overflow past ~292 years of nanoseconds. */
    if (ms > (INT64_MAX - now) / 1000000)
        ms = (INT64_MAX - now) / 1000000;
    return at_ns(now + (int64_t)ms * 1000000);
}

struct timespec topo_clock_at_ms(int64_t at_ms)
{
    if (at_ms < 0)
        at_ms = 0;
    if (at_ms > INT64_MAX / 1000000)
        at_ms = INT64_MAX / 1000000;
    return at_ns(at_ms * 1000000);
}

void topo_clock_sleep_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    struct timespec req = at_ns(ns), rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}
