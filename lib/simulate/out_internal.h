/* What the outputs share (out_*.c): the rows of the table, which the HTML
 * report shows too, each a field of the metrics table (fields.h), and
 * number formatting. */
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
    int field; /* its sim_field_id (fields.h) */
} sim_row;

extern const sim_row sim_rows[];
extern const size_t sim_nrows;
/* The row the table and the report show before the same-jobs rows, read
 * from a policy's own run: the jobs it left unplaced. */
extern const sim_row sim_unplaced_row;
extern const sim_row sim_common_rows[];
extern const size_t sim_ncommon_rows;
extern const char *const sim_class_names[TOPO_SIM_CLASSES];

/* The rows of the stretched block (topo_sim_format_stretched), which are
 * also the keys of a policy's "stretched" object in -o json. */
extern const sim_row sim_stretched_rows[];
extern const size_t sim_nstretched_rows;

/* Row's figure (level l's for SIM_ROW_SPANNED) from a metrics vector
 * (fields.h). */
double sim_row_value(const sim_row *row, const double *v, size_t level);
/* Row's cell text (level l's) from a metrics vector and, over several
 * seeds, its interval's ends (else NULL): "mean ± half"; the domains
 * spanned with spanned_prec decimals. */
void sim_cell_text(char *buf, size_t size, const sim_row *row, const double *v,
                   const double *lo, const double *hi, size_t level, int spanned_prec);

#define SIM_LABEL_WIDTH 30 /* the table's first column */
/* A policy's column width in the table (wider for a long name). */
int sim_column_width(const char *policy);

/* "42 s", "3.5 min", "2.0 h", "1.3 d" */
void sim_fmt_duration(char *buf, size_t size, double seconds);
/* The part of a label key after its last '/'. */
const char *sim_level_short(const char *level);

#endif
