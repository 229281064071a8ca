/* The pages of one NetBox list read so far (fetch_internal.h): a `next`
 * link is followed only to a page not read yet, and no further than the
 * first page's `count` allows. A server whose links loop, or never end,
 * would otherwise be followed up to max_pages (10,000 requests) per list. */
#include "fetch_internal.h"

#include <string.h>

int fetch_pages_init(fetch_pages *p, topo_err *err)
{
    memset(p, 0, sizeof(*p));
    p->pool = topo_pool_create();
    p->read = topo_strmap_create(16);
    if (p->pool == NULL || p->read == NULL) {
        fetch_pages_dispose(p);
        return topo_err_nomem(err, "netbox: pages");
    }
    return 0;
}

void fetch_pages_dispose(fetch_pages *p)
{
    topo_strmap_free(p->read);
    topo_pool_free(p->pool);
    memset(p, 0, sizeof(*p));
}

/* The first page sets the bound: count / its results + 1 pages (the one
 * page more allows objects added while the list is read, and a last page
 * cut short). A count that is no integer sets none: max_pages still holds. */
static void first_page_bound(fetch_pages *p, const topo_netbox_page *page)
{
    if (page->count < 0 || !page->is_list)
        return;
    size_t per = page->results > 0 ? page->results : 1;
    p->count = page->count;
    p->per_page = per;
    p->most = (uint64_t)p->count / per + 1;
}

int fetch_pages_read(fetch_pages *p, const char *path, const topo_netbox_page *page,
                     topo_err *err)
{
    if (p->n == 0)
        first_page_bound(p, page);
    p->n++;
    p->results += page->is_list ? page->results : 0;
    const char *copy = topo_pool_strdup(p->pool, path);
    if (copy == NULL || topo_strmap_put(p->read, copy, (int32_t)p->n) != 0)
        return topo_err_nomem(err, "netbox: pages");
    return 0;
}

int fetch_pages_check_next(const fetch_pages *p, const char *name, const char *next, topo_err *err)
{
    int32_t seen = topo_strmap_get(p->read, next);
    if (seen >= 0)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: GET %s: next link repeats a page already read (a loop): page "
                            "%d of the list, linked from page %zu",
                            name, next, (int)seen, p->n);
    if (p->most > 0 && p->n + 1 > p->most)
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: GET %s: next link goes past the %llu pages the list's count "
                            "allows (count %lld, %zu results a page); not followed",
                            name, next, (unsigned long long)p->most, p->count, p->per_page);
    return 0;
}

int fetch_pages_check_count(const fetch_pages *p, const char *name, const char *list_path,
                            topo_err *err)
{
    if (p->most == 0 || (uint64_t)p->count == p->results)
        return 0;
    return topo_err_set(err, TOPO_EINVALID,
                        "%s: GET %s: count: the first page says %lld objects, the %zu pages "
                        "held %llu; the list changed while read, or records were lost",
                        name, list_path, p->count, p->n, (unsigned long long)p->results);
}
