/* The live cluster for `show` and `assign` (--live, and kubectl topo): the
 * Nodes and Pods listed once through the kubeconfig by the filler `cache
 * sync --once` runs, into a cache file in a new temporary directory, read
 * as a --db file is, then removed. One list loop, lib/filler's. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "topo/filler.h"
#include "topo/log.h"

#define LIVE_DIR_PREFIX "kubectl-topo."
/* The list's quiet watch after it, in ms: the filler counts whole seconds,
 * so one second is the least a one-shot sync waits. */
#define LIVE_IDLE_MS 1000

/* The directory and what the cache left in it (the file, its WAL and its
 * shared-memory index): nothing else is ever put there. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                (void)unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    (void)rmdir(dir);
}

/* A private directory (mode 0700) under $TMPDIR, else /tmp. */
static int make_dir(char *out, size_t size, topo_err *err)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    int n = snprintf(out, size, "%s/" LIVE_DIR_PREFIX "XXXXXX", tmp);
    if (n < 0 || (size_t)n >= size)
        return topo_err_set(err, TOPO_ELIMIT, "TMPDIR: path too long");
    if (mkdtemp(out) == NULL)
        return topo_err_set(err, TOPO_EGENERIC, "cannot make a temporary directory in %s: %s",
                            tmp, strerror(errno));
    return 0;
}

/* Nodes and Pods (Jobs size PodSets for the webhook: nothing here needs
 * them) into db, once. Configuration errors (the kubeconfig, its context)
 * and an API server that does not answer within the filler's few tries
 * come back as errors; so does an interruption. */
static int sync_once(const char *db, const cli_input *in, topo_err *err)
{
    topo_filler_opts o = {0};
    topo_filler *filler = NULL;
    int rc;

    o.db_path = db;
    if ((rc = cli_cluster_config(&o.k8s_config, in, err)) < 0)
        return topo_err_wrap(err, "reading the cluster");
    o.kinds = TOPO_FILLER_NODES | TOPO_FILLER_PODS;
    o.once = 1;
    o.idle_ms = LIVE_IDLE_MS;
    o.stop = cli_stop_on_signals();
    if ((rc = topo_filler_create(&filler, &o, err)) == 0)
        rc = topo_filler_run(filler, err);
    topo_filler_free(filler);
    if (rc == 0 && atomic_load(o.stop))
        rc = topo_err_set(err, TOPO_EGENERIC, "interrupted");
    return rc < 0 ? topo_err_wrap(err, "reading the cluster") : rc;
}

void cli_cluster_dispose(cli_cluster *c)
{
    if (c == NULL)
        return;
    topo_k8s_config_dispose(&c->cfg);
    c->loaded = 0;
}

int cli_cluster_config(const topo_k8s_config **out, const cli_input *in,
                            topo_err *err)
{
    *out = NULL;
    if (in->cluster == NULL)
        return topo_err_set(err, TOPO_EINVALID, "the live cluster: no configuration holder");
    if (!in->cluster->loaded) {
        int rc = topo_k8s_config_load_context(&in->cluster->cfg, in->kubeconfig, in->context,
                                              err);
        if (rc < 0)
            return rc;
        in->cluster->loaded = 1;
    }
    *out = &in->cluster->cfg;
    return 0;
}

int cli_load_live(topo_snapshot **out_snap, cli_nodes *out_nodes,
                       const cli_input *in, const topo_inventory_snapshot_opts *opts,
                       size_t *out_ignored, topo_pool *pool, topo_err *err)
{
    char dir[4096], db[4096 + 16];
    int rc;

    if ((rc = make_dir(dir, sizeof(dir), err)) < 0)
        return rc;
    snprintf(db, sizeof(db), "%s/cache.db", dir);
    /* The filler's progress lines and its warnings of retries are for
     * daemons: a one-shot answer prints the error that ends it, once. */
    topo_log_level level = topo_log_get_level();
    if (level < TOPO_LOG_ERROR)
        topo_log_set_level(TOPO_LOG_ERROR);
    rc = sync_once(db, in, err);
    topo_log_set_level(level);
    if (rc == 0)
        rc = cli_load_db(out_snap, out_nodes, db, opts, out_ignored, pool, err);
    remove_dir(dir);
    return rc;
}
