/* ResourceQuota room per pod resource (resourcequota.h). */
#include "topo/resourcequota.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/limits.h"
#include "topo/quantity.h"

#define REQUESTS_PREFIX "requests."

/* An extended resource name as the API server accepts one in a quota
 * (requests.<domain>/<name>): one '/', a domain of lower-case letters,
 * digits, '.' and '-', a name of letters, digits, '.', '_' and '-'. Names
 * under kubernetes.io are native (the API server's rule is "contains
 * kubernetes.io/"), and "requests." is the quota's own prefix. */
static int is_extended(const char *s)
{
    const char *slash = strchr(s, '/'), *p;
    if (slash == NULL || slash == s || slash[1] == '\0' || strlen(s) > TOPO_MAX_LABEL_KEY)
        return 0;
    if (strstr(s, "kubernetes.io/") != NULL ||
        strncmp(s, REQUESTS_PREFIX, sizeof(REQUESTS_PREFIX) - 1) == 0)
        return 0;
    for (p = s; p < slash; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
            return 0;
    for (p = slash + 1; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

static int is_standard(const char *s)
{
    return strcmp(s, "cpu") == 0 || strcmp(s, "memory") == 0 ||
           strcmp(s, "ephemeral-storage") == 0;
}

const char *topo_resourcequota_pod_resource(const char *q)
{
    const char *r;
    if (q == NULL)
        return NULL;
    if (strcmp(q, "pods") == 0 || strcmp(q, "count/pods") == 0)
        return "pods";
    if (is_standard(q))
        return q;
    if (strncmp(q, REQUESTS_PREFIX, sizeof(REQUESTS_PREFIX) - 1) != 0)
        return NULL; /* limits.*, services, count/<other>, ... */
    r = q + sizeof(REQUESTS_PREFIX) - 1;
    if (is_standard(r) || is_extended(r))
        return r;
    if (strncmp(r, "hugepages-", 10) == 0 && r[10] != '\0')
        return r;
    return NULL; /* requests.storage (claims), requests.pods, ... */
}

/* Remembers a problem; the message is cut at the pool's printf (any
 * length) but the JSON key is quoted at most 64 bytes: a key of a megabyte
 * would otherwise go whole into the log. */
static int problem(topo_resourcequota *out, topo_pool *pool, const char *map, const char *key,
                   const char *what)
{
    size_t i = out->nproblems++;
    if (i >= TOPO_RESOURCEQUOTA_PROBLEMS_MAX)
        return 0;
    out->problems[i] = topo_pool_printf(pool, "%s[%.64s]: %s", map, key, what);
    return out->problems[i] != NULL ? 0 : TOPO_ENOMEM;
}

/* A quantity of map[key] for pod resource res; 1 and *v when read, 0 when
 * it was ignored (problem noted), <0 on ENOMEM. */
static int quantity(int64_t *v, topo_resourcequota *out, topo_pool *pool, const char *map,
                    const char *key, const char *res, const json_t *value)
{
    topo_err e = TOPO_ERR_INIT;
    int rc;
    if (!json_is_string(value))
        return (rc = problem(out, pool, map, key, "not a quantity string")) < 0 ? rc : 0;
    if (topo_quantity_parse_resource(v, res, json_string_value(value), &e) == 0)
        return 1;
    return (rc = problem(out, pool, map, key, e.text)) < 0 ? rc : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const topo_resource *)a)->name, ((const topo_resource *)b)->name);
}

static const char *string_field(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > TOPO_MAX_OBJECT_NAME)
        return NULL;
    return json_string_value(v);
}

int topo_resourcequota_decode(topo_resourcequota *out, const json_t *quota, topo_pool *pool,
                              topo_err *err)
{
    const json_t *md, *spec, *status, *hard = NULL, *used = NULL, *value;
    const char *hard_name = "status.hard", *key, *ns, *name;
    size_t n = 0, cap;
    int rc;

    memset(out, 0, sizeof(*out));
    md = json_object_get(quota, "metadata");
    if ((ns = string_field(md, "namespace")) == NULL)
        return topo_err_set(err, TOPO_EINVALID, "metadata.namespace: missing, not a string, "
                                                "empty or longer than %u bytes",
                            TOPO_MAX_OBJECT_NAME);
    if ((name = string_field(md, "name")) == NULL)
        return topo_err_set(err, TOPO_EINVALID, "metadata.name: missing, not a string, empty "
                                                "or longer than %u bytes",
                            TOPO_MAX_OBJECT_NAME);
    if ((out->namespace_ = topo_pool_strdup(pool, ns)) == NULL ||
        (out->name = topo_pool_strdup(pool, name)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "resourcequota: out of memory");

    spec = json_object_get(quota, "spec");
    status = json_object_get(quota, "status");
    if (status != NULL && !json_is_object(status) && !json_is_null(status) &&
        (rc = problem(out, pool, "status", "", "not an object")) < 0)
        goto nomem;
    value = json_object_get(status, "hard");
    if (json_is_object(value)) {
        hard = value;
        /* A map that is no map: every entry of hard is unreadable, so
         * none limits anything (used = 0 would promise room it may not
         * have). */
        used = json_object_get(status, "used");
        if (used != NULL && !json_is_object(used) && !json_is_null(used)) {
            if ((rc = problem(out, pool, "status.used", "", "not an object")) < 0)
                goto nomem;
            return 0;
        }
    } else {
        if (value != NULL && !json_is_null(value) &&
            (rc = problem(out, pool, "status.hard", "", "not an object")) < 0)
            goto nomem;
        /* Not computed yet: spec.hard, nothing used (resourcequota.h). */
        hard = json_object_get(spec, "hard");
        hard_name = "spec.hard";
        if (hard != NULL && !json_is_object(hard) && !json_is_null(hard) &&
            (rc = problem(out, pool, "spec.hard", "", "not an object")) < 0)
            goto nomem;
        if (!json_is_object(hard))
            return 0;
    }

    cap = json_object_size(hard);
    if (cap == 0)
        return 0;
    if ((out->room = topo_pool_calloc(pool, cap, sizeof(*out->room))) == NULL)
        goto nomem;
    json_object_foreach((json_t *)hard, key, value) {
        const char *res = topo_resourcequota_pod_resource(key);
        int64_t h, u = 0;
        if (res == NULL)
            continue;
        if ((rc = quantity(&h, out, pool, hard_name, key, res, value)) <= 0) {
            if (rc < 0)
                goto nomem;
            continue;
        }
        value = json_object_get(used, key);
        if (value != NULL && (rc = quantity(&u, out, pool, "status.used", key, res, value)) <= 0) {
            if (rc < 0)
                goto nomem;
            continue;
        }
        if ((out->room[n].name = topo_pool_strdup(pool, res)) == NULL)
            goto nomem;
        out->room[n++].amount = topo_quantity_sub(h, u);
    }
    /* One entry per pod resource: the least room ("cpu" and "requests.cpu"
     * are both enforced). Sorting keeps 10,000 names n log n. */
    qsort(out->room, n, sizeof(*out->room), by_name);
    out->nroom = 0;
    for (size_t i = 0; i < n; i++) {
        topo_resource *last = out->nroom ? &out->room[out->nroom - 1] : NULL;
        if (last != NULL && strcmp(last->name, out->room[i].name) == 0) {
            if (out->room[i].amount < last->amount)
                last->amount = out->room[i].amount;
            continue;
        }
        out->room[out->nroom++] = out->room[i];
    }
    return 0;
nomem:
    return topo_err_set(err, TOPO_ENOMEM, "resourcequota: out of memory");
}
