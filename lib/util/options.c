/* Command-line options from a table (topo/options.h). */
#include "topo/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const topo_opt *find(const topo_opt *table, size_t n, const char *a)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, a) == 0 || (table[i].alias && strcmp(table[i].alias, a) == 0))
            return &table[i];
    return NULL;
}

/* Stores v for option o into out; -1 when v is not a value of o. */
static int store(const topo_opt *o, const char *v, void *out)
{
    char *at = (char *)out + o->offset;
    switch (o->type) {
    case TOPO_OPT_STRING:
        if (v[0] == '\0')
            return -1;
        *(const char **)(void *)at = v;
        return 0;
    case TOPO_OPT_UINT: {
        char *end = NULL;
        if (v[0] < '0' || v[0] > '9')
            return -1;
        errno = 0;
        unsigned long x = strtoul(v, &end, 10);
        if (errno != 0 || *end != '\0' || x < o->min || x > o->max)
            return -1;
        *(unsigned long *)(void *)at = x;
        return 0;
    }
    case TOPO_OPT_BOOL:
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
            return -1;
        *(int *)(void *)at = v[0] == 't';
        return 0;
    case TOPO_OPT_CHOICE:
        for (size_t i = 0; o->choices && o->choices[i]; i++)
            if (strcmp(o->choices[i], v) == 0) {
                *(const char **)(void *)at = v;
                return 0;
            }
        return -1;
    case TOPO_OPT_FLAG:
    default:
        return -1;
    }
}

int topo_opts_parse(const topo_opt *table, size_t n, int argc, char **argv, void *out,
                    char *why, size_t why_size)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        const topo_opt *o = find(table, n, a);
        if (o != NULL && o->type == TOPO_OPT_FLAG) {
            *(int *)(void *)((char *)out + o->offset) = 1;
            continue;
        }
        if (i + 1 >= argc) {
            snprintf(why, why_size, "%s: missing value or unknown option", a);
            return -1;
        }
        const char *v = argv[++i];
        if (o == NULL || store(o, v, out) != 0) {
            snprintf(why, why_size, "bad option or value: %s %s", a, v);
            return -1;
        }
    }
    return 0;
}

/* What help says after an option's text: its bounds, choices, default. */
static void details(const topo_opt *o, topo_buf *b)
{
    int range = 1;
    if (o->type == TOPO_OPT_UINT) {
        topo_buf_printf(b, " (%lu..%lu", o->min, o->max);
    } else if (o->type == TOPO_OPT_CHOICE) {
        topo_buf_puts(b, " (");
        for (size_t i = 0; o->choices && o->choices[i]; i++)
            topo_buf_printf(b, "%s%s", i ? "|" : "", o->choices[i]);
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

int topo_opts_help(const topo_opt *table, size_t n, const char *usage_line, topo_buf *out)
{
    enum { INDENT = 27, WIDTH = 86 };
    topo_buf_printf(out, "%s\n", usage_line);
    for (size_t i = 0; i < n; i++) {
        const topo_opt *o = &table[i];
        if (o->section != NULL)
            topo_buf_printf(out, "\n%s\n", o->section);
        size_t start = out->len;
        topo_buf_printf(out, "  %s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
                        o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        size_t col = out->len - start;
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

int topo_opts_markdown(const topo_opt *table, size_t n, const char *program,
                       const char *usage_line, const char *intro, topo_buf *out)
{
    topo_buf_printf(out,
                    "<!-- Generated from %s's option table (`%s --help-markdown`); a test "
                    "fails when it differs. -->\n# %s\n\n```\n%s\n```\n\n%s\n",
                    program, program, program, usage_line, intro ? intro : "");
    for (size_t i = 0; i < n; i++) {
        const topo_opt *o = &table[i];
        if (o->section != NULL)
            topo_buf_printf(out, "\n## %s\n\n| option | value | meaning |\n| --- | --- | --- |\n",
                            o->section);
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
    return out->error;
}
