/* Bearer tokens: reading the token file and keeping secrets out of freed memory. */
#include "http_internal.h"

#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/limits.h"

void topo_http_wipe(void *p, size_t n)
{
    /* Through a volatile pointer, so the stores are not optimised away as
     * dead before free(). */
    volatile unsigned char *v = p;
    while (n-- > 0)
        *v++ = 0;
}

void topo_http_token_free(char *token)
{
    if (token == NULL)
        return;
    topo_http_wipe(token, strlen(token));
    free(token);
}

int topo_http_token_check(const char *token, size_t len, topo_err *err)
{
    if (len == 0)
        return topo_err_set(err, TOPO_EINVALID, "bearer token is empty");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)token[i];
        if (c <= 0x20 || c >= 0x7f)
            return topo_err_set(err, TOPO_EINVALID,
                                "bearer token has a space, control or non-ASCII byte at offset %zu",
                                i);
    }
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int topo_http_token_read(char **out, const char *path, topo_err *err)
{
    int error = 0;
    char *text = NULL;
    size_t len = 0, full = 0;

    *out = NULL;
    error = topo_codec_read_file(&text, &len, path, TOPO_MAX_CREDENTIAL_FILE, err);
    if (error < 0)
        goto cleanup;
    full = len;
    /* Token files usually end in "\n"; kubectl and client-go trim it too. */
    size_t start = 0;
    while (start < len && is_space(text[start]))
        start++;
    while (len > start && is_space(text[len - 1]))
        len--;
    if ((error = topo_http_token_check(text + start, len - start, err)) < 0) {
        topo_err_wrap(err, "%s", path);
        goto cleanup;
    }
    if (start > 0)
        memmove(text, text + start, len - start);
    len -= start;
    text[len] = '\0';
    *out = text;
    text = NULL;

cleanup:
    if (text != NULL) {
        topo_http_wipe(text, full);
        free(text);
    }
    return error;
}
