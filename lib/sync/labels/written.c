/* What the label writer last wrote to each node (written.h). */
#include "written.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/error.h"
#include "topo/str.h"

int label_written_init(label_written *m, size_t max)
{
    memset(m, 0, sizeof(*m));
    m->max = max > 0 ? max : LABEL_WRITTEN_MAX_NODES;
    if ((m->index = topo_strmap_create(64)) == NULL)
        return TOPO_ENOMEM;
    return 0;
}

void label_written_dispose(label_written *m)
{
    topo_strmap_free(m->index);
    for (size_t i = 0; i < m->nodes.n; i++)
        free(m->nodes.items[i].name);
    free(m->nodes.items);
    memset(m, 0, sizeof(*m));
}

/* One field, length first: no value can pass for two, NULL is "-". */
static void put_field(topo_buf *b, const char *s)
{
    if (s == NULL)
        topo_buf_put(b, "-;", 2);
    else
        topo_buf_printf(b, "%zu:%s;", strlen(s), s);
}

int label_written_digest(char out[TOPO_SHA256_HEX_LEN + 1], const topo_labeldiff_input *in,
                         const char *uid)
{
    topo_buf b = TOPO_BUF_INIT(0);
    int error;

    put_field(&b, uid);
    put_field(&b, in->record_key);
    topo_buf_printf(&b, "%d;%zu;", in->authoritative != 0, in->nlabels);
    for (size_t i = 0; i < in->nlabels && in->labels != NULL; i++) {
        put_field(&b, in->labels[i].key);
        put_field(&b, in->labels[i].value);
    }
    topo_buf_printf(&b, "%zu;", in->nannotations);
    for (size_t i = 0; i < in->nannotations && in->annotations != NULL; i++) {
        put_field(&b, in->annotations[i].key);
        put_field(&b, in->annotations[i].value);
    }
    error = b.error != 0 ? b.error : topo_sha256_hex(out, b.ptr != NULL ? b.ptr : "", b.len);
    topo_buf_dispose(&b);
    return error;
}

static label_written_node *find(const label_written *m, const char *node)
{
    int32_t i = node != NULL ? topo_strmap_get(m->index, node) : -1;
    return i >= 0 ? &m->nodes.items[i] : NULL;
}

int label_written_again(label_written *m, const char *node, const char *digest, const char *rv)
{
    label_written_node *n = find(m, node);
    if (n == NULL)
        return 0;
    n->visited = 1;
    if (digest == NULL || strcmp(n->digest, digest) != 0)
        return 0; /* a change of plan (or a new node of that name) */
    /* The view still showing the node the write was computed from is not
     * someone else's change. */
    return rv == NULL || n->rv_before[0] == '\0' || strcmp(rv, n->rv_before) != 0;
}

int label_written_note(label_written *m, const char *node, const char *digest,
                       const char *rv_before)
{
    label_written_node *n = find(m, node);
    if (n == NULL) {
        if (m->nodes.n >= m->max)
            return 0;
        label_written_node fresh = {0};
        if ((fresh.name = topo_strdup(node)) == NULL)
            return TOPO_ENOMEM;
        if (TOPO_ARRAY_PUSH(&m->nodes, fresh) != 0) {
            free(fresh.name);
            return TOPO_ENOMEM;
        }
        n = &m->nodes.items[m->nodes.n - 1];
        if (topo_strmap_put(m->index, n->name, (int32_t)(m->nodes.n - 1)) != 0) {
            free(n->name);
            m->nodes.n--;
            return TOPO_ENOMEM;
        }
    }
    snprintf(n->digest, sizeof n->digest, "%s", digest);
    if (rv_before != NULL && strlen(rv_before) <= LABEL_WRITTEN_RV_MAX)
        snprintf(n->rv_before, sizeof n->rv_before, "%s", rv_before);
    else
        n->rv_before[0] = '\0';
    n->visited = 1;
    return 0;
}

/* Removes the node at i: the last one takes its place. */
static void remove_at(label_written *m, size_t i)
{
    label_written_node *n = &m->nodes.items[i];
    topo_strmap_remove(m->index, n->name);
    free(n->name);
    if (i + 1 < m->nodes.n) {
        *n = m->nodes.items[m->nodes.n - 1];
        topo_strmap_put(m->index, n->name, (int32_t)i); /* replaces: no allocation */
    }
    m->nodes.n--;
}

void label_written_forget(label_written *m, const char *node)
{
    int32_t i = node != NULL ? topo_strmap_get(m->index, node) : -1;
    if (i >= 0)
        remove_at(m, (size_t)i);
}

size_t label_written_forget_unvisited(label_written *m)
{
    size_t forgotten = 0;
    for (size_t i = m->nodes.n; i-- > 0;) {
        if (m->nodes.items[i].visited) {
            m->nodes.items[i].visited = 0;
            continue;
        }
        remove_at(m, i);
        forgotten++;
    }
    return forgotten;
}

size_t label_written_count(const label_written *m)
{
    return m->nodes.n;
}
