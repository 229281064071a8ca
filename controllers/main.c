/* topo-sync: node topology labels from the infrastructure's records. The
 * offline run (issue 11) reads every source from files and prints or
 * exports the plan; otherwise the controller (controller.h) keeps the
 * cluster's labels equal to it. Exit statuses: controller.h. */
#define _POSIX_C_SOURCE 200809L

#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "controller.h"
#include "outputs.h"
#include "topo/log.h"
#include "topo/str.h"
#include "topo/sync.h"
#include "topo/syncconfig.h"

/* What the flags give the settings, kept alive as long as they are used. */
typedef struct overrides {
    topo_sync_ibnetdiscover *ib;
    topo_level levels[TOPO_LEVEL_COUNT];
    topo_kv *flavor_labels; /* point into argv */
    char **flavor_keys;     /* the keys, cut from KEY=VALUE */
    size_t nflavor_keys;
} overrides;

static void overrides_free(overrides *ov)
{
    free(ov->ib);
    for (size_t i = 0; i < ov->nflavor_keys; i++)
        free(ov->flavor_keys[i]);
    free(ov->flavor_keys);
    free(ov->flavor_labels);
}

/* Every --kueue-flavor-label KEY=VALUE (the export checks key and value). */
static int parse_flavor_labels(overrides *ov, topo_sync_settings *s, const topo_opt_list *list)
{
    ov->flavor_labels = calloc(list->n, sizeof(*ov->flavor_labels));
    ov->flavor_keys = calloc(list->n, sizeof(*ov->flavor_keys));
    if (!ov->flavor_labels || !ov->flavor_keys)
        return -1;
    for (size_t i = 0; i < list->n; i++) {
        const char *eq = strchr(list->v[i], '=');
        if (!eq || eq == list->v[i]) {
            fprintf(stderr, "topo-sync: --kueue-flavor-label: \"%s\" is not KEY=VALUE\n",
                    list->v[i]);
            return -1;
        }
        if (!(ov->flavor_keys[i] = topo_strndup(list->v[i], (size_t)(eq - list->v[i]))))
            return -1;
        ov->nflavor_keys++;
        ov->flavor_labels[i] = (topo_kv){ov->flavor_keys[i], eq + 1};
    }
    s->kueue.flavor_labels = ov->flavor_labels;
    s->kueue.nflavor_labels = list->n;
    return 0;
}

static int parse_levels(overrides *ov, topo_sync_settings *s, const char *list)
{
    size_t n = 0;
    for (const char *p = list;; p++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[16];
        topo_level l;
        int ok = len < sizeof name;
        if (ok) {
            memcpy(name, p, len);
            name[len] = '\0';
            ok = topo_level_parse(&l, name) == 0;
        }
        if (ok && n == TOPO_LEVEL_COUNT) { /* a known level past the sixth: one repeated */
            fprintf(stderr, "topo-sync: --levels: more than the %d levels: \"%.*s\" repeated\n",
                    TOPO_LEVEL_COUNT, (int)len, p);
            return -1;
        }
        if (!ok) {
            fprintf(stderr,
                    "topo-sync: --levels: \"%.*s\" is not one of datacenter, spine, leaf, rack, "
                    "nvlink, hostname\n",
                    (int)len, p);
            return -1;
        }
        ov->levels[n++] = l;
        if (!end)
            break;
        p = end;
    }
    size_t bad;
    char why[160];
    if (topo_level_order_check(&bad, ov->levels, n, why, sizeof why) != 0) {
        fprintf(stderr, "topo-sync: --levels: %s\n", why);
        return -1;
    }
    s->plan.levels = ov->levels;
    s->plan.nlevels = n;
    return 0;
}

/* The HTTP sources' flags: a URL replaces the source's files, a credential
 * flag the config's credentials of that source. */
static int apply_http_flags(topo_sync_settings *s, const ctl_args *a)
{
    if (a->netbox_url) {
        s->netbox_http.url = a->netbox_url;
        memset(&s->netbox_files, 0, sizeof(s->netbox_files));
    }
    if (a->netbox_token_file)
        s->netbox_http.token_file = a->netbox_token_file;
    if (a->ufm_url) {
        s->ufm_http.url = a->ufm_url;
        s->ufm_systems_file = s->ufm_links_file = NULL;
    }
    if (a->ufm_token_file) {
        s->ufm_http.token_file = a->ufm_token_file;
        s->ufm_http.username = s->ufm_http.username_file = s->ufm_http.password_file = NULL;
    }
    if (a->ufm_username || a->ufm_password_file) {
        s->ufm_http.token_file = a->ufm_token_file;
        if (a->ufm_username) {
            s->ufm_http.username = a->ufm_username;
            s->ufm_http.username_file = NULL;
        }
        if (a->ufm_password_file)
            s->ufm_http.password_file = a->ufm_password_file;
    }
    if (a->lldp_url) {
        s->lldp_http.url = a->lldp_url;
        s->lldp_dir = NULL;
    }
    const char *orphan = a->netbox_token_file && !s->netbox_http.url ? "--netbox-token-file"
                         : (a->ufm_token_file || a->ufm_username || a->ufm_password_file) &&
                                 !s->ufm_http.url
                             ? "--ufm-username, --ufm-password-file and --ufm-token-file"
                             : NULL;
    if (orphan) {
        fprintf(stderr, "topo-sync: %s: only with a URL (the flag or the config's url)\n", orphan);
        return -1;
    }
    return 0;
}

/* Flags over the config file's settings. */
static int apply_flags(overrides *ov, topo_sync_settings *s, const ctl_args *a)
{
    if (a->ibnetdiscover.n) {
        ov->ib = calloc(a->ibnetdiscover.n, sizeof(*ov->ib));
        if (!ov->ib)
            return -1;
        for (size_t i = 0; i < a->ibnetdiscover.n; i++)
            ov->ib[i] = (topo_sync_ibnetdiscover){a->ibnetdiscover.v[i], a->node_name_map};
        s->ibnetdiscover = ov->ib;
        s->nibnetdiscover = a->ibnetdiscover.n;
    }
    if (a->lldp_dir) {
        s->lldp_dir = a->lldp_dir;
        s->lldp_http.url = NULL;
    }
    if (a->ufm_systems_file) {
        s->ufm_systems_file = a->ufm_systems_file;
        s->ufm_links_file = a->ufm_links_file;
        s->ufm_http.url = NULL;
    } else if (a->ufm_links_file) {
        fprintf(stderr, "topo-sync: --ufm-links-file goes with --ufm-systems-file\n");
        return -1;
    }
    if (apply_http_flags(s, a) != 0)
        return -1;
    if (a->nodes_file)
        s->nodes_file = a->nodes_file;
    if (a->prefix)
        s->plan.prefix = a->prefix;
    if (a->levels && parse_levels(ov, s, a->levels) != 0)
        return -1;
    if (a->topograph_labels)
        s->plan.topograph = 1;
    if (a->kueue_flavor_labels.n && parse_flavor_labels(ov, s, &a->kueue_flavor_labels) != 0)
        return -1;
    return 0;
}

static int setup_log(const ctl_args *a)
{
    topo_log_level level;
    topo_err err = TOPO_ERR_INIT;
    if (topo_log_level_parse(&level, a->d.verbosity, &err) != 0 ||
        topo_log_use_format(a->d.log_format, &err) != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        return -1;
    }
    topo_log_set_level(level);
    return 0;
}

/* The offline run (issue 11): every source from files, the plan printed
 * and exported. 0 complete, 1 incomplete nodes, 2 bad input. */
static int run_offline(const topo_sync_settings *s, const ctl_args *a)
{
    topo_sync *sync = NULL;
    topo_err err = TOPO_ERR_INIT;
    int status = SYNC_EXIT_BAD_INPUT;
    if (topo_sync_run(&sync, s, &err) != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        goto cleanup;
    }
    const topo_plan *plan = topo_sync_plan(sync);
    if (ctl_print(plan, a->print_labels, a->print_annotations,
                   a->print_plan || (!a->print_labels && !a->print_annotations)) != 0) {
        fprintf(stderr, "topo-sync: cannot write the output\n");
        goto cleanup;
    }
    if (ctl_exports_write(plan,
                           &(ctl_exports){a->export_kueue, a->export_slurm_tree,
                                           a->export_slurm_block, a->export_volcano,
                                           &s->kueue},
                           &err) != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        goto cleanup;
    }
    status = topo_plan_incomplete_count(plan) ? SYNC_EXIT_FAILED : SYNC_EXIT_OK;
cleanup:
    topo_sync_free(sync);
    return status;
}

/* The Node objects come from the API server unless this is a one-off
 * dry run with neither --kubeconfig nor a pod's environment, or the node
 * set is a file: a laptop's ~/.kube/config is not used by surprise. */
static int offline(const ctl_args *a, const topo_sync_settings *s)
{
    if (s->nodes_file)
        return 1;
    return a->once && a->dry_run && !a->d.kubeconfig && !getenv("KUBERNETES_SERVICE_HOST");
}

static atomic_int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, 1);
}

static void trap_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int run_online(topo_sync_settings *s, const ctl_args *a)
{
    /* A flag given wins over the config's refresh section, which wins over
     * the defaults. */
    long source_interval = a->source_interval_s ? (long)a->source_interval_s * 1000
                           : s->refresh_ms      ? (long)s->refresh_ms
                                                : 300000L;
    long stale = a->stale_after_s != (unsigned long)-1 ? (long)a->stale_after_s * 1000
                 : s->stale_after_ms                  ? (long)s->stale_after_ms
                                                      : 3600000L;
    int min_hosts = a->min_hosts_percent != (unsigned long)-1 ? (int)a->min_hosts_percent
                    : s->min_hosts_percent >= 0               ? (int)s->min_hosts_percent
                                                              : 90;
    s->nodes_live = 1;
    ctl_opts o = {.settings = s,
                  .kubeconfig = a->d.kubeconfig,
                  .once = a->once,
                  .dry_run = a->dry_run,
                  .print_labels = a->print_labels,
                  .print_plan = a->print_plan,
                  .print_annotations = a->print_annotations,
                  .leader_elect = a->d.leader_elect != 0,
                  .lease_namespace = a->d.lease_namespace,
                  .lease_name = a->d.lease_name ? a->d.lease_name : CTL_LEASE_NAME_DEFAULT,
                  .lease_ms = (long)a->d.lease_s * 1000,
                  .source_interval_ms = source_interval,
                  .resync_ms = (long)a->resync_s * 1000,
                  .stale_ms = stale,
                  .min_hosts_percent = min_hosts,
                  .db = a->db,
                  .kueue_objects = a->kueue_objects != 0,
                  .qps = a->kube_qps,
                  .burst = a->kube_burst,
                  .health_address = a->d.health_address,
                  .health_port = (unsigned)a->d.health_port,
                  .metrics_port = (unsigned)a->metrics_port,
                  .export_kueue = a->export_kueue,
                  .export_slurm_tree = a->export_slurm_tree,
                  .export_slurm_block = a->export_slurm_block,
                  .export_volcano = a->export_volcano,
                  .export_configmap = a->export_configmap};
    trap_signals();
    return ctl_run(&o, &stop_flag);
}

int main(int argc, char **argv)
{
    ctl_args a;
    overrides ov = {0};
    topo_syncconfig *cfg = NULL;
    topo_err err = TOPO_ERR_INIT;
    int status = SYNC_EXIT_BAD_INPUT;
    /* Two malloc arenas, not one per thread (glibc): the controller's
     * threads take turns at its large transient allocations (the list's
     * pages on the reflector's, a source read on the refresher's, a round
     * on this one), and memory one arena freed is never reused by another,
     * so with an arena each the process kept more of their peaks
     * (bench/README.md "bench/sync (topo-sync's controller at 10,000
     * nodes)": a source re-read at 10,000 nodes peaked at 123 MiB, 105 with
     * two, for the same CPU a round; with one, a round took half as much CPU
     * again). Set before any thread starts. */
    mallopt(M_ARENA_MAX, 2);
    atomic_init(&stop_flag, 0);
    int rc = ctl_args_parse(&a, argc, argv);
    if (rc != 0) {
        status = rc == 1 ? SYNC_EXIT_OK : SYNC_EXIT_BAD_INPUT;
        goto cleanup;
    }
    if (setup_log(&a) != 0)
        goto cleanup;
    rc = a.config ? topo_syncconfig_load_file(&cfg, a.config, &err)
                  : topo_syncconfig_default(&cfg, &err);
    if (rc != 0) {
        fprintf(stderr, "topo-sync: %s\n", err.text);
        goto cleanup;
    }
    topo_sync_settings *s = topo_syncconfig_settings(cfg);
    if (apply_flags(&ov, s, &a) != 0)
        goto cleanup;
    status = offline(&a, s) ? run_offline(s, &a) : run_online(s, &a);
cleanup:
    topo_syncconfig_free(cfg);
    overrides_free(&ov);
    ctl_args_free(&a);
    return status;
}
