/* Fabric GUIDs read from any form a tool prints and written one way
 * (include/topo/guid.h). */
#include "topo/guid.h"

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int topo_guid_scan(uint64_t *out, size_t *used, const char *s, size_t n)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && hex_value(s[i]) >= 0; i++) {
        if (i == 16)
            return -1;
        v = (v << 4) | (uint64_t)hex_value(s[i]);
    }
    if (i == 0)
        return -1;
    *out = v;
    *used = i;
    return 0;
}

/* The GUID in the n bytes at s, or -1. */
static int parse(uint64_t *out, const char *s, size_t n)
{
    size_t used = 0;
    uint64_t port = 0;
    int hex_prefix = 0;
    if (n >= 2 && (s[0] == 'S' || s[0] == 'H' || s[0] == 'R') && s[1] == '-') {
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
        hex_prefix = 1;
    }
    if (topo_guid_scan(out, &used, s, n) != 0)
        return -1;
    s += used;
    n -= used;
    if (n == 0)
        return 0;
    /* switchguid=0x<node guid>(<port guid>) */
    if (!hex_prefix || s[0] != '(' || topo_guid_scan(&port, &used, s + 1, n - 1) != 0)
        return -1;
    return n == used + 2 && s[used + 1] == ')' ? 0 : -1;
}

int topo_guid_parse(uint64_t *out, const char *s, size_t n, const char *field, topo_err *err)
{
    if (s != NULL && parse(out, s, n) == 0)
        return 0;
    return topo_err_set(err, TOPO_EINVALID,
                        "%s: not a GUID: \"%.*s\"",
                        field, (int)(n > 80 ? 80 : n), s != NULL ? s : "");
}

void topo_guid_format(char out[TOPO_GUID_TEXT_SIZE], uint64_t guid)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++)
        out[i] = hex[(guid >> (60 - 4 * i)) & 0xf];
    out[16] = '\0';
}

int topo_guid_normalise(char out[TOPO_GUID_TEXT_SIZE], const char *s, size_t n, const char *field,
                        topo_err *err)
{
    uint64_t guid = 0;
    int rc = topo_guid_parse(&guid, s, n, field, err);
    if (rc == 0)
        topo_guid_format(out, guid);
    return rc;
}
