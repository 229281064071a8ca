/* topo-webhook's views (watch.h): each over its own client, and one
 * warning per object and problem. */
#define _POSIX_C_SOURCE 200809L

#include "watch.h"

#include <stdlib.h>
#include <string.h>

int wh_watch_open(topo_view **view_out, topo_k8s **k_out, const topo_k8s_config *k8s_cfg,
                  const wh_watch_opts *opts, const topo_view_ops *ops, void *payload,
                  topo_err *err)
{
    int rc;

    *view_out = NULL;
    *k_out = NULL;
    if ((rc = topo_k8s_create(k_out, k8s_cfg, opts->client.k8s, err)) < 0) {
        topo_err_wrap(err, "%s: ", opts->name);
        return rc;
    }
    topo_reflector_opts ro = {
        .name = opts->name,
        .res = opts->res,
        .label_selector = opts->label_selector,
        .watch_timeout_s = opts->client.watch_timeout_s,
        .backoff_base_ms = opts->client.backoff_base_ms,
        .backoff_max_ms = opts->client.backoff_max_ms,
    };
    if ((rc = topo_view_create(view_out, *k_out, &ro, ops, payload, err)) < 0) {
        topo_k8s_free(*k_out);
        *k_out = NULL;
    }
    return rc;
}

/* ---- one warning per object and problem ---- */

struct wh_once_entry {
    char *key;
    char *text;
};

static void once_drop(wh_once *o, size_t i)
{
    free(o->e[i].key);
    free(o->e[i].text);
    o->e[i] = o->e[--o->n];
}

int wh_once_new(wh_once *o, const char *key, const char *text)
{
    struct wh_once_entry *ne;
    size_t i;
    /* Linear: only objects with a problem are here, and the API server
     * validates what it stores. */
    for (i = 0; i < o->n; i++) {
        if (strcmp(o->e[i].key, key) == 0) {
            char *nt;
            if (strcmp(o->e[i].text, text) == 0)
                return 0;
            if ((nt = strdup(text)) != NULL) {
                free(o->e[i].text);
                o->e[i].text = nt;
            }
            return 1;
        }
    }
    if ((ne = realloc(o->e, (o->n + 1) * sizeof(*ne))) == NULL)
        return 1;
    o->e = ne;
    ne[o->n].key = strdup(key);
    ne[o->n].text = strdup(text);
    if (ne[o->n].key == NULL || ne[o->n].text == NULL) {
        free(ne[o->n].key);
        free(ne[o->n].text);
        return 1;
    }
    o->n++;
    return 1;
}

void wh_once_forget(wh_once *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->e[i].key, key) == 0) {
            once_drop(o, i);
            return;
        }
    }
}

void wh_once_prune(wh_once *o, int (*keep)(const char *key, const void *payload),
                   const void *payload)
{
    for (size_t i = 0; i < o->n;) {
        if (keep(o->e[i].key, payload))
            i++;
        else
            once_drop(o, i);
    }
}

void wh_once_free(wh_once *o)
{
    while (o->n > 0)
        once_drop(o, o->n - 1);
    free(o->e);
    o->e = NULL;
}
