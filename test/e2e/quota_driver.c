/* Drives webhook/quota.c for quota_e2e.py: starts the ResourceQuota view
 * against a kubeconfig, then answers one line per stdin line:
 *
 *   in:  "ns-a ns-b"   (namespaces to look up; an empty line asks for status only)
 *   out: {"synced": true, "namespaces": 1, "quotas": 2,
 *         "room": {"ns-a": {"cpu": 51500, "pods": 33}, "ns-b": null}}
 *
 * through wh_quota_lookup with the signature the admission handler calls
 * (topo_admission_quota_fn). "quit" (or end of input) stops and exits 0.
 *
 * usage: quota_driver --kubeconfig F [--watch-timeout S] */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "line_driver.h"
#include "quota.h"

/* The admission handler's view of the lookup. */
static int lookup(void *payload, const char *namespace_, topo_pool *pool,
                  const topo_admission_quota_room **out, size_t *n)
{
    return wh_quota_lookup(payload, namespace_, pool, out, n);
}

static json_t *room_json(wh_quota *q, const char *ns, topo_pool *pool)
{
    topo_admission_quota_fn fn = lookup;
    const topo_admission_quota_room *room;
    size_t n;
    json_t *o;
    int rc = fn(q, ns, pool, &room, &n);
    if (rc < 0)
        return NULL;
    if (rc == 0)
        return json_null();
    if ((o = json_object()) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (json_object_set_new(o, room[i].resource, json_integer(room[i].room)) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

typedef struct driver {
    wh_quota *q;
    topo_pool *pool;
} driver;

static int answer(json_t *out, char *line, void *payload)
{
    driver *d = payload;
    json_t *rooms = json_object();
    char *save = NULL;
    int rc = -1;
    if (rooms == NULL || json_object_set_new(out, "room", rooms) != 0)
        return -1;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        json_t *v = room_json(d->q, tok, d->pool);
        if (v == NULL || json_object_set_new(rooms, tok, v) != 0)
            goto done;
    }
    if (json_object_set_new(out, "synced", json_boolean(wh_quota_synced(d->q))) == 0 &&
        json_object_set_new(out, "namespaces",
                            json_integer((json_int_t)wh_quota_namespaces(d->q))) == 0 &&
        json_object_set_new(out, "quotas", json_integer((json_int_t)wh_quota_count(d->q))) == 0)
        rc = 0;
done:
    topo_pool_clear(d->pool);
    return rc;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL;
    wh_quota_opts opts = {0};
    topo_k8s_config cfg = {0};
    topo_k8s_opts ko = {0};
    driver d = {NULL, topo_pool_create()};
    topo_err err = TOPO_ERR_INIT;
    int status = 2, usage = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (strcmp(argv[i], "--watch-timeout") == 0 && i + 1 < argc)
            opts.watch_timeout_s = strtol(argv[++i], NULL, 10);
        else
            usage = 1;
    }
    if (usage || kubeconfig == NULL || d.pool == NULL) {
        fprintf(stderr, "usage: %s --kubeconfig F [--watch-timeout S]\n", argv[0]);
        topo_pool_free(d.pool);
        return 2;
    }
    line_driver_fast(&ko, &opts.backoff_base_ms, &opts.backoff_max_ms);
    opts.k8s = &ko;
    if (topo_k8s_config_load(&cfg, kubeconfig, &err) != 0 ||
        wh_quota_create(&d.q, &cfg, &opts, &err) != 0 || wh_quota_start(d.q, &err) != 0) {
        fprintf(stderr, "quota_driver: %s\n", err.text);
        goto done;
    }
    status = line_driver_run(answer, &d);
done:
    wh_quota_free(d.q);
    topo_k8s_config_dispose(&cfg);
    topo_pool_free(d.pool);
    return status;
}
