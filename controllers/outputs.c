/* What topo-sync prints and exports (outputs.h). */
#define _POSIX_C_SOURCE 200809L

#include "outputs.h"

#include <stdio.h>
#include <stdlib.h>

#include "topo/buf.h"
#include "topo/export.h"
#include "topo/json.h"

#include <jansson.h>

/* text to path through path.tmp and rename(2). */
static int replace_file(const char *path, topo_buf *b, topo_err *err)
{
    char tmp[4096];
    size_t len = 0;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return topo_err_set(err, TOPO_ELIMIT, "%s: path too long", path);
    char *text = topo_buf_take(b, &len);
    if (!text)
        return topo_err_nomem(err, "exports");
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(text);
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return topo_err_set(err, TOPO_EIO, "%s: cannot write the export", path);
    }
    return 0;
}

int ctl_exports_write(const topo_plan *plan, const ctl_exports *p, topo_err *err)
{
    const char *path[] = {p->kueue, p->slurm_tree, p->slurm_block, p->volcano};
    for (int i = 0; i < 4; i++) {
        if (!path[i])
            continue;
        topo_buf b = TOPO_BUF_INIT(0);
        topo_export_kueue_opts ko = {0};
        topo_export_block_opts bo = {0};
        int rc = i == 0   ? topo_export_kueue(plan, p->kueue_opts ? p->kueue_opts : &ko, &b, err)
                 : i == 1 ? topo_export_slurm_tree(plan, &b, err)
                 : i == 2 ? topo_export_slurm_block(plan, &bo, &b, err)
                          : topo_export_volcano(plan, &b, err);
        if (rc != 0) {
            topo_buf_dispose(&b);
            return topo_err_wrap(err, "%s", path[i]);
        }
        if ((rc = replace_file(path[i], &b, err)) != 0)
            return rc;
    }
    return 0;
}

/* Takes doc: printed sorted, indented, with a final newline. */
static int print_json(json_t *doc)
{
    char *text = doc ? topo_json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    int rc = text != NULL && fputs(text, stdout) != EOF && fputc('\n', stdout) != EOF ? 0 : -1;
    free(text);
    return rc;
}

int ctl_print(const topo_plan *plan, int labels, int annotations, int text_plan)
{
    if (labels && print_json(topo_plan_labels_json(plan)) != 0)
        return -1;
    if (annotations && print_json(topo_plan_annotations_json(plan)) != 0)
        return -1;
    if (text_plan) {
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
