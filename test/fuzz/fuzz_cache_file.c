/* libFuzzer harness for the daemons' open of a damaged cache file
 * (topo_cache_open_healing, lib/cache/cache_heal.c): a real cache (nodes,
 * pods, facts; 512-byte pages, so that it is small) damaged as the input
 * says, then opened as topo-sync and topo-webhook open their --db. Any
 * bytes: the open either gives a cache (the file as it was, or a new empty
 * one after moving the damaged file aside) that reads and takes a write
 * without a crash, or refuses it with an error (a newer schema, another
 * program's tables); never a crash, a leak or a sanitizer report.
 *
 * Input: an optional 'T' and two bytes (big-endian): the file is cut to
 * that many bytes; then edits, each two bytes of offset (big-endian), one
 * of length n and n bytes written there (past the end: clipped). Seeds:
 * fixtures/fuzz/cachefile. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "topo/cache.h"
#include "topo/cache_facts.h"
#include "topo/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char path[96];
static unsigned char *tpl;
static size_t tpl_len;

static void die(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_cache_file: %s: %s\n", what, why);
    abort();
}

/* Removes every file of the scratch directory (the cache, its WAL, the
 * corrupt copies). */
static void clean(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[400];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        remove(p);
    }
    if (d != NULL)
        closedir(d);
}

/* The template: a cache of 8 nodes, 8 pods and 2 sources' facts. */
static void make_template(void)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    sqlite3 *db = NULL;
    char json[1024];

    snprintf(dir, sizeof dir, "%s/topo-fuzz-cache-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL)
        die("mkdtemp", dir);
    snprintf(path, sizeof path, "%s/cache.db", dir);
    /* Small pages: the file fits the fuzzer's inputs' offsets. */
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA page_size=512; VACUUM;", NULL, NULL, NULL) != SQLITE_OK)
        die("page size", sqlite3_errmsg(db));
    sqlite3_close(db);
    if (topo_cache_open(&c, path, NULL, &err) < 0)
        die("open", err.text);
    for (int i = 0; i < 8; i++) {
        int n = snprintf(json, sizeof json,
                         "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\",\"resourceVersion\":"
                         "\"%d\",\"labels\":{\"kubernetes.io/hostname\":\"n%d\","
                         "\"topology.topo.io/rack\":\"r%d\"}},\"status\":{\"allocatable\":"
                         "{\"nvidia.com/gpu\":\"8\",\"cpu\":\"64\"},\"conditions\":[{\"type\":"
                         "\"Ready\",\"status\":\"True\"}]}}",
                         i, i + 1, i, i / 4);
        if (topo_cache_upsert_node(c, json, (size_t)n, &err) < 0)
            die("node", err.text);
        n = snprintf(json, sizeof json,
                     "{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"u%d\",\"namespace\":\"ns\","
                     "\"name\":\"p%d\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\","
                     "\"resourceVersion\":\"%d\"},\"spec\":{\"nodeName\":\"n%d\",\"containers\":"
                     "[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"8\"}}}]},"
                     "\"status\":{\"phase\":\"Running\"}}",
                     i, i, 100 + i, i);
        if (topo_cache_upsert_pod(c, json, (size_t)n, &err) < 0)
            die("pod", err.text);
    }
    if (topo_cache_facts_put(c, "ufm", "{\"version\":1,\"hosts\":[]}", 24, 1, NULL, &err) < 0 ||
        topo_cache_facts_put(c, "lldp", "{\"version\":1,\"hosts\":[\"h\"]}", 27, 2, NULL,
                             &err) < 0)
        die("facts", err.text);
    topo_cache_close(c);
    FILE *fh = fopen(path, "rb");
    if (fh == NULL || fseek(fh, 0, SEEK_END) != 0)
        die("read", path);
    tpl_len = (size_t)ftell(fh);
    rewind(fh);
    if ((tpl = malloc(tpl_len)) == NULL || fread(tpl, 1, tpl_len, fh) != tpl_len)
        die("read", path);
    fclose(fh);
    clean();
}

static int count_node(const topo_node_spec *node, const char *rv, void *payload)
{
    (void)node;
    (void)rv;
    (*(int *)payload)++;
    return 0;
}

static int count_facts(const topo_cache_facts_status *s, void *payload)
{
    (void)s;
    (*(int *)payload)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_err err = TOPO_ERR_INIT;
    topo_cache *c = NULL;
    unsigned char *file;
    size_t len, i = 0;
    int recreated = 0;

    if (tpl == NULL) {
        topo_log_set_level(TOPO_LOG_OFF);
        make_template();
    }
    if ((file = malloc(tpl_len)) == NULL)
        return 0;
    memcpy(file, tpl, tpl_len);
    len = tpl_len;
    if (size >= 3 && data[0] == 'T') {
        size_t cut = (size_t)data[1] << 8 | data[2];
        if (cut < len)
            len = cut;
        i = 3;
    }
    while (i + 3 <= size) {
        size_t at = (size_t)data[i] << 8 | data[i + 1], n = data[i + 2];
        i += 3;
        if (n > size - i)
            n = size - i;
        for (size_t k = 0; k < n && at + k < len; k++)
            file[at + k] = data[i + k];
        i += n;
    }
    FILE *fh = fopen(path, "wb");
    if (fh == NULL || fwrite(file, 1, len, fh) != len)
        die("write", path);
    fclose(fh);
    free(file);

    if (topo_cache_open_healing(&c, &recreated, path, NULL, &err) == 0) {
        int nodes = 0, facts = 0, changed = 0;
        topo_err e = TOPO_ERR_INIT;
        (void)topo_cache_foreach_node(c, count_node, &nodes, &e);
        (void)topo_cache_facts_list(c, 10, count_facts, &facts, &e);
        if (recreated && (nodes != 0 || facts != 0))
            die("recreated", "the new cache is not empty");
        (void)topo_cache_facts_put(c, "gpu", "{}", 2, 3, &changed, &e);
        topo_cache_close(c);
    } else if (recreated) {
        die("open", "an error, yet recreated");
    }
    clean();
    return 0;
}
