/* Per-node filters Kueue applies for hostname topologies: untolerated
 * NoSchedule/NoExecute taints, the nodeSelector, required node affinity; and
 * the preferred node affinity score. Kubernetes' matching rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "topo/buf.h"
#include "topo/labelsyntax.h"

static const char *label_of(const snap_node *node, const char *key)
{
    for (size_t i = 0; i < node->nlabels; i++)
        if (strcmp(node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

static int empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

/* v1 Toleration.ToleratesTaint */
static int tolerates(const topo_toleration *t, const topo_taint *taint)
{
    if (!empty(t->effect) && strcmp(t->effect, taint->effect) != 0)
        return 0;
    if (!empty(t->key) && strcmp(t->key, taint->key) != 0)
        return 0;
    if (empty(t->op) || strcmp(t->op, "Equal") == 0)
        return strcmp(t->value ? t->value : "", taint->value) == 0;
    if (strcmp(t->op, "Exists") == 0)
        return 1;
    return 0;
}

int topo_taint_tolerated(const topo_toleration *tols, size_t ntols, const topo_taint *taint)
{
    for (size_t i = 0; i < ntols; i++)
        if (tolerates(&tols[i], taint))
            return 1;
    return 0;
}

static int is_scheduling_taint(const topo_taint *taint)
{
    return strcmp(taint->effect, "NoSchedule") == 0 || strcmp(taint->effect, "NoExecute") == 0;
}

static int parse_i64(const char *s, long long *out)
{
    if (empty(s))
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int expr_matches(const topo_match_expr *e, const snap_node *node)
{
    const char *v = label_of(node, e->key);
    const char *op = e->op ? e->op : "";
    if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
        int found = 0;
        for (size_t i = 0; v != NULL && i < e->nvalues && !found; i++)
            found = strcmp(v, e->values[i]) == 0;
        return strcmp(op, "In") == 0 ? found : !found;
    }
    if (strcmp(op, "Exists") == 0)
        return v != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return v == NULL;
    if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
        long long have, want;
        if (v == NULL || e->nvalues != 1 || parse_i64(v, &have) != 0 ||
            parse_i64(e->values[0], &want) != 0)
            return 0;
        return strcmp(op, "Gt") == 0 ? have > want : have < want;
    }
    return 0;
}

/* A term with no expressions matches nothing (nodeaffinity.NodeSelector). */
static int term_matches(const topo_selector_term *t, const snap_node *node)
{
    if (t->nexprs == 0)
        return 0;
    for (size_t i = 0; i < t->nexprs; i++)
        if (!expr_matches(&t->exprs[i], node))
            return 0;
    return 1;
}

excl_kind eng_match_node(const snap_node *node, const topo_podset_spec *ps, const topo_gates *g,
                         const topo_taint **out_taint, int64_t *out_score)
{
    *out_taint = NULL;
    *out_score = 0;
    for (size_t i = 0; i < node->ntaints; i++) {
        const topo_taint *taint = &node->taints[i];
        if (!is_scheduling_taint(taint))
            continue;
        if (!topo_taint_tolerated(ps->tolerations, ps->ntolerations, taint)) {
            *out_taint = taint;
            return EXCL_TAINT;
        }
    }
    for (size_t i = 0; i < ps->nnode_selector; i++) {
        const char *v = label_of(node, ps->node_selector[i].key);
        if (v == NULL || strcmp(v, ps->node_selector[i].value ? ps->node_selector[i].value : "") != 0)
            return EXCL_SELECTOR;
    }
    if (ps->nrequired_terms > 0) {
        int any = 0;
        for (size_t i = 0; i < ps->nrequired_terms && !any; i++)
            any = term_matches(&ps->required_terms[i], node);
        if (!any)
            return EXCL_AFFINITY;
    }
    if (g->TASRespectNodeAffinityPreferred) {
        int64_t score = 0;
        for (size_t i = 0; i < ps->npreferred_terms; i++)
            if (term_matches(&ps->preferred_terms[i].term, node))
                score += ps->preferred_terms[i].weight;
        *out_score = score;
    }
    return EXCL_NONE;
}

int eng_validate_selectors(const topo_podset_spec *ps, char *why, size_t whylen)
{
    for (size_t i = 0; i < ps->nnode_selector; i++) {
        const topo_kv *kv = &ps->node_selector[i];
        if (!topo_label_key_valid(kv->key, NULL, 0)) {
            snprintf(why, whylen, "invalid node selectors: %s=%s, reason: invalid label key \"%s\"",
                     kv->key, kv->value ? kv->value : "", kv->key);
            return -1;
        }
        if (!topo_label_value_valid(kv->value, NULL, 0)) {
            snprintf(why, whylen,
                     "invalid node selectors: %s=%s, reason: invalid label value \"%s\"", kv->key,
                     kv->value, kv->value);
            return -1;
        }
    }
    return 0;
}

void eng_taint_text(const topo_taint *taint, char *buf, size_t n)
{
    if (taint->effect[0] == '\0')
        snprintf(buf, n, taint->value[0] ? "%s=%s:" : "%s", taint->key, taint->value);
    else if (taint->value[0] == '\0')
        snprintf(buf, n, "%s:%s", taint->key, taint->effect);
    else
        snprintf(buf, n, "%s=%s:%s", taint->key, taint->value, taint->effect);
}

/* A string, length-prefixed so that no two lists write the same text; an
 * absent one as "-". */
static void sig_str(topo_buf *b, const char *s)
{
    if (s == NULL)
        topo_buf_puts(b, "-");
    else
        topo_buf_printf(b, "%zu:%s", strlen(s), s);
}

static void sig_term(topo_buf *b, const topo_selector_term *term)
{
    topo_buf_printf(b, "e%zu", term->nexprs);
    for (size_t i = 0; i < term->nexprs; i++) {
        const topo_match_expr *e = &term->exprs[i];
        sig_str(b, e->key);
        sig_str(b, e->op);
        topo_buf_printf(b, "v%zu", e->nvalues);
        for (size_t j = 0; j < e->nvalues; j++)
            sig_str(b, e->values[j]);
    }
}

const char *eng_filter_sig(topo_pool *pool, const topo_podset_spec *ps)
{
    topo_buf b = TOPO_BUF_INIT(0);
    topo_buf_printf(&b, "t%zu", ps->ntolerations);
    for (size_t i = 0; i < ps->ntolerations; i++) {
        const topo_toleration *t = &ps->tolerations[i];
        sig_str(&b, t->key);
        sig_str(&b, t->op);
        sig_str(&b, t->value);
        sig_str(&b, t->effect);
    }
    topo_buf_printf(&b, "s%zu", ps->nnode_selector);
    for (size_t i = 0; i < ps->nnode_selector; i++) {
        sig_str(&b, ps->node_selector[i].key);
        sig_str(&b, ps->node_selector[i].value);
    }
    topo_buf_printf(&b, "r%zu", ps->nrequired_terms);
    for (size_t i = 0; i < ps->nrequired_terms; i++)
        sig_term(&b, &ps->required_terms[i]);
    char *text = topo_buf_take(&b, NULL);
    char *out = text ? topo_pool_strdup(pool, text) : NULL;
    free(text);
    return out;
}
