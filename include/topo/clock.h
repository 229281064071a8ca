/* The monotonic clock: the one place topo reads it. Durations, deadlines,
 * timers and waits all count on it, so a wall-clock step (NTP, an admin's
 * `date -s`) never stretches or cuts a wait short. Wall-clock timestamps
 * (what a person or the API server reads) use CLOCK_REALTIME where they are
 * written, not this. Thread-safe: no state. */
#ifndef TOPO_CLOCK_H
#define TOPO_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Monotonic time in nanoseconds, from an arbitrary origin (boot). */
int64_t topo_clock_ns(void);
/* The same clock in milliseconds (topo_clock_ns() / 1000000). */
int64_t topo_clock_ms(void);

/* Initialises *cv so that pthread_cond_timedwait counts its deadline on this
 * clock (deadlines from topo_clock_deadline). Returns 0 or the pthread error. */
int topo_clock_cond_init(pthread_cond_t *cv);
/* The absolute time ms milliseconds from now (negative: now), for
 * pthread_cond_timedwait on a condition variable from topo_clock_cond_init. */
struct timespec topo_clock_deadline(long long ms);
/* topo_clock_deadline for an absolute time on this clock, in milliseconds. */
struct timespec topo_clock_at_ms(int64_t at_ms);

/* Sleeps ns nanoseconds, resuming after signal interruptions. */
void topo_clock_sleep_ns(int64_t ns);

#endif
