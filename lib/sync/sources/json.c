/* Size-checked JSON parsing and borrowed typed members for the JSON
 * sources (json_internal.h). */
#include "json_internal.h"

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
    return topo_codec_json_parse(out, text, len, source, err);
}

int srcjson_each(int *found, const char *text, size_t len, size_t max, const char *what,
                 const char *source, const topo_codec_each *how, topo_err *err)
{
    *found = 0;
    if (len > max || text == NULL) {
        json_t *none = NULL;
        return srcjson_parse(&none, text, len, max, what, source, err);
    }
    return topo_codec_json_each(found, text, len, source, how, err);
}

int srcjson_string(const char **out, const json_t *obj, const char *key, const char *path,
                   int required, topo_err *err)
{
    const json_t *v = NULL;
    int rc = topo_decode_member(&v, obj, key, path, JSON_STRING, required, err);
    *out = NULL;
    if (rc != 0 || v == NULL)
        return rc;
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        char p[TOPO_DECODE_PATH_MAX];
        return topo_err_set(err, TOPO_EINVALID, "%s: NUL byte in string",
                            topo_decode_path_key(p, sizeof(p), path, key));
    }
    *out = json_string_value(v);
    return 0;
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
