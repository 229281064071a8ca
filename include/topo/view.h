/* A view: the current set of one resource's objects, as a reflector
 * (topo/reflector.h) keeps it, for the daemons' in-memory mirrors
 * (topo-webhook's namespace policies and ResourceQuotas, topo-sync's
 * Nodes). What the set is and what an object means stay with the owner
 * (topo_view_ops); this module decides how the set is swapped, locked and
 * announced, so that every view recovers from the same failures the same
 * way:
 *   - a (re)list fills a fresh, private set that is swapped in whole when
 *     its last page arrived (objects deleted while the watch was down
 *     disappear); a list that fails is dropped, the old set still served;
 *   - watch events edit the current set under the write lock;
 *   - readers take the read lock (topo_view_read): they never wait for the
 *     API server;
 *   - the generation moves when the set changed in what the owner reads
 *     (ops.apply's answer, ops.differ for a relist), and wakes
 *     topo_view_wait.
 *
 * Threads: topo_view_read/_read_end, _synced, _generation, _wait and _wake
 * from any thread; the ops run on the reflector's thread (create and
 * destroy also in topo_view_create/_free); the rest from the owner's. */
#ifndef TOPO_VIEW_H
#define TOPO_VIEW_H

#include <stdint.h>

#include <jansson.h>

#include "topo/error.h"
#include "topo/k8s.h"
#include "topo/reflector.h"

typedef struct topo_view topo_view;

typedef struct topo_view_ops {
    /* An empty set, NULL when out of memory. */
    void *(*create)(void *payload);
    /* NULL-safe. */
    void (*destroy)(void *set, void *payload);
    /* One object's state (borrowed) into set; deleted: the object is gone.
     * 1: the set changed in what the owner reads, 0: it did not, a negative
     * topo_code: a failure (err may be left empty: the reflector names the
     * step), which ends the list or the watch (a watch resumes from the
     * previous event). */
    int (*apply)(void *set, const json_t *object, int deleted, topo_err *err, void *payload);
    /* Optional: whether a relisted set differs from the current one in
     * what the owner reads (non-zero); without it every relist moves the
     * generation. */
    int (*differ)(const void *current, const void *fresh, void *payload);
    /* Optional: a list is about to be swapped in (first: the first one);
     * set is that list, which only this thread holds. */
    void (*listed)(const void *set, int first, void *payload);
} topo_view_ops;

/* k (borrowed, must outlive the view) is the client of the view's
 * reflector, made from ro (copied; its zeros get the reflector's
 * defaults); k NULL: no reflector, the view is fed through
 * topo_view_handler (tests). ops and payload must outlive the view.
 * Creates the (empty) current set; nothing runs until topo_view_start or
 * topo_view_list. */
int topo_view_create(topo_view **out, topo_k8s *k, const topo_reflector_opts *ro,
                     const topo_view_ops *ops, void *payload, topo_err *err) TOPO_MUST_CHECK;

/* Stops if running, then frees (the sets too). NULL-safe. */
void topo_view_free(topo_view *v);

/* Runs the reflector on a thread of the view's; returns at once. Every
 * failure is retried: the view serves what it holds meanwhile. */
int topo_view_start(topo_view *v, topo_err *err) TOPO_MUST_CHECK;

/* Runs the reflector on the caller's thread until its first list is
 * swapped in (topo_view_synced then 1) or topo_view_stop (0 either way),
 * as a one-shot run does. */
int topo_view_list(topo_view *v, topo_err *err);

/* Ends the reflector (within about a second, or the client's request
 * timeout when a list is in flight) and joins its thread. Any thread for a
 * running topo_view_list; idempotent; NULL-safe. */
void topo_view_stop(topo_view *v);

/* The reflector callbacks feeding a view (payload: the view). */
const topo_reflector_handler *topo_view_handler(void);

/* The current set under the read lock, until topo_view_read_end. */
const void *topo_view_read(topo_view *v);
void topo_view_read_end(topo_view *v);

/* 1 once a list has been swapped in (and stays 1). NULL-safe. */
int topo_view_synced(const topo_view *v);

/* Moves with every change to the set (0 before the first list). Read
 * under topo_view_read, it is the generation of the set read. */
uint64_t topo_view_generation(const topo_view *v);

/* Blocks until the generation differs from seen, the deadline (a monotonic
 * time in ms, topo_clock_ms) passes, or topo_view_wake is called. Returns
 * the generation. */
uint64_t topo_view_wait(topo_view *v, uint64_t seen, int64_t deadline_ms);

/* Ends every wait now (something else changed, a stop was asked). */
void topo_view_wake(topo_view *v);

#endif
