/* NetBox pages into a topo_netbox, and a topo_netbox into facts
 * (include/topo/netbox.h). Devices, racks and sites are read here;
 * interfaces and cables in netbox_links.c. */
#include "topo/netbox.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srcjson_internal.h"
#include "netbox_internal.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/str.h"

static const char *const kind_paths[] = {
    [TOPO_NETBOX_DEVICES] = "/api/dcim/devices/",
    [TOPO_NETBOX_RACKS] = "/api/dcim/racks/",
    [TOPO_NETBOX_SITES] = "/api/dcim/sites/",
    [TOPO_NETBOX_INTERFACES] = "/api/dcim/interfaces/",
    [TOPO_NETBOX_CABLES] = "/api/dcim/cables/",
};

const char *topo_netbox_kind_path(topo_netbox_kind kind)
{
    return (unsigned)kind < sizeof(kind_paths) / sizeof(kind_paths[0]) ? kind_paths[kind] : NULL;
}

static int copy_list(topo_netbox *nb, nb_strings *out, const char *const *in, size_t n,
                     const char *what, topo_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (in == NULL || in[i] == NULL || in[i][0] == '\0')
            return topo_err_set(err, TOPO_EINVALID, "netbox: empty name in %s", what);
        const char *s = topo_pool_strdup(nb->pool, in[i]);
        if (s == NULL || TOPO_ARRAY_PUSH(out, s) != 0)
            return topo_err_nomem(err, "netbox: options");
    }
    return 0;
}

int topo_netbox_create(topo_netbox **out, const topo_netbox_opts *opts, topo_err *err)
{
    static const topo_netbox_opts defaults = {0};
    topo_netbox *nb = calloc(1, sizeof(*nb));
    int rc = 0;
    *out = NULL;
    if (opts == NULL)
        opts = &defaults;
    if (nb == NULL)
        return topo_err_nomem(err, "netbox");
    nb->pool = topo_pool_create();
    nb->device_index = topo_strmap_create(256);
    nb->rack_index = topo_strmap_create(64);
    nb->site_index = topo_strmap_create(16);
    nb->mgmt = topo_strmap_create(64);
    if (!nb->pool || !nb->device_index || !nb->rack_index || !nb->site_index || !nb->mgmt)
        rc = topo_err_nomem(err, "netbox");
    if (rc == 0)
        rc = copy_list(nb, &nb->switch_roles, opts->switch_roles, opts->nswitch_roles,
                       "switch_roles", err);
    if (rc == 0)
        rc = copy_list(nb, &nb->host_roles, opts->host_roles, opts->nhost_roles, "host_roles", err);
    if (rc == 0)
        rc = copy_list(nb, &nb->sites, opts->sites, opts->nsites, "sites", err);
    if (rc == 0)
        rc = copy_list(nb, &nb->tags, opts->tags, opts->ntags, "tags", err);
    if (rc == 0 && opts->nvlink_field != NULL) {
        if (opts->nvlink_field[0] == '\0')
            rc = topo_err_set(err, TOPO_EINVALID, "netbox: empty nvlink_field");
        else if ((nb->nvlink_field = topo_pool_strdup(nb->pool, opts->nvlink_field)) == NULL)
            rc = topo_err_nomem(err, "netbox: options");
    }
    if (rc != 0) {
        topo_netbox_free(nb);
        return rc;
    }
    *out = nb;
    return 0;
}

void topo_netbox_free(topo_netbox *nb)
{
    if (nb == NULL)
        return;
    free(nb->switch_roles.items);
    free(nb->host_roles.items);
    free(nb->sites.items);
    free(nb->tags.items);
    free(nb->devices.items);
    free(nb->racks.items);
    free(nb->site_values.items);
    free(nb->conns.items);
    topo_strmap_free(nb->device_index);
    topo_strmap_free(nb->rack_index);
    topo_strmap_free(nb->site_index);
    topo_strmap_free(nb->mgmt);
    topo_pool_free(nb->pool);
    free(nb);
}

topo_netbox_stats topo_netbox_get_stats(const topo_netbox *nb)
{
    return nb->stats;
}

const char *topo_netbox_stats_text(char *out, size_t size, const topo_netbox_stats *st)
{
    snprintf(out, size,
             "%zu hosts, %zu switches, %zu racks, %zu sites, %zu host links, %zu switch links; "
             "%zu other and %zu filtered devices, %zu ignored links, %zu conflicts",
             st->hosts, st->switches, st->racks, st->sites, st->host_links, st->switch_links,
             st->other_devices, st->filtered_devices, st->ignored_links, st->conflicts);
    return out;
}

static int same_ci(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return 0;
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static int contains_ci(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; s != NULL && *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == word[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* 1 when slug or name is one of list's names. */
static int in_list(const nb_strings *list, const char *slug, const char *name)
{
    for (size_t i = 0; i < list->n; i++)
        if (same_ci(list->items[i], slug) || same_ci(list->items[i], name))
            return 1;
    return 0;
}

/* The slug and name of a nested object member ({id, name, slug, ...}, or
 * null); *id the decimal id when it has one. */
static int nested(const char **slug, const char **name, const char **id, topo_netbox *nb,
                  const json_t *rec, const char *key, const char *path, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *obj = NULL;
    int64_t n = 0;
    int rc;
    *slug = *name = NULL;
    if (id)
        *id = NULL;
    if ((rc = topo_decode_member(&obj, rec, key, path, JSON_OBJECT, 0, err)) != 0 || obj == NULL)
        return rc;
    topo_decode_path_key(p, sizeof(p), path, key);
    if ((rc = nb_string(slug, obj, "slug", p, err)) != 0 ||
        (rc = nb_string(name, obj, "name", p, err)) != 0)
        return rc;
    if (id == NULL || json_object_get(obj, "id") == NULL)
        return 0;
    if ((rc = topo_decode_int(&n, obj, "id", p, 0, err)) != 0)
        return rc;
    *id = topo_pool_printf(nb->pool, "%" PRId64, n);
    return *id ? 0 : topo_err_nomem(err, "netbox");
}

/* A custom field's value as a level value: a string, an integer, or the
 * name/label/display/value of a selection or object value; NULL when
 * unset. Lists (multi-selections) are refused: one host, one domain. */
static int custom_value(const char **out, topo_netbox *nb, const json_t *rec, const char *path,
                        topo_err *err)
{
    static const char *const keys[] = {"name", "label", "display", "value"};
    char p[TOPO_DECODE_PATH_MAX], fp[TOPO_DECODE_PATH_MAX];
    const json_t *cf = NULL, *v;
    int rc;
    *out = NULL;
    if (nb->nvlink_field == NULL ||
        (rc = topo_decode_member(&cf, rec, "custom_fields", path, JSON_OBJECT, 0, err)) != 0 ||
        cf == NULL)
        return nb->nvlink_field == NULL ? 0 : rc;
    topo_decode_path_key(p, sizeof(p), path, "custom_fields");
    topo_decode_path_key(fp, sizeof(fp), p, nb->nvlink_field);
    v = json_object_get(cf, nb->nvlink_field);
    for (size_t i = 0; json_is_object(v) && i < sizeof(keys) / sizeof(keys[0]); i++) {
        const json_t *x = json_object_get(v, keys[i]);
        if (json_is_string(x) || json_is_integer(x)) {
            v = x;
            break;
        }
    }
    if (v == NULL || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        return 0;
    if (json_is_integer(v)) {
        *out = topo_pool_printf(nb->pool, "%" PRId64, (int64_t)json_integer_value(v));
        return *out ? 0 : topo_err_nomem(err, "netbox");
    }
    if (!json_is_string(v))
        return topo_err_set(err, TOPO_EINVALID,
                            "%s: expected a string, an integer or a selection, got %s", fp,
                            topo_decode_type_name(v));
    if (strlen(json_string_value(v)) != json_string_length(v))
        return topo_err_set(err, TOPO_EINVALID, "%s: NUL byte in string", fp);
    *out = topo_pool_strdup(nb->pool, json_string_value(v));
    return *out ? 0 : topo_err_nomem(err, "netbox");
}

/* 1 when the device carries one of the wanted tags (v3+: [{name, slug}],
 * v2: ["name"]). */
static int tagged(int *out, const nb_strings *want, const json_t *rec, const char *path,
                  topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *tags = NULL;
    int rc;
    *out = 0;
    if ((rc = topo_decode_member(&tags, rec, "tags", path, JSON_ARRAY, 0, err)) != 0)
        return rc;
    topo_decode_path_key(p, sizeof(p), path, "tags");
    for (size_t i = 0; tags != NULL && i < json_array_size(tags); i++) {
        const json_t *t = json_array_get(tags, i);
        const char *slug = NULL, *name = NULL;
        topo_decode_path_index(ip, sizeof(ip), p, i);
        if (json_is_string(t))
            name = json_string_value(t);
        else if (!json_is_object(t))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", ip,
                                topo_decode_type_name(t));
        else if ((rc = nb_string(&slug, t, "slug", ip, err)) != 0 ||
                 (rc = nb_string(&name, t, "name", ip, err)) != 0)
            return rc;
        if (in_list(want, slug, name))
            *out = 1;
    }
    return 0;
}

static nb_kind device_kind(const topo_netbox *nb, const char *slug, const char *name)
{
    if (nb->switch_roles.n > 0 ? in_list(&nb->switch_roles, slug, name)
                               : (contains_ci(slug, "switch") || contains_ci(name, "switch")))
        return NB_SWITCH;
    if (nb->host_roles.n == 0 || in_list(&nb->host_roles, slug, name))
        return NB_HOST;
    return NB_OTHER;
}

static int read_device(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err)
{
    nb_device d = {NULL, NB_OTHER, NULL, NULL, NULL, NULL, NULL};
    const char *name = NULL, *role_slug = NULL, *role_name = NULL, *site_slug = NULL;
    const char *site_name = NULL, *rack_slug = NULL;
    int has_tag = 1, rc;
    if (!json_is_object(rec))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(rec));
    const char *role_key = json_object_get(rec, "role") ? "role" : "device_role";
    if ((rc = nb_string(&name, rec, "name", path, err)) != 0 ||
        (rc = nested(&role_slug, &role_name, NULL, nb, rec, role_key, path, err)) != 0 ||
        (rc = nested(&site_slug, &site_name, &d.site_id, nb, rec, "site", path, err)) != 0 ||
        (rc = nested(&rack_slug, &d.rack, &d.rack_id, nb, rec, "rack", path, err)) != 0 ||
        (rc = custom_value(&d.nvlink, nb, rec, path, err)) != 0 ||
        (nb->tags.n > 0 && (rc = tagged(&has_tag, &nb->tags, rec, path, err)) != 0))
        return rc;
    if ((nb->sites.n > 0 && !in_list(&nb->sites, site_slug, site_name)) || !has_tag) {
        nb->stats.filtered_devices++;
        return 0;
    }
    d.kind = name != NULL && *name != '\0' ? device_kind(nb, role_slug, role_name) : NB_OTHER;
    if (d.kind == NB_OTHER) {
        nb->stats.other_devices++;
        return 0;
    }
    if (nb->devices.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u NetBox devices",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    d.site = site_slug != NULL && *site_slug ? site_slug : site_name;
    if ((d.name = topo_pool_strdup(nb->pool, name)) == NULL ||
        (d.site && (d.site = topo_pool_strdup(nb->pool, d.site)) == NULL) ||
        (d.rack && (d.rack = topo_pool_strdup(nb->pool, d.rack)) == NULL) ||
        (topo_strmap_get(nb->device_index, d.name) < 0 &&
         topo_strmap_put(nb->device_index, d.name, (int32_t)nb->devices.n) != 0) ||
        TOPO_ARRAY_PUSH(&nb->devices, d) != 0)
        return topo_err_nomem(err, "netbox: devices");
    return 0;
}

/* A rack or a site: its decimal id, required. */
static int record_id(const char **out, topo_netbox *nb, const json_t *rec, const char *path,
                     topo_err *err)
{
    int64_t id = 0;
    int rc;
    if (!json_is_object(rec))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(rec));
    if ((rc = topo_decode_int(&id, rec, "id", path, 1, err)) != 0)
        return rc;
    *out = topo_pool_printf(nb->pool, "%" PRId64, id);
    return *out ? 0 : topo_err_nomem(err, "netbox");
}

static int read_rack(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err)
{
    nb_rack r = {NULL, NULL};
    const char *id = NULL;
    int rc;
    if ((rc = record_id(&id, nb, rec, path, err)) != 0 ||
        (rc = topo_decode_string(&r.name, rec, "name", path, 1, NULL, err)) != 0 ||
        (rc = custom_value(&r.nvlink, nb, rec, path, err)) != 0)
        return rc;
    if (topo_strmap_get(nb->rack_index, id) >= 0)
        return 0;
    if (nb->racks.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u NetBox racks",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    if ((r.name = topo_pool_strdup(nb->pool, r.name)) == NULL ||
        topo_strmap_put(nb->rack_index, id, (int32_t)nb->racks.n) != 0 ||
        TOPO_ARRAY_PUSH(&nb->racks, r) != 0)
        return topo_err_nomem(err, "netbox: racks");
    nb->stats.racks++;
    return 0;
}

static int read_site(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err)
{
    const char *id = NULL, *slug = NULL, *name = NULL;
    int rc;
    if ((rc = record_id(&id, nb, rec, path, err)) != 0 ||
        (rc = nb_string(&slug, rec, "slug", path, err)) != 0 ||
        (rc = topo_decode_string(&name, rec, "name", path, 1, NULL, err)) != 0)
        return rc;
    if (topo_strmap_get(nb->site_index, id) >= 0)
        return 0;
    if (nb->site_values.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u NetBox sites",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    const char *value = topo_pool_strdup(nb->pool, slug != NULL && *slug ? slug : name);
    if (value == NULL || topo_strmap_put(nb->site_index, id, (int32_t)nb->site_values.n) != 0 ||
        TOPO_ARRAY_PUSH(&nb->site_values, value) != 0)
        return topo_err_nomem(err, "netbox: sites");
    nb->stats.sites++;
    return 0;
}

typedef int (*nb_reader)(topo_netbox *, const json_t *, const char *, topo_err *);

static const nb_reader readers[] = {
    [TOPO_NETBOX_DEVICES] = read_device,  [TOPO_NETBOX_RACKS] = read_rack,
    [TOPO_NETBOX_SITES] = read_site,      [TOPO_NETBOX_INTERFACES] = nb_read_interface,
    [TOPO_NETBOX_CABLES] = nb_read_cable,
};

int topo_netbox_add_page_json(char **next_out, topo_netbox *nb, topo_netbox_kind kind,
                              const json_t *page, const char *source, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    const json_t *results = NULL;
    const char *next = NULL;
    int rc = 0;
    if (next_out)
        *next_out = NULL;
    if ((unsigned)kind >= sizeof(readers) / sizeof(readers[0]))
        return topo_err_set(err, TOPO_EINVALID, "netbox: unknown kind %d", (int)kind);
    if (!json_is_object(page))
        rc = topo_err_set(err, TOPO_EINVALID, "expected a NetBox page (an object), got %s",
                          page ? topo_decode_type_name(page) : "nothing");
    else if (json_object_get(page, "results") == NULL)
        rc = readers[kind](nb, page, "", err); /* one object */
    else if ((rc = topo_decode_member(&results, page, "results", "", JSON_ARRAY, 1, err)) == 0)
        rc = nb_string(&next, page, "next", "", err);
    for (size_t i = 0; rc == 0 && results != NULL && i < json_array_size(results); i++)
        rc = readers[kind](nb, json_array_get(results, i),
                           topo_decode_path_index(p, sizeof(p), "results", i), err);
    if (rc != 0)
        return srcjson_wrap(err, rc, source);
    if (next_out && next != NULL && *next != '\0' && (*next_out = topo_strdup(next)) == NULL)
        return topo_err_nomem(err, "netbox: next");
    return 0;
}

/* What a page held (topo_netbox_page), from its tree. */
static void page_of_tree(topo_netbox_page *out, const json_t *page)
{
    const json_t *count = json_object_get(page, "count");
    const json_t *results = json_object_get(page, "results");
    out->is_list = json_is_array(results);
    out->count = json_is_integer(count) && json_integer_value(count) >= 0
                     ? (int64_t)json_integer_value(count)
                     : -1;
    out->results = out->is_list ? json_array_size(results) : 1;
}

/* A page read a result at a time (srcjson_each): NetBox's pages hold up to
 * MAX_PAGE_SIZE results (1,000 by default, unlimited when set to 0), and a
 * whole page's tree is ten times its text. */
typedef struct nb_walk {
    topo_netbox *nb;
    topo_netbox_kind kind;
    json_t *next;  /* the page's "next" member, kept for after the walk */
    int64_t count; /* its "count", as page_of_tree reads it */
    size_t results;
} nb_walk;

static int result_each(const json_t *rec, size_t i, void *payload, topo_err *err)
{
    nb_walk *w = payload;
    char p[TOPO_DECODE_PATH_MAX];
    w->results = i + 1;
    return readers[w->kind](w->nb, rec, topo_decode_path_index(p, sizeof(p), "results", i), err);
}

/* "next" matters only for a page with results (a single object's "next"
 * is no link): it is checked once the walk has found them. "count" is
 * kept for the checks of a list read page by page. */
static int page_member(const char *key, const json_t *value, void *payload, topo_err *err)
{
    nb_walk *w = payload;
    (void)err;
    if (strcmp(key, "next") == 0)
        w->next = json_incref((json_t *)value);
    else if (strcmp(key, "count") == 0 && json_is_integer(value) && json_integer_value(value) >= 0)
        w->count = (int64_t)json_integer_value(value);
    return 0;
}

/* The next URL of a page read by the walk, checked as the tree's member is
 * (a string or null, no NUL byte), into *next_out. */
static int page_next(char **next_out, const nb_walk *w, topo_err *err)
{
    const char *next = NULL;
    if (!w->next)
        return 0;
    json_t *holder = json_pack("{s:O}", "next", w->next);
    int rc = holder ? nb_string(&next, holder, "next", "", err) : topo_err_nomem(err, "netbox");
    if (rc == 0 && next_out && next != NULL && *next != '\0' &&
        (*next_out = topo_strdup(next)) == NULL)
        rc = topo_err_nomem(err, "netbox: next");
    json_decref(holder);
    return rc;
}

/* One object, or a page of another shape than the walk's: whole, as
 * always. */
static int whole_page(char **next_out, topo_netbox_page *info, topo_netbox *nb,
                      topo_netbox_kind kind, const char *text, size_t len, size_t max,
                      const char *source, topo_err *err)
{
    json_t *doc = NULL;
    int rc = srcjson_parse(&doc, text, len, max, "NetBox page", source, err);
    if (rc == 0)
        rc = topo_netbox_add_page_json(next_out, nb, kind, doc, source, err);
    if (rc == 0)
        page_of_tree(info, doc);
    json_decref(doc);
    return rc;
}

int topo_netbox_read_page(char **next_out, topo_netbox_page *page, topo_netbox *nb,
                          topo_netbox_kind kind, const char *text, size_t len, size_t max,
                          const char *source, topo_err *err)
{
    topo_netbox_page none;
    topo_netbox_page *info = page ? page : &none;
    nb_walk w = {nb, kind, NULL, -1, 0};
    topo_codec_each how = {
        .member = "results", .element = result_each, .other = page_member, .payload = &w};
    int found = 0, rc = 0;
    *info = (topo_netbox_page){0, -1, 0};
    if (next_out)
        *next_out = NULL;
    if ((unsigned)kind >= sizeof(readers) / sizeof(readers[0]))
        return topo_err_set(err, TOPO_EINVALID, "netbox: unknown kind %d", (int)kind);
    rc = srcjson_each(&found, text, len, max, "NetBox page", source, &how, err);
    if (rc == 0 && !found) {
        json_decref(w.next);
        return whole_page(next_out, info, nb, kind, text, len, max, source, err);
    }
    if (rc == 0)
        rc = page_next(next_out, &w, err);
    json_decref(w.next);
    if (rc != 0)
        return srcjson_wrap(err, rc, source);
    *info = (topo_netbox_page){1, w.count, w.results};
    return 0;
}

int topo_netbox_add_page(char **next_out, topo_netbox *nb, topo_netbox_kind kind, const char *text,
                         size_t len, const char *source, topo_err *err)
{
    return topo_netbox_read_page(next_out, NULL, nb, kind, text, len, TOPO_MAX_NETBOX_PAGE,
                                 source, err);
}

/* A level of a host: a conflict is logged and counted, other errors end
 * the finish. */
static int set_level(topo_netbox *nb, topo_facts *facts, const char *host, topo_level level,
                     const char *value, topo_err *err)
{
    topo_err local = TOPO_ERR_INIT;
    if (value == NULL || *value == '\0')
        return 0;
    int rc = topo_facts_set_level(facts, host, level, value, &local);
    if (rc == TOPO_ECONFLICT) {
        nb->stats.conflicts++;
        topo_log(TOPO_LOG_WARN, "%s", local.text);
        return 0;
    }
    if (rc != 0 && err != NULL)
        *err = local;
    return rc;
}

static int finish_device(topo_netbox *nb, topo_facts *facts, const nb_device *d, topo_err *err)
{
    int32_t r = d->rack_id ? topo_strmap_get(nb->rack_index, d->rack_id) : -1;
    int32_t s = d->site_id ? topo_strmap_get(nb->site_index, d->site_id) : -1;
    const nb_rack *rack = r >= 0 ? &nb->racks.items[r] : NULL;
    const char *site = d->site ? d->site : s >= 0 ? nb->site_values.items[s] : NULL;
    int rc;
    if (d->kind == NB_SWITCH)
        return topo_facts_add_switch(facts, d->name, d->name, NULL, err);
    if ((rc = topo_facts_add_host(facts, d->name, NULL, err)) != 0 ||
        (rc = set_level(nb, facts, d->name, TOPO_LEVEL_DATACENTER, site, err)) != 0 ||
        (rc = set_level(nb, facts, d->name, TOPO_LEVEL_RACK,
                        d->rack ? d->rack
                        : rack  ? rack->name
                                : NULL,
                        err)) != 0)
        return rc;
    return set_level(nb, facts, d->name, TOPO_LEVEL_NVLINK,
                     d->nvlink ? d->nvlink
                     : rack    ? rack->nvlink
                               : NULL,
                     err);
}

static nb_kind kind_of(const topo_netbox *nb, const char *dev)
{
    int32_t i = topo_strmap_get(nb->device_index, dev);
    return i >= 0 ? nb->devices.items[i].kind : NB_OTHER;
}

static int is_mgmt(const topo_netbox *nb, const char *dev, const char *port)
{
    char key[1024];
    int n = snprintf(key, sizeof(key), "%s\x1f%s", dev, port);
    return n > 0 && (size_t)n < sizeof(key) && topo_strmap_get(nb->mgmt, key) >= 0;
}

static int finish_conn(topo_netbox *nb, topo_facts *facts, const nb_conn *c, topo_err *err)
{
    nb_kind a = kind_of(nb, c->dev_a), b = kind_of(nb, c->dev_b);
    if (is_mgmt(nb, c->dev_a, c->port_a) || is_mgmt(nb, c->dev_b, c->port_b) || a == NB_OTHER ||
        b == NB_OTHER || (a == NB_HOST && b == NB_HOST)) {
        nb->stats.ignored_links++;
        return 0;
    }
    if (a == NB_SWITCH && b == NB_SWITCH) {
        nb->stats.switch_links++;
        return topo_facts_add_switch_link(facts, c->dev_a, c->dev_b, err);
    }
    nb->stats.host_links++;
    if (a == NB_HOST)
        return topo_facts_add_host_link(facts, c->dev_a, c->port_a, c->dev_b, err);
    return topo_facts_add_host_link(facts, c->dev_b, c->port_b, c->dev_a, err);
}

int topo_netbox_finish(topo_netbox *nb, topo_facts *facts, topo_err *err)
{
    int rc = 0;
    nb->stats.hosts = nb->stats.switches = 0;
    nb->stats.host_links = nb->stats.switch_links = nb->stats.conflicts = 0;
    nb->stats.ignored_links = nb->ignored_read;
    for (size_t i = 0; rc == 0 && i < nb->devices.n; i++) {
        const nb_device *d = &nb->devices.items[i];
        if (topo_strmap_get(nb->device_index, d->name) == (int32_t)i) {
            if (d->kind == NB_SWITCH)
                nb->stats.switches++;
            else
                nb->stats.hosts++;
        }
        rc = finish_device(nb, facts, d, err);
    }
    for (size_t i = 0; rc == 0 && i < nb->conns.n; i++)
        rc = finish_conn(nb, facts, &nb->conns.items[i], err);
    return rc;
}
