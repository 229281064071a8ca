/* The topology plan (include/topo/plan.h): every statement a source makes
 * about a node's level is kept until topo_plan_build, which takes host
 * names that differ from a node's only by a domain to be that node, picks a
 * winner per level by precedence, records conflicts, and turns raw values
 * into label values level by level, a name within the scope its source
 * names it in. */
#include "topo/labelsyntax.h"
#include "topo/plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/kueue.h"
#include "topo/labelowner.h"
#include "topo/labelvalue.h"
#include "topo/limits.h"
#include "topo/pool.h"
#include "topo/strmap.h"

#include "plan_internal.h"
#include "shortnames.h"

/* What one source said about one level of one node. */
typedef struct claim {
    size_t node;
    topo_level level;
    size_t source; /* index into plan->sources */
    const char *raw;
} claim;

/* Where a source names its values: an inventory names a rack within a
 * site (NetBox: rack names are unique per site, not overall) and an NVLink
 * domain field within a rack ("1" in every rack). A value of `inner` is
 * scoped by the `outer` value the same source gives the same host. Switch
 * ids (GUIDs, topo/guid.h) and GPU cliques (which embed the cluster's UUID)
 * are unique everywhere: spine and leaf are scoped by nothing, and the GPU
 * source gives no datacenter or rack to scope its cliques by. */
static const struct {
    topo_level inner, outer;
} scoping[] = {
    {TOPO_LEVEL_RACK, TOPO_LEVEL_DATACENTER},
    {TOPO_LEVEL_NVLINK, TOPO_LEVEL_DATACENTER},
    {TOPO_LEVEL_NVLINK, TOPO_LEVEL_RACK},
};
#define NSCOPING (sizeof(scoping) / sizeof(scoping[0]))

typedef struct node {
    const char *name;
    int declared;   /* added by topo_plan_add_node */
    size_t same_as; /* the node this host name was taken to be; SIZE_MAX: none */
    int ambiguous;  /* its short name matches several nodes */
    const char *raw[TOPO_LEVEL_COUNT];
    size_t source[TOPO_LEVEL_COUNT]; /* valid where raw is set */
    /* scoping[i].outer's value from the source of scoping[i].inner's */
    const char *scope_raw[NSCOPING];
    const char *value[TOPO_LEVEL_COUNT];
    const char *reason;
} node;

struct topo_plan {
    topo_pool *pool;
    const topo_namemap *names;
    topo_plan_incomplete incomplete;
    const char *fallback;
    topo_level levels[TOPO_LEVEL_COUNT];
    size_t nlevels;
    const char *keys[TOPO_LEVEL_COUNT];
    const char *prefix; /* of the owned keys */
    const char *provenance_key;
    const char *record_key;
    int topograph;
    int nvlink_own_node;
    const char **precedence[TOPO_LEVEL_COUNT];
    size_t nprecedence[TOPO_LEVEL_COUNT];
    TOPO_ARRAY(const char *) sources;
    TOPO_ARRAY(node) nodes;
    TOPO_ARRAY(claim) claims;
    TOPO_ARRAY(const char *) conflicts;
    TOPO_ARRAY(const char *) notes;
    TOPO_ARRAY(const char *) ambiguous;
    topo_strmap *node_index;
    topo_strmap *unmapped_names; /* each refused host name once (keys in the pool) */
    TOPO_ARRAY(const char *) unmapped_why; /* the name map's reason, per refused name */
    size_t declared, unknown, incomplete_nodes;
    size_t missing[TOPO_LEVEL_COUNT]; /* nodes without a value, per level of the topology */
    int built;
};

static int copy_opts(topo_plan *p, const topo_plan_opts *o, topo_err *err)
{
    const char *prefix = o && o->prefix ? o->prefix : TOPO_PLAN_DEFAULT_PREFIX;
    p->fallback = topo_pool_strdup(p->pool, o && o->fallback ? o->fallback
                                                              : TOPO_PLAN_DEFAULT_FALLBACK);
    if (!p->fallback)
        return topo_err_nomem(err, "plan");
    if (!topo_label_value_valid(p->fallback, NULL, 0) || !*p->fallback)
        return topo_err_set(err, TOPO_EINVALID, "fallback: \"%s\" is not a label value",
                            p->fallback);
    p->incomplete = o ? o->incomplete : TOPO_PLAN_LEAVE_OUT;
    p->names = o ? o->names : NULL;
    p->topograph = o ? o->topograph != 0 : 0;
    p->nvlink_own_node = o ? o->nvlink_own_node != 0 : 0;
    char bad[512];
    if (!topo_labelowner_prefix_valid(prefix, bad, sizeof bad))
        return topo_err_set(err, TOPO_EINVALID, "prefix: \"%s\": %s", prefix, bad);
    p->prefix = topo_pool_strdup(p->pool, prefix);
    p->provenance_key = topo_pool_printf(p->pool, "%s%s", prefix, TOPO_PLAN_PROVENANCE_NAME);
    p->record_key = topo_pool_printf(p->pool, "%s%s", prefix, TOPO_PLAN_RECORD_NAME);
    if (!p->prefix || !p->provenance_key || !p->record_key)
        return topo_err_nomem(err, "plan");
    if (o && o->nlevels > 0) {
        if (o->nlevels > TOPO_LEVEL_COUNT)
            return topo_err_set(err, TOPO_EINVALID, "levels: more than %d", TOPO_LEVEL_COUNT);
        for (size_t i = 0; i < o->nlevels; i++) {
            if (!topo_level_name(o->levels[i]))
                return topo_err_set(err, TOPO_EINVALID, "levels[%zu]: unknown level", i);
            p->levels[i] = o->levels[i];
        }
        /* Checked where the levels are read too; here so that no caller
         * can plan a tree other than the one its Kueue Topology lists. */
        size_t at;
        char why[160];
        if (topo_level_order_check(&at, o->levels, o->nlevels, why, sizeof why) != 0)
            return topo_err_set(err, TOPO_EINVALID, "levels[%zu]: %s", at, why);
        p->nlevels = o->nlevels;
    } else {
        for (int l = 0; l < TOPO_LEVEL_COUNT; l++)
            p->levels[l] = (topo_level)l;
        p->nlevels = TOPO_LEVEL_COUNT;
    }
    for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
        p->keys[l] = l == TOPO_LEVEL_HOSTNAME
                         ? TOPO_KUEUE_HOSTNAME_LABEL
                         : topo_pool_printf(p->pool, "%s%s", prefix, topo_level_name((topo_level)l));
        if (!p->keys[l])
            return topo_err_nomem(err, "plan");
        size_t n = o ? o->nprecedence[l] : 0;
        if (n == 0)
            continue;
        p->precedence[l] = topo_pool_calloc(p->pool, n, sizeof(char *));
        if (!p->precedence[l])
            return topo_err_nomem(err, "plan");
        for (size_t i = 0; i < n; i++)
            if (!(p->precedence[l][i] = topo_pool_strdup(p->pool, o->precedence[l][i])))
                return topo_err_nomem(err, "plan");
        p->nprecedence[l] = n;
    }
    return 0;
}

int topo_plan_create(topo_plan **out, const topo_plan_opts *opts, topo_err *err)
{
    *out = NULL;
    topo_plan *p = calloc(1, sizeof(*p));
    if (!p)
        return topo_err_nomem(err, "plan");
    p->pool = topo_pool_create();
    p->node_index = topo_strmap_create(256);
    p->unmapped_names = topo_strmap_create(16);
    int rc = p->pool && p->node_index && p->unmapped_names ? copy_opts(p, opts, err)
                                                           : topo_err_nomem(err, "plan");
    if (rc != 0) {
        topo_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void topo_plan_free(topo_plan *plan)
{
    if (!plan)
        return;
    free(plan->sources.items);
    free(plan->nodes.items);
    free(plan->claims.items);
    free(plan->conflicts.items);
    free(plan->notes.items);
    free(plan->ambiguous.items);
    topo_strmap_free(plan->node_index);
    topo_strmap_free(plan->unmapped_names);
    free(plan->unmapped_why.items);
    topo_pool_free(plan->pool);
    free(plan);
}

/* The node of a (mapped) name, added when new. */
static int node_of(topo_plan *p, const char *name, size_t *out, topo_err *err)
{
    int32_t found = topo_strmap_get(p->node_index, name);
    if (found >= 0) {
        *out = (size_t)found;
        return 0;
    }
    if (p->nodes.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "plan: more than %u nodes",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    node n = {.name = topo_pool_strdup(p->pool, name), .same_as = SIZE_MAX};
    if (!n.name || TOPO_ARRAY_GROW(&p->nodes) != 0 ||
        topo_strmap_put(p->node_index, n.name, (int32_t)p->nodes.n) != 0)
        return topo_err_nomem(err, "plan");
    p->nodes.items[p->nodes.n] = n;
    *out = p->nodes.n++;
    return 0;
}

int topo_plan_add_node(topo_plan *plan, const char *name, topo_err *err)
{
    if (!topo_dns_subdomain_valid(name))
        return topo_err_set(err, TOPO_EINVALID, "node \"%s\": not a valid node name",
                            name ? name : "");
    size_t i = 0;
    int rc = node_of(plan, name, &i, err);
    if (rc == 0 && !plan->nodes.items[i].declared) {
        plan->nodes.items[i].declared = 1;
        plan->declared++;
    }
    return rc;
}

static int source_of(topo_plan *p, const char *source, size_t *out, topo_err *err)
{
    for (size_t i = 0; i < p->sources.n; i++) {
        if (strcmp(p->sources.items[i], source) == 0) {
            *out = i;
            return 0;
        }
    }
    const char *copy = topo_pool_strdup(p->pool, source);
    if (!copy || TOPO_ARRAY_PUSH(&p->sources, copy) != 0)
        return topo_err_nomem(err, "plan");
    *out = p->sources.n - 1;
    return 0;
}

/* The node name of a source's host into mapped: 1; 0 when the name map
 * refuses it (an unmappable host is reported, not fatal), the name counted
 * once however many sources and levels name it; TOPO_ENOMEM. */
static int map_host(topo_plan *p, const char *host, char mapped[TOPO_MAX_NODE_NAME + 1],
                    topo_err *err)
{
    topo_err why = TOPO_ERR_INIT;
    if (topo_namemap_apply(p->names, host, mapped, TOPO_MAX_NODE_NAME + 1, &why) == 0)
        return 1;
    if (topo_strmap_get(p->unmapped_names, host) >= 0)
        return 0;
    const char *copy = topo_pool_strdup(p->pool, host);
    const char *text = topo_pool_strdup(p->pool, why.text);
    if (!copy || !text || topo_strmap_put(p->unmapped_names, copy, 0) != 0 ||
        TOPO_ARRAY_PUSH(&p->unmapped_why, text) != 0)
        return topo_err_nomem(err, "plan");
    return 0;
}

int topo_plan_add_level(topo_plan *plan, const char *source, const char *host, topo_level level,
                        const char *value, topo_err *err)
{
    if (plan->built)
        return topo_err_set(err, TOPO_EINVALID, "plan: already built");
    if (!source || !*source || !host || !value || !*value || !topo_level_name(level) ||
        level == TOPO_LEVEL_HOSTNAME)
        return topo_err_set(err, TOPO_EINVALID, "plan: a level needs a source, a host, a level "
                                                "other than hostname and a value");
    char mapped[TOPO_MAX_NODE_NAME + 1];
    int known = map_host(plan, host, mapped, err);
    if (known <= 0)
        return known;
    claim c = {.level = level};
    int rc = node_of(plan, mapped, &c.node, err);
    if (rc == 0)
        rc = source_of(plan, source, &c.source, err);
    if (rc != 0)
        return rc;
    c.raw = topo_pool_strdup(plan->pool, value);
    if (!c.raw || TOPO_ARRAY_PUSH(&plan->claims, c) != 0)
        return topo_err_nomem(err, "plan");
    return 0;
}

int topo_plan_add_host(topo_plan *plan, const char *host, topo_err *err)
{
    if (plan->built)
        return topo_err_set(err, TOPO_EINVALID, "plan: already built");
    if (!host)
        return topo_err_set(err, TOPO_EINVALID, "plan: a host needs a name");
    char mapped[TOPO_MAX_NODE_NAME + 1];
    int known = map_host(plan, host, mapped, err);
    if (known <= 0)
        return known;
    size_t i = 0;
    return node_of(plan, mapped, &i, err);
}

int topo_plan_add_facts(topo_plan *plan, const topo_facts *facts, topo_err *err)
{
    const char *source = topo_facts_source(facts);
    for (size_t h = 0; h < topo_facts_host_count(facts); h++) {
        const char *host = topo_facts_host_name(facts, h);
        for (int l = 0; l < TOPO_LEVEL_COUNT; l++) {
            const char *v = topo_facts_host_level(facts, h, (topo_level)l);
            int rc = v ? topo_plan_add_level(plan, source, host, (topo_level)l, v, err) : 0;
            if (rc != 0)
                return rc;
        }
    }
    /* What the source found wrong in its own records (a duplicate GUID). */
    for (size_t i = 0; i < topo_facts_conflict_count(facts); i++) {
        const char *text =
            topo_pool_printf(plan->pool, "%s: %s", source, topo_facts_conflict(facts, i));
        if (!text || TOPO_ARRAY_PUSH(&plan->conflicts, text) != 0)
            return topo_err_nomem(err, "plan");
    }
    return 0;
}

/* A source's rank for a level: its place in the precedence list, or after
 * the list in the order sources were added. Lower wins. */
static size_t rank(const topo_plan *p, topo_level level, size_t source)
{
    for (size_t i = 0; i < p->nprecedence[level]; i++)
        if (strcmp(p->precedence[level][i], p->sources.items[source]) == 0)
            return i;
    return p->nprecedence[level] + source;
}

static int add_conflict(topo_plan *p, const node *n, topo_level level, size_t winner,
                        size_t loser, const char *loser_raw, topo_err *err)
{
    const char *text = topo_pool_printf(
        p->pool, "node %s: %s: %s says \"%s\", %s says \"%s\"; %s wins", n->name,
        topo_level_name(level), p->sources.items[winner], n->raw[level],
        p->sources.items[loser], loser_raw, p->sources.items[winner]);
    if (!text || TOPO_ARRAY_PUSH(&p->conflicts, text) != 0)
        return topo_err_nomem(err, "plan");
    return 0;
}

/* The node a claim is about: its host's node, or the node that host name
 * was taken to be. */
static node *claim_node(topo_plan *p, const claim *c)
{
    node *n = &p->nodes.items[c->node];
    return n->same_as != SIZE_MAX ? &p->nodes.items[n->same_as] : n;
}

/* "host gpu1: its short name matches the nodes gpu1.a.example,
 * gpu1.b.example; matched to none" (or, without a node set, "the hosts
 * ...; kept apart"), at most a few names. */
static int report_ambiguous(size_t host, const size_t *cands, size_t n, void *payload)
{
    topo_plan *p = payload;
    topo_buf text = TOPO_BUF_INIT(1024);
    topo_buf_printf(&text, "host %s: its short name matches the %s ", p->nodes.items[host].name,
                    p->declared ? "nodes" : "hosts");
    for (size_t i = 0; i < n && i < 3; i++)
        topo_buf_printf(&text, "%s%s", i ? ", " : "", p->nodes.items[cands[i]].name);
    if (n > 3)
        topo_buf_printf(&text, " and %zu more", n - 3);
    topo_buf_puts(&text, p->declared ? "; matched to none" : "; kept apart");
    char *s = topo_buf_take(&text, NULL);
    const char *kept = s ? topo_pool_strdup(p->pool, s) : NULL;
    free(s);
    if (!kept || TOPO_ARRAY_PUSH(&p->ambiguous, kept) != 0)
        return TOPO_ENOMEM;
    p->nodes.items[host].ambiguous = 1;
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Host names that name no node but differ from one node's name only by a
 * domain are that node. The candidates are the declared nodes; without a
 * node set, the hosts named with a domain (a short name from one source
 * and the FQDN from another are one host, under its FQDN). */
static int match_short_names(topo_plan *p, topo_err *err)
{
    size_t n = p->nodes.n;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    unsigned char *candidate = calloc(n ? n : 1, 1);
    size_t *same_as = malloc((n ? n : 1) * sizeof(*same_as));
    int rc = TOPO_ENOMEM;
    if (!names || !candidate || !same_as)
        goto done;
    for (size_t i = 0; i < n; i++) {
        names[i] = p->nodes.items[i].name;
        candidate[i] = (unsigned char)(p->declared ? p->nodes.items[i].declared
                                                   : strchr(names[i], '.') != NULL);
    }
    if ((rc = plan_shortnames_match(same_as, names, candidate, n, report_ambiguous, p)) != 0)
        goto done;
    for (size_t i = 0; i < n; i++)
        p->nodes.items[i].same_as = same_as[i];
    if (p->ambiguous.n > 1)
        qsort(p->ambiguous.items, p->ambiguous.n, sizeof(char *), by_text);
done:
    free(names);
    free(candidate);
    free(same_as);
    return rc == 0 ? 0 : topo_err_nomem(err, "plan");
}

/* Each claim in turn: the best-ranked source so far holds the level; a
 * different value from any other source is a conflict. */
static int resolve_claims(topo_plan *p, topo_err *err)
{
    for (size_t i = 0; i < p->claims.n; i++) {
        const claim *c = &p->claims.items[i];
        node *n = claim_node(p, c);
        if (!n->raw[c->level]) {
            n->raw[c->level] = c->raw;
            n->source[c->level] = c->source;
            continue;
        }
        if (strcmp(n->raw[c->level], c->raw) == 0) {
            if (rank(p, c->level, c->source) < rank(p, c->level, n->source[c->level]))
                n->source[c->level] = c->source;
            continue;
        }
        int better = rank(p, c->level, c->source) < rank(p, c->level, n->source[c->level]);
        size_t old_source = n->source[c->level];
        const char *old_raw = n->raw[c->level];
        if (better) {
            n->raw[c->level] = c->raw;
            n->source[c->level] = c->source;
        }
        int rc = better ? add_conflict(p, n, c->level, c->source, old_source, old_raw, err)
                        : add_conflict(p, n, c->level, n->source[c->level], c->source, c->raw,
                                       err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* For each scoped level of a node, the value its source gives the node for
 * each level that scopes it (the first, when a source said two). */
static void find_scopes(topo_plan *p)
{
    for (size_t i = 0; i < p->claims.n; i++) {
        const claim *c = &p->claims.items[i];
        node *n = claim_node(p, c);
        for (size_t k = 0; k < NSCOPING; k++)
            if (scoping[k].outer == c->level && n->raw[scoping[k].inner] &&
                n->source[scoping[k].inner] == c->source && !n->scope_raw[k])
                n->scope_raw[k] = c->raw;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const node *)a)->name, ((const node *)b)->name);
}

/* Host names taken to be another node are dropped, and so are nodes not
 * declared when any node was (counted: unknown, or ambiguous when they
 * match several); the rest are sorted by name. */
static void keep_planned_nodes(topo_plan *p)
{
    size_t kept = 0;
    for (size_t i = 0; i < p->nodes.n; i++) {
        const node *n = &p->nodes.items[i];
        if (n->same_as != SIZE_MAX)
            continue;
        if (p->declared == 0 || n->declared)
            p->nodes.items[kept++] = *n;
        else if (!n->ambiguous)
            p->unknown++;
    }
    p->nodes.n = kept;
    if (p->nodes.n > 0)
        qsort(p->nodes.items, p->nodes.n, sizeof(node), by_name);
}

/* The own-node rule (topo_plan_opts.nvlink_own_node): after every
 * source's claim, so a source that names a domain always wins. */
static int own_nvlink_domains(topo_plan *p, topo_err *err)
{
    size_t source = 0;
    int rc = p->nvlink_own_node ? source_of(p, TOPO_PLAN_OWN_NODE_SOURCE, &source, err) : 0;
    for (size_t i = 0; rc == 0 && p->nvlink_own_node && i < p->nodes.n; i++) {
        node *n = &p->nodes.items[i];
        if (!n->raw[TOPO_LEVEL_NVLINK]) {
            n->raw[TOPO_LEVEL_NVLINK] = n->name;
            n->source[TOPO_LEVEL_NVLINK] = source;
        }
    }
    return rc;
}

/* Marks incomplete nodes with their reason ("no leaf, no rack") and counts
 * the nodes missing each level. */
static int find_incomplete(topo_plan *p, topo_err *err)
{
    for (size_t i = 0; i < p->nodes.n; i++) {
        node *n = &p->nodes.items[i];
        n->raw[TOPO_LEVEL_HOSTNAME] = n->name;
        topo_buf why = TOPO_BUF_INIT(1024);
        for (size_t l = 0; l < p->nlevels; l++) {
            if (n->raw[p->levels[l]])
                continue;
            p->missing[p->levels[l]]++;
            topo_buf_printf(&why, "%sno %s", why.len ? ", " : "", topo_level_name(p->levels[l]));
        }
        if (why.len == 0 && why.error == 0)
            continue;
        char *text = topo_buf_take(&why, NULL);
        n->reason = text ? topo_pool_strdup(p->pool, text) : NULL;
        free(text);
        if (!n->reason)
            return topo_err_nomem(err, "plan");
        p->incomplete_nodes++;
    }
    return 0;
}

/* Where a node's value of level is named: "datacenter:4:dc-a;" for each
 * level that scopes it and that its source gave (length-prefixed, so two
 * scopes never read alike); NULL when unscoped. From scopes. */
static const char *scope_of(topo_pool *scopes, const node *n, topo_level level, int *nomem)
{
    topo_buf b = TOPO_BUF_INIT(0);
    for (size_t k = 0; k < NSCOPING; k++)
        if (scoping[k].inner == level && n->scope_raw[k])
            topo_buf_printf(&b, "%s:%zu:%s;", topo_level_name(scoping[k].outer),
                            strlen(n->scope_raw[k]), n->scope_raw[k]);
    if (b.len == 0 && b.error == 0)
        return NULL;
    const char *s = b.error == 0 ? topo_pool_strdup(scopes, b.ptr) : NULL;
    topo_buf_dispose(&b);
    *nomem |= s == NULL;
    return s;
}

/* Label values level by level over the domains of that level: a raw value
 * within the scope its source names it in. */
static int assign_values(topo_plan *p, topo_err *err)
{
    const char **raw = calloc(p->nodes.n ? p->nodes.n : 1, sizeof(*raw));
    const char **val = calloc(p->nodes.n ? p->nodes.n : 1, sizeof(*val));
    const char **scope = calloc(p->nodes.n ? p->nodes.n : 1, sizeof(*scope));
    topo_pool *scopes = topo_pool_create();
    int rc = raw && val && scope && scopes ? 0 : topo_err_nomem(err, "plan");
    for (size_t l = 0; rc == 0 && l < p->nlevels; l++) {
        topo_level level = p->levels[l];
        if (level == TOPO_LEVEL_HOSTNAME)
            continue;
        size_t k = 0;
        int nomem = 0;
        for (size_t i = 0; i < p->nodes.n; i++) {
            const node *n = &p->nodes.items[i];
            if (n->raw[level] && (!n->reason || p->incomplete == TOPO_PLAN_FALLBACK)) {
                scope[k] = scope_of(scopes, n, level, &nomem);
                raw[k++] = n->raw[level];
            }
        }
        rc = nomem ? topo_err_nomem(err, "plan")
                   : topo_labelvalue_assign_scoped(val, raw, scope, k, p->pool, err);
        if (rc == TOPO_ECONFLICT)
            topo_err_wrap(err, "level %s", topo_level_name(level));
        k = 0;
        for (size_t i = 0; rc == 0 && i < p->nodes.n; i++) {
            node *n = &p->nodes.items[i];
            if (n->raw[level] && (!n->reason || p->incomplete == TOPO_PLAN_FALLBACK))
                n->value[level] = val[k++];
            else if (n->reason && p->incomplete == TOPO_PLAN_FALLBACK)
                n->value[level] = p->fallback;
        }
    }
    for (size_t i = 0; rc == 0 && i < p->nodes.n; i++) {
        node *n = &p->nodes.items[i];
        if (!n->reason || p->incomplete == TOPO_PLAN_FALLBACK)
            n->value[TOPO_LEVEL_HOSTNAME] = n->name;
    }
    free(raw);
    free(val);
    free(scope);
    topo_pool_free(scopes);
    return rc;
}

int topo_plan_build(topo_plan *plan, topo_err *err)
{
    if (plan->built)
        return topo_err_set(err, TOPO_EINVALID, "plan: already built");
    plan->built = 1;
    int rc = match_short_names(plan, err);
    if (rc == 0)
        rc = resolve_claims(plan, err);
    if (rc == 0) {
        find_scopes(plan);
        keep_planned_nodes(plan);
        rc = own_nvlink_domains(plan, err);
    }
    if (rc == 0)
        rc = find_incomplete(plan, err);
    return rc == 0 ? assign_values(plan, err) : rc;
}

size_t topo_plan_node_count(const topo_plan *plan)
{
    return plan->nodes.n;
}

const char *topo_plan_node_name(const topo_plan *plan, size_t i)
{
    return i < plan->nodes.n ? plan->nodes.items[i].name : NULL;
}

int topo_plan_node_complete(const topo_plan *plan, size_t i)
{
    return i < plan->nodes.n && !plan->nodes.items[i].reason;
}

const char *topo_plan_node_reason(const topo_plan *plan, size_t i)
{
    return i < plan->nodes.n ? plan->nodes.items[i].reason : NULL;
}

const char *topo_plan_node_value(const topo_plan *plan, size_t i, topo_level level)
{
    if (i >= plan->nodes.n || !topo_level_name(level))
        return NULL;
    return plan->nodes.items[i].value[level];
}

const char *topo_plan_node_source(const topo_plan *plan, size_t i, topo_level level)
{
    if (i >= plan->nodes.n || !topo_level_name(level) || level == TOPO_LEVEL_HOSTNAME)
        return NULL;
    const node *n = &plan->nodes.items[i];
    return n->raw[level] && n->value[level] ? plan->sources.items[n->source[level]] : NULL;
}

size_t topo_plan_levels(const topo_plan *plan, topo_level out[TOPO_LEVEL_COUNT])
{
    memcpy(out, plan->levels, plan->nlevels * sizeof(*out));
    return plan->nlevels;
}

const char *topo_plan_level_key(const topo_plan *plan, topo_level level)
{
    return topo_level_name(level) ? plan->keys[level] : NULL;
}

const char *topo_plan_prefix(const topo_plan *plan)
{
    return plan->prefix;
}

const char *topo_plan_provenance_key(const topo_plan *plan)
{
    return plan->provenance_key;
}

const char *topo_plan_record_key(const topo_plan *plan)
{
    return plan->record_key;
}

int plan_topograph(const topo_plan *plan)
{
    return plan->topograph;
}

size_t topo_plan_incomplete_count(const topo_plan *plan)
{
    return plan->incomplete_nodes;
}

size_t topo_plan_level_missing(const topo_plan *plan, topo_level level)
{
    return topo_level_name(level) ? plan->missing[level] : 0;
}

int topo_plan_add_note(topo_plan *plan, const char *text, topo_err *err)
{
    const char *copy = text ? topo_pool_strdup(plan->pool, text) : NULL;
    if (!text)
        return topo_err_set(err, TOPO_EINVALID, "plan: a note needs a text");
    if (!copy || TOPO_ARRAY_PUSH(&plan->notes, copy) != 0)
        return topo_err_nomem(err, "plan");
    return 0;
}

size_t plan_note_count(const topo_plan *plan)
{
    return plan->notes.n;
}

const char *plan_note(const topo_plan *plan, size_t i)
{
    return i < plan->notes.n ? plan->notes.items[i] : NULL;
}

size_t topo_plan_conflict_count(const topo_plan *plan)
{
    return plan->conflicts.n;
}

const char *topo_plan_conflict(const topo_plan *plan, size_t i)
{
    return i < plan->conflicts.n ? plan->conflicts.items[i] : NULL;
}

size_t topo_plan_unmapped_hosts(const topo_plan *plan)
{
    return topo_strmap_size(plan->unmapped_names);
}

const char *topo_plan_unmapped(const topo_plan *plan, size_t i)
{
    return i < plan->unmapped_why.n ? plan->unmapped_why.items[i] : NULL;
}

size_t topo_plan_unknown_hosts(const topo_plan *plan)
{
    return plan->unknown;
}

size_t topo_plan_ambiguous_count(const topo_plan *plan)
{
    return plan->ambiguous.n;
}

const char *topo_plan_ambiguous(const topo_plan *plan, size_t i)
{
    return i < plan->ambiguous.n ? plan->ambiguous.items[i] : NULL;
}
