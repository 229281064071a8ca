/* libFuzzer harness for topoassign simulate's public trace reader
 * (topo_sim_trace_parse_public): any bytes, read as each of Helios, Philly,
 * Acme and PAI with a node size taken from the input, give a trace or an
 * error that says what, never a crash or a leak. What is read must hold to
 * the mapping's promises (pods of at most a node, arrivals from 0 in order,
 * run times above 0, the counts adding up), and written as topo's CSV it must
 * read back the same. Seeds: fixtures/simulate/traces. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/simulate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const topo_sim_trace *t, const topo_sim_trace_stats *s, uint32_t node)
{
    size_t skipped = 0;
    for (int k = 0; k < TOPO_SIM_TRACE_SKIPS; k++)
        skipped += s->skipped[k];
    if (s->jobs != topo_sim_trace_count(t) || s->jobs + skipped != s->rows)
        abort();
    double last = 0;
    for (size_t i = 0; i < topo_sim_trace_count(t); i++) {
        const topo_sim_job *j = topo_sim_trace_job(t, i);
        if (j->pods < 1 || j->gpus < 1 || (uint32_t)j->gpus > node || !(j->duration > 0) ||
            j->arrive < last || (i == 0 && j->arrive != 0) || j->request != -1)
            abort();
        last = j->arrive;
    }
}

static void read_back(const topo_sim_trace *t)
{
    topo_sim_trace *back = NULL;
    topo_buf b = TOPO_BUF_INIT(0);
    topo_err err = TOPO_ERR_INIT;
    if (topo_sim_trace_create(&back, NULL) < 0 || topo_sim_trace_write_csv(t, &b) != 0 ||
        topo_sim_trace_parse_csv(back, b.ptr, b.len, "back.csv", &err) != 0 ||
        topo_sim_trace_count(back) != topo_sim_trace_count(t))
        abort();
    for (size_t i = 0; i < topo_sim_trace_count(t); i++) {
        const topo_sim_job *x = topo_sim_trace_job(t, i), *y = topo_sim_trace_job(back, i);
        if (strcmp(x->id, y->id) != 0 || x->pods != y->pods || x->gpus != y->gpus ||
            x->arrive != y->arrive || x->duration != y->duration)
            abort();
    }
    topo_buf_dispose(&b);
    topo_sim_trace_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The node size from the input's length: the seeds' 8 among others. */
    uint32_t node = size % 3 == 0 ? 8 : (uint32_t)(size % 16) + 1;
    topo_sim_trace *t = NULL;
    if (topo_sim_trace_create(&t, NULL) < 0)
        abort();
    for (int f = TOPO_SIM_TRACE_HELIOS; f < TOPO_SIM_TRACE_FORMATS; f++) {
        topo_sim_trace_stats s;
        topo_err err = TOPO_ERR_INIT;
        if (topo_sim_trace_parse_public(t, (topo_sim_trace_format)f, node, (const char *)data,
                                        size, "fuzz.csv", &s, &err) == 0) {
            check(t, &s, node);
            read_back(t);
        } else if (err.text[0] == '\0' || topo_sim_trace_count(t) != 0) {
            abort(); /* every error says what, and leaves no jobs */
        }
    }
    topo_sim_trace_free(t);
    return 0;
}
