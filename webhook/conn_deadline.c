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
const char *const wh_evict_state_names[WH_NEVICTS] = {"pending", "idle", "stalled"};

/* How long a body may lag behind the rate before it counts as stalled: a
 * segment or two's delay on a busy network. */
#define STALL_MIN_NS (100LL * 1000000LL)

typedef enum { PHASE_HEADERS, PHASE_BODY, PHASE_HANDLING, PHASE_RESPONDING, PHASE_IDLE } wh_phase;

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
    size_t cut_open; /* cut (deadline or eviction), not yet removed */
    atomic_ullong cuts[WH_NCUTS];
    atomic_ullong evicted[WH_NEVICTS];
    atomic_ullong refused;
    unsigned long long logged_evicted, logged_refused; /* as of the last sweep's log */
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
    if (c->cut)
        cs->cut_open--;
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

static void waiting(wh_conns *cs, wh_conn *c, wh_phase phase, long long now)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    c->phase = phase;
    c->phase_start_ns = now;
    c->deadline_ns = now + cs->lim.idle_ns;
    pthread_mutex_unlock(&cs->mu);
}

void wh_conn_responding(wh_conns *cs, wh_conn *c, long long now)
{
    waiting(cs, c, PHASE_RESPONDING, now);
}

void wh_conn_idle(wh_conns *cs, wh_conn *c, long long now)
{
    waiting(cs, c, PHASE_IDLE, now);
}

/* Called with the mutex held: shuts c down once; the library sees the end
 * of the stream and closes it (then wh_conns_remove). */
static void cut_conn(wh_conns *cs, wh_conn *c)
{
    /* shutdown, not close: the descriptor stays the library's */
    shutdown(c->fd, SHUT_RDWR);
    c->cut = 1;
    cs->cut_open++;
}

/* A body behind the minimum rate counted from its headers, without the
 * grace its deadline allows: the API server sends an AdmissionReview's body
 * with its headers, so only a client holding its slot is behind. Called
 * with the mutex held. */
static int stalled(const wh_conns *cs, const wh_conn *c, long long now)
{
    if (c->phase != PHASE_BODY || cs->lim.min_body_rate == 0 || now <= c->phase_start_ns)
        return 0;
    long long elapsed = now - c->phase_start_ns;
    /* a first segment's delay is not a stall */
    if (elapsed < STALL_MIN_NS)
        return 0;
    unsigned long long rate = cs->lim.min_body_rate;
    unsigned long long secs = (unsigned long long)(elapsed / 1000000000LL);
    unsigned long long rest_ns = (unsigned long long)(elapsed % 1000000000LL);
    unsigned long long due = secs * rate + rest_ns * rate / 1000000000ULL;
    return c->body_bytes < due;
}

/* What eviction may take (mutex held): kind into *state. */
static int evictable(const wh_conns *cs, const wh_conn *c, long long now, wh_evict_state *state)
{
    if (c->cut)
        return 0;
    if (c->phase == PHASE_HEADERS)
        *state = WH_EVICT_PENDING;
    else if (c->phase == PHASE_IDLE)
        *state = WH_EVICT_IDLE;
    else if (stalled(cs, c, now))
        *state = WH_EVICT_STALLED;
    else
        return 0;
    return 1;
}

wh_room wh_conns_make_room(wh_conns *cs, wh_conn *newest)
{
    wh_room room = WH_ROOM_OK;
    if (!newest || cs->lim.max_live == 0)
        return room;
    pthread_mutex_lock(&cs->mu);
    /* newest was added at its accept: that is now */
    long long now = newest->phase_start_ns;
    while (cs->count - cs->cut_open > cs->lim.max_live && !newest->cut) {
        /* the longest waiting: pending since its accept, idle since its
         * last response, stalled since its headers; a request in progress
         * is never a candidate */
        wh_conn *victim = NULL;
        wh_evict_state victim_state = WH_EVICT_PENDING, state;
        for (wh_conn *c = cs->head; c; c = c->next) {
            if (c == newest || !evictable(cs, c, now, &state))
                continue;
            if (!victim || c->phase_start_ns < victim->phase_start_ns) {
                victim = c;
                victim_state = state;
            }
        }
        if (!victim) {
            cut_conn(cs, newest);
            atomic_fetch_add(&cs->refused, 1);
            room = WH_ROOM_REFUSED;
            break;
        }
        cut_conn(cs, victim);
        atomic_fetch_add(&cs->evicted[victim_state], 1);
        room = WH_ROOM_EVICTED;
    }
    pthread_mutex_unlock(&cs->mu);
    return room;
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
        cut_conn(cs, c);
        atomic_fetch_add(&cs->cuts[reason], 1);
        if (cut < WH_CUT_LOG_MAX) {
            memcpy(notes[cut].peer, c->peer, sizeof c->peer);
            notes[cut].reason = reason;
            notes[cut].age_ms = (now - c->phase_start_ns) / 1000000LL;
        }
        cut++;
    }
    /* evictions happen on the library's threads, at each accept past the
     * cap: summed here, one line per sweep however many there were */
    unsigned long long evicted = 0, refused = atomic_load(&cs->refused);
    for (size_t i = 0; i < WH_NEVICTS; i++)
        evicted += atomic_load(&cs->evicted[i]);
    unsigned long long new_evicted = evicted - cs->logged_evicted;
    unsigned long long new_refused = refused - cs->logged_refused;
    cs->logged_evicted = evicted;
    cs->logged_refused = refused;
    pthread_mutex_unlock(&cs->mu);
    if (new_evicted > 0 || new_refused > 0)
        topo_log(TOPO_LOG_WARN,
                 "connection cap (%zu) reached: %llu pending, idle or stalled connections evicted, "
                 "%llu new ones refused (every other had a request in progress)",
                 cs->lim.max_live, new_evicted, new_refused);
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

unsigned long long wh_conns_evicted_total(wh_conns *cs, wh_evict_state state)
{
    return atomic_load(&cs->evicted[state]);
}

unsigned long long wh_conns_refused_total(wh_conns *cs)
{
    return atomic_load(&cs->refused);
}

size_t wh_conns_count(wh_conns *cs)
{
    pthread_mutex_lock(&cs->mu);
    size_t n = cs->count;
    pthread_mutex_unlock(&cs->mu);
    return n;
}
