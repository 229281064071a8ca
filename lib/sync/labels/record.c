/* The label writer's record annotation (record.h). */
#include "record.h"

#include <stdlib.h>
#include <string.h>

#include "topo/buf.h"
#include "topo/labeldiff.h"
#include "topo/str.h"

int label_record_parse(label_record *rec, const char *value)
{
    rec->valid = 0;
    if (value == NULL || strlen(value) > LABEL_RECORD_MAX)
        return 0;
    if ((rec->text = topo_strdup(value)) == NULL)
        return TOPO_ENOMEM;
    char *p = rec->text;
    while (*p != '\0') {
        char *end = strchr(p, ',');
        if (end != NULL)
            *end = '\0';
        char *eq = strchr(p, '=');
        /* "k=v", non-empty key; a broken record is ignored whole. */
        if (eq == NULL || eq == p || rec->pairs.n >= TOPO_LABELDIFF_MAX_KEYS)
            return 0;
        *eq = '\0';
        topo_kv kv = {p, eq + 1};
        if (TOPO_ARRAY_PUSH(&rec->pairs, kv) < 0)
            return TOPO_ENOMEM;
        if (end == NULL)
            break;
        p = end + 1;
        if (*p == '\0') /* a trailing comma */
            return 0;
    }
    rec->valid = 1;
    return 0;
}

const char *label_record_get(const label_record *rec, const char *key)
{
    for (size_t i = 0; i < rec->pairs.n; i++)
        if (strcmp(rec->pairs.items[i].key, key) == 0)
            return rec->pairs.items[i].value;
    return NULL;
}

void label_record_dispose(label_record *rec)
{
    free(rec->text);
    free(rec->pairs.items);
    rec->text = NULL;
    rec->pairs.items = NULL;
    rec->pairs.n = rec->pairs.cap = 0;
    rec->valid = 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const topo_kv *const *)a)->key, (*(const topo_kv *const *)b)->key);
}

int label_record_format(char **out, const topo_kv *labels, size_t n)
{
    const topo_kv **sorted = NULL;
    topo_buf b = TOPO_BUF_INIT(0);

    *out = NULL;
    if (n > 0 && (sorted = malloc(n * sizeof *sorted)) == NULL)
        return TOPO_ENOMEM;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &labels[i];
    if (n > 1)
        qsort(sorted, n, sizeof *sorted, by_key);
    for (size_t i = 0; i < n; i++)
        topo_buf_printf(&b, "%s%s=%s", i > 0 ? "," : "", sorted[i]->key, sorted[i]->value);
    free(sorted);
    *out = topo_buf_take(&b, NULL);
    return *out != NULL ? 0 : TOPO_ENOMEM;
}
