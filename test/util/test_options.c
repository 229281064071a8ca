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
    assert_string_equal(why, "--enabled: missing value");
    assert_int_equal(parse(&a, why, 9, "-p", "65535", "--file=x.yaml", "--quiet", "--mode",
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

    /* the one grammar: the message names the option and what is wrong */
    static const struct {
        const char *opt, *value, *why;
    } bad[] = {
        {"--port", "0", "--port: must be between 1 and 65535, got 0"},
        {"--port", "65536", "--port: must be between 1 and 65535, got 65536"},
        {"--port", "-1", "--port: must be between 1 and 65535, got -1"},
        {"--port", "12x", "--port: expected an integer, got \"12x\""},
        {"--mode", "quick", "--mode: expected fast or safe, got \"quick\""},
        {"--enabled", "yes", "--enabled: expected true or false, got \"yes\""},
        {"--file", "", "--file: empty value"},
        {"--nope", "1", "unknown option '--nope'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(&a, why, 3, bad[i].opt, bad[i].value), -1);
        assert_string_equal(why, bad[i].why);
    }
    assert_int_equal(parse(&a, why, 3, "--port", "1"), 0);
    /* given again, the last value wins (the chart's extraArgs override) */
    assert_int_equal(parse(&a, why, 5, "--port", "1", "-p", "2"), 0);
    assert_int_equal(a.port, 2);
    assert_int_equal(parse(&a, why, 5, "-p", "0", "--port", "2"), -1);
    assert_string_equal(why, "--port: must be between 1 and 65535, got 0");
    assert_int_equal(parse(&a, why, 3, "--quiet", "-h"), 1);
    assert_int_equal(parse(&a, why, 2, "--help"), 1);
}

/* Every default that is a value of its row's type lands in the struct;
 * a descriptive one, a string's, and a row without one are left alone. */
static void test_options__defaults(void **state)
{
    (void)state;
    typedef struct dargs {
        unsigned long port, workers;
        double share;
        const char *mode, *file;
        int enabled;
        topo_opt_u64 seed;
    } dargs;
    static const topo_opt dtable[] = {
        {"--port", NULL, TOPO_OPT_UINT, "N", 1, 65535, NULL, "9443", "p", offsetof(dargs, port),
         NULL},
        {"--workers", NULL, TOPO_OPT_UINT, "N", 1, 64, NULL, "online cores", "w",
         offsetof(dargs, workers), NULL},
        {"--share", NULL, TOPO_OPT_NUMBER, "F", 0, 1, NULL, "0.25", "s", offsetof(dargs, share),
         NULL},
        {"--mode", NULL, TOPO_OPT_CHOICE, "MODE", 0, 0, modes, "safe", "m", offsetof(dargs, mode),
         NULL},
        {"--file", NULL, TOPO_OPT_STRING, "FILE", 0, 0, NULL, "every file", "f",
         offsetof(dargs, file), NULL},
        {"--enabled", NULL, TOPO_OPT_BOOL, "true|false", 0, 0, NULL, "true", "e",
         offsetof(dargs, enabled), NULL},
        {"--seed", NULL, TOPO_OPT_U64, "N", 0, UINT64_MAX, NULL, "42", "s", offsetof(dargs, seed),
         NULL},
    };
    dargs d;
    memset(&d, 0, sizeof d);
    d.enabled = -1;
    topo_opts_defaults(dtable, sizeof dtable / sizeof dtable[0], &d);
    assert_int_equal(d.port, 9443);
    assert_int_equal(d.workers, 0);
    assert_true(d.share == 0.25);
    assert_string_equal(d.mode, "safe");
    assert_null(d.file);
    assert_int_equal(d.enabled, 1);
    assert_true(d.seed.value == 42);
    assert_int_equal(d.seed.given, 0); /* a default is not given */

    /* a value given replaces the default */
    static char prog[] = "prog", port[] = "--port=80", seed[] = "--seed=7";
    char *argv[] = {prog, port, seed};
    char why[256];
    assert_int_equal(topo_opts_parse(dtable, sizeof dtable / sizeof dtable[0], 3, argv, &d, why,
                                     sizeof why),
                     0);
    assert_int_equal(d.port, 80);
    assert_true(d.seed.value == 7);
    assert_int_equal(d.seed.given, 1);
}

/* topo_opts_parse_given: the rows named on the command line (by name,
 * alias or --name=value), told apart from the defaults stored before, the
 * same value as the default included; the marks are cleared first. */
static void test_options__given(void **state)
{
    (void)state;
    static char prog[] = "prog", port[] = "-p", v9443[] = "9443", mode[] = "--mode=fast",
                bad[] = "--port=0";
    char *argv[] = {prog, port, v9443, mode};
    unsigned char given[N];
    char why[256];
    args a;

    memset(&a, 0, sizeof a);
    memset(given, 7, sizeof given);
    topo_opts_defaults(table, N, &a);
    assert_int_equal(topo_opts_parse_given(table, N, 4, argv, &a, given, why, sizeof why), 0);
    assert_int_equal(a.port, 9443); /* the default's value, but given */
    assert_true(topo_opts_given(table, N, given, "--port"));
    assert_true(topo_opts_given(table, N, given, "-p"));
    assert_true(topo_opts_given(table, N, given, "--mode"));
    assert_false(topo_opts_given(table, N, given, "--enabled")); /* its default stored */
    assert_int_equal(a.enabled, 1);
    assert_false(topo_opts_given(table, N, given, "--quiet"));
    assert_false(topo_opts_given(table, N, given, "--file"));
    assert_false(topo_opts_given(table, N, given, "--nope"));

    /* nothing given: nothing marked, a failed parse too (the rest unknown) */
    assert_int_equal(topo_opts_parse_given(table, N, 1, argv, &a, given, why, sizeof why), 0);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(given[i], 0);
    char *argv_bad[] = {prog, bad};
    assert_int_equal(topo_opts_parse_given(table, N, 2, argv_bad, &a, given, why, sizeof why),
                     -1);
    assert_string_equal(why, "--port: must be between 1 and 65535, got 0");

    /* without marks it is topo_opts_parse */
    assert_int_equal(topo_opts_parse_given(table, N, 4, argv, &a, NULL, why, sizeof why), 0);
}

/* TOPO_OPT_U64: the whole range of uint64_t, within the row's bounds, and
 * whether it was given. */
static void test_options__u64(void **state)
{
    (void)state;
    typedef struct uargs {
        topo_opt_u64 seed, small;
    } uargs;
    static const topo_opt utable[] = {
        {"--seed", NULL, TOPO_OPT_U64, "N", 0, UINT64_MAX, NULL, NULL, "any seed",
         offsetof(uargs, seed), NULL},
        {"--small", NULL, TOPO_OPT_U64, "N", 5, 10, NULL, NULL, "bounded",
         offsetof(uargs, small), NULL},
    };
    static char prog[] = "prog";
    uargs u;
    char why[256];
    static const struct {
        const char *arg, *why;
    } cases[] = {
        {"--seed=18446744073709551615", NULL},
        {"--seed=0", NULL},
        {"--seed=-1", "--seed: expected a non-negative integer, got \"-1\""},
        {"--seed=-0", "--seed: expected a non-negative integer, got \"-0\""},
        {"--seed=18446744073709551616",
         "--seed: must be between 0 and 18446744073709551615, got 18446744073709551616"},
        {"--seed=", "--seed: empty value"},
        {"--seed=x", "--seed: expected an integer, got \"x\""},
        {"--small=4", "--small: must be between 5 and 10, got 4"},
        {"--small=11", "--small: must be between 5 and 10, got 11"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char arg[64];
        snprintf(arg, sizeof arg, "%s", cases[i].arg);
        char *argv[] = {prog, arg};
        memset(&u, 0, sizeof u);
        int rc = topo_opts_parse(utable, 2, 2, argv, &u, why, sizeof why);
        if (cases[i].why == NULL) {
            assert_int_equal(rc, 0);
            assert_int_equal(u.seed.given, 1);
            assert_int_equal(u.small.given, 0);
        } else {
            assert_int_equal(rc, -1);
            assert_string_equal(why, cases[i].why);
        }
    }
    char arg[] = "--seed=18446744073709551615";
    char *argv[] = {prog, arg};
    memset(&u, 0, sizeof u);
    assert_int_equal(topo_opts_parse(utable, 2, 2, argv, &u, why, sizeof why), 0);
    assert_true(u.seed.value == UINT64_MAX);
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_opts_help(utable, 2, "usage: prog", &b), 0);
    assert_non_null(strstr(b.ptr, "any seed (0..18446744073709551615)"));
    assert_non_null(strstr(b.ptr, "bounded (5..10)"));
    topo_buf_dispose(&b);
}

/* The daemons' shared rows: one set, its defaults from the table. */
typedef struct dmn {
    int other;
    topo_opt_daemon d;
} dmn;

static const topo_opt dmn_table[] = {
    TOPO_OPT_DAEMON_KUBECONFIG_ROW(dmn, d, NULL, "the API server"),
    TOPO_OPT_DAEMON_LEASE_ROWS(dmn, d, "prog", "hold the Lease", "Replicas:"),
    TOPO_OPT_DAEMON_HEALTH_ROWS(dmn, d, 1, "health", "its address"),
    TOPO_OPT_DAEMON_OTHER_ROWS(dmn, d, "prog", "Other:"),
};

static void test_options__daemon_rows(void **state)
{
    (void)state;
    const size_t n = sizeof dmn_table / sizeof dmn_table[0];
    dmn a;
    memset(&a, 0, sizeof a);
    topo_opts_defaults(dmn_table, n, &a);
    assert_int_equal(a.d.leader_elect, 1);
    assert_int_equal(a.d.lease_s, 15);
    assert_int_equal(a.d.health_port, 8081);
    assert_string_equal(a.d.log_format, "json");
    assert_string_equal(a.d.verbosity, "info");
    assert_null(a.d.lease_name); /* a string's default is the program's */
    static char prog[] = "prog", k[] = "--kubeconfig=kc", le[] = "--leader-elect", f[] = "false",
                ld[] = "--lease-duration=601", v[] = "--version", hp[] = "--health-port",
                zero[] = "0";
    char why[256];
    char *ok[] = {prog, k, le, f, v};
    assert_int_equal(topo_opts_parse(dmn_table, n, 5, ok, &a, why, sizeof why), 0);
    assert_string_equal(a.d.kubeconfig, "kc");
    assert_int_equal(a.d.leader_elect, 0);
    assert_int_equal(a.d.version, 1);
    assert_int_equal(a.other, 0);
    char *longer[] = {prog, ld};
    assert_int_equal(topo_opts_parse(dmn_table, n, 2, longer, &a, why, sizeof why), -1);
    assert_string_equal(why, "--lease-duration: must be between 2 and 600, got 601");
    char *nohealth[] = {prog, hp, zero};
    assert_int_equal(topo_opts_parse(dmn_table, n, 3, nohealth, &a, why, sizeof why), -1);
    assert_string_equal(why, "--health-port: must be between 1 and 65535, got 0");
    topo_buf b = TOPO_BUF_INIT(0);
    assert_int_equal(topo_opts_markdown(dmn_table, n, "prog", "usage: prog", NULL, &b), 0);
    assert_non_null(strstr(b.ptr, "| `--help-markdown` |  | print this reference as Markdown "
                                  "(docs/cli/prog.md) and exit |\n"));
    topo_buf_dispose(&b);
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

/* topoassign's syntax: "--name=value", lists, operands, repeats (the last wins),
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
    return topo_opts_parse(stable, SN, argc, argv, a, why, 256);
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
    assert_int_equal(sparse(&a, why, 5, "--count=2", "-v", "--count", "4"), 0);
    assert_int_equal(a.count, 4); /* the last value wins */
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
         "--count: must be between 1 and 10, got 99999999999999999999999"},
        {{"--count"}, "--count: missing value"},
        {{"--verbose=1"}, "--verbose: takes no value"},
        {{"-o", "xml"}, "--output: expected table, json or yaml, got \"xml\""},
        {{"--fraction", "1.5"}, "--fraction: expected a number within [0, 1], got \"1.5\""},
        {{"--qps", "0"}, "--qps: expected a positive number up to 1000, got \"0\""},
        {{"--qps", "1001"}, "--qps: expected a positive number up to 1000, got \"1001\""},
        /* what strtod takes beyond a written decimal */
        {{"--qps", " 1"}, "--qps: expected a positive number up to 1000, got \" 1\""},
        {{"--qps", "0x1"}, "--qps: expected a positive number up to 1000, got \"0x1\""},
        {{"--qps", "+1"}, "--qps: expected a positive number up to 1000, got \"+1\""},
        {{"--qps", "inf"}, "--qps: expected a positive number up to 1000, got \"inf\""},
        {{"--qps", "nan"}, "--qps: expected a positive number up to 1000, got \"nan\""},
        {{"--qps", "1e"}, "--qps: expected a positive number up to 1000, got \"1e\""},
        {{"--qps", "."}, "--qps: expected a positive number up to 1000, got \".\""},
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
    /* a short option no row has is refused, not read as a file; "-" is one */
    assert_int_equal(sparse(&a, why, 4, "-x", "json", "y.json"), -1);
    assert_string_equal(why, "unknown option '-x'");
    assert_int_equal(sparse(&a, why, 2, "-"), 0);
    assert_int_equal(a.files.n, 1);
    assert_string_equal(a.files.v[0], "-");
    topo_opts_free(stable, SN, &a);
    assert_int_equal(a.ids.n, 0);
    assert_null(a.files.v);

    /* Without an operands entry, an argument that is not an option is refused. */
    static char prog[] = "prog", extra[] = "extra";
    char *argv[] = {prog, extra};
    args b;
    memset(&b, 0, sizeof b);
    assert_int_equal(topo_opts_parse(table, N, 2, argv, &b, why, sizeof why), -1);
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
        cmocka_unit_test(test_options__defaults),
        cmocka_unit_test(test_options__given),
        cmocka_unit_test(test_options__u64),
        cmocka_unit_test(test_options__daemon_rows),
        cmocka_unit_test(test_options__help_and_markdown),
        cmocka_unit_test(test_options__strict),
        cmocka_unit_test(test_options__strict_help_and_markdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
