/* What both trace readers (trace_csv.c, trace_public.c) do to outside text
 * before a line is theirs: the file's size limit, lines split at '\n' with
 * a CR before it dropped, each line's size limit, NUL bytes refused, a UTF-8
 * byte order mark on the first line skipped; errors that name the file and
 * the line; blanks trimmed; and the one rule for a job's id. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

int sim_lines_open(sim_lines *L, const char *text, size_t len, const char *source,
                   topo_err *err)
{
    memset(L, 0, sizeof(*L));
    L->source = source != NULL ? source : "trace";
    L->p = text;
    L->end = text + len;
    L->err = err;
    if (len > TOPO_MAX_SIM_TRACE_FILE)
        return topo_err_set(err, TOPO_ELIMIT, "%s: larger than %u bytes", L->source,
                            TOPO_MAX_SIM_TRACE_FILE);
    if ((L->buf = malloc(TOPO_MAX_SIM_LINE + 1)) == NULL)
        return topo_err_nomem(err, "trace");
    return 0;
}

void sim_lines_close(sim_lines *L)
{
    free(L->buf);
    L->buf = NULL;
}

int sim_lines_next(sim_lines *L, char **out)
{
    if (L->p >= L->end)
        return 0;
    const char *nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
    size_t n = (size_t)((nl != NULL ? nl : L->end) - L->p);
    L->line++;
    if (n > TOPO_MAX_SIM_LINE)
        return sim_lines_error(L, TOPO_ELIMIT, "line longer than %u bytes", TOPO_MAX_SIM_LINE);
    if (memchr(L->p, '\0', n) != NULL)
        return sim_lines_error(L, TOPO_EINVALID, "%s", "contains a NUL byte");
    memcpy(L->buf, L->p, n);
    L->buf[n] = '\0';
    L->p = nl != NULL ? nl + 1 : L->end;
    if (n > 0 && L->buf[n - 1] == '\r')
        L->buf[n - 1] = '\0';
    *out = L->buf;
    if (L->line == 1 && memcmp(*out, "\xef\xbb\xbf", 3) == 0)
        *out += 3; /* a UTF-8 byte order mark, as spreadsheets save CSV */
    return 1;
}

int sim_lines_error(const sim_lines *L, int code, const char *fmt, ...)
{
    char msg[TOPO_ERR_TEXT_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    topo_err_set(L->err, code, "%s:%zu: %s", L->source, L->line, msg);
    topo_err_at(L->err, L->source, (int)(L->line > INT32_MAX ? INT32_MAX : L->line), 0);
    return code;
}

char *sim_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

int sim_check_job_id(const sim_lines *L, const char *field, const char *id,
                     const topo_strmap *ids)
{
    size_t n = strlen(id);
    if (n == 0)
        return sim_lines_error(L, TOPO_EINVALID, "%s: must not be empty", field);
    if (n > TOPO_MAX_SIM_JOB_ID)
        return sim_lines_error(L, TOPO_EINVALID, "%s: longer than %u bytes", field,
                               TOPO_MAX_SIM_JOB_ID);
    /* --trace-out writes ids unquoted: what it writes must read back. */
    for (const char *p = id; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == ',' || *p == '"')
            return sim_lines_error(L, TOPO_EINVALID,
                                   "%s: byte 0x%02x at offset %zu: only printable ASCII "
                                   "without spaces, commas or quotes",
                                   field, (unsigned)(unsigned char)*p, (size_t)(p - id));
    int32_t seen = topo_strmap_get(ids, id);
    if (seen >= 0)
        return sim_lines_error(L, TOPO_EINVALID, "%s: job \"%s\" is already on line %d", field,
                               id, seen);
    return 0;
}
