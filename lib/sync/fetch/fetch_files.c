/* The file transport of topo-sync's sources (fetch_internal.h): each
 * source's files as its settings name them, read whole (each at most the
 * source's response limit) into the parser of lib/sync/sources, one log
 * line with what they held. NetBox pages saved to files are read as given:
 * their `next` links are not followed (a debug line says a page has one). */
#define _POSIX_C_SOURCE 200809L

#include "fetch_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/codec.h"
#include "topo/gpu.h"
#include "topo/ibnetdiscover.h"
#include "topo/limits.h"
#include "topo/lldp.h"
#include "topo/log.h"
#include "topo/netbox.h"
#include "topo/str.h"
#include "topo/ufm.h"

/* The dumps (each with its node-name map) into f; other (may be NULL): the
 * switches of every dump, for the disputes across dumps; with other NULL
 * and switches_only, only the switches into f. */
static int ibnetdiscover_dumps(topo_facts *f, const topo_sync_settings *s,
                               const topo_facts *other, int switches_only,
                               topo_ibnetdiscover_stats *t, topo_err *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nibnetdiscover; i++) {
        topo_ibnetdiscover_map *map = NULL;
        topo_ibnetdiscover_stats st = {0};
        if (s->ibnetdiscover[i].node_name_map)
            rc = topo_ibnetdiscover_map_read_file(&map, s->ibnetdiscover[i].node_name_map, err);
        topo_ibnetdiscover_opts o = {
            .map = map, .other_dumps = other, .switches_only = switches_only};
        if (rc == 0)
            rc = topo_ibnetdiscover_read_file(f, s->ibnetdiscover[i].file, &o, &st, err);
        topo_ibnetdiscover_map_free(map);
        t->lines += st.lines;
        t->switches += st.switches;
        t->adapters += st.adapters;
        t->adapters_unnamed += st.adapters_unnamed;
        t->adapters_mapped += st.adapters_mapped;
        t->aggregation_nodes += st.aggregation_nodes;
        t->routers += st.routers;
        t->skipped_lines += st.skipped_lines;
        t->duplicate_guids += st.duplicate_guids;
    }
    return rc;
}

int fetch_files_ibnetdiscover(topo_facts *f, const topo_sync_settings *s,
                              const topo_facts *last_good, topo_sync_skipped *skipped,
                              topo_err *err)
{
    (void)last_good; /* each file holds many hosts: one that fails fails the source */
    (void)skipped;
    topo_ibnetdiscover_stats t = {0};
    topo_facts *all = NULL;
    int rc = 0;
    /* All dumps are one source: a Ca of one with a switch's GUID of another
     * is disputed as within one dump, whichever comes first, so the
     * switches of every dump are read first (the dumps parsed twice). */
    if (s->nibnetdiscover > 1) {
        topo_ibnetdiscover_stats first = {0};
        rc = topo_facts_create(&all, topo_facts_source(f), err);
        if (rc == 0)
            rc = ibnetdiscover_dumps(all, s, NULL, 1, &first, err);
    }
    if (rc == 0)
        rc = ibnetdiscover_dumps(f, s, all, 0, &t, err);
    topo_facts_free(all);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO,
                 "source ibnetdiscover: %zu dumps, %zu lines, %zu switches, %zu adapters (%zu "
                 "unnamed, %zu named by a map), %zu hosts; skipped %zu aggregation nodes, %zu "
                 "routers, %zu lines; %zu duplicate GUIDs",
                 s->nibnetdiscover, t.lines, t.switches, t.adapters, t.adapters_unnamed,
                 t.adapters_mapped, topo_facts_host_count(f), t.aggregation_nodes, t.routers,
                 t.skipped_lines, t.duplicate_guids);
    return rc;
}

/* One saved response of at most max bytes through add. */
typedef int (*ufm_add_fn)(topo_ufm *, const char *, size_t, const char *, topo_err *);

static int ufm_file(topo_ufm *u, ufm_add_fn add, const char *path, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_UFM_RESPONSE, err);
    if (rc == 0)
        rc = add(u, text, len, path, err);
    free(text);
    return rc;
}

int fetch_files_ufm(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                    topo_sync_skipped *skipped, topo_err *err)
{
    (void)last_good; /* each file holds many hosts: one that fails fails the source */
    (void)skipped;
    topo_ufm *u = NULL;
    int rc = topo_ufm_create(&u, f, err);
    if (rc == 0)
        rc = ufm_file(u, topo_ufm_add_systems, s->ufm_systems_file, err);
    if (rc == 0 && s->ufm_links_file)
        rc = ufm_file(u, topo_ufm_add_links, s->ufm_links_file, err);
    if (rc == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        char text[TOPO_UFM_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source ufm: %s",
                 topo_ufm_stats_text(text, sizeof text, &st, topo_facts_host_count(f)));
    }
    topo_ufm_free(u);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lldp directory's "<host>.json" files, sorted (a stable log and
 * facts order whatever the directory's). */
typedef TOPO_ARRAY(char *) name_list;

static int lldp_files(name_list *out, const char *dir, topo_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return topo_err_set(err, TOPO_ENOTFOUND, "lldp: %s: cannot open the directory", dir);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char *name = topo_strdup(e->d_name);
        if (!name || TOPO_ARRAY_PUSH(out, name) != 0) {
            free(name);
            rc = topo_err_nomem(err, "lldp");
        }
    }
    closedir(d);
    if (rc == 0 && out->n)
        qsort(out->items, out->n, sizeof(*out->items), by_name);
    return rc;
}

/* Why a host's file is skipped: the read's error, of a file (not of the
 * process: out of memory fails the source). */
static size_t *skip_reason(topo_sync_skipped *skipped, int rc)
{
    if (rc == TOPO_ELIMIT)
        return &skipped->too_large;
    if (rc == TOPO_EIO || rc == TOPO_ENOTFOUND)
        return &skipped->unreadable;
    return NULL;
}

int fetch_skip_host(topo_facts *f, const topo_facts *last_good, size_t *counter, size_t nth,
                    const char *host, topo_err *err)
{
    char why[TOPO_ERR_TEXT_MAX];
    int kept = 0;
    snprintf(why, sizeof why, "%s", err && err->text[0] ? err->text : "cannot be read");
    topo_err_clear(err);
    if (counter)
        (*counter)++;
    int rc = topo_facts_copy_host(&kept, f, last_good, host, err);
    topo_log(nth < FETCH_SKIP_WARNINGS ? TOPO_LOG_WARN : TOPO_LOG_DEBUG,
             "source lldp: skipped %s: host %s %s", why, host,
             kept ? "keeps its last good facts" : "has no lldp facts this round");
    return rc;
}

/* One host's file. A file that cannot be read (a FIFO, a directory, no
 * permission, too large) or whose document is refused (empty, cut
 * mid-write, malformed, over its parse budget) is that host's problem, not
 * every host's: it is skipped with a warning, and the host keeps what
 * last_good held for it. Only regular files are opened, without blocking
 * (a FIFO named HOST.json would otherwise hang the read for ever). *read
 * is set when the host's document was read; first (when empty) takes why
 * a document was refused. */
static int lldp_file(topo_facts *f, const char *dir, const char *name,
                     const topo_facts *last_good, topo_sync_skipped *skipped, size_t *neighbours,
                     int *read, char first[TOPO_ERR_TEXT_MAX], topo_err *err)
{
    char path[4096], host[256];
    size_t n = strlen(name) - 5; /* without ".json" */
    if (n >= sizeof host || (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return topo_err_set(err, TOPO_ELIMIT, "lldp: %s/%s: name too long", dir, name);
    memcpy(host, name, n);
    host[n] = '\0';
    char *text = NULL;
    size_t len = 0, nn = 0;
    int refused = 0;
    int rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_LLDP_DOCUMENT, err);
    size_t *reason = rc != 0 ? skip_reason(skipped, rc) : NULL;
    if (rc == 0) {
        rc = topo_lldp_add(&refused, &nn, f, host, text, len, path, err);
        reason = refused ? &skipped->invalid : NULL;
        if (refused && first[0] == '\0' && err != NULL)
            snprintf(first, TOPO_ERR_TEXT_MAX, "%s", err->text);
    }
    free(text);
    *neighbours += nn;
    *read = rc == 0;
    if (reason != NULL)
        return fetch_skip_host(f, last_good, reason,
                               skipped->unreadable + skipped->too_large + skipped->invalid, host,
                               err);
    return rc;
}

int fetch_files_lldp(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                     topo_sync_skipped *skipped, topo_err *err)
{
    name_list files = TOPO_ARRAY_INIT;
    size_t neighbours = 0, read = 0;
    char first[TOPO_ERR_TEXT_MAX] = "";
    int rc = lldp_files(&files, s->lldp_dir, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        int one = 0;
        rc = lldp_file(f, s->lldp_dir, files.items[i], last_good, skipped, &neighbours, &one,
                       first, err);
        read += one ? 1 : 0;
    }
    /* Every host's document refused is the source's problem, not a host's:
     * the source fails as one bad document did before, with its error. */
    if (rc == 0 && read == 0 && skipped->invalid > 0)
        rc = topo_err_set(err, TOPO_EINVALID, "%s%s", first,
                          files.n > 1 ? " (and no other host's file could be read)" : "");
    if (rc == 0)
        topo_log(TOPO_LOG_INFO,
                 "source lldp: %zu files in %s (%zu skipped: %zu unreadable, %zu too large, "
                 "%zu invalid), %zu neighbours, %zu switches",
                 files.n, s->lldp_dir,
                 skipped->unreadable + skipped->too_large + skipped->invalid,
                 skipped->unreadable, skipped->too_large, skipped->invalid, neighbours,
                 topo_facts_switch_count(f));
    for (size_t i = 0; i < files.n; i++)
        free(files.items[i]);
    free(files.items);
    return rc;
}

int fetch_files_netbox(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                       topo_sync_skipped *skipped, topo_err *err)
{
    (void)last_good; /* each file holds many hosts: one that fails fails the source */
    (void)skipped;
    topo_netbox *nb = NULL;
    int rc = topo_netbox_create(&nb, &s->netbox, err);
    for (int k = TOPO_NETBOX_DEVICES; rc == 0 && k <= TOPO_NETBOX_CABLES; k++) {
        for (size_t i = 0; rc == 0 && i < s->netbox_files.nfiles[k]; i++) {
            const char *path = s->netbox_files.files[k][i];
            char *text = NULL, *next = NULL;
            size_t len = 0;
            rc = topo_codec_read_regular_file(&text, &len, path, TOPO_MAX_NETBOX_PAGE, err);
            if (rc == 0)
                rc = topo_netbox_add_page(&next, nb, (topo_netbox_kind)k, text, len, path, err);
            if (rc == 0 && next)
                topo_log(TOPO_LOG_DEBUG, "netbox: %s has a next page; offline, give it as a file",
                         path);
            free(next);
            free(text);
        }
    }
    if (rc == 0)
        rc = topo_netbox_finish(nb, f, err);
    if (rc == 0) {
        topo_netbox_stats st = topo_netbox_get_stats(nb);
        char text[TOPO_NETBOX_STATS_TEXT_MAX];
        topo_log(TOPO_LOG_INFO, "source netbox: %s",
                 topo_netbox_stats_text(text, sizeof text, &st));
    }
    topo_netbox_free(nb);
    return rc;
}

int fetch_files_gpu(topo_facts *f, const topo_sync_settings *s, const topo_facts *last_good,
                    topo_sync_skipped *skipped, topo_err *err)
{
    (void)last_good; /* each file holds many hosts: one that fails fails the source */
    (void)skipped;
    char *text = NULL;
    size_t len = 0;
    topo_gpu_stats st = {0};
    int rc =
        topo_codec_read_regular_file(&text, &len, s->nodes_file, TOPO_MAX_K8S_RESPONSE, err);
    if (rc == 0)
        rc = topo_gpu_parse(&st, f, text, len, s->nodes_file, err);
    free(text);
    if (rc == 0)
        topo_log(TOPO_LOG_INFO, "source gpu: %zu nodes, %zu with GPU labels, %zu with a clique label",
                 st.nodes, st.gpu_nodes, st.cliques);
    return rc;
}
