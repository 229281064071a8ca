/* A command-line driver over lib/net's Kubernetes client, for the
 * process-level tests in k8s_e2e.py (run against fake_apiserver.py).
 *
 *   topo-k8s-driver (--kubeconfig FILE [--context C] | --in-cluster SA_DIR)
 *                   [--retries N] [--timeout-ms MS] [--qps Q] COMMAND ...
 *
 * Commands (RES is nodes, pods, jobs or leases; --ns NS for namespaced ones):
 *   get RES NAME                 prints the object as one JSON line
 *   get-loop RES NAME --count N --interval-ms MS
 *                                N GETs; prints "ok RV" or "error CODE" for each
 *   list RES [--limit N] [--label-selector S] [--field-selector S]
 *            [--pause-after N]   prints "rv RV", "item NS/NAME RV" per item, "count N";
 *                                with --pause-after, prints "paused" after N items and
 *                                waits for a line on stdin
 *   watch RES [--rv RV] [--timeout S] [--max-events N]
 *                                prints "event TYPE NS/NAME RV" and "end CODE RV"
 *   sync RES --duration-ms MS [--watch-timeout S]
 *                                a reflector (topo/reflector.h) over RES; prints
 *                                "synced RV" after each list, "gone RV" before each relist,
 *                                then "state NS/NAME RV" per object and "relists N"
 *   patch RES NAME --type merge|json --patch JSON [--rv RV]
 *                                prints "patched RV"
 *   patch-retry RES NAME --label KEY
 *                                sets label KEY to the object's current RV with
 *                                read-modify-write retries; prints "patched RV"
 *   create RES --object JSON | update RES --object JSON | delete RES NAME [--rv RV]
 *   leader --lease NAME --identity ID [--lease-ms] [--renew-ms] [--retry-ms] [--release]
 *                                runs the election until SIGTERM; prints
 *                                "leader T" / "follower T" on changes and "act T"
 *                                every 100 ms while it may act (T: wall clock, ms)
 * Errors print "error TOPO_CODE: message" and exit 1; usage errors exit 2. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/clock.h"
#include "topo/k8s.h"
#include "topo/log.h"
#include "topo/reflector.h"

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
/* Set by on_signal: C11 lets a signal handler store to a lock-free atomic
 * (7.14.1.1), and the threads reading it need an atomic anyway. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
static atomic_int stop_flag;

static void say(const char *fmt, ...) TOPO_PRINTF(1, 2);

static void say(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&out_mu);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&out_mu);
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_flag)
        ;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* "--key value" after the command; NULL when absent. */
static const char *opt(int argc, char **argv, const char *key)
{
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], key) == 0)
            return argv[i + 1];
    return NULL;
}

static int flag(int argc, char **argv, const char *key)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], key) == 0)
            return 1;
    return 0;
}

static long opt_long(int argc, char **argv, const char *key, long def)
{
    const char *v = opt(argc, argv, key);
    return v != NULL ? strtol(v, NULL, 10) : def;
}

static int fail(int code, const topo_err *err)
{
    say("error %s: %s", topo_err_name(code), err->text);
    return 1;
}

static const topo_k8s_resource *resource(const char *name)
{
    if (name == NULL)
        return NULL;
    if (strcmp(name, "nodes") == 0)
        return &topo_k8s_nodes;
    if (strcmp(name, "pods") == 0)
        return &topo_k8s_pods;
    if (strcmp(name, "jobs") == 0)
        return &topo_k8s_jobs;
    if (strcmp(name, "leases") == 0)
        return &topo_k8s_leases;
    return NULL;
}

static void object_key(char *buf, size_t size, const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    snprintf(buf, size, "%s/%s", ns != NULL ? ns : "", name != NULL ? name : "?");
}

static const char *object_rv(const json_t *obj)
{
    const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                       "resourceVersion"));
    return rv != NULL ? rv : "?";
}

/* ------------------------------------------------------------------ list */

typedef struct list_state {
    long count;
    long pause_after;
} list_state;

static int print_item(json_t *item, void *payload)
{
    list_state *s = payload;
    char key[600];
    object_key(key, sizeof(key), item);
    say("item %s %s", key, object_rv(item));
    if (++s->count == s->pause_after) {
        char line[64];
        say("paused");
        if (fgets(line, sizeof(line), stdin) == NULL)
            return 0;
    }
    return 0;
}

static int cmd_list(topo_k8s *k, const topo_k8s_resource *res, const char *ns, int argc,
                    char **argv)
{
    topo_k8s_list_opts o = {0};
    topo_err err = TOPO_ERR_INIT;
    char rv[TOPO_K8S_RV_MAX];
    list_state s = {0, opt_long(argc, argv, "--pause-after", -1)};

    o.limit = (unsigned int)opt_long(argc, argv, "--limit", 0);
    o.label_selector = opt(argc, argv, "--label-selector");
    o.field_selector = opt(argc, argv, "--field-selector");
    int rc = topo_k8s_list(rv, k, res, ns, &o, print_item, &s, &err);
    if (rc != 0)
        return fail(rc, &err);
    say("rv %s", rv);
    say("count %ld", s.count);
    return 0;
}

/* ------------------------------------------------------------------ watch */

typedef struct watch_state {
    long events;
    long max_events;
} watch_state;

static int print_event(topo_k8s_event_type type, json_t *obj, void *payload)
{
    watch_state *s = payload;
    char key[600];
    object_key(key, sizeof(key), obj);
    say("event %s %s %s", topo_k8s_event_name(type), type == TOPO_K8S_BOOKMARK ? "-" : key,
        object_rv(obj));
    if (type != TOPO_K8S_BOOKMARK && ++s->events == s->max_events)
        stop_flag = 1;
    return 0;
}

static int cmd_watch(topo_k8s *k, const topo_k8s_resource *res, const char *ns, int argc,
                     char **argv)
{
    topo_k8s_watch_opts o = {0};
    topo_err err = TOPO_ERR_INIT;
    char rv[TOPO_K8S_RV_MAX] = "";
    watch_state s = {0, opt_long(argc, argv, "--max-events", -1)};
    const char *from = opt(argc, argv, "--rv");

    if (from != NULL)
        snprintf(rv, sizeof(rv), "%s", from);
    o.timeout_seconds = opt_long(argc, argv, "--timeout", 5);
    o.label_selector = opt(argc, argv, "--label-selector");
    o.field_selector = opt(argc, argv, "--field-selector");
    o.stop = &stop_flag;
    int rc = topo_k8s_watch(k, res, ns, rv, &o, print_event, &s, &err);
    say("end %s %s", topo_err_name(rc), rv);
    if (rc != 0)
        say("message %s", err.text);
    return 0;
}

/* ------------------------------------------------------------------ sync (a reflector) */

typedef struct sync_state {
    json_t *objects; /* "ns/name" -> rv */
    json_t *fresh;   /* the list being built */
    long relists;
    char rv[TOPO_K8S_RV_MAX]; /* the position reached */
    topo_reflector *refl;
    long duration_ms;
} sync_state;

static void sync_reached(sync_state *s, const char *rv)
{
    snprintf(s->rv, sizeof(s->rv), "%s", rv);
}

static int sync_list_begin(topo_err *err, void *payload)
{
    sync_state *s = payload;
    (void)err;
    if (s->relists > 0)
        say("gone %s", s->rv); /* a relist: the position expired */
    return (s->fresh = json_object()) == NULL ? TOPO_ENOMEM : 0;
}

static int sync_item(json_t *item, topo_err *err, void *payload)
{
    sync_state *s = payload;
    char key[600];
    (void)err;
    object_key(key, sizeof(key), item);
    return json_object_set_new(s->fresh, key, json_string(object_rv(item))) < 0 ? TOPO_ENOMEM
                                                                               : 0;
}

static int sync_list_end(const char *rv, topo_err *err, void *payload)
{
    sync_state *s = payload;
    (void)err;
    json_decref(s->objects);
    s->objects = s->fresh;
    s->fresh = NULL;
    s->relists++;
    sync_reached(s, rv);
    say("synced %s", rv);
    return 0;
}

static void sync_list_abort(void *payload)
{
    sync_state *s = payload;
    json_decref(s->fresh);
    s->fresh = NULL;
}

static int sync_event(topo_k8s_event_type type, json_t *obj, const char *rv, topo_err *err,
                      void *payload)
{
    sync_state *s = payload;
    char key[600];
    int rc;
    object_key(key, sizeof(key), obj);
    if (type == TOPO_K8S_DELETED)
        rc = json_object_del(s->objects, key) < 0 ? TOPO_EINVALID : 0;
    else if (type == TOPO_K8S_ADDED && json_object_get(s->objects, key) != NULL)
        rc = TOPO_EINVALID; /* an ADDED for an object we have: a lost DELETED */
    else if (type == TOPO_K8S_MODIFIED && json_object_get(s->objects, key) == NULL)
        rc = TOPO_EINVALID; /* a MODIFIED for one we never saw: a lost ADDED */
    else
        rc = json_object_set_new(s->objects, key, json_string(object_rv(obj))) < 0 ? TOPO_ENOMEM
                                                                                  : 0;
    if (rc < 0)
        return topo_err_set(err, rc, "%s event for %s contradicts the state",
                            topo_k8s_event_name(type), key);
    sync_reached(s, rv);
    return 0;
}

static int sync_bookmark(const char *rv, topo_err *err, void *payload)
{
    (void)err;
    sync_reached(payload, rv);
    return 0;
}

/* Retries everything but a stream that contradicted the state. */
static int sync_error(int code, const topo_err *err, unsigned int failures, void *payload)
{
    (void)failures;
    (void)payload;
    say("error %s: %s", topo_err_name(code), err->text);
    return code == TOPO_EINVALID ? code : 0;
}

static void *stop_after(void *p)
{
    sync_state *s = p;
    sleep_ms(s->duration_ms);
    stop_flag = 1;
    topo_reflector_stop(s->refl);
    return NULL;
}

static int cmd_sync(topo_k8s *k, const topo_k8s_resource *res, const char *ns, int argc,
                    char **argv)
{
    static const topo_reflector_handler handler = {
        .list_begin = sync_list_begin,
        .list_object = sync_item,
        .list_end = sync_list_end,
        .list_abort = sync_list_abort,
        .event = sync_event,
        .bookmark = sync_bookmark,
        .error = sync_error,
    };
    topo_err err = TOPO_ERR_INIT;
    sync_state s = {json_object(), NULL, 0, "", NULL, opt_long(argc, argv, "--duration-ms", 5000)};
    topo_reflector_opts ro = {.res = res, .ns = ns,
                              .watch_timeout_s = opt_long(argc, argv, "--watch-timeout", 2)};
    int rc;
    pthread_t timer;

    if (topo_reflector_create(&s.refl, k, &ro, &handler, &s, &err) != 0) {
        say("error %s: %s", topo_err_name(err.code), err.text);
        json_decref(s.objects);
        return 1;
    }
    if (pthread_create(&timer, NULL, stop_after, &s) != 0)
        return 1;
    rc = topo_reflector_run(s.refl, &err);
    pthread_join(timer, NULL);
    const char *key;
    json_t *v;
    json_object_foreach(s.objects, key, v) say("state %s %s", key, json_string_value(v));
    say("relists %ld", s.relists);
    say("rv %s", s.rv);
    json_decref(s.objects);
    topo_reflector_free(s.refl);
    return rc == TOPO_EINVALID ? 1 : 0;
}

/* ------------------------------------------------------------------ writes */

static int parse_json(json_t **out, const char *text)
{
    json_error_t jerr;
    *out = text != NULL ? json_loads(text, 0, &jerr) : NULL;
    if (*out == NULL) {
        say("error TOPO_EINVALID: bad JSON argument");
        return 2;
    }
    return 0;
}

static int cmd_patch(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                     const char *name, int argc, char **argv)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *patch = NULL, *out = NULL;
    const char *type = opt(argc, argv, "--type");
    int rc;

    if ((rc = parse_json(&patch, opt(argc, argv, "--patch"))) != 0)
        return rc;
    rc = topo_k8s_patch(&out, k, res, ns, name,
                        type != NULL && strcmp(type, "json") == 0 ? TOPO_K8S_JSON_PATCH
                                                                  : TOPO_K8S_MERGE_PATCH,
                        patch, opt(argc, argv, "--rv"), &err);
    json_decref(patch);
    if (rc != 0)
        return fail(rc, &err);
    say("patched %s", object_rv(out));
    json_decref(out);
    return 0;
}

static int set_label_to_rv(json_t **patch_out, const json_t *current, void *payload,
                           topo_err *err)
{
    const char *label = payload;
    (void)err;
    *patch_out = json_pack("{s:{s:{s:s}}}", "metadata", "labels", label, object_rv(current));
    return *patch_out != NULL ? 0 : TOPO_ENOMEM;
}

static int cmd_patch_retry(topo_k8s *k, const topo_k8s_resource *res, const char *ns,
                           const char *name, int argc, char **argv)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *out = NULL;
    const char *label = opt(argc, argv, "--label");
    if (label == NULL)
        return 2;
    int rc = topo_k8s_patch_retry(&out, k, res, ns, name, TOPO_K8S_MERGE_PATCH,
                                  (int)opt_long(argc, argv, "--attempts", 0), set_label_to_rv,
                                  (void *)label, &err);
    if (rc != 0)
        return fail(rc, &err);
    say("patched %s", object_rv(out));
    json_decref(out);
    return 0;
}

static int cmd_write(topo_k8s *k, const char *verb, const topo_k8s_resource *res,
                     const char *ns, int argc, char **argv)
{
    topo_err err = TOPO_ERR_INIT;
    json_t *obj = NULL, *out = NULL;
    int rc;
    if ((rc = parse_json(&obj, opt(argc, argv, "--object"))) != 0)
        return rc;
    rc = strcmp(verb, "create") == 0 ? topo_k8s_create_object(&out, k, res, ns, obj, &err)
                                     : topo_k8s_update(&out, k, res, ns, obj, &err);
    json_decref(obj);
    if (rc != 0)
        return fail(rc, &err);
    say("%s %s", strcmp(verb, "create") == 0 ? "created" : "updated", object_rv(out));
    json_decref(out);
    return 0;
}

/* ------------------------------------------------------------------ leader */

typedef struct leader_state {
    topo_leader *l;
} leader_state;

static void on_change(int is_leader, void *payload)
{
    (void)payload;
    say("%s %lld", is_leader ? "leader" : "follower", wall_ms());
}

static void *act(void *p)
{
    leader_state *s = p;
    while (!stop_flag) {
        long long t = wall_ms();
        if (topo_leader_is_leader(s->l, topo_clock_ms()))
            say("act %lld", t);
        sleep_ms(100);
    }
    return NULL;
}

static int cmd_leader(topo_k8s *k, int argc, char **argv)
{
    topo_leader_opts o = {0};
    topo_err err = TOPO_ERR_INIT;
    leader_state s = {NULL};
    pthread_t actor;

    o.lease_namespace = opt(argc, argv, "--ns");
    o.lease_name = opt(argc, argv, "--lease");
    o.identity = opt(argc, argv, "--identity");
    o.lease_ms = opt_long(argc, argv, "--lease-ms", 0);
    o.renew_deadline_ms = opt_long(argc, argv, "--renew-ms", 0);
    o.retry_ms = opt_long(argc, argv, "--retry-ms", 0);
    o.release_on_stop = flag(argc, argv, "--release");
    int rc = topo_leader_create(&s.l, k, &o, &err);
    if (rc != 0)
        return fail(rc, &err);
    say("identity %s", topo_leader_identity(s.l));
    if (pthread_create(&actor, NULL, act, &s) != 0) {
        topo_leader_free(s.l);
        return 1;
    }
    rc = topo_leader_run(s.l, &stop_flag, on_change, &s, &err);
    stop_flag = 1;
    pthread_join(actor, NULL);
    say("stopped %lld", wall_ms());
    topo_leader_free(s.l);
    return rc != 0 ? fail(rc, &err) : 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    topo_k8s_config cfg = {0};
    topo_k8s_opts ko = {0};
    topo_k8s *k = NULL;
    topo_err err = TOPO_ERR_INIT;
    int rc = 2, i = 1;
    const char *kubeconfig = NULL, *context = NULL, *sa_dir = NULL;

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    topo_log_set_level(getenv("TOPO_DRIVER_DEBUG") != NULL ? TOPO_LOG_DEBUG : TOPO_LOG_WARN);

    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            goto usage;
        if (strcmp(argv[i], "--kubeconfig") == 0)
            kubeconfig = argv[i + 1];
        else if (strcmp(argv[i], "--context") == 0)
            context = argv[i + 1];
        else if (strcmp(argv[i], "--in-cluster") == 0)
            sa_dir = argv[i + 1];
        else if (strcmp(argv[i], "--retries") == 0)
            ko.max_retries = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            ko.timeout_ms = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--qps") == 0)
            ko.qps = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--backoff-ms") == 0)
            ko.backoff_base_ms = strtol(argv[i + 1], NULL, 10);
        else
            goto usage;
    }
    if (i >= argc)
        goto usage;
    const char *cmd = argv[i];
    int cargc = argc - i - 1;
    char **cargv = argv + i + 1;

    if (sa_dir != NULL)
        rc = topo_k8s_config_in_cluster(&cfg, sa_dir, &err);
    else
        rc = kubeconfig != NULL ? topo_k8s_config_kubeconfig(&cfg, kubeconfig, context, &err)
                                : topo_k8s_config_load(&cfg, NULL, &err);
    if (rc != 0) {
        rc = fail(rc, &err);
        goto cleanup;
    }
    if (strcmp(cmd, "config") == 0) {
        say("server %s", cfg.server);
        say("namespace %s", cfg.namespace_name != NULL ? cfg.namespace_name : "");
        say("token-file %s", cfg.token_file != NULL ? cfg.token_file : "");
        say("ca %s", cfg.ca_file != NULL ? cfg.ca_file : cfg.ca_data != NULL ? "data" : "");
        rc = 0;
        goto cleanup;
    }
    if ((rc = topo_k8s_create(&k, &cfg, &ko, &err)) != 0) {
        rc = fail(rc, &err);
        goto cleanup;
    }
    if (strcmp(cmd, "leader") == 0) {
        rc = cmd_leader(k, cargc, cargv);
        goto cleanup;
    }
    const topo_k8s_resource *res = resource(cargc > 0 ? cargv[0] : NULL);
    if (res == NULL)
        goto usage;
    const char *ns = opt(cargc, cargv, "--ns");
    const char *name = cargc > 1 && strncmp(cargv[1], "--", 2) != 0 ? cargv[1] : NULL;
    if (strcmp(cmd, "get") == 0 && name != NULL) {
        json_t *obj = NULL;
        if ((rc = topo_k8s_get(&obj, k, res, ns, name, &err)) != 0) {
            rc = fail(rc, &err);
        } else {
            char *text = json_dumps(obj, JSON_COMPACT);
            say("%s", text != NULL ? text : "");
            free(text);
            json_decref(obj);
        }
    } else if (strcmp(cmd, "get-loop") == 0 && name != NULL) {
        long n = opt_long(cargc, cargv, "--count", 10);
        long interval = opt_long(cargc, cargv, "--interval-ms", 100);
        rc = 0;
        for (long j = 0; j < n; j++) {
            json_t *obj = NULL;
            int r = topo_k8s_get(&obj, k, res, ns, name, &err);
            if (r != 0) {
                say("error %s: %s", topo_err_name(r), err.text);
                rc = 1;
            } else {
                say("ok %s", object_rv(obj));
            }
            json_decref(obj);
            sleep_ms(interval);
        }
    } else if (strcmp(cmd, "list") == 0) {
        rc = cmd_list(k, res, ns, cargc, cargv);
    } else if (strcmp(cmd, "watch") == 0) {
        rc = cmd_watch(k, res, ns, cargc, cargv);
    } else if (strcmp(cmd, "sync") == 0) {
        rc = cmd_sync(k, res, ns, cargc, cargv);
    } else if (strcmp(cmd, "patch") == 0 && name != NULL) {
        rc = cmd_patch(k, res, ns, name, cargc, cargv);
    } else if (strcmp(cmd, "patch-retry") == 0 && name != NULL) {
        rc = cmd_patch_retry(k, res, ns, name, cargc, cargv);
    } else if (strcmp(cmd, "create") == 0 || strcmp(cmd, "update") == 0) {
        rc = cmd_write(k, cmd, res, ns, cargc, cargv);
    } else if (strcmp(cmd, "delete") == 0 && name != NULL) {
        if ((rc = topo_k8s_delete(k, res, ns, name, opt(cargc, cargv, "--rv"), &err)) != 0)
            rc = fail(rc, &err);
        else
            say("deleted");
    } else {
        goto usage;
    }
    goto cleanup;
usage:
    fprintf(stderr, "usage: see the comment at the top of test/e2e/k8s_driver.c\n");
    rc = 2;
cleanup:
    topo_k8s_free(k);
    topo_k8s_config_dispose(&cfg);
    return rc;
}
