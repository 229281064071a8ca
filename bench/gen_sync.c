/* The generated cluster of gen_sync.h: its records built with jansson and
 * written one at a time (the largest response, UFM's systems, is never
 * whole in memory), and the check of a plan against it. */
#define _POSIX_C_SOURCE 200809L

#include "gen_sync.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "topo/str.h"

#define NB "https://netbox.example.com"
#define STAMP "2025-11-03T09:12:44.123456Z"
#define SWITCH_PORTS 64
/* The fields topo-sync asks NetBox for (fetch_netbox.c's list_fields, the
 * bench's configuration reading no custom field or tag). */
#define DEVICE_FIELDS "name,role,site,rack"
#define RACK_FIELDS "id,name"
#define SITE_FIELDS "id,slug,name"

enum { KIND_LEAF = 1, KIND_SPINE = 2, KIND_CORE = 3, KIND_ADAPTER = 4 };

/* What the writers share: the shape, the derived counts, the first error. */
typedef struct gen {
    const gen_sync_opts *o;
    size_t per_group, nracks, ngroups, nsus;
    size_t nleaves, nspines, ncores;
    FILE *f;
    const char *path;
    size_t records; /* in the current file */
    size_t total;   /* bytes of every file closed */
    char *why;
    size_t why_size;
    int failed;
} gen;

static int fail(gen *g, const char *fmt, ...) TOPO_PRINTF(2, 3);
static int fail(gen *g, const char *fmt, ...)
{
    if (!g->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->why, g->why_size, fmt, ap);
        va_end(ap);
    }
    g->failed = 1;
    return -1;
}

static void guid(char out[17], int kind, size_t index)
{
    snprintf(out, 17, "b8599f03%01x%07zx", (unsigned)kind, index);
}

static size_t leaf_index(const gen *g, size_t group, size_t rail)
{
    return group * g->o->rails + rail;
}

static size_t spine_index(const gen *g, size_t su, size_t rail, size_t k)
{
    return (su * g->o->rails + rail) * g->o->spines + k;
}

static size_t core_index(const gen *g, size_t rail, size_t k)
{
    return rail * g->o->cores + k;
}

static void node_name(char out[16], size_t node)
{
    snprintf(out, 16, "gpu-%05zu", node + 1);
}

static void rack_name(char out[16], size_t rack)
{
    snprintf(out, 16, "R%04zu", rack + 1);
}

/* GB200 NVL72-like: one NVLink domain per rack, "<ClusterUUID>.<CliqueID>". */
static void clique(char out[48], size_t rack)
{
    snprintf(out, 48, "7b968a6d-c8aa-45e1-9e07-%012zx.1", rack + 1);
}

/* Switch names in the style of NVIDIA's own fabrics ("MF0;...:MQM9700/U1"),
 * which are no label values: the plan labels by GUID. */
static void switch_name(char out[64], const gen *g, int kind, size_t index)
{
    size_t rails = g->o->rails;
    if (kind == KIND_LEAF)
        snprintf(out, 64, "MF0;SU%03zu-IBLEAF-%02zu-R%zu:MQM9700/U1",
                 index / rails / g->o->su_groups + 1, index / rails % g->o->su_groups + 1,
                 index % rails + 1);
    else if (kind == KIND_SPINE)
        snprintf(out, 64, "MF0;SU%03zu-IBSPINE-%02zu-R%zu:MQM9700/U1",
                 index / g->o->spines / rails + 1, index % g->o->spines + 1,
                 index / g->o->spines % rails + 1);
    else
        snprintf(out, 64, "MF0;IBCORE-%02zu-R%zu:MQM9700/U1", index % g->o->cores + 1,
                 index / g->o->cores + 1);
}

/* --- files ------------------------------------------------------------- */

static int open_file(gen *g, char **path_out, const char *dir, const char *name, const char *head)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path)
        return fail(g, "out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    *path_out = path;
    g->path = path;
    g->records = 0;
    if (!(g->f = fopen(path, "w")))
        return fail(g, "%s: cannot write", path);
    fputs(head, g->f);
    return 0;
}

/* Appends one record (taken) to the open file's list. */
static int put(gen *g, json_t *rec)
{
    if (!rec)
        return fail(g, "out of memory building a record");
    if (g->records++ > 0)
        fputc(',', g->f);
    int rc = json_dumpf(rec, g->f, JSON_COMPACT);
    json_decref(rec);
    return rc == 0 ? 0 : fail(g, "%s: cannot write", g->path);
}

/* Closes the file, its size added to *bytes and to the total. */
static int close_file(gen *g, const char *tail, size_t *bytes)
{
    fputs(tail, g->f);
    long size = ftell(g->f);
    int bad = ferror(g->f);
    if (fclose(g->f) != 0 || bad || size < 0)
        bad = 1;
    g->f = NULL;
    if (bad)
        return fail(g, "%s: cannot write", g->path);
    *bytes += (size_t)size;
    g->total += (size_t)size;
    return 0;
}

/* What NetBox 4 answers with `fields=` (lib/sync/fetch/fetch_netbox.c): the
 * record's members of that comma-separated list, in the record's order;
 * the whole record with --full. */
static json_t *only(const gen *g, json_t *rec, const char *fields)
{
    const char *key;
    void *tmp;
    json_t *v;
    if (g->o->full || rec == NULL)
        return rec;
    json_object_foreach_safe(rec, tmp, key, v)
    {
        size_t n = strlen(key);
        const char *at = strstr(fields, key);
        while (at && !((at == fields || at[-1] == ',') && (at[n] == ',' || at[n] == '\0')))
            at = strstr(at + 1, key);
        if (at == NULL)
            json_object_del(rec, key);
    }
    return rec;
}

/* --- NetBox -------------------------------------------------------------- */

/* Fields one per line, in the order the real payloads have them (a NULL
 * object is ignored: the record is refused when complete). */
static json_t *set(json_t *o, const char *key, json_t *v)
{
    json_object_set_new(o, key, v);
    return o;
}

static json_t *str(json_t *o, const char *key, const char *v)
{
    return set(o, key, json_string(v));
}

static json_t *num(json_t *o, const char *key, size_t v)
{
    return set(o, key, json_integer((json_int_t)v));
}

static json_t *null(json_t *o, const char *key)
{
    return set(o, key, json_null());
}

/* {"value": v, "label": label}, NetBox's choice fields. */
static json_t *choice(const char *value, const char *label)
{
    return str(str(json_object(), "value", value), "label", label);
}

/* A nested reference ({id, url, display, name, [slug,] description}). */
static json_t *nb_ref(const char *kind, size_t id, const char *name, const char *slug)
{
    json_t *r = json_pack("{s:I, s:o, s:s, s:s}", "id", (json_int_t)id, "url",
                          json_sprintf(NB "/api/dcim/%s/%zu/", kind, id), "display", name, "name",
                          name);
    if (r && slug)
        json_object_set_new(r, "slug", json_string(slug));
    if (r)
        json_object_set_new(r, "description", json_string(""));
    return r;
}

static json_t *nb_device(size_t id, const char *name, const char *role, size_t role_id,
                         const char *model, size_t rack_id, const char *rack, size_t position)
{
    json_t *d = json_object(), *type = json_object(), *tag = json_object(), *cf = json_object();
    num(d, "id", id);
    set(d, "url", json_sprintf(NB "/api/dcim/devices/%zu/", id));
    set(d, "display_url", json_sprintf(NB "/dcim/devices/%zu/", id));
    str(d, "display", name);
    str(d, "name", name);
    num(type, "id", role_id);
    set(type, "url", json_sprintf(NB "/api/dcim/device-types/%zu/", role_id));
    str(type, "display", model);
    str(type, "name", model);
    str(type, "slug", model);
    str(type, "description", "");
    set(type, "manufacturer", nb_ref("manufacturers", 1, "NVIDIA", "nvidia"));
    str(type, "model", model);
    set(d, "device_type", type);
    set(d, "role", nb_ref("device-roles", role_id, role, role));
    null(d, "tenant");
    null(d, "platform");
    str(d, "serial", "");
    null(d, "asset_tag");
    set(d, "site", nb_ref("sites", 1, "DC 1", "dc1"));
    null(d, "location");
    set(d, "rack", rack_id ? nb_ref("racks", rack_id, rack, NULL) : json_null());
    set(d, "position", rack_id ? json_real((double)position) : json_null());
    set(d, "face", rack_id ? choice("front", "Front") : json_null());
    null(d, "latitude");
    null(d, "longitude");
    null(d, "parent_device");
    set(d, "status", choice("active", "Active"));
    null(d, "airflow");
    const char *nulls[] = {"primary_ip",      "primary_ip4", "primary_ip6",
                           "oob_ip",          "cluster",     "virtual_chassis",
                           "vc_position",     "vc_priority"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        null(d, nulls[i]);
    str(d, "description", "");
    null(d, "owner");
    str(d, "comments", "");
    null(d, "config_template");
    null(d, "local_context_data");
    num(tag, "id", 1);
    str(tag, "url", NB "/api/extras/tags/1/");
    str(tag, "display", "compute");
    str(tag, "name", "compute");
    str(tag, "slug", "compute");
    str(tag, "color", "4caf50");
    set(d, "tags", json_pack("[o]", tag));
    null(cf, "nvl_domain");
    null(cf, "asset_owner");
    set(d, "custom_fields", cf);
    str(d, "created", STAMP);
    str(d, "last_updated", STAMP);
    num(d, "console_port_count", 1);
    num(d, "interface_count", 10);
    return d;
}

static json_t *nb_rack(size_t id, const char *name, size_t devices)
{
    json_t *r = json_object(), *cf = json_object();
    num(r, "id", id);
    set(r, "url", json_sprintf(NB "/api/dcim/racks/%zu/", id));
    str(r, "display", name);
    str(r, "name", name);
    null(r, "facility_id");
    set(r, "site", nb_ref("sites", 1, "DC 1", "dc1"));
    null(r, "location");
    null(r, "tenant");
    set(r, "status", choice("active", "Active"));
    null(r, "role");
    null(r, "rack_type");
    set(r, "form_factor", choice("4-post-cabinet", "4-post cabinet"));
    set(r, "width", set(str(json_object(), "label", "19 inches"), "value", json_integer(19)));
    num(r, "u_height", 48);
    num(r, "starting_unit", 1);
    set(r, "desc_units", json_false());
    set(r, "tags", json_array());
    null(cf, "nvl_domain");
    set(r, "custom_fields", cf);
    num(r, "device_count", devices);
    return r;
}


/* One page of devices: hosts first (ids 1..nodes), then leaves, spines,
 * cores. */
static json_t *device_at(const gen *g, size_t d)
{
    char name[64], rack[16];
    if (d < g->o->nodes) {
        char host[16];
        node_name(host, d);
        snprintf(name, sizeof name, "%s.dc1.example.com", host);
        size_t r = d / g->o->rack_nodes;
        rack_name(rack, r);
        return nb_device(d + 1, name, "gpu-server", 1, "GB200 NVL72 tray", r + 1, rack,
                         2 + 2 * (d % g->o->rack_nodes));
    }
    size_t s = d - g->o->nodes;
    int kind = s < g->nleaves ? KIND_LEAF : s < g->nleaves + g->nspines ? KIND_SPINE : KIND_CORE;
    size_t index = kind == KIND_LEAF    ? s
                   : kind == KIND_SPINE ? s - g->nleaves
                                        : s - g->nleaves - g->nspines;
    switch_name(name, g, kind, index);
    const char *role = kind == KIND_LEAF ? "leaf" : kind == KIND_SPINE ? "spine" : "core";
    return nb_device(d + 1, name, role, 2 + (size_t)kind, "MQM9700-NS2F", 0, NULL, 0);
}

static json_t *nb_site(size_t devices, size_t racks)
{
    json_t *o = json_object();
    num(o, "id", 1);
    str(o, "url", NB "/api/dcim/sites/1/");
    str(o, "display", "DC 1");
    str(o, "name", "DC 1");
    str(o, "slug", "dc1");
    set(o, "status", choice("active", "Active"));
    null(o, "region");
    null(o, "group");
    null(o, "tenant");
    str(o, "facility", "");
    null(o, "time_zone");
    str(o, "description", "");
    str(o, "physical_address", "");
    null(o, "latitude");
    null(o, "longitude");
    set(o, "asns", json_array());
    set(o, "tags", json_array());
    set(o, "custom_fields", json_object());
    num(o, "device_count", devices);
    num(o, "rack_count", racks);
    return o;
}

static int write_netbox(gen *g, gen_sync_files *out, const char *dir)
{
    size_t ndev = g->o->nodes + g->nleaves + g->nspines + g->ncores;
    size_t pages = (ndev + g->o->page - 1) / g->o->page;
    size_t rpages = (g->nracks + g->o->page - 1) / g->o->page;
    if (pages > GEN_SYNC_MAX_PAGES || rpages > GEN_SYNC_MAX_PAGES)
        return fail(g, "more than %d NetBox pages: raise --page", GEN_SYNC_MAX_PAGES);
    for (size_t p = 0; !g->failed && p < pages; p++) {
        char name[64], head[256];
        snprintf(name, sizeof name, "netbox-devices-%03zu.json", p + 1);
        /* The last page's next is null; the others name the following one. */
        if (p + 1 < pages)
            snprintf(head, sizeof head,
                     "{\"count\":%zu,\"next\":\"" NB "/api/dcim/devices/?limit=%zu%s"
                     "&exclude=config_context&offset=%zu\",\"previous\":null,\"results\":[",
                     ndev, g->o->page, g->o->full ? "" : "&fields=name%2Crole%2Csite%2Crack",
                     (p + 1) * g->o->page);
        else
            snprintf(head, sizeof head, "{\"count\":%zu,\"next\":null,\"previous\":null,"
                                        "\"results\":[",
                     ndev);
        if (open_file(g, &out->devices[p], dir, name, head) != 0)
            break;
        out->ndevices++;
        for (size_t d = p * g->o->page; d < ndev && d < (p + 1) * g->o->page && !g->failed; d++)
            put(g, only(g, device_at(g, d), DEVICE_FIELDS));
        close_file(g, "]}\n", &out->netbox_bytes);
    }
    for (size_t p = 0; !g->failed && p < rpages; p++) {
        char name[64], head[128];
        snprintf(name, sizeof name, "netbox-racks-%03zu.json", p + 1);
        snprintf(head, sizeof head, "{\"count\":%zu,\"next\":null,\"previous\":null,\"results\":[",
                 g->nracks);
        if (open_file(g, &out->racks[p], dir, name, head) != 0)
            break;
        out->nracks++;
        for (size_t r = p * g->o->page; r < g->nracks && r < (p + 1) * g->o->page && !g->failed;
             r++) {
            char rack[16];
            rack_name(rack, r);
            put(g, only(g, nb_rack(r + 1, rack, g->o->rack_nodes), RACK_FIELDS));
        }
        close_file(g, "]}\n", &out->netbox_bytes);
    }
    if (!g->failed &&
        open_file(g, &out->sites, dir, "netbox-sites.json",
                  "{\"count\":1,\"next\":null,\"previous\":null,\"results\":[") == 0) {
        put(g, only(g, nb_site(ndev, g->nracks), SITE_FIELDS));
        close_file(g, "]}\n", &out->netbox_bytes);
    }
    return g->failed ? -1 : 0;
}

/* --- UFM ----------------------------------------------------------------- */

static json_t *ufm_system(const char *guid_s, const char *name, int is_switch, size_t nports)
{
    json_t *o = json_object(), *ports = json_array();
    for (size_t p = 1; ports && p <= nports; p++)
        json_array_append_new(ports, json_sprintf("%s_%zu", guid_s, p));
    num(o, "cpus_number", 0);
    str(o, "ip", "0.0.0.0");
    num(o, "ram", 0);
    str(o, "fw_version", is_switch ? "31.2012.1068" : "28.39.1002");
    set(o, "mirroring_template", json_false());
    num(o, "cpu_speed", 0);
    set(o, "is_manual_ip", json_false());
    str(o, "technology", is_switch ? "NDR" : "Computer");
    str(o, "psid", is_switch ? "MT_0000000749" : "MT_0000000834");
    str(o, "guid", guid_s);
    str(o, "severity", "Info");
    str(o, "script", "N/A");
    set(o, "capabilities", is_switch ? json_array() : json_pack("[s]", "fw_inband_upgrade"));
    str(o, "state", "active");
    str(o, "role", is_switch ? "tor" : "endpoint");
    str(o, "type", is_switch ? "switch" : "host");
    str(o, "sm_mode", "noSM");
    str(o, "vendor", "Mellanox");
    str(o, "description", is_switch ? "MQM9700" : "server");
    set(o, "has_ufm_agent", json_false());
    str(o, "server_operation_mode", is_switch ? "Switch" : "Not_UFM_Server");
    set(o, "groups", json_array());
    num(o, "total_alarms", 0);
    str(o, "temperature", is_switch ? "41" : "N/A");
    str(o, "system_name", name);
    str(o, "sw_version", is_switch ? "3.12.1002" : "N/A");
    str(o, "system_guid", guid_s);
    str(o, "name", guid_s);
    str(o, "url", "");
    str(o, "cpu_type", "any");
    set(o, "is_managed", json_true());
    str(o, "model", is_switch ? "MQM9700" : "Computer");
    set(o, "modules", json_array());
    set(o, "ports", ports);
    return o;
}

static int write_ufm_systems(gen *g, gen_sync_files *out, const char *dir)
{
    if (open_file(g, &out->ufm_systems, dir, "ufm-systems.json", "[") != 0)
        return -1;
    size_t counts[] = {g->nleaves, g->nspines, g->ncores};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < counts[k] && !g->failed; i++) {
            char id[17], name[64];
            guid(id, KIND_LEAF + k, i);
            switch_name(name, g, KIND_LEAF + k, i);
            put(g, ufm_system(id, name, 1, SWITCH_PORTS));
            out->switches++;
        }
    }
    /* `?type=switch` leaves the adapters out (the links name their hosts). */
    out->adapters = g->o->nodes * g->o->rails;
    for (size_t n = 0; g->o->full && n < g->o->nodes && !g->failed; n++) {
        for (size_t r = 0; r < g->o->rails && !g->failed; r++) {
            char id[17], host[16], name[48];
            guid(id, KIND_ADAPTER, n * g->o->rails + r);
            node_name(host, n);
            snprintf(name, sizeof name, "%s HCA-%zu", host, r + 1);
            put(g, ufm_system(id, name, 0, 1));
        }
    }
    return close_file(g, "]\n", &out->ufm_systems_bytes);
}

/* One end of a link: <prefix>guid, _port, _port_dname, _port_name,
 * _port_node_description. */
static json_t *link_end(json_t *o, const char *prefix, const char *guid_s, size_t port,
                        const char *desc)
{
    char key[64];
    snprintf(key, sizeof key, "%sguid", prefix);
    str(o, key, guid_s);
    snprintf(key, sizeof key, "%sport", prefix);
    set(o, key, json_sprintf("%zu", port));
    snprintf(key, sizeof key, "%sport_dname", prefix);
    set(o, key, json_sprintf("%zu", port));
    snprintf(key, sizeof key, "%sport_name", prefix);
    set(o, key, json_sprintf("%s_%zu", guid_s, port));
    snprintf(key, sizeof key, "%sport_node_description", prefix);
    return str(o, key, desc);
}

static json_t *ufm_link(const char *a, size_t ap, const char *a_desc, const char *b, size_t bp,
                        const char *b_desc)
{
    json_t *o = json_object();
    link_end(o, "source_", a, ap, a_desc);
    link_end(o, "destination_", b, bp, b_desc);
    str(o, "width", "IB_4x");
    str(o, "severity", "Info");
    set(o, "name", json_sprintf("%s_%zu:%s_%zu", a, ap, b, bp));
    return set(o, "capabilities", json_array());
}

/* uplinks cables from switch (kind, index) to each of n upper switches
 * (kind up, indices first + k * step), on ports after `down`. */
static void switch_links(gen *g, int kind, size_t index, size_t down, int up, size_t first,
                         size_t n, size_t up_port, gen_sync_files *out)
{
    char a[17], a_name[64];
    guid(a, kind, index);
    switch_name(a_name, g, kind, index);
    for (size_t k = 0; k < n && !g->failed; k++) {
        char b[17], b_name[64];
        guid(b, up, first + k);
        switch_name(b_name, g, up, first + k);
        for (size_t c = 0; c < g->o->uplinks && !g->failed; c++) {
            put(g, ufm_link(a, down + k * g->o->uplinks + c + 1, a_name, b, up_port + c + 1,
                            b_name));
            out->links++;
        }
    }
}

static int write_ufm_links(gen *g, gen_sync_files *out, const char *dir)
{
    const gen_sync_opts *o = g->o;
    if (open_file(g, &out->ufm_links, dir, "ufm-links.json", "[") != 0)
        return -1;
    for (size_t n = 0; n < o->nodes && !g->failed; n++) {
        char host[16];
        node_name(host, n);
        size_t group = n / g->per_group;
        for (size_t r = 0; r < o->rails && !g->failed; r++) {
            char a[17], desc[48], leaf[17], leaf_name[64];
            guid(a, KIND_ADAPTER, n * o->rails + r);
            snprintf(desc, sizeof desc, "%s HCA-%zu", host, r + 1);
            guid(leaf, KIND_LEAF, leaf_index(g, group, r));
            switch_name(leaf_name, g, KIND_LEAF, leaf_index(g, group, r));
            put(g, ufm_link(a, 1, desc, leaf, n % g->per_group + 1, leaf_name));
            out->links++;
        }
    }
    /* Leaves to their SU's spines of their rail; spines to their rail's cores. */
    for (size_t grp = 0; grp < g->ngroups && !g->failed; grp++)
        for (size_t r = 0; r < o->rails; r++)
            switch_links(g, KIND_LEAF, leaf_index(g, grp, r), g->per_group, KIND_SPINE,
                         spine_index(g, grp / o->su_groups, r, 0), o->spines,
                         (grp % o->su_groups) * o->uplinks, out);
    for (size_t su = 0; su < g->nsus && !g->failed; su++)
        for (size_t r = 0; r < o->rails; r++)
            for (size_t k = 0; k < o->spines; k++)
                switch_links(g, KIND_SPINE, spine_index(g, su, r, k), o->su_groups * o->uplinks,
                             KIND_CORE, core_index(g, r, 0), o->cores, su * o->uplinks, out);
    return close_file(g, "]\n", &out->ufm_links_bytes);
}

/* --- Node objects ---------------------------------------------------------- */

/* GPU Feature Discovery's labels (and the node's others), as an HGX/GB200
 * node carries them; the clique last. */
static json_t *node_labels(const char *name, const char *cq)
{
    static const char *const fixed[][2] = {
        {"beta.kubernetes.io/arch", "arm64"},
        {"beta.kubernetes.io/os", "linux"},
        {"feature.node.kubernetes.io/cpu-model.vendor_id", "ARM"},
        {"feature.node.kubernetes.io/kernel-version.full", "6.8.0-1021-nvidia-64k"},
        {"feature.node.kubernetes.io/pci-10de.present", "true"},
        {"kubernetes.io/arch", "arm64"},
        {"kubernetes.io/os", "linux"},
        {"node.kubernetes.io/instance-type", "gb200-nvl72-tray"},
        {"nvidia.com/cuda.driver.major", "570"},
        {"nvidia.com/cuda.driver.minor", "124"},
        {"nvidia.com/cuda.driver.rev", "06"},
        {"nvidia.com/cuda.runtime.major", "12"},
        {"nvidia.com/cuda.runtime.minor", "8"},
        {"nvidia.com/gfd.timestamp", "1754300000"},
        {"nvidia.com/gpu.compute.major", "10"},
        {"nvidia.com/gpu.compute.minor", "0"},
        {"nvidia.com/gpu.count", "4"},
        {"nvidia.com/gpu.family", "blackwell"},
        {"nvidia.com/gpu.machine", "GB200-NVL72"},
        {"nvidia.com/gpu.memory", "189471"},
        {"nvidia.com/gpu.mode", "compute"},
        {"nvidia.com/gpu.present", "true"},
        {"nvidia.com/gpu.product", "NVIDIA-GB200"},
        {"nvidia.com/gpu.replicas", "1"},
        {"nvidia.com/mig.capable", "false"},
        {"nvidia.com/mig.strategy", "single"},
        {"nvidia.com/mps.capable", "false"},
    };
    json_t *l = json_object();
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        str(l, fixed[i][0], fixed[i][1]);
    str(l, "kubernetes.io/hostname", name);
    return str(l, "nvidia.com/gpu.clique", cq);
}

static json_t *condition(const char *type, const char *status, const char *reason,
                         const char *message)
{
    json_t *c = str(str(json_object(), "type", type), "status", status);
    str(str(c, "lastHeartbeatTime", STAMP), "lastTransitionTime", STAMP);
    return str(str(c, "reason", reason), "message", message);
}

static json_t *resources(const char *cpu, const char *memory, const char *storage)
{
    json_t *r = str(str(json_object(), "cpu", cpu), "ephemeral-storage", storage);
    str(str(r, "hugepages-2Mi", "0"), "memory", memory);
    return str(str(r, "nvidia.com/gpu", "4"), "pods", "110");
}

static void node_uid(char out[40], size_t n)
{
    snprintf(out, 40, "3f1c2a9e-5b7d-4e0a-9c61-%012zx", n + 1);
}

/* A Node's metadata: name, uid, labels (GFD's), annotations. */
static json_t *node_metadata(size_t n, const gen *g)
{
    char name[16], cq[48], uid[40];
    node_name(name, n);
    clique(cq, n / g->o->rack_nodes);
    node_uid(uid, n);
    json_t *meta = json_object(), *ann = json_object();
    str(meta, "name", name);
    str(meta, "uid", uid);
    str(meta, "resourceVersion", "48213377");
    str(meta, "creationTimestamp", "2025-10-01T08:00:00Z");
    set(meta, "labels", node_labels(name, cq));
    str(ann, "csi.volume.kubernetes.io/nodeid", "{\"csi.tigera.io\":\"gpu\"}");
    str(ann, "nfd.node.kubernetes.io/feature-labels", "cpu-model.vendor_id,kernel-version.full");
    str(ann, "node.alpha.kubernetes.io/ttl", "0");
    str(ann, "volumes.kubernetes.io/controller-managed-attach-detach", "true");
    return set(meta, "annotations", ann);
}

/* A v1 Node as `kubectl get nodes -o json` lists it, without status.images
 * (which topo never reads and the API server's list carries): --full. */
static json_t *node_object(size_t n, const gen *g)
{
    char name[16], uid[40];
    node_name(name, n);
    node_uid(uid, n);
    json_t *meta = node_metadata(n, g), *spec = json_object();
    json_t *status = json_object(), *info = json_object();
    set(spec, "podCIDR", json_sprintf("10.%zu.%zu.0/24", 64 + n / 256 % 64, n % 256));
    set(spec, "podCIDRs", json_pack("[o]", json_sprintf("10.%zu.%zu.0/24", 64 + n / 256 % 64,
                                                        n % 256)));
    set(status, "capacity", resources("144", "960Gi", "3750Gi"));
    set(status, "allocatable", resources("142", "900Gi", "3500Gi"));
    set(status, "conditions",
        json_pack("[o, o, o, o]",
                  condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                            "kubelet has sufficient memory available"),
                  condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                            "kubelet has no disk pressure"),
                  condition("PIDPressure", "False", "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available"),
                  condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")));
    set(status, "addresses",
        json_pack("[{s:s, s:o}, {s:s, s:s}]", "type", "InternalIP", "address",
                  json_sprintf("10.%zu.%zu.%zu", n / 65536 % 256, n / 256 % 256, n % 256),
                  "type", "Hostname", "address", name));
    set(status, "daemonEndpoints", json_pack("{s:{s:i}}", "kubeletEndpoint", "Port", 10250));
    str(info, "machineID", "d1f5a0c7e9b34f2a8c6e0b1d2f3a4b5c");
    str(info, "systemUUID", uid);
    str(info, "bootID", uid);
    str(info, "kernelVersion", "6.8.0-1021-nvidia-64k");
    str(info, "osImage", "Ubuntu 24.04.2 LTS");
    str(info, "containerRuntimeVersion", "containerd://1.7.27");
    str(info, "kubeletVersion", "v1.32.4");
    str(info, "kubeProxyVersion", "v1.32.4");
    str(info, "operatingSystem", "linux");
    str(info, "architecture", "arm64");
    set(status, "nodeInfo", info);
    json_t *node = str(str(json_object(), "apiVersion", "v1"), "kind", "Node");
    return set(set(set(node, "metadata", meta), "spec", spec), "status", status);
}

/* The Node list as the API server answers topo-sync's metadata-only list
 * (Accept: ...;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, what
 * `kubectl get --raw /api/v1/nodes -H 'Accept: ...'` saves): each item a
 * PartialObjectMetadata, the node's metadata only; with --full, `kubectl get
 * nodes -o json` (a List of whole Nodes). */
static int write_nodes(gen *g, gen_sync_files *out, const char *dir)
{
    int full = g->o->full;
    const char *head = full ? "{\"apiVersion\":\"v1\",\"items\":["
                            : "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":"
                              "\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":"
                              "\"48213377\"},\"items\":[";
    if (open_file(g, &out->nodes, dir, "nodes.json", head) != 0)
        return -1;
    for (size_t n = 0; n < g->o->nodes && !g->failed; n++)
        put(g, full ? node_object(n, g)
                    : json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata", "apiVersion",
                                "meta.k8s.io/v1", "metadata", node_metadata(n, g)));
    return close_file(
        g, full ? "],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n" : "]}\n",
        &out->nodes_bytes);
}

static void derive(gen *g, const gen_sync_opts *o)
{
    g->o = o;
    g->per_group = o->rack_nodes * o->leaf_racks;
    g->nracks = (o->nodes + o->rack_nodes - 1) / o->rack_nodes;
    g->ngroups = (o->nodes + g->per_group - 1) / g->per_group;
    g->nsus = (g->ngroups + o->su_groups - 1) / o->su_groups;
    g->nleaves = g->ngroups * o->rails;
    g->nspines = g->nsus * o->rails * o->spines;
    g->ncores = o->rails * o->cores;
}

int gen_sync_write(gen_sync_files *out, const gen_sync_opts *o, const char *dir, char *why,
                   size_t why_size)
{
    gen g = {.why = why, .why_size = why_size};
    memset(out, 0, sizeof *out);
    if (o->nodes == 0 || o->rails == 0 || o->rack_nodes == 0 || o->leaf_racks == 0 ||
        o->su_groups == 0 || o->spines == 0 || o->cores == 0 || o->uplinks == 0 ||
        o->page == 0 || o->nodes > 999999 || o->rails > 16)
        return fail(&g, "every count must be at least 1 (nodes at most 999999, rails 16)");
    derive(&g, o);
    if (g.per_group > SWITCH_PORTS || o->spines * o->uplinks > SWITCH_PORTS)
        return fail(&g, "a leaf has %d ports", SWITCH_PORTS);
    int rc = write_netbox(&g, out, dir);
    if (rc == 0)
        rc = write_ufm_systems(&g, out, dir);
    if (rc == 0)
        rc = write_ufm_links(&g, out, dir);
    if (rc == 0)
        rc = write_nodes(&g, out, dir);
    if (g.f)
        fclose(g.f);
    out->bytes = g.total;
    return rc == 0 && !g.failed ? 0 : -1;
}

static void drop(char **path)
{
    if (*path) {
        unlink(*path);
        free(*path);
        *path = NULL;
    }
}

void gen_sync_remove(gen_sync_files *files)
{
    for (size_t i = 0; i < files->ndevices; i++)
        drop(&files->devices[i]);
    for (size_t i = 0; i < files->nracks; i++)
        drop(&files->racks[i]);
    drop(&files->sites);
    drop(&files->ufm_systems);
    drop(&files->ufm_links);
    drop(&files->nodes);
}

/* --- the check ------------------------------------------------------------- */

static int expect(gen *g, const topo_plan *plan, size_t i, topo_level level, const char *want,
                  const char *source)
{
    const char *got = topo_plan_node_value(plan, i, level);
    const char *src = topo_plan_node_source(plan, i, level);
    if (!got || strcmp(got, want) != 0)
        return fail(g, "node %s: %s is \"%s\", want \"%s\"", topo_plan_node_name(plan, i),
                    topo_level_name(level), got ? got : "(none)", want);
    if (source && (!src || strcmp(src, source) != 0))
        return fail(g, "node %s: %s from %s, want from %s", topo_plan_node_name(plan, i),
                    topo_level_name(level), src ? src : "(none)", source);
    return 0;
}

int gen_sync_check(const topo_plan *plan, const gen_sync_opts *o, char *why, size_t why_size)
{
    gen g = {.why = why, .why_size = why_size};
    derive(&g, o);
    if (topo_plan_node_count(plan) != o->nodes)
        return fail(&g, "%zu nodes planned, want %zu", topo_plan_node_count(plan), o->nodes);
    if (topo_plan_incomplete_count(plan) || topo_plan_conflict_count(plan) ||
        topo_plan_unmapped_hosts(plan) || topo_plan_unknown_hosts(plan))
        return fail(&g, "%zu incomplete, %zu conflicts, %zu unmapped, %zu unknown hosts (want 0)",
                    topo_plan_incomplete_count(plan), topo_plan_conflict_count(plan),
                    topo_plan_unmapped_hosts(plan), topo_plan_unknown_hosts(plan));
    topo_level levels[TOPO_LEVEL_COUNT];
    if (topo_plan_levels(plan, levels) != TOPO_LEVEL_COUNT)
        return fail(&g, "the topology lacks levels: want all %d", TOPO_LEVEL_COUNT);
    /* Nodes are sorted by name, and the names sort as their numbers. */
    for (size_t i = 0; i < o->nodes && !g.failed; i++) {
        char name[16], rack[16], rack_value[32], cq[48], leaf[17], spine[17];
        node_name(name, i);
        if (strcmp(topo_plan_node_name(plan, i), name) != 0)
            return fail(&g, "node %zu is %s, want %s", i, topo_plan_node_name(plan, i), name);
        size_t group = i / g.per_group;
        rack_name(rack, i / o->rack_nodes);
        /* A NetBox rack is named within its site: the name and the first 10
         * hex digits of the FNV-1a of its key (docs/sync.md). */
        char key[64], hex[17];
        snprintf(key, sizeof key, "17:datacenter:3:dc1;%s", rack);
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)topo_str_hash(key));
        snprintf(rack_value, sizeof rack_value, "%s-%.10s", rack, hex);
        clique(cq, i / o->rack_nodes);
        guid(leaf, KIND_LEAF, leaf_index(&g, group, 0));
        guid(spine, KIND_SPINE, spine_index(&g, group / o->su_groups, 0, 0));
        expect(&g, plan, i, TOPO_LEVEL_DATACENTER, "dc1", "netbox");
        expect(&g, plan, i, TOPO_LEVEL_SPINE, spine, "ufm");
        expect(&g, plan, i, TOPO_LEVEL_LEAF, leaf, "ufm");
        expect(&g, plan, i, TOPO_LEVEL_RACK, rack_value, "netbox");
        expect(&g, plan, i, TOPO_LEVEL_NVLINK, cq, "gpu");
        expect(&g, plan, i, TOPO_LEVEL_HOSTNAME, name, NULL);
    }
    return g.failed ? -1 : 0;
}
