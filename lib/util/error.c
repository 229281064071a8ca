#include "topo/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message cut to fit ends on a whole UTF-8 character: the text reaches
 * jansson (AdmissionReview status, logs), which refuses a broken one. */
static void trim_partial_utf8(char *text, size_t size)
{
    size_t n = strlen(text);
    if (n + 1 < size || n == 0)
        return; /* not cut */
    size_t start = n;
    while (start > 0 && ((unsigned char)text[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0)
        return;
    unsigned char lead = (unsigned char)text[start - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (n - (start - 1) < want)
        text[start - 1] = '\0';
}

int topo_err_set(topo_err *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
    trim_partial_utf8(err->text, sizeof(err->text));
    err->code = code;
    return code;
}

int topo_err_wrap(topo_err *err, const char *fmt, ...)
{
    if (err == NULL)
        return TOPO_EGENERIC;
    char prefix[TOPO_ERR_TEXT_MAX];
    char old[TOPO_ERR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->text, sizeof(old));
    /* Concatenate by hand: truncation of a long message is fine here. */
    size_t n = strlen(prefix);
    if (n > sizeof(err->text) - 3)
        n = sizeof(err->text) - 3;
    memcpy(err->text, prefix, n);
    err->text[n++] = ':';
    err->text[n++] = ' ';
    size_t rest = strlen(old);
    if (rest > sizeof(err->text) - 1 - n)
        rest = sizeof(err->text) - 1 - n;
    memcpy(err->text + n, old, rest);
    err->text[n + rest] = '\0';
    trim_partial_utf8(err->text, sizeof(err->text));
    if (err->code == 0)
        err->code = TOPO_EGENERIC;
    return err->code;
}

void topo_err_at(topo_err *err, const char *source, int line, int column)
{
    if (err == NULL)
        return;
    err->source = source;
    err->line = line;
    err->column = column;
}

void topo_err_clear(topo_err *err)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->text[0] = '\0';
    err->source = NULL;
    err->line = 0;
    err->column = 0;
}

const char *topo_err_name(int code)
{
    switch (code) {
    case TOPO_OK:
        return "OK";
#define TOPO_XX_NAME(name, value, text) \
    case TOPO_##name:                   \
        return "TOPO_" #name;
        TOPO_ERROR_MAP(TOPO_XX_NAME)
#undef TOPO_XX_NAME
    default:
        return "TOPO_EUNKNOWN";
    }
}

const char *topo_strerror(int code)
{
    switch (code) {
    case TOPO_OK:
        return "success";
#define TOPO_XX_TEXT(name, value, text) \
    case TOPO_##name:                   \
        return text;
        TOPO_ERROR_MAP(TOPO_XX_TEXT)
#undef TOPO_XX_TEXT
    default:
        return "unknown error";
    }
}

int topo_err_nomem(topo_err *err, const char *what)
{
    if (what == NULL || what[0] == '\0')
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    return topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", what);
}
