/* JSON text → jansson tree, with "source:line:column: message" errors. */
#include "topo/codec.h"

#include "topo/json.h"

int topo_codec_json_parse(json_t **out, const char *text, size_t len, const char *source,
                          topo_err *err)
{
    json_error_t jerr;
    const char *src = source != NULL ? source : "<input>";
    int rc = topo_json_load(out, text, len, JSON_REJECT_DUPLICATES, &jerr);

    if (rc == TOPO_ENOMEM)
        return topo_err_nomem(err, src);
    if (rc < 0) {
        int line = jerr.line > 0 ? jerr.line : 1;
        int column = jerr.column > 0 ? jerr.column : 1;
        topo_err_set(err, TOPO_EINVALID, "%s:%d:%d: %s", src, line, column, jerr.text);
        topo_err_at(err, source, line, column);
    }
    return rc;
}
