/* libFuzzer harness for topo-sync's configuration file parser
 * (topo_syncconfig_parse): any text gives settings or an error naming
 * where, never a crash or a leak. Seeds: fixtures/sync (valid and broken
 * files). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "topo/syncconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_syncconfig_parse(&cfg, (const char *)data, size, "fuzz.yaml", &err) == 0) {
        /* what was accepted is readable to the end: every string a view
         * holds is a whole C string */
        const topo_sync_settings *s = topo_syncconfig_settings(cfg);
        size_t sum = 0;
        for (size_t i = 0; i < s->nibnetdiscover; i++)
            sum += strlen(s->ibnetdiscover[i].file);
        for (size_t l = 0; l < s->plan.nlevels; l++)
            sum += (size_t)s->plan.levels[l];
        const topo_fetch_opts *http[] = {&s->netbox_http, &s->ufm_http, &s->lldp_http};
        for (size_t i = 0; i < 3; i++) {
            const char *strs[] = {http[i]->url,      http[i]->token_file,
                                  http[i]->token_scheme, http[i]->username,
                                  http[i]->username_file, http[i]->password_file,
                                  http[i]->ca_file};
            for (size_t j = 0; j < sizeof strs / sizeof strs[0]; j++)
                sum += strs[j] ? strlen(strs[j]) : 0;
            /* an accepted url passed the fetcher's own checks */
            if (http[i]->url && topo_fetch_check((topo_fetch_kind)i, http[i], NULL) != 0)
                __builtin_trap();
        }
        (void)sum;
    } else if (err.text[0] == '\0') {
        __builtin_trap(); /* an error always says what */
    }
    topo_syncconfig_free(cfg);
    return 0;
}
