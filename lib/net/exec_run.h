/* Running a credential plugin (exec_cred.c): one child process, no shell,
 * its standard output collected up to a limit, a deadline, and the child
 * always reaped. Kept apart from the decoding so that a parser (and its
 * fuzzer) never starts a process. */
#ifndef TOPO_NET_EXEC_RUN_H
#define TOPO_NET_EXEC_RUN_H

#include <stddef.h>

#include "topo/buf.h"
#include "topo/error.h"

typedef struct topo_exec_run_opts {
    /* argv[0] is the command: searched in PATH when it has no '/'.
     * NULL-terminated. */
    const char *const *argv;
    /* "NAME=VALUE" entries set over this process's environment (a name
     * given here replaces the inherited one); NULL-terminated, or NULL. */
    const char *const *env;
    /* Non-zero: the child reads this process's standard input (an
     * interactive plugin asking for a password) and stays in our process
     * group (the terminal's foreground group). Zero: its stdin is /dev/null
     * and it gets a process group of its own, killed whole on a timeout. */
    int interactive;
    long timeout_ms;   /* > 0 */
    size_t max_output; /* > 0: more bytes on stdout is TOPO_ELIMIT */
} topo_exec_run_opts;

/* Runs the command with stderr passed through (the plugin talks to the
 * user there) and its stdout into *out (cleared first; bounded by
 * max_output, not by out's own maximum, which must leave room for one byte
 * more). *exit_status gets the exit code, or 128 + the signal number
 * for a child killed by a signal (as a shell reports it).
 *
 * Returns 0 when the child ran to its end (whatever its exit status);
 * TOPO_ENOTFOUND when the command does not exist (the message names it);
 * TOPO_ETIMEOUT when it ran past timeout_ms, TOPO_ELIMIT when it printed
 * more than max_output (in both cases it is killed); TOPO_EIO for other
 * failures to start it. The child is reaped on every path. Messages have
 * no prefix: the caller names the plugin. */
int net_exec_run(topo_buf *out, int *exit_status, const topo_exec_run_opts *opts,
                  topo_err *err);

#endif
