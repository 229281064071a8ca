/* One credential plugin process: posix_spawn (no shell; a bare name looked
 * up in PATH as kubectl's Go runtime does, never relative to the current
 * directory),
 * stdout through a pipe read with poll() against a deadline and a size
 * limit, stderr inherited, and waitpid on every path. */
#define _GNU_SOURCE /* pipe2, environ */

#include "exec_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_internal.h"

extern char **environ;

/* Largest read from the pipe at once. */
#define READ_CHUNK 65536u
/* How often a child that closed its stdout is checked for its exit. */
#define REAP_POLL_NS 5000000

/* "NAME=..." → the length of NAME (the whole string when it has no '='). */
static size_t env_name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq != NULL ? (size_t)(eq - entry) : strlen(entry);
}

static int env_overridden(const char *entry, const char *const *env)
{
    size_t n = env_name_len(entry);
    for (; env != NULL && *env != NULL; env++) {
        if (env_name_len(*env) == n && strncmp(*env, entry, n) == 0)
            return 1;
    }
    return 0;
}

/* This process's environment without the names env sets, then env: the
 * array is malloc'd, the strings borrowed. */
static char **merged_env(const char *const *env)
{
    size_t n = 0, k = 0, extra = 0;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        n++;
    for (const char *const *e = env; e != NULL && *e != NULL; e++)
        extra++;
    char **out = calloc(n + extra + 1, sizeof(*out));
    if (out == NULL)
        return NULL;
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        if (!env_overridden(*e, env))
            out[k++] = *e;
    }
    for (const char *const *e = env; e != NULL && *e != NULL; e++)
        out[k++] = (char *)(uintptr_t)*e;
    out[k] = NULL;
    return out;
}

static void kill_child(pid_t pid, int own_group)
{
    /* The group: a plugin that is a shell script leaves its children
     * holding the pipe otherwise. */
    if (own_group)
        kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

static int reap(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return status;
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 255;
}

/* A regular (or any non-directory) file with an execute bit, as Go's
 * findExecutable: access(2) would also say yes to root for a 0644 file. */
static int is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && (st.st_mode & 0111) != 0;
}

/* The file a bare command name runs, found in $PATH as Go's exec.LookPath
 * (kubectl's) finds it: the first entry holding an executable of that name
 * decides; an empty entry means the current directory. A match through an
 * empty or relative entry is refused (Go 1.19's ErrDot): a stray ':' in PATH
 * must not run an "aws" that sits in the directory the user happens to be in.
 * A name with a '/' is used as it is (the kubeconfig's directory already
 * resolved a relative one). */
static int resolve_command(char *out, size_t size, const char *cmd, topo_err *err)
{
    if (strchr(cmd, '/') != NULL) {
        if (strlen(cmd) >= size)
            return topo_err_set(err, TOPO_EINVALID, "executable %.200s: path too long", cmd);
        strcpy(out, cmd);
        return 0;
    }
    const char *path = getenv("PATH");
    for (const char *dir = path; dir != NULL && *path != '\0';) {
        const char *end = strchr(dir, ':');
        size_t n = end != NULL ? (size_t)(end - dir) : strlen(dir);
        int len = n == 0 ? snprintf(out, size, "./%s", cmd)
                         : snprintf(out, size, "%.*s/%s", (int)n, dir, cmd);
        if (len > 0 && (size_t)len < size && is_executable(out)) {
            if (out[0] != '/')
                return topo_err_set(err, TOPO_EINVALID,
                                    "executable %s found only relative to the current directory "
                                    "(PATH entry \"%.*s\"): not run, as kubectl does not; put "
                                    "an absolute directory in PATH or an absolute command in the "
                                    "kubeconfig",
                                    cmd, (int)n, n == 0 ? "" : dir);
            return 0;
        }
        dir = end != NULL ? end + 1 : NULL;
    }
    return topo_err_set(err, TOPO_ENOTFOUND, "executable %s not found", cmd);
}

static int spawn(pid_t *pid, int stdout_fd, const topo_exec_run_opts *o, char **envp,
                 topo_err *err)
{
    char file[4096];
    int error = resolve_command(file, sizeof file, o->argv[0], err);
    if (error < 0)
        return error;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dflt;
    int rc;

    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        return topo_err_set(err, TOPO_ENOMEM, "cannot start it: %s", strerror(rc));
    if ((rc = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return topo_err_set(err, TOPO_ENOMEM, "cannot start it: %s", strerror(rc));
    }
    sigemptyset(&none);
    /* Signals a daemon ignores or blocks must not stay so in the plugin. */
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGHUP);
    sigaddset(&dflt, SIGCHLD);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (!o->interactive) {
        flags |= POSIX_SPAWN_SETPGROUP;
        rc = posix_spawnattr_setpgroup(&attr, 0);
        if (rc == 0)
            rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, stdout_fd, STDOUT_FILENO);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &dflt);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, flags);
    if (rc == 0)
        rc = posix_spawn(pid, file, &fa, &attr, (char *const *)(uintptr_t)o->argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == ENOENT)
        return topo_err_set(err, TOPO_ENOTFOUND, "executable %s not found", o->argv[0]);
    if (rc == EACCES)
        return topo_err_set(err, TOPO_EIO, "executable %s cannot be run (permission denied)",
                            o->argv[0]);
    if (rc != 0)
        return topo_err_set(err, rc == ENOMEM ? TOPO_ENOMEM : TOPO_EIO,
                            "executable %s cannot be started: %s", o->argv[0], strerror(rc));
    return 0;
}

/* Reads the child's stdout until EOF, the deadline or the limit. */
static int collect(topo_buf *out, int fd, uint64_t deadline_ns, const topo_exec_run_opts *o,
                   topo_err *err)
{
    for (;;) {
        uint64_t now = (uint64_t)topo_clock_ns();
        if (now >= deadline_ns)
            return topo_err_set(err, TOPO_ETIMEOUT, "did not finish within %ld ms (killed)",
                                o->timeout_ms);
        uint64_t left_ms = (deadline_ns - now + 999999u) / 1000000u;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return topo_err_set(err, TOPO_EIO, "reading its output: %s", strerror(errno));
        if (n == 0)
            continue;
        /* One byte past the limit tells a full-sized output from more. */
        size_t want = o->max_output - out->len + 1;
        if (want > READ_CHUNK)
            want = READ_CHUNK;
        if (topo_buf_reserve(out, want) != 0)
            return topo_err_set(err, TOPO_ENOMEM, "out of memory for its output");
        ssize_t got = read(fd, out->ptr + out->len, want);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0)
            return topo_err_set(err, TOPO_EIO, "reading its output: %s", strerror(errno));
        if (got == 0)
            return 0;
        if ((size_t)got > o->max_output - out->len)
            return topo_err_set(err, TOPO_ELIMIT,
                                "printed more than %zu bytes on standard output (killed)",
                                o->max_output);
        topo_buf_grown(out, (size_t)got);
    }
}

/* Waits for a child that closed its stdout, until the deadline. */
static int wait_exit(pid_t pid, int *status, uint64_t deadline_ns)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if ((uint64_t)topo_clock_ns() >= deadline_ns)
            return 1;
        topo_clock_sleep_ns(REAP_POLL_NS);
    }
}

int net_exec_run(topo_buf *out, int *exit_status, const topo_exec_run_opts *o, topo_err *err)
{
    int error = 0, fds[2] = {-1, -1}, status = 0;
    char **envp = NULL;
    pid_t pid = -1;

    topo_buf_clear(out);
    *exit_status = -1;
    if (o->argv == NULL || o->argv[0] == NULL || o->argv[0][0] == '\0' || o->timeout_ms <= 0 ||
        o->max_output == 0)
        return topo_err_set(err, TOPO_EINVALID, "no command, timeout or output limit");
    uint64_t deadline = (uint64_t)topo_clock_ns() + (uint64_t)o->timeout_ms * 1000000u;
    if ((envp = merged_env(o->env)) == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    /* Close-on-exec: no other child started meanwhile keeps the pipe open. */
    if (pipe2(fds, O_CLOEXEC) != 0) {
        error = topo_err_set(err, TOPO_EIO, "cannot make a pipe: %s", strerror(errno));
        goto cleanup;
    }
    if ((error = spawn(&pid, fds[1], o, envp, err)) < 0) {
        pid = -1;
        goto cleanup;
    }
    close(fds[1]);
    fds[1] = -1;
    if ((error = collect(out, fds[0], deadline, o, err)) < 0)
        goto cleanup;
    int w = wait_exit(pid, &status, deadline);
    if (w == 1) {
        error = topo_err_set(err, TOPO_ETIMEOUT,
                             "closed its output but did not exit within %ld ms (killed)",
                             o->timeout_ms);
        goto cleanup;
    }
    pid = -1; /* reaped (or gone: ECHILD) */
    if (w < 0) {
        error = topo_err_set(err, TOPO_EIO, "waiting for it: %s", strerror(errno));
        goto cleanup;
    }
    *exit_status = exit_code_of(status);

cleanup:
    if (pid > 0) {
        kill_child(pid, !o->interactive);
        reap(pid);
    }
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(envp);
    return error;
}
