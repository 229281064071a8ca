/* libFuzzer harness for topo-webhook's ResourceQuota decoder
 * (topo_resourcequota_decode), which reads what the API server sends in
 * lists and watch events: any JSON gives room entries or an error, never a
 * crash, a leak or an entry that breaks the decoder's promises (sorted,
 * distinct names, problems kept within the cap). Seeds:
 * fixtures/fuzz/resourcequota. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/resourcequota.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = NULL;
    topo_err err = TOPO_ERR_INIT;
    topo_pool *pool = topo_pool_create();
    topo_resourcequota q;
    if (pool == NULL)
        return 0;
    if (topo_codec_json_parse(&obj, (const char *)data, size, "fuzz.json", &err) == 0 &&
        topo_resourcequota_decode(&q, obj, pool, &err) == 0) {
        size_t kept = q.nproblems < TOPO_RESOURCEQUOTA_PROBLEMS_MAX
                          ? q.nproblems
                          : TOPO_RESOURCEQUOTA_PROBLEMS_MAX;
        for (size_t i = 1; i < q.nroom; i++)
            if (strcmp(q.room[i - 1].name, q.room[i].name) >= 0)
                abort();
        /* every name is a pod resource: "pods", or what requests.<name> limits */
        for (size_t i = 0; i < q.nroom; i++) {
            /* Any length: a fixed buffer would cut a long name and fail
             * the check on the harness's own copy. */
            const char *quota_name = topo_pool_printf(pool, "requests.%s", q.room[i].name);
            const char *back;
            if (quota_name == NULL)
                continue;
            back = topo_resourcequota_pod_resource(quota_name);
            if (strcmp(q.room[i].name, "pods") != 0 &&
                (back == NULL || strcmp(back, q.room[i].name) != 0))
                abort();
        }
        for (size_t i = 0; i < kept; i++)
            if (q.problems[i] == NULL)
                abort();
    }
    json_decref(obj);
    topo_pool_free(pool);
    return 0;
}
