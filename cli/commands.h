/* The topoassign command table: one file per subcommand (cmd_<name>.c), each
 * thin over lib/, each with one option table (topo/options.h) that drives
 * its parsing, its --help and its part of docs/cli/topoassign.md. Every
 * command returns the process exit status: 0 placed/ok, 1 does not fit,
 * 2 bad input or usage. */
#ifndef TOPO_CLI_COMMANDS_H
#define TOPO_CLI_COMMANDS_H

#include <stddef.h>

#include "topo/options.h"

#define TOPO_CLI_EXIT_OK 0
#define TOPO_CLI_EXIT_NOFIT 1
#define TOPO_CLI_EXIT_BADINPUT 2

typedef struct cli_command {
    const char *name;    /* "assign", "cache import" */
    const char *summary; /* one line for `topoassign --help` */
    const char *usage;   /* "usage: topoassign assign ..." (lines) */
    const char *intro;   /* what it does and its exit status: one paragraph */
    const topo_opt *opts;
    size_t nopts;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
} cli_command;

extern const cli_command cli_assign;
extern const cli_command cli_show;
extern const cli_command cli_generate;
extern const cli_command cli_cases;
extern const cli_command cli_simulate;
extern const cli_command cli_release; /* cmd_release.c */
int cli_cmd_assign(int argc, char **argv);
int cli_cmd_show(int argc, char **argv);
int cli_cmd_generate(int argc, char **argv);
int cli_cmd_cases(int argc, char **argv);
int cli_cmd_simulate(int argc, char **argv);
int cli_cmd_release(int argc, char **argv);
int cli_cmd_cache_sync(int argc, char **argv);
extern const cli_command cli_cache_import; /* cmd_cache.c */
extern const cli_command cli_cache_stats;  /* cmd_cache.c */
extern const cli_command cli_cache_sync;   /* cmd_cache_sync.c */

/* `topoassign cache`: dispatches to import, stats or sync; no options of
 * its own. */
extern const cli_command cli_cache;

/* Stores the defaults of cmd's table into args (topo_opts_defaults: the
 * caller presets nothing else, and applies no default again), then parses
 * argv with it (topo_opts_parse). -1: go on; else the exit status, the
 * help (0, on stdout) or the message (2, "topoassign <cmd>: <what> (see
 * 'topoassign <cmd> --help')" on stderr) printed. The caller frees args'
 * lists (topo_opts_free) either way. */
int cli_parse(const cli_command *cmd, int argc, char **argv, void *args);
/* The same, marking in given (cmd->nopts bytes) the rows given, for the
 * checks between options (topo_opts_given). */
int cli_parse_given(const cli_command *cmd, int argc, char **argv, void *args,
                         unsigned char *given);

#endif
