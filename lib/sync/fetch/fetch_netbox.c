/* NetBox over HTTP (topo/fetch.h): each list wanted, page by page along the
 * `next` links (checked by fetch_follow, bounded by max_pages), into one
 * topo_netbox parser, then its facts. */
#include "fetch_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/limits.h"
#include "topo/log.h"

/* "&key=<escaped value>", escaped in place (a failed append sticks in b). */
static void add_param(topo_buf *b, const char *key, const char *value)
{
    size_t n = topo_http_escape(NULL, 0, value);
    topo_buf_printf(b, "&%s=", key);
    if (topo_buf_reserve(b, n) == 0) {
        topo_http_escape(b->ptr + b->len, n + 1, value);
        topo_buf_grown(b, n);
    }
}

static void add_params(topo_buf *b, const char *key, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        add_param(b, key, values[i]);
}

/* The fields of each list that lib/sync/sources/netbox.c and netbox_links.c
 * read (their v4 names), for NetBox's `fields=` (v4.0+, "Dynamic REST API
 * Fields"; names a serializer lacks are skipped). Nested objects (site,
 * rack, role, a termination's device) keep their brief form, which holds
 * the id, name and slug read. A NetBox before v4.0 ignores the parameter,
 * as it does every query parameter it does not know, and answers in full,
 * `exclude=config_context` trimming its devices. */
static const char *const list_fields[] = {
    [TOPO_NETBOX_DEVICES] = "name,role,site,rack",
    [TOPO_NETBOX_RACKS] = "id,name",
    [TOPO_NETBOX_SITES] = "id,slug,name",
    /* one string, in parentheses for clang's -Wstring-concatenation */
    [TOPO_NETBOX_INTERFACES] = ("device,name,mgmt_only,connected_endpoints,"
                                "connected_endpoints_type,link_peers,link_peers_type"),
    [TOPO_NETBOX_CABLES] = "status,a_terminations,b_terminations",
};

/* "&fields=..." for a list: its own fields, the custom fields where the
 * NVLink domain is one (devices and racks), the tags where a tag filters
 * devices. */
static void add_fields(topo_buf *b, const topo_netbox_opts *o, topo_netbox_kind kind)
{
    topo_buf_printf(b, "&fields=%s", list_fields[kind]);
    if (o->nvlink_field != NULL && (kind == TOPO_NETBOX_DEVICES || kind == TOPO_NETBOX_RACKS))
        topo_buf_puts(b, ",custom_fields");
    if (o->ntags > 0 && kind == TOPO_NETBOX_DEVICES)
        topo_buf_puts(b, ",tags");
}

/* The first page's path of a list, with the page size, the fields the
 * parser reads, and the filters NetBox applies as the parser would (role
 * and tag only where their meaning is the parser's: see topo/fetch.h).
 * NetBox's `next` links carry them on. */
static char *first_page(const topo_fetch *f, topo_netbox_kind kind)
{
    const topo_netbox_opts *o = &f->netbox;
    topo_buf b = TOPO_BUF_INIT(TOPO_MAX_HTTP_URL);
    topo_buf_printf(&b, "%s?limit=%d", topo_netbox_kind_path(kind), f->page_size);
    add_fields(&b, o, kind);
    if (kind == TOPO_NETBOX_DEVICES) {
        topo_buf_puts(&b, "&exclude=config_context");
        if (o->nswitch_roles > 0 && o->nhost_roles > 0) {
            add_params(&b, "role", o->switch_roles, o->nswitch_roles);
            add_params(&b, "role", o->host_roles, o->nhost_roles);
        }
        if (o->ntags == 1)
            add_param(&b, "tag", o->tags[0]);
    }
    add_params(&b, kind == TOPO_NETBOX_SITES ? "slug" : "site", o->sites, o->nsites);
    return topo_buf_take(&b, NULL);
}

/* One page into the parser, read a result at a time as a page file is
 * (never its whole tree: a compact page's is nine times its text), within
 * the response's limit; *next (malloc'd) is the next page's path, or NULL
 * after the last. A next link that loops or goes on past the list's count
 * is an error (fetch_pages). */
static int one_page(char **next, topo_fetch *f, topo_netbox *nb, topo_netbox_kind kind,
                    const char *path, fetch_pages *pages, uint64_t *objects, topo_err *err)
{
    topo_http_response resp = {0};
    topo_netbox_page page;
    char source[FETCH_SOURCE_MAX];
    char *link = NULL;
    *next = NULL;
    int rc = fetch_get(f, path, &resp, err);
    if (rc == 0 &&
        (rc = topo_netbox_read_page(&link, &page, nb, kind, resp.body, resp.len, f->max_body,
                                    fetch_source_text(source, f, path), err)) != 0)
        fetch_parse_failed(err, rc);
    if (rc == 0) {
        *objects += page.results;
        rc = fetch_pages_read(pages, path, &page, err);
        if (rc == 0 && link != NULL)
            rc = fetch_follow(next, f, link, path, err);
        if (rc == 0 && *next != NULL &&
            (rc = fetch_pages_check_next(pages, f->name, *next, err)) != 0) {
            free(*next);
            *next = NULL;
        }
    }
    free(link);
    topo_http_response_dispose(&resp);
    return rc;
}

static int one_list(topo_fetch *f, topo_netbox *nb, topo_netbox_kind kind, uint64_t *objects,
                    size_t *pages, topo_err *err)
{
    fetch_pages read;
    char *path = first_page(f, kind);
    int rc = 0, n = 0;
    if (path == NULL)
        return topo_err_set(err, TOPO_ELIMIT, "%s: %s: the query is too long", f->name,
                            topo_netbox_kind_path(kind));
    if ((rc = fetch_pages_init(&read, err)) != 0) {
        free(path);
        return rc;
    }
    while (rc == 0 && path != NULL) {
        if (++n > f->max_pages) {
            rc = topo_err_set(err, TOPO_ELIMIT,
                              "%s: GET %s: more than %d pages in one list; not followed further",
                              f->name, topo_netbox_kind_path(kind), f->max_pages);
            break;
        }
        char *next = NULL;
        rc = one_page(&next, f, nb, kind, path, &read, objects, err);
        free(path);
        path = next;
    }
    free(path);
    if (rc == 0)
        rc = fetch_pages_check_count(&read, f->name, topo_netbox_kind_path(kind), err);
    fetch_pages_dispose(&read);
    *pages += (size_t)n;
    return rc;
}

int fetch_netbox(topo_fetch *f, topo_facts *facts, uint64_t *objects, topo_err *err)
{
    topo_netbox *nb = NULL;
    size_t pages = 0;
    int rc = topo_netbox_create(&nb, &f->netbox, err);
    for (int k = TOPO_NETBOX_DEVICES; rc == 0 && k <= TOPO_NETBOX_CABLES; k++) {
        if (f->netbox_lists & TOPO_FETCH_NETBOX_LIST(k))
            rc = one_list(f, nb, (topo_netbox_kind)k, objects, &pages, err);
    }
    if (rc == 0)
        rc = topo_netbox_finish(nb, facts, err);
    if (rc == 0) {
        topo_netbox_stats st = topo_netbox_get_stats(nb);
        char text[TOPO_NETBOX_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source netbox: %s: %zu pages, %llu objects; %s", f->base, pages,
                 (unsigned long long)*objects, topo_netbox_stats_text(text, sizeof text, &st));
    }
    topo_netbox_free(nb);
    return rc;
}
