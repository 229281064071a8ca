/* The checks of a health port and the texts it answers with
 * (probe_internal.h), in the shape of kube-apiserver's /livez and /readyz. */
#include "probe_internal.h"

#include <string.h>

/* The checks every report holds: liveness starts with "ping" (the port
 * answers), readiness ends with "shutdown" (topo_probe_stopping). */
static const char *const builtin[] = {"ping", "shutdown"};

int probe_checks_init(probe_checks *c)
{
    memset(c, 0, sizeof *c);
    return pthread_mutex_init(&c->mu, NULL) == 0 ? 0 : TOPO_ENOMEM;
}

void probe_checks_dispose(probe_checks *c)
{
    pthread_mutex_destroy(&c->mu);
}

/* Names are path segments (/readyz/<name>) and lines of the verbose text:
 * nothing that needs escaping in either. */
int probe_check_name_ok(probe_kind kind, const char *name)
{
    if (name == NULL)
        return 0;
    size_t n = strlen(name);
    if (n == 0 || n > TOPO_MAX_PROBE_CHECK_NAME || strcmp(name, builtin[kind]) == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.'))
            return 0;
    }
    return 1;
}

/* The entry of name in list[0..*n), added at the end when absent; NULL when
 * the list is full. Called with the lock held. */
static probe_check *find_or_add(probe_check *list, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    if (*n == TOPO_MAX_PROBE_CHECKS)
        return NULL;
    probe_check *e = &list[(*n)++];
    memset(e, 0, sizeof *e);
    memcpy(e->name, name, strlen(name) + 1);
    return e;
}

int probe_checks_set_ready(probe_checks *c, const char *name, int ok)
{
    if (!probe_check_name_ok(PROBE_READY, name))
        return TOPO_EINVALID;
    pthread_mutex_lock(&c->mu);
    probe_check *e = find_or_add(c->ready, &c->nready, name);
    if (e != NULL)
        e->ok = ok != 0;
    pthread_mutex_unlock(&c->mu);
    return e != NULL ? 0 : TOPO_ELIMIT;
}

int probe_checks_set_live(probe_checks *c, const char *name, topo_probe_check_fn fn,
                          void *payload)
{
    if (!probe_check_name_ok(PROBE_LIVE, name))
        return TOPO_EINVALID;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    if (fn == NULL) {
        for (size_t i = 0; i < c->nlive; i++)
            if (strcmp(c->live[i].name, name) == 0) {
                memmove(&c->live[i], &c->live[i + 1], (c->nlive - i - 1) * sizeof c->live[0]);
                c->nlive--;
                break;
            }
    } else {
        probe_check *e = find_or_add(c->live, &c->nlive, name);
        if (e != NULL) {
            e->fn = fn;
            e->payload = payload;
        } else {
            rc = TOPO_ELIMIT;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void probe_checks_stopping(probe_checks *c)
{
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    pthread_mutex_unlock(&c->mu);
}

static void put_result(probe_report *out, const char *name, int ok)
{
    probe_result *r = &out->r[out->n++];
    memcpy(r->name, name, strlen(name) + 1);
    r->ok = ok;
}

void probe_checks_report(probe_checks *c, probe_kind kind, probe_report *out)
{
    probe_check copy[TOPO_MAX_PROBE_CHECKS];
    size_t n;
    int stopping;
    pthread_mutex_lock(&c->mu);
    n = kind == PROBE_LIVE ? c->nlive : c->nready;
    memcpy(copy, kind == PROBE_LIVE ? c->live : c->ready, n * sizeof copy[0]);
    stopping = c->stopping;
    pthread_mutex_unlock(&c->mu);

    out->n = 0;
    if (kind == PROBE_LIVE)
        put_result(out, builtin[PROBE_LIVE], 1);
    for (size_t i = 0; i < n; i++)
        put_result(out, copy[i].name, kind == PROBE_LIVE ? copy[i].fn(copy[i].payload) != 0
                                                         : copy[i].ok);
    if (kind == PROBE_READY)
        put_result(out, builtin[PROBE_READY], !stopping);
}

static void put_line(topo_buf *body, const probe_result *r)
{
    topo_buf_printf(body, "[%c]%s %s\n", r->ok ? '+' : '-', r->name, r->ok ? "ok" : "failed");
}

int probe_answer(const probe_report *r, const char *path, const char *check, int verbose,
                 topo_buf *body, int *status)
{
    if (check != NULL) {
        for (size_t i = 0; i < r->n; i++) {
            if (strcmp(r->r[i].name, check) != 0)
                continue;
            *status = r->r[i].ok ? 200 : 503;
            if (r->r[i].ok)
                topo_buf_puts(body, "ok\n");
            else
                put_line(body, &r->r[i]);
            return body->error;
        }
        *status = 404;
        topo_buf_puts(body, "not found\n");
        return body->error;
    }
    int ok = 1;
    for (size_t i = 0; i < r->n; i++)
        ok = ok && r->r[i].ok;
    *status = ok ? 200 : 503;
    /* Like kube-apiserver, a failure lists the checks even unasked: the
     * one who reads the text wants to know which. */
    if (ok && !verbose) {
        topo_buf_puts(body, "ok\n");
        return body->error;
    }
    for (size_t i = 0; i < r->n; i++)
        put_line(body, &r->r[i]);
    topo_buf_printf(body, "%s check %s\n", path, ok ? "passed" : "failed");
    return body->error;
}
