/* lib/util/options.c: parsing into the caller's struct from the table
 * (bounds, choices, booleans, flags, aliases), the two error messages, and
 * the help and Markdown renderings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/options.h"

typedef struct args {
    unsigned long port;
    const char *file, *mode;
    int quiet, enabled;
} args;

static const char *const modes[] = {"fast", "safe", NULL};

static const topo_opt table[] = {
    {"--port", "-p", TOPO_OPT_UINT, "N", 1, 65535, NULL, "9443", "the port", offsetof(args, port),
     "Main:"},
    {"--file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, NULL,
     "a file whose description is long enough that the help text has to wrap it onto a "
     "second line",
     offsetof(args, file), NULL},
    {"--mode", NULL, TOPO_OPT_CHOICE, "MODE", 0, 0, modes, "safe", "how", offsetof(args, mode),
     NULL},
    {"--quiet", NULL, TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "say less", offsetof(args, quiet),
     "Other:"},
    {"--enabled", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL, "true", "on or off",
     offsetof(args, enabled), NULL},
};
#define N (sizeof table / sizeof table[0])

/* argv: the program's name, then argc - 1 option words (string literals:
 * the parser never writes them). */
static int parse(args *a, char *why, int argc, ...)
{
    static char prog[] = "prog";
    char *argv[16] = {prog};
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    memset(a, 0, sizeof *a);
    a->enabled = -1;
    why[0] = '\0';
    return topo_opts_parse(table, N, argc, argv, a, why, 256);
}

static void test_options__parse(void **state)
{
    (void)state;
    args a;
    char why[256];
    assert_int_equal(parse(&a, why, 9, "-p", "65535", "--file", "x.yaml", "--quiet", "--mode",
                           "fast", "--enabled"),
                     -1);
    assert_string_equal(why, "--enabled: missing value or unknown option");
    assert_int_equal(parse(&a, why, 10, "-p", "65535", "--file", "x.yaml", "--quiet", "--mode",
                           "fast", "--enabled", "false"),
                     0);
    assert_int_equal(a.port, 65535);
    assert_string_equal(a.file, "x.yaml");
    assert_string_equal(a.mode, "fast");
    assert_int_equal(a.quiet, 1);
    assert_int_equal(a.enabled, 0);
    /* untouched when not given */
    assert_int_equal(parse(&a, why, 1), 0);
    assert_int_equal(a.enabled, -1);
    assert_null(a.file);

    static const struct {
        const char *opt, *value, *why;
    } bad[] = {
        {"--port", "0", "bad option or value: --port 0"},
        {"--port", "65536", "bad option or value: --port 65536"},
        {"--port", "-1", "bad option or value: --port -1"},
        {"--port", "12x", "bad option or value: --port 12x"},
        {"--port", "99999999999999999999999", "bad option or value: --port 99999999999999999999999"},
        {"--mode", "quick", "bad option or value: --mode quick"},
        {"--enabled", "yes", "bad option or value: --enabled yes"},
        {"--file", "", "bad option or value: --file "},
        {"--nope", "1", "bad option or value: --nope 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(&a, why, 3, bad[i].opt, bad[i].value), -1);
        assert_string_equal(why, bad[i].why);
    }
    assert_int_equal(parse(&a, why, 2, "--nope"), -1);
    assert_string_equal(why, "--nope: missing value or unknown option");
    assert_int_equal(parse(&a, why, 3, "--quiet", "-h"), 1);
    assert_int_equal(parse(&a, why, 2, "--help"), 1);
}

static void test_options__help_and_markdown(void **state)
{
    (void)state;
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_opts_help(table, N, "usage: prog [options]", &b), 0);
    assert_string_equal(
        b.ptr,
        "usage: prog [options]\n"
        "\n"
        "Main:\n"
        "  -p, --port N             the port (1..65535; default 9443)\n"
        "  --file FILE              a file whose description is long enough that the help text\n"
        "                           has to wrap it onto a second line\n"
        "  --mode MODE              how (fast|safe; default safe)\n"
        "\n"
        "Other:\n"
        "  --quiet                  say less\n"
        "  --enabled true|false     on or off (default true)\n");
    topo_buf_dispose(&b);
    assert_int_equal(topo_opts_markdown(table, N, "prog", "usage: prog", "Intro.", &b), 0);
    assert_non_null(strstr(b.ptr, "# prog\n\n```\nusage: prog\n```\n\nIntro.\n"));
    assert_non_null(strstr(b.ptr, "## Main:\n\n| option | value | meaning |\n"));
    assert_non_null(strstr(b.ptr, "| `--port` (`-p`) | N | the port (1..65535; default 9443) |\n"));
    assert_non_null(strstr(b.ptr, "| `--quiet` |  | say less |\n"));
    /* a '|' would end the table cell */
    assert_non_null(strstr(b.ptr, "| `--mode` | MODE | how (fast\\|safe; default safe) |\n"));
    assert_non_null(strstr(b.ptr, "| `--enabled` | true\\|false | on or off (default true) |\n"));
    topo_buf_dispose(&b);
}

/* topoassign's syntax: "--name=value", lists, operands, repeats refused,
 * the messages naming what is wrong. */
typedef struct sargs {
    unsigned long count;
    double fraction, qps;
    const char *out, *format;
    int verbose;
    topo_opt_list ids, files;
} sargs;

static const char *const formats[] = {"table", "json", "yaml", NULL};

static const topo_opt stable[] = {
    {"FILE...", NULL, TOPO_OPT_OPERANDS, NULL, 0, 0, NULL, NULL, "inputs", offsetof(sargs, files),
     "Options:"},
    {"--count", NULL, TOPO_OPT_UINT, "N", 1, 10, NULL, NULL, "how many", offsetof(sargs, count),
     NULL},
    {"--fraction", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL, "0.5", "a share",
     offsetof(sargs, fraction), NULL},
    {"--qps", NULL, TOPO_OPT_POSITIVE, "Q", 0, 1000, NULL, NULL, "a rate", offsetof(sargs, qps),
     NULL},
    {"--output", "-o", TOPO_OPT_CHOICE, "FORMAT", 0, 0, formats, "table", "the format",
     offsetof(sargs, format), NULL},
    {"--id", NULL, TOPO_OPT_LIST, "ID", 0, 0, NULL, NULL, "one case", offsetof(sargs, ids), NULL},
    {"--verbose", "-v", TOPO_OPT_FLAG, NULL, 0, 0, NULL, NULL, "more", offsetof(sargs, verbose),
     NULL},
};
#define SN (sizeof stable / sizeof stable[0])

static int sparse(sargs *a, char *why, int argc, ...)
{
    static char prog[] = "prog";
    char *argv[16] = {prog};
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    topo_opts_free(stable, SN, a);
    memset(a, 0, sizeof *a);
    a->fraction = -1;
    why[0] = '\0';
    return topo_opts_parse_strict(stable, SN, argc, argv, a, why, 256);
}

static void test_options__strict(void **state)
{
    (void)state;
    sargs a;
    char why[256];
    memset(&a, 0, sizeof a);
    assert_int_equal(sparse(&a, why, 11, "x.json", "--count=3", "--id", "a", "-o", "json", "--id=b",
                            "y.json", "-v", "--qps=2.5"),
                     0);
    assert_int_equal(a.count, 3);
    assert_string_equal(a.format, "json");
    assert_int_equal(a.verbose, 1);
    assert_true(a.qps == 2.5);
    assert_true(a.fraction == -1); /* untouched */
    assert_int_equal(a.ids.n, 2);
    assert_string_equal(a.ids.v[0], "a");
    assert_string_equal(a.ids.v[1], "b");
    assert_int_equal(a.files.n, 2);
    assert_string_equal(a.files.v[1], "y.json");
    assert_int_equal(sparse(&a, why, 3, "--fraction", "0"), 0);
    assert_true(a.fraction == 0);

    static const struct {
        const char *args[3];
        const char *why;
    } bad[] = {
        {{"--count", "0"}, "--count: must be between 1 and 10, got 0"},
        {{"--count", "-3"}, "--count: must be between 1 and 10, got -3"},
        {{"--count", "four"}, "--count: expected an integer, got \"four\""},
        {{"--count", "99999999999999999999999"},
         "--count: expected an integer, got \"99999999999999999999999\""},
        {{"--count"}, "--count: missing value"},
        {{"--count=2", "--count", "3"}, "--count: given more than once"},
        {{"--verbose=1"}, "--verbose: takes no value"},
        {{"-v", "--verbose"}, "--verbose: given more than once"},
        {{"-o", "xml"}, "--output: expected table, json or yaml, got \"xml\""},
        {{"--fraction", "1.5"}, "--fraction: expected a number within [0, 1], got \"1.5\""},
        {{"--qps", "0"}, "--qps: expected a positive number, got \"0\""},
        {{"--qps", "1001"}, "--qps: expected a positive number, got \"1001\""},
        /* what strtod takes beyond a written decimal */
        {{"--qps", " 1"}, "--qps: expected a positive number, got \" 1\""},
        {{"--qps", "0x1"}, "--qps: expected a positive number, got \"0x1\""},
        {{"--qps", "+1"}, "--qps: expected a positive number, got \"+1\""},
        {{"--qps", "inf"}, "--qps: expected a positive number, got \"inf\""},
        {{"--qps", "nan"}, "--qps: expected a positive number, got \"nan\""},
        {{"--qps", "1e"}, "--qps: expected a positive number, got \"1e\""},
        {{"--qps", "."}, "--qps: expected a positive number, got \".\""},
        {{"--id", ""}, "--id: empty value"},
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"--bogus=1"}, "unknown option '--bogus'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int argc = 1;
        while (argc <= 3 && bad[i].args[argc - 1] != NULL)
            argc++;
        assert_int_equal(sparse(&a, why, argc, bad[i].args[0], bad[i].args[1], bad[i].args[2]),
                         -1);
        assert_string_equal(why, bad[i].why);
    }
    /* --help anywhere, unless something else is wrong */
    assert_int_equal(sparse(&a, why, 4, "--count", "2", "-h"), 1);
    assert_int_equal(sparse(&a, why, 4, "--help", "--count", "0"), -1);
    topo_opts_free(stable, SN, &a);
    assert_int_equal(a.ids.n, 0);
    assert_null(a.files.v);

    /* Without an operands entry, an argument that is not an option is refused. */
    static char prog[] = "prog", extra[] = "extra";
    char *argv[] = {prog, extra};
    args b;
    memset(&b, 0, sizeof b);
    assert_int_equal(topo_opts_parse_strict(table, N, 2, argv, &b, why, sizeof why), -1);
    assert_string_equal(why, "unexpected argument 'extra'");
}

static void test_options__strict_help_and_markdown(void **state)
{
    (void)state;
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_opts_help_intro(stable, SN, "usage: prog FILE...", "What it does.", &b),
                     0);
    assert_string_equal(
        b.ptr,
        "usage: prog FILE...\n"
        "\n"
        "What it does.\n"
        "\n"
        "Options:\n"
        "  FILE...                  inputs\n"
        "  --count N                how many (1..10)\n"
        "  --fraction F             a share (0..1; default 0.5)\n"
        "  --qps Q                  a rate (positive, at most 1000)\n"
        "  -o, --output FORMAT      the format (table|json|yaml; default table)\n"
        "  --id ID                  one case (repeatable)\n"
        "  -v, --verbose            more\n");
    topo_buf_dispose(&b);
    assert_int_equal(
        topo_opts_markdown_section(stable, SN, 2, "prog run", "usage: prog FILE...", "Intro.", &b),
        0);
    assert_non_null(strstr(b.ptr, "\n## prog run\n\n```\nusage: prog FILE...\n```\n\nIntro.\n"));
    assert_non_null(strstr(b.ptr, "\n### Options:\n\n| option | value | meaning |\n"));
    assert_non_null(strstr(b.ptr, "| `--id` | ID | one case (repeatable) |\n"));
    topo_buf_dispose(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options__parse),
        cmocka_unit_test(test_options__help_and_markdown),
        cmocka_unit_test(test_options__strict),
        cmocka_unit_test(test_options__strict_help_and_markdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
