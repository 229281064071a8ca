/* Absolute connection deadlines (see conn_deadline.h). */
#define _POSIX_C_SOURCE 200809L

#include "conn_deadline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "topo/log.h"

/* Cuts logged one by one per sweep; the rest are summed in one line, so a
 * flood of slow clients cannot flood the log. */
#define WH_CUT_LOG_MAX 8

const char *const wh_cut_reason_names[WH_NCUTS] = {"header_timeout", "slow_body", "idle"};

typedef enum { PHASE_HEADERS, PHASE_BODY, PHASE_HANDLING, PHASE_IDLE } wh_phase;

struct wh_conn {
    struct wh_conn *prev, *next;
    int fd;
    char peer[64];
    wh_phase phase;
    long long phase_start_ns;
    long long deadline_ns;
    unsigned long long body_bytes;
    int cut;
};

struct wh_conns {
    pthread_mutex_t mu;
    wh_deadline_limits lim;
    wh_conn *head;
    size_t count;
    atomic_ullong cuts[WH_NCUTS];
};

wh_conns *wh_conns_new(const wh_deadline_limits *limits)
{
    wh_conns *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    if (pthread_mutex_init(&cs->mu, NULL) != 0) {
        free(cs);
        return NULL;
    }
    cs->lim = *limits;
    return cs;
}

void wh_conns_free(wh_conns *cs)
{
    if (!cs)
        return;
    for (wh_conn *c = cs->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    pthread_mutex_destroy(&cs->mu);
    free(cs);
}

wh_conn *wh_conns_add(wh_conns *cs, int fd, const char *peer, long long now)
{
    wh_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    snprintf(c->peer, sizeof c->peer, "%s", peer ? peer : "");
    c->phase = PHASE_HEADERS;
    c->phase_start_ns = now;
    c->deadline_ns = now + cs->lim.header_ns;
    pthread_mutex_lock(&cs->mu);
    c->next = cs->head;
    if (cs->head)
        cs->head->prev = c;
    cs->head = c;
    cs->count++;
    pthread_mutex_unlock(&cs->mu);
    return c;
}

void wh_conns_remove(wh_conns *cs, wh_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        cs->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    cs->count--;
    pthread_mutex_unlock(&cs->mu);
    free(c);
}

/* Called with the mutex held. */
static void body_deadline(wh_conns *cs, wh_conn *c)
{
    if (cs->lim.min_body_rate == 0) {
        c->deadline_ns = -1;
        return;
    }
    /* whole seconds and the remainder apart: bytes * 1e9 could overflow
     * for an absurd byte count */
    unsigned long long rate = cs->lim.min_body_rate;
    unsigned long long secs = c->body_bytes / rate;
    unsigned long long rest_ns = (c->body_bytes % rate) * 1000000000ULL / rate;
    c->deadline_ns = c->phase_start_ns + cs->lim.body_grace_ns + (long long)secs * 1000000000LL +
                     (long long)rest_ns;
}

void wh_conn_body_start(wh_conns *cs, wh_conn *c, long long now)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    c->phase = PHASE_BODY;
    c->phase_start_ns = now;
    c->body_bytes = 0;
    body_deadline(cs, c);
    pthread_mutex_unlock(&cs->mu);
}

void wh_conn_body_bytes(wh_conns *cs, wh_conn *c, size_t n)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    if (c->phase == PHASE_BODY) {
        c->body_bytes += n;
        body_deadline(cs, c);
    }
    pthread_mutex_unlock(&cs->mu);
}

void wh_conn_handling(wh_conns *cs, wh_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    c->phase = PHASE_HANDLING;
    c->deadline_ns = -1;
    pthread_mutex_unlock(&cs->mu);
}

void wh_conn_idle(wh_conns *cs, wh_conn *c, long long now)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    c->phase = PHASE_IDLE;
    c->phase_start_ns = now;
    c->deadline_ns = now + cs->lim.idle_ns;
    pthread_mutex_unlock(&cs->mu);
}

typedef struct cut_note {
    char peer[64];
    wh_cut_reason reason;
    long long age_ms;
} cut_note;

size_t wh_conns_sweep(wh_conns *cs, long long now)
{
    cut_note notes[WH_CUT_LOG_MAX];
    size_t cut = 0;
    pthread_mutex_lock(&cs->mu);
    for (wh_conn *c = cs->head; c; c = c->next) {
        if (c->cut || c->phase == PHASE_HANDLING || c->deadline_ns < 0 || now < c->deadline_ns)
            continue;
        wh_cut_reason reason = c->phase == PHASE_HEADERS ? WH_CUT_HEADER_TIMEOUT
                               : c->phase == PHASE_BODY  ? WH_CUT_SLOW_BODY
                                                         : WH_CUT_IDLE;
        /* shutdown, not close: the descriptor stays the library's, which
         * sees the end of the stream and closes the connection itself */
        shutdown(c->fd, SHUT_RDWR);
        c->cut = 1;
        atomic_fetch_add(&cs->cuts[reason], 1);
        if (cut < WH_CUT_LOG_MAX) {
            memcpy(notes[cut].peer, c->peer, sizeof c->peer);
            notes[cut].reason = reason;
            notes[cut].age_ms = (now - c->phase_start_ns) / 1000000LL;
        }
        cut++;
    }
    pthread_mutex_unlock(&cs->mu);
    for (size_t i = 0; i < cut && i < WH_CUT_LOG_MAX; i++) {
        char age[32];
        snprintf(age, sizeof age, "%lld", notes[i].age_ms);
        topo_log_field f[] = {{"client", notes[i].peer},
                              {"reason", wh_cut_reason_names[notes[i].reason]},
                              {"phaseMs", age}};
        topo_log_kv(TOPO_LOG_WARN, f, 3, "connection cut: past its deadline");
    }
    if (cut > WH_CUT_LOG_MAX)
        topo_log(TOPO_LOG_WARN, "%zu more connections cut past their deadlines",
                 cut - WH_CUT_LOG_MAX);
    return cut;
}

unsigned long long wh_conns_cut_total(wh_conns *cs, wh_cut_reason reason)
{
    return atomic_load(&cs->cuts[reason]);
}

size_t wh_conns_count(wh_conns *cs)
{
    pthread_mutex_lock(&cs->mu);
    size_t n = cs->count;
    pthread_mutex_unlock(&cs->mu);
    return n;
}
