/* Slurm's topology.conf from a plan (include/topo/export.h): the tree form
 * over the switch levels, the block form over NVLink or leaf domains, and
 * Slurm's hostlist notation. Text lines are Slurm's own format; there is no
 * library for it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/export.h"

#include "domains.h"

typedef struct hostname {
    const char *name;
    size_t prefix_len; /* bytes before the trailing digits */
    size_t width;      /* number of trailing digits (0: none) */
    size_t padded;     /* the width when zero-padded ("01"), else 0 */
    uint64_t number;
} hostname;

static hostname split(const char *s)
{
    hostname h = {.name = s};
    size_t n = strlen(s), d = n;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    h.prefix_len = d;
    h.width = n - d;
    if (h.width == 0 || h.width > 18) { /* no number, or one too long to hold */
        h.prefix_len = n;
        h.width = 0;
        return h;
    }
    for (size_t i = d; i < n; i++)
        h.number = h.number * 10 + (uint64_t)(s[i] - '0');
    h.padded = s[d] == '0' && h.width > 1 ? h.width : 0;
    return h;
}

static int same_prefix(const hostname *a, const hostname *b)
{
    return a->prefix_len == b->prefix_len && memcmp(a->name, b->name, a->prefix_len) == 0;
}

static int by_prefix_number(const void *x, const void *y)
{
    const hostname *a = x, *b = y;
    size_t m = a->prefix_len < b->prefix_len ? a->prefix_len : b->prefix_len;
    int c = memcmp(a->name, b->name, m);
    if (c != 0)
        return c;
    if (a->prefix_len != b->prefix_len)
        return a->prefix_len < b->prefix_len ? -1 : 1;
    if (a->padded != b->padded)
        return a->padded < b->padded ? -1 : 1;
    return a->number < b->number ? -1 : a->number > b->number;
}

/* Same prefix, and either all without leading zeros or all zero-padded to
 * one width (Slurm reads "n[01-10]" as n01..n10): one bracket, ranges
 * inside. */
static size_t write_group(topo_buf *out, const hostname *h, size_t i, size_t n)
{
    size_t j = i + 1;
    while (j < n && h[j].width > 0 && h[j].padded == h[i].padded && same_prefix(&h[i], &h[j]))
        j++;
    if (h[i].width == 0 || j == i + 1) {
        topo_buf_puts(out, h[i].name);
        return i + 1;
    }
    topo_buf_printf(out, "%.*s[", (int)h[i].prefix_len, h[i].name);
    for (size_t k = i; k < j;) {
        size_t e = k;
        while (e + 1 < j && h[e + 1].number == h[e].number + 1)
            e++;
        const char *first = h[k].name + h[k].prefix_len, *last = h[e].name + h[e].prefix_len;
        topo_buf_printf(out, "%s%s", k > i ? "," : "", first);
        if (e > k)
            topo_buf_printf(out, "-%s", last);
        k = e + 1;
    }
    topo_buf_putc(out, ']');
    return j;
}

int topo_export_hostlist(topo_buf *out, const char *const *names, size_t n)
{
    hostname *h = malloc((n ? n : 1) * sizeof(*h));
    if (!h)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++)
        h[i] = split(names[i]);
    qsort(h, n, sizeof(*h), by_prefix_number);
    /* The same name twice is written once (equal names sort together). */
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(h[i].name, h[u - 1].name) != 0)
            h[u++] = h[i];
    for (size_t i = 0; i < u;) {
        if (i > 0)
            topo_buf_putc(out, ',');
        i = write_group(out, h, i, u);
    }
    free(h);
    return out->error;
}

/* The node names of rows [first, end). */
static const char **names_of(const topo_plan *plan, const plan_domains *d, size_t first,
                             size_t end)
{
    const char **names = malloc((end > first ? end - first : 1) * sizeof(*names));
    for (size_t i = first; names && i < end; i++)
        names[i - first] = topo_plan_node_name(plan, d->rows[i]);
    return names;
}

static int depth_of(const plan_domains *d, topo_level level)
{
    for (size_t i = 0; i < d->nlevels; i++)
        if (d->levels[i] == level)
            return (int)i;
    return -1;
}

/* switch.<tier>.<n> for a domain at depth of the tree's switch depths. */
static void switch_name(char *buf, size_t size, const int *switch_depths, size_t nswitch,
                        const plan_domain *dom)
{
    size_t idx = 0;
    while (idx < nswitch && switch_depths[idx] != (int)dom->depth)
        idx++;
    snprintf(buf, size, "switch.%zu.%zu", nswitch - idx, dom->ordinal + 1);
}

static int tree_lines(const topo_plan *plan, const plan_domains *d, const int *depths,
                      size_t nswitch, topo_buf *out)
{
    char name[64];
    for (size_t s = 0; s < nswitch; s++) {
        for (size_t i = 0; i < d->ndomains; i++) {
            const plan_domain *dom = &d->domains[i];
            if ((int)dom->depth != depths[s])
                continue;
            switch_name(name, sizeof name, depths, nswitch, dom);
            topo_buf_printf(out, "# %s=%s\nSwitchName=%s ", name, dom->value, name);
            int rc = 0;
            if (s + 1 == nswitch) {
                const char **names = names_of(plan, d, dom->first, dom->end);
                topo_buf_puts(out, "Nodes=");
                rc = names ? topo_export_hostlist(out, names, dom->end - dom->first) : TOPO_ENOMEM;
                free(names);
            } else {
                /* The children one switch level down inside this domain. */
                const char **kids = malloc(d->ndomains * sizeof(*kids));
                char (*store)[64] = malloc(d->ndomains * sizeof(*store));
                size_t nk = 0;
                for (size_t k = i + 1; kids && store && k < d->ndomains; k++) {
                    const plan_domain *c = &d->domains[k];
                    if (c->first >= dom->end)
                        break;
                    if ((int)c->depth != depths[s + 1])
                        continue;
                    switch_name(store[nk], sizeof store[nk], depths, nswitch, c);
                    kids[nk] = store[nk];
                    nk++;
                }
                topo_buf_puts(out, "Switches=");
                rc = kids && store ? topo_export_hostlist(out, kids, nk) : TOPO_ENOMEM;
                free(kids);
                free(store);
            }
            topo_buf_putc(out, '\n');
            if (rc != 0)
                return rc;
        }
    }
    return out->error;
}

int topo_export_slurm_tree(const topo_plan *plan, topo_buf *out, topo_err *err)
{
    plan_domains d;
    if (plan_domains_build(&d, plan) != 0)
        return topo_err_nomem(err, "topology.conf");
    int depths[3];
    size_t nswitch = 0;
    const topo_level switch_levels[] = {TOPO_LEVEL_DATACENTER, TOPO_LEVEL_SPINE, TOPO_LEVEL_LEAF};
    for (size_t i = 0; i < 3; i++) {
        int depth = depth_of(&d, switch_levels[i]);
        if (depth >= 0)
            depths[nswitch++] = depth;
    }
    int rc = 0;
    if (nswitch == 0 || depth_of(&d, TOPO_LEVEL_LEAF) < 0)
        rc = topo_err_set(err, TOPO_EINVALID,
                          "topology.conf (tree): no leaf level with a value on every labelled "
                          "node");
    else if (tree_lines(plan, &d, depths, nswitch, out) != 0)
        rc = topo_err_nomem(err, "topology.conf");
    plan_domains_free(&d);
    return rc;
}

static int is_power_of_two(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* topograph's inference: D, 2D, ... up to 2^floor(log2 N) * D. */
static size_t infer_sizes(int *sizes, size_t room, const plan_domains *d, int depth)
{
    size_t blocks = 0, smallest = SIZE_MAX;
    for (size_t i = 0; i < d->ndomains; i++) {
        if ((int)d->domains[i].depth != depth)
            continue;
        blocks++;
        size_t count = d->domains[i].end - d->domains[i].first;
        if (count < smallest)
            smallest = count;
    }
    size_t n = 0;
    for (size_t mult = 1; blocks > 0 && mult <= blocks && n < room && smallest * mult <= INT32_MAX;
         mult *= 2)
        sizes[n++] = (int)(smallest * mult);
    return n;
}

int topo_export_slurm_block(const topo_plan *plan, const topo_export_block_opts *opts,
                            topo_buf *out, topo_err *err)
{
    topo_export_block_opts o = opts ? *opts : (topo_export_block_opts){0};
    topo_level level = o.by_leaf ? TOPO_LEVEL_LEAF : TOPO_LEVEL_NVLINK;
    for (size_t i = 1; i < o.nsizes; i++)
        if (o.sizes[i - 1] <= 0 || o.sizes[i] % o.sizes[i - 1] != 0 ||
            !is_power_of_two(o.sizes[i] / o.sizes[i - 1]))
            return topo_err_set(err, TOPO_EINVALID,
                                "blockSizes[%zu]: %d is not a power-of-two multiple of %d", i,
                                o.sizes[i], o.sizes[i - 1]);
    if (o.nsizes > 0 && o.sizes[0] <= 0)
        return topo_err_set(err, TOPO_EINVALID, "blockSizes[0]: must be positive");
    plan_domains d;
    if (plan_domains_build(&d, plan) != 0)
        return topo_err_nomem(err, "topology.conf");
    int depth = depth_of(&d, level);
    int rc = 0;
    if (depth < 0) {
        rc = topo_err_set(err, TOPO_EINVALID,
                          "topology.conf (block): no %s level with a value on every labelled node",
                          topo_level_name(level));
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < d.ndomains && rc == 0; i++) {
        const plan_domain *dom = &d.domains[i];
        if ((int)dom->depth != depth)
            continue;
        const char **names = names_of(plan, &d, dom->first, dom->end);
        n++;
        topo_buf_printf(out, "# block.%zu=%s\nBlockName=block.%zu Nodes=", n, dom->value, n);
        rc = names ? topo_export_hostlist(out, names, dom->end - dom->first) : TOPO_ENOMEM;
        topo_buf_putc(out, '\n');
        free(names);
    }
    int inferred[64];
    const int *sizes = o.sizes;
    size_t nsizes = o.nsizes;
    if (nsizes == 0) {
        nsizes = infer_sizes(inferred, 64, &d, depth);
        sizes = inferred;
    }
    topo_buf_puts(out, "BlockSizes=");
    for (size_t i = 0; i < nsizes; i++)
        topo_buf_printf(out, "%s%d", i ? "," : "", sizes[i]);
    topo_buf_putc(out, '\n');
    if (rc != 0 || out->error != 0)
        rc = topo_err_nomem(err, "topology.conf");
done:
    plan_domains_free(&d);
    return rc;
}
