/* topoassign: Kueue-compatible topology assignment, offline. The command
 * table below, each command's option table in its cmd_*.c. Run through a
 * link named kubectl-topo it is a kubectl plugin: show and assign on the
 * live cluster (plugin_main). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "topo/buf.h"
#include "topo/options.h"
#include "topo/version.h"

static const cli_command *const commands[] = {
    &cli_assign, &cli_show,     &cli_generate, &cli_cases,
    &cli_cache,  &cli_simulate, &cli_release,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Every command as the reference page lists it: `cache` is three. */
static const cli_command *const documented[] = {
    &cli_assign,       &cli_show,        &cli_generate,  &cli_cases,
    &cli_cache_import, &cli_cache_stats, &cli_cache_sync, &cli_simulate,
    &cli_release,
};
#define NDOCUMENTED (sizeof documented / sizeof documented[0])

static const char usage_line[] = "usage: topoassign <command> [options]\n"
                                 "       kubectl topo <show|assign|release> [options]";
static const char intro[] =
    "Kueue-compatible topology assignment, offline: place a PodSet on a cluster read from "
    "kubectl output, fixtures or a topo cache file, show a cluster's topology, generate "
    "synthetic clusters, run Kueue's conformance cases, make and sync cache files, replay "
    "job traces to compare placement policies. Linked as "
    "kubectl-topo it is a kubectl plugin: kubectl topo show and kubectl topo assign read the "
    "live cluster. Exit status: 0 placed, 1 does not fit, 2 bad input.";

/* The kubectl plugin: the name it answers to, its commands, its help. show
 * and assign read the cluster through --live; release always talks to it. */
#define PLUGIN_NAME "kubectl-topo"
static const cli_command *const plugin_commands[] = {&cli_show, &cli_assign,
                                                          &cli_release};
#define NPLUGIN (sizeof plugin_commands / sizeof plugin_commands[0])
static const char plugin_usage_line[] =
    "usage: kubectl topo <show|assign|release> [--kubeconfig FILE] [--context NAME] [options]";
static const char plugin_intro[] =
    "Installed as kubectl-topo on the PATH (a link to topoassign is enough: it reads the "
    "name it was run by), topoassign is a kubectl plugin. kubectl topo show and kubectl topo "
    "assign take the options of topoassign show and assign, but read the live cluster: its "
    "Nodes and Pods listed once through the kubeconfig (--kubeconfig FILE, else the files of "
    "$KUBECONFIG merged as kubectl merges them, else ~/.kube/config, else in-cluster; "
    "--context NAME, else its current-context) into a temporary cache, "
    "removed after. assign answers where a job would fit right now and show where the free "
    "GPUs are. Without --levels, the levels are the cluster's: topo-webhook's configuration "
    "(the ConfigMap the chart installs), else Kueue's Topology (--topology NAME picks one of "
    "several); stderr says which. kubectl hands a plugin no flags of its own: give "
    "--kubeconfig and --context after the command. Room the webhook holds for pods not "
    "created yet is not seen (topoassign show --db on its cache file shows it). Exit status: "
    "0 placed or shown, 1 does not fit, 2 bad input or the cluster could not be read. kubectl "
    "topo release removes topo's scheduling gate from the pods still waiting under it, "
    "unplaced (before or after uninstalling topo; its own exit status).";
static const char plugin_examples[] =
    "  kubectl topo show\n"
    "  kubectl topo show --levels topology.topo.io/rack,kubernetes.io/hostname\n"
    "  kubectl topo assign --context prod \\\n"
    "      --count 8 --request nvidia.com/gpu=8 --required topology.topo.io/rack\n"
    "  kubectl topo assign --topology racks --podset job.yaml -o json\n"
    "  kubectl topo release --all-namespaces --dry-run\n";

static void usage(FILE *out)
{
    fprintf(out, "%s\n\ncommands:\n", usage_line);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n'topoassign <command> --help' describes a command's options;\n"
                 "'topoassign --version' prints the version;\n"
                 "'kubectl topo' (linked as " PLUGIN_NAME ") runs show, assign and release on "
                 "the live cluster.\n"
                 "exit status: 0 placed, 1 does not fit, 2 bad input\n");
}

static void plugin_usage(FILE *out)
{
    topo_buf b = TOPO_BUF_INIT(0);
    topo_opts_help_intro(NULL, 0, plugin_usage_line, plugin_intro, &b);
    topo_buf_printf(&b, "\ncommands:\n");
    for (size_t i = 0; i < NPLUGIN; i++)
        topo_buf_printf(&b, "  %-9s %s\n", plugin_commands[i]->name, plugin_commands[i]->summary);
    topo_buf_printf(&b, "\nexamples:\n%s\n'kubectl topo <command> --help' describes a "
                        "command's options.\n",
                    plugin_examples);
    char *text = topo_buf_take(&b, NULL);
    fputs(text != NULL ? text : "kubectl topo: out of memory\n", out);
    free(text);
}

/* kubectl topo <show|assign|release> ...: show and assign with --live first
 * (unless given), so that they read the cluster. */
static int plugin_main(int argc, char **argv)
{
    cli_set_program("kubectl topo");
    if (argc < 2) {
        plugin_usage(stderr);
        return TOPO_CLI_EXIT_BADINPUT;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        plugin_usage(stdout);
        return cli_output_status();
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("kubectl topo (topoassign) %s\n", TOPO_VERSION);
        return TOPO_CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NPLUGIN; i++) {
        if (strcmp(argv[1], plugin_commands[i]->name) != 0)
            continue;
        int live = plugin_commands[i] == &cli_release;
        for (int k = 2; k < argc; k++)
            live |= strcmp(argv[k], "--live") == 0;
        char **args = calloc((size_t)argc + 2, sizeof(*args));
        if (args == NULL) {
            fprintf(stderr, "kubectl topo: out of memory\n");
            return TOPO_CLI_EXIT_BADINPUT;
        }
        int n = 0;
        args[n++] = argv[1];
        static char live_flag[] = "--live";
        if (!live)
            args[n++] = live_flag;
        for (int k = 2; k < argc; k++)
            args[n++] = argv[k];
        int rc = plugin_commands[i]->run(n, args);
        free(args);
        return rc;
    }
    fprintf(stderr, "kubectl topo: unknown command '%s' (show, assign, release; topoassign "
                    "has the offline ones)\n",
            argv[1]);
    plugin_usage(stderr);
    return TOPO_CLI_EXIT_BADINPUT;
}

static int is_plugin(const char *argv0)
{
    const char *slash = argv0 != NULL ? strrchr(argv0, '/') : NULL;
    const char *base = slash != NULL ? slash + 1 : argv0;
    return base != NULL && strcmp(base, PLUGIN_NAME) == 0;
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
    topo_buf_printf(&b,
                    "\n## kubectl topo\n\n```\n%s\n```\n\n%s\n\n| command | what it does |\n"
                    "| --- | --- |\n",
                    plugin_usage_line, plugin_intro);
    for (size_t i = 0; i < NPLUGIN; i++)
        topo_buf_printf(&b, "| `kubectl topo %s` | %s, on the live cluster |\n",
                        plugin_commands[i]->name, plugin_commands[i]->summary);
    topo_buf_printf(&b, "\nExamples:\n\n```\n%s```\n", plugin_examples);
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
    return cli_output_status();
}

int main(int argc, char **argv)
{
    if (argc > 0 && is_plugin(argv[0]))
        return plugin_main(argc, argv);
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
