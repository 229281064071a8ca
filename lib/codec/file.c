/* Reading whole files with a size limit, and picking JSON or YAML. */
#define _POSIX_C_SOURCE 200809L

#include "topo/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/buf.h"

#define READ_CHUNK (64u * 1024u)

static int open_failed(const char *path, topo_err *err)
{
    int e = errno;
    return topo_err_set(err, e == ENOENT ? TOPO_ENOTFOUND : TOPO_EIO, "%s: %s", path,
                        strerror(e));
}

int topo_codec_open_regular_file(int *fd_out, const char *path, topo_err *err)
{
    struct stat st;
    int fd;
    *fd_out = -1;
    /* Opened without blocking, so that a FIFO without a writer does not
     * hang the caller (a plain open would wait for a writer for ever). */
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return open_failed(path, err);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return topo_err_set(err, TOPO_EIO, "%s: not a regular file", path);
    }
    /* Left non-blocking: a file on disk reads the same either way, while a
     * "regular" file that is a kernel interface (/proc/kmsg) would block a
     * plain read for ever; non-blocking, its read fails with EAGAIN. */
    *fd_out = fd;
    return 0;
}

/* regular_only: the path must name a regular file
 * (topo_codec_open_regular_file). */
static int read_file(char **out, size_t *out_len, const char *path, size_t max, int regular_only,
                     topo_err *err)
{
    int error = 0;
    int fd = -1;
    /* One byte past the limit is read, to tell a file of exactly max bytes
     * from a longer one. */
    topo_buf buf = TOPO_BUF_INIT(max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1);
    struct stat st;

    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;

    if (regular_only) {
        if ((error = topo_codec_open_regular_file(&fd, path, err)) < 0)
            goto cleanup;
    } else {
        do {
            fd = open(path, O_RDONLY | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            error = open_failed(path, err);
            goto cleanup;
        }
    }
    /* fstat on the descriptor we read from: a size hint and an early limit
     * check, not a separate look-up of the path. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((unsigned long long)st.st_size > (unsigned long long)max)
            goto too_large;
        (void)topo_buf_reserve(&buf, (size_t)st.st_size);
    }
    for (;;) {
        size_t want = buf.max - buf.len < READ_CHUNK ? buf.max - buf.len : READ_CHUNK;
        /* Fill what the size hint allocated before growing (a file of the
         * hinted size is read into exactly that). */
        if (buf.cap > buf.len + 1 && buf.cap - buf.len - 1 < want)
            want = buf.cap - buf.len - 1;
        if (want == 0 || topo_buf_reserve(&buf, want) != 0) {
            if (buf.error == TOPO_ENOMEM) {
                error = topo_err_nomem(err, path);
                goto cleanup;
            }
            goto too_large;
        }
        ssize_t n = read(fd, buf.ptr + buf.len, want);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                error = topo_err_set(err, TOPO_EIO,
                                     "%s: not a file of data (reading it would block)", path);
                goto cleanup;
            }
            error = topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
            goto cleanup;
        }
        if (n == 0)
            break;
        topo_buf_grown(&buf, (size_t)n);
        if (buf.len > max)
            goto too_large;
    }
    if ((*out = topo_buf_take(&buf, out_len)) == NULL)
        error = topo_err_nomem(err, path);
    goto cleanup;

too_large:
    error = topo_err_set(err, TOPO_ELIMIT, "%s: file is larger than the limit of %zu bytes", path,
                         max);
cleanup:
    topo_buf_dispose(&buf);
    if (fd >= 0)
        close(fd);
    return error;
}

int topo_codec_read_file(char **out, size_t *out_len, const char *path, size_t max,
                         topo_err *err)
{
    return read_file(out, out_len, path, max, 0, err);
}

int topo_codec_read_regular_file(char **out, size_t *out_len, const char *path, size_t max,
                                 topo_err *err)
{
    return read_file(out, out_len, path, max, 1, err);
}

static int looks_like_json(const char *text, size_t len)
{
    size_t i = 0;
    /* A UTF-8 byte order mark is not content. */
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        i = 3;
    for (; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        return c == '{' || c == '[';
    }
    return 0;
}

int topo_codec_parse(json_t **out, const char *text, size_t len, const char *source,
                     topo_err *err)
{
    if (looks_like_json(text, len))
        return topo_codec_json_parse(out, text, len, source, err);
    return topo_codec_yaml_parse(out, text, len, source, err);
}

int topo_codec_load_file(json_t **out, const char *path, size_t max, topo_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int error;

    *out = NULL;
    if ((error = topo_codec_read_file(&text, &len, path, max, err)) < 0)
        goto cleanup;
    error = topo_codec_parse(out, text, len, path, err);

cleanup:
    free(text);
    return error;
}
