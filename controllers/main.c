/* topo-sync: the plan of topology labels from the infrastructure's records.
 * Part 1 (issue 11) is the offline run: --once --dry-run reads every source
 * from files (lib/sync), then prints the labels or the plan and writes the
 * exports. Exit status: 0 complete plan, 1 incomplete nodes, 2 bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "topo/export.h"
#include "topo/log.h"
#include "topo/str.h"
#include "topo/sync.h"
#include "topo/syncconfig.h"

enum { EXIT_COMPLETE = 0, EXIT_INCOMPLETE = 1, EXIT_BAD_INPUT = 2 };

/* What the flags give the settings, kept alive as long as they are used. */
typedef struct overrides {
    topo_sync_ibnetdiscover *ib;
    topo_level levels[TOPO_LEVEL_COUNT];
    topo_kv *flavor_labels; /* point into argv */
    char **flavor_keys;     /* the keys, cut from KEY=VALUE */
    size_t nflavor_keys;
} overrides;

static void overrides_free(overrides *ov)
{
    free(ov->ib);
    for (size_t i = 0; i < ov->nflavor_keys; i++)
        free(ov->flavor_keys[i]);
    free(ov->flavor_keys);
    free(ov->flavor_labels);
}

/* Every --kueue-flavor-label KEY=VALUE (the export checks key and value). */
static int parse_flavor_labels(overrides *ov, topo_sync_settings *s, const topo_opt_list *list)
{
    ov->flavor_labels = calloc(list->n, sizeof(*ov->flavor_labels));
    ov->flavor_keys = calloc(list->n, sizeof(*ov->flavor_keys));
    if (!ov->flavor_labels || !ov->flavor_keys)
        return -1;
    for (size_t i = 0; i < list->n; i++) {
        const char *eq = strchr(list->v[i], '=');
        if (!eq || eq == list->v[i]) {
            fprintf(stderr, "topo-sync: --kueue-flavor-label: \"%s\" is not KEY=VALUE\n",
                    list->v[i]);
            return -1;
        }
        if (!(ov->flavor_keys[i] = topo_strndup(list->v[i], (size_t)(eq - list->v[i]))))
            return -1;
        ov->nflavor_keys++;
        ov->flavor_labels[i] = (topo_kv){ov->flavor_keys[i], eq + 1};
    }
    s->kueue.flavor_labels = ov->flavor_labels;
    s->kueue.nflavor_labels = list->n;
    return 0;
}

static int parse_levels(overrides *ov, topo_sync_settings *s, const char *list)
{
    size_t n = 0;
    for (const char *p = list;; p++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[16];
        topo_level l;
        int ok = len < sizeof name && n < TOPO_LEVEL_COUNT;
        if (ok) {
            memcpy(name, p, len);
            name[len] = '\0';
            ok = topo_level_parse(&l, name) == 0;
        }
        if (!ok) {
            fprintf(stderr,
                    "topo-sync: --levels: \"%.*s\" is not one of datacenter, spine, leaf, rack, "
                    "nvlink, hostname\n",
                    (int)len, p);
            return -1;
        }
        ov->levels[n++] = l;
        if (!end)
            break;
        p = end;
    }
    s->plan.levels = ov->levels;
    s->plan.nlevels = n;
    return 0;
}

/* Flags over the config file's settings. */
static int apply_flags(overrides *ov, topo_sync_settings *s, const sync_args *a)
{
    if (a->ibnetdiscover.n) {
        ov->ib = calloc(a->ibnetdiscover.n, sizeof(*ov->ib));
        if (!ov->ib)
            return -1;
        for (size_t i = 0; i < a->ibnetdiscover.n; i++)
            ov->ib[i] = (topo_sync_ibnetdiscover){a->ibnetdiscover.v[i], a->node_name_map};
        s->ibnetdiscover = ov->ib;
        s->nibnetdiscover = a->ibnetdiscover.n;
    }
    if (a->lldp_dir)
        s->lldp_dir = a->lldp_dir;
    if (a->ufm_systems_file) {
        s->ufm_systems_file = a->ufm_systems_file;
        s->ufm_links_file = a->ufm_links_file;
    } else if (a->ufm_links_file) {
        fprintf(stderr, "topo-sync: --ufm-links-file goes with --ufm-systems-file\n");
        return -1;
    }
    if (a->nodes_file)
        s->nodes_file = a->nodes_file;
    if (a->prefix)
        s->plan.prefix = a->prefix;
    if (a->levels && parse_levels(ov, s, a->levels) != 0)
        return -1;
    if (a->topograph_labels)
        s->plan.topograph = 1;
    if (a->kueue_flavor_labels.n && parse_flavor_labels(ov, s, &a->kueue_flavor_labels) != 0)
        return -1;
    return 0;
}

static int write_file(const char *path, topo_buf *b)
{
    size_t len = 0;
    char *text = topo_buf_take(b, &len);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(text);
    if (!ok)
        fprintf(stderr, "topo-sync: %s: cannot write the export\n", path);
    return ok ? 0 : -1;
}

/* Every export asked for; the first that fails stops them. */
static int exports(const topo_plan *plan, const topo_sync_settings *s, const sync_args *a)
{
    const char *path[] = {a->export_kueue, a->export_slurm_tree, a->export_slurm_block,
                          a->export_volcano};
    for (int i = 0; i < 4; i++) {
        if (!path[i])
            continue;
        topo_buf b = TOPO_BUF_INIT(0);
        topo_err err = TOPO_ERR_INIT;
        topo_export_block_opts bo = {0};
        int rc = i == 0   ? topo_export_kueue(plan, &s->kueue, &b, &err)
                 : i == 1 ? topo_export_slurm_tree(plan, &b, &err)
                 : i == 2 ? topo_export_slurm_block(plan, &bo, &b, &err)
                          : topo_export_volcano(plan, &b, &err);
        if (rc != 0) {
            fprintf(stderr, "topo-sync: %s: %s\n", path[i], err.text);
            topo_buf_dispose(&b);
            return -1;
        }
        if (write_file(path[i], &b) != 0)
            return -1;
    }
    return 0;
}

/* Takes doc: printed sorted, indented, with a final newline. */
static int print_json(json_t *doc)
{
    int rc = doc ? json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) : -1;
    json_decref(doc);
    return rc == 0 && fputc('\n', stdout) != EOF ? 0 : -1;
}

static int print_outputs(const topo_plan *plan, const sync_args *a)
{
    if (a->print_labels && print_json(topo_plan_labels_json(plan)) != 0)
        return -1;
    if (a->print_annotations && print_json(topo_plan_annotations_json(plan)) != 0)
        return -1;
    if (a->print_plan || (!a->print_labels && !a->print_annotations)) {
        topo_buf b = TOPO_BUF_INIT(0);
        char *text = topo_plan_write_text(plan, &b) == 0 ? topo_buf_take(&b, NULL) : NULL;
        topo_buf_dispose(&b);
        if (!text)
            return -1;
        fputs(text, stdout);
        free(text);
    }
    return fflush(stdout) == 0 ? 0 : -1;
}

static int setup_log(const sync_args *a)
{
    topo_log_level level;
    topo_err err = TOPO_ERR_INIT;
    if (topo_log_level_parse(&level, a->verbosity, &err) != 0 ||
        topo_log_use_format(a->log_format, &err) != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        return -1;
    }
    topo_log_set_level(level);
    return 0;
}

int main(int argc, char **argv)
{
    sync_args a;
    overrides ov = {0};
    topo_syncconfig *cfg = NULL;
    topo_sync *sync = NULL;
    topo_err err = TOPO_ERR_INIT;
    int status = EXIT_BAD_INPUT;
    int rc = sync_args_parse(&a, argc, argv);
    if (rc != 0) {
        status = rc == 1 ? EXIT_COMPLETE : EXIT_BAD_INPUT;
        goto cleanup;
    }
    if (setup_log(&a) != 0)
        goto cleanup;
    rc = a.config ? topo_syncconfig_load_file(&cfg, a.config, &err)
                  : topo_syncconfig_default(&cfg, &err);
    if (rc != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        goto cleanup;
    }
    topo_sync_settings *s = topo_syncconfig_settings(cfg);
    if (apply_flags(&ov, s, &a) != 0)
        goto cleanup;
    if (topo_sync_run(&sync, s, &err) != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        goto cleanup;
    }
    const topo_plan *plan = topo_sync_plan(sync);
    if (print_outputs(plan, &a) != 0) {
        fprintf(stderr, "topo-sync: cannot write the output\n");
        goto cleanup;
    }
    if (exports(plan, s, &a) != 0)
        goto cleanup;
    status = topo_plan_incomplete_count(plan) ? EXIT_INCOMPLETE : EXIT_COMPLETE;
cleanup:
    topo_sync_free(sync);
    topo_syncconfig_free(cfg);
    overrides_free(&ov);
    sync_args_free(&a);
    return status;
}
