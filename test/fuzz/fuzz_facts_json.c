/* libFuzzer harness for topo-sync's facts documents (topo_facts_json_decode):
 * never a crash or a leak; a document that decodes encodes to a canonical
 * document that decodes to the same facts and encodes to the same bytes
 * again (so what the store holds is stable), with every cable's indices in
 * range. Seeds: fixtures/fuzz/facts (the encoder's documents of the source
 * fixtures, and one with every shape facts can hold). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/facts_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const topo_facts *f)
{
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (l.sw >= topo_facts_switch_count(f))
            abort();
        if (l.is_host_link ? (l.host != TOPO_FACTS_NO_HOST && l.host >= topo_facts_host_count(f))
                           : (l.other >= topo_facts_switch_count(f) || l.other <= l.sw))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_facts *f = NULL, *g = NULL;
    char *once = NULL, *twice = NULL;
    size_t n1 = 0, n2 = 0;
    topo_err err = TOPO_ERR_INIT;

    if (topo_facts_json_decode(&f, (const char *)data, size, "fuzz", &err) != 0) {
        if (f != NULL || err.code >= 0 || err.text[0] == '\0')
            abort();
        return 0;
    }
    check(f);
    if (topo_facts_json_encode(&once, &n1, f, &err) != 0)
        goto cleanup; /* out of memory only */
    if (topo_facts_json_decode(&g, once, n1, "canonical", &err) != 0)
        abort(); /* the encoder wrote what the decoder refuses */
    if (topo_facts_host_count(g) != topo_facts_host_count(f) ||
        topo_facts_switch_count(g) != topo_facts_switch_count(f) ||
        topo_facts_link_count(g) != topo_facts_link_count(f) ||
        strcmp(topo_facts_source(g), topo_facts_source(f)) != 0)
        abort();
    if (topo_facts_json_encode(&twice, &n2, g, &err) != 0)
        goto cleanup;
    if (n1 != n2 || memcmp(once, twice, n1) != 0)
        abort(); /* not canonical */
cleanup:
    free(once);
    free(twice);
    topo_facts_free(f);
    topo_facts_free(g);
    return 0;
}
