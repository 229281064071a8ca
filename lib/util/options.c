/* Command-line options from a table (topo/options.h). */
#include "topo/options.h"
#include "topo/str.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/array.h"
#include "topo/error.h"

const char *const topo_opt_log_formats[] = {"json", "text", NULL};
const char *const topo_opt_log_levels[] = {"debug", "info", "warn", "warning", "error", NULL};

/* The option named name (n bytes of it) or aliased so; operands are not
 * options. */
static const topo_opt *find(const topo_opt *table, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (table[i].type == TOPO_OPT_OPERANDS)
            continue;
        if ((strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0) ||
            (table[i].alias && strlen(table[i].alias) == len &&
             strncmp(table[i].alias, name, len) == 0))
            return &table[i];
    }
    return NULL;
}

static int list_add(topo_opt_list *l, const char *v)
{
    if (l->n == l->cap &&
        topo_array_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
        return TOPO_ENOMEM;
    l->v[l->n++] = v;
    return 0;
}

/* An unsigned decimal within o's bounds; why says what is wrong. */
static int store_uint(const topo_opt *o, const char *v, unsigned long long *out, char *why,
                      size_t why_size)
{
    /* Written as a person writes a count: decimal digits, a '-' only to be
     * told it is out of range (no blanks, '+', hexadecimal or exponent). */
    const char *digits = v[0] == '-' ? v + 1 : v;
    size_t n = strspn(digits, "0123456789");
    if (v[0] == '\0') {
        snprintf(why, why_size, "empty value");
        return -1;
    }
    if (n == 0 || digits[n] != '\0') {
        snprintf(why, why_size, "expected an integer, got \"%s\"", v);
        return -1;
    }
    errno = 0;
    unsigned long long u = v[0] == '-' ? 0 : strtoull(v, NULL, 10);
    if (v[0] == '-' && o->min == 0) {
        snprintf(why, why_size, "expected a non-negative integer, got \"%s\"", v);
        return -1;
    }
    if (v[0] == '-' || errno == ERANGE || u < o->min || u > o->max) {
        /* the value as written: "-0" or 2^64 are not what strtoull makes of them */
        snprintf(why, why_size, "must be between %llu and %llu, got %s", o->min, o->max, v);
        return -1;
    }
    *out = u;
    return 0;
}

/* Digits, an optional fraction and exponent: what a person writes for a
 * number of seconds, not the rest strtod takes (leading blanks, a sign,
 * hexadecimal, inf, nan). */
/* A decimal number in [min, max] (TOPO_OPT_NUMBER) or in (0, max]. */
static int store_number(const topo_opt *o, const char *v, double *out, char *why,
                        size_t why_size)
{
    char *end = NULL;
    errno = 0;
    double x = topo_str_is_decimal(v, 1) ? strtod(v, &end) : 0;
    int ok = end != NULL && errno == 0 && end != v && *end == '\0' && x <= (double)o->max;
    if (o->type == TOPO_OPT_NUMBER)
        ok = ok && x >= (double)o->min;
    else
        ok = ok && x > 0;
    if (!ok) {
        if (o->type == TOPO_OPT_NUMBER)
            snprintf(why, why_size, "expected a number within [%llu, %llu], got \"%s\"",
                     o->min, o->max, v);
        else
            snprintf(why, why_size, "expected a positive number up to %llu, got \"%s\"", o->max,
                     v);
        return -1;
    }
    *out = x;
    return 0;
}

/* "expected a, b or c, got \"v\"" */
static void choice_error(const topo_opt *o, const char *v, char *why, size_t why_size)
{
    size_t len = (size_t)snprintf(why, why_size, "expected ");
    for (size_t i = 0; o->choices && o->choices[i] && len < why_size; i++)
        len += (size_t)snprintf(why + len, why_size - len, "%s%s", o->choices[i],
                                o->choices[i + 1] == NULL ? ""
                                : o->choices[i + 2] == NULL ? " or "
                                                            : ", ");
    if (len < why_size)
        snprintf(why + len, why_size - len, ", got \"%s\"", v);
}

/* Stores v for option o into out: 0; -1 when v is not a value of o (why
 * says why); TOPO_ENOMEM. */
static int store(const topo_opt *o, const char *v, void *out, char *why, size_t why_size)
{
    char *at = (char *)out + o->offset;
    switch (o->type) {
    case TOPO_OPT_STRING:
    case TOPO_OPT_LIST:
        if (v[0] == '\0') {
            snprintf(why, why_size, "empty value");
            return -1;
        }
        if (o->type == TOPO_OPT_LIST)
            return list_add((topo_opt_list *)(void *)at, v);
        *(const char **)(void *)at = v;
        return 0;
    case TOPO_OPT_UINT:
    case TOPO_OPT_U64: {
        unsigned long long u = 0;
        if (store_uint(o, v, &u, why, why_size) != 0)
            return -1;
        if (o->type == TOPO_OPT_UINT) {
            *(unsigned long *)(void *)at = (unsigned long)u; /* bounds fit an unsigned long */
        } else {
            ((topo_opt_u64 *)(void *)at)->value = (uint64_t)u;
            ((topo_opt_u64 *)(void *)at)->given = 1;
        }
        return 0;
    }
    case TOPO_OPT_NUMBER:
    case TOPO_OPT_POSITIVE:
        return store_number(o, v, (double *)(void *)at, why, why_size);
    case TOPO_OPT_BOOL:
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
            snprintf(why, why_size, "expected true or false, got \"%s\"", v);
            return -1;
        }
        *(int *)(void *)at = v[0] == 't';
        return 0;
    case TOPO_OPT_CHOICE:
        for (size_t i = 0; o->choices && o->choices[i]; i++)
            if (strcmp(o->choices[i], v) == 0) {
                *(const char **)(void *)at = v;
                return 0;
            }
        choice_error(o, v, why, why_size);
        return -1;
    case TOPO_OPT_OPERANDS:
        return list_add((topo_opt_list *)(void *)at, v);
    case TOPO_OPT_FLAG:
    default:
        snprintf(why, why_size, "takes no value");
        return -1;
    }
}

/* One argument (and its value) of topo_opts_parse: 0, or -1 / a
 * code with the message in why. seen marks the options given so far. */
static int strict_arg(const topo_opt *table, size_t n, int argc, char **argv, int *i, void *out,
                      unsigned char *seen, char *why, size_t why_size)
{
    const char *arg = argv[*i], *value = NULL;
    char reason[256];
    const topo_opt *o = find(table, n, arg, strlen(arg)); /* whole: an alias, "--name" */
    if (o == NULL && (arg[0] != '-' || arg[1] == '\0')) { /* an operand; "-" is stdin */
        for (size_t k = 0; k < n; k++)
            if (table[k].type == TOPO_OPT_OPERANDS)
                return store(&table[k], arg, out, why, why_size);
        snprintf(why, why_size, "unexpected argument '%s'", arg);
        return -1;
    }
    if (o == NULL && strncmp(arg, "--", 2) != 0) { /* "-o" where no option has that alias */
        snprintf(why, why_size, "unknown option '%s'", arg);
        return -1;
    }
    if (o == NULL) { /* "--name=value" */
        const char *eq = strchr(arg, '=');
        size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        if (eq == NULL || (o = find(table, n, arg, len)) == NULL) {
            snprintf(why, why_size, "unknown option '%.*s'", (int)len, arg);
            return -1;
        }
        value = eq + 1;
    }
    if (o->type == TOPO_OPT_FLAG && value != NULL) {
        snprintf(why, why_size, "%s: takes no value", o->name);
        return -1;
    }
    if (o->type != TOPO_OPT_FLAG && value == NULL) {
        if (*i + 1 >= argc) {
            snprintf(why, why_size, "%s: missing value", o->name);
            return -1;
        }
        value = argv[++*i];
    }
    /* Given again, the last value wins (a TOPO_OPT_LIST appends), as Go's
     * flag packages do for every Kubernetes component: the chart's
     * extraArgs override a flag the chart already passes. */
    seen[o - table] = 1;
    if (o->type == TOPO_OPT_FLAG) {
        *(int *)(void *)((char *)out + o->offset) = 1;
        return 0;
    }
    int rc = store(o, value, out, reason, sizeof reason);
    if (rc == TOPO_ENOMEM)
        snprintf(why, why_size, "out of memory");
    else if (rc != 0)
        snprintf(why, why_size, "%s: %s", o->name, reason);
    return rc;
}

int topo_opts_parse(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                    char *why, size_t why_size)
{
    return topo_opts_parse_given(table, n, argc, argv, out, NULL, why, why_size);
}

int topo_opts_parse_given(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                          unsigned char *given, char *why, size_t why_size)
{
    unsigned char *seen = given != NULL ? given : calloc(n > 0 ? n : 1, 1);
    int help = 0, rc = 0;
    if (seen == NULL) {
        snprintf(why, why_size, "out of memory");
        return TOPO_ENOMEM;
    }
    if (given != NULL)
        memset(given, 0, n);
    for (int i = 1; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            help = 1;
        else
            rc = strict_arg(table, n, argc, argv, &i, out, seen, why, why_size);
    }
    if (given == NULL)
        free(seen);
    return rc != 0 ? rc : help;
}

int topo_opts_given(const topo_opt *table, size_t n, const unsigned char *given,
                    const char *name)
{
    const topo_opt *o = find(table, n, name, strlen(name));
    return o != NULL && given[o - table];
}

void topo_opts_defaults(const topo_opt *table, size_t n, void *out)
{
    char why[256];
    for (size_t i = 0; i < n; i++) {
        const topo_opt *o = &table[i];
        switch (o->type) {
        case TOPO_OPT_UINT:
        case TOPO_OPT_U64:
        case TOPO_OPT_NUMBER:
        case TOPO_OPT_POSITIVE:
        case TOPO_OPT_CHOICE:
        case TOPO_OPT_BOOL:
            /* A default that is not a value describes one: left to the caller. */
            if (o->def != NULL)
                (void)store(o, o->def, out, why, sizeof why);
            if (o->type == TOPO_OPT_U64)
                ((topo_opt_u64 *)(void *)((char *)out + o->offset))->given = 0;
            break;
        default:
            break;
        }
    }
}

void topo_opts_free(const topo_opt *table, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        if (table[i].type != TOPO_OPT_LIST && table[i].type != TOPO_OPT_OPERANDS)
            continue;
        topo_opt_list *l = (topo_opt_list *)(void *)((char *)out + table[i].offset);
        free(l->v);
        memset(l, 0, sizeof(*l));
    }
}

/* What help says after an option's text: its bounds, choices, default. */
static void details(const topo_opt *o, topo_buf *b)
{
    int range = 1;
    if (o->type == TOPO_OPT_UINT || o->type == TOPO_OPT_U64 || o->type == TOPO_OPT_NUMBER) {
        topo_buf_printf(b, " (%llu..%llu", o->min, o->max);
    } else if (o->type == TOPO_OPT_POSITIVE) {
        topo_buf_printf(b, " (positive, at most %llu", o->max);
    } else if (o->type == TOPO_OPT_CHOICE) {
        topo_buf_puts(b, " (");
        for (size_t i = 0; o->choices && o->choices[i]; i++)
            topo_buf_printf(b, "%s%s", i ? "|" : "", o->choices[i]);
    } else if (o->type == TOPO_OPT_LIST) {
        topo_buf_puts(b, " (repeatable");
    } else if (o->def != NULL) {
        topo_buf_puts(b, " (");
        range = 0;
    } else {
        return;
    }
    if (o->def != NULL)
        topo_buf_printf(b, "%sdefault %s", range ? "; " : "", o->def);
    topo_buf_puts(b, ")");
}

/* text wrapped at width, each line after the first indented by indent. */
static void wrap(topo_buf *b, const char *text, size_t col, size_t indent, size_t width)
{
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (w == 0)
            break;
        if (col > indent && col + 1 + w > width) {
            topo_buf_printf(b, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            topo_buf_putc(b, ' ');
            col++;
        }
        topo_buf_put(b, p, w);
        col += w;
        p += w;
    }
}

/* The option's name as help lists it: "-o, --output FORMAT", "FILE...". */
static void synopsis(const topo_opt *o, topo_buf *b)
{
    topo_buf_printf(b, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                    o->arg ? " " : "", o->arg ? o->arg : "");
}

int topo_opts_help(const topo_opt *table, size_t n, const char *usage_line, topo_buf *out)
{
    return topo_opts_help_intro(table, n, usage_line, NULL, out);
}

int topo_opts_help_intro(const topo_opt *table, size_t n, const char *usage_line,
                         const char *intro, topo_buf *out)
{
    enum { INDENT = 27, WIDTH = 86 };
    topo_buf_printf(out, "%s\n", usage_line);
    if (intro != NULL) {
        topo_buf_putc(out, '\n');
        wrap(out, intro, 0, 0, WIDTH);
        topo_buf_putc(out, '\n');
    }
    for (size_t i = 0; i < n; i++) {
        const topo_opt *o = &table[i];
        if (o->section != NULL)
            topo_buf_printf(out, "\n%s\n", o->section);
        topo_buf_puts(out, "  ");
        size_t start = out->len;
        synopsis(o, out);
        size_t col = out->len - start + 2;
        if (col + 1 >= INDENT) {
            topo_buf_printf(out, "\n%*s", INDENT, "");
        } else {
            topo_buf_printf(out, "%*s", (int)(INDENT - col), "");
        }
        topo_buf text = TOPO_BUF_INIT(0);
        topo_buf_puts(&text, o->help);
        details(o, &text);
        if (text.error == 0)
            wrap(out, text.ptr, INDENT, INDENT, WIDTH);
        else
            out->error = text.error;
        topo_buf_dispose(&text);
        topo_buf_putc(out, '\n');
    }
    return out->error;
}

/* Text in a Markdown table cell: a '|' would end the cell. */
static void md_cell(topo_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            topo_buf_putc(b, '\\');
        topo_buf_putc(b, *s);
    }
}

/* The table's rows, its sections as headings of `level` '#'s. */
static void md_rows(const topo_opt *table, size_t n, int level, topo_buf *out)
{
    for (size_t i = 0; i < n; i++) {
        const topo_opt *o = &table[i];
        if (o->section != NULL)
            topo_buf_printf(out, "\n%.*s %s\n\n| option | value | meaning |\n| --- | --- | --- |\n",
                            level, "######", o->section);
        else if (i == 0)
            topo_buf_puts(out, "\n| option | value | meaning |\n| --- | --- | --- |\n");
        topo_buf_printf(out, "| `%s`%s%s%s | ", o->name, o->alias ? " (`" : "",
                        o->alias ? o->alias : "", o->alias ? "`)" : "");
        md_cell(out, o->arg ? o->arg : "");
        topo_buf_puts(out, " | ");
        topo_buf text = TOPO_BUF_INIT(0);
        topo_buf_puts(&text, o->help);
        details(o, &text);
        if (text.error == 0)
            md_cell(out, text.ptr);
        else
            out->error = text.error;
        topo_buf_dispose(&text);
        topo_buf_puts(out, " |\n");
    }
}

int topo_opts_markdown(const topo_opt *table, size_t n, const char *program,
                       const char *usage_line, const char *intro, topo_buf *out)
{
    topo_buf_printf(out,
                    "<!-- Generated from %s's option table (`%s --help-markdown`); a test "
                    "fails when it differs. -->\n# %s\n\n```\n%s\n```\n\n%s\n",
                    program, program, program, usage_line, intro ? intro : "");
    md_rows(table, n, 2, out);
    return out->error;
}

int topo_opts_markdown_section(const topo_opt *table, size_t n, int level, const char *title,
                               const char *usage_line, const char *intro, topo_buf *out)
{
    if (level < 1 || level > 5)
        level = 2;
    topo_buf_printf(out, "\n%.*s %s\n\n```\n%s\n```\n", level, "#####", title, usage_line);
    if (intro != NULL)
        topo_buf_printf(out, "\n%s\n", intro);
    md_rows(table, n, level + 1, out);
    return out->error;
}
