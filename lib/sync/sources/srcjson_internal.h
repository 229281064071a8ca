/* Helpers shared by the sources that read JSON (lldp.c, ufm.c, netbox.c,
 * gpu.c): a size-checked parse and the source's name on messages. Their
 * fields are read with the codec's decode getters (topo/decode.h; a NULL
 * pool borrows strings from the tree), whose errors name the field path
 * ("results[3].site.name: expected a string, got an integer"). */
#ifndef TOPO_SOURCES_SRCJSON_INTERNAL_H
#define TOPO_SOURCES_SRCJSON_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "topo/codec.h"
#include "topo/decode.h"
#include "topo/error.h"

/* text of len bytes as one JSON document: TOPO_ELIMIT when len exceeds max
 * (what names the payload in the message: "lldp document"), else the
 * codec's parse of a source's payload (topo_codec_json_parse_source: a
 * memory budget and a depth) with "source:line:column" errors (source may
 * be NULL). */
int srcjson_parse(json_t **out, const char *text, size_t len, size_t max, const char *what,
                  const char *source, topo_err *err);

/* The elements of a large array in the text one at a time
 * (topo_codec_json_each), after the same checks of size and presence as
 * srcjson_parse. *found 0: the document has another shape, nothing was
 * done; parse it whole with srcjson_parse for the caller's usual message. */
int srcjson_each(int *found, const char *text, size_t len, size_t max, const char *what,
                 const char *source, const topo_codec_each *how, topo_err *err);

/* Prefixes err's message with "source: " unless the message already starts
 * with it (syntax errors from the codec do); returns err's code. */
int srcjson_wrap(topo_err *err, int code, const char *source);

#endif
