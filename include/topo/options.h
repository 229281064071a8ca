/* Command-line options from one table per program: the table drives the
 * parsing, the bounds checks, --help and the Markdown reference page
 * (docs/cli/<program>.md), so an option is described once.
 *
 *   static const topo_opt table[] = {
 *       {"--port", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "9443",
 *        "HTTPS port for POST /mutate", offsetof(args, port), NULL},
 *       ...
 *   };
 *
 * Values land in the caller's struct at each entry's offset: an unsigned
 * long for TOPO_OPT_UINT, a const char * (into argv) for TOPO_OPT_STRING and
 * TOPO_OPT_CHOICE, an int for TOPO_OPT_FLAG (1 when given) and
 * TOPO_OPT_BOOL (0 or 1 from "false"/"true"; the caller presets -1 to
 * learn whether it was given). */
#ifndef TOPO_OPTIONS_H
#define TOPO_OPTIONS_H

#include <stddef.h>

#include "topo/buf.h"

typedef enum topo_opt_type {
    TOPO_OPT_FLAG,   /* no value */
    TOPO_OPT_STRING, /* any non-empty text */
    TOPO_OPT_UINT,   /* a decimal in [min, max] */
    TOPO_OPT_BOOL,   /* true or false */
    TOPO_OPT_CHOICE, /* one of choices */
} topo_opt_type;

typedef struct topo_opt {
    const char *name;  /* "--port" */
    const char *alias; /* "-v", or NULL */
    topo_opt_type type;
    const char *arg;                  /* the value's name in help: "N", "FILE" */
    unsigned long min, max;           /* TOPO_OPT_UINT */
    const char *const *choices;       /* TOPO_OPT_CHOICE: NULL-terminated */
    const char *def;                  /* the default as help shows it, or NULL */
    const char *help;                 /* one paragraph, wrapped by the renderers */
    size_t offset;                    /* of the value in the caller's struct */
    const char *section;              /* starts a group in help, or NULL */
} topo_opt;

/* Parses argv[1..argc-1] into out. 0 on success; 1 when --help (or -h) was
 * given (nothing else is parsed); -1 with a message in why: "--port:
 * missing value or unknown option", or "bad option or value: --port 0". */
int topo_opts_parse(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                    char *why, size_t why_size);

/* --help text: usage_line, then each section and option (name, arg,
 * wrapped help with its bounds, choices and default). 0 or a topo_buf error. */
int topo_opts_help(const topo_opt *table, size_t n, const char *usage_line, topo_buf *out);

/* The same as a Markdown reference page titled program. */
int topo_opts_markdown(const topo_opt *table, size_t n, const char *program,
                       const char *usage_line, const char *intro, topo_buf *out);

#endif
