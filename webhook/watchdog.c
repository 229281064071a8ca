/* The process deadline (see watchdog.h). */
#define _POSIX_C_SOURCE 200809L

#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topo/clock.h"
#include "topo/log.h"

struct wh_watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct timespec deadline; /* topo_clock_deadline */
    int cancelled;
    int code;
    char msg[256];
};

static void *watch(void *arg)
{
    wh_watchdog *w = arg;
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->cancelled && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cond, &w->mu, &w->deadline);
    int fire = !w->cancelled;
    pthread_mutex_unlock(&w->mu);
    if (fire) {
        topo_log(TOPO_LOG_ERROR, "%s", w->msg);
        /* _exit, not exit: atexit handlers and other threads' state (a
         * library blocked in a join) must not hold the process up */
        _exit(w->code);
    }
    return NULL;
}

int wh_watchdog_start(wh_watchdog **out, long long ms, int code, const char *msg)
{
    *out = NULL;
    wh_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    int ok = topo_clock_cond_init(&w->cond) == 0;
    if (!ok || pthread_mutex_init(&w->mu, NULL) != 0) {
        if (ok)
            pthread_cond_destroy(&w->cond);
        free(w);
        return -1;
    }
    w->deadline = topo_clock_deadline(ms);
    w->code = code;
    strncpy(w->msg, msg ? msg : "watchdog", sizeof w->msg - 1);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

void wh_watchdog_cancel(wh_watchdog *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->cancelled = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
