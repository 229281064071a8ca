/* JSON from an outside source (a NetBox, UFM or LLDP payload, a saved
 * copy of one) parsed within a memory budget and a depth (topo/codec.h
 * topo_codec_json_parse_source). jansson's tree is many times its text:
 * real payloads 4 to 16 times (docs/sync.md), an array of empty objects
 * over 70 times (`[{},{},...]`: each `{}` is 3 bytes of text and a hash
 * table of its own). Bounding the body's bytes alone let a 16 MiB answer
 * take topo-sync to 1.26 GB; counting what jansson allocates while it
 * parses (topo_json_budget_begin) bounds the tree instead. */
#include "topo/codec.h"

#include "topo/json.h"

size_t topo_codec_source_budget(size_t len)
{
    size_t b = len <= TOPO_MAX_PARSE_MEMORY / TOPO_PARSE_MEMORY_RATIO
                   ? len * TOPO_PARSE_MEMORY_RATIO
                   : TOPO_MAX_PARSE_MEMORY;
    return b < TOPO_MIN_PARSE_MEMORY ? TOPO_MIN_PARSE_MEMORY : b;
}

/* Nesting deeper than TOPO_MAX_SOURCE_DEPTH: 1 (and where), found before
 * jansson builds anything. Brackets inside strings are not nesting. */
static int too_deep(const char *text, size_t len, size_t *at)
{
    size_t depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > TOPO_MAX_SOURCE_DEPTH) {
                *at = i;
                return 1;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

static int over_budget(topo_err *err, const char *source, size_t len, size_t budget)
{
    const char *src = source != NULL ? source : "<input>";
    if (budget == TOPO_MAX_PARSE_MEMORY)
        return topo_err_set(err, TOPO_ELIMIT,
                            "%s: the body of %zu bytes needs more than %zu bytes of memory once "
                            "parsed, the most any payload may take; refused",
                            src, len, budget);
    return topo_err_set(err, TOPO_ELIMIT,
                        "%s: the body of %zu bytes needs more than %zu bytes of memory once "
                        "parsed (real payloads need at most %u times their size); refused",
                        src, len, budget, (unsigned)TOPO_PARSE_MEMORY_RATIO);
}

static int check_depth(const char *text, size_t len, const char *source, topo_err *err)
{
    size_t at = 0;
    if (!too_deep(text, len, &at))
        return 0;
    return topo_err_set(err, TOPO_ELIMIT,
                        "%s: nested deeper than %d arrays and objects (at byte %zu); refused",
                        source != NULL ? source : "<input>", TOPO_MAX_SOURCE_DEPTH, at);
}

int topo_codec_json_parse_source(json_t **out, const char *text, size_t len, const char *source,
                                 topo_err *err)
{
    *out = NULL;
    int rc = check_depth(text, len, source, err);
    if (rc != 0)
        return rc;
    size_t budget = topo_codec_source_budget(len);
    topo_json_budget_begin(budget);
    rc = topo_codec_json_parse(out, text, len, source, err);
    if (topo_json_budget_end() && rc != 0)
        rc = over_budget(err, source, len, budget);
    return rc;
}

int topo_codec_json_each_source(int *found, const char *text, size_t len, const char *source,
                                const topo_codec_each *how, topo_err *err)
{
    *found = 0;
    int rc = check_depth(text, len, source, err);
    if (rc != 0) {
        *found = 1; /* refused: not a shape to parse whole instead */
        return rc;
    }
    size_t budget = topo_codec_source_budget(len);
    topo_json_budget_begin(budget);
    rc = topo_codec_json_each(found, text, len, source, how, err);
    if (topo_json_budget_end() && rc != 0)
        rc = over_budget(err, source, len, budget);
    return rc;
}
