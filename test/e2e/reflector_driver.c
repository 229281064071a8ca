/* Drives lib/net's reflector (topo/reflector.h) for reflector_e2e.py: runs
 * one over a resource on a thread and prints every callback as one JSON
 * line on stdout:
 *
 *   {"cb": "list_begin"}  {"cb": "list_object", "name": N, "rv": RV}
 *   {"cb": "list_end", "rv": RV, "count": N}  {"cb": "list_abort"}
 *   {"cb": "event", "type": "ADDED", "name": N, "rv": RV}
 *   {"cb": "bookmark", "rv": RV}  {"cb": "watch_end", "events": N}
 *   {"cb": "error", "code": "TOPO_ESERVER", "failures": N, "text": T, "ms": T}
 *   {"cb": "run_end", "rc": N, "text": T}
 *
 * ("ms": milliseconds since the driver started). Lines on stdin:
 *   "stop"  topo_reflector_stop, then {"cb": "stopped", "ms": how long the
 *           run took to return}
 *   "run"   runs again (after a stop or an end)
 *   "quit" or the end of input: stop and exit 0.
 *
 * usage: reflector_driver --kubeconfig F [--resource nodes|pods]
 *          [--page-size N] [--resume RV] [--watch-timeout S]
 *          [--backoff-base MS] [--backoff-max MS] [--give-up N]
 *          [--until-quiet] [--label-selector S] [--object-delay-ms MS]
 *   --give-up N: the error callback ends the run at the Nth failure in a row;
 *   --until-quiet: a watch that ends without events ends the run;
 *   --object-delay-ms: each list object takes that long (a stop mid-list). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/k8s.h"
#include "topo/log.h"
#include "topo/reflector.h"

typedef struct driver {
    topo_reflector *refl;
    pthread_t thread;
    int running;
    atomic_int ended; /* the run returned */
    unsigned int give_up;
    int until_quiet;
    long object_delay_ms;
    unsigned long listed;
    struct timespec t0;
} driver;

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Prints obj (stolen) as one line. */
static void say(json_t *obj)
{
    char *text = obj != NULL ? json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    pthread_mutex_lock(&out_mu);
    if (text != NULL) {
        puts(text);
        fflush(stdout);
    }
    pthread_mutex_unlock(&out_mu);
    free(text);
    json_decref(obj);
}

static const char *name_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

static int on_list_begin(topo_err *err, void *payload)
{
    driver *d = payload;
    (void)err;
    d->listed = 0;
    say(json_pack("{ss}", "cb", "list_begin"));
    return 0;
}

static int on_list_object(json_t *object, topo_err *err, void *payload)
{
    driver *d = payload;
    const char *rv =
        json_string_value(json_object_get(json_object_get(object, "metadata"), "resourceVersion"));
    (void)err;
    if (d->object_delay_ms > 0) {
        struct timespec ts = {d->object_delay_ms / 1000, (d->object_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    d->listed++;
    say(json_pack("{ss ss? ss?}", "cb", "list_object", "name", name_of(object), "rv", rv));
    return 0;
}

static int on_list_end(const char *rv, topo_err *err, void *payload)
{
    driver *d = payload;
    (void)err;
    say(json_pack("{ss ss sI}", "cb", "list_end", "rv", rv, "count", (json_int_t)d->listed));
    return 0;
}

static void on_list_abort(void *payload)
{
    (void)payload;
    say(json_pack("{ss}", "cb", "list_abort"));
}

static int on_event(topo_k8s_event_type type, json_t *object, const char *rv, topo_err *err,
                    void *payload)
{
    (void)err;
    (void)payload;
    say(json_pack("{ss ss ss? ss}", "cb", "event", "type", topo_k8s_event_name(type), "name",
                  name_of(object), "rv", rv));
    return 0;
}

static int on_bookmark(const char *rv, topo_err *err, void *payload)
{
    (void)err;
    (void)payload;
    say(json_pack("{ss ss}", "cb", "bookmark", "rv", rv));
    return 0;
}

static int on_watch_end(uint64_t events, void *payload)
{
    driver *d = payload;
    say(json_pack("{ss sI}", "cb", "watch_end", "events", (json_int_t)events));
    return d->until_quiet && events == 0;
}

static int on_error(int code, const topo_err *err, unsigned int failures, void *payload)
{
    driver *d = payload;
    say(json_pack("{ss ss sI ss sI}", "cb", "error", "code", topo_err_name(code), "failures",
                  (json_int_t)failures, "text", err->text, "ms", (json_int_t)elapsed_ms(&d->t0)));
    return d->give_up > 0 && failures + 1 >= d->give_up ? code : 0;
}

static const topo_reflector_handler handler = {
    .list_begin = on_list_begin,
    .list_object = on_list_object,
    .list_end = on_list_end,
    .list_abort = on_list_abort,
    .event = on_event,
    .bookmark = on_bookmark,
    .watch_end = on_watch_end,
    .error = on_error,
};

static void *run_main(void *arg)
{
    driver *d = arg;
    topo_err err = TOPO_ERR_INIT;
    int rc = topo_reflector_run(d->refl, &err);
    say(json_pack("{ss si ss}", "cb", "run_end", "rc", rc, "text", err.text));
    atomic_store(&d->ended, 1);
    return NULL;
}

static int start(driver *d)
{
    if (d->running && atomic_load(&d->ended)) {
        pthread_join(d->thread, NULL);
        d->running = 0;
    }
    if (d->running)
        return 0;
    atomic_store(&d->ended, 0);
    if (pthread_create(&d->thread, NULL, run_main, d) != 0)
        return -1;
    d->running = 1;
    return 0;
}

static void stop(driver *d)
{
    struct timespec t;
    if (!d->running)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t);
    topo_reflector_stop(d->refl);
    pthread_join(d->thread, NULL);
    d->running = 0;
    say(json_pack("{ss sI}", "cb", "stopped", "ms", (json_int_t)elapsed_ms(&t)));
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *resource = "nodes";
    topo_reflector_opts ro = {0};
    topo_k8s_config cfg = {0};
    topo_k8s_opts ko = {0};
    topo_k8s *k = NULL;
    /* The relists (debug) are part of what the cases check. */
    topo_log_set_level(TOPO_LOG_DEBUG);
    topo_err err = TOPO_ERR_INIT;
    driver d;
    char line[256];
    int status = 1;

    memset(&d, 0, sizeof(d));
    clock_gettime(CLOCK_MONOTONIC, &d.t0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--until-quiet") == 0) {
            d.until_quiet = 1;
            continue;
        }
        if (v == NULL)
            goto usage;
        i++;
        if (strcmp(a, "--kubeconfig") == 0)
            kubeconfig = v;
        else if (strcmp(a, "--resource") == 0)
            resource = v;
        else if (strcmp(a, "--page-size") == 0)
            ro.page_size = (unsigned int)strtoul(v, NULL, 10);
        else if (strcmp(a, "--resume") == 0)
            ro.resume_rv = v;
        else if (strcmp(a, "--watch-timeout") == 0)
            ro.watch_timeout_s = strtol(v, NULL, 10);
        else if (strcmp(a, "--backoff-base") == 0)
            ro.backoff_base_ms = strtol(v, NULL, 10);
        else if (strcmp(a, "--backoff-max") == 0)
            ro.backoff_max_ms = strtol(v, NULL, 10);
        else if (strcmp(a, "--give-up") == 0)
            d.give_up = (unsigned int)strtoul(v, NULL, 10);
        else if (strcmp(a, "--label-selector") == 0)
            ro.label_selector = v;
        else if (strcmp(a, "--object-delay-ms") == 0)
            d.object_delay_ms = strtol(v, NULL, 10);
        else
            goto usage;
    }
    if (kubeconfig == NULL)
        goto usage;
    if (strcmp(resource, "nodes") == 0)
        ro.res = &topo_k8s_nodes;
    else if (strcmp(resource, "pods") == 0)
        ro.res = &topo_k8s_pods;
    else
        goto usage;
    ro.name = "reflector-driver";
    /* Failures reach the reflector at once: its backoff is under test. */
    ko.max_retries = -1;
    if (topo_k8s_config_load(&cfg, kubeconfig, &err) != 0 ||
        topo_k8s_create(&k, &cfg, &ko, &err) != 0 ||
        topo_reflector_create(&d.refl, k, &ro, &handler, &d, &err) != 0) {
        fprintf(stderr, "reflector_driver: %s\n", err.text);
        goto done;
    }
    if (start(&d) != 0)
        goto done;
    while (fgets(line, sizeof(line), stdin) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "quit") == 0)
            break;
        if (strcmp(line, "stop") == 0)
            stop(&d);
        else if (strcmp(line, "run") == 0 && start(&d) != 0)
            goto done;
    }
    stop(&d);
    status = 0;
done:
    topo_reflector_free(d.refl);
    topo_k8s_free(k);
    topo_k8s_config_dispose(&cfg);
    return status;
usage:
    fprintf(stderr,
            "usage: %s --kubeconfig F [--resource nodes|pods] [--page-size N] "
            "[--resume RV] [--watch-timeout S] [--backoff-base MS] [--backoff-max MS] "
            "[--give-up N] [--until-quiet] [--label-selector S] "
            "[--object-delay-ms MS]\n",
            argv[0]);
    return 2;
}
