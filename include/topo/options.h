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
 * long for TOPO_OPT_UINT, a topo_opt_u64 for TOPO_OPT_U64, a double for TOPO_OPT_NUMBER and
 * TOPO_OPT_POSITIVE, a const char * (into argv) for TOPO_OPT_STRING and
 * TOPO_OPT_CHOICE, an int for TOPO_OPT_FLAG (1 when given) and
 * TOPO_OPT_BOOL (0 or 1 from "false"/"true"; the caller presets -1 to
 * learn whether it was given), a topo_opt_list for TOPO_OPT_LIST (every
 * value of a repeated option) and TOPO_OPT_OPERANDS (the arguments that are
 * not options). */
#ifndef TOPO_OPTIONS_H
#define TOPO_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

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
    TOPO_OPT_U64,      /* a decimal in [min, max], up to 2^64-1 (seeds) */
    /* Not an option: the arguments that are not options; name is how help
     * shows them ("FILE..."). At most one entry of this type. */
    TOPO_OPT_OPERANDS,
} topo_opt_type;

typedef struct topo_opt {
    const char *name;  /* "--port" */
    const char *alias; /* "-v", or NULL */
    topo_opt_type type;
    const char *arg;                  /* the value's name in help: "N", "FILE" */
    unsigned long long min, max;      /* TOPO_OPT_UINT, _U64, _NUMBER, _POSITIVE (max only) */
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

/* The value of a TOPO_OPT_U64 entry, and whether it was given (every
 * value of the range can be meant, so none can say "not given"). */
typedef struct topo_opt_u64 {
    uint64_t value;
    int given;
} topo_opt_u64;

/* The default of a table row from the constant that applies it, so that
 * the number is written once: TOPO_OPT_DEFAULT(TOPO_FILLER_IDLE_MS_DEFAULT)
 * is "500" (the constant must be a plain literal). */
#define TOPO_OPT_DEFAULT(constant) TOPO_OPT_STRINGIFY_(constant)
#define TOPO_OPT_STRINGIFY_(x) #x

/* Parses argv[1..argc-1] into out: the one grammar of topoassign,
 * topo-webhook and topo-sync. "--name value", "--name=value" or the alias;
 * an option given twice takes its last value (a TOPO_OPT_LIST appends); an
 * argument that is not an option is an operand (refused without a
 * TOPO_OPT_OPERANDS entry); --help (or -h) is returned (1) only when
 * everything else parsed. -1 with a message in why that names the option
 * and what is wrong: "unknown option '--x'", "unexpected argument 'x'",
 * "--count: missing value", "--once:
 * takes no value", "--count: must be between 1 and 10, got 0", "--count:
 * expected an integer, got \"x\"", "--output: expected table, json or
 * yaml, got \"xml\""; TOPO_ENOMEM. Nothing is stored for an option not
 * given: call topo_opts_defaults first for the table's defaults. */
int topo_opts_parse(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                    char *why, size_t why_size);

/* topo_opts_parse that also tells which rows were given: given (n bytes,
 * or NULL) gets 1 at each row named on the command line, 0 elsewhere,
 * also when parsing fails. For the checks between options after
 * topo_opts_defaults, where a row's default and the same value given
 * look alike ("--load: only for generated jobs"). */
int topo_opts_parse_given(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                          unsigned char *given, char *why, size_t why_size);

/* Whether the row named name (or aliased so) is marked in given (from
 * topo_opts_parse_given); 0 for a name that is not in the table. */
int topo_opts_given(const topo_opt *table, size_t n, const unsigned char *given,
                    const char *name);

/* Stores into out each row's default that is a value of its type (a
 * number within its bounds, a choice, true or false), so that a default
 * is written once, in the table. Defaults that describe rather than give
 * a value ("the health port", "the config's, 300") and those of strings
 * and lists are left to the caller, who must not preset the others. */
void topo_opts_defaults(const topo_opt *table, size_t n, void *out);

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

/* Rows shared by the daemons (topo-webhook, topo-sync): each program's
 * table includes them, so a row is written once and the two agree on
 * bounds, defaults and wording. Their values land in a topo_opt_daemon
 * member of the program's struct: type and member name it. */
typedef struct topo_opt_daemon {
    const char *kubeconfig;
    int leader_elect; /* 1 unless --leader-elect false */
    const char *lease_namespace, *lease_name;
    unsigned long lease_s;
    unsigned long health_port;
    const char *health_address;
    const char *log_format, *verbosity;
    int version, help_markdown;
} topo_opt_daemon;

extern const char *const topo_opt_log_formats[]; /* json, text */
extern const char *const topo_opt_log_levels[];  /* debug, info, warn, warning, error */

#define TOPO_OPT_D_(type, m, f) offsetof(type, m.f)

/* --kubeconfig (help: what the daemon does with the API server; dflt: how
 * the file is found, TOPO_K8S_CONFIG_DEFAULT_HELP). */
#define TOPO_OPT_DAEMON_KUBECONFIG_ROW(type, m, dflt, help)                                      \
    {"--kubeconfig", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, dflt, help,                      \
     TOPO_OPT_D_(type, m, kubeconfig), NULL}

/* --leader-elect, --lease-namespace, --lease-name, --lease-duration. */
#define TOPO_OPT_DAEMON_LEASE_ROWS(type, m, lease_name_default, leader_help, section)           \
    {"--leader-elect", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL, "true", leader_help,       \
     TOPO_OPT_D_(type, m, leader_elect), section},                                              \
    {"--lease-namespace", NULL, TOPO_OPT_STRING, "NS", 0, 0, NULL, "the pod's",                  \
     "the Lease's namespace", TOPO_OPT_D_(type, m, lease_namespace), NULL},                     \
    {"--lease-name", NULL, TOPO_OPT_STRING, "NAME", 0, 0, NULL, lease_name_default,              \
     "the Lease's name (one per installation in a namespace)",                                  \
     TOPO_OPT_D_(type, m, lease_name), NULL},                                                   \
    {"--lease-duration", NULL, TOPO_OPT_UINT, "S", 2, 600, NULL, "15",                           \
     "seconds a Lease holder that stops renewing keeps the Lease from the other replicas",      \
     TOPO_OPT_D_(type, m, lease_s), NULL}

/* --health-port (min: 0 when 0 means no health server) and --health-address. */
#define TOPO_OPT_DAEMON_HEALTH_ROWS(type, m, port_min, port_help, address_help)                 \
    {"--health-port", NULL, TOPO_OPT_UINT, "N", port_min, 65535, NULL, "8081", port_help,        \
     TOPO_OPT_D_(type, m, health_port), NULL},                                                  \
    {"--health-address", NULL, TOPO_OPT_STRING, "IP", 0, 0, NULL, "every interface",             \
     address_help, TOPO_OPT_D_(type, m, health_address), NULL}

/* --log-format, --verbosity, --version, --help-markdown (program: the
 * reference page's name, docs/cli/<program>.md). */
#define TOPO_OPT_DAEMON_OTHER_ROWS(type, m, program, section)                                   \
    {"--log-format", NULL, TOPO_OPT_CHOICE, "FORMAT", 0, 0, topo_opt_log_formats, "json",        \
     "json: one JSON object per line; text: logfmt (on stderr)",                                \
     TOPO_OPT_D_(type, m, log_format), section},                                                \
    {"--verbosity", "-v", TOPO_OPT_CHOICE, "LEVEL", 0, 0, topo_opt_log_levels, "info",           \
     "the least level logged", TOPO_OPT_D_(type, m, verbosity), NULL},                          \
    {"--version", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "print the version and exit",     \
     TOPO_OPT_D_(type, m, version), NULL},                                                      \
    {"--help-markdown", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL,                             \
     "print this reference as Markdown (docs/cli/" program ".md) and exit",                     \
     TOPO_OPT_D_(type, m, help_markdown), NULL}

#endif
