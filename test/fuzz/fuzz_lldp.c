/* libFuzzer harness for the lldpd neighbour parser (topo_lldp_parse): any
 * bytes give facts or an error, never a crash, a leak, or facts that break
 * their promises (one host, every cable from it to a known switch, no more
 * cables than neighbours). topo_lldp_add agrees with it, and a document it
 * refuses leaves the facts untouched (all or nothing). Seeds:
 * fixtures/sources/lldp. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "topo/lldp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_facts *f = NULL;
    topo_err err = TOPO_ERR_INIT;
    size_t n = 0;
    if (topo_facts_create(&f, "lldp", &err) != 0)
        return 0;
    int parsed =
        topo_lldp_parse(&n, f, "node-a", (const char *)data, size, "fuzz.json", &err) == 0;
    if (parsed) {
        if (topo_facts_host_count(f) != 1 || topo_facts_link_count(f) > n)
            abort();
        for (size_t i = 0; i < topo_facts_link_count(f); i++) {
            topo_facts_link l = topo_facts_link_at(f, i);
            if (!l.is_host_link || l.host != 0 || l.sw >= topo_facts_switch_count(f) ||
                l.port == NULL)
                abort();
        }
    } else if (err.text[0] == '\0') {
        abort(); /* every error says what */
    }
    topo_facts *g = NULL;
    topo_err e2 = TOPO_ERR_INIT;
    int refused = 0;
    size_t m = 0;
    if (topo_facts_create(&g, "lldp", &e2) == 0) {
        int rc = topo_lldp_add(&refused, &m, g, "node-a", (const char *)data, size, "fuzz.json",
                               &e2);
        if ((rc == 0) != parsed ||
            (rc == 0 && (m != n || topo_facts_link_count(g) != topo_facts_link_count(f))))
            abort(); /* the same document read the same */
        if (refused && (topo_facts_host_count(g) != 0 || topo_facts_link_count(g) != 0))
            abort(); /* refused: nothing of it added */
        if (rc != 0 && e2.text[0] == '\0')
            abort();
        topo_facts_free(g);
    }
    topo_facts_free(f);
    return 0;
}
