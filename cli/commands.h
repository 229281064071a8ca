/* The topoassign command table: one file per subcommand (cmd_<name>.c), each
 * thin over lib/. Every command returns the process exit status:
 * 0 placed/ok, 1 does not fit, 2 bad input or usage. */
#ifndef TOPO_CLI_COMMANDS_H
#define TOPO_CLI_COMMANDS_H

#define TOPO_CLI_EXIT_OK 0
#define TOPO_CLI_EXIT_NOFIT 1
#define TOPO_CLI_EXIT_BADINPUT 2

/* argv[0] is the subcommand name. */
int topo_cli_cmd_assign(int argc, char **argv);
int topo_cli_cmd_show(int argc, char **argv);
int topo_cli_cmd_generate(int argc, char **argv);
int topo_cli_cmd_cases(int argc, char **argv);
int topo_cli_cmd_cache(int argc, char **argv);

/* `topoassign cache sync` (cmd_cache_sync.c), dispatched by cmd_cache.c. */
int topo_cli_cmd_cache_sync(int argc, char **argv);

#endif
