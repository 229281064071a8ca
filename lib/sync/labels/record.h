/* The record annotation of topo-sync's label writer: what it last wrote on
 * a node, "k1=v1,k2=v2" with the keys sorted (label keys and values hold
 * neither ',' nor '='), read back to tell drift from a change of plan. */
#ifndef TOPO_LABELS_RECORD_H
#define TOPO_LABELS_RECORD_H

#include <stddef.h>

#include "topo/array.h"
#include "topo/types.h"

/* A record is not trusted past this length (a label key is at most 317
 * bytes and a value 63, times TOPO_LABELDIFF_MAX_KEYS). */
#define LABEL_RECORD_MAX (64u * 1024u)

typedef struct label_record {
    int valid; /* 0: absent or malformed (no drift can be told) */
    char *text;
    TOPO_ARRAY(topo_kv) pairs; /* pointing into text */
} label_record;

#define LABEL_RECORD_INIT {0, NULL, TOPO_ARRAY_INIT}

/* Reads value (NULL: no record). A malformed or oversized value leaves
 * rec->valid 0 and is not an error. 0 or TOPO_ENOMEM. */
int label_record_parse(label_record *rec, const char *value);
/* The recorded value of key; NULL when the record does not hold it. */
const char *label_record_get(const label_record *rec, const char *key);
void label_record_dispose(label_record *rec);

/* The record of labels (malloc'd into *out). 0 or TOPO_ENOMEM. */
int label_record_format(char **out, const topo_kv *labels, size_t n);

#endif
