/* Tests for lib/net/view.c: a view fed through its reflector callbacks
 * (topo_view_handler) as a reflector would, over a set of its own (a
 * jansson object name -> value): lists swapped in whole, failed lists
 * dropped, the generation and the waits it wakes. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "topo/clock.h"
#include "topo/view.h"

/* ---- a set: name -> value, what the owner reads ---- */

typedef struct owner {
    int listed, first; /* listed calls, and the first flag of the last */
    size_t listed_size; /* the size of the set it was given */
} owner;

static void *set_create(void *payload)
{
    (void)payload;
    return json_object();
}

static void set_destroy(void *set, void *payload)
{
    (void)payload;
    json_decref(set);
}

/* {"name": n, "value": v}; a value of "fail" is refused. */
static int set_apply(void *set, const json_t *object, int deleted, topo_err *err, void *payload)
{
    const char *name = json_string_value(json_object_get(object, "name"));
    json_t *value = json_object_get(object, "value");
    json_t *old = json_object_get(set, name);
    (void)payload;
    if (json_is_string(value) && strcmp(json_string_value(value), "fail") == 0)
        return topo_err_set(err, TOPO_EINVALID, "refused");
    if (deleted)
        return old != NULL && json_object_del(set, name) == 0;
    if (old != NULL && json_equal(old, value))
        return 0;
    return json_object_set(set, name, value) == 0 ? 1 : TOPO_ENOMEM;
}

static int set_differ(const void *current, const void *fresh, void *payload)
{
    (void)payload;
    return !json_equal((json_t *)current, (json_t *)fresh);
}

static void set_listed(const void *set, int first, void *payload)
{
    owner *o = payload;
    o->listed++;
    o->first = first;
    o->listed_size = json_object_size(set);
}

static const topo_view_ops ops = {
    .create = set_create,
    .destroy = set_destroy,
    .apply = set_apply,
    .differ = set_differ,
    .listed = set_listed,
};

static const topo_view_ops ops_no_differ = {
    .create = set_create, .destroy = set_destroy, .apply = set_apply};

static topo_view *new_view(const topo_view_ops *o, owner *payload)
{
    topo_view *v = NULL;
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_view_create(&v, NULL, NULL, o, payload, &err), 0);
    assert_non_null(v);
    return v;
}

static json_t *obj(const char *name, const char *value)
{
    json_t *o = json_pack("{s:s, s:s}", "name", name, "value", value);
    assert_non_null(o);
    return o;
}

/* A whole list through the handler: begin, the objects, end. */
static int list(topo_view *v, const char *const *pairs, size_t n)
{
    const topo_reflector_handler *h = topo_view_handler();
    topo_err err = TOPO_ERR_INIT;
    int rc = h->list_begin(&err, v);
    for (size_t i = 0; rc == 0 && i < n; i += 2) {
        json_t *o = obj(pairs[i], pairs[i + 1]);
        rc = h->list_object(o, &err, v);
        json_decref(o);
    }
    if (rc == 0)
        rc = h->list_end("1", &err, v);
    if (rc != 0)
        h->list_abort(v);
    return rc;
}

static int event(topo_view *v, topo_k8s_event_type type, const char *name, const char *value)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *o = obj(name, value);
    int rc = topo_view_handler()->event(type, o, "2", &err, v);
    json_decref(o);
    return rc;
}

/* The value of name in the current set, "" when absent (copied). */
static char *read_value(topo_view *v, const char *name)
{
    const json_t *set = topo_view_read(v);
    const char *s = json_string_value(json_object_get(set, name));
    char *copy = strdup(s != NULL ? s : "");
    topo_view_read_end(v);
    assert_non_null(copy);
    return copy;
}

static void value_is(topo_view *v, const char *name, const char *want)
{
    char *got = read_value(v, name);
    assert_string_equal(got, want);
    free(got);
}

static size_t set_size(topo_view *v)
{
    size_t n = json_object_size(topo_view_read(v));
    topo_view_read_end(v);
    return n;
}

/* ---- cases ---- */

/* Nothing is synced before a list; a list is swapped in whole (what the
 * relist no longer has is gone) and told to the owner before. */
static void test_view__list_swapped_in_whole(void **state)
{
    (void)state;
    owner o = {0};
    topo_view *v = new_view(&ops, &o);
    static const char *const first[] = {"a", "1", "b", "2"}, *const second[] = {"b", "3"};
    assert_false(topo_view_synced(v));
    assert_int_equal(topo_view_generation(v), 0);
    assert_int_equal(set_size(v), 0);

    assert_int_equal(list(v, first, 4), 0);
    assert_true(topo_view_synced(v));
    assert_int_equal(o.listed, 1);
    assert_true(o.first);
    assert_int_equal(o.listed_size, 2);
    value_is(v, "a", "1");
    value_is(v, "b", "2");

    assert_int_equal(list(v, second, 2), 0);
    assert_int_equal(o.listed, 2);
    assert_false(o.first);
    assert_int_equal(set_size(v), 1);
    value_is(v, "a", "");
    value_is(v, "b", "3");
    topo_view_free(v);
}

/* A list that fails (a refused object) is dropped: the old set is still
 * served, synced stays as it was, the generation does not move. */
static void test_view__failed_list_keeps_the_set(void **state)
{
    (void)state;
    owner o = {0};
    topo_view *v = new_view(&ops, &o);
    static const char *const good[] = {"a", "1"}, *const bad[] = {"a", "2", "b", "fail"};
    assert_int_equal(list(v, bad, 4), TOPO_EINVALID);
    assert_false(topo_view_synced(v));
    assert_int_equal(set_size(v), 0);
    assert_int_equal(list(v, good, 2), 0);
    uint64_t g = topo_view_generation(v);
    assert_int_equal(list(v, bad, 4), TOPO_EINVALID);
    assert_true(topo_view_synced(v));
    assert_int_equal(topo_view_generation(v), g);
    value_is(v, "a", "1");
    assert_int_equal(o.listed, 1);
    topo_view_free(v);
}

/* The generation moves with what the owner reads: the first list, an
 * event that changed the set, a relist that differs; not an event that
 * changed nothing, nor a relist of the same set. A refused event is a
 * failure and changes nothing. */
static void test_view__generation_moves_on_change_only(void **state)
{
    (void)state;
    owner o = {0};
    topo_view *v = new_view(&ops, &o);
    static const char *const same[] = {"a", "1"}, *const other[] = {"a", "2"};
    assert_int_equal(list(v, same, 2), 0);
    assert_int_equal(topo_view_generation(v), 1);
    assert_int_equal(list(v, same, 2), 0);
    assert_int_equal(topo_view_generation(v), 1);

    assert_int_equal(event(v, TOPO_K8S_MODIFIED, "a", "1"), 0);
    assert_int_equal(topo_view_generation(v), 1);
    assert_int_equal(event(v, TOPO_K8S_ADDED, "b", "1"), 0);
    assert_int_equal(topo_view_generation(v), 2);
    value_is(v, "b", "1");
    assert_int_equal(event(v, TOPO_K8S_MODIFIED, "b", "fail"), TOPO_EINVALID);
    assert_int_equal(topo_view_generation(v), 2);
    value_is(v, "b", "1");
    assert_int_equal(event(v, TOPO_K8S_DELETED, "b", "1"), 0);
    assert_int_equal(topo_view_generation(v), 3);
    value_is(v, "b", "");
    assert_int_equal(event(v, TOPO_K8S_DELETED, "b", "1"), 0); /* already gone */
    assert_int_equal(topo_view_generation(v), 3);

    assert_int_equal(list(v, other, 2), 0);
    assert_int_equal(topo_view_generation(v), 4);
    topo_view_free(v);
}

/* Without ops.differ every relist counts as a change. */
static void test_view__relist_without_differ_moves(void **state)
{
    (void)state;
    topo_view *v = new_view(&ops_no_differ, NULL);
    static const char *const same[] = {"a", "1"};
    assert_int_equal(list(v, same, 2), 0);
    assert_int_equal(list(v, same, 2), 0);
    assert_int_equal(topo_view_generation(v), 2);
    topo_view_free(v);
}

/* ---- waits, across threads ---- */

typedef struct feeder {
    topo_view *v;
    int wake; /* 1: topo_view_wake, 0: an event that changes the set */
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (f->wake)
        topo_view_wake(f->v);
    else
        assert_int_equal(event(f->v, TOPO_K8S_ADDED, "c", "9"), 0);
    return NULL;
}

/* A wait returns with the new generation when another thread changes the
 * set, at once when a wake comes, and at its deadline otherwise. */
static void test_view__wait_wakes(void **state)
{
    (void)state;
    owner o = {0};
    topo_view *v = new_view(&ops, &o);
    static const char *const one[] = {"a", "1"};
    assert_int_equal(list(v, one, 2), 0);
    uint64_t g = topo_view_generation(v);
    pthread_t t;

    /* Nothing happens: the deadline. */
    int64_t t0 = topo_clock_ms();
    assert_int_equal(topo_view_wait(v, g, t0 + 100), g);
    assert_true(topo_clock_ms() - t0 >= 90);

    feeder changer = {v, 0};
    t0 = topo_clock_ms();
    assert_int_equal(pthread_create(&t, NULL, feed, &changer), 0);
    assert_int_equal(topo_view_wait(v, g, t0 + 10000), g + 1);
    assert_true(topo_clock_ms() - t0 < 5000);
    pthread_join(t, NULL);
    value_is(v, "c", "9");

    feeder waker = {v, 1};
    t0 = topo_clock_ms();
    assert_int_equal(pthread_create(&t, NULL, feed, &waker), 0);
    assert_int_equal(topo_view_wait(v, g + 1, t0 + 10000), g + 1);
    assert_true(topo_clock_ms() - t0 < 5000);
    pthread_join(t, NULL);
    topo_view_free(v);
}

/* Without a client there is nothing to list with; missing callbacks are
 * refused, naming what is required. */
static void test_view__refuses_what_it_cannot_run(void **state)
{
    (void)state;
    topo_view *v = new_view(&ops, NULL);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_view_start(v, &err), TOPO_EINVALID);
    assert_int_equal(topo_view_list(v, &err), TOPO_EINVALID);
    topo_view_stop(v); /* nothing running: a no-op */
    topo_view_free(v);
    topo_view_free(NULL);
    assert_false(topo_view_synced(NULL));

    static const topo_view_ops none = {0};
    topo_view *w = (topo_view *)&err; /* overwritten with NULL */
    assert_int_equal(topo_view_create(&w, NULL, NULL, &none, NULL, &err), TOPO_EINVALID);
    assert_null(w);
    assert_non_null(strstr(err.text, "callbacks"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view__list_swapped_in_whole),
        cmocka_unit_test(test_view__failed_list_keeps_the_set),
        cmocka_unit_test(test_view__generation_moves_on_change_only),
        cmocka_unit_test(test_view__relist_without_differ_moves),
        cmocka_unit_test(test_view__wait_wakes),
        cmocka_unit_test(test_view__refuses_what_it_cannot_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
