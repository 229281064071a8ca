/* topoassign: Kueue-compatible topology assignment, offline. The command
 * table below, each command's option table in its cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "topo/buf.h"
#include "topo/options.h"
#include "topo/version.h"

static const topo_cli_command *const commands[] = {
    &topo_cli_assign, &topo_cli_show,  &topo_cli_generate,
    &topo_cli_cases,  &topo_cli_cache, &topo_cli_simulate,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Every command as the reference page lists it: `cache` is three. */
static const topo_cli_command *const documented[] = {
    &topo_cli_assign,       &topo_cli_show,        &topo_cli_generate,  &topo_cli_cases,
    &topo_cli_cache_import, &topo_cli_cache_stats, &topo_cli_cache_sync, &topo_cli_simulate,
};
#define NDOCUMENTED (sizeof documented / sizeof documented[0])

static const char usage_line[] = "usage: topoassign <command> [options]";
static const char intro[] =
    "Kueue-compatible topology assignment, offline: place a PodSet on a cluster read from "
    "kubectl output, fixtures or a topo cache file, show a cluster's topology, generate "
    "synthetic clusters, run Kueue's conformance cases, make and sync cache files, replay "
    "job traces to compare placement policies. Exit status: 0 placed, 1 does not fit, 2 bad "
    "input.";

static void usage(FILE *out)
{
    fprintf(out, "%s\n\ncommands:\n", usage_line);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n'topoassign <command> --help' describes a command's options;\n"
                 "'topoassign --version' prints the version.\n"
                 "exit status: 0 placed, 1 does not fit, 2 bad input\n");
}

/* docs/cli/topoassign.md: this program, then every command's table. */
static int markdown(void)
{
    topo_buf b = TOPO_BUF_INIT(0);
    topo_buf_printf(&b,
                    "<!-- Generated from topoassign's option tables (`topoassign "
                    "--help-markdown`); a test fails when it differs. -->\n# topoassign\n\n"
                    "```\n%s\n```\n\n%s\n\n| command | what it does |\n| --- | --- |\n",
                    usage_line, intro);
    for (size_t i = 0; i < NDOCUMENTED; i++)
        topo_buf_printf(&b, "| `%s` | %s |\n", documented[i]->name, documented[i]->summary);
    for (size_t i = 0; i < NDOCUMENTED; i++) {
        char title[64];
        snprintf(title, sizeof title, "topoassign %s", documented[i]->name);
        topo_opts_markdown_section(documented[i]->opts, documented[i]->nopts, 2, title,
                                   documented[i]->usage, documented[i]->intro, &b);
    }
    char *text = topo_buf_take(&b, NULL);
    if (text == NULL) {
        fprintf(stderr, "topoassign: out of memory\n");
        return TOPO_CLI_EXIT_BADINPUT;
    }
    fputs(text, stdout);
    free(text);
    return fflush(stdout) == 0 ? TOPO_CLI_EXIT_OK : TOPO_CLI_EXIT_BADINPUT;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return TOPO_CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--help-markdown") == 0)
        return markdown();
    if (strcmp(argv[1], "--version") == 0) {
        printf("topoassign %s\n", TOPO_VERSION);
        return TOPO_CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i]->name) == 0)
            return commands[i]->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "topoassign: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return TOPO_CLI_EXIT_BADINPUT;
}
