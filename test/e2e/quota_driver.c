/* Drives webhook/quota.c for quota_e2e.py: starts the ResourceQuota view
 * against a kubeconfig, then answers one line per stdin line:
 *
 *   in:  "ns-a ns-b"   (namespaces to look up; an empty line asks for status only)
 *   out: {"synced": true, "namespaces": 1, "quotas": 2,
 *         "room": {"ns-a": {"cpu": 51500, "pods": 33}, "ns-b": null}}
 *
 * through topo_quota_lookup with the signature the admission handler calls
 * (topo_admission_quota_fn). "quit" (or end of input) stops and exits 0.
 *
 * usage: quota_driver --kubeconfig F [--watch-timeout S] */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "quota.h"

/* The admission handler's view of the lookup. */
static int lookup(void *payload, const char *namespace_, topo_pool *pool,
                  const topo_admission_quota_room **out, size_t *n)
{
    return topo_quota_lookup(payload, namespace_, pool, out, n);
}

static json_t *room_json(topo_quota *q, const char *ns, topo_pool *pool)
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

static int answer(topo_quota *q, char *line, topo_pool *pool)
{
    json_t *out = json_object(), *rooms = json_object();
    char *save = NULL, *text;
    int rc = -1;
    if (out == NULL || rooms == NULL)
        goto done;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        json_t *v = room_json(q, tok, pool);
        if (v == NULL || json_object_set_new(rooms, tok, v) != 0)
            goto done;
    }
    if (json_object_set_new(out, "synced", json_boolean(topo_quota_synced(q))) != 0 ||
        json_object_set_new(out, "namespaces",
                            json_integer((json_int_t)topo_quota_namespaces(q))) != 0 ||
        json_object_set_new(out, "quotas", json_integer((json_int_t)topo_quota_count(q))) != 0 ||
        json_object_set_new(out, "room", rooms) != 0)
        goto done;
    rooms = NULL;
    if ((text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
        goto done;
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    rc = 0;
done:
    json_decref(rooms);
    json_decref(out);
    topo_pool_clear(pool);
    return rc;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL;
    topo_quota_opts opts = TOPO_QUOTA_OPTS_INIT;
    topo_k8s_config cfg = TOPO_K8S_CONFIG_INIT;
    topo_k8s_opts ko = TOPO_K8S_OPTS_INIT;
    topo_quota *q = NULL;
    topo_pool *pool = topo_pool_create();
    topo_err err = TOPO_ERR_INIT;
    char line[4096];
    int status = 2;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (strcmp(argv[i], "--watch-timeout") == 0 && i + 1 < argc)
            opts.watch_timeout_s = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s --kubeconfig F [--watch-timeout S]\n", argv[0]);
            return 2;
        }
    }
    if (kubeconfig == NULL || pool == NULL) {
        fprintf(stderr, "--kubeconfig is required\n");
        topo_pool_free(pool);
        return 2;
    }
    /* Fail fast in tests: short backoffs, few HTTP retries. */
    ko.max_retries = 1;
    ko.backoff_max_ms = 500;
    opts.k8s = &ko;
    opts.backoff_base_ms = 100;
    opts.backoff_max_ms = 1000;
    if (topo_k8s_config_load(&cfg, kubeconfig, &err) != 0 ||
        topo_quota_create(&q, &cfg, &opts, &err) != 0 || topo_quota_start(q, &err) != 0) {
        fprintf(stderr, "quota_driver: %s\n", err.text);
        goto done;
    }
    status = 0;
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (strncmp(line, "quit", 4) == 0)
            break;
        if (answer(q, line, pool) != 0) {
            status = 1;
            break;
        }
    }
done:
    topo_quota_free(q);
    topo_k8s_config_dispose(&cfg);
    topo_pool_free(pool);
    return status;
}
