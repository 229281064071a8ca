/* libFuzzer harness for an LLDP collector's answer read host by host
 * (topo_codec_json_members, as lib/sync/fetch/fetch_lldp.c reads it): any
 * bytes give spans or an error, never a crash or a leak, and the walk
 * agrees with a whole parse (topo_codec_json_parse): a walk that succeeds
 * gives each member's value text, which parses to that member's value in
 * the whole tree, and the whole text parses iff every value's text does;
 * a walk that fails is text the whole parse refuses too. Each value is
 * then read as the host's lldpd document (topo_lldp_parse). Seeds:
 * fixtures/fuzz/lldpcollector. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/lldp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct walk {
    const char *text;
    json_t *values; /* key -> the member's value parsed from its span, or null */
    int all_parse;
} walk;

static int member(const char *key, size_t offset, size_t len, void *payload, topo_err *err)
{
    (void)err;
    walk *w = payload;
    json_t *v = NULL;
    topo_err e = TOPO_ERR_INIT;
    if (topo_codec_json_parse(&v, w->text + offset, len, "host.json", &e) != 0)
        w->all_parse = 0;
    if (json_object_get(w->values, key) != NULL)
        abort(); /* a duplicate key must have been refused */
    json_object_set_new(w->values, key, v ? v : json_null());
    topo_facts *f = NULL;
    size_t n = 0;
    if (topo_facts_create(&f, "lldp", &e) == 0) {
        if (topo_lldp_parse(&n, f, key, w->text + offset, len, "host.json", &e) != 0 &&
            e.text[0] == '\0')
            abort(); /* every error says what */
        topo_facts_free(f);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    walk w = {.text = text, .values = json_object(), .all_parse = 1};
    topo_err err = TOPO_ERR_INIT, whole_err = TOPO_ERR_INIT;
    json_t *whole = NULL;
    int found = 0;
    if (w.values == NULL)
        return 0;
    int rc = topo_codec_json_members(&found, text, size, "fuzz.json", member, &w, &err);
    int whole_rc = topo_codec_json_parse(&whole, text, size, "fuzz.json", &whole_err);
    if (found && rc != 0) {
        if (err.text[0] == '\0' || whole_rc == 0)
            abort(); /* refused text the whole parse takes */
    } else if (found) {
        if ((whole_rc == 0) != w.all_parse)
            abort();
        if (whole_rc == 0) {
            if (!json_is_object(whole) || json_object_size(whole) != json_object_size(w.values))
                abort();
            const char *k;
            json_t *v;
            json_object_foreach(w.values, k, v) {
                if (!json_equal(v, json_object_get(whole, k)))
                    abort();
            }
        }
    } else if (rc != 0 || json_object_size(w.values) != 0) {
        abort(); /* another shape: nothing walked */
    }
    json_decref(whole);
    json_decref(w.values);
    return 0;
}
