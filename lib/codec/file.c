/* Reading whole files with a size limit, and picking JSON or YAML. */
#define _POSIX_C_SOURCE 200809L

#include "codec/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (64u * 1024u)

int topo_codec_read_file(char **out, size_t *out_len, const char *path, size_t max,
                         topo_err *err)
{
    int error = 0;
    int fd = -1;
    char *buf = NULL;
    size_t cap = 0, len = 0;
    struct stat st;

    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;

    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        error = topo_err_set(err, e == ENOENT ? TOPO_ENOTFOUND : TOPO_EIO, "%s: %s", path,
                             strerror(e));
        goto cleanup;
    }
    /* fstat on the descriptor we read from: a size hint and an early limit
     * check, not a separate look-up of the path. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((unsigned long long)st.st_size > (unsigned long long)max) {
            error = topo_err_set(err, TOPO_ELIMIT, "%s: file is larger than the limit of %zu bytes",
                                 path, max);
            goto cleanup;
        }
        cap = (size_t)st.st_size + 1;
    }
    if (cap < 1024)
        cap = 1024;
    buf = malloc(cap);
    if (buf == NULL) {
        error = topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", path);
        goto cleanup;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > SIZE_MAX / 2) {
                error = topo_err_set(err, TOPO_ELIMIT, "%s: file too large", path);
                goto cleanup;
            }
            size_t ncap = cap * 2;
            char *nbuf = realloc(buf, ncap);
            if (nbuf == NULL) {
                error = topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", path);
                goto cleanup;
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t want = cap - 1 - len;
        if (want > READ_CHUNK)
            want = READ_CHUNK;
        ssize_t n = read(fd, buf + len, want);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            error = topo_err_set(err, TOPO_EIO, "%s: %s", path, strerror(errno));
            goto cleanup;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            error = topo_err_set(err, TOPO_ELIMIT, "%s: file is larger than the limit of %zu bytes",
                                 path, max);
            goto cleanup;
        }
    }
    buf[len] = '\0';
    *out = buf;
    buf = NULL;
    if (out_len != NULL)
        *out_len = len;

cleanup:
    free(buf);
    if (fd >= 0)
        close(fd);
    return error;
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
