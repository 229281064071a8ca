/* Small text helpers of the ibnetdiscover reader: blanks, hex GUIDs, and
 * errors that name their line. */
#include <stdarg.h>
#include <stdio.h>

#include "ibnetdiscover_internal.h"
#include "topo/guid.h"

int ibd_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

void ibd_skip_blanks(ibd_span *s)
{
    while (s->p < s->end && ibd_is_blank(*s->p))
        s->p++;
}

void ibd_trim(ibd_span *s)
{
    ibd_skip_blanks(s);
    while (s->end > s->p && ibd_is_blank(s->end[-1]))
        s->end--;
}

/* The one GUID scanner (topo/guid.h). */
int ibd_take_hex(ibd_span *s, uint64_t *out)
{
    size_t used = 0;
    if (topo_guid_scan(out, &used, s->p, (size_t)(s->end - s->p)) != 0)
        return -1;
    s->p += used;
    return 0;
}

int ibd_take_guid(ibd_span *s, uint64_t *out)
{
    if (s->end - s->p < 3 || s->p[0] != '0' || (s->p[1] != 'x' && s->p[1] != 'X'))
        return -1;
    ibd_span rest = {s->p + 2, s->end};
    if (ibd_take_hex(&rest, out) != 0)
        return -1;
    s->p = rest.p;
    return 0;
}

int ibd_fail(topo_err *err, int code, const char *source, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    topo_err_set(err, code, "%s:%d: %s", source, line, msg);
    topo_err_at(err, source, line, 0);
    return code;
}
