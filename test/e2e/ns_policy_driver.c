/* Drives webhook/ns_policy.c for ns_policy_e2e.py: starts the namespace
 * watcher against a kubeconfig, then answers one line per stdin line:
 *
 *   in:  "ns-a ns-b"   (namespaces to look up; an empty line asks for status only)
 *   out: {"synced": true, "count": 1, "policies": {"ns-a": "deny", "ns-b": null},
 *         "packing_off": {"ns-a": false, "ns-b": true}}
 *
 * "quit" (or end of input) stops the watcher and exits 0.
 *
 * usage: ns_policy_driver --kubeconfig F [--label KEY] [--packing] [--watch-timeout S]
 * (--packing: the view keeps packing's opt-outs too; without it --label is required) */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "line_driver.h"
#include "ns_policy.h"

static const char *policy_name(topo_admission_policy p)
{
    switch (p) {
    case TOPO_ADMISSION_POLICY_GATE:
        return "gate";
    case TOPO_ADMISSION_POLICY_DENY:
        return "deny";
    case TOPO_ADMISSION_POLICY_IGNORE:
        return "ignore";
    }
    return "?";
}

static int answer(json_t *out, char *line, void *payload)
{
    wh_ns_policy *p = payload;
    json_t *policies = json_object(), *off = json_object();
    char *save = NULL;
    if (policies == NULL || json_object_set_new(out, "policies", policies) != 0 ||
        off == NULL || json_object_set_new(out, "packing_off", off) != 0)
        return -1;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        topo_admission_policy pol;
        json_t *v = wh_ns_policy_lookup(p, tok, &pol) ? json_string(policy_name(pol))
                                                         : json_null();
        if (json_object_set_new(policies, tok, v) != 0 ||
            json_object_set_new(off, tok, json_boolean(wh_ns_policy_packing_off(p, tok))) != 0)
            return -1;
    }
    if (json_object_set_new(out, "synced", json_boolean(wh_ns_policy_synced(p))) != 0 ||
        json_object_set_new(out, "count", json_integer((json_int_t)wh_ns_policy_count(p))) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *label = NULL;
    wh_ns_policy_opts opts = {0};
    topo_k8s_config cfg = {0};
    topo_k8s_opts ko = {0};
    wh_ns_policy *p = NULL;
    topo_err err = TOPO_ERR_INIT;
    int status = 2, packing = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
            label = argv[++i];
        else if (strcmp(argv[i], "--packing") == 0)
            packing = 1;
        else if (strcmp(argv[i], "--watch-timeout") == 0 && i + 1 < argc)
            opts.watch_timeout_s = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr,
                    "usage: %s --kubeconfig F [--label KEY] [--packing] [--watch-timeout S]\n",
                    argv[0]);
            return 2;
        }
    }
    if (kubeconfig == NULL || (label == NULL && !packing)) {
        fprintf(stderr, "--kubeconfig and --label (or --packing) are required\n");
        return 2;
    }
    line_driver_fast(&ko, &opts.backoff_base_ms, &opts.backoff_max_ms);
    opts.k8s = &ko;
    if (topo_k8s_config_load(&cfg, kubeconfig, &err) != 0 ||
        wh_ns_policy_create(&p, label, packing, &cfg, &opts, &err) != 0 ||
        wh_ns_policy_start(p, &err) != 0) {
        fprintf(stderr, "ns_policy_driver: %s\n", err.text);
        goto done;
    }
    status = line_driver_run(answer, p);
done:
    wh_ns_policy_free(p);
    topo_k8s_config_dispose(&cfg);
    return status;
}
