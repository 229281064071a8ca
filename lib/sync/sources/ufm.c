/* UFM systems and links into facts (include/topo/ufm.h). Every GUID a
 * system is known by is a claim; once the systems are read the claims are
 * resolved into a map from GUID to its one system, whatever order the
 * records came in (resolve), and links are joined through that map.
 * Strings the entries keep live in the parser's pool. */
#include "topo/ufm.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srcjson_internal.h"
#include "topo/array.h"
#include "topo/buf.h"
#include "topo/guid.h"
#include "topo/limits.h"
#include "topo/log.h"
#include "topo/pool.h"
#include "topo/strmap.h"

/* In the order a GUID's claims rank: a switch's GUID is what the fabric
 * routes by, so a switch keeps it against any other record. */
typedef enum { SYS_SWITCH, SYS_HOST, SYS_OTHER } sys_kind;

/* A GUID claimed by several host records, or one of a host record that
 * claimed a switch's: known, but nobody's (no adapter is learned for it). */
#define UFM_DISPUTED (-2)
/* A link's end whose GUID is no GUID: that link is skipped and counted
 * (one odd record must not stop every later read of the fabric). */
#define UFM_NOT_A_GUID (-3)

/* A duplicate GUID's report names at most this many host records. */
#define UFM_REPORT_NAMES 8

/* An adapter has at most this many ports (ConnectX-7: 1, 2 or 4). */
#define UFM_ADAPTER_PORTS_MAX 4

/* How a record names a GUID, strongest first: a switch whose system GUID
 * or own guid IS the GUID owns it against one that only lists it among
 * its ports. */
typedef enum { BY_SYSTEM_GUID, BY_GUID, BY_PORT } claim_how;

typedef struct ufm_claim {
    const char *guid; /* normalised, pooled */
    int32_t index;    /* into systems */
    claim_how how;
} ufm_claim;

typedef struct ufm_system {
    sys_kind kind;
    const char *id;   /* switches: the facts switch id */
    const char *host; /* hosts: the host name, NULL for a default description */
    const char *port; /* hosts: the adapter ("HCA-1"), NULL when named plainly */
    const char *label; /* in messages: its system_name, else its system_guid */
    unsigned char distrusted; /* a host record that claimed another's GUID */
    /* An adapter learned from the links (learn_adapter): the distinct
     * port numbers its links end at, so far. */
    unsigned char learned, nports;
    uint32_t ports[UFM_ADAPTER_PORTS_MAX];
} ufm_system;

struct topo_ufm {
    topo_facts *facts;
    topo_pool *pool;
    TOPO_ARRAY(ufm_system) systems;
    topo_strmap *by_guid; /* normalised GUID -> index in systems, UFM_DISPUTED */
    topo_strmap *by_system; /* "S<guid>", "H<guid>\x1f<name>" -> the record */
    /* Every GUID each system is known by (system_guid, guid, ports[]),
     * resolved into by_guid before the first link (resolve). */
    TOPO_ARRAY(struct ufm_claim) claims;
    int unresolved;        /* systems were added since the last resolve */
    topo_strmap *reported; /* the duplicate lines reported */
    topo_ufm_stats stats;
};

int topo_ufm_create(topo_ufm **out, topo_facts *facts, topo_err *err)
{
    topo_ufm *u = calloc(1, sizeof(*u));
    *out = NULL;
    if (u == NULL)
        return topo_err_nomem(err, "ufm");
    u->facts = facts;
    u->pool = topo_pool_create();
    u->by_guid = topo_strmap_create(1024);
    u->by_system = topo_strmap_create(1024);
    u->reported = topo_strmap_create(16);
    if (u->pool == NULL || u->by_guid == NULL || u->by_system == NULL || u->reported == NULL) {
        topo_ufm_free(u);
        return topo_err_nomem(err, "ufm");
    }
    *out = u;
    return 0;
}

void topo_ufm_free(topo_ufm *ufm)
{
    if (ufm == NULL)
        return;
    free(ufm->systems.items);
    free(ufm->claims.items);
    topo_strmap_free(ufm->by_guid);
    topo_strmap_free(ufm->by_system);
    topo_strmap_free(ufm->reported);
    topo_pool_free(ufm->pool);
    free(ufm);
}

topo_ufm_stats topo_ufm_get_stats(const topo_ufm *ufm)
{
    return ufm->stats;
}

const char *topo_ufm_stats_text(char *out, size_t size, const topo_ufm_stats *st, size_t hosts)
{
    snprintf(out, size,
             "%zu switches, %zu adapters (%zu unnamed, %zu from links), %zu hosts, %zu switch "
             "links, %zu host links; skipped %zu other systems, %zu ignored, %zu unmatched "
             "and %zu links with an end whose GUID is not one; %zu duplicate GUIDs (%zu links to them)",
             st->switches, st->adapters, st->unnamed_adapters, st->linked_adapters, hosts,
             st->switch_links, st->host_links, st->other_systems, st->ignored_links,
             st->unmatched_links, st->bad_guid_links, st->duplicate_guids, st->disputed_links);
    return out;
}

/* A claim of system index on a GUID (key: normalised), unless the same
 * system made it already (its system_guid is often its guid; a system's
 * claims come strongest first, so the first one stays). */
static int claim_guid(topo_ufm *u, const char *key, int32_t index, claim_how how,
                      topo_err *err)
{
    for (size_t i = u->claims.n; i > 0 && u->claims.items[i - 1].index == index; i--)
        if (strcmp(u->claims.items[i - 1].guid, key) == 0)
            return 0;
    ufm_claim c = {topo_pool_strdup(u->pool, key), index, how};
    if (c.guid == NULL || TOPO_ARRAY_PUSH(&u->claims, c) != 0)
        return topo_err_nomem(err, "ufm: GUID claims");
    return 0;
}

/* An adapter's node description as the firmware sets it until the host
 * names it: "MT4129 ConnectX7   Mellanox Technologies" and the like. */
static int default_description(const char *name)
{
    return name[0] == '\0' || strstr(name, "Mellanox Technologies") != NULL ||
           strstr(name, "ConnectX") != NULL ||
           (name[0] == 'M' && name[1] == 'T' && isdigit((unsigned char)name[2]));
}

/* "gpu-0591 HCA-1" -> host "gpu-0591", port "HCA-1" (copies in the pool);
 * surrounding blanks are dropped; a name without a blank is the host. */
static int split_host(topo_ufm *u, ufm_system *s, const char *name, topo_err *err)
{
    while (*name == ' ' || *name == '\t')
        name++;
    size_t n = strlen(name);
    while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t'))
        n--;
    size_t h = strcspn(name, " \t");
    if (h > n)
        h = n;
    s->host = topo_pool_strndup(u->pool, name, h);
    if (s->host == NULL)
        return topo_err_nomem(err, "ufm: host");
    size_t p = h;
    while (p < n && (name[p] == ' ' || name[p] == '\t'))
        p++;
    if (p < n && (s->port = topo_pool_strndup(u->pool, name + p, n - p)) == NULL)
        return topo_err_nomem(err, "ufm: port");
    return 0;
}

/* The GUIDs of a system's ports[] ("<guid>_<n>"), all claimed by index. */
static int map_ports(topo_ufm *u, const json_t *rec, const char *path, int32_t index, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX], ip[TOPO_DECODE_PATH_MAX];
    const json_t *ports = NULL;
    int rc = topo_decode_member(&ports, rec, "ports", path, JSON_ARRAY, 0, err);
    topo_decode_path_key(p, sizeof(p), path, "ports");
    for (size_t i = 0; rc == 0 && ports != NULL && i < json_array_size(ports); i++) {
        const json_t *e = json_array_get(ports, i);
        if (!json_is_string(e))
            return topo_err_set(err, TOPO_EINVALID, "%s: expected a string, got %s",
                                topo_decode_path_index(ip, sizeof(ip), p, i),
                                topo_decode_type_name(e));
        const char *name = json_string_value(e), *us = strrchr(name, '_');
        char key[TOPO_GUID_TEXT_SIZE];
        if (us == NULL)
            continue;
        rc = topo_guid_normalise(key, name, (size_t)(us - name),
                                 topo_decode_path_index(ip, sizeof(ip), p, i), err);
        if (rc == 0)
            rc = claim_guid(u, key, index, BY_PORT, err);
    }
    return rc;
}

/* Reads one system record into an entry and the facts. */
static int add_system(topo_ufm *u, const json_t *rec, const char *path, topo_err *err)
{
    const char *sys_guid = NULL, *guid = NULL, *type = NULL, *name = NULL;
    ufm_system s = {.kind = SYS_OTHER};
    char key[TOPO_GUID_TEXT_SIZE], own[TOPO_GUID_TEXT_SIZE], field[TOPO_DECODE_PATH_MAX];
    int rc;
    if (!json_is_object(rec))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(rec));
    if ((rc = topo_decode_string(&sys_guid, rec, "system_guid", path, 1, NULL, err)) != 0 ||
        (rc = topo_decode_string(&guid, rec, "guid", path, 0, NULL, err)) != 0 ||
        (rc = topo_decode_string(&type, rec, "type", path, 1, NULL, err)) != 0 ||
        (rc = topo_decode_string(&name, rec, "system_name", path, 0, NULL, err)) != 0)
        return rc;
    if ((rc = topo_guid_normalise(key, sys_guid, strlen(sys_guid),
                                  topo_decode_path_key(field, sizeof(field), path, "system_guid"),
                                  err)) != 0 ||
        (guid != NULL &&
         (rc = topo_guid_normalise(own, guid, strlen(guid),
                                   topo_decode_path_key(field, sizeof(field), path, "guid"),
                                   err)) != 0))
        return rc;
    int is_switch = strcmp(type, "switch") == 0, is_host = strcmp(type, "host") == 0;
    s.label = topo_pool_strdup(u->pool, name != NULL && *name != '\0' ? name : key);
    if (s.label == NULL)
        return topo_err_nomem(err, "ufm: system");
    /* A submodule's system_guid is its parent switch's: only its own GUIDs
     * are its. A record seen before (a page read twice: a switch by its
     * GUID, a host by its GUID and name) is skipped; any other record with
     * that GUID is a second claim on it (resolve). */
    const char *seen = NULL;
    if (is_switch || is_host) {
        seen = is_switch ? topo_pool_printf(u->pool, "S%s", key)
                         : topo_pool_printf(u->pool, "H%s\x1f%s", key, s.label);
        if (seen == NULL)
            return topo_err_nomem(err, "ufm: system");
        if (topo_strmap_get(u->by_system, seen) >= 0)
            return 0;
    }
    if (is_switch) {
        s.kind = SYS_SWITCH;
        if ((s.id = topo_pool_strdup(u->pool, key)) == NULL)
            return topo_err_nomem(err, "ufm: switch");
        rc = topo_facts_add_switch(u->facts, s.id, name, NULL, err);
        u->stats.switches++;
    } else if (is_host) {
        s.kind = SYS_HOST;
        u->stats.adapters++;
        if (name == NULL || default_description(name))
            u->stats.unnamed_adapters++;
        else if ((rc = split_host(u, &s, name, err)) == 0)
            rc = topo_facts_add_host(u->facts, s.host, NULL, err);
    } else {
        u->stats.other_systems++;
    }
    int32_t index = (int32_t)u->systems.n;
    if (rc != 0 || (rc = TOPO_ARRAY_PUSH(&u->systems, s)) != 0)
        return rc == TOPO_ENOMEM ? topo_err_nomem(err, "ufm: systems") : rc;
    u->unresolved = 1;
    if (s.kind != SYS_OTHER) {
        if (topo_strmap_put(u->by_system, seen, index) != 0)
            return topo_err_nomem(err, "ufm: systems");
        if ((rc = claim_guid(u, key, index, BY_SYSTEM_GUID, err)) != 0)
            return rc;
    }
    if (guid != NULL && (rc = claim_guid(u, own, index, BY_GUID, err)) != 0)
        return rc;
    return map_ports(u, rec, path, index, err);
}

/* One record of a systems response: "[i]" in messages. */
static int system_at(topo_ufm *u, const json_t *rec, size_t i, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    if (u->systems.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u UFM systems",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    return add_system(u, rec, topo_decode_path_index(p, sizeof(p), "", i), err);
}

static int system_each(const json_t *rec, size_t i, void *payload, topo_err *err)
{
    return system_at(payload, rec, i, err);
}

/* The two UFM responses are each one list of records (systems, links),
 * read the same way; only the record's handler and the words differ. */
typedef struct ufm_list {
    const char *what;   /* the response, in messages: "UFM systems response" */
    const char *items;  /* its records, in "expected a list of UFM ...": "systems" */
    topo_codec_each_fn element;
} ufm_list;

static const ufm_list ufm_systems = {"UFM systems response", "systems", system_each};

static int list_add_json(topo_ufm *ufm, const ufm_list *l, const json_t *list,
                         const char *source, topo_err *err)
{
    int rc = 0;
    if (!json_is_array(list))
        rc = topo_err_set(err, TOPO_EINVALID, "expected a list of UFM %s, got %s", l->items,
                          list ? topo_decode_type_name(list) : "nothing");
    for (size_t i = 0; rc == 0 && i < json_array_size(list); i++)
        rc = l->element(json_array_get(list, i), i, ufm, err);
    return rc != 0 ? srcjson_wrap(err, rc, source) : 0;
}

/* A list's walk: its records counted as they are read. */
typedef struct ufm_walk {
    topo_ufm *ufm;
    const ufm_list *list;
    size_t records;
} ufm_walk;

static int record_each(const json_t *rec, size_t i, void *payload, topo_err *err)
{
    ufm_walk *w = payload;
    w->records = i + 1;
    return w->list->element(rec, i, w->ufm, err);
}

/* A response is one array of records, tens of megabytes for a large
 * fabric: read a record at a time (srcjson_each), not as one tree; a
 * document of another shape is parsed whole for the usual message. At
 * most max bytes; *records (may be NULL) the records read. */
static int list_add(topo_ufm *ufm, const ufm_list *l, const char *text, size_t len, size_t max,
                    size_t *records, const char *source, topo_err *err)
{
    int found = 0;
    ufm_walk w = {ufm, l, 0};
    topo_codec_each how = {.element = record_each, .payload = &w};
    int rc = srcjson_each(&found, text, len, max, l->what, source, &how, err);
    if (records)
        *records = w.records;
    if (rc != 0)
        return srcjson_wrap(err, rc, source);
    if (found)
        return 0;
    json_t *doc = NULL;
    rc = srcjson_parse(&doc, text, len, max, l->what, source, err);
    if (rc == 0)
        rc = list_add_json(ufm, l, doc, source, err);
    if (rc == 0 && records)
        *records = json_array_size(doc);
    json_decref(doc);
    return rc;
}

int topo_ufm_add_systems_json(topo_ufm *ufm, const json_t *systems, const char *source,
                              topo_err *err)
{
    return list_add_json(ufm, &ufm_systems, systems, source, err);
}

int topo_ufm_add_systems(topo_ufm *ufm, const char *text, size_t len, const char *source,
                         topo_err *err)
{
    return list_add(ufm, &ufm_systems, text, len, TOPO_MAX_UFM_RESPONSE, NULL, source, err);
}

int topo_ufm_read_systems(topo_ufm *ufm, const char *text, size_t len, size_t max,
                          size_t *records, const char *source, topo_err *err)
{
    if (records)
        *records = 0;
    return list_add(ufm, &ufm_systems, text, len, max, records, source, err);
}

/* The adapter of a plainly named host's end of a link: its node
 * description without the host name ("gpu-0591 HCA-1" -> "HCA-1"), else
 * the port's dname; NULL when neither says. */
static const char *agent_port(const ufm_system *h, const char *node_desc, const char *dname)
{
    size_t n = strlen(h->host);
    if (node_desc != NULL && strncmp(node_desc, h->host, n) == 0 && node_desc[n] == ' ') {
        node_desc += n;
        while (*node_desc == ' ')
            node_desc++;
        if (*node_desc != '\0')
            return node_desc;
    }
    return dname != NULL && *dname != '\0' ? dname : NULL;
}

/* One end of a link: its GUID, its system's index (-1 when unknown), its
 * node description, port dname and port name ("<guid>_<n>"). */
typedef struct link_end {
    const char *guid, *desc, *dname, *port_name;
    char key[TOPO_GUID_TEXT_SIZE]; /* guid, normalised */
    int32_t index; /* -1 unknown, UFM_DISPUTED, UFM_NOT_A_GUID */
} link_end;

static int read_end(link_end *e, const topo_ufm *u, const json_t *rec, const char *prefix,
                    const char *path, topo_err *err)
{
    char key[64];
    int rc;
    e->desc = e->dname = e->port_name = NULL; /* optional: absent stays NULL */
    char field[TOPO_DECODE_PATH_MAX];
    snprintf(key, sizeof(key), "%sguid", prefix);
    if ((rc = topo_decode_string(&e->guid, rec, key, path, 1, NULL, err)) != 0)
        return rc;
    topo_err not_guid = {0};
    int bad = topo_guid_normalise(e->key, e->guid, strlen(e->guid),
                                  topo_decode_path_key(field, sizeof(field), path, key),
                                  &not_guid) != 0;
    snprintf(key, sizeof(key), "%sport_node_description", prefix);
    if ((rc = topo_decode_string(&e->desc, rec, key, path, 0, NULL, err)) != 0)
        return rc;
    snprintf(key, sizeof(key), "%sport_dname", prefix);
    if ((rc = topo_decode_string(&e->dname, rec, key, path, 0, NULL, err)) != 0)
        return rc;
    snprintf(key, sizeof(key), "%sport_name", prefix);
    if ((rc = topo_decode_string(&e->port_name, rec, key, path, 0, NULL, err)) != 0)
        return rc;
    e->index = bad ? UFM_NOT_A_GUID : topo_strmap_get(u->by_guid, e->key);
    return 0;
}

/* A link's end no system is known by, cabled to a switch: the adapter of
 * the host its node description names by the systems' rule ("gpu-0591
 * HCA-1"), or an unnamed adapter for a default description, as its
 * systems record would have made it. The systems were then asked for
 * switches only (`?type=switch`): hosts are most of that response, and the
 * links carry their names. A SHArP aggregation node (a switch's submodule,
 * "Mellanox Technologies Aggregation Node") or a blank description leaves
 * the end unknown. */
static int learn_adapter(link_end *e, topo_ufm *u, topo_err *err)
{
    ufm_system s = {.kind = SYS_HOST, .learned = 1, .label = e->desc};
    const char *d = e->desc;
    int rc = 0;
    if (d == NULL)
        return 0;
    d += strspn(d, " \t");
    if (*d == '\0' || strstr(d, "Aggregation Node") != NULL)
        return 0;
    if (u->systems.n >= TOPO_MAX_FACTS_ENTRIES)
        return topo_err_set(err, TOPO_ELIMIT, "more than %u UFM systems and adapters",
                            (unsigned)TOPO_MAX_FACTS_ENTRIES);
    if (default_description(d))
        u->stats.unnamed_adapters++;
    else if ((rc = split_host(u, &s, d, err)) == 0)
        rc = topo_facts_add_host(u->facts, s.host, NULL, err);
    int32_t index = (int32_t)u->systems.n;
    if (rc == 0 && TOPO_ARRAY_PUSH(&u->systems, s) != 0)
        rc = topo_err_nomem(err, "ufm: systems");
    if (rc == 0 && (rc = claim_guid(u, e->key, index, BY_SYSTEM_GUID, err)) == 0 &&
        topo_strmap_put(u->by_guid, u->claims.items[u->claims.n - 1].guid, index) != 0)
        rc = topo_err_nomem(err, "ufm: GUID map");
    if (rc == 0) {
        u->stats.adapters++;
        u->stats.linked_adapters++;
        e->index = index;
    }
    return rc;
}

static int is_switch(const topo_ufm *u, const link_end *e)
{
    return e->index >= 0 && u->systems.items[e->index].kind == SYS_SWITCH;
}

/* The systems are asked for switches only, and a link end no system is
 * known by is taken for an adapter (learn_adapter). A switch missing from
 * the systems (a truncated or stale systems response) would then become a
 * host; its links give it away: they end at more ports of it than an
 * adapter has. Such links and systems disagree: refused, naming the end. */
static int check_learned(topo_ufm *u, const link_end *e, const char *side, const char *path,
                         topo_err *err)
{
    if (e->index < 0 || !e->port_name)
        return 0;
    ufm_system *s = &u->systems.items[e->index];
    const char *us = strrchr(e->port_name, '_');
    char *end = NULL;
    if (!s->learned || !us || us[1] < '0' || us[1] > '9')
        return 0;
    unsigned long n = strtoul(us + 1, &end, 10);
    if (*end != '\0' || n > UINT32_MAX)
        return 0;
    for (unsigned i = 0; i < s->nports; i++)
        if (s->ports[i] == (uint32_t)n)
            return 0;
    if (s->nports < UFM_ADAPTER_PORTS_MAX) {
        s->ports[s->nports++] = (uint32_t)n;
        return 0;
    }
    return topo_err_set(err, TOPO_EINVALID,
                        "%s.%sguid: \"%.80s\" is in no system, and its links end at more than "
                        "%d of its ports (%s here), as only a switch's do: the systems response "
                        "lacks a switch the links name (truncated or stale)",
                        path, side, e->guid, UFM_ADAPTER_PORTS_MAX, e->port_name);
}

static int add_link(topo_ufm *u, const json_t *rec, const char *path, topo_err *err)
{
    link_end ea = {0}, eb = {0};
    int rc;
    if (!json_is_object(rec))
        return topo_err_set(err, TOPO_EINVALID, "%s: expected an object, got %s", path,
                            topo_decode_type_name(rec));
    if ((rc = read_end(&ea, u, rec, "source_", path, err)) != 0 ||
        (rc = read_end(&eb, u, rec, "destination_", path, err)) != 0)
        return rc;
    if (ea.index == -1 && is_switch(u, &eb))
        rc = learn_adapter(&ea, u, err);
    else if (eb.index == -1 && is_switch(u, &ea))
        rc = learn_adapter(&eb, u, err);
    if (rc == 0)
        rc = check_learned(u, &ea, "source_", path, err);
    if (rc == 0)
        rc = check_learned(u, &eb, "destination_", path, err);
    if (rc != 0)
        return rc;
    if (ea.index == UFM_NOT_A_GUID || eb.index == UFM_NOT_A_GUID) {
        u->stats.bad_guid_links++;
        return 0;
    }
    if (ea.index == UFM_DISPUTED || eb.index == UFM_DISPUTED) {
        u->stats.disputed_links++;
        return 0;
    }
    if (ea.index < 0 || eb.index < 0) {
        u->stats.unmatched_links++;
        return 0;
    }
    /* After learn_adapter: systems may have moved. */
    const ufm_system *a = &u->systems.items[ea.index], *b = &u->systems.items[eb.index];
    if (a->kind == SYS_SWITCH && b->kind == SYS_SWITCH) {
        if (a == b) {
            u->stats.ignored_links++;
            return 0;
        }
        u->stats.switch_links++;
        return topo_facts_add_switch_link(u->facts, a->id, b->id, err);
    }
    const ufm_system *sw = a, *host = b;
    const link_end *he = &eb;
    if (a->kind == SYS_HOST && b->kind == SYS_SWITCH) {
        sw = b;
        host = a;
        he = &ea;
    }
    if (sw->kind != SYS_SWITCH || host->kind != SYS_HOST) {
        u->stats.ignored_links++;
        return 0;
    }
    u->stats.host_links++;
    const char *port = host->port;
    if (host->host != NULL && port == NULL)
        port = agent_port(host, he->desc, he->dname);
    return topo_facts_add_host_link(u->facts, host->host, port, sw->id, err);
}

static int link_each(const json_t *rec, size_t i, void *payload, topo_err *err)
{
    char p[TOPO_DECODE_PATH_MAX];
    return add_link(payload, rec, topo_decode_path_index(p, sizeof(p), "", i), err);
}

static const ufm_list ufm_links = {"UFM links response", "links", link_each};

static int cmp_claim(const void *a, const void *b)
{
    const ufm_claim *x = a, *y = b;
    int c = strcmp(x->guid, y->guid);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* A claimant of a GUID, by the label reports name it by. */
typedef struct ufm_named {
    const char *label;
    int32_t index;
} ufm_named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const ufm_named *)a)->label, ((const ufm_named *)b)->label);
}

/* The records of one kind among a GUID's claims (n at c), sorted by label
 * and one per label (records named alike are one name in a report), into
 * out (room for n); their count. */
static size_t claimants(ufm_named *out, const topo_ufm *u, const ufm_claim *c, size_t n,
                        sys_kind kind)
{
    size_t k = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (u->systems.items[c[i].index].kind == kind)
            out[k++] = (ufm_named){u->systems.items[c[i].index].label, c[i].index};
    if (k > 1)
        qsort(out, k, sizeof(*out), cmp_named);
    for (size_t i = 0; i < k; i++)
        if (m == 0 || strcmp(out[i].label, out[m - 1].label) != 0)
            out[m++] = out[i];
    return m;
}

/* A duplicate GUID's line in the facts' conflicts, once. */
static int report(topo_ufm *u, const topo_buf *line, topo_err *err)
{
    const char *key = NULL;
    if (topo_strmap_get(u->reported, line->ptr) >= 0)
        return 0;
    if ((key = topo_pool_strdup(u->pool, line->ptr)) == NULL ||
        topo_strmap_put(u->reported, key, 0) != 0)
        return topo_err_nomem(err, "ufm: report");
    if (++u->stats.duplicate_guids <= TOPO_MAX_LOGGED_DUPLICATES)
        topo_log(TOPO_LOG_WARN, "ufm: %s", line->ptr);
    else if (u->stats.duplicate_guids == TOPO_MAX_LOGGED_DUPLICATES + 1)
        topo_log(TOPO_LOG_WARN, "ufm: more duplicate GUIDs: counted in the source's stats, "
                                "listed with the plan's conflicts");
    return topo_facts_add_conflict(u->facts, line->ptr, err);
}

/* The switch among a GUID's claims (n at c) that owns it, NULL when none:
 * the record whose system GUID it is, else whose guid it is, else one
 * listing it among its ports; among equals the lowest system GUID (its
 * identity: not its name, which may be empty or shared, nor the records'
 * order). Two switch records of one system GUID are one (add_system). */
static const ufm_claim *owning_switch(const topo_ufm *u, const ufm_claim *c, size_t n)
{
    const ufm_claim *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (u->systems.items[c[i].index].kind != SYS_SWITCH)
            continue;
        if (best == NULL || c[i].how < best->how ||
            (c[i].how == best->how && strcmp(u->systems.items[c[i].index].id,
                                             u->systems.items[best->index].id) < 0))
            best = &c[i];
    }
    return best;
}

static int cmp_switch_id(const void *a, const void *b)
{
    return strcmp(((const ufm_named *)a)->label, ((const ufm_named *)b)->label);
}

/* Two switch records or more claiming one GUID (n claims at c; owner from
 * owning_switch): reported, every switch named with its system GUID in
 * that order, and which keeps it and why. */
static int judge_switches(topo_ufm *u, const ufm_claim *c, size_t n, const ufm_claim *owner,
                          ufm_named *scratch, topo_buf *line, topo_err *err)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) /* one claim per system: claim_guid */
        if (u->systems.items[c[i].index].kind == SYS_SWITCH)
            scratch[k++] = (ufm_named){u->systems.items[c[i].index].id, c[i].index};
    if (k < 2)
        return 0;
    qsort(scratch, k, sizeof(*scratch), cmp_switch_id);
    topo_buf_clear(line);
    topo_buf_printf(line, "duplicate GUID %s: switches", c[0].guid);
    for (size_t i = 0; i < k && i < UFM_REPORT_NAMES; i++)
        topo_buf_printf(line, "%s \"%.80s\" (system %s)", i ? "," : "",
                        u->systems.items[scratch[i].index].label, scratch[i].label);
    if (k > UFM_REPORT_NAMES)
        topo_buf_printf(line, " and %zu more", k - UFM_REPORT_NAMES);
    topo_buf_printf(line, " claim it: \"%.80s\" (system %s), %s, keeps it; the others' ports "
                          "listing it are ignored",
                    u->systems.items[owner->index].label, u->systems.items[owner->index].id,
                    owner->how == BY_SYSTEM_GUID ? "whose system GUID it is"
                    : owner->how == BY_GUID      ? "whose guid it is"
                                                 : "of the lowest system GUID");
    return line->error != 0 ? topo_err_nomem(err, "ufm: report") : report(u, line, err);
}

/* One GUID's claims (n, sorted, at c): a switch keeps its GUID against any
 * other record (the fabric routes by it); a host record that claimed it
 * anyway is distrusted, and so are host records that claim one GUID
 * together (which is right cannot be told). Other systems (submodules)
 * yield silently. Reported with every claimant named, in label order, so
 * that the report does not depend on the records' order. */
static int judge(topo_ufm *u, const ufm_claim *c, size_t n, ufm_named *scratch, topo_buf *line,
                 topo_err *err)
{
    ufm_named *hosts = scratch + n;
    const ufm_claim *owner = owning_switch(u, c, n);
    int rc = owner ? judge_switches(u, c, n, owner, scratch, line, err) : 0;
    size_t nh = claimants(hosts, u, c, n, SYS_HOST);
    topo_buf_clear(line);
    if (rc != 0 || nh == 0 || (owner == NULL && nh == 1))
        return rc;
    for (size_t i = 0; i < n; i++) /* every record, also those named alike */
        if (u->systems.items[c[i].index].kind == SYS_HOST)
            u->systems.items[c[i].index].distrusted = 1;
    topo_buf_printf(line, "duplicate GUID %s: ", c[0].guid);
    if (owner != NULL)
        topo_buf_printf(line, "switch \"%.80s\" and ", u->systems.items[owner->index].label);
    topo_buf_printf(line, "host record%s", nh > 1 ? "s" : "");
    for (size_t i = 0; i < nh && i < UFM_REPORT_NAMES; i++)
        topo_buf_printf(line, "%s \"%.80s\"", i ? "," : "", hosts[i].label);
    if (nh > UFM_REPORT_NAMES)
        topo_buf_printf(line, " and %zu more", nh - UFM_REPORT_NAMES);
    topo_buf_printf(line,
                    owner != NULL ? " claim it: the switch keeps it; no fabric facts from %s"
                                  : " claim it: no fabric facts from %s",
                    nh > 1 ? "those records" : "that record");
    return line->error != 0 ? topo_err_nomem(err, "ufm: report") : report(u, line, err);
}

/* The GUID each claim names, to its one system (judge): the switch that
 * owns a contested GUID (owning_switch), UFM_DISPUTED for a distrusted
 * host record's GUIDs, else the lowest-labelled other system, else the
 * first claim. */
static int resolve(topo_ufm *u, topo_err *err)
{
    size_t n = u->claims.n;
    if (!u->unresolved)
        return 0;
    ufm_claim *c = malloc((n + 1) * sizeof(*c));
    ufm_named *scratch = malloc((2 * n + 1) * sizeof(*scratch));
    topo_strmap *map = topo_strmap_create(n);
    topo_buf line = TOPO_BUF_INIT(4096);
    int rc = c && scratch && map ? 0 : topo_err_nomem(err, "ufm: GUID map");
    if (rc == 0 && n > 0) { /* systems of other kinds without a GUID of their own: none */
        memcpy(c, u->claims.items, n * sizeof(*c));
        qsort(c, n, sizeof(*c), cmp_claim);
    }
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        for (j = i + 1; j < n && strcmp(c[j].guid, c[i].guid) == 0;)
            j++;
        rc = judge(u, c + i, j - i, scratch, &line, err);
    }
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        int32_t owner = -1;
        for (j = i; j < n && strcmp(c[j].guid, c[i].guid) == 0; j++) {
            const ufm_system *s = &u->systems.items[c[j].index];
            const ufm_system *o = owner >= 0 ? &u->systems.items[owner] : NULL;
            if (o == NULL || s->kind < o->kind ||
                (s->kind == o->kind && strcmp(s->label, o->label) < 0))
                owner = c[j].index;
        }
        const ufm_claim *sw = owning_switch(u, c + i, j - i);
        if (sw != NULL)
            owner = sw->index;
        if (u->systems.items[owner].distrusted)
            owner = UFM_DISPUTED;
        if (topo_strmap_put(map, c[i].guid, owner) != 0)
            rc = topo_err_nomem(err, "ufm: GUID map");
    }
    if (rc == 0) {
        topo_strmap_free(u->by_guid);
        u->by_guid = map;
        map = NULL;
        u->unresolved = 0;
    }
    topo_buf_dispose(&line);
    topo_strmap_free(map);
    free(scratch);
    free(c);
    return rc;
}

/* Links name systems by GUID: after the systems, whose claims are then
 * resolved. */
static int links_first(topo_ufm *ufm, topo_err *err)
{
    return ufm->systems.n == 0
               ? topo_err_set(err, TOPO_EINVALID,
                              "UFM links before any systems: parse the systems response first")
               : resolve(ufm, err);
}

/* Links name systems by GUID: refused before any record is read. */
int topo_ufm_add_links_json(topo_ufm *ufm, const json_t *links, const char *source, topo_err *err)
{
    int rc = links_first(ufm, err);
    return rc != 0 ? srcjson_wrap(err, rc, source)
                   : list_add_json(ufm, &ufm_links, links, source, err);
}

int topo_ufm_add_links(topo_ufm *ufm, const char *text, size_t len, const char *source,
                       topo_err *err)
{
    return topo_ufm_read_links(ufm, text, len, TOPO_MAX_UFM_RESPONSE, NULL, source, err);
}

int topo_ufm_read_links(topo_ufm *ufm, const char *text, size_t len, size_t max,
                        size_t *records, const char *source, topo_err *err)
{
    if (records)
        *records = 0;
    int rc = links_first(ufm, err);
    return rc != 0 ? srcjson_wrap(err, rc, source)
                   : list_add(ufm, &ufm_links, text, len, max, records, source, err);
}
