/* bench_plan: topo-sync's whole offline run on a generated cluster (by
 * default 10,000 GB200-like nodes on an 8-rail fat tree: gen_sync.h) from
 * every source at once: NetBox device, rack and site pages, UFM's systems
 * and links, the Node objects with their GPU Feature Discovery labels.
 *
 *   1. writes the sources' payloads (gen_sync_write: JSON text in the
 *      shapes of the real responses) into a fresh directory under $TMPDIR,
 *      untimed;
 *   2. --iterations times: topo_sync_run over them, as
 *      `topo-sync --once --dry-run` does: read and parse every file, the
 *      fabric tiers, the fused plan; timed with CLOCK_MONOTONIC (wall) and
 *      getrusage (user + system CPU);
 *   3. with --check, compares the first plan with what the generated
 *      cluster must give (gen_sync_check) and exits 1 when it differs;
 *   4. prints min / median wall and CPU time, the peak RSS (ru_maxrss),
 *      the targets of issue 11 beside them, and removes the files;
 *   5. with --by-source, runs each source alone once more (NetBox, UFM,
 *      the Node objects) and prints its CPU time and the megabytes it read,
 *      to tell where the time goes; then jansson alone: each file's records
 *      parsed as the sources read them and dropped, the floor under any
 *      reader built on jansson (the files are read before the clock starts).
 *
 * The payloads are the answers to topo-sync's requests (UFM's switch
 * systems, NetBox's fields, the Nodes' metadata only); --full writes those
 * to the requests before (every system, every field, whole Nodes), which
 * the parsers read the same way.
 *
 * usage: bench_plan [--nodes N] [--rails N] [--rack-nodes N] [--leaf-racks N]
 *                   [--su-groups N] [--spines N] [--cores N] [--uplinks N]
 *                   [--iterations N] [--full] [--check] [--by-source] [--keep]
 *                   [--verbose] */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "topo/codec.h"
#include "topo/log.h"
#include "topo/sync.h"
#include "topo/syncconfig.h"

#include "gen_sync.h"

/* Issue 11: the 10k-node plan within 0.5 s of CPU and 200 MiB. */
#define TARGET_CPU_S 0.5
#define TARGET_RSS_MIB 200.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system CPU of this process, and its peak RSS in KiB. */
static double cpu_s(long *peak_kib)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (peak_kib)
        *peak_kib = ru.ru_maxrss;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_plan [--nodes N] [--rails N] [--rack-nodes N] "
                    "[--leaf-racks N] [--su-groups N] [--spines N] [--cores N] [--uplinks N] "
                    "[--iterations N] [--full] [--check] [--by-source] [--keep] [--verbose]\n");
    return 2;
}

typedef struct bench_args {
    gen_sync_opts gen;
    int iterations, check, by_source, keep, verbose;
} bench_args;

static int parse_args(bench_args *a, int argc, char **argv)
{
    static const struct {
        const char *flag;
        size_t offset;
    } counts[] = {
        {"--nodes", offsetof(gen_sync_opts, nodes)},
        {"--rails", offsetof(gen_sync_opts, rails)},
        {"--rack-nodes", offsetof(gen_sync_opts, rack_nodes)},
        {"--leaf-racks", offsetof(gen_sync_opts, leaf_racks)},
        {"--su-groups", offsetof(gen_sync_opts, su_groups)},
        {"--spines", offsetof(gen_sync_opts, spines)},
        {"--cores", offsetof(gen_sync_opts, cores)},
        {"--uplinks", offsetof(gen_sync_opts, uplinks)},
    };
    for (int i = 1; i < argc; i++) {
        size_t c = 0;
        while (c < sizeof counts / sizeof counts[0] && strcmp(argv[i], counts[c].flag) != 0)
            c++;
        if (c < sizeof counts / sizeof counts[0] && i + 1 < argc) {
            long v = atol(argv[++i]);
            *(size_t *)(void *)((char *)&a->gen + counts[c].offset) = v > 0 ? (size_t)v : 0;
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            a->iterations = atoi(argv[++i]);
        else if (strcmp(argv[i], "--check") == 0)
            a->check = 1;
        else if (strcmp(argv[i], "--full") == 0)
            a->gen.full = 1;
        else if (strcmp(argv[i], "--by-source") == 0)
            a->by_source = 1;
        else if (strcmp(argv[i], "--keep") == 0)
            a->keep = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            a->verbose = 1;
        else
            return -1;
    }
    if (a->iterations < 1)
        a->iterations = 1;
    return 0;
}

/* The settings topo-sync would have from a config naming the files. */
static void configure(topo_sync_settings *s, const gen_sync_files *f)
{
    static const char *const switch_roles[] = {"leaf", "spine", "core"};
    static const char *const host_roles[] = {"gpu-server"};
    s->names.strip_domain = 1;
    s->netbox.switch_roles = switch_roles;
    s->netbox.nswitch_roles = 3;
    s->netbox.host_roles = host_roles;
    s->netbox.nhost_roles = 1;
    s->netbox_files.files[TOPO_NETBOX_DEVICES] = (const char *const *)f->devices;
    s->netbox_files.nfiles[TOPO_NETBOX_DEVICES] = f->ndevices;
    s->netbox_files.files[TOPO_NETBOX_RACKS] = (const char *const *)f->racks;
    s->netbox_files.nfiles[TOPO_NETBOX_RACKS] = f->nracks;
    s->netbox_files.files[TOPO_NETBOX_SITES] = (const char *const *)&f->sites;
    s->netbox_files.nfiles[TOPO_NETBOX_SITES] = 1;
    s->ufm_systems_file = f->ufm_systems;
    s->ufm_links_file = f->ufm_links;
    s->nodes_file = f->nodes;
}

/* The runs; 0, or 1 when a run fails or the check finds a difference. */
static int run(const bench_args *a, topo_sync_settings *s, double *wall, double *cpu)
{
    for (int i = 0; i < a->iterations; i++) {
        topo_sync *sync = NULL;
        topo_err err = TOPO_ERR_INIT;
        double c0 = cpu_s(NULL), w0 = now_s();
        int rc = topo_sync_run(&sync, s, &err);
        wall[i] = now_s() - w0;
        cpu[i] = cpu_s(NULL) - c0;
        if (rc != 0) {
            fprintf(stderr, "bench_plan: %s\n", err.text);
            return 1;
        }
        char why[512];
        if (i == 0 && a->check && gen_sync_check(topo_sync_plan(sync), &a->gen, why, sizeof why)) {
            fprintf(stderr, "bench_plan: check: %s\n", why);
            topo_sync_free(sync);
            return 1;
        }
        if (i == 0 && a->check)
            printf("check: %zu nodes, every level as generated: ok\n",
                   topo_plan_node_count(topo_sync_plan(sync)));
        topo_sync_free(sync);
    }
    return 0;
}

static void report(const bench_args *a, const gen_sync_files *f, double gen_s, double *wall,
                   double *cpu, long base_kib)
{
    long peak_kib = 0;
    cpu_s(&peak_kib);
    int n = a->iterations;
    qsort(wall, (size_t)n, sizeof(*wall), cmp_double);
    qsort(cpu, (size_t)n, sizeof(*cpu), cmp_double);
    printf("cluster: %zu nodes, %zu rails, %zu switches, %zu adapters, %zu UFM links; "
           "%zu NetBox device pages\n",
           a->gen.nodes, a->gen.rails, f->switches, f->adapters, f->links, f->ndevices);
    printf("sources: %.1f MB of JSON (%s responses), generated in %.2f s (untimed)\n",
           (double)f->bytes / 1e6, a->gen.full ? "full" : "trimmed", gen_s);
    printf("  NetBox %.1f MB, UFM systems %.1f MB, UFM links %.1f MB, Node objects %.1f MB\n",
           (double)f->netbox_bytes / 1e6, (double)f->ufm_systems_bytes / 1e6,
           (double)f->ufm_links_bytes / 1e6, (double)f->nodes_bytes / 1e6);
    printf("%-28s %9s %9s %9s\n", "", "min", "median", "max");
    printf("%-28s %9.3f %9.3f %9.3f s\n", "parse + tiers + plan, wall", wall[0],
           wall[(n - 1) / 2], wall[n - 1]);
    printf("%-28s %9.3f %9.3f %9.3f s\n", "  CPU (user + system)", cpu[0], cpu[(n - 1) / 2],
           cpu[n - 1]);
    printf("peak RSS: %.1f MiB (%.1f MiB before the first run)\n", (double)peak_kib / 1024.0,
           (double)base_kib / 1024.0);
    if (a->gen.nodes >= 10000)
        printf("targets (issue 11, 10k nodes): CPU <= %.1f s: %s; RSS <= %.0f MiB: %s\n",
               TARGET_CPU_S, cpu[(n - 1) / 2] <= TARGET_CPU_S ? "ok" : "MISS", TARGET_RSS_MIB,
               (double)peak_kib / 1024.0 <= TARGET_RSS_MIB ? "ok" : "MISS");
}

/* Each source alone: its CPU time for the whole run (parse, and for UFM
 * the tiers; the plan of one source is small). */
static int by_source(const topo_sync_settings *all, const gen_sync_files *f)
{
    static const char *const name[] = {"NetBox pages", "UFM systems + links", "Node objects"};
    for (int k = 0; k < 3; k++) {
        topo_sync_settings s = *all;
        size_t bytes = k == 0   ? f->netbox_bytes
                       : k == 1 ? f->ufm_systems_bytes + f->ufm_links_bytes
                                : f->nodes_bytes;
        if (k != 0)
            memset(&s.netbox_files, 0, sizeof s.netbox_files);
        if (k != 1)
            s.ufm_systems_file = s.ufm_links_file = NULL;
        if (k != 2)
            s.nodes_file = NULL;
        topo_sync *sync = NULL;
        topo_err err = TOPO_ERR_INIT;
        double c0 = cpu_s(NULL);
        int rc = topo_sync_run(&sync, &s, &err);
        double c = cpu_s(NULL) - c0;
        topo_sync_free(sync);
        if (rc != 0) {
            fprintf(stderr, "bench_plan: %s alone: %s\n", name[k], err.text);
            return 1;
        }
        printf("  %-22s %6.1f MB  CPU %6.3f s  (%.0f MB/s)\n", name[k], (double)bytes / 1e6, c,
               c > 0 ? (double)bytes / 1e6 / c : 0.0);
    }
    return 0;
}

static int drop_element(const json_t *element, size_t index, void *payload, topo_err *err)
{
    (void)element, (void)index, (void)payload, (void)err;
    return 0;
}

/* jansson alone: each file read the way the sources read it (its records
 * one at a time, topo_codec_json_each: NetBox's `results`, the Nodes'
 * `items`, UFM's arrays) but every record dropped as soon as parsed: the
 * floor under any reader built on jansson. Grouped as by_source, the UFM
 * links also apart (the largest response). */
static int jansson_floor(const gen_sync_files *f)
{
    const char *groups[4][GEN_SYNC_MAX_PAGES * 2 + 2] = {{0}};
    const char *member[4] = {"results", NULL, "items", NULL};
    const char *name[4] = {"NetBox pages", "UFM systems + links", "Node objects",
                           "  of which UFM links"};
    size_t n = 0;
    for (size_t i = 0; i < f->ndevices; i++)
        groups[0][n++] = f->devices[i];
    for (size_t i = 0; i < f->nracks; i++)
        groups[0][n++] = f->racks[i];
    groups[0][n] = f->sites;
    groups[1][0] = f->ufm_systems;
    groups[1][1] = f->ufm_links;
    groups[2][0] = f->nodes;
    groups[3][0] = f->ufm_links;
    for (int g = 0; g < 4; g++) {
        double c = 0;
        size_t bytes = 0;
        topo_codec_each how = {.member = member[g], .element = drop_element};
        for (size_t i = 0; groups[g][i] != NULL; i++) {
            char *text = NULL;
            size_t len = 0;
            int found = 0, rc;
            topo_err err = TOPO_ERR_INIT;
            if (topo_codec_read_file(&text, &len, groups[g][i], SIZE_MAX, &err) != 0) {
                fprintf(stderr, "bench_plan: %s\n", err.text);
                return 1;
            }
            double c0 = cpu_s(NULL);
            rc = topo_codec_json_each(&found, text, len, groups[g][i], &how, &err);
            c += cpu_s(NULL) - c0;
            bytes += len;
            free(text);
            if (rc != 0 || !found) {
                fprintf(stderr, "bench_plan: %s: %s\n", groups[g][i],
                        rc != 0 ? err.text : "not the shape the source reads");
                return 1;
            }
        }
        printf("  %-22s %6.1f MB  CPU %6.3f s  (%.0f MB/s)\n", name[g], (double)bytes / 1e6, c,
               c > 0 ? (double)bytes / 1e6 / c : 0.0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_args a = {.gen = GEN_SYNC_OPTS_DEFAULT, .iterations = 3};
    if (parse_args(&a, argc, argv) != 0)
        return usage();
    topo_log_set_level(a.verbose ? TOPO_LOG_INFO : TOPO_LOG_WARN);
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bench_plan.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_plan: %s: cannot make the directory\n", dir);
        return 1;
    }
    gen_sync_files files;
    char why[512];
    int status = 1;
    double *wall = calloc((size_t)a.iterations, sizeof(double));
    double *cpu = calloc((size_t)a.iterations, sizeof(double));
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    double g0 = now_s();
    if (gen_sync_write(&files, &a.gen, dir, why, sizeof why) != 0) {
        fprintf(stderr, "bench_plan: %s\n", why);
        goto cleanup;
    }
    double gen_s = now_s() - g0;
    if (!wall || !cpu || topo_syncconfig_default(&cfg, &err) != 0) {
        fprintf(stderr, "bench_plan: out of memory\n");
        goto cleanup;
    }
    configure(topo_syncconfig_settings(cfg), &files);
    long base_kib = 0;
    cpu_s(&base_kib);
    if (run(&a, topo_syncconfig_settings(cfg), wall, cpu) != 0)
        goto cleanup;
    report(&a, &files, gen_s, wall, cpu, base_kib);
    if (a.by_source) {
        printf("each source alone:\n");
        if (by_source(topo_syncconfig_settings(cfg), &files) != 0)
            goto cleanup;
        printf("jansson alone (each record parsed as the sources read them, then dropped):\n");
        if (jansson_floor(&files) != 0)
            goto cleanup;
    }
    status = 0;
cleanup:
    if (a.keep)
        printf("files kept in %s\n", dir);
    else {
        gen_sync_remove(&files);
        rmdir(dir);
    }
    topo_syncconfig_free(cfg);
    free(wall);
    free(cpu);
    return status;
}
