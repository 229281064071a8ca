/* bench_fabric: an ibnetdiscover dump (by default NVIDIA Selene's compute
 * fabric, 666 switches and 4,341 adapters) read, parsed into facts and
 * turned into tiers, as topo-sync does on every sync of that source.
 *
 *   1. reads the file once (topo_codec_read_file), timed alone;
 *   2. --iterations times: parse the text into fresh facts
 *      (topo_ibnetdiscover_parse), then build the fabric
 *      (topo_fabric_build); each step timed with CLOCK_MONOTONIC;
 *   3. prints min / p50 / max of parse, tiers and both together (wall
 *      time), the CPU time of both (CLOCK_PROCESS_CPUTIME_ID: on a loaded
 *      machine the wall time counts other processes' turns), the target
 *      beside their p50s, and the peak RSS (ru_maxrss).
 *
 * usage: bench_fabric [--dump FILE] [--iterations N] [--exclude-switch RE] */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topo/codec.h"
#include "topo/fabric.h"
#include "topo/ibnetdiscover.h"
#include "topo/limits.h"

/* Issue 11: Selene parse + tiers within 100 ms. */
#define TARGET_MS 100.0

#ifndef TOPO_SOURCE_DIR
#define TOPO_SOURCE_DIR "."
#endif

static double clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* CPU time of this process: what the figures would be on an idle machine
 * (the wall time of a loaded one counts other processes' turns). */
static double cpu_ms(void)
{
    return clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

static void die(const char *what, const topo_err *err)
{
    fprintf(stderr, "bench_fabric: %s: %s\n", what, err->text);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* min, p50 (nearest rank), max of n figures (sorted in place). */
static void print_row(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    printf("%-16s %9.2f %9.2f %9.2f ms\n", what, v[0], v[(n - 1) / 2], v[n - 1]);
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    const char *dump =
        TOPO_SOURCE_DIR "/fixtures/sources/ibnetdiscover/mellanox-selene.compute.txt";
    int iterations = 30;
    topo_fabric_opts opts = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
            dump = argv[++i];
        else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iterations = atoi(argv[++i]);
        else if (strcmp(argv[i], "--exclude-switch") == 0 && i + 1 < argc)
            opts.exclude_switch = argv[++i];
        else {
            fprintf(stderr, "usage: bench_fabric [--dump FILE] [--iterations N] "
                            "[--exclude-switch RE]\n");
            return 2;
        }
    }
    if (iterations < 1)
        iterations = 1;
    double *parse = calloc((size_t)iterations, sizeof(double));
    double *tiers = calloc((size_t)iterations, sizeof(double));
    double *both = calloc((size_t)iterations, sizeof(double));
    double *cpu = calloc((size_t)iterations, sizeof(double));
    if (!parse || !tiers || !both || !cpu)
        return 1;

    topo_err err = TOPO_ERR_INIT;
    char *text = NULL;
    size_t len = 0;
    double t0 = now_ms();
    if (topo_codec_read_file(&text, &len, dump, TOPO_MAX_IBNETDISCOVER_DUMP, &err) != 0)
        die(dump, &err);
    double read_ms = now_ms() - t0;

    topo_fabric_stats st = {0};
    size_t ntiers = 0;
    for (int i = 0; i < iterations; i++) {
        topo_facts *facts = NULL;
        topo_fabric *fab = NULL;
        topo_ibnetdiscover_opts po = {.source = dump};
        if (topo_facts_create(&facts, "ibnetdiscover", &err) != 0)
            die("facts", &err);
        double cpu0 = cpu_ms(), a = now_ms();
        if (topo_ibnetdiscover_parse(facts, text, len, &po, NULL, &err) != 0)
            die("parse", &err);
        double b = now_ms();
        const topo_facts *all[1] = {facts};
        if (topo_fabric_build(&fab, all, 1, &opts, &err) != 0)
            die("tiers", &err);
        double c = now_ms();
        cpu[i] = cpu_ms() - cpu0;
        parse[i] = b - a;
        tiers[i] = c - b;
        both[i] = c - a;
        st = topo_fabric_get_stats(fab);
        ntiers = topo_fabric_tier_count(fab);
        topo_fabric_free(fab);
        topo_facts_free(facts);
    }
    printf("dump: %s (%.1f MB, read in %.2f ms)\n", dump, (double)len / 1e6, read_ms);
    printf("fabric: %zu switches, %zu leaves, %zu hosts (%zu placed), %zu tiers:", st.switches,
           st.leaves, st.hosts, st.hosts_placed + st.hosts_ambiguous, ntiers);
    printf(" %d iterations\n", iterations);
    printf("%-16s %9s %9s %9s\n", "", "min", "p50", "max");
    print_row("parse", parse, iterations);
    print_row("tiers", tiers, iterations);
    print_row("parse + tiers", both, iterations);
    print_row("  CPU time", cpu, iterations);
    printf("target: parse + tiers p50 <= %.0f ms: wall %s, CPU %s\n", TARGET_MS,
           both[(iterations - 1) / 2] <= TARGET_MS ? "ok" : "MISS",
           cpu[(iterations - 1) / 2] <= TARGET_MS ? "ok" : "MISS");
    printf("peak RSS: %.1f MiB\n", (double)peak_rss_kib() / 1024.0);
    free(text);
    free(parse);
    free(tiers);
    free(both);
    free(cpu);
    return 0;
}
