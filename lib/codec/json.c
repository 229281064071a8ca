/* JSON text → jansson tree, with "source:line:column: message" errors. */
#include "topo/codec.h"

int topo_codec_json_parse(json_t **out, const char *text, size_t len, const char *source,
                          topo_err *err)
{
    json_error_t jerr;
    json_t *root;
    const char *src = source != NULL ? source : "<input>";

    *out = NULL;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return topo_err_set(err, TOPO_ENOMEM, "%s: out of memory", src);
        int line = jerr.line > 0 ? jerr.line : 1;
        int column = jerr.column > 0 ? jerr.column : 1;
        topo_err_set(err, TOPO_EINVALID, "%s:%d:%d: %s", src, line, column, jerr.text);
        topo_err_at(err, source, line, column);
        return TOPO_EINVALID;
    }
    *out = root;
    return 0;
}
