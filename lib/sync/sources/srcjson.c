/* Size-checked JSON parsing for the JSON sources (srcjson_internal.h). */
#include "srcjson_internal.h"

#include <string.h>

#include "topo/codec.h"

int srcjson_parse(json_t **out, const char *text, size_t len, size_t max, const char *what,
                  const char *source, topo_err *err)
{
    *out = NULL;
    if (len > max)
        return topo_err_set(err, TOPO_ELIMIT, "%s%s%s of %zu bytes exceeds the limit of %zu",
                            source ? source : "", source ? ": " : "", what, len, max);
    if (text == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s%sno %s", source ? source : "",
                            source ? ": " : "", what);
    return topo_codec_json_parse_source(out, text, len, source, err);
}

int srcjson_each(int *found, const char *text, size_t len, size_t max, const char *what,
                 const char *source, const topo_codec_each *how, topo_err *err)
{
    *found = 0;
    if (len > max || text == NULL) {
        json_t *none = NULL;
        return srcjson_parse(&none, text, len, max, what, source, err);
    }
    return topo_codec_json_each_source(found, text, len, source, how, err);
}

int srcjson_wrap(topo_err *err, int code, const char *source)
{
    if (err == NULL || source == NULL || code == TOPO_ENOMEM)
        return code;
    size_t n = strlen(source);
    if (strncmp(err->text, source, n) != 0 || (err->text[n] != ':' && err->text[n] != '\0'))
        topo_err_wrap(err, "%s", source);
    err->code = code;
    return code;
}
