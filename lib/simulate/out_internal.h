/* What the outputs share (out_*.c): the rows of the table, which the HTML
 * report shows too, and number formatting. */
#ifndef TOPO_SIM_OUT_INTERNAL_H
#define TOPO_SIM_OUT_INTERNAL_H

#include <stddef.h>

#include "topo/simulate.h"

typedef enum sim_row_kind {
    SIM_ROW_COUNT,
    SIM_ROW_SHARE,   /* a fraction, shown as a percentage */
    SIM_ROW_SECONDS, /* a duration */
    SIM_ROW_NUMBER,
    SIM_ROW_HEADING, /* a label only */
    SIM_ROW_SPANNED, /* one row per level: domains spanned */
} sim_row_kind;

typedef struct sim_row {
    const char *label;
    sim_row_kind kind;
    double (*value)(const topo_sim_metrics *m, int arg);
    int arg;
} sim_row;

extern const sim_row sim_rows[];
extern const size_t sim_nrows;
extern const sim_row sim_common_rows[];
extern const size_t sim_ncommon_rows;
extern const char *const sim_class_names[TOPO_SIM_CLASSES];

#define SIM_LABEL_WIDTH 30 /* the table's first column */
/* A policy's column width in the table (wider for a long name). */
int sim_column_width(const char *policy);

/* "42 s", "3.5 min", "2.0 h", "1.3 d" */
void sim_fmt_duration(char *buf, size_t size, double seconds);
/* The part of a label key after its last '/'. */
const char *sim_level_short(const char *level);

#endif
