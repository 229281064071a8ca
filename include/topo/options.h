/* Command-line options from one table per program (or per subcommand):
 * the table drives the parsing, the bounds checks, --help and the Markdown
 * reference page (docs/cli/<program>.md), so an option is described once.
 *
 *   static const topo_opt table[] = {
 *       {"--port", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "9443",
 *        "HTTPS port for POST /mutate", offsetof(args, port), NULL},
 *       ...
 *   };
 *
 * Values land in the caller's struct at each entry's offset: an unsigned
 * long for TOPO_OPT_UINT, a double for TOPO_OPT_NUMBER and
 * TOPO_OPT_POSITIVE, a const char * (into argv) for TOPO_OPT_STRING and
 * TOPO_OPT_CHOICE, an int for TOPO_OPT_FLAG (1 when given) and
 * TOPO_OPT_BOOL (0 or 1 from "false"/"true"; the caller presets -1 to
 * learn whether it was given), a topo_opt_list for TOPO_OPT_LIST (every
 * value of a repeated option) and TOPO_OPT_OPERANDS (the arguments that are
 * not options). */
#ifndef TOPO_OPTIONS_H
#define TOPO_OPTIONS_H

#include <stddef.h>

#include "topo/buf.h"

typedef enum topo_opt_type {
    TOPO_OPT_FLAG,     /* no value */
    TOPO_OPT_STRING,   /* any non-empty text */
    TOPO_OPT_UINT,     /* a decimal in [min, max] */
    TOPO_OPT_BOOL,     /* true or false */
    TOPO_OPT_CHOICE,   /* one of choices */
    TOPO_OPT_LIST,     /* any non-empty text, the option repeatable */
    TOPO_OPT_NUMBER,   /* a decimal number (a fraction allowed) in [min, max] */
    TOPO_OPT_POSITIVE, /* a decimal number > 0 and <= max */
    /* Not an option: the arguments that are not options; name is how help
     * shows them ("FILE..."). At most one entry of this type. */
    TOPO_OPT_OPERANDS,
} topo_opt_type;

typedef struct topo_opt {
    const char *name;  /* "--port" */
    const char *alias; /* "-v", or NULL */
    topo_opt_type type;
    const char *arg;                  /* the value's name in help: "N", "FILE" */
    unsigned long min, max;           /* TOPO_OPT_UINT, _NUMBER, _POSITIVE (max only) */
    const char *const *choices;       /* TOPO_OPT_CHOICE: NULL-terminated */
    const char *def;                  /* the default as help shows it, or NULL */
    const char *help;                 /* one paragraph, wrapped by the renderers */
    size_t offset;                    /* of the value in the caller's struct */
    const char *section;              /* starts a group in help, or NULL */
} topo_opt;

/* The values of a TOPO_OPT_LIST or TOPO_OPT_OPERANDS entry, in the order
 * given; the strings point into argv. Zero it before parsing; free it with
 * topo_opts_free. */
typedef struct topo_opt_list {
    const char **v;
    size_t n, cap;
} topo_opt_list;

/* The default of a table row from the constant that applies it, so that
 * the number is written once: TOPO_OPT_DEFAULT(TOPO_FILLER_IDLE_MS_DEFAULT)
 * is "500" (the constant must be a plain literal). */
#define TOPO_OPT_DEFAULT(constant) TOPO_OPT_STRINGIFY_(constant)
#define TOPO_OPT_STRINGIFY_(x) #x

/* Parses argv[1..argc-1] into out, topo-webhook's way: "--name value" (or
 * the alias) only, a later value replaces an earlier one. 0 on success; 1
 * when --help (or -h) was given (nothing else is parsed); -1 with a message
 * in why: "--port: missing value or unknown option", or "bad option or
 * value: --port 0"; TOPO_ENOMEM. */
int topo_opts_parse(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                    char *why, size_t why_size);

/* The same, topoassign's way: "--name=value" too; an option given twice is
 * refused unless it is a TOPO_OPT_LIST; an argument that is not an option
 * is an operand (refused without a TOPO_OPT_OPERANDS entry); --help is
 * returned (1) only when everything else parsed. Messages name the option
 * and what is wrong: "unknown option '--x'", "unexpected argument 'x'",
 * "--count: missing value", "--count: given more than once", "--once:
 * takes no value", "--count: must be between 1 and 10, got 0", "--count:
 * expected an integer, got \"x\"", "--output: expected table, json or
 * yaml, got \"xml\"". */
int topo_opts_parse_strict(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                           char *why, size_t why_size);

/* Frees the topo_opt_list of every TOPO_OPT_LIST and TOPO_OPT_OPERANDS
 * entry in out (they are empty after). */
void topo_opts_free(const topo_opt *table, size_t n, void *out);

/* --help text: usage_line, then each section and option (name, arg,
 * wrapped help with its bounds, choices and default). 0 or a topo_buf error. */
int topo_opts_help(const topo_opt *table, size_t n, const char *usage_line, topo_buf *out);
/* The same with a paragraph (wrapped) between the usage and the options. */
int topo_opts_help_intro(const topo_opt *table, size_t n, const char *usage_line,
                         const char *intro, topo_buf *out);

/* The same as a Markdown reference page titled program. */
int topo_opts_markdown(const topo_opt *table, size_t n, const char *program,
                       const char *usage_line, const char *intro, topo_buf *out);

/* One command's part of a page: a heading of `level` '#'s titled title,
 * the usage in a code block, intro, then the table (its sections one
 * level deeper). For programs with subcommands, after their own header. */
int topo_opts_markdown_section(const topo_opt *table, size_t n, int level, const char *title,
                               const char *usage_line, const char *intro, topo_buf *out);

#endif
