/* topoassign: Kueue-compatible topology assignment, offline. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

static const cli_command commands[] = {
    {"assign", topo_cli_cmd_assign, "place one PodSet on an inventory, as Kueue TAS would"},
    {"show", topo_cli_cmd_show, "print the topology tree with free/total GPUs per domain"},
    {"generate", topo_cli_cmd_generate, "write a synthetic cluster as NodeList JSON"},
    {"cases", topo_cli_cmd_cases, "run Kueue conformance cases (JSON)"},
    {"cache", topo_cli_cmd_cache, "topo cache files: import objects, stats, sync a cluster"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: topoassign <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'topoassign <command> --help' describes a command's options.\n"
                 "exit status: 0 placed, 1 does not fit, 2 bad input\n");
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
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "topoassign: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return TOPO_CLI_EXIT_BADINPUT;
}
