/* Reassertion backoff per node (backoff.h). */
#include "backoff.h"

#include <stdlib.h>
#include <string.h>

#include "topo/error.h"

int drift_backoff_init(drift_backoff *b, int64_t base_ms, int64_t max_ms)
{
    memset(b, 0, sizeof(*b));
    b->base_ms = base_ms > 0 ? base_ms : 1;
    b->max_ms = max_ms >= b->base_ms ? max_ms : b->base_ms;
    b->pool = topo_pool_create();
    b->index = topo_strmap_create(16);
    if (b->pool == NULL || b->index == NULL) {
        drift_backoff_dispose(b);
        return TOPO_ENOMEM;
    }
    return 0;
}

void drift_backoff_dispose(drift_backoff *b)
{
    free(b->nodes.items);
    topo_strmap_free(b->index);
    topo_pool_free(b->pool);
    memset(b, 0, sizeof(*b));
}

static drift_node *find(const drift_backoff *b, const char *node)
{
    int32_t i = topo_strmap_get(b->index, node);
    return i >= 0 ? b->nodes.items[i] : NULL;
}

/* A node's state, made on its first drift (kept after: the nodes that ever
 * drifted, at most the cluster's nodes). */
static drift_node *find_or_add(drift_backoff *b, const char *node)
{
    drift_node *n = find(b, node);
    if (n != NULL)
        return n;
    if ((n = topo_pool_calloc(b->pool, 1, sizeof(*n))) == NULL ||
        (n->name = topo_pool_strdup(b->pool, node)) == NULL || TOPO_ARRAY_PUSH(&b->nodes, n) < 0)
        return NULL;
    if (topo_strmap_put(b->index, n->name, (int32_t)(b->nodes.n - 1)) != 0) {
        b->nodes.n--;
        return NULL;
    }
    return n;
}

static void set_pending(drift_backoff *b, drift_node *n, int pending)
{
    if (n->pending == pending)
        return;
    n->pending = pending;
    if (pending)
        b->pending++;
    else
        b->pending--;
}

/* Quiet for twice the wait, and at least DRIFT_QUIET_MIN_MS: the fight,
 * if it was one, is over. */
static void forget_if_quiet(drift_node *n, int64_t now)
{
    int64_t quiet = 2 * n->backoff_ms > DRIFT_QUIET_MIN_MS ? 2 * n->backoff_ms
                                                           : DRIFT_QUIET_MIN_MS;
    if (n->backoff_ms > 0 && now - n->seen_ms >= quiet) {
        n->backoff_ms = 0;
        n->due_ms = 0;
    }
}

int drift_backoff_check(drift_backoff *b, const char *node, int64_t now, int64_t *due_ms,
                        drift_node **out)
{
    drift_node *n = find_or_add(b, node);
    if (out != NULL)
        *out = n;
    if (n == NULL)
        return TOPO_ENOMEM;
    forget_if_quiet(n, now);
    n->seen_ms = now;
    *due_ms = n->due_ms;
    if (now < n->due_ms) {
        set_pending(b, n, 1);
        return 0;
    }
    return 1;
}

int64_t drift_backoff_sent(drift_backoff *b, drift_node *n, int64_t now)
{
    n->backoff_ms = n->backoff_ms == 0              ? b->base_ms
                    : n->backoff_ms > b->max_ms / 2 ? b->max_ms
                                                    : 2 * n->backoff_ms;
    n->due_ms = now + n->backoff_ms;
    n->seen_ms = now;
    set_pending(b, n, 0);
    return n->backoff_ms;
}

void drift_backoff_settled(drift_backoff *b, const char *node, int64_t now)
{
    drift_node *n = find(b, node);
    if (n == NULL)
        return;
    set_pending(b, n, 0);
    forget_if_quiet(n, now);
}

int64_t drift_backoff_next_due(drift_backoff *b, int64_t now)
{
    int64_t due = -1;
    for (size_t i = 0; b->pending > 0 && i < b->nodes.n; i++) {
        drift_node *n = b->nodes.items[i];
        if (n->pending && n->due_ms + DRIFT_STALE_MS < now)
            set_pending(b, n, 0);
        else if (n->pending && (due < 0 || n->due_ms < due))
            due = n->due_ms;
    }
    return due;
}
